"""Where the spread of a matrix's runs comes from: each run's elapsed time cut into head, steady part and tail.

    PYTHONPATH=. .venv/bin/python bench/noise.py RESULTS_DIR [--host HOST_SAMPLES.tsv]

For each run, from its per-second samples (`samples`: lines received so far, estimated from the output's
size), the time to the first 10% of the messages (head), the rate between 10% and 90% (steady), and the time
from 90% to the end (tail), beside its elapsed time, msgs/s and the daemon's CPU seconds per million
messages. Per profile it then gives each figure's coefficient of variation, in run order, so a drift or a
slow first run shows.

--host reads a file of the host's /proc/stat and /proc/meminfo sampled every 0.5 s (one line each: unix
time, the eight jiffy counters of the `cpu` line, Dirty and Writeback in KiB, Cached, MemFree, load
average), and adds per run the CPU the hypervisor took (steal), the host's iowait and the dirty page cache
at the start signal. Not part of `make test`: a benchmark's analysis, for docs/findings/run-noise.md.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from syslogbench.model.result import Result, read
from syslogbench.report import load, stats

USER_HZ = 100  # /proc/stat's unit


@dataclass
class Cut:
    run_id: str
    profile: str
    verdict: str
    elapsed_s: float
    msgs_per_s: float
    cpu_per_million: float
    head_s: float
    steady_per_s: float
    tail_s: float
    share: float | None
    host: dict[str, float]


def crossing(rows: Sequence[Sequence[float]], column: int, level: float) -> float:
    """The time the received count first reached level, by linear interpolation between samples."""
    before_t, before_n = 0.0, 0.0
    for row in rows:
        t, n = row[0], row[column]
        if n >= level:
            return before_t + (t - before_t) * (level - before_n) / max(n - before_n, 1)
        before_t, before_n = t, n
    return float("nan")


def cut(result: Result, host: list[list[float]]) -> Cut:
    columns = result.samples.columns
    rows = result.samples.rows
    received = columns.index("received")
    total = result.messages.expected
    t10, t90 = crossing(rows, received, 0.1 * total), crossing(rows, received, 0.9 * total)
    elapsed = result.elapsed_s or float("nan")
    return Cut(
        run_id=result.run_id,
        profile=result.daemon.profile,
        verdict=result.verdict,
        elapsed_s=elapsed,
        msgs_per_s=result.throughput.msgs_per_s or float("nan"),
        cpu_per_million=load.cpu_per_million(result) or float("nan"),
        head_s=t10,
        steady_per_s=0.8 * total / (t90 - t10) if t90 > t10 else float("nan"),
        tail_s=elapsed - t90,
        share=result.harness.cpu_share_of_daemon,
        host=host_window(host, result) if host else {},
    )


def host_window(host: list[list[float]], result: Result) -> dict[str, float]:
    """Steal and iowait of the whole host from the watcher's start to the result (the result does not hold
    the start signal's wall time), and the dirty pages when the watcher started."""
    start = datetime.fromisoformat(result.started_utc).timestamp()
    end = result.finished.timestamp()
    inside = [row for row in host if start <= row[0] <= end]
    if len(inside) < 2:
        return {}
    first, last = inside[0], inside[-1]
    cpu_s = (last[0] - first[0]) * result.host.cores  # what all the host's cores could give in the window
    return {
        "steal_pct": (last[8] - first[8]) / USER_HZ / cpu_s * 100,
        "iowait_pct": (last[5] - first[5]) / USER_HZ / cpu_s * 100,
        "dirty_mib_at_start": (first[9] + first[10]) / 1024,
    }


def cov(values: Sequence[float]) -> str:
    found = stats.cov([v for v in values if v == v])  # NaN: a figure the samples could not give
    return "n/a" if found is None else f"{found:.1%}"


def report(cuts: list[Cut]) -> None:
    host_keys = sorted({key for c in cuts for key in c.host})
    print(
        "run id | verdict | elapsed s | msgs/s | CPU s per M | head s | steady msgs/s | tail s | harness share | "
        + " | ".join(host_keys)
    )
    for c in cuts:
        share = "n/a" if c.share is None else f"{c.share:.2%}"
        extra = " | ".join(f"{c.host.get(key, float('nan')):.1f}" for key in host_keys)
        print(
            f"{c.run_id} | {c.verdict} | {c.elapsed_s:.2f} | {c.msgs_per_s:,.0f} | {c.cpu_per_million:.3f} | "
            f"{c.head_s:.2f} | {c.steady_per_s:,.0f} | {c.tail_s:.2f} | {share} | {extra}"
        )
    print()
    print("profile | runs | CoV elapsed | CoV msgs/s | CoV CPU s per M | CoV head | CoV steady | CoV tail")
    for profile in sorted({c.profile for c in cuts}):
        mine = [c for c in cuts if c.profile == profile and c.verdict == "pass"]
        print(
            f"{profile} | {len(mine)} | {cov([c.elapsed_s for c in mine])} | {cov([c.msgs_per_s for c in mine])} | "
            f"{cov([c.cpu_per_million for c in mine])} | {cov([c.head_s for c in mine])} | "
            f"{cov([c.steady_per_s for c in mine])} | {cov([c.tail_s for c in mine])}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--host", type=Path)
    args = parser.parse_args()
    host = (
        [list(map(float, line.split("\t"))) for line in args.host.read_text().splitlines()]
        if args.host
        else []
    )
    results = sorted((read(path) for path in args.results.glob("*.json")), key=lambda r: r.started_utc)
    report([cut(result, host) for result in results if result.samples.rows])


if __name__ == "__main__":
    main()
