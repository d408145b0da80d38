"""The comparisons, after the knob tables: each `python -m syslogbench compare` (results/compare/<id>.json),
newest first, one row per side over the first: its drain-rate and CPU-per-message ratios (or, with
--capacity, its NDR and PDR ratios) with their 95% intervals, paired by round, and the verdicts, beside the
A/A control's floor and spread; where the sides differ in tuning, a table of every two sides that differ in one
thing alone (model/compare_pairs.py). No comparison, no section."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from syslogbench.model import compare as model
from syslogbench.model import compare_pairs
from syslogbench.report import capacity_rows
from syslogbench.report.blocks import Block, Details, Heading, Note, Notes, Paragraph, Section, Table

log = logging.getLogger(__name__)
ANCHOR = "compare"
TITLE = "Comparisons: sides interleaved in one run, paired into ratios"
NOTE = (
    "`python -m syslogbench compare` runs two or more sides (a profile at a tuning, or a user's config) over one "
    "scenario's burst in rounds: every round each side once and the first side twice, its second run the A/A "
    "control, in a fresh random order, so that all sides meet the machine within a minute of each other. Each "
    "side's drain rate (and the daemon's CPU per message) is divided by the first side's of the same round; "
    "the ratio is the geometric mean of those, with a 95% t-interval. *differs*: at least the floor away "
    "from 1 (the larger of 5% and the control's distance from 1) with an interval that excludes 1; *erratic*: "
    "the control's ratios of that figure spread by more than 10%, and nothing is judged of it; each figure, "
    "drain rate and CPU per message, is judged by its own control. With `--capacity` each side runs a "
    "capacity search a round instead, every round's searches at once on stacks of their own, one trial at a "
    "time in a random order, and the NDRs and PDRs are paired the same way (since 2026-12-07 also each "
    "daemon's CPU per message in one trial at half the slowest side's burst rate); a search whose RATE_MAX held "
    '("at least") is never paired, and its sides are profiles at a tuning only. With `--duet RATE` every '
    "side's daemon runs at the same time on the same core(s), each under its own senders at RATE, and each "
    "window's CPU per message and p99 latency are paired by window: a ratio over 1 there is the side using "
    "more CPU, or taking longer, than the first (docs/compare.md)."
)


def shown(found: model.CompareResult) -> tuple[str, ...]:
    """The figures the comparison's tables show: its measure's (model.fields), a capacity comparison's CPU
    per message only where it had a fixed rate (none before 2026-12-07: every such ratio is "no ratio")."""
    names = model.fields(found.measure)
    if found.rate_msgs_per_s is None:
        names = tuple(name for name in names if name not in model.AT_RATE.get(found.measure, ()))
    return names


def header(found: model.CompareResult) -> tuple[str, ...]:
    """Each figure's ratio and verdict: a capacity comparison's CPU per message at its fixed rate after the
    NDR and PDR."""
    labels = [model.LABELS[name] for name in shown(found)]
    figures = [cell for label in labels for cell in (f"{label} ratio [95%]", f"{label} verdict")]
    return ("side", "profile", "tuning", *figures, "pairs")


def figure_cells(found: model.CompareResult, ratios: Mapping[str, model.Ratio]) -> list[str]:
    """Each figure's ratio and verdict, in header()'s order, then the pairs of the first figure."""
    names = shown(found)
    cells = [cell for name in names for cell in (ratios[name].text(), ratios[name].verdict)]
    return [*cells, str(ratios[names[0]].pairs)]


def load(results_dir: Path) -> tuple[list[model.CompareResult], list[str]]:
    """Every comparison under results_dir/compare, by file name, read strictly; what could not be read."""
    found, skipped = [], []
    for path in sorted((results_dir / "compare").glob("*.json")):
        try:
            found.append(model.read(path))
        except model.CompareResultError as error:
            log.warning("report: skipping %s: not a comparison (%s)", path, error)
            skipped.append(f"{path.name}: {error}")
    return found, skipped


def rows(found: model.CompareResult) -> list[list[str]]:
    sides = {side.name: side for side in found.sides}
    first = found.sides[0]
    out = []
    for name, ratios in found.ratios.items():
        side = sides.get(name, first)  # the control is the first side's second run
        out.append([f"`{name}`", side.profile, side.tuning, *figure_cells(found, ratios)])
    return out


def mixed(found: model.CompareResult) -> bool:
    """The sides differ in tuning: pairs beyond the comparison's own table exist."""
    return len({side.tuning for side in found.sides if side.config is None}) > 1


def pairs_table(found: model.CompareResult) -> Table | None:
    """Every like-with-like pair with each measured figure's ratio and verdict; None where the sides share a
    tuning (the comparison's own table holds every pair then)."""
    if not mixed(found):
        return None
    rows = []
    for pair in compare_pairs.pairs(found):
        rows.append([f"`{pair.side}`", f"`{pair.base}`", pair.differs_in, *figure_cells(found, pair.ratios)])
    return Table(("side", "over", "differs in", *header(found)[3:]), rows, css_class="stack")


def machine_of(found: model.CompareResult) -> str:
    """The comparison's machine as the Machines table names it (report/capacity_rows.py)."""
    return capacity_rows.machine_of({"machine": found.machine})


def cited(found: model.CompareResult, numbers: Mapping[str, int]) -> str:
    machine = machine_of(found)
    number = numbers.get(machine)
    where = f"[machine {number}](#machines)" if number else "a machine"
    cut = "" if found.outcome == "done" else f" ({found.outcome}: the rounds made until then)"
    what = found.measure_text()
    controls = " ".join(f"{model.LABELS[name]}: {found.control_text(name)}." for name in shown(found))
    return (
        f"Comparison `{found.id}` ({what}), scenario `{found.scenario}`, {found.rounds} rounds{cut}, over "
        f"`{found.sides[0].name}`, on {where} ({machine.split(', kernel')[0]}), {found.started_utc} to "
        f"{found.finished_utc}. {controls}"
    )


def section(
    found: Sequence[model.CompareResult], skipped: Sequence[str], numbers: Mapping[str, int]
) -> Section | None:
    if not found and not skipped:
        return None
    # How a comparison is judged, folded: the page's height is a goal (tests/browser), the tables are the answer.
    blocks: list[Block] = [Heading(TITLE, 2), Details("How the sides are run and judged", [Note(NOTE)])]
    for index, one in enumerate(sorted(found, key=lambda c: (c.finished_utc, c.id), reverse=True)):
        shown: list[Block] = [
            Paragraph(cited(one, numbers)),
            Table(header(one), rows(one), css_class="stack"),
        ]
        if (pairs := pairs_table(one)) is not None:  # sides at two tunings: like with like, too
            shown += [Paragraph("Like with like: every two sides that differ in the tuning or the profile alone."),
                      pairs]  # fmt: skip
        # The newest open, the earlier ones folded: the page stays short as comparisons add up. A capacity
        # comparison is folded too: the first screen has it (report/compare_answer.py).
        opened = index == 0 and one.measure != "capacity"
        blocks += shown if opened else [Details(f"Comparison `{one.id}` ({len(one.sides)} sides)", shown)]
    if skipped:
        blocks.append(Notes([f"not read: {line}" for line in skipped]))
    return Section(blocks, anchor=ANCHOR)
