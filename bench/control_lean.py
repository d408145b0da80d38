"""Does a capacity comparison's A/A control lean below its first side? Reads committed results only.

Two tallies over every committed capacity comparison (results/compare/*-capacity.json):

- per round where both the first side's search and its control's confirmed an NDR: the control's NDR over
  the first's, equal, below or above, with a two-sided sign test over the rounds that differ;
- per rate both searches of one round tried: the median p99 latency of their trials there (warm-ups left
  out), the control's higher or lower;
- per round, every two copies of one config that both confirmed (the first side and its control, or every
  side of a one-config comparison): whether the one at the lower place held more, with a sign test;
- in a comparison whose sides all run one config (`--side X --side X@default`: the control and more copies),
  each round's copies in the order drawn for it (its first turns; the searches' threads start in that order,
  within milliseconds, and their stacks come up at once), each with its place (its folder and compose
  project, drawn each round since the place was recorded; before, the first side always had 1) and its NDR
  over the first side's: whether the lean goes with the first side's name or with its place.

    PYTHONPATH=. python bench/control_lean.py [RESULTS_DIR]

Figures: docs/findings/compare-capacity.md ("Is the control below the first side?").
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections import Counter
from pathlib import Path

from syslogbench.model import compare


def sign_test(below: int, above: int) -> float:
    """Two-sided p of a split at least this uneven between two equally likely sides."""
    n, k = below + above, min(below, above)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def p99_by_rate(search: Path) -> dict[int, float]:
    """A search's trials (no warm-up) by offered rate: the median of their p99 latencies (ms)."""
    found: dict[int, list[float]] = {}
    for trial in json.loads(search.read_text())["trials"]:
        if trial["purpose"] != "warmup" and trial.get("latency_ms"):
            found.setdefault(round(trial["offered_msgs_per_s"]), []).append(trial["latency_ms"]["p99"])
    return {rate: statistics.median(values) for rate, values in found.items()}


def search_of(folder: Path, number: int, place: int) -> Path | None:
    found = sorted(folder.glob(f"searches/round-{number}/{place}/capacity/*.json"))
    return found[-1] if found else None


def places(found: compare.CompareResult, number: int) -> dict[str, int]:
    """Each search's place (its folder) in round `number`: as the result records it, drawn each round; in
    comparisons before the draw, the sides in order, then the A/A control."""
    fixed = {name: n for n, name in enumerate(compare.run_names([side.name for side in found.sides]), 1)}
    drawn = {run.side: run.place for run in found.runs if run.round == number and run.place is not None}
    return drawn or fixed


def lean(found: compare.CompareResult, folder: Path, ndr: Counter, p99: Counter) -> list[float]:
    """Into ndr and p99: this comparison's tallies; its rounds' control-over-first NDR ratios."""
    first = found.sides[0].name
    control = compare.control_name(first)
    ratios = compare.paired(found.runs, control, first, "ndr_msgs_per_s")  # the rounds both confirmed
    for ratio in ratios:
        ndr["equal" if ratio == 1 else "below" if ratio < 1 else "above"] += 1
    for number in range(1, found.rounds + 1):
        where = places(found, number)
        one, two = (search_of(folder, number, where[name]) for name in (first, control))
        if one and two:
            mine, theirs = p99_by_rate(one), p99_by_rate(two)
            for rate in set(mine) & set(theirs):
                p99["control higher" if theirs[rate] > mine[rate] else
                    "control lower" if theirs[rate] < mine[rate] else "equal"] += 1  # fmt: skip
    return [round(ratio, 3) for ratio in ratios]


def confirmed(found: compare.CompareResult) -> dict[tuple[str, int], float | None]:
    """Each search that confirmed an NDR, by side and round: its NDR."""
    return {(run.side, run.round): run.ndr_msgs_per_s for run in found.runs if run.verdict == compare.PASS}


def copies(found: compare.CompareResult) -> list[str]:
    """A one-config comparison's rounds: each copy in the order drawn for the round (its first turns), with
    its NDR over the first side's; [] for any other comparison."""
    if not compare.one_config(found.sides):
        return []
    first = found.sides[0].name
    ndr = confirmed(found)
    out = []
    for number, turns in enumerate(found.turns, 1):
        base = ndr.get((first, number))
        where = places(found, number)
        said = [f"{name} #{where[name]}={ndr[(name, number)] / base:.3f}" if base and (name, number) in ndr
                else f"{name} #{where[name]}=-" for name in dict.fromkeys(turns)]  # fmt: skip
        out.append(
            f"round {number}, in its drawn order (name #place=NDR over the first side's): {', '.join(said)}"
        )
    return out


def by_place(found: compare.CompareResult, tally: Counter) -> None:
    """Into tally: per round, every two copies of one config that both confirmed an NDR (the first side and
    its control; in a one-config comparison every side), the NDR of the one at the lower place against the
    other's. Where places were drawn this parts the place from the name; before, place 1 was the first side's."""
    first = found.sides[0].name
    kin = [first, compare.control_name(first)]
    if compare.one_config(found.sides):
        kin = compare.run_names([side.name for side in found.sides])
    ndr = confirmed(found)
    for number in range(1, found.rounds + 1):
        where = places(found, number)
        held = sorted((where[name], ndr[(name, number)]) for name in kin if (name, number) in ndr)
        for i, (_, low) in enumerate(held):
            for _, high in held[i + 1 :]:
                tally[
                    "equal" if low == high else "lower place above" if low > high else "lower place below"
                ] += 1


def drawn(found: compare.CompareResult) -> bool:
    """The result records each search's place (drawn each round); before that, the first side had place 1."""
    return any(run.place is not None for run in found.runs)


def summary(label: str, ndr: Counter, place: Counter, p99: Counter) -> None:
    print(f"{label}:")
    print(
        f"  NDR, control over first: {dict(ndr)}; sign test p = {sign_test(ndr['below'], ndr['above']):.3f}"
    )
    print(f"  NDR of two copies by place: {dict(place)}; sign test p = "
          f"{sign_test(place['lower place above'], place['lower place below']):.3f}")  # fmt: skip
    print(f"  p99 at rates both tried: {dict(p99)}; sign test p = "
          f"{sign_test(p99['control higher'], p99['control lower']):.3f}")  # fmt: skip


def main(results: Path) -> None:
    eras = {era: (Counter(), Counter(), Counter()) for era in ("places fixed", "places drawn")}
    for path in sorted((results / "compare").glob("*-capacity.json")):
        found, folder = compare.read(path), path.with_suffix("")
        ndr, place, p99 = eras["places drawn" if drawn(found) else "places fixed"]
        print(f"{path.stem}: {lean(found, folder, ndr, p99)}")
        by_place(found, place)
        for line in copies(found):
            print(f"  {line}")
    for era, tallies in eras.items():
        summary(era, *tallies)
    summary("all", *(sum(parts, Counter()) for parts in zip(*eras.values(), strict=True)))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("results"))
