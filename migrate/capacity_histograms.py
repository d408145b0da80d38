"""One-off: the committed capacity results' latency histograms from {us: count} objects to HdrHistogram's V2
encoding (host/capacity/histogram.py), each file rewritten in place, a trial a line (host/capacity/record.py
result_text).

Run from the checkout's root (host side: it needs requirements-dev.txt's hdrhistogram):

    PYTHONPATH=. .venv/bin/python migrate/capacity_histograms.py [results/capacity/<file>.json ...]

With no file named, every *.json under results/capacity. Run on 2026-12-06 over the other committed capacity
results too: results/rig/trials, results/knobs/*/capacity and results/timeline (28 files, 303 trials,
21,925,995 -> 2,298,534 bytes). A trial is converted only when its histogram
decodes back to every bucket and count it had, and to the same p50 to max. The Python watcher's trials from
before the compiled follower (values rounded to 3 decimal digits, not the follower's buckets) are encoded at
5 significant digits, where each such value is a bucket's lowest and reads back as it was
(histogram.encode_exact; run over results/capacity on 2026-12-06); a trial with a value that would not keeps
its object, which the reader still reads. Each rewritten file is read back through the strict reader before it
is written. Prints a line per file and the totals; a check that fails stops it with one line, and the file
it was on is left as it was (exit 3; 2 for a file the strict reader refuses).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path

from syslogbench.contract import EXIT_CODES
from syslogbench.host.capacity import histogram
from syslogbench.host.capacity.record import result_text
from syslogbench.model import capacity

RESULTS = Path("results/capacity")
# The follower's percentiles (rig-rust/src/follow/tally.rs latency_ms), in the result's order.
QUANTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99, "p999": 0.999}


class MigrationError(Exception):
    """A conversion that would change what a file says: one line, and nothing of that file written."""


def counts_of(trial: capacity.Trial) -> dict[str, int]:
    """A trial's {us: count}, from whichever form its result holds."""
    if trial.latency_histogram is not None:
        return histogram.decode(trial.latency_histogram)
    return dict(trial.latency_histogram_us or {})


def latency_ms(counts: Mapping[str, int]) -> capacity.Latency:
    """p50 to max in ms, as the follower computes them (hdrhistogram's value_at_quantile: the highest value
    of the bucket where the count reaches ceil(quantile * total)); all None for no latency."""
    template = histogram.shape()
    values = sorted((int(key), count) for key, count in counts.items())
    total = sum(count for _, count in values)
    if not total:
        return capacity.Latency()
    found: dict[str, float | None] = {}
    for name, quantile in QUANTILES.items():
        target, seen = max(1, math.ceil(quantile * total)), 0
        for value, count in values:
            seen += count
            if seen >= target:
                found[name] = template.get_highest_equivalent_value(value) / 1000
                break
    return capacity.Latency(**found, max=template.get_highest_equivalent_value(values[-1][0]) / 1000)


def converted(trial: dict) -> bool:
    """The trial with its histogram encoded, if the encoding gives it back exactly; False if it keeps its
    object (not the follower's buckets). MigrationError if an encoding reads back otherwise."""
    counts = trial.get("latency_histogram_us")
    if counts is None:
        return False
    try:
        text = histogram.encode(counts)
    except histogram.HistogramError:
        try:  # the Python watcher's values, at the digits that keep each as it was
            text = histogram.encode_exact(counts)
        except histogram.HistogramError:
            return False
    back = histogram.decode(text)
    if back != counts:
        raise MigrationError(f"trial {trial['number']}: {len(back)} buckets read back, {len(counts)} written")
    if latency_ms(back) != latency_ms(counts):
        raise MigrationError(f"trial {trial['number']}: the percentiles read back differ")
    del trial["latency_histogram_us"]
    trial["latency_histogram"] = text
    return True


def migrate(path: Path) -> tuple[int, int, int, int]:
    """(trials converted, trials kept as objects, bytes before, bytes after) of one file, rewritten."""
    before = path.read_text()
    document = json.loads(before)
    if document.get("kind") != "capacity":
        return 0, 0, len(before), len(before)  # a burst run's result: no trials
    try:
        done = [converted(trial) for trial in document["trials"]]
    except MigrationError as error:
        raise MigrationError(f"{path}: {error}") from None
    text = result_text(document)
    if json.loads(text) != document:
        raise MigrationError(f"{path}: the rewritten file does not read back the same")
    try:
        capacity.result_from_dict(json.loads(text))
    except capacity.CapacityResultError as error:
        raise capacity.CapacityResultError(f"{path}: {error}") from None
    path.write_text(text)
    kept = sum(1 for trial, made in zip(document["trials"], done, strict=True)
               if not made and trial.get("latency_histogram_us"))  # fmt: skip
    return sum(done), kept, len(before), len(text)


def migrate_all(paths: list[Path]) -> None:
    """Every file rewritten, a line each, and the totals."""
    totals = [0, 0, 0, 0]
    for path in paths:
        figures = migrate(path)
        totals = [a + b for a, b in zip(totals, figures, strict=True)]
        print(f"{path}: {figures[0]} trials encoded, {figures[1]} kept as objects, "
              f"{figures[2]:,} -> {figures[3]:,} bytes", flush=True)  # fmt: skip
    print(f"{len(paths)} files: {totals[0]} trials encoded, {totals[1]} kept as objects, "
          f"{totals[2]:,} -> {totals[3]:,} bytes")  # fmt: skip


def main(argv: list[str]) -> int:
    paths = [Path(arg) for arg in argv] or sorted(RESULTS.rglob("*.json"))
    try:
        migrate_all(paths)
    except MigrationError as error:
        print(f"capacity_histograms: {error}", file=sys.stderr)
        return EXIT_CODES["error"]
    except capacity.CapacityResultError as error:
        print(f"capacity_histograms: {error}", file=sys.stderr)
        return EXIT_CODES["bad-input"]
    return EXIT_CODES["pass"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
