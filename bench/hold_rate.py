"""Hold fixed rates, with no search, and see each second: what the daemon wrote to its logs volume, the kernel's
dirty and writeback pages, the disk's writes and the daemon's CPU. It answers why a daemon holds a rate for
10 s but not for 60 s (docs/findings/capacity-10s-vs-60s.md).

    PYTHONPATH=. .venv/bin/python bench/hold_rate.py PROFILE SCENARIO RATE:SECONDS[,RATE:SECONDS...] \
        [KEY=VALUE ...] [--out results/timeline/<name>.jsonl]

The trials run as a capacity search's do (`capacity`, HOSTS=1 SENDERS_PER_HOST=4 unless given), one after
the other in the order given, without the search's warm-up. Writes one JSON line per second, one per trial
start ("trial") and end ("done", with the trial's counts and its arrivals per second), after a first line
with the command; and the capacity result of its trials (with the machine's fingerprint) as <out>.result.json. Reads /proc, the Docker engine's cgroup v1 files and its volumes: run it as root, on one
host. Not part of `make test`: a benchmark, and its output goes into results/timeline/.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path

from syslogbench.host import cli
from syslogbench.host.capacity import command as capacity_command

DOCKER = Path("/var/lib/docker")
CPUACCT = Path("/sys/fs/cgroup/cpuacct/docker")
# SEARCH_MAX bounds the whole plan here: its trials, their renders and drains.
DEFAULTS = {"HOSTS": "1", "SENDERS_PER_HOST": "4", "SEARCH_MAX": "3000"}


def proc_fields(path: str, names: tuple[str, ...], sep: str | None) -> dict[str, int]:
    found = {}
    for line in Path(path).read_text().splitlines():
        key, _, value = line.partition(":") if sep == ":" else line.partition(" ")
        if key in names:
            found[key] = int(value.split()[0])
    return found


def disk(device: str) -> dict[str, int]:
    for line in Path("/proc/diskstats").read_text().splitlines():
        parts = line.split()
        if parts[2] == device:
            return {"sectors_written": int(parts[9]), "io_ms": int(parts[12])}
    return {}


def logs_bytes() -> int:
    size = 0
    for data in DOCKER.glob("volumes/*_logs/_data"):
        for root, _, files in os.walk(data):
            for name in files:
                with contextlib.suppress(OSError):  # gone between the listing and the stat
                    size += os.stat(os.path.join(root, name)).st_size
    return size


def daemon_cpu_s() -> float | None:
    """The CPU of the container whose name says it is the central daemon (cgroup v1's cpuacct)."""
    for usage in CPUACCT.glob("*/cpuacct.usage"):
        config = DOCKER / "containers" / usage.parent.name / "config.v2.json"
        try:
            if '"central"' in config.read_text():  # the daemon's network alias
                return int(usage.read_text()) / 1e9
        except OSError:
            continue
    return None


def sample(out, stop: threading.Event, device: str) -> None:
    while not stop.is_set():
        row = {"t": round(time.time(), 2), "bytes": logs_bytes()}
        row |= proc_fields("/proc/meminfo", ("Dirty", "Writeback"), ":")
        row |= proc_fields("/proc/vmstat", ("nr_dirtied", "nr_written"), None)
        row |= disk(device) | {"daemon_cpu": daemon_cpu_s()}
        out.write(json.dumps(row) + "\n")
        out.flush()
        stop.wait(1.0)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile")
    parser.add_argument("scenario")
    parser.add_argument("plan", help="RATE:SECONDS[,RATE:SECONDS...], rates in msg/s over every sender")
    parser.add_argument("settings", nargs="*", help="KEY=VALUE, as capacity takes them")
    parser.add_argument("--out", type=Path, default=Path("timeline.jsonl"))
    parser.add_argument("--device", default="vda", help="the disk under /var/lib/docker (/proc/diskstats)")
    args = parser.parse_args(argv)
    trials = [(float(rate), float(seconds)) for rate, seconds in (p.split(":") for p in args.plan.split(","))]
    out = args.out.open("w")
    out.write(json.dumps({"command": " ".join(["bench/hold_rate.py", *argv]), "profile": args.profile,
                          "scenario": args.scenario}) + "\n")  # fmt: skip

    def hold(measurer, cap, log, found=None):  # in place of the search: the trials asked for, in order
        for rate, seconds in trials:
            out.write(json.dumps({"trial": rate, "secs": seconds, "t": time.time()}) + "\n")
            trial = measurer.trial(rate, seconds, "search")
            out.write(json.dumps({"done": rate, "t": time.time(), "loss": trial.loss_ratio, "late": trial.late,
                                  "lost": trial.lost, "p50": trial.latency_ms.p50, "p99": trial.latency_ms.p99,
                                  "daemon_cpu_s": trial.daemon_cpu_s, "arrived_per_s": trial.arrived_per_s,
                                  "rig": asdict(trial.rig) if trial.rig else None}) + "\n")  # fmt: skip
        return found

    capacity_command.search = hold
    capacity_command.confirm = lambda *_args, **_kwargs: {}
    stop = threading.Event()
    threading.Thread(target=sample, args=(out, stop, args.device), daemon=True).start()
    scratch = Path(tempfile.mkdtemp(prefix="hold-rate-"))
    given = {setting.partition("=")[0] for setting in args.settings}
    defaults = [f"{key}={value}" for key, value in DEFAULTS.items() if key not in given]
    try:
        return cli.main(["capacity", "--profile", args.profile, "--scenario", args.scenario, "--results",
                         str(scratch), *defaults, *args.settings])  # fmt: skip
    finally:
        stop.set()
        out.close()
        # The capacity result (every trial, and the machine's fingerprint) beside the timeline.
        for written in (scratch / "capacity").glob("*.json"):
            shutil.move(written, args.out.with_suffix(".result.json"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
