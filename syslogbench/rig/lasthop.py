"""The relay target (the last hop) of `destination: relay` scenarios.

The central daemon forwards every message over TCP to `lasthop` (contract.LASTHOP_PORT); this process writes the lines it gets
to one plain file and the DONE lines to done.log, like the baseline receiver (daemons/baseline/receiver.py),
so SEC ends the run only when the DONEs reached the last hop, and the reconciliation counts what arrived
here. `relay_target` sets how it reads:

- normal: as fast as it can;
- slow: at most SLOW_LINES_PER_S lines per second, so the central daemon's queue fills;
- pause: not at all for PAUSE_S seconds after the start signal (the connection stays open), then as fast as
  it can.
- pause-restart: as pause; meanwhile the watcher has the supervisor restart the central daemon, and the pause
  lasts until that restart is done (at most RESTART_HOLD_MAX_S more), so the restart always finds the messages
  in the daemon's queue.

In any other scenario it only waits for `finish`, looking twice a second, so it costs next to nothing. In every
scenario it reports its own CPU from the start signal to the end of the run (result: harness). Stdlib only: it
runs in the generator image. It needs no Docker socket; it talks to the watcher through the control volume
(docs/DESIGN.md).
"""

from __future__ import annotations

import os
import selectors
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from syslogbench import contract
from syslogbench.model import result, scenarios
from syslogbench.rig import cgroup, control

HOST = contract.LASTHOP_HOST
PORT = contract.LASTHOP_PORT
OUTPUT = "test.lasthop.all.log"
# The unterminated rest of a connection that ended inside a line: a message cut short, so not in OUTPUT, where
# the reconciliation would count it as delivered if the cut came after its sequence number.
FRAGMENTS = "lasthop.fragments.log"
# A small receive buffer: a slow or paused last hop pushes back on the central daemon after a few KiB, so the
# backlog sits in the daemon's queue (what is measured), not in the kernel's socket buffers.
RECEIVE_BUFFER = 64 * 1024
CHUNK = 256 * 1024
SLOW_CHUNK = 4096  # small reads keep the paced rate smooth
SLOW_LINES_PER_S = 25_000  # well below what either daemon forwards on this machine
PAUSE_S = 5.0
# pause-restart: a fixed 5 s pause raced the restart on a loaded machine (senders done at 12.5 s, the restart
# asked at 13.5 s, SEC fired 10 ms later: the run ended before the restart). The pause now waits for the
# supervisor's answer, bounded so that a daemon that never gets restarted cannot hold the run to its timeout;
# once the restart has begun (daemon/restarting), until it is done: a daemon saving its disk-assisted queue
# may take most of the supervisor's STOP_GRACE to stop, and a run that ended meanwhile recorded no restart.
RESTART_HOLD_MAX_S = 60.0
POLL_S = 0.1  # how often it looks at the control files
READY_FILE = Path("/tmp/lasthop-ready")  # its compose healthcheck; the central daemon starts after it
HEALTHY_FILE = Path("/tmp/lasthop-healthy")  # the healthcheck's own mark: healthy once, then it blocks
IDLE_POLL_S = 0.5


@dataclass(frozen=True)
class Behaviour:
    """How the last hop reads, fixed by the scenario's relay_target (deterministic, no tuning knobs)."""

    target: str
    lines_per_s: int = 0  # 0: unlimited
    pause_s: float = 0.0  # from the start signal
    hold_for_restart: bool = False  # the pause also lasts until the daemon has been restarted


def behaviour(relay_target: str) -> Behaviour:
    if relay_target == "slow":
        return Behaviour(relay_target, lines_per_s=SLOW_LINES_PER_S)
    if relay_target == "pause":
        return Behaviour(relay_target, pause_s=PAUSE_S)
    if relay_target == "pause-restart":  # the restart is the watcher's and the supervisor's part
        return Behaviour(relay_target, pause_s=PAUSE_S, hold_for_restart=True)
    if relay_target == "normal":
        return Behaviour(relay_target)
    raise ValueError(f"unknown relay_target {relay_target!r}")


def pace_delay(lines_per_s: int, lines: int, elapsed: float) -> float:
    """Seconds to wait before reading more, so `lines` read over `elapsed` seconds stay within the rate."""
    if lines_per_s <= 0:
        return 0.0
    return max(0.0, lines / lines_per_s - elapsed)


def pause_left(start_wall: float | None, pause_s: float, now_wall: float) -> float:
    """Seconds of the pause still to go; the pause runs from the start signal for pause_s seconds."""
    if start_wall is None or pause_s <= 0:
        return 0.0
    return max(0.0, start_wall + pause_s - now_wall)


def split_lines(buffer: bytes) -> tuple[bytes, bytes]:
    """(whole lines, the unterminated rest)."""
    cut = buffer.rfind(b"\n") + 1
    return buffer[:cut], buffer[cut:]


def done_lines(chunk: bytes) -> bytes:
    if b"DONE" not in chunk:
        return b""
    return b"".join(line for line in chunk.splitlines(keepends=True) if b"DONE" in line)


class LastHop:
    def __init__(self, how: Behaviour, out: int, done: int) -> None:
        self.how, self.out, self.done = how, out, done
        # What it saw, in the result model's own shape: the watcher records it under `relay.last_hop`.
        self.stats = result.LastHop(
            target=how.target, lines_per_s=how.lines_per_s, pause_s=how.pause_s, host=HOST, port=PORT,
            connections=0, lines=0, done_lines=0,
        )  # fmt: skip
        self.selector = selectors.DefaultSelector()
        self.partial: dict[socket.socket, bytes] = {}
        self.start_wall: float | None = None
        self.paced_from: float | None = None  # pace_clock's time of the first paced read
        # The pace's clock and its sleep (tests inject their own, as Measurer.sleep is).
        self.pace_clock: Callable[[], float] = time.monotonic
        self.pace_sleep: Callable[[float], None] = time.sleep
        self.paced_lines0 = 0
        self.server: socket.socket | None = None
        self.run0: float | None = None  # its own CPU at the start signal

    def since_start(self) -> float | None:
        return None if self.start_wall is None else round(time.time() - self.start_wall, 3)

    def listen(self, port: int = PORT) -> socket.socket:
        """Listen on port (0: any free port, for tests); the bound port is in stats.port."""
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Set before listen(), so every accepted connection inherits it (and its window scale).
        server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
        server.bind(("0.0.0.0", port))
        server.listen(128)
        server.setblocking(False)
        self.stats.port = server.getsockname()[1]
        self.stats.receive_buffer_bytes = server.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        self.selector.register(server, selectors.EVENT_READ)
        self.server = server
        return server

    def write(self, lines: bytes) -> None:
        if not lines:
            return
        os.write(self.out, lines)
        count = lines.count(b"\n")
        self.stats.lines += count
        self.stats.bytes += len(lines)
        now = self.since_start()
        if self.stats.first_line_s is None:
            self.stats.first_line_s = now
        self.stats.last_line_s = now
        if found := done_lines(lines):
            os.write(self.done, found)
            self.stats.done_lines += found.count(b"\n")

    def keep_fragment(self, piece: bytes) -> None:
        self.stats.fragments += 1
        fd = open_append(FRAGMENTS)
        try:
            os.write(fd, piece + b"\n")
        finally:
            os.close(fd)

    def accept(self, server: socket.socket) -> None:
        conn, _ = server.accept()
        conn.setblocking(False)
        self.selector.register(conn, selectors.EVENT_READ)
        self.partial[conn] = b""
        self.stats.connections += 1

    def read(self, conn: socket.socket) -> None:
        size = SLOW_CHUNK if self.how.lines_per_s else CHUNK
        try:
            data = conn.recv(size)
        except (BlockingIOError, InterruptedError):
            return
        except ConnectionError:
            self.stats.resets += 1
            data = b""
        buffer = self.partial[conn] + data
        if not data:  # the central daemon closed
            if buffer:
                self.keep_fragment(buffer)
            self.selector.unregister(conn)
            conn.close()
            del self.partial[conn]
            return
        whole, self.partial[conn] = split_lines(buffer)
        self.write(whole)

    def wait_for_pace(self) -> None:
        if not self.how.lines_per_s or not self.stats.lines:
            return
        if self.paced_from is None:
            self.paced_from = self.pace_clock()
            self.paced_lines0 = self.stats.lines
        lines = self.stats.lines - self.paced_lines0
        delay = pace_delay(self.how.lines_per_s, lines, self.pace_clock() - self.paced_from)
        if delay > 0:
            self.pace_sleep(min(delay, POLL_S))

    def waiting_for_restart(self) -> bool:
        """pause-restart: the daemon has not been restarted yet, and the bound on the wait is not reached."""
        if not self.how.hold_for_restart or self.start_wall is None:
            return False
        if control.CONTROL.daemon.restarted.exists():
            return False
        if time.time() - self.start_wall < self.how.pause_s + RESTART_HOLD_MAX_S:
            return True
        if control.CONTROL.daemon.restarting.exists():
            return True  # stopping: the supervisor's STOP_GRACE bounds it, then daemon/restarted comes
        note = f"the pause waited {RESTART_HOLD_MAX_S:g} s more and no restart came"
        if note not in self.stats.notes:
            self.stats.notes.append(note)
        return False

    def hold_during_pause(self) -> bool:
        """True while paused: read nothing (the kernel still holds the connection and its small buffer)."""
        left = pause_left(self.start_wall, self.how.pause_s, time.time())
        if left <= 0 and self.waiting_for_restart():
            left = POLL_S
        if left <= 0:
            if self.stats.paused_from_s is not None and self.stats.paused_until_s is None:
                self.stats.paused_until_s = self.since_start()
            return False
        if self.stats.paused_from_s is None:
            self.stats.paused_from_s = self.since_start()
        time.sleep(min(left, POLL_S))
        return True

    def look_at_control(self) -> None:
        if self.start_wall is None and control.CONTROL.start.exists():
            self.run0 = cgroup.own().cpu_total_s()
            self.start_wall = float(control.CONTROL.start.read_text().split()[0])
        answer_cpu_requests()

    def drained(self) -> bool:
        """The central daemon has exited, every connection from it has ended and none waits to be accepted."""
        if self.partial or not control.CONTROL.daemon.exit.exists():
            return False
        return not self.selector.select(timeout=0)

    def serve(self) -> None:
        """Read until the central daemon is gone (or finish), then report; listen() must have been called."""
        READY_FILE.touch()
        next_look = 0.0
        while True:
            if self.start_wall is None:  # every round until the start, so a pause begins on time
                self.look_at_control()
            if time.monotonic() >= next_look:
                next_look = time.monotonic() + POLL_S
                self.look_at_control()
                if control.CONTROL.finish.exists():
                    self.stats.notes.append("finish came before the central daemon's connections ended")
                    break
                if self.drained():
                    self.stats.drained_s = self.since_start()
                    break
            if self.hold_during_pause():
                continue
            self.wait_for_pace()
            for key, _ in self.selector.select(timeout=POLL_S):
                if key.fileobj is self.server:
                    self.accept(self.server)
                else:
                    self.read(key.fileobj)
        control.write_json(control.CONTROL.drained, asdict(self.stats))


def open_append(name: str) -> int:
    return os.open(control.LOGS / name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)


def wait_for_finish(timeout: float) -> None:
    control.wait_for(control.CONTROL.finish, timeout, "the finish signal", poll=IDLE_POLL_S)


def answer_cpu_requests() -> None:
    """A capacity trial's watcher asks for this cgroup's CPU at the trial's start and end: its share of the rig."""
    for request in control.CONTROL.lasthop_cpu.parent.glob("*.request"):
        name = request.name.removesuffix(".request")
        at = result.LastHopCpuAt(cpu_total_s=cgroup.own().cpu_total_s())
        control.write_json(control.CONTROL.lasthop_cpu_at(name), asdict(at))
        request.unlink(missing_ok=True)


def report_cpu(run0: float | None) -> None:
    """Its own CPU from the start signal (run0) to now, the end of the run."""
    run1 = cgroup.own().cpu_total_s()
    spent = None if run0 is None or run1 is None else round(run1 - run0, 6)
    control.write_json(control.CONTROL.lasthop_cpu, asdict(result.LastHopCpu(run_cpu_s=spent)))


def idle(lifetime: float) -> None:
    """No relay in this scenario: wait for the start, then the end of the run, then finish (no busy loop)."""
    try:
        control.wait_for_any(
            [control.CONTROL.start, control.CONTROL.finish], lifetime, "the start", IDLE_POLL_S
        )
    except control.WaitTimeout:
        return
    if control.CONTROL.start.exists():
        run0 = cgroup.own().cpu_total_s()
        control.wait_for_end(lifetime, IDLE_POLL_S)
        report_cpu(run0)
    wait_for_finish(lifetime)


def main() -> int:
    control.exit_on_sigterm()
    lifetime = float(os.environ.get("MAX_LIFETIME", "7200"))
    for mark in (READY_FILE, HEALTHY_FILE):  # a restarted container keeps its /tmp
        mark.unlink(missing_ok=True)
    control.wait_for(control.CONTROL.run_json, 300, "the watcher's run.json", poll=0.2)
    scenario = scenarios.load(os.environ.get("SCENARIO") or scenarios.DEFAULT)
    if scenario.destination != "relay":
        READY_FILE.touch()  # nothing to do here: idle until the run is over
        idle(lifetime)
        return 0
    hop = LastHop(behaviour(scenario.relay_target), open_append(OUTPUT), open_append(contract.DONE_LOG))
    hop.listen()
    print(f"lasthop: {scenario.relay_target} target on port {PORT}", flush=True)
    hop.serve()
    report_cpu(hop.run0)
    wait_for_finish(lifetime)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except control.WaitTimeout as error:
        print(f"lasthop: {error}", file=sys.stderr)
        sys.exit(1)
