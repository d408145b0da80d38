"""The report: statistics per profile and scenario over results/, next to the published 2014 figures.

python -m syslogbench report [--results DIR] [--scenario ID] [--output FILE] [--html FILE]
                             [--plots DIR] [--out DIR] [--run RUN_ID]

Without --output or --out the Markdown goes to stdout. --out DIR writes DIR/report.md,
DIR/report.html and DIR/plots/*.png, *.svg. Everything is made from the result files alone.

Statistics: only runs with verdict `pass` count; per (scenario, profile) the report gives the
median, the MAD, a 95% bootstrap interval of the median and the coefficient of variation of
msgs/s (see syslogbench/stats.py), flags CoV > 10% as erratic, sets every profile against the
`baseline` profile and against the fastest profile, and marks sender-bound runs.
"""

from __future__ import annotations

import argparse
import html
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from syslogbench.model.result import Host, Limit, Result, Scenario, read
from syslogbench.report import stats
from syslogbench.report.load import (
    BASELINE,
    DEFAULT_SCENARIO,
    Group,
    baseline_group,
    fastest_group,
    finished_at,
    group_results,
    latest_per_profile,
    load_results,
    profile_order,
    sender_bound,
    throughput_ratio,
)
from syslogbench.report.published import pe7, seed2014

ROOT = Path(__file__).resolve().parents[2]
RESULTS_DIR = ROOT / "results"
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


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]


# -- one run per row -------------------------------------------------------------------------------


def sender_bound_cell(result: Result) -> str:
    value = sender_bound(result)
    if value is None:
        return NA
    return f"yes {SENDER_BOUND_MARK}" if value else "no"


RUN_COLUMNS: list[tuple[str, Callable[[Result], str]]] = [
    ("profile", lambda r: r.daemon.profile),
    ("daemon version", lambda r: r.daemon.version or NA),
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
    ("run id", lambda r: f"`{r.run_id}`"),
]


def runs_header() -> list[str]:
    return [name for name, _ in RUN_COLUMNS]


def runs_rows(results: Sequence[Result]) -> list[list[str]]:
    return [[column(result) for _, column in RUN_COLUMNS] for result in results]


def runs_table(results: Sequence[Result]) -> list[str]:
    return table(runs_header(), runs_rows(results))


def machine_label(host: Host) -> str:
    return (
        f"{host.cpu_model}, {host.cores} cores, {fmt(host.memory_bytes, '.1f', GIB)} GiB RAM, "
        f"kernel {host.kernel}, cgroup v{host.cgroup_version}, Docker {host.docker_version}"
    )


def machine_labels(results: Sequence[Result]) -> list[str]:
    return list(dict.fromkeys(machine_label(result.host) for result in results))


def machines_line(results: Sequence[Result]) -> str:
    labels = machine_labels(results)
    noun = "Machine" if len(labels) == 1 else "Machines"
    return f"{noun}: " + "; ".join(labels) + "."


# -- statistics per profile and scenario -----------------------------------------------------------


# -- the tables, as rows of text, shared by the Markdown and the HTML -------------------------------


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


def describe_scenario(results: Sequence[Result]) -> str:
    s = max(results, key=finished_at).scenario
    size = f", {s.message_bytes}-byte messages" if s.message_bytes else ""
    return (
        f"{s.hosts} hosts x {s.senders_per_host} senders x {s.messages_per_sender:,} messages "
        f"({s.messages_total:,} in all{size}), {s.transport or '?'}, {s.format or '?'}."
    )


STATS_NOTE = (
    "Only runs with verdict `pass` count; the others are listed under *not counted*. *n* is the "
    "number of counted runs. *95% CI* is the bootstrap interval of the median (percentile method, "
    f"{stats.BOOTSTRAP_RESAMPLES:,} resamples, fixed seed {stats.BOOTSTRAP_SEED}): with three runs it "
    "is their range. *MAD* is the raw median absolute deviation. *CoV* is the sample standard "
    f"deviation / mean; above {stats.ERRATIC_COV:.0%} the profile is flagged *erratic*. *% of "
    f"baseline* is the median msgs/s over that of the `{BASELINE}` profile (the simplest receiver, "
    "the ceiling of this setup) in the same scenario, with the bootstrap 95% interval of that ratio. "
    "The other columns are medians of the counted runs."
)
SENDER_BOUND_NOTE = (
    f"{SENDER_BOUND_MARK} Sender-bound: the senders, not the daemon, set the pace (senders saturated "
    "while the daemon had CPU to spare), so msgs/s is a floor for the daemon, not its ceiling."
)


@dataclass
class Section:
    """One scenario's part of the report, as text cells; rendered to Markdown and to HTML."""

    scenario: str
    description: str
    stats_rows: list[list[str]]
    erratic: list[str]
    baseline: str | None
    fastest: str | None
    ratio_rows: list[list[str]]
    sender_bound: list[str]
    latest_rows: list[list[str]]
    machine: str
    profiles: list[str]
    published: list[tuple[str, list[list[str]]]] = field(default_factory=list)


PUBLISHED_HEADER = ["published configuration", "msgs/s", "MB/s"]
PUBLISHED_MARK = "◀"
PUBLISHED_NOTE = (
    f"Published figures, not ours: {pe7.SOURCE}; {pe7.MESSAGE_BYTES}-byte messages. "
    f"{PUBLISHED_MARK} marks the rows that correspond to this scenario; the other rows are the table's context."
)


def recorded_axes(scenario: Scenario) -> dict[str, object]:
    """The scenario's axes the result recorded (an older result lacks the later ones)."""
    return {key: value for key, value in vars(scenario).items() if value is not None}


def published_blocks(axes: Mapping[str, object]) -> list[tuple[str, list[list[str]]]]:
    """The syslog-ng PE 7 tables with a row matching the scenario's axes, as (title, rows of cells)."""
    blocks = []
    for table, marks in pe7.tables_for(axes):
        rows = [
            [
                f"{row.label} {PUBLISHED_MARK}" if mark else row.label,
                f"{row.msgs_per_s:,}",
                fmt(row.mb_per_s, ".0f"),
            ]
            for row, mark in zip(table.rows, marks, strict=True)
        ]
        blocks.append((f"{table.title}: {table.config}", rows))
    return blocks


def build_section(scenario: str, groups: Sequence[Group]) -> Section:
    runs = [run for group in groups for run in group.runs]
    baseline, fastest = baseline_group(groups), fastest_group(groups)
    return Section(
        scenario=scenario,
        description=describe_scenario(runs),
        stats_rows=[stats_row(group, baseline) for group in groups],
        erratic=[group.profile for group in groups if group.erratic],
        baseline=baseline.profile if baseline else None,
        fastest=fastest.profile if fastest else None,
        ratio_rows=ratio_rows(groups, fastest),
        sender_bound=sender_bound_notes(groups),
        latest_rows=runs_rows(latest_per_profile(runs, scenario)),
        machine=machines_line(runs),
        profiles=[group.profile for group in groups],
        published=published_blocks(recorded_axes(max(runs, key=finished_at).scenario)),
    )


def overview_cell(group: Group | None) -> str:
    """Median msgs/s and the number of counted runs; the verdicts when none counted."""
    if group is None:
        return "not run"
    if group.throughput:
        return f"{group.throughput.median:,.0f} ({group.throughput.n})"
    return ", ".join(f"{verdict} x{count}" for verdict, count in sorted(group.not_counted.items()))


def overview(grouped: dict[str, list[Group]]) -> tuple[list[str], list[list[str]]]:
    """One row per scenario (and load shape), one column per profile: what the report holds at a glance."""
    names = sorted({group.profile for groups in grouped.values() for group in groups}, key=profile_order)
    rows = []
    for scenario, groups in grouped.items():
        by_profile = {group.profile: group for group in groups}
        rows.append([f"`{scenario}`", *(overview_cell(by_profile.get(name)) for name in names)])
    return ["scenario", *(f"{name} msgs/s (n)" for name in names)], rows


OVERVIEW_NOTE = (
    "Median msgs/s over the counted (`pass`) runs, with their number; a profile with no counted run shows "
    "its verdicts. A scenario id followed by `@HxSxM` names the run's variant: H hosts x S senders x M "
    "messages instead of the scenario's own load shape (before a scenario held its shape, the seed's "
    "5 x 4 x 300,000)."
)


def build_sections(results: Sequence[Result], scenario_id: str | None) -> list[Section]:
    return [build_section(s, groups) for s, groups in group_results(results, scenario_id).items()]


# -- the 2014 figures ------------------------------------------------------------------------------


def seed_row(daemon: str, m: seed2014.Medians) -> list[str]:
    runs = ", ".join(f"{run.elapsed_s:.2f}" for run in seed2014.RUNS[daemon])
    return [
        daemon,
        f"{m.elapsed_s:.2f}",
        runs,
        f"{m.user_s:.2f}",
        f"{m.system_s:.2f}",
        f"{m.cpu_percent:.0f}%",
        f"{m.max_rss_mib:.1f}",
        f"{m.msgs_per_s:,.0f}",
    ]


SEED_HEADER = [
    "daemon",
    "elapsed s",
    "elapsed s, 3 runs",
    "user s",
    "system s",
    "%CPU",
    "max RSS MiB",
    "msgs/s (derived)",
]
SEED_TITLE = "Published 2014 figures, on the 2014 hardware"
SEED_INTRO = (
    "Published figures, not ours: median of three `/usr/bin/time` runs per daemon, measured "
    f"in 2014 on {seed2014.HARDWARE}. Workload: {seed2014.HOSTS} remote hosts x "
    f"{seed2014.SENDERS_PER_HOST} senders x {seed2014.MESSAGES_PER_SENDER:,} messages. "
    "Each column is the median on its own."
)
SEED_RATE_NOTE = (
    f"msgs/s is derived by us as {seed2014.MESSAGES_TOTAL:,} messages (including the 20 DONE "
    "messages) / median elapsed; the 2014 post did not publish a rate."
)


def seed_rows() -> list[list[str]]:
    return [seed_row(daemon, m) for daemon, m in seed2014.medians().items()]


def seed_table() -> list[str]:
    return table(SEED_HEADER, seed_rows())


def seed_section() -> list[str]:
    return [f"## {SEED_TITLE}", "", SEED_INTRO, "", *seed_table(), "", SEED_RATE_NOTE]


MEMORY_NOTE = (
    "Note on memory: our *peak mem* column is the cgroup peak of the central container, which "
    "includes the page cache of the files the daemon wrote; the 2014 *max RSS* column is "
    "`/usr/bin/time` maxresident of the daemon. Compare RSS to RSS (our *max RSS* column, the "
    "daemon's VmHWM), not the cgroup peak. GNU time 1.7, current in 2014, is known to report "
    "maxresident about 4x too high on Linux (fixed in 1.8); we do not know which build was used."
)


# -- Markdown --------------------------------------------------------------------------------------

# Per scenario, the plot files to show: (caption, path relative to the report).
Figures = dict[str, list[tuple[str, str]]]


def markdown_section(section: Section, figures: Figures) -> list[str]:
    lines = [f"## Scenario `{section.scenario}`", "", section.description, "", section.machine, ""]
    lines += ["### Statistics per profile", "", *table(STATS_HEADER, section.stats_rows), ""]
    if section.erratic:
        names = ", ".join(f"`{p}`" for p in section.erratic)
        lines += [f"Erratic (CoV of msgs/s above {stats.ERRATIC_COV:.0%}): {names}.", ""]
    if section.baseline is None:
        lines += [f"No `{BASELINE}` profile with a passing run in this scenario: no % of baseline.", ""]
    if section.sender_bound:
        lines += [SENDER_BOUND_NOTE, "", *(f"- {note}" for note in section.sender_bound), ""]
    if section.fastest:
        lines += [f"### Throughput relative to the fastest daemon profile, `{section.fastest}`", ""]
        lines += [*table(RATIO_HEADER, section.ratio_rows), ""]
    for caption, path in figures.get(section.scenario, []):
        lines += [f"![{caption}]({path})", ""]
    lines += ["### Latest run per profile", ""]
    lines += ["Every verdict; null figures, not measured, are shown as n/a.", ""]
    lines += table(runs_header(), section.latest_rows)
    if section.published:
        lines += ["", "### syslog-ng PE 7, as published", "", PUBLISHED_NOTE]
        for title, rows in section.published:
            lines += ["", f"*{title}*", "", *table(PUBLISHED_HEADER, rows)]
    return lines


def markdown_report(
    results: Sequence[Result],
    results_dir: Path,
    scenario_id: str | None = DEFAULT_SCENARIO,
    figures: Figures | None = None,
) -> str:
    sections = build_sections(results, scenario_id)
    title = "# syslogbench results" + (f": scenario `{scenario_id}`" if scenario_id else "")
    lines = [title, ""]
    if sections:
        header, rows = overview(group_results(results, scenario_id))
        lines += ["## Scenarios at a glance", "", OVERVIEW_NOTE, "", *table(header, rows), ""]
        lines += [STATS_NOTE, ""]
        for section in sections:
            lines += [*markdown_section(section, figures or {}), ""]
    else:
        where = f"of scenario `{scenario_id}` " if scenario_id else ""
        lines += [f"No runs {where}in `{results_dir}`.", ""]
    lines += [*seed_section(), "", MEMORY_NOTE]
    return "\n".join(lines) + "\n"


def render_markdown(results_dir: Path, scenario_id: str | None = DEFAULT_SCENARIO) -> str:
    """The Markdown report of one scenario (every scenario for None) from the files in results_dir."""
    return markdown_report(load_results(results_dir), results_dir, scenario_id)


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


def show_run(path: Path) -> None:
    """What `syslogbench run` prints after a run."""
    print()
    print(render_run(read(path)))
    print(f"\nResult file: {path}")


def render_run(result: Result) -> str:
    """One run's row, its machine, and the 2014 medians beside it: what `syslogbench run` prints."""
    extra = rate_and_udp_lines(result)
    lines = [*runs_table([result]), "", *extra, *([""] if extra else []), machines_line([result]), ""]
    return "\n".join([*lines, *seed_section()])


# -- HTML ------------------------------------------------------------------------------------------

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1400px;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1, h2, h3 { line-height: 1.2; }
h2 { border-bottom: 2px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: 0.88em; }
th, td { border: 1px solid #ccc; padding: .25em .5em; text-align: right; white-space: nowrap; }
th { background: #f0f0f0; }
td:first-child, th:first-child { text-align: left; }
tr.erratic td { background: #fff3cd; }
.scroll { overflow-x: auto; }
.note { font-size: 0.9em; color: #444; max-width: 70em; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { font-size: 0.9em; color: #444; }
code { background: #f4f4f4; padding: 0 .2em; }
"""


def inline_html(text: str) -> str:
    """Escaped text with Markdown's `code` and **bold** turned into tags."""
    parts = html.escape(text).split("`")
    out = "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))
    parts = out.split("**")
    out = "".join(f"<strong>{p}</strong>" if i % 2 else p for i, p in enumerate(parts))
    parts = out.split("*")
    return "".join(f"<em>{p}</em>" if i % 2 else p for i, p in enumerate(parts))


def html_table(header: Sequence[str], rows: Sequence[Sequence[str]], classes: Sequence[str] = ()) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        css = classes[i] if i < len(classes) and classes[i] else ""
        attr = f' class="{css}"' if css else ""
        body.append(f"<tr{attr}>" + "".join(f"<td>{inline_html(c)}</td>" for c in row) + "</tr>")
    return (
        '<div class="scroll"><table><thead><tr>'
        + head
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></div>"
    )


def html_section(section: Section, figures: Figures) -> list[str]:
    p = inline_html
    classes = ["erratic" if row[0] in section.erratic else "" for row in section.stats_rows]
    out = [
        f'<section id="scenario-{html.escape(section.scenario)}">',
        f"<h2>Scenario {p(f'`{section.scenario}`')}</h2>",
        f"<p>{p(section.description)}<br>{p(section.machine)}</p>",
        "<h3>Statistics per profile</h3>",
        html_table(STATS_HEADER, section.stats_rows, classes),
    ]
    if section.erratic:
        names = ", ".join(f"`{name}`" for name in section.erratic)
        out.append(f'<p class="note">Erratic (CoV of msgs/s above {stats.ERRATIC_COV:.0%}): {p(names)}.</p>')
    if section.baseline is None:
        text = f"No `{BASELINE}` profile with a passing run in this scenario: no % of baseline."
        out.append(f'<p class="note">{p(text)}</p>')
    if section.sender_bound:
        items = "".join(f"<li>{p(note)}</li>" for note in section.sender_bound)
        out.append(f'<p class="note">{p(SENDER_BOUND_NOTE)}</p><ul class="note">{items}</ul>')
    if section.fastest:
        out.append(f"<h3>Throughput relative to the fastest daemon profile, {p(f'`{section.fastest}`')}</h3>")
        out.append(html_table(RATIO_HEADER, section.ratio_rows))
    for caption, path in figures.get(section.scenario, []):
        svg = str(Path(path).with_suffix(".svg"))
        out.append(
            f'<figure><a href="{html.escape(svg)}"><img src="{html.escape(path)}" alt="{html.escape(caption)}">'
            f"</a><figcaption>{html.escape(caption)} (click for SVG)</figcaption></figure>"
        )
    out += [
        "<h3>Latest run per profile</h3>",
        '<p class="note">Every verdict; null figures, not measured, are shown as n/a.</p>',
        html_table(runs_header(), section.latest_rows),
    ]
    if section.published:
        out += ["<h3>syslog-ng PE 7, as published</h3>", f'<p class="note">{p(PUBLISHED_NOTE)}</p>']
        for title, rows in section.published:
            out += [f"<p><em>{html.escape(title)}</em></p>", html_table(PUBLISHED_HEADER, rows)]
    out.append("</section>")
    return out


def html_report(
    results: Sequence[Result],
    results_dir: Path,
    scenario_id: str | None = DEFAULT_SCENARIO,
    figures: Figures | None = None,
) -> str:
    """One static page, CSS inline, plots referenced by relative path: no server, no external URL."""
    sections = build_sections(results, scenario_id)
    title = "syslogbench results" + (f": scenario {scenario_id}" if scenario_id else "")
    body = [f"<h1>{html.escape(title)}</h1>"]
    if sections:
        links = " &middot; ".join(
            f'<a href="#scenario-{html.escape(s.scenario)}">{html.escape(s.scenario)}</a>' for s in sections
        )
        header, rows = overview(group_results(results, scenario_id))
        body += [f"<p>Scenarios: {links}</p>", "<h2>Scenarios at a glance</h2>"]
        body += [f'<p class="note">{inline_html(OVERVIEW_NOTE)}</p>', html_table(header, rows)]
        body.append(f'<p class="note">{inline_html(STATS_NOTE)}</p>')
        for section in sections:
            body += html_section(section, figures or {})
    else:
        where = f"of scenario `{scenario_id}` " if scenario_id else ""
        body.append(f"<p>{inline_html(f'No runs {where}in `{results_dir}`.')}</p>")
    body += [
        f"<h2>{html.escape(SEED_TITLE)}</h2>",
        f'<p class="note">{inline_html(SEED_INTRO)}</p>',
        html_table(SEED_HEADER, seed_rows()),
        f'<p class="note">{inline_html(SEED_RATE_NOTE)}</p>',
        f'<p class="note">{inline_html(MEMORY_NOTE)}</p>',
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


# -- the command -----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m syslogbench report", description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="results directory")
    parser.add_argument("--scenario", help="only this scenario id (default: every scenario present)")
    parser.add_argument("--output", type=Path, help="write the Markdown here instead of stdout")
    parser.add_argument("--html", type=Path, help="write the static HTML page here")
    parser.add_argument(
        "--plots", type=Path, help="write the PNG and SVG plots here (default with --html: its folder/plots)"
    )
    parser.add_argument(
        "--out", type=Path, help="write DIR/report.md, DIR/report.html and DIR/plots/ (the flags above win)"
    )
    parser.add_argument("--run", help="run id for the over-time plot (default: the latest run with samples)")
    return parser.parse_args(argv)


def relative_figures(figures: dict[str, list[tuple[str, Path]]], start: Path) -> Figures:
    """The plot paths as seen from the folder of the file that shows them."""
    return {
        scenario: [(caption, Path(os.path.relpath(path, start)).as_posix()) for caption, path in items]
        for scenario, items in figures.items()
    }


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"report: wrote {path}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--"]:  # `python -m syslogbench report -- --out DIR`
        argv = argv[1:]
    args = parse_args(argv)
    markdown_path, html_path, plots_dir = args.output, args.html, args.plots
    if args.out is not None:
        markdown_path = markdown_path or args.out / "report.md"
        html_path = html_path or args.out / "report.html"
        plots_dir = plots_dir or args.out / "plots"
    if html_path is not None and plots_dir is None:
        plots_dir = html_path.parent / "plots"
    results = load_results(args.results)
    figures: dict[str, list[tuple[str, Path]]] = {}
    if plots_dir is not None:
        from syslogbench.report import plots  # matplotlib only when plots are asked for

        figures = plots.write_plots(results, plots_dir, args.scenario, args.run)
        print(
            f"report: wrote {sum(map(len, figures.values()))} plots (PNG and SVG) to {plots_dir}",
            file=sys.stderr,
        )
    md_base = markdown_path.parent if markdown_path else Path.cwd()
    markdown = markdown_report(results, args.results, args.scenario, relative_figures(figures, md_base))
    if markdown_path is None:
        sys.stdout.write(markdown)
    else:
        write_text(markdown_path, markdown)
    if html_path is not None:
        page = html_report(results, args.results, args.scenario, relative_figures(figures, html_path.parent))
        write_text(html_path, page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
