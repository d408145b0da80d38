"""One-off: the committed capacity results' latency histograms from {us: count} objects to HdrHistogram's V2
encoding (host/capacity/histogram.py), each file rewritten in place, a trial a line (host/capacity/record.py
result_text).

Run from the checkout's root (host side: it needs requirements-dev.txt's hdrhistogram):

    PYTHONPATH=. .venv/bin/python migrate/capacity_histograms.py [results/capacity/<file>.json ...]

With no file named, every *.json under results/capacity. A trial is converted only when its histogram
decodes back to every bucket and count it had, and to the same p50 to max; the Python watcher's trials from
before the compiled follower (values rounded to 3 decimal digits, not the follower's buckets) keep their
object, which the reader still reads. Each rewritten file is read back through the strict reader before it
is written. Prints a line per file and the totals.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from syslogbench.host.capacity import histogram
from syslogbench.host.capacity.record import result_text
from syslogbench.model import capacity

RESULTS = Path("results/capacity")


def converted(trial: dict) -> bool:
    """The trial with its histogram encoded, if the encoding gives it back exactly; False if it keeps its
    object (not the follower's buckets). AssertionError if an encoding reads back otherwise."""
    counts = trial.get("latency_histogram_us")
    if counts is None:
        return False
    try:
        text = histogram.encode(counts)
    except histogram.HistogramError:
        return False
    back = histogram.decode(text)
    assert back == counts, f"trial {trial['number']}: {len(back)} buckets read back, {len(counts)} written"
    assert histogram.latency_ms(back) == histogram.latency_ms(counts), f"trial {trial['number']}: percentiles"
    del trial["latency_histogram_us"]
    trial["latency_histogram"] = text
    return True


def migrate(path: Path) -> tuple[int, int, int, int]:
    """(trials converted, trials kept as objects, bytes before, bytes after) of one file, rewritten."""
    before = path.read_text()
    document = json.loads(before)
    if document.get("kind") != "capacity":
        return 0, 0, len(before), len(before)  # a burst run's result: no trials
    done = [converted(trial) for trial in document["trials"]]
    text = result_text(document)
    assert json.loads(text) == document, f"{path}: the rewritten file does not read back the same"
    capacity.result_from_dict(json.loads(text))  # the strict reader reads it (CapacityResultError if not)
    path.write_text(text)
    kept = sum(1 for trial, made in zip(document["trials"], done, strict=True)
               if not made and trial.get("latency_histogram_us"))  # fmt: skip
    return sum(done), kept, len(before), len(text)


def main(argv: list[str]) -> int:
    paths = [Path(arg) for arg in argv] or sorted(RESULTS.rglob("*.json"))
    totals = [0, 0, 0, 0]
    for path in paths:
        figures = migrate(path)
        totals = [a + b for a, b in zip(totals, figures, strict=True)]
        print(f"{path}: {figures[0]} trials encoded, {figures[1]} kept as objects, "
              f"{figures[2]:,} -> {figures[3]:,} bytes", flush=True)  # fmt: skip
    print(f"{len(paths)} files: {totals[0]} trials encoded, {totals[1]} kept as objects, "
          f"{totals[2]:,} -> {totals[3]:,} bytes")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
