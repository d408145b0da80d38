"""What each table cell of the report says: figures formatted once, for the Markdown and the HTML alike."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from syslogbench.model.result import Limit, Result
from syslogbench.report.load import (
    Group,
    finished_at,
    profile_order,
    sender_bound,
    throughput_ratio,
    tuning_of,
)

MIB = 2**20
GIB = 2**30
NA = "n/a"
DASH = "\u2013"
SENDER_BOUND_MARK = "\u2021"  # double dagger
VERDICT_ORDER = ("loss", "timeout", "error")


# -- formatting ------------------------------------------------------------------------------------


def fmt(value: float | None, spec: str, scale: float = 1, suffix: str = "") -> str:
    """value / scale formatted with spec, or n/a for a figure that was not measured."""
    if value is None:
        return NA
    return f"{value / scale:{spec}}{suffix}"


def fmt_limit(limit: Limit, spec: str, scale: float = 1, suffix: str = "") -> str:
    return fmt(limit.effective, spec, scale, suffix)


def fmt_interval(low: float | None, high: float | None, spec: str, scale: float = 1, suffix: str = "") -> str:
    if low is None or high is None:
        return NA
    return f"{fmt(low, spec, scale)}{DASH}{fmt(high, spec, scale)}{suffix}"


def fmt_percent(fraction: float | None, spec: str = ".1f") -> str:
    return fmt(fraction, spec, 0.01, "%")


# -- one run per row -------------------------------------------------------------------------------


def sender_bound_cell(result: Result) -> str:
    value = sender_bound(result)
    if value is None:
        return NA
    return f"yes {SENDER_BOUND_MARK}" if value else "no"


RUN_COLUMNS: list[tuple[str, Callable[[Result], str]]] = [
    ("profile", lambda r: r.daemon.profile),
    ("daemon version", lambda r: r.daemon.version or NA),
    ("tuning", tuning_of),
    ("verdict", lambda r: r.verdict),
    ("elapsed s", lambda r: fmt(r.elapsed_s, ".2f")),
    ("user s", lambda r: fmt(r.cpu.user_s, ".2f")),
    ("system s", lambda r: fmt(r.cpu.system_s, ".2f")),
    ("%CPU", lambda r: fmt(r.cpu.percent, ".0f", suffix="%")),
    ("peak mem MiB (cgroup)", lambda r: fmt(r.memory.peak_bytes, ".1f", MIB)),
    ("max RSS MiB", lambda r: fmt(r.memory.max_rss_bytes, ".1f", MIB)),
    ("msgs/s", lambda r: fmt(r.throughput.msgs_per_s, ",.0f")),
    ("received / expected", lambda r: f"{r.messages.received:,} / {r.messages.expected:,}"),
    ("lost", lambda r: f"{r.messages.lost:,}"),
    ("duplicated", lambda r: f"{r.messages.duplicated:,}"),
    ("central CPUs", lambda r: fmt_limit(r.limits.central_cpus, "g")),
    ("central memory", lambda r: fmt_limit(r.limits.central_memory_bytes, ".2f", GIB, " GiB")),
    ("sender-bound", sender_bound_cell),
    # The harness's CPU (watcher with SEC, generators, last hop) over the daemon's, in the same window.
    ("harness CPU / daemon", lambda r: fmt_percent(r.harness.cpu_share_of_daemon, ".2f")),
    ("run id", lambda r: f"`{r.run_id}`"),
]


def runs_header() -> list[str]:
    return [name for name, _ in RUN_COLUMNS]


def runs_rows(results: Sequence[Result]) -> list[list[str]]:
    return [[column(result) for _, column in RUN_COLUMNS] for result in results]


# -- one run: its scenario, its rate and its UDP drops ---------------------------------------------


def describe_scenario(results: Sequence[Result]) -> str:
    s = max(results, key=finished_at).scenario
    size = f", {s.message_bytes}-byte messages" if s.message_bytes else ""
    return (
        f"{s.hosts} hosts x {s.senders_per_host} senders x {s.messages_per_sender:,} messages "
        f"({s.messages_total:,} in all{size}), {s.transport or '?'}, {s.format or '?'}."
    )


def rate_and_udp_lines(result: Result) -> list[str]:
    """A fixed rate's target and achieved rates, and a UDP run's drop rates; nothing for all-out TCP."""
    lines = []
    rate, udp = result.rate, result.udp
    if rate and rate.target_per_sender:
        achieved = rate.achieved_per_sender
        figures = [achieved.median, achieved.min, achieved.max, rate.achieved_total]
        median, low, high, total = ("?" if x is None else f"{x:,.0f}" for x in figures)
        lines.append(
            f"Rate: target {rate.target_per_sender:,} msg/s per sender ({rate.target_total:,} in all); "
            f"achieved {median} per sender (median; {low}-{high}), {total} in all."
        )
    if udp:
        rate_text = "?" if udp.drop_rate is None else f"{udp.drop_rate:.3%}"
        kernel = udp.kernel
        kernel_text = (
            "no kernel counters"
            if kernel is None
            else f"kernel: {kernel.in_datagrams:,} datagrams read, {kernel.in_errors:,} dropped "
            f"({kernel.rcvbuf_errors:,} for a full receive buffer)"
        )
        lines.append(f"UDP: {udp.lost:,} of {udp.sent:,} lost, drop rate {rate_text}; {kernel_text}.")
    return lines


# -- one profile per row: the statistics of a scenario ---------------------------------------------


def not_counted_cell(group: Group) -> str:
    counts = group.not_counted
    if not counts:
        return "0"
    order = [v for v in VERDICT_ORDER if v in counts] + sorted(set(counts) - set(VERDICT_ORDER))
    return ", ".join(f"{counts[verdict]} {verdict}" for verdict in order)


def group_sender_bound_cell(group: Group) -> str:
    bound = len(group.sender_bound_runs)
    if bound:
        return f"yes {SENDER_BOUND_MARK} ({bound} of {len(group.runs)} runs)"
    if any(sender_bound(run) is None for run in group.runs):
        return "unknown"
    return "no"


def erratic_cell(group: Group) -> str:
    summary = group.throughput
    if summary is None or summary.cov is None:
        return NA
    return "**erratic**" if summary.erratic else "no"


def percent_of_baseline_cell(group: Group, baseline: Group | None) -> str:
    ratio = throughput_ratio(group, baseline)
    if ratio is None:
        return NA
    if group is baseline:
        return "100%"
    interval = fmt_interval(ratio.low, ratio.high, ".0f", 0.01)
    text = fmt_percent(ratio.value, ".0f")
    return text if interval == NA else f"{text} ({interval}%)"


STATS_HEADER = [
    "profile",
    "n",
    "median msgs/s",
    "95% CI msgs/s",
    "MAD msgs/s",
    "CoV",
    "erratic",
    "% of baseline",
    "median elapsed s",
    "median CPU s per M msgs",
    "CoV of CPU s per M",
    "median user s",
    "median system s",
    "median max RSS MiB",
    "median peak MiB (cgroup)",
    "sender-bound",
    "not counted",
]


def stats_row(group: Group, baseline: Group | None) -> list[str]:
    t = group.throughput
    return [
        group.profile,
        str(t.n if t else 0),
        fmt(t.median if t else None, ",.0f"),
        fmt_interval(t.ci_low, t.ci_high, ",.0f") if t else NA,
        fmt(t.mad if t else None, ",.0f"),
        fmt_percent(t.cov if t else None),
        erratic_cell(group),
        percent_of_baseline_cell(group, baseline),
        fmt(group.median("elapsed_s"), ".2f"),
        fmt(group.median("cpu_s_per_million"), ".2f"),
        fmt_percent(group.cpu_per_million.cov if group.cpu_per_million else None),
        fmt(group.median("cpu_user_s"), ".2f"),
        fmt(group.median("cpu_system_s"), ".2f"),
        fmt(group.median("max_rss_bytes"), ".1f", MIB),
        fmt(group.median("peak_bytes"), ".1f", MIB),
        group_sender_bound_cell(group),
        not_counted_cell(group),
    ]


RATIO_HEADER = ["profile", "median msgs/s", "ratio to the fastest", "95% CI of the ratio"]


def ratio_rows(groups: Sequence[Group], fastest: Group | None) -> list[list[str]]:
    rows = []
    for group in sorted(groups, key=lambda g: -(g.throughput.median if g.throughput else -1)):
        ratio = throughput_ratio(group, fastest)
        if group is fastest:
            value, interval = "1.00", "reference"
        elif ratio is None:
            value, interval = NA, NA
        else:
            value, interval = f"{ratio.value:.2f}", fmt_interval(ratio.low, ratio.high, ".2f")
        rows.append([group.profile, fmt(group.median("msgs_per_s"), ",.0f"), value, interval])
    return rows


def sender_bound_notes(groups: Sequence[Group]) -> list[str]:
    """One line per sender-bound run: its id and the watcher's reason."""
    notes = []
    for group in groups:
        for run in group.sender_bound_runs:
            reason = run.sender_bound.reason or "no reason recorded"
            notes.append(f"`{run.run_id}` ({group.profile}, {run.verdict}): {reason}")
    return notes


# -- one scenario per row: the overview ------------------------------------------------------------


def overview_cell(group: Group | None) -> str:
    """Median msgs/s and the number of counted runs; the verdicts when none counted; blank: not run."""
    if group is None:
        return ""
    if group.throughput:
        return f"{group.throughput.median:,.0f} ({group.throughput.n})"
    return ", ".join(f"{verdict} x{count}" for verdict, count in sorted(group.not_counted.items()))


def overview(grouped: dict[str, list[Group]]) -> tuple[list[str], list[list[str]], list[str]]:
    """One row per scenario (and load shape), what ran in it: a column for each profile that ran in more
    than one, the others named in one column; and the lines that say what did not run, or not pass."""
    sections = {group.profile: 0 for groups in grouped.values() for group in groups}
    for groups in grouped.values():
        for group in groups:
            sections[group.profile] += 1
    names = sorted((name for name, count in sections.items() if count > 1), key=profile_order)
    others = sorted(set(sections) - set(names), key=profile_order)
    rows = []
    for scenario, groups in grouped.items():
        by_profile = {group.profile: group for group in groups}
        row = [f"`{scenario}`", *(overview_cell(by_profile.get(name)) for name in names)]
        if others:
            row.append("; ".join(f"{n} {overview_cell(by_profile[n])}" for n in others if n in by_profile))
        rows.append(row)
    header = ["scenario", *(f"{name} msgs/s (n)" for name in names), *(["other profiles"] if others else [])]
    return header, rows, overview_notes(grouped, names)


def overview_notes(grouped: dict[str, list[Group]], names: Sequence[str]) -> list[str]:
    notes = []
    blank = sum(1 for groups in grouped.values() for name in names if name not in {g.profile for g in groups})
    if blank:
        notes.append(
            f"A blank cell: that profile did not run that scenario ({blank} of {len(grouped) * len(names)})."
        )
    failed = [f"`{scenario}`" for scenario, groups in grouped.items() if not any(g.counted for g in groups)]
    if failed:
        notes.append(f"No run passed, so no plots: {', '.join(failed)}.")
    return notes
