"""The control channel between the generators and the watcher: one TCP connection per process, one JSON
object per line, each request answered by one line (docs/DESIGN.md, "The control channel").

The same protocol on one host (compose) and across hosts (Swarm): a generator needs nothing from the watcher's
node but this port. The watcher's side writes what it hears into its control directory (ready/, ledgers/,
generators/), which the watcher's other parts read as before; the daemon and the last hop, on the watcher's
node, keep sharing that directory with it. Stdlib only: runs in the watcher and generator containers.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from syslogbench import contract
from syslogbench.model import capacity
from syslogbench.model.ledger import Ledger
from syslogbench.rig import control

WATCHER = os.environ.get("WATCHER_HOST", contract.WATCHER_HOST)
PORT = int(os.environ.get("CONTROL_PORT", contract.CONTROL_PORT))
# A sender's id names its files in the control directory: nothing else may reach a path.
SENDER_NAME = re.compile(r"host\d+-s\d+")
# How often the watcher's side looks for the daemon's exit (the end op) and finish: each look costs the watcher
# CPU inside the measured window, and the end only tells the generators to read their CPU once more. The start
# is answered at once: the watcher calls Server.start().
POLL_S = 0.2
CLOSE_GRACE_S = 2.0  # after finish: time for the answers still owed to reach the generators


class ChannelError(RuntimeError):
    """The watcher refused a request, or the channel broke."""


# -- the generators' side --------------------------------------------------------------------------------------


class Link:
    """One process's connection to the watcher. Each process (the generator and each of its senders, which
    are forked) opens its own: a socket shared across fork would interleave their lines."""

    def __init__(self, host: str | None = None, port: int | None = None) -> None:
        self.host = WATCHER if host is None else host
        self.port = PORT if port is None else port
        self.sock: socket.socket | None = None
        self.reader = None

    def connect(self, timeout: float) -> None:
        """Retried until timeout: the watcher opens its port once it has reset the volumes."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.create_connection((self.host, self.port), timeout=10)
                self.reader = self.sock.makefile("rb")
                return
            except OSError as error:
                if time.monotonic() > deadline:
                    raise control.WaitTimeout(
                        f"cannot reach the watcher at {self.host}:{self.port}: {error}"
                    ) from error
                time.sleep(0.2)

    def call(self, op: str, timeout: float | None = 60, **fields: object) -> dict:
        if self.sock is None or self.reader is None:
            self.connect(timeout or 300)
        assert self.sock is not None and self.reader is not None
        self.sock.settimeout(timeout)
        self.sock.sendall(json.dumps({"op": op, **fields}).encode() + b"\n")
        try:
            line = self.reader.readline()
        except TimeoutError as error:
            raise control.WaitTimeout(
                f"gave up after {timeout:.0f} s waiting for the watcher's {op}"
            ) from error
        if not line:
            raise ChannelError(f"the watcher closed the control channel (while asked for {op})")
        answer = json.loads(line)
        if "error" in answer:
            raise ChannelError(f"the watcher refused {op}: {answer['error']}")
        return answer

    def hello(self, timeout: float) -> dict:
        """The run's settings, this generator's host number (1..; above the run's hosts: not needed), and a TLS
        scenario's CA certificate (PEM text, or None)."""
        self.connect(timeout)
        return self.call("hello")

    def wait_listening(self, timeout: float) -> None:
        """Until the daemon listens. A sender connects only then: asked for the daemon's name while its
        container was created but not started, Docker's DNS gave no answer, and glibc waited its 5 s."""
        if "listening" not in self.call("listening", timeout=timeout):
            raise control.WaitTimeout("the watcher finished the run before the daemon listened")

    def ready(self, sender: str) -> None:
        self.call("ready", sender=sender)

    def wait_start(self, timeout: float) -> float:
        """The start signal's wall-clock time; the watcher's finish (it gave up before the start) ends it too."""
        answer = self.call("start", timeout=timeout)
        if "start" not in answer:
            raise control.WaitTimeout("the watcher finished the run before giving the start signal")
        return float(answer["start"])

    def ledger(self, sender: str, ledger: Ledger, only_if_absent: bool = False) -> None:
        self.call("ledger", sender=sender, ledger=ledger.to_json(), only_if_absent=only_if_absent)

    def wait_end(self, timeout: float) -> None:
        """Until the end of the run (the daemon's exit, or finish), for the harness's own CPU figure."""
        self.call("end", timeout=timeout)

    def clock_check(self, rounds: int) -> capacity.ClockCheck:
        """This node's clock against the watcher's: `rounds` round trips, the shortest kept (NTP's way)."""
        samples = []
        for _ in range(rounds):
            sent = time.time()
            remote = float(self.call("clock")["now"])
            samples.append((sent, remote, time.time()))
        return capacity.best_round_trip(samples)

    def generator(self, host: int, report: dict) -> None:
        self.call("generator", host=host, report=report)

    def wait_finish(self, timeout: float) -> None:
        """Until the run is over; a watcher that is gone has finished too."""
        try:
            self.call("finish", timeout=timeout)
        except (ChannelError, ConnectionError):
            return


_links: dict[int, Link] = {}


def link() -> Link:
    """This process's link (a forked sender gets its own on first use)."""
    pid = os.getpid()
    if pid not in _links:
        _links[pid] = Link()
    return _links[pid]


# -- the watcher's side ----------------------------------------------------------------------------------------


class Server:
    """Answers the generators from the watcher's control directory; a thread per connection (at most one per
    sender, plus one per generator)."""

    def __init__(self, names: contract.Control, port: int | None = None) -> None:
        self.names = names
        port = PORT if port is None else port
        self.started, self.ended, self.finished = threading.Event(), threading.Event(), threading.Event()
        self.listening = threading.Event()  # the supervisor wrote daemon/ready: the daemon listens
        self.waiting = 0
        self.lock = threading.Lock()
        # host number -> when its generator's connection closed before finish: a generator that ends (by
        # itself, or stopped by compose) closes it, so the earliest names the generator that ended first.
        self.closed: dict[int, float] = {}
        self.listener = socket.create_server(("", port), reuse_port=False, backlog=256)
        # Ops served by another part of the watcher (a capacity run's trials: rig/trialserver.py), by op name.
        self.handlers: dict[str, Callable[[dict], dict]] = {}
        self.port = self.listener.getsockname()[1]

    def open(self) -> None:
        threading.Thread(target=self.accept, daemon=True, name="channel-accept").start()
        threading.Thread(target=self.watch, daemon=True, name="channel-watch").start()

    def finish(self) -> None:
        """Finish answers every request still waiting: each waits on its own event, woken here, not by a poll
        (25 threads looking 20 times a second cost the watcher more CPU than all else it did in a run)."""
        self.finished.set()
        self.listening.set()
        self.started.set()
        self.ended.set()

    def close(self, grace: float = CLOSE_GRACE_S) -> None:
        """After finish: let the answers owed go out, then stop listening."""
        self.finish()
        deadline = time.monotonic() + grace
        while self.waiting and time.monotonic() < deadline:
            time.sleep(0.01)
        # shutdown wakes the accepting thread (on Linux); close alone would leave the port listening until then.
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()

    def watch(self) -> None:
        """The watcher writes start and finish, the supervisor daemon/exit, as files (the daemon's supervisor
        and the last hop read them): one thread turns them into events for every connection."""
        while not self.finished.is_set():
            if not self.listening.is_set() and self.names.daemon.ready.exists():
                self.listening.set()
            if not self.started.is_set() and self.names.start.exists():
                self.started.set()
            if not self.ended.is_set() and self.names.daemon.exit.exists():
                self.ended.set()
            if self.names.finish.exists():
                self.finish()
            time.sleep(POLL_S)

    def start(self) -> None:
        """The watcher wrote start: answer the senders now rather than at the next look."""
        self.started.set()

    def accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self.session, args=(conn,), daemon=True).start()

    def session(self, conn: socket.socket) -> None:
        host = None
        try:
            with conn, conn.makefile("rwb") as stream:
                for line in stream:
                    try:
                        answer = self.answer(json.loads(line))
                    except (ValueError, KeyError, TypeError, OSError) as error:
                        answer = {"error": f"{type(error).__name__}: {error}"}
                    host = answer.get("host", host) if "settings" in answer else host  # a generator's hello
                    stream.write(json.dumps(answer).encode() + b"\n")
                    stream.flush()
        except OSError:
            pass
        if host is not None and not self.finished.is_set():
            self.closed.setdefault(int(host), time.time())

    def first_closed(self) -> str | None:
        """Which generator's connection closed first, and when (UTC), or None."""
        if not self.closed:
            return None
        host, when = min(self.closed.items(), key=lambda item: item[1])
        return f"generator host {host} (its control connection closed at {time.strftime('%H:%M:%S', time.gmtime(when))} UTC)"

    def answer(self, request: dict) -> dict:
        op = request.get("op")
        if op == "clock":  # first: read as close to the request's arrival as this thread can
            return {"now": time.time()}
        if op == "hello":
            return self.hello()
        if op == "ready":
            control.write_atomic(self.names.ready(sender_name(request)), "")
            return {}
        if op == "listening":
            return self.until(self.listening)
        if op == "start":
            return self.until(self.started)
        if op == "ledger":
            return self.ledger(sender_name(request), request["ledger"], bool(request.get("only_if_absent")))
        if op == "end":
            return self.until(self.ended)
        if op == "generator":
            control.write_json(self.names.generator(int(request["host"])), request["report"])
            return {}
        if op == "finish":
            return self.until(self.finished)
        if op in self.handlers:
            return self.handlers[op](request)
        raise ValueError(f"unknown op {op!r}")

    def hello(self) -> dict:
        ca = self.names.tls_file("ca.pem")
        run = control.read_json(self.names.run_json)
        return {
            "settings": run["settings"],
            "capacity": bool(run.get("capacity")),  # a capacity run: trials until finish (rig/trials.py)
            "host": control.claim_index(self.names.hosts, sys.maxsize),
            "ca": ca.read_text() if ca.exists() else None,
        }

    def ledger(self, sender: str, ledger: dict, only_if_absent: bool) -> dict:
        path = self.names.ledger(sender)
        if not (only_if_absent and path.exists()):
            control.write_json(path, ledger)
        return {}

    def until(self, event: threading.Event) -> dict:
        """Answer when event (start, end or finish) happens, or finish does (which sets them all)."""
        with self.lock:
            self.waiting += 1
        try:
            event.wait()
        finally:
            with self.lock:
                self.waiting -= 1
        if event is self.started and self.names.start.exists():
            return {"start": float(self.names.start.read_text().split()[0])}
        if event is self.listening and not self.finished.is_set():
            return {"listening": True}
        return {"finish": True}


def sender_name(request: dict) -> str:
    name = str(request["sender"])
    if not SENDER_NAME.fullmatch(name):
        raise ValueError(f"not a sender id: {name!r}")
    return name


def ca_file(pem: str | None, directory: Path) -> Path | None:
    """Where a generator keeps the run's CA certificate it got from the watcher (TLS scenarios)."""
    if pem is None:
        return None
    path = directory / "ca.pem"
    path.write_text(pem)
    return path


def main() -> int:
    """The channel alone, without a watcher (the sender calibration's): it answers over CONTROL_DIR, where
    the caller writes run.json, start and finish, and ends at finish."""
    server = Server(control.CONTROL)
    server.open()
    while not server.finished.wait(0.1):
        pass
    server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
