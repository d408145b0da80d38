"""Where a capacity trial's time goes beyond its length. Reads results only (capacity searches, and the searches
of capacity comparisons), those whose trials record `setup_s`, `wrapup_s` and `asked_s` (2026-12-06 on).

Per search, the medians over its trials of:

- setup: the watcher's time from the host's request to the trial's common start (the drain of earlier trials'
  lines, the senders' rendering and clock checks, the start's lead of 0.2 s);
- wrap-up: from the end of the trial's schedule to the watcher's answer (the last arrivals, the senders'
  reports, the record);
- exec: the rest of the host's wait for the answer (`asked_s` less setup, length and wrap-up): `docker
  compose exec` and the Python client it starts in the watcher;
- total beyond the length (`asked_s` less the length).

    PYTHONPATH=. python bench/trial_cost.py RESULTS_DIR [RESULTS_DIR ...]

Figures: docs/findings/compare-capacity.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from statistics import median

from syslogbench.model import capacity


def costs(trial: capacity.Trial) -> tuple[float, float, float, float] | None:
    """(setup, wrap-up, exec, beyond the length) of one trial, or None where it lacks the record."""
    if trial.setup_s is None or trial.wrapup_s is None or trial.asked_s is None:
        return None
    beyond = trial.asked_s - trial.duration_s
    return trial.setup_s, trial.wrapup_s, beyond - trial.setup_s - trial.wrapup_s, beyond


def main(folders: list[str]) -> int:
    if not folders:
        print(__doc__.strip().splitlines()[-3].strip())
        return 2
    print("search | trials | setup s | wrap-up s | exec s | beyond the length s (medians)")
    for folder in folders:
        for path in sorted(Path(folder).rglob("*.json")):
            try:
                result = capacity.read(path)
            except capacity.CapacityResultError:
                continue  # not a capacity search (a comparison, a burst run)
            found = [c for t in result.trials if (c := costs(t)) is not None]
            if found:
                columns = (f"{median(c[i] for c in found):.2f}" for i in range(4))
                print(f"{result.run_id} | {len(found)} | {' | '.join(columns)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
