"""How fast one core works, second by second, beside the hypervisor's steal on it.

    PYTHONPATH=. .venv/bin/python bench/core_speed.py [--core N] [--seconds S] [--out results/rig/<name>.json]
    PYTHONPATH=. .venv/bin/python bench/core_speed.py --cores 0,1 --seconds 600 [--out ...]

Pinned to one core (the last by default: where a capacity search puts the daemon), it runs the machine
fingerprint's cpu work (rig/fingerprintprobes.py, cpu_probe) in blocks of 300,000 loops for S seconds, and gives
for each second its loops per CPU second, its CPU over wall time (below 1: the process lost its core to
something else in the guest) and the core's steal from /proc/stat over each second (the hypervisor ran another
machine while this core had work). A core whose loops per CPU second move while both stay still is slowed
by something that neither the guest's scheduler nor steal sees (a busy sibling hyperthread on the host, a
clock change). Run it on an otherwise idle machine. Not part of `make test`: a benchmark for
docs/findings/core-speed-drift.md.

With --cores, one process per core, each pinned, over the same seconds (one shared monotonic clock): do the
cores' speeds move together? It gives Pearson's r of their loops per CPU second, second by second and over
10 s means. Where r is at least 0.9, one core's speed could stand for the other's (issue 47: an NDR per unit
of core speed); below, it cannot.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import statistics
import time
from pathlib import Path

from syslogbench.model import machine
from syslogbench.rig import procstat
from syslogbench.rig.fingerprintprobes import cpu_probe

LOOPS = 300_000  # a block of about 25 ms on these machines: many blocks a second, each one timed alone


def steal_s(core: int) -> float:
    times = procstat.parse(Path("/proc/stat").read_text(), str(core))
    if times is None:
        raise SystemExit(f"core_speed: /proc/stat has no line for core {core}: pick another --core")
    return times.steal_s


def per_second(core: int, seconds: float, start: float | None = None) -> list[dict[str, float]]:
    """Blocks of the fingerprint's work for a second at a time; the core's steal read at each second's ends.
    start: a monotonic time shared with other cores' probes; second k is then [start + k, start + k + 1)."""
    rows: list[dict[str, float]] = []
    start = time.monotonic() if start is None else start
    while time.monotonic() < start:
        time.sleep(0.001)
    for k in range(int(seconds)):
        blocks, stolen, second_end = [], steal_s(core), start + k + 1.0
        while time.monotonic() < second_end:
            blocks.append(cpu_probe(LOOPS))
        wall, cpu = sum(b.seconds for b in blocks), sum(b.cpu_s for b in blocks)
        rows.append(
            {
                "loops_per_cpu_s": round(LOOPS * len(blocks) / cpu) if cpu > 0 else 0,
                "cpu_per_wall": round(cpu / wall, 3) if wall > 0 else 0.0,
                "steal_s": round(steal_s(core) - stolen, 2),
            }
        )
    return rows


def pinned(core: int, seconds: float, start: float) -> list[dict[str, float]]:
    os.sched_setaffinity(0, {core})
    return per_second(core, seconds, start)


def together(a: list[dict[str, float]], b: list[dict[str, float]]) -> dict[str, float | int]:
    """Pearson's r of two cores' loops per CPU second over the same seconds, and over 10 s means."""
    x = [row["loops_per_cpu_s"] for row in a]
    y = [row["loops_per_cpu_s"] for row in b]
    n = min(len(x), len(y))
    tens = [(statistics.fmean(x[i : i + 10]), statistics.fmean(y[i : i + 10])) for i in range(0, n - 9, 10)]
    return {
        "seconds": n,
        "r_per_second": round(statistics.correlation(x[:n], y[:n]), 3),
        "r_per_10s": round(statistics.correlation([t[0] for t in tens], [t[1] for t in tens]), 3),
    }


def summary(rows: list[dict[str, float]]) -> dict[str, float]:
    speeds = sorted(row["loops_per_cpu_s"] for row in rows)
    return {
        "seconds": len(rows),
        "loops_per_cpu_s_min": speeds[0],
        "loops_per_cpu_s_median": statistics.median(speeds),
        "loops_per_cpu_s_max": speeds[-1],
        "cpu_per_wall_min": min(row["cpu_per_wall"] for row in rows),
        "steal_s": round(sum(row["steal_s"] for row in rows), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--core", type=int, default=(os.cpu_count() or 1) - 1)
    parser.add_argument(
        "--cores", help="probe these cores at once (e.g. 0,1) and say whether they move together"
    )
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    count = os.cpu_count() or 1
    cores = [args.core] if not args.cores else [int(c) for c in args.cores.split(",") if c.strip().isdigit()]
    if not cores or not all(0 <= c < count for c in cores) or not 1 <= args.seconds <= 3600:
        parser.error(f"--core/--cores must be cores of this machine (0 to {count - 1}), --seconds 1 to 3600")
    start = time.monotonic() + 0.5
    with multiprocessing.get_context("fork").Pool(len(cores)) as pool:
        found = pool.starmap(pinned, [(core, args.seconds, start) for core in cores])
    document: dict[str, object] = {
        "machine": machine.cpu_model(Path("/proc/cpuinfo").read_text()),
        "cores": count,
        "kernel": platform.release(),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - args.seconds)),
    }
    if len(cores) == 1:
        document |= {"core": cores[0], "summary": summary(found[0]), "per_second": found[0]}
        print(json.dumps(document["summary"]))
    else:
        document |= {"probed": cores, "together": together(found[0], found[1]),
                     "summary": {str(c): summary(rows) for c, rows in zip(cores, found, strict=True)},
                     "per_second": {str(c): rows for c, rows in zip(cores, found, strict=True)}}  # fmt: skip
        print(json.dumps({"together": document["together"], "summary": document["summary"]}))
    if args.out:
        args.out.write_text(json.dumps(document, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
