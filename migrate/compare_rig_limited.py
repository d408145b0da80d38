"""One-off: capacity comparisons written before a search that held every rate the rig could send read "at
least" (model/capacity/result.py, at_ceiling): each passing run whose own search says so becomes "at least",
with why, and every ratio is computed again (model.compare.judge). Nothing else in the file changes; each is
read back through the strict reader before it is written. Run on 2026-12-06 over that evening's udp comparison:

    PYTHONPATH=. .venv/bin/python migrate/compare_rig_limited.py results/compare/<id>-capacity.json ...
"""

from __future__ import annotations

import sys
from pathlib import Path

from migrate.compare_rewrite import rewrite
from syslogbench.model import capacity
from syslogbench.model import compare as model


def rig_limited(found: model.CompareResult, folder: Path) -> int:
    """Each passing run whose own search held every rate the rig could send becomes "at least"; how many."""
    changed = 0
    for run in found.runs:
        if run.verdict != model.PASS or run.run_id is None:
            continue
        (path,) = folder.glob(f"searches/round-{run.round}/*/capacity/{run.run_id}.json")
        search = capacity.read(path)
        if search.at_ceiling:
            run.verdict, run.why, changed = "at least", capacity.at_least_text(search), changed + 1
    return changed


if __name__ == "__main__":
    raise SystemExit(rewrite(sys.argv[1:], "capacity", rig_limited, "now at least"))
