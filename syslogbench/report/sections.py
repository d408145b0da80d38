"""The report's content, decided once: from the grouped results, a document of sections of blocks.

Only pass runs count; per (scenario, profile) the report gives the median, the MAD, a 95% bootstrap
interval of the median and the coefficient of variation of msgs/s (see report/stats.py), flags CoV
above 10% as erratic, sets every profile against the `baseline` profile and against the fastest
profile, marks sender-bound runs, and sets the published 2014 and PE 7 figures beside ours
(report/published_sections.py). A part with a topic of its own is built in its module: capacity_answer
(the first screen's), capacity, burst (the burst and the version matrix), knobs, compare and machines.
report/markdown.py and report/html.py render what is built here, and decide nothing of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from syslogbench.model.knobs import KnobsResult
from syslogbench.model.result import Result
from syslogbench.report import burst, capacity, capacity_answer, compare_answer, compare_pairs, knobs, stats
from syslogbench.report import compare as comparisons
from syslogbench.report.blocks import (
    Block,
    Contents,
    Details,
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
    RATIO_HEADER,
    SENDER_BOUND_MARK,
    STATS_HEADER,
    describe_scenario,
    overview,
    rate_and_udp_lines,
    ratio_rows,
    runs_header,
    runs_rows,
    sender_bound_notes,
    stats_row,
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
    load_knobs,
    machine_label,
    seed_sections,
    tuning_of,
    version_matrix,
)
from syslogbench.report.machines import (
    MACHINES_ANCHOR,
    all_machine_numbers,
    fingerprint_blocks,
    fingerprint_line,
    machines_line,
    machines_section,
)
from syslogbench.report.published_sections import (
    PE7_ANCHOR,
    SEED_ANCHOR,
    published_blocks,
    published_section,
    seed_blocks,
    seed_section,
)

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
LATEST_NOTE = "Every verdict; a figure that was not measured is shown as n/a."


# -- one scenario ----------------------------------------------------------------------------------


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


def latest_blocks(runs: Sequence[Result]) -> list[Block]:
    return [
        Heading("Latest run per profile", 3),
        Note(LATEST_NOTE),
        Table(runs_header(), runs_rows(latest_per_profile(runs, runs[0].label))),
    ]


def scenario_anchor(scenario: str) -> str:
    """An id without spaces or other marks a URL would escape: `seed2014 on machine 1` ->
    `scenario-seed2014-on-machine-1`."""
    return "scenario-" + "-".join("".join(c if c.isalnum() or c in "_.@-" else " " for c in scenario).split())


def udp_blocks(runs: Sequence[Result]) -> list[Block]:
    """A UDP scenario's drop rates, per profile's latest run: its throughput alone hides the loss."""
    lines = [
        f"`{run.daemon.profile}`: {line}"
        for run in latest_per_profile(runs, runs[0].label)
        for line in rate_and_udp_lines(run)
        if line.startswith("UDP")
    ]
    return [Heading("UDP drops", 3), Notes(lines)] if lines else []


def scenario_section(scenario: str, groups: Sequence[Group], figures: Figures) -> Section:
    runs = [run for group in groups for run in group.runs]
    blocks: list[Block] = [
        Heading(f"Scenario `{scenario}`", 2),
        Paragraph(describe_scenario(runs)),
        Paragraph(machines_line(runs)),
        *statistics_blocks(groups),
        *ratio_blocks(groups),
        *plot_blocks(figures.get(scenario_anchor(scenario), [])),
        *udp_blocks(runs),
        *fingerprint_blocks(groups),
        Details("Latest run per profile: every figure", latest_blocks(runs)),
        *published_blocks(runs),
    ]
    return Section(blocks, anchor=scenario_anchor(scenario))


def plot_blocks(figures: Sequence[tuple[str, str]]) -> list[Block]:
    """A scenario's plots, folded: each tuning and machine has a section, and the page stays short enough to
    read (its tables carry the figures; the plots show their spread)."""
    if not figures:
        return []
    return [Details(f"Plots ({len(figures)})", [Figure(caption, path) for caption, path in figures])]


# -- the scenarios with one run per profile, folded into one table ---------------------------------

SINGLES_ANCHOR = "single-runs"
SINGLES_TITLE = "Scenarios with one run per profile"
SINGLES_NOTE = (
    "One run per profile: no median, no interval, so no section of their own. Load: hosts x senders x "
    "messages per sender, and the transport. msgs/s is the burst's drain rate; a UDP run's drop rate is its "
    "own (lost / sent). Their plots are folded below the table."
)
SINGLES_HEADER = ["scenario", "load", "profile", "tuning", "verdict", "msgs/s", "elapsed s",
                  "CPU s (user + system)", "peak mem MiB", "lost", "UDP drop rate", "run id"]  # fmt: skip


def single_run(groups: Sequence[Group]) -> bool:
    return all(len(group.runs) <= 1 for group in groups)


def load_text(run: Result) -> str:
    s = run.scenario
    return f"{s.hosts}x{s.senders_per_host}x{s.messages_per_sender:,} {s.transport or '?'}"


def single_row(scenario: str, run: Result) -> list[str]:
    cpu = None if run.cpu.user_s is None or run.cpu.system_s is None else run.cpu.user_s + run.cpu.system_s
    udp = run.udp
    drop = "-" if udp is None else ("?" if udp.drop_rate is None else f"{udp.drop_rate:.3%}")
    return [
        f"`{scenario}`",
        load_text(run),
        run.daemon.profile,
        tuning_of(run),
        run.verdict,
        "n/a" if run.throughput.msgs_per_s is None else f"{run.throughput.msgs_per_s:,.0f}",
        "n/a" if run.elapsed_s is None else f"{run.elapsed_s:.2f}",
        "n/a" if cpu is None else f"{cpu:.2f}",
        "n/a" if run.memory.peak_bytes is None else f"{run.memory.peak_bytes / 2**20:.1f}",
        f"{run.messages.lost:,}",
        drop,
        f"`{run.run_id}`",
    ]


def singles_section(singles: Mapping[str, Sequence[Group]], figures: Figures) -> Section | None:
    if not singles:
        return None
    rows = [
        single_row(name, run) for name, groups in singles.items() for group in groups for run in group.runs
    ]
    plots = [Figure(c, p) for name in singles for c, p in figures.get(scenario_anchor(name), [])]
    # The table folded: one run each, no repeats, and a row per run (3,740 px of the page at 1,400 px wide on
    # 2026-12-06, whose height is a goal: tests/browser).
    table = Details(f"The {len(rows)} single runs", [Table(SINGLES_HEADER, rows)])
    blocks: list[Block] = [Heading(SINGLES_TITLE, 2), Note(SINGLES_NOTE), table]
    if plots:
        blocks.append(Details(f"Plots of these {len(singles)} scenarios ({len(plots)})", plots))
    return Section(blocks, anchor=SINGLES_ANCHOR)


# -- the version matrix ----------------------------------------------------------------------------

OTHER_SEEDS_NOTE = "The seed scenario on other machines: {}."


def versions_section(
    grouped: Mapping[str, Sequence[Group]], numbers: Mapping[str, int], figures: Figures
) -> Section | None:
    """The first screen's burst: an answer per tuning, the machine they hold on, the chart; then the version
    matrix's table."""
    matrix = version_matrix(grouped)
    if not matrix:
        return None
    runs = [run for _, groups in matrix for group in groups for run in group.runs]
    number = numbers[machine_label(runs[0].host)]
    total = max(runs, key=finished_at).scenario.messages_total
    blocks: list[Block] = [
        Heading(burst.BURST_TITLE.format(total=total), 2),
        Note(burst.BURST_NOTE.format(total=total, scenario=matrix[0][0])),
        *burst.answer_blocks(matrix, f"[machine {number}](#{MACHINES_ANCHOR})"),
        Paragraph(burst.machine_paragraph(runs, number)),
        *(Figure(caption, path) for caption, path in figures.get(VERSIONS_ANCHOR, [])),
        Heading(burst.VERSIONS_TITLE, 2),
        Note(burst.VERSIONS_NOTE),
        Table(burst.VERSIONS_HEADER, burst.versions_rows(matrix, f"machine {number}")),
    ]
    shown = {name for name, _ in matrix}
    others = [
        f"`{other}` ([one run per profile](#{SINGLES_ANCHOR}))"
        if single_run(other_groups)
        else f"[`{other}`](#{scenario_anchor(other)})"
        for other, other_groups in seed_sections(grouped).items()
        if other not in shown
    ]
    if others:
        blocks.append(Note(OTHER_SEEDS_NOTE.format(", ".join(others))))
    return Section(blocks, anchor=VERSIONS_ANCHOR)


# -- the whole report ------------------------------------------------------------------------------

OVERVIEW_ANCHOR = "scenarios"


def overview_section(grouped: dict[str, list[Group]]) -> Section:
    header, rows, notes = overview(grouped)
    return Section(
        [
            Heading("Scenarios at a glance", 2),
            Note(OVERVIEW_NOTE),
            Table(header, rows),
            *(Note(note) for note in notes),
            Note(STATS_NOTE),
        ],
        anchor=OVERVIEW_ANCHOR,
    )


def navigation(sections: Sequence[Section], scenarios: Sequence[str]) -> Section:
    """The bar at the top: a link to each main section present, and the scenarios' sections folded."""
    names = {
        capacity.SUMMARY_ANCHOR: "Capacity summary",
        knobs.ANCHOR: "Knobs",
        comparisons.ANCHOR: "Comparisons",
        VERSIONS_ANCHOR: "Burst and version matrix",
        MACHINES_ANCHOR: "Machines",
        OVERVIEW_ANCHOR: "Scenarios at a glance",
        SINGLES_ANCHOR: "Single runs",
        capacity.ANCHOR: "Capacity trials",
        PE7_ANCHOR: "PE 7",
        SEED_ANCHOR: "2014 figures",
    }
    present = [part.anchor for part in sections if part.anchor in names]
    entries = [(names[anchor], anchor) for anchor in present]
    folded = [(name, scenario_anchor(name)) for name in scenarios]
    return Section([Contents("Contents", entries, f"Scenarios ({len(folded)})" if folded else "", folded)])


def nothing_section(results_dir: Path, scenario_id: str | None) -> Section:
    where = f"of scenario `{scenario_id}` " if scenario_id else ""
    return Section([Paragraph(f"No runs {where}in `{results_dir}`.")])


def document(
    results: Sequence[Result],
    results_dir: Path,
    scenario_id: str | None = DEFAULT_SCENARIO,
    figures: Figures | None = None,
    capacity_results: tuple[list[dict], list[str]] | None = None,
    knob_results: tuple[list[KnobsResult], list[str]] | None = None,
) -> Document:
    """The report of one scenario (every scenario for None), with these plots shown per scenario: the
    capacity answer first (the comparisons' ratios from results/compare/, then each transport's searches from
    results/capacity/, or capacity_results as capacity.load read them), then the
    burst's, the capacity summary and the knob studies (results/knobs/, or knob_results as load.load_knobs
    read them), then the details."""
    figures = figures or {}
    grouped = group_results(results, scenario_id)
    title = "syslogbench results" + (f": scenario `{scenario_id}`" if scenario_id else "")
    searches, skipped = capacity_results or capacity.load(results_dir)
    studies, unread = knob_results or load_knobs(results_dir)
    chosen = [run for groups in grouped.values() for group in groups for run in group.runs]
    compared, unread_compared = comparisons.load(results_dir)
    ended = [(comparisons.machine_of(one), one.finished_utc) for one in compared]
    numbers = all_machine_numbers(chosen, searches, studies, ended)
    multi = {name: groups for name, groups in grouped.items() if not single_run(groups)}
    singles = {name: groups for name, groups in grouped.items() if single_run(groups)}
    versions = versions_section(grouped, numbers, figures) if grouped else None
    anchors = [scenario_anchor(name) for name in multi] + ([VERSIONS_ANCHOR] if versions else [])
    # Side by side first: a paired ratio repeats on its machine where an absolute NDR does not (docs/compare.md).
    lead = compare_answer.blocks(compared, numbers)
    lead += capacity_answer.lead_blocks(searches, numbers, anchors, compare_answer.ranked_versions(compared))
    lead += compare_pairs.blocks(compared, numbers)
    sections: list[Section | None] = [Section(lead, anchor="capacity-answer") if lead else None, versions]
    sections += [capacity.summary_section(searches, numbers), knobs.section(studies, unread, numbers)]
    sections += [comparisons.section(compared, unread_compared, numbers)]
    if grouped or searches or studies or compared:
        sections += [machines_section(chosen, numbers, searches, studies, ended)]
    if grouped:
        sections += [
            overview_section(grouped),
            *(scenario_section(name, groups, figures) for name, groups in multi.items()),
            singles_section(singles, figures),
        ]
    else:
        sections += [nothing_section(results_dir, scenario_id)]
    plotted = figures.get(capacity.ANCHOR, []), figures.get(capacity.FOLDED_FIGURES, [])
    sections += [capacity.section(searches, skipped, numbers, *plotted)]
    sections += [published_section(), seed_section()]
    present = [part for part in sections if part is not None]
    return Document(title, [navigation(present, list(multi)), *present])


def run_blocks(result: Result) -> list[Block]:
    """One run's row, its rate and UDP figures, its machine, and the 2014 medians beside it."""
    extra = rate_and_udp_lines(result)
    blocks: list[Block] = [Table(runs_header(), runs_rows([result]))]
    if extra:
        blocks.append(Paragraph("\n".join(extra)))
    return [*blocks, Paragraph(machines_line([result])), Paragraph(fingerprint_line(result)), *seed_blocks()]
