"""The machine's fingerprint: three small fixed workloads, timed just before a run (the result's host.fingerprint).

Machines of the same name differ (rsyslog 8.2504's seed run took 52.9 s on one "AMD EPYC, 2 cores" and 80.4 s
on another), so each result carries what this machine did with a fixed amount of work of each kind a daemon
spends its time on:

- cpu: a pure-Python integer loop, one thread: the core's speed (syslog-ng's seed run is CPU bound);
- file_churn: open, append about 100 bytes, close, across 192 files (the seed's facility x severity split) in
  the given directory, which is on a fresh Docker volume of the logs volume's kind: rsyslog's seed run
  closes and opens a file for nearly every message (its dynaFile cache holds 10 of the 192);
- loopback_tcp: 100-byte lines sent over TCP on 127.0.0.1 to a second process, in 64 KiB writes.

Each is repeated and the median kept, with every repeat's value. Stdlib only: it runs in the watcher image,
under the daemon's CPU and memory limits (host/fingerprintcontainer.py starts it), or in the watcher itself.

    python3 -m syslogbench.rig.fingerprintprobes DIRECTORY    prints the fingerprint as JSON
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import socket
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from syslogbench.contract import FINGERPRINT_ENV
from syslogbench.model.result import Figure, Fingerprint, ResultError
from syslogbench.rig import cgroup

VERSION = 1  # of the work below: a change makes figures incomparable, so it comes with a new version
CHURN_FILES = 192
LINE = b"<134>Nov 22 10:00:00 host1 bench[7]: syslogbench h=1 s=1 q=0000001 f=16 v=6 " + b"x" * 21 + b"\n"
TCP_WRITE = 64 * 1024


@dataclass(frozen=True)
class Work:
    """How much of each, and how often. Sized to about 0.15 s a repeat on the project's 2-core machines, so
    the fingerprint takes about 2.5 s (3 s with the container); 5 repeats keep a slow one out of the median."""

    cpu_loops: int = 3_000_000
    churn_ops: int = 100_000
    tcp_bytes: int = 512 * 2**20
    repeats: int = 5


ACK = b"k"


@dataclass(frozen=True)
class Timing:
    """One repeat: how much work, in how many wall seconds, using how many CPU seconds."""

    amount: float
    seconds: float
    cpu_s: float


def cpu_now() -> float:
    """CPU seconds (user and system) of this process and of its children that have been waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(amount: float, work: Callable[[], object]) -> Timing:
    began, cpu = time.perf_counter(), cpu_now()
    work()
    return Timing(amount, time.perf_counter() - began, cpu_now() - cpu)


def cpu_probe(loops: int) -> Timing:
    """Loops of a fixed integer loop in the interpreter: branches and arithmetic, no memory."""

    def work() -> int:
        h = 0
        for i in range(loops):
            h = (h * 31 + i) & 0xFFFFFFFF
        return h

    return timed(loops, work)


def churn_files(directory: Path, count: int = CHURN_FILES) -> list[str]:
    """The files, created empty before the timing: the daemon's files exist after its first messages."""
    paths = [str(directory / f"fingerprint.{i}.log") for i in range(count)]
    for path in paths:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
    return paths


def churn_order(paths: list[str], ops: int) -> list[str]:
    """A fixed pseudo-random order, as messages of random facility and severity arrive."""
    rng = random.Random(2014)
    return [paths[rng.randrange(len(paths))] for _ in range(ops)]


def churn_probe(directory: Path, ops: int) -> Timing:
    """Operations, each what rsyslog does on a dynaFile cache miss: open for
    append, write one line, close. The files are removed afterwards."""
    paths = churn_files(directory)
    order = churn_order(paths, ops)

    def work() -> None:
        for path in order:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.write(fd, LINE)
            os.close(fd)

    try:
        return timed(ops, work)
    finally:
        for path in paths:
            os.unlink(path)


def loopback_probe(total: int) -> Timing:
    """MB sent: about `total` bytes of 100-byte lines in 64 KiB writes to a child process over 127.0.0.1.
    The child answers one byte once it has read them all, so the time covers the reading too; connecting
    is not timed. The CPU is both processes', the child's whole life included (its accept is little)."""
    payload = LINE * (TCP_WRITE // len(LINE))
    size = max(1, total // len(payload)) * len(payload)
    cpu = cpu_now()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        child = os.fork()
        if child == 0:
            os._exit(receive(listener, size))
        with socket.create_connection(listener.getsockname()) as conn:
            began = time.perf_counter()
            for _ in range(size // len(payload)):
                conn.sendall(payload)
            conn.shutdown(socket.SHUT_WR)
            answer = conn.recv(1)
            seconds = time.perf_counter() - began
    _, status = os.waitpid(child, 0)
    if answer != ACK or os.waitstatus_to_exitcode(status) != 0:
        raise OSError(f"the loopback receiver did not get all {size:,} bytes")
    return Timing(size / 1e6, seconds, cpu_now() - cpu)


def receive(listener: socket.socket, size: int) -> int:
    """The child's side: read until the sender's end of stream, answer, exit 0 if every byte came."""
    conn, _ = listener.accept()
    buffer = bytearray(TCP_WRITE)
    got = 0
    while n := conn.recv_into(buffer):
        got += n
    conn.sendall(ACK)
    conn.close()
    return 0 if got == size else 1


def figure(probe: Callable[[], Timing], unit: str, repeats: int) -> Figure:
    """The probe run `repeats` times: the median rate per wall second, each repeat's, the seconds they took,
    and the rate per CPU second over all of them (what CPU-time figures scale with)."""
    began = time.perf_counter()
    timings = [probe() for _ in range(repeats)]
    rates = [round(t.amount / t.seconds, 1) for t in timings]
    cpu_s = sum(t.cpu_s for t in timings)
    return Figure(
        value=statistics.median(rates),
        unit=unit,
        seconds=round(time.perf_counter() - began, 3),
        repeats=rates,
        cpu_s=round(cpu_s, 3),
        per_cpu_s=round(sum(t.amount for t in timings) / cpu_s, 1) if cpu_s > 0 else None,
    )


def probe(directory: Path, source: str, work: Work = Work()) -> Fingerprint:
    """All three figures; `directory` must be on a volume of the logs volume's kind."""
    directory.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    cpu = figure(lambda: cpu_probe(work.cpu_loops), "loops/s", work.repeats)
    churn = figure(lambda: churn_probe(directory, work.churn_ops), "ops/s", work.repeats)
    tcp = figure(lambda: loopback_probe(work.tcp_bytes), "MB/s", work.repeats)
    cpu_limit, memory_limit = cgroup.own().limits()
    return Fingerprint(
        version=VERSION,
        source=source,
        cpu=cpu,
        file_churn=churn,
        loopback_tcp=tcp,
        seconds=round(time.perf_counter() - began, 3),
        cpu_limit=cpu_limit,
        memory_limit_bytes=memory_limit,
    )


def for_run(logs: Path, notes: list[str]) -> Fingerprint | None:
    """The watcher's: the one `syslogbench run` measured (FINGERPRINT), else one measured here, on the logs
    volume, before anyone else starts (plain compose). A fingerprint that fails is a note, not the run's end."""
    try:
        given = Fingerprint.from_json(os.environ.get(FINGERPRINT_ENV))
    except ResultError as error:
        notes.append(f"{FINGERPRINT_ENV} ignored ({error}): the fingerprint was measured in the watcher")
        given = None
    found = given or measured(logs / "fingerprint", notes)
    if found is not None and (note := found.unsteady()):
        notes.append(note)
    return found


def measured(directory: Path, notes: list[str]) -> Fingerprint | None:
    try:
        return probe(directory, "watcher")
    except OSError as error:
        notes.append(f"no fingerprint: {error}")
        return None
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python3 -m syslogbench.rig.fingerprintprobes DIRECTORY", file=sys.stderr)
        return 2
    print(json.dumps(probe(Path(argv[0]), "container").to_dict(), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
