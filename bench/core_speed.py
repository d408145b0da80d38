"""How fast one core works, second by second, beside the hypervisor's steal on it.

    PYTHONPATH=. .venv/bin/python bench/core_speed.py [--core N] [--seconds S] [--out results/rig/<name>.json]

Pinned to one core (the last by default: where a capacity search puts the daemon), it runs the machine
fingerprint's cpu work (rig/fingerprint.py, cpu_probe) in blocks of 300,000 loops for S seconds, and gives
for each second its loops per CPU second, its CPU over wall time (below 1: the process lost its core to
something else in the guest) and the core's steal from /proc/stat over each second (the hypervisor ran another
machine while this core had work). A core whose loops per CPU second move while both stay still is slowed
by something that neither the guest's scheduler nor steal sees (a busy sibling hyperthread on the host, a
clock change). Run it on an otherwise idle machine. Not part of `make test`: a benchmark for
docs/findings/core-speed-drift.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

from syslogbench.model import machine
from syslogbench.rig import procstat
from syslogbench.rig.fingerprint import cpu_probe

LOOPS = 300_000  # a block of about 25 ms on these machines: many blocks a second, each one timed alone


def steal_s(core: int) -> float:
    times = procstat.parse(Path("/proc/stat").read_text(), str(core))
    if times is None:
        raise SystemExit(f"core_speed: /proc/stat has no line for core {core}: pick another --core")
    return times.steal_s


def per_second(core: int, seconds: float) -> list[dict[str, float]]:
    """Blocks of the fingerprint's work for a second at a time; the core's steal read at each second's ends."""
    rows: list[dict[str, float]] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        blocks, stolen, second_end = [], steal_s(core), time.monotonic() + 1.0
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
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if not 0 <= args.core < (os.cpu_count() or 1) or not 1 <= args.seconds <= 3600:
        parser.error(
            f"--core must be a core of this machine (0 to {(os.cpu_count() or 1) - 1}), --seconds 1 to 3600"
        )
    os.sched_setaffinity(0, {args.core})
    rows = per_second(args.core, args.seconds)
    document = {
        "machine": machine.cpu_model(Path("/proc/cpuinfo").read_text()),
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "core": args.core,
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - len(rows))),
        "summary": summary(rows),
        "per_second": rows,
    }
    text = json.dumps(document, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(json.dumps(document["summary"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
