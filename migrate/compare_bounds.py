"""One-off: capacity comparisons written before a round that could not pair still bounded the ratio
(model.compare.bounds): every ratio is computed again (model.compare.judge), and gains the bounds its unpaired
rounds put on it. No run changes; each file is read back through the strict reader before it is written.
Run on 2026-12-06 over every committed capacity comparison:

    PYTHONPATH=. .venv/bin/python migrate/compare_bounds.py results/compare/*-capacity.json
"""

from __future__ import annotations

import sys
from pathlib import Path

from migrate.compare_rewrite import rewrite
from syslogbench.model import compare as model


def bounding(found: model.CompareResult, folder: Path) -> int:
    """How many runs no pair takes that held or failed a rate: what may now bound a ratio."""
    del folder  # the runs alone say it
    return sum(
        run.verdict not in (model.PASS, "error")
        and any(model.held(run, name) != (None, None) for name in model.UPPER)
        for run in found.runs
    )


if __name__ == "__main__":
    raise SystemExit(rewrite(sys.argv[1:], "capacity", bounding, "unpaired, with a rate held or failed"))
