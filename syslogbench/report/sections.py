"""The report's content, decided once: from the grouped results, a document of sections of blocks.

Only pass runs count; per (scenario, profile) the report gives the median, the MAD, a 95% bootstrap
interval of the median and the coefficient of variation of msgs/s (see report/stats.py), flags CoV
above 10% as erratic, sets every profile against the `baseline` profile and against the fastest
profile, marks sender-bound runs, and sets the published 2014 and PE 7 figures beside ours.
report/markdown.py and report/html.py render what is built here, and decide nothing of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from syslogbench.model.result import Result, Scenario
from syslogbench.report import capacity, stats
from syslogbench.report.blocks import (
    Block,
    Contents,
    Document,
    Figure,
    Heading,
    Note,
    Notes,
    Paragraph,
    Section,
    Table,
)
from syslogbench.report.cells import (
    FINGERPRINT_HEADER,
    MACHINES_HEADER,
    PUBLISHED_HEADER,
    PUBLISHED_MARK,
    RATIO_HEADER,
    SEED_HEADER,
    SENDER_BOUND_MARK,
    STATS_HEADER,
    VERSIONS_HEADER,
    answer_sentences,
    describe_scenario,
    fingerprint_line,
    fingerprint_rows,
    fingerprints,
    machine_paragraph,
    machines_line,
    machines_rows,
    overview,
    published_rows,
    published_versions_rows,
    rate_and_udp_lines,
    ratio_rows,
    runs_header,
    runs_rows,
    seed_rows,
    sender_bound_notes,
    stats_row,
    versions_row,
)
from syslogbench.report.load import (
    BASELINE,
    DEFAULT_SCENARIO,
    Group,
    baseline_group,
    fastest_group,
    finished_at,
    group_results,
    latest_per_profile,
    machine_label,
    machine_numbers,
    seed_sections,
    version_matrix,
)
from syslogbench.report.published import pe7, seed2014

# Per section, by its anchor, the plot files to show: (caption, path relative to the report).
Figures = dict[str, list[tuple[str, str]]]
VERSIONS_ANCHOR = "versions"

OVERVIEW_NOTE = (
    "Median msgs/s over the counted (`pass`) runs, with their number; a profile with no counted run shows "
    "its verdicts. A scenario id followed by `@HxSxM` names the run's variant: H hosts x S senders x M "
    "messages instead of the scenario's own load shape (before a scenario held its shape, the seed's "
    "5 x 4 x 300,000)."
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
NO_BASELINE_NOTE = f"No `{BASELINE}` profile with a passing run in this scenario: no % of baseline."
FINGERPRINT_NOTE = (
    "Fixed work timed on the machine just before each run, under the daemon's limits "
    "(`host.fingerprint`): a pure-Python loop (cpu), open-append-close across 192 files on a volume of the logs "
    "volume's kind (file churn: what rsyslog's seed run spends its time on), and 100-byte lines over "
    "loopback TCP. Shown per CPU second, the rate the daemon's CPU seconds scale with; the cell is the median "
    "over the profile's runs here and their range. docs/measurement.md says how to compare two machines."
)
NO_FINGERPRINT_NOTE = (
    "No run here carries a machine fingerprint (results written before `host.fingerprint` existed, or n/a): "
    "whether they ran on machines that differ cannot be told from the results."
)
LATEST_NOTE = "Every verdict; null figures, not measured, are shown as n/a."
PUBLISHED_NOTE = (
    f"Published figures, not this project's: {pe7.SOURCE}; {pe7.MESSAGE_BYTES}-byte messages. "
    f"{PUBLISHED_MARK} marks the rows that correspond to this scenario; the other rows are the table's context."
)
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


# -- one scenario ----------------------------------------------------------------------------------


def recorded_axes(scenario: Scenario) -> dict[str, object]:
    """The scenario's axes the result recorded (an older result lacks the later ones)."""
    return {key: value for key, value in vars(scenario).items() if value is not None}


def published_tables(axes: Mapping[str, object]) -> list[tuple[str, list[list[str]]]]:
    """The syslog-ng PE 7 tables with a row matching the scenario's axes, as (title, rows of cells)."""
    return [
        (f"{table.title}: {table.config}", published_rows(table, marks))
        for table, marks in pe7.tables_for(axes)
    ]


def statistics_blocks(groups: Sequence[Group]) -> list[Block]:
    """The statistics per profile, and the notes that say which figures are missing or bounded."""
    baseline = baseline_group(groups)
    erratic = [group.profile for group in groups if group.erratic]
    classes = ["erratic" if group.erratic else "" for group in groups]
    blocks: list[Block] = [
        Heading("Statistics per profile", 3),
        Table(STATS_HEADER, [stats_row(group, baseline) for group in groups], classes),
    ]
    if erratic:
        names = ", ".join(f"`{name}`" for name in erratic)
        blocks.append(Note(f"Erratic (CoV of msgs/s above {stats.ERRATIC_COV:.0%}): {names}."))
    if baseline is None:
        blocks.append(Note(NO_BASELINE_NOTE))
    bound = sender_bound_notes(groups)
    if bound:
        blocks += [Note(SENDER_BOUND_NOTE), Notes(bound)]
    return blocks


def ratio_blocks(groups: Sequence[Group]) -> list[Block]:
    fastest = fastest_group(groups)
    if fastest is None:
        return []
    return [
        Heading(f"Throughput relative to the fastest daemon profile, `{fastest.profile}`", 3),
        Table(RATIO_HEADER, ratio_rows(groups, fastest)),
    ]


def fingerprint_blocks(groups: Sequence[Group]) -> list[Block]:
    heading = Heading("Machine fingerprint", 3)
    if not fingerprints([run for group in groups for run in group.runs]):
        return [heading, Note(NO_FINGERPRINT_NOTE)]
    return [heading, Note(FINGERPRINT_NOTE), Table(FINGERPRINT_HEADER, fingerprint_rows(groups))]


def latest_blocks(runs: Sequence[Result]) -> list[Block]:
    return [
        Heading("Latest run per profile", 3),
        Note(LATEST_NOTE),
        Table(runs_header(), runs_rows(latest_per_profile(runs, runs[0].label))),
    ]


def published_blocks(runs: Sequence[Result]) -> list[Block]:
    tables = published_tables(recorded_axes(max(runs, key=finished_at).scenario))
    if not tables:
        return []
    blocks: list[Block] = [Heading("syslog-ng PE 7, as published", 3), Note(PUBLISHED_NOTE)]
    for title, rows in tables:
        blocks += [Paragraph(f"*{title}*"), Table(PUBLISHED_HEADER, rows)]
    return blocks


def scenario_anchor(scenario: str) -> str:
    return f"scenario-{scenario}"


def scenario_section(scenario: str, groups: Sequence[Group], figures: Figures) -> Section:
    runs = [run for group in groups for run in group.runs]
    blocks: list[Block] = [
        Heading(f"Scenario `{scenario}`", 2),
        Paragraph(describe_scenario(runs)),
        Paragraph(machines_line(runs)),
        *statistics_blocks(groups),
        *ratio_blocks(groups),
        *(Figure(caption, path) for caption, path in figures.get(scenario_anchor(scenario), [])),
        *fingerprint_blocks(groups),
        *latest_blocks(runs),
        *published_blocks(runs),
    ]
    return Section(blocks, anchor=scenario_anchor(scenario))


# -- the version matrix and the machines -----------------------------------------------------------

VERSIONS_TITLE = "The version matrix: the seed scenario, version by version, beside 2014"
VERSIONS_NOTE = (
    f"`{DEFAULT_SCENARIO}` at its own shape, every profile on one machine (below), the medians of its counted "
    "runs; `python -m syslogbench matrix` interleaves the profiles' replicates. Then the 2014 daemons as "
    f"published, measured on {seed2014.HARDWARE}: medians of their three runs, with msgs/s and CPU s per "
    f"million messages derived here from their {seed2014.MESSAGES_TOTAL:,} messages. The two sets ran on "
    "different hardware: compare the daemons' order and CPU s per million messages, not elapsed time."
)
OTHER_SEEDS_NOTE = "The seed scenario on other machines has sections of its own: {}."
MACHINES_TITLE = "Machines"
MACHINES_NOTE = (
    "Each machine the results in this report came from, as the results describe it, with the median (and "
    "range) of its runs' fingerprints per CPU second. Runs of two machines never pool: where a scenario ran "
    "on several, each has its own section, named by the machine's number here. docs/measurement.md says how "
    "to compare two machines with the fingerprint."
)


def versions_section(
    grouped: Mapping[str, Sequence[Group]], numbers: Mapping[str, int], figures: Figures
) -> Section | None:
    """The first screen: the answer, the machine it holds on, the chart; then the version matrix's table."""
    matrix = version_matrix(grouped)
    if matrix is None:
        return None
    name, groups = matrix
    runs = [run for group in groups for run in group.runs]
    number = numbers[machine_label(runs[0].host)]
    answer = answer_sentences(groups, f"machine {number}")
    rows = [versions_row(group, f"machine {number}") for group in groups] + published_versions_rows()
    blocks: list[Block] = [
        *([Paragraph(answer)] if answer else []),
        Paragraph(machine_paragraph(runs, number)),
        *(Figure(caption, path) for caption, path in figures.get(VERSIONS_ANCHOR, [])),
        Heading(VERSIONS_TITLE, 2),
        Note(VERSIONS_NOTE),
        Table(VERSIONS_HEADER, rows),
    ]
    others = [f"`{other}`" for other in seed_sections(grouped) if other != name]
    if others:
        blocks.append(Note(OTHER_SEEDS_NOTE.format(", ".join(others))))
    return Section(blocks, anchor=VERSIONS_ANCHOR)


def machines_section(results: Sequence[Result], numbers: dict[str, int]) -> Section:
    return Section(
        [
            Heading(MACHINES_TITLE, 2),
            Note(MACHINES_NOTE),
            Table(MACHINES_HEADER, machines_rows(results, numbers)),
        ]
    )


# -- the whole report ------------------------------------------------------------------------------


def overview_section(grouped: dict[str, list[Group]]) -> Section:
    header, rows, notes = overview(grouped)
    contents = Contents("Scenarios", [(scenario, scenario_anchor(scenario)) for scenario in grouped])
    return Section(
        [
            contents,
            Heading("Scenarios at a glance", 2),
            Note(OVERVIEW_NOTE),
            Table(header, rows),
            *(Note(note) for note in notes),
            Note(STATS_NOTE),
        ]
    )


def seed_blocks() -> list[Block]:
    """The 2014 figures: in the report, and under every run `syslogbench run` prints."""
    return [Heading(SEED_TITLE, 2), Note(SEED_INTRO), Table(SEED_HEADER, seed_rows()), Note(SEED_RATE_NOTE)]


def nothing_section(results_dir: Path, scenario_id: str | None) -> Section:
    where = f"of scenario `{scenario_id}` " if scenario_id else ""
    return Section([Paragraph(f"No runs {where}in `{results_dir}`.")])


def document(
    results: Sequence[Result],
    results_dir: Path,
    scenario_id: str | None = DEFAULT_SCENARIO,
    figures: Figures | None = None,
) -> Document:
    """The report of one scenario (every scenario for None), with these plots shown per scenario."""
    grouped = group_results(results, scenario_id)
    title = "syslogbench results" + (f": scenario `{scenario_id}`" if scenario_id else "")
    if grouped:
        scenarios = [scenario_section(s, groups, figures or {}) for s, groups in grouped.items()]
        chosen = [run for groups in grouped.values() for group in groups for run in group.runs]
        numbers = machine_numbers(chosen)
        versions = versions_section(grouped, numbers, figures or {})
        sections = [
            *([versions] if versions else []),
            machines_section(chosen, numbers),
            overview_section(grouped),
            *scenarios,
        ]
    else:
        sections = [nothing_section(results_dir, scenario_id)]
    shown = (figures or {}).get(capacity.ANCHOR, [])
    sections += [found] if (found := capacity.section(results_dir, shown)) else []  # results/capacity/
    return Document(title, [*sections, Section([*seed_blocks(), Note(MEMORY_NOTE)])])


def run_blocks(result: Result) -> list[Block]:
    """One run's row, its rate and UDP figures, its machine, and the 2014 medians beside it."""
    extra = rate_and_udp_lines(result)
    blocks: list[Block] = [Table(runs_header(), runs_rows([result]))]
    if extra:
        blocks.append(Paragraph("\n".join(extra)))
    return [*blocks, Paragraph(machines_line([result])), Paragraph(fingerprint_line(result)), *seed_blocks()]
