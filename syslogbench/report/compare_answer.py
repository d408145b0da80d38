"""The first screen's side-by-side answer, from the capacity comparisons (`compare --capacity`,
results/compare/): per scenario and set of sides, on each machine its newest comparison, the sides ranked by
their NDR over the first side's, paired by round, with the 95% interval, a bar relative to the top (as
ClickBench draws its), the verdict, and each side's absolute NDR on that machine. Sides whose intervals
overlap are said to be not told apart. A ratio is the answer that repeats across machines where absolute
rates do not (docs/compare.md); the absolute NDR says what the machine gave. Only comparisons whose sides share
one tuning are ranked here: a tuned daemon is never ranked against a default one (a comparison of tunings is in
the comparisons section, as what the tuning buys).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations

from syslogbench.model import capacity
from syslogbench.model import compare as model
from syslogbench.report.blocks import Block, Details, Heading, Note, Paragraph, Table
from syslogbench.report.compare import machine_of
from syslogbench.report.load import tuning_words

FIELD = "ndr_msgs_per_s"
BAR = 20  # characters of the longest bar
TITLE = "Which holds more, searched side by side"
HEADER = ("rank", "side", "NDR over the first [95%]", "relative", "verdict", "NDR msg/s (rounds)", "machine")
NOTE = (
    "Each comparison searched every side's capacity in the same rounds, the searches taking turns trial by "
    "trial, so a drift of the machine met every side (docs/compare.md). *NDR over the first*: the geometric "
    "mean of the rounds' ratios to the first side, with its 95% interval, never narrower than the searches' "
    "own width. *not told apart*: the interval holds 1 or sits within the floor (the larger of 5% and the "
    "A/A control's distance from 1); *erratic*: the A/A control spread over 10%, nothing judged. *NDR msg/s*: "
    "the median of the side's rounds on that machine, and their range; the whole comparison is in the "
    "[comparisons](#compare)."
)


def shared_tuning(found: model.CompareResult) -> str | None:
    """The one tuning every side runs at; None where the sides differ in tuning."""
    tunings = {side.tuning for side in found.sides}
    return tunings.pop() if len(tunings) == 1 else None


def ranks(found: model.CompareResult) -> str | None:
    """The tuning a ranking of this comparison is at: None where the sides differ in tuning, or where every
    side runs one config (`--side X --side X@default`: more A/A controls, a study of the floor that ranks
    nothing; its table is in the comparisons section)."""
    return None if model.one_config(found.sides) else shared_tuning(found)


def newest(
    found: Sequence[model.CompareResult],
    which: Callable[[model.CompareResult], object] = ranks,
) -> list[model.CompareResult]:
    """The newest finished capacity comparison of each scenario, set of sides and machine, newest first; only
    those `which` takes (by default those whose sides share one tuning and are not all one config). One whose
    every side has an interval (two pairs or more) comes before a newer one that paired less: a comparison of
    one pair has no interval to rank by (ce05, at TRIAL_SUM=12, paired one round where 47c2 on the same kind
    of machine paired three)."""
    done = [one for one in found if one.measure == "capacity" and one.outcome == "done" and which(one)]
    kept: dict[tuple, model.CompareResult] = {}
    for one in sorted(done, key=lambda c: (has_intervals(c), c.finished_utc, c.id)):
        kept[(*question(one), machine_of(one))] = one
    return sorted(kept.values(), key=lambda c: (c.finished_utc, c.id), reverse=True)


def ranked_versions(found: Sequence[model.CompareResult]) -> dict[tuple[str, str], set[str]]:
    """Per scenario and tuning, the profiles some comparison ranks side by side here: the first screen then
    ranks none of them by searches made one at a time (report/capacity_answer.py)."""
    ranked: dict[tuple[str, str], set[str]] = {}
    for one in newest(found):
        tuning = shared_tuning(one) or ""
        ranked.setdefault((one.scenario, tuning), set()).update(
            side.profile for side in one.sides if side.config is None
        )
    return ranked


def question(found: model.CompareResult) -> tuple[str, tuple[str, ...]]:
    """What a comparison asks, whatever the machine: its scenario and its sides, in order."""
    return found.scenario, tuple(side.name for side in found.sides)


def lone(ratio: model.Ratio) -> bool:
    """A ratio that one round's pair gave: a value with no interval."""
    return ratio.value is not None and ratio.low is None


def has_intervals(found: model.CompareResult) -> bool:
    """Every side's NDR ratio over the first has a 95% interval (the A/A control's aside)."""
    ratios = [found.ratios.get(side.name, {}).get(FIELD) for side in found.sides[1:]]
    return all(ratio is not None and ratio.low is not None for ratio in ratios)


def ranked(found: model.CompareResult) -> list[tuple[str, model.Ratio | None]]:
    """The sides, highest NDR ratio first, the first side (None: it is the 1) among them and ahead of a tie;
    a side with no ratio last. The A/A control is left out: it is the floor the verdicts stand on."""
    first = [(found.sides[0].name, None)]
    others = [(side.name, found.ratios.get(side.name, {}).get(FIELD)) for side in found.sides[1:]]
    return sorted([*first, *others], key=lambda pair: -(value(pair[1]) or 0.0))


def value(ratio: model.Ratio | None) -> float | None:
    return 1.0 if ratio is None else ratio.value


def bar(ratio: float | None, top: float) -> str:
    if ratio is None or top <= 0:
        return "-"
    return "█" * max(1, round(BAR * ratio / top))


def ratio_cell(ratio: model.Ratio | None) -> str:
    """The ratio and its interval; "(n=1)" where one pair gave it, so no interval can (the first screen ranks
    pairs alone: unpaired rounds' bounds are in the comparisons section)."""
    if ratio is None:
        return "1 (the first)"
    return ratio.text(pairs=lone(ratio), bounds=False)


def absolute(found: model.CompareResult, side: str) -> str:
    """The side's NDRs over the rounds it found one in: their median, and their range."""
    rates = [run.ndr_msgs_per_s for run in found.runs if run.side == side and run.verdict == "pass"]
    rates = [rate for rate in rates if rate is not None]
    if not rates:
        return "-"
    middle = capacity.rate_text(statistics.median(rates))
    if len(rates) == 1:
        return f"{middle} (1)"
    if min(rates) == max(rates):  # searches often land on the same grid rate every round
        return f"{middle} (each of {len(rates)})"
    return f"{middle} ({capacity.rate_text(min(rates))}–{capacity.rate_text(max(rates))}, {len(rates)})"


def rows(found: model.CompareResult, numbers: Mapping[str, int]) -> list[list[str]]:
    order = ranked(found)
    top = max((v for _, ratio in order if (v := value(ratio)) is not None), default=0.0)
    where = numbers.get(machine_of(found))
    machine = f"[{where}](#machines)" if where else machine_of(found).split(", kernel")[0]
    return [
        [
            str(rank),
            f"`{name}`",
            ratio_cell(ratio),
            bar(value(ratio), top),
            "the first" if ratio is None else ratio.verdict,
            absolute(found, name),
            machine,
        ]
        for rank, (name, ratio) in enumerate(order, start=1)
    ]


def overlapping(found: model.CompareResult) -> list[str]:
    """Pairs of sides other than the first whose intervals share a ratio: their order is not settled."""
    intervals = {
        name: (ratio.low, ratio.high)
        for name, ratio in ranked(found)
        if ratio is not None and ratio.low is not None and ratio.high is not None
    }
    return [
        f"`{a}` and `{b}`"
        for a, b in combinations(intervals, 2)
        if intervals[a][0] <= intervals[b][1] and intervals[b][0] <= intervals[a][1]
    ]


def order_text(found: model.CompareResult) -> str:
    """Three sides or more (`matrix --capacity`): every side in rank order with its NDR over the first and
    its interval, so the first screen ranks them all, not the best alone; "" for two."""
    if len(found.sides) < 3:
        return ""
    said = [f"`{name}` {'1' if ratio is None else ratio.text(bounds=False)}" for name, ratio in ranked(found)]
    return f" In order, NDR over `{found.sides[0].name}`: " + "; ".join(said) + "."


def lead_text(found: model.CompareResult, numbers: Mapping[str, int]) -> str:
    """One comparison's answer: the side that holds the most, and by how much over the first; with three
    sides or more, all of them in order."""
    return best_text(found, numbers) + order_text(found)


def best_text(found: model.CompareResult, numbers: Mapping[str, int]) -> str:
    """The side that holds the most, and by how much over the first."""
    (best, ratio), first = ranked(found)[0], found.sides[0].name
    machine = machine_link(found, numbers)
    where_said = machine_of(found).split(", kernel")[0]
    tuning = tuning_words(shared_tuning(found) or "")
    head = f"**`{found.scenario}`**, {tuning}, {found.rounds} rounds, on {machine} ({where_said}): "
    if ratio is None:
        second = ranked(found)[1][1] if len(found.sides) > 1 else None
        if second is None or second.verdict != "differs":
            return head + f"no side told apart from `{first}` ({ratio_cell(second)}, {verdict_of(second)})."
        return head + f"**`{first}`** holds the most: the next holds {ratio_cell(second)} of its NDR."
    if ratio.verdict != "differs":
        alone = " (one round paired: no interval)" if lone(ratio) else ""
        return head + f"`{best}` holds {ratio.text(bounds=False)} of `{first}`'s NDR{alone}: {ratio.verdict}."
    within = "" if ratio.low is None else f" (95% interval {ratio.low:.3f} to {ratio.high:.3f})"
    return head + f"**`{best}`** holds **{ratio.value:.3f}×** `{first}`'s NDR{within}: differs."


def verdict_of(ratio: model.Ratio | None) -> str:
    return "-" if ratio is None else ratio.verdict


def machine_link(found: model.CompareResult, numbers: Mapping[str, int]) -> str:
    where = numbers.get(machine_of(found))
    return f"[machine {where}](#machines)" if where else "a machine"


def across_text(group: Sequence[model.CompareResult], numbers: Mapping[str, int]) -> str:
    """Two sides compared on several machines, each machine's newest comparison: one sentence with each
    machine's ratio, and how far the machines put it apart (a ratio repeats on its machine, not across them:
    docs/findings/compare-capacity.md)."""
    found = group[0]
    first, other = (side.name for side in found.sides[:2])
    rounds = {one.rounds for one in group}
    each = f", {rounds.pop()} rounds each" if len(rounds) == 1 else ""
    head = f"**`{found.scenario}`**, {tuning_words(shared_tuning(found) or '')}{each}, on {len(group)} machines: "
    said: list[str] = []
    by_model: dict[str, list[float]] = {}
    for one in group:
        ratio = one.ratios.get(other, {}).get(FIELD)
        cpu = machine_of(one).split(",")[0]
        own = "" if each else f", {one.rounds} rounds"
        text = f"{ratio_cell(ratio)} on {machine_link(one, numbers)} ({cpu}{own}), {verdict_of(ratio)}"
        said.append(f"**{text}**" if ratio is not None and ratio.verdict == "differs" else text)
        if ratio is not None and ratio.value is not None:
            by_model.setdefault(cpu, []).append(ratio.value)
    return head + f"`{other}` holds, of `{first}`'s NDR, " + "; ".join(said) + span_text(by_model) + "."


def span_text(by_model: Mapping[str, Sequence[float]]) -> str:
    """How far the machines put a ratio apart, and each CPU model's machines where a model has several (every
    Intel ratio of the tuned pair lay below every AMD one: docs/findings/compare-capacity.md)."""
    values = [value for some in by_model.values() for value in some]
    if len(values) < 2:
        return ""
    models = ""
    if 1 < len(by_model) < len(values):
        models = " (" + "; ".join(f"{cpu} {spread(some)}" for cpu, some in by_model.items()) + ")"
    return f". The machines put it {spread(values)}{models}: each ratio is its machine's answer"


def spread(values: Sequence[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.3f}" if low == high else f"{low:.3f} to {high:.3f}"


def sentences(chosen: Sequence[model.CompareResult], numbers: Mapping[str, int]) -> list[str]:
    """A sentence per scenario and set of sides: where two sides were compared on several machines, one
    sentence that gives each machine's ratio; else one per comparison."""
    groups: dict[tuple, list[model.CompareResult]] = {}
    for one in chosen:  # newest first, and so within each group
        groups.setdefault(question(one), []).append(one)
    said: list[str] = []
    for group in groups.values():
        if len(group) > 1 and len(group[0].sides) == 2:
            said.append(across_text(group, numbers))
        else:
            said += [lead_text(one, numbers) for one in group]
    return said


def blocks(found: Sequence[model.CompareResult], numbers: Mapping[str, int]) -> list[Block]:
    """The answer's blocks: the sentences, the rankings folded below them (the first screen's height is a
    goal: tests/browser); nothing where no capacity comparison finished."""
    chosen = newest(found)
    if not chosen:
        return []
    out: list[Block] = [Heading(TITLE, 2), *(Paragraph(text) for text in sentences(chosen, numbers))]
    tables: list[Block] = []
    for one in chosen:
        tables.append(Table(HEADER, rows(one, numbers), css_class="stack"))
        if pairs := overlapping(one):
            tables.append(Note(f"Not told apart (their intervals overlap): {'; '.join(pairs)}."))
    return [*out, Details("The sides ranked, with bars and absolute NDRs", [*tables, Note(NOTE)])]
