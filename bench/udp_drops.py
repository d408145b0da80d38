"""What the daemon was doing when its UDP socket dropped datagrams: sampled from the host while a trial runs.

    sudo PYTHONPATH=. .venv/bin/python bench/udp_drops.py CONTAINER [--seconds 600] [--every-ms 5]
        [--out results/rig/<name>.json]

Every few ms it reads, for the container's main process and each of its threads (/proc/PID/task/*): the CPU
they used (schedstat's first field) and the time they waited for a CPU while runnable (run_delay, its
second), and from the process's network namespace the kernel's UDP receive-buffer errors (/proc/PID/net/snmp)
and the largest receive queue among its UDP sockets (/proc/PID/net/udp, rx_queue, in bytes of truesize).

A drop episode is a run of samples in which RcvbufErrors grew. For each, the 200 ms before its first drop:
the daemon's CPU (in cores), its threads' wait for a CPU, and how full its queue was. A daemon that used its
whole core and still dropped was too slow for the rate; one that waited for a CPU was taken off its core; one
that used little CPU and waited for none was stalled inside (a lock, a write, a page fault). Reading /proc of
another container's process needs root. Prints one JSON document: the episodes, and totals over the sampling.
Not part of `make test`: a diagnosis for docs/findings/syslog-ng-udp-drops.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from syslogbench.model import machine

BEFORE_S = 0.2
USER_HZ = 100  # /proc/stat's unit


@dataclass
class Sample:
    t: float
    threads: dict[int, tuple[int, int]]  # thread id -> (CPU ns so far, ns runnable but not running so far)
    core_busy: int  # USER_HZ ticks the daemon's core was not idle, so far (/proc/stat)
    rcvbuf_errors: int
    queue_bytes: int  # the fullest UDP socket's receive queue now


def main_pid(container: str) -> int:
    out = subprocess.run(["docker", "inspect", "-f", "{{.State.Pid}}", container], capture_output=True,
                         text=True, check=False)  # fmt: skip
    if out.returncode or not out.stdout.strip().isdigit() or out.stdout.strip() == "0":
        sys.exit(f"udp_drops: no running container {container!r}: {out.stderr.strip() or 'not running'}")
    return int(out.stdout)


def pids_of(container_pid: int) -> list[int]:
    """The container's processes: its main one and its children (syslog-ng's supervisor forks the daemon)."""
    found, todo = [], [container_pid]
    while todo:
        pid = todo.pop()
        found.append(pid)
        for task in Path(f"/proc/{pid}/task").glob("*"):
            with contextlib.suppress(OSError):  # a thread that ended since the listing
                todo.extend(int(c) for c in (task / "children").read_text().split())
    return found


def scheduled(pids: list[int]) -> dict[int, tuple[int, int]]:
    found = {}
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                run, delay, _ = task.joinpath("schedstat").read_text().split()
            except (OSError, ValueError):
                continue  # a thread that ended between the listing and the read
            found[int(task.name)] = (int(run), int(delay))
    return found


def moved(a: Sample, b: Sample) -> tuple[float, float]:
    """The CPU and the wait for a CPU, in seconds, of the threads alive at both samples."""
    both = a.threads.keys() & b.threads.keys()
    cpu = sum(b.threads[t][0] - a.threads[t][0] for t in both)
    wait = sum(b.threads[t][1] - a.threads[t][1] for t in both)
    return cpu / 1e9, wait / 1e9


def core_busy(core: int) -> int:
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith(f"cpu{core} "):
            ticks = [int(x) for x in line.split()[1:]]
            return sum(ticks) - ticks[3] - ticks[4]  # all but idle and iowait
    raise OSError(f"no cpu{core} in /proc/stat")


def rcvbuf_errors(pid: int) -> int:
    lines = Path(f"/proc/{pid}/net/snmp").read_text().splitlines()
    heads, values = [line.split()[1:] for line in lines if line.startswith("Udp:")][:2]
    return int(values[heads.index("RcvbufErrors")])


def fullest_queue(pid: int) -> int:
    rows = Path(f"/proc/{pid}/net/udp").read_text().splitlines()[1:]
    return max((int(row.split()[4].split(":")[1], 16) for row in rows), default=0)


def sample(container_pid: int, pids: list[int], core: int) -> Sample:
    return Sample(time.monotonic(), scheduled(pids), core_busy(core), rcvbuf_errors(container_pid),
                  fullest_queue(container_pid))  # fmt: skip


def episodes(samples: list[Sample]) -> list[dict[str, float]]:
    """Each run of samples with new drops, and the daemon in the BEFORE_S before its first."""
    found, index = [], 1
    while index < len(samples):
        if samples[index].rcvbuf_errors == samples[index - 1].rcvbuf_errors:
            index += 1
            continue
        first = index
        while index < len(samples) and samples[index].rcvbuf_errors > samples[index - 1].rcvbuf_errors:
            index += 1
        start = samples[first - 1]
        before = next((s for s in reversed(samples[:first]) if s.t <= start.t - BEFORE_S), samples[0])
        span = max(start.t - before.t, 1e-9)
        cpu, wait = moved(before, start)
        busy = (start.core_busy - before.core_busy) / USER_HZ / span
        found.append({
            "at_s": round(start.t - samples[0].t, 3),
            "lasted_s": round(samples[index - 1].t - start.t, 3),
            "dropped": samples[index - 1].rcvbuf_errors - start.rcvbuf_errors,
            "cores_before": round(cpu / span, 3),
            "wait_cores_before": round(wait / span, 3),
            # Its core busy beyond the daemon's own threads: other tasks, and interrupts (tick-sampled, coarse).
            "others_on_core_before": round(max(busy - cpu / span, 0.0), 2),
            "queue_kib_at_first_drop": round(samples[first].queue_bytes / 1024),
        })  # fmt: skip
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("container")
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--every-ms", type=float, default=5.0)
    parser.add_argument(
        "--core", type=int, default=1, help="the daemon's core (DAEMON_CORES=1 on 2 cores: 1)"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    container_pid = main_pid(args.container)
    samples: list[Sample] = []
    pids: list[int] = []
    end = time.monotonic() + args.seconds
    try:
        while time.monotonic() < end:
            if len(samples) % 200 == 0:
                pids = pids_of(container_pid)  # and again now and then: a restarted daemon is a new process
            samples.append(sample(container_pid, pids, args.core))
            time.sleep(args.every_ms / 1000)
    except OSError as error:  # the container stopped: what was sampled is the answer
        if not samples:
            sys.exit(
                f"udp_drops: cannot read the container's /proc ({error}): run it as root, beside a running daemon"
            )
    except KeyboardInterrupt:
        pass  # cut short: what was sampled is the answer
    if len(samples) < 2:
        sys.exit("udp_drops: fewer than two samples: nothing to compare")
    gaps = [b.t - a.t for a, b in pairwise(samples)]
    found = episodes(samples)
    steps = [moved(a, b) for a, b in pairwise(samples)]
    doc = {
        "machine": machine.cpu_model(Path("/proc/cpuinfo").read_text()),
        "container": args.container,
        "samples": len(samples),
        "sample_gap_max_ms": round(max(gaps, default=0) * 1000, 2),
        "seconds": round(samples[-1].t - samples[0].t, 1),
        "dropped": samples[-1].rcvbuf_errors - samples[0].rcvbuf_errors,
        "cpu_s": round(sum(cpu for cpu, _ in steps), 2),
        "wait_s": round(sum(wait for _, wait in steps), 2),
        "episodes": found,
        "dropped_with_others_on_core": sum(e["dropped"] for e in found if e["others_on_core_before"] >= 0.1),
    }
    text = json.dumps(doc, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
