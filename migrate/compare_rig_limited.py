"""One-off: capacity comparisons written before a search that held every rate the rig could send read "at
least" (model/capacity/result.py, at_ceiling): each passing run whose own search says so becomes "at least",
with why, and every ratio is computed again (model.compare.judge). Nothing else in the file changes; each is
read back through the strict reader before it is written. Run on 2026-12-06 over that evening's udp comparison:

    PYTHONPATH=. .venv/bin/python migrate/compare_rig_limited.py results/compare/<id>-capacity.json ...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from syslogbench.model import capacity
from syslogbench.model import compare as model


def rejudged(found: model.CompareResult, folder: Path) -> tuple[model.CompareResult, int]:
    changed = 0
    for run in found.runs:
        if run.verdict != model.PASS or run.run_id is None:
            continue
        (path,) = folder.glob(f"searches/round-{run.round}/*/capacity/{run.run_id}.json")
        search = capacity.read(path)
        if search.at_ceiling:
            run.verdict, run.why, changed = "at least", capacity.at_least_text(search), changed + 1
    judged = model.judge(found.runs, [side.name for side in found.sides], model.MEASURES[found.measure])
    found.ratios, found.floor = judged.ratios, judged.floor
    found.control_spread, found.erratic = judged.control_spread, judged.erratic
    return found, changed


def main(paths: list[str]) -> int:
    for name in paths:
        path = Path(name)
        found = model.read(path)
        if found.measure != "capacity":
            print(f"{path.name}: not a capacity comparison, left as it was")
            continue
        found, changed = rejudged(found, path.with_suffix(""))
        text = json.dumps(model.result_from_dict(found.to_dict()).to_dict(), indent=1, sort_keys=True)
        path.write_text(text + "\n")
        print(f"{path.name}: {changed} of {len(found.runs)} runs now at least")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
