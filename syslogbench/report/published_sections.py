"""The published figures beside ours, not this project's: the 2014 medians (report/published/seed2014.py),
under every run `syslogbench run` prints and at the foot of the report, and syslog-ng PE 7's tables
(report/published/pe7.py), once at the foot, each scenario's section naming the rows that correspond to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from syslogbench.model.result import Result, Scenario
from syslogbench.report.blocks import Block, Details, Heading, Note, Paragraph, Section, Table
from syslogbench.report.cells import fmt
from syslogbench.report.load import finished_at
from syslogbench.report.published import pe7, seed2014

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
SEED_ANCHOR = "published-2014"
SEED_TITLE = "Published 2014 figures, on the 2014 hardware"
SEED_INTRO = (
    "Published figures, not this project's: median of three `/usr/bin/time` runs per daemon, measured "
    f"in 2014 on {seed2014.HARDWARE}. Workload: {seed2014.HOSTS} remote hosts x "
    f"{seed2014.SENDERS_PER_HOST} senders x {seed2014.MESSAGES_PER_SENDER:,} messages. "
    "Each column is the median on its own."
)
SEED_RATE_NOTE = (
    f"msgs/s is derived here as {seed2014.MESSAGES_TOTAL:,} messages (including the 20 DONE "
    "messages) / median elapsed; the 2014 post did not publish a rate."
)
MEMORY_NOTE = (
    "Note on memory: the *peak mem* column is the cgroup peak of the central container, which "
    "includes the page cache of the files the daemon wrote; the 2014 *max RSS* column is "
    "`/usr/bin/time` maxresident of the daemon. Compare RSS to RSS (the *max RSS* column, the "
    "daemon's VmHWM), not the cgroup peak. GNU time 1.7, current in 2014, is known to report "
    "maxresident about 4x too high on Linux (fixed in 1.8); which build was used is not known."
)


# -- 2014 ------------------------------------------------------------------------------------------


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


def seed_rows() -> list[list[str]]:
    return [seed_row(daemon, m) for daemon, m in seed2014.medians().items()]


def seed_blocks() -> list[Block]:
    """The 2014 figures: in the report, and under every run `syslogbench run` prints."""
    return [Heading(SEED_TITLE, 2), Note(SEED_INTRO), Table(SEED_HEADER, seed_rows()), Note(SEED_RATE_NOTE)]


def seed_section() -> Section:
    """The 2014 figures at the foot of the report, and how their memory compares with ours."""
    return Section([*seed_blocks(), Note(MEMORY_NOTE)], anchor=SEED_ANCHOR)


# -- syslog-ng PE 7 --------------------------------------------------------------------------------

PUBLISHED_MARK = "◀"
PUBLISHED_HEADER = ["published configuration", "msgs/s", "MB/s"]
PE7_ANCHOR = "pe7"
PE7_TITLE = "syslog-ng PE 7, as published"
PUBLISHED_NOTE = (
    f"Published figures, not this project's: {pe7.SOURCE}; {pe7.MESSAGE_BYTES}-byte messages. "
    f"{PUBLISHED_MARK} marks the rows that correspond to this scenario; the other rows are the table's context."
)


def published_rows(table: pe7.Table, marks: Sequence[bool]) -> list[list[str]]:
    """One PE 7 table's rows, the ones matching the scenario marked."""
    return [
        [
            f"{row.label} {PUBLISHED_MARK}" if mark else row.label,
            f"{row.msgs_per_s:,}",
            fmt(row.mb_per_s, ".0f"),
        ]
        for row, mark in zip(table.rows, marks, strict=True)
    ]


def recorded_axes(scenario: Scenario) -> dict[str, object]:
    """The scenario's axes the result recorded (an older result lacks the later ones)."""
    return {key: value for key, value in vars(scenario).items() if value is not None}


def published_tables(axes: Mapping[str, object]) -> list[tuple[str, list[list[str]]]]:
    """The syslog-ng PE 7 tables with a row matching the scenario's axes, as (title, rows of cells)."""
    return [
        (f"{table.title}: {table.config}", published_rows(table, marks))
        for table, marks in pe7.tables_for(axes)
    ]


def published_blocks(runs: Sequence[Result]) -> list[Block]:
    """The PE 7 rows that correspond to this scenario, named; the tables themselves appear once, below."""
    found = pe7.tables_for(recorded_axes(max(runs, key=finished_at).scenario))
    if not found:
        return []
    names = "; ".join(
        f"*{table.title}*: "
        + ", ".join(row.label for row, mark in zip(table.rows, marks, strict=True) if mark)
        for table, marks in found
    )
    return [
        Note(f"Published figures that correspond to this scenario: {names} ([{PE7_TITLE}](#{PE7_ANCHOR})).")
    ]


def published_section() -> Section:
    """Every PE 7 table, once, folded: the scenarios' sections name the rows that correspond to them."""
    tables: list[Block] = []
    for table in pe7.TABLES:
        rows = published_rows(table, [False] * len(table.rows))
        tables += [Paragraph(f"*{table.title}: {table.config}*"), Table(PUBLISHED_HEADER, rows)]
    blocks: list[Block] = [
        Heading(PE7_TITLE, 2),
        Note(PUBLISHED_NOTE),
        Details(f"The {len(pe7.TABLES)} published tables", tables),
    ]
    return Section(blocks, anchor=PE7_ANCHOR)
