"""One-off: the duet comparisons written before a window on a full core was "core full" (never paired), judged
again from their own runs: a run that passed on a core at least duet.CORE_FULL busy becomes "core full", with
why, and every ratio is computed again (model.compare.judge). Nothing else in the file changes; each is read
back through the strict reader before it is written. Run on 2026-12-06 over that day's duets:

    PYTHONPATH=. .venv/bin/python migrate/duet_core_full.py results/compare/<id>-duet.json ...
"""

from __future__ import annotations

import sys
from pathlib import Path

from migrate.compare_rewrite import rewrite
from syslogbench.host.capacity.duet import CORE_FULL, core_full_words
from syslogbench.model import compare as model


def core_full(found: model.CompareResult, folder: Path) -> int:
    """Each passing window on a core at least CORE_FULL busy becomes "core full"; how many."""
    changed = 0
    for run in found.runs:
        if run.verdict == model.PASS and run.core_busy is not None and run.core_busy >= CORE_FULL:
            run.verdict, run.why, changed = "core full", core_full_words(run.core_busy), changed + 1
    return changed


if __name__ == "__main__":
    raise SystemExit(rewrite(sys.argv[1:], "duet", core_full, "now core full"))
