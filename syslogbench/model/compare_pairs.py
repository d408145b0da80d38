"""Like with like inside one comparison: every two sides that differ in the tuning alone (what the tuning buys
one family) or in the profile alone (two families at one tuning), paired round by round as the comparison
pairs each side with its first (model/compare.py: the same pairing, interval and verdict rules, judged
against the comparison's own A/A floor). A comparison of two families at two tunings then says what `tuned`
buys each, and ranks the families at each tuning, where its own table holds ratios over the first side only.
Derived from the runs when read: nothing of it is written to the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from syslogbench.model import compare

TUNING, PROFILE = "tuning", "profile"


@dataclass
class Pair:
    """A side over its base, differing in one thing alone (TUNING or PROFILE), with each measured figure's
    ratio, paired by round."""

    base: str
    side: str
    differs_in: str
    ratios: dict[str, compare.Ratio]


def like_pairs(sides: list[compare.Side]) -> list[tuple[compare.Side, compare.Side, str]]:
    """(base, side, what differs) for every two sides (user configs aside) that differ in the profile alone
    or in the tuning alone: a family's default tuning is the base of its tuned side, and of two families the
    one given first is the base."""
    plain = [side for side in sides if side.config is None]
    found = []
    for a, b in combinations(plain, 2):
        if a.profile == b.profile and a.tuning != b.tuning:
            base, side = (b, a) if a.tuning == "tuned" else (a, b)
            found.append((base, side, TUNING))
        elif a.tuning == b.tuning and a.profile != b.profile:
            found.append((a, b, PROFILE))
    return found


def pairs(found: compare.CompareResult) -> list[Pair]:
    """Every like-with-like pair of the comparison's sides, each figure's ratio paired as judge() pairs a side
    with the first, and judged by the comparison's floor and erratic flag (its first side's A/A control: the
    machine's floor in that run)."""
    out = []
    for base, side, differs_in in like_pairs(found.sides):
        ratios = {
            name: compare.ratio_over(found.runs, side.name, base.name, name,
                                     found.floor.get(name, compare.MIN_EFFECT), found.erratic.get(name, False))
            for name in compare.fields(found.measure)
        }  # fmt: skip
        out.append(Pair(base.name, side.name, differs_in, ratios))
    return out
