"""Every like-with-like pair of a comparison's sides, paired round by round. Reads one result only.

`compare` gives each side's ratio over the first side. A comparison of two families at two tunings also holds,
within each round, what each tuning buys a family (its tuned side over its default one) and each tuning's
ratio of families. This script pairs every two sides that differ in the profile alone or in the tuning alone,
with the model's own pairing (rounds where both passed) and interval (geometric mean, 95% t-interval of
the logs). A pair of one round has no interval. No verdict: the comparison's floor is its first side's.

    PYTHONPATH=. python bench/compare_pairs.py results/compare/<id>.json [ndr_msgs_per_s|pdr_msgs_per_s|...]

Figures: docs/findings/tuning-udp-tls.md.
"""

from __future__ import annotations

import sys
from itertools import combinations
from pathlib import Path

from syslogbench.model import compare


def like_with_like(sides: list[compare.Side]) -> list[tuple[compare.Side, compare.Side]]:
    """(base, side) for every two sides that differ in the profile alone or in the tuning alone, own configs
    aside; the default tuning, or the first side given, is the base."""
    plain = [s for s in sides if s.config is None]
    pairs = []
    for a, b in combinations(plain, 2):
        if (a.profile == b.profile) != (a.tuning == b.tuning):
            pairs.append((b, a) if a.profile == b.profile and a.tuning == "tuned" else (a, b))
    return pairs


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[-3].strip())
        return 2
    found = compare.read(Path(argv[0]))
    figure = argv[1] if len(argv) > 1 else "ndr_msgs_per_s"
    print(f"{found.id}, {figure}: side over base, per round, and the geometric mean [95%]")
    for base, side in like_with_like(found.sides):
        ratios = compare.paired(found.runs, side.name, base.name, figure)
        value, low, high = compare.interval(ratios)
        per_round = ", ".join(f"{r:.3f}" for r in ratios) or "no round where both passed"
        mean = "-" if value is None else f"{value:.3f}" + ("" if low is None else f" [{low:.2f}, {high:.2f}]")
        print(f"{side.name} over {base.name}: {per_round}; {mean} ({len(ratios)} pairs)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
