"""The first screen's burst, and the version matrix: how fast the seed scenario's burst drains on one machine,
one sentence per tuning that ranks the daemons of that tuning only (a line where a tuning has no run yet), and
the table of every version's medians, its tuning in a column, beside the 2014 daemons as published."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from syslogbench.model.result import Result
from syslogbench.report import stats
from syslogbench.report.blocks import Block, Note, Paragraph
from syslogbench.report.cells import (
    DASH,
    MIB,
    NA,
    fmt,
    fmt_interval,
    fmt_percent,
)
from syslogbench.report.load import (
    BASELINE,
    DEFAULT_SCENARIO,
    RANKED_TUNINGS,
    Group,
    daemon_groups,
    machine_label,
    section_tuning,
    throughput_ratio,
    tuning_rank,
    tuning_words,
)
from syslogbench.report.machines import FINGERPRINT_COLUMNS, fingerprint_cell, fingerprints
from syslogbench.report.published import seed2014

# load.version_matrix: the seed scenario's sections on one machine, (name, groups), one per tuning.
Matrix = Sequence[tuple[str, Sequence[Group]]]

BURST_TITLE = "Burst: how fast a {total:,}-message burst drains"
BURST_NOTE = (
    "The seed scenario (`{scenario}`, 2014's test): {total:,} messages sent over TCP as fast as the daemon's "
    "backpressure lets them, every one of them counted at the end. Its msgs/s is the rate at which that burst "
    "drains, with the daemon's queues full: not a rate held without loss or delay (the capacity above). Each "
    "answer ranks one tuning's daemons (docs/tuning.md)."
)
VERSIONS_TITLE = "The version matrix: the seed scenario, version by version, beside 2014"
VERSIONS_NOTE = (
    f"`{DEFAULT_SCENARIO}` at its own shape, every profile on one machine (below), the medians of its counted "
    "runs, the defaults first, then each other tuning; `python -m syslogbench matrix` interleaves the "
    "profiles' replicates. Then the 2014 daemons as published, measured on "
    f"{seed2014.HARDWARE}, with the configs of 2014: medians of their three runs, with msgs/s and CPU s per "
    f"million messages derived here from their {seed2014.MESSAGES_TOTAL:,} messages. The two sets ran on "
    "different hardware: compare the daemons' order and CPU s per million messages, not elapsed time."
)
PUBLISHED_TUNING = "2014's configs"


# -- the answers ------------------------------------------------------------------------------------


def runs_text(n: int) -> str:
    return "one run" if n == 1 else f"{n} runs"


def median_text(group: Group) -> str:
    """ "426,624 msgs/s (median of 5 runs, 95% CI 419,600–433,100)"."""
    t = group.throughput
    if t is None:
        return NA
    interval = fmt_interval(t.ci_low, t.ci_high, ",.0f")
    spread = f", 95% CI {interval}" if interval != NA else ": no interval"
    return f"{t.median:,.0f} msgs/s (median of {runs_text(t.n)}{spread})"


def times_text(group: Group, other: Group) -> str:
    """ "3.06 times `rsyslog-8.2504` (95% CI of the ratio 3.01–3.12)", and whether the runs tell them apart."""
    ratio = throughput_ratio(group, other)
    if ratio is None:
        return f"faster than `{other.profile}`"
    text = f"{ratio.value:.2f} times `{other.profile}`, {median_text(other)}"
    if ratio.low is None or ratio.high is None:
        return text + "; too few runs for an interval of the ratio"
    text += f"; 95% CI of the ratio {ratio.low:.2f}{DASH}{ratio.high:.2f}"
    return text + (", which includes 1: these runs do not tell the two apart" if ratio.low <= 1 else "")


def answer_sentences(groups: Sequence[Group], machine: str, tuning: str | None = None) -> str | None:
    """Which daemon of one section (one tuning) is fastest in the seed scenario on this machine, by how much
    over the next, and over the fastest of each other family; None when no daemon has a passing run."""
    daemons = daemon_groups(groups)
    if not daemons:
        return None
    first = daemons[0]
    words = tuning_words(tuning or section_tuning(groups))
    text = (
        f"**On {machine}, {words}, `{first.profile}` drains the seed scenario's burst fastest:** "
        f"{median_text(first)}"
    )
    if len(daemons) == 1:
        return text + "; no other daemon passed here."
    text += f", {times_text(first, daemons[1])}."
    families = {group.daemon: group for group in reversed(daemons)}  # each family's fastest
    for family, best in families.items():
        if family != first.daemon and best is not daemons[1]:
            text += f" Over the fastest {family}, it is {times_text(first, best)}."
    return text


def machine_paragraph(runs: Sequence[Result], number: int) -> str:
    """The machine of the answer, as its results describe it, and its fingerprint per CPU second."""
    found = fingerprints(runs)
    text = f"**Machine {number}:** {machine_label(runs[0].host)}."
    if not found:
        return text + " Its runs carry no fingerprint."
    figures = [
        f"{label} {fingerprint_cell(found, name, scale, spec)} {unit.strip()}"
        for label, name, scale, spec, unit in FINGERPRINT_COLUMNS
    ]
    return text + (
        f" Fingerprint per CPU second, median (range) of its {runs_text(len(found))} here: "
        + ", ".join(figures)
        + " (fixed work timed before each run: M loops, millions of a pure-Python loop's turns; k ops, "
        "thousands of file open-append-close; MB over loopback TCP; see [Machines](#machines))."
    )


def capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def answer_blocks(matrix: Matrix, machine: str) -> list[Block]:
    """One answer per tuning that ran, each ranking that tuning's daemons alone; for a tuning the first
    screen ranks that has no run here, or none that passed, one short sentence that says so, after the last
    answer (its own line where there is none): the chart stays in the first screen's upper half."""
    found = {section_tuning(groups): groups for _, groups in matrix}
    answers, missing = [], []
    for tuning in sorted({*RANKED_TUNINGS, *found}, key=tuning_rank):
        words = capitalized(tuning_words(tuning))
        if tuning not in found:
            missing.append(f"*{words}:* no run of the seed scenario on {machine} yet.")
        elif answer := answer_sentences(found[tuning], machine, tuning):
            answers.append(answer)
        else:
            missing.append(f"*{words}:* no daemon passed the seed scenario on {machine}.")
    if not answers:
        return [Note(" ".join(missing))] if missing else []
    answers[-1] = " ".join([answers[-1], *missing])
    return [Paragraph(answer) for answer in answers]


# -- the version matrix's table ------------------------------------------------------------------------


VERSIONS_HEADER = [
    "daemon",
    "tuning",
    "measured",
    "n",
    "median elapsed s",
    "median msgs/s",
    "CoV of msgs/s",
    "median CPU s per M msgs",
    "CoV of CPU s per M",
    "median user s",
    "median system s",
    "median max RSS MiB",
]


def versions_row(group: Group, machine: str) -> list[str]:
    """A profile of the version matrix: the medians of its counted runs, and the spread of both rates."""
    rate, cpu = group.throughput, group.cpu_per_million
    return [
        f"`{group.name}` ({group.daemon})",
        "-" if group.profile == BASELINE else group.tuning,  # a receiver: no tuning of its own
        machine,
        str(rate.n if rate else 0),
        fmt(group.median("elapsed_s"), ".2f"),
        fmt(rate.median if rate else None, ",.0f"),
        fmt_percent(rate.cov if rate else None),
        fmt(cpu.median if cpu else None, ".2f"),
        fmt_percent(cpu.cov if cpu else None),
        fmt(group.median("cpu_user_s"), ".2f"),
        fmt(group.median("cpu_system_s"), ".2f"),
        fmt(group.median("max_rss_bytes"), ".1f", MIB),
    ]


def published_versions_rows() -> list[list[str]]:
    """The 2014 daemons in the version matrix's columns: rates derived from the three published runs."""
    rows = []
    for daemon, runs in seed2014.RUNS.items():
        m = seed2014.daemon_medians(runs)
        rates = [seed2014.MESSAGES_TOTAL / run.elapsed_s for run in runs]
        cpu = [(run.user_s + run.system_s) / seed2014.MESSAGES_TOTAL * 1e6 for run in runs]
        rows.append(
            [
                daemon,
                PUBLISHED_TUNING,
                "2014, published",
                str(len(runs)),
                f"{m.elapsed_s:.2f}",
                f"{m.msgs_per_s:,.0f}",
                fmt_percent(stats.cov(rates)),
                f"{median(cpu):.2f}",
                fmt_percent(stats.cov(cpu)),
                f"{m.user_s:.2f}",
                f"{m.system_s:.2f}",
                f"{m.max_rss_mib:.1f}",
            ]
        )
    return rows


def versions_rows(matrix: Matrix, machine: str) -> list[list[str]]:
    """Every profile of each tuning on the matrix's machine, the default's first, the baseline once; then
    2014's daemons."""
    rows, shown = [], set()
    for _, groups in matrix:
        for group in groups:
            if group.profile == BASELINE and group.profile in shown:
                continue
            shown.add(group.profile)
            rows.append(versions_row(group, machine))
    return rows + published_versions_rows()
