"""One-off: the duet comparisons written before a window on a full core was "core full" (never paired), judged
again from their own runs: a run that passed on a core at least duet.CORE_FULL busy becomes "core full", with
why, and every ratio is computed again (model.compare.judge). Nothing else in the file changes; each is read
back through the strict reader before it is written. Run on 2026-12-06 over that day's duets:

    PYTHONPATH=. .venv/bin/python migrate/duet_core_full.py results/compare/<id>-duet.json ...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from syslogbench.host.capacity.duet import CORE_FULL, core_full_words
from syslogbench.model import compare as model


def rejudged(found: model.CompareResult) -> model.CompareResult:
    for run in found.runs:
        if run.verdict == model.PASS and run.core_busy is not None and run.core_busy >= CORE_FULL:
            run.verdict, run.why = "core full", core_full_words(run.core_busy)
    judged = model.judge(found.runs, [side.name for side in found.sides], model.MEASURES[found.measure])
    found.ratios, found.floor = judged.ratios, judged.floor
    found.control_spread, found.erratic = judged.control_spread, judged.erratic
    return found


def main(paths: list[str]) -> int:
    for name in paths:
        path = Path(name)
        found = model.read(path)
        if found.measure != "duet":
            print(f"{path.name}: not a duet, left as it was")
            continue
        text = json.dumps(
            model.result_from_dict(rejudged(found).to_dict()).to_dict(), indent=1, sort_keys=True
        )
        path.write_text(text + "\n")
        full = sum(run.verdict == "core full" for run in found.runs)
        print(f"{path.name}: {full} of {len(found.runs)} windows core full")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
