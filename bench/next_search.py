"""Does the next search fall inside the interval the one before stated? Reads committed results only.

Since NDR_REPEATS, a search states an interval for the next search (`ndr_interval`,
model/capacity/interval.py): the third list below checks it, pair by pair.

A search publishes its NDR and the lowest rate that failed above it (`ndr.upper_msgs_per_s`): the true rate
lies in [NDR, upper) for that search. This script asks how often the next search of the same command, on the
same machine and kernel, lands there, and how often in that bracket widened by its own width on each side
([NDR / w, upper * w), w = upper / NDR). Two kinds of "next":

- standalone searches (results/capacity/): grouped by profile, tuning, scenario, CPU model, kernel, placement,
  UDP buffers, nodes and settings, in the order they started;
- the rounds of a capacity comparison (results/compare/*-capacity.json): each side's next round.

    PYTHONPATH=. python bench/next_search.py [RESULTS_DIR]

Figures: docs/findings/ndr-next-search.md.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from datetime import datetime
from itertools import pairwise
from pathlib import Path

from syslogbench.model import capacity, compare

Bracket = tuple[float, float]  # a search's NDR and the lowest rate that failed above it


def inside(before: Bracket, after: float, widened: bool) -> bool:
    """after in [low, high), or widened by the bracket's own width on each side: one search step, whose grid
    rates are rounded, so a rate on the step's edge is within 0.1% of it."""
    low, high = before
    width = high / low * 1.001 if widened else 1.0
    return low / width <= after < high * width


def minutes(earlier: str, later: str) -> int:
    start, end = (datetime.fromisoformat(stamp.replace("Z", "+00:00")) for stamp in (earlier, later))
    return round((end - start).total_seconds() / 60)


def in_a_row(folder: Path) -> list[tuple[str, capacity.CapacityResult, capacity.CapacityResult]]:
    """(the later search's id and how long after, the earlier search, the later) for each standalone pair in a
    row that published an NDR below a rate that broke."""
    groups: dict[str, list[tuple[str, str, capacity.CapacityResult]]] = defaultdict(list)
    for path in sorted((folder / "capacity").glob("*.json")):
        found = capacity.read(path)
        ndr, upper = found.ndr_msgs_per_s, found.ndr.upper_msgs_per_s
        if found.outcome != "found" or not ndr or not upper:
            continue
        # How long, and (from a burst before each search) how high it looked: not what it measured.
        looked = {"search_max_s"} | (
            {"rate_max"} if found.ceiling and found.ceiling.source == "burst" else set()
        )
        given = {k: v for k, v in found.settings.items() if k not in looked}
        key = json.dumps([found.profile, found.tuning, found.scenario, found.machine.get("cpu_model"),
                          found.machine.get("kernel"), found.cpu_placement, repr(found.udp_buffers),
                          found.nodes, given], sort_keys=True, default=str)  # fmt: skip
        groups[key].append((found.started_utc, found.run_id, found))
    pairs = []
    for searches in groups.values():
        searches.sort(key=lambda search: search[:2])
        pairs += [(f"{b[1]} ({minutes(a[0], b[0])} min later)", a[2], b[2]) for a, b in pairwise(searches)]
    return pairs


def standalone(folder: Path) -> list[tuple[str, Bracket, float]]:
    """(the later search's id, the earlier's bracket, the later's NDR) for each pair in a row."""
    return [(name, (a.ndr_msgs_per_s or 0.0, a.ndr.upper_msgs_per_s or 0.0), b.ndr_msgs_per_s or 0.0)
            for name, a, b in in_a_row(folder)]  # fmt: skip


def stated(folder: Path) -> list[tuple[str, Bracket, float]]:
    """Each pair in a row whose earlier search stated an interval: (id, [low, high], the later's NDR)."""
    pairs = []
    for name, a, b in in_a_row(folder):
        interval = a.ndr_interval
        if interval is not None and interval.low_msgs_per_s and interval.high_msgs_per_s:
            pairs.append((name, (interval.low_msgs_per_s, interval.high_msgs_per_s), b.ndr_msgs_per_s or 0.0))
    return pairs


def rounds(folder: Path) -> list[tuple[str, Bracket, float]]:
    """Each capacity comparison's sides (the A/A control too), round after round."""
    pairs = []
    for path in sorted((folder / "compare").glob("*-capacity.json")):
        found = compare.read(path)
        runs = {(r.side, r.round): r for r in found.runs if r.verdict == "pass"}
        for side, number in sorted(runs):
            before, after = runs[(side, number)], runs.get((side, number + 1))
            if (
                after is not None
                and before.ndr_msgs_per_s
                and before.ndr_upper_msgs_per_s
                and after.ndr_msgs_per_s
            ):
                bracket = (before.ndr_msgs_per_s, before.ndr_upper_msgs_per_s)
                pairs.append((f"{found.id} {side} round {number + 1}", bracket, after.ndr_msgs_per_s))
    return pairs


def judged(before: Bracket, after: float) -> str:
    if inside(before, after, False):
        return "inside"
    return "widened" if inside(before, after, True) else "out"


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "results")
    for kind, pairs in (("standalone searches", standalone(folder)), ("comparison rounds", rounds(folder))):
        print(f"## {kind}: {len(pairs)} pairs")
        said = [judged(before, after) for _, before, after in pairs]
        for (name, before, after), word in zip(pairs, said, strict=True):
            print(f"{name}: [{before[0]:,.0f}, {before[1]:,.0f}) -> {after:,.0f} {word}")
        bare, wide = said.count("inside"), said.count("inside") + said.count("widened")
        print(
            f"inside the bracket: {bare} of {len(pairs)}; inside it widened by its width each side: {wide}\n"
        )
    pairs = stated(folder)
    print(f"## the interval the search before stated (ndr_interval): {len(pairs)} pairs")
    for name, (low, high), after in pairs:
        print(
            f"{name}: [{low:,.0f}, {high:,.0f}] -> {after:,.0f} {'inside' if low <= after <= high else 'out'}"
        )
    print(f"inside: {sum(low <= after <= high for _, (low, high), after in pairs)} of {len(pairs)}")


if __name__ == "__main__":
    main()
