"""Trials against a running daemon, for the capacity search (docs/capacity.md).

In a capacity run (CAPACITY=1) the daemon, the watcher and the generators stay up; the host asks for one
trial at a time, `trial_run` on the control channel, through `docker compose exec` into the watcher
(`python3 -m syslogbench.rig.trials run RATE DURATION`), and the watcher answers with the trial's record once
its late messages are counted. Each trial:

- the senders get its rate and message count (`trial`), render their messages, each with the trial's own
  sequence numbers (model.capacity.trial_seq), and say so (`trial_ready`); the watcher then gives one start
  time to all;
- each sender sends open loop: message i is due at start + i/rate, a sender that falls behind sends what is
  due at once and never stretches its schedule; it reports what it sent (`trial_ledger`);
- the watcher follows the output files every SAMPLE_S and reads only the new lines' keys: a line first seen at
  sample t arrived in (t_prev, t], and its latency is t minus its intended time. The trial ends when every
  message has arrived, or LATENCY_BOUND + LATE_WATCH_S after the last one was due (any arrival after that
  would be late anyway).

Stdlib only: runs in the watcher and generator containers.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import multiprocessing
import os
import re
import resource
import socket
import sys
import threading
import time
from array import array
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from syslogbench.contract import OUTPUT_RE
from syslogbench.model import capacity, preprocess, scenarios, settings, userconfig
from syslogbench.model.capacity import SenderTrial
from syslogbench.model.messages import (
    SenderId,
    bsd_timestamp,
    datagram,
    iso_timestamp,
    pri_stream,
    render_line,
)
from syslogbench.rig import channel, control

SAMPLE_S = 0.02  # how often the watcher looks at the output during a trial: the latency's resolution
LATE_WATCH_S = 2.0  # after the bound: how long late arrivals are still counted as late, not lost
READY_WAIT_S = 120.0  # rendering a trial's messages, on a busy machine
START_LEAD_S = 0.2  # from the last sender's trial_ready to the common start
LEDGER_WAIT_S = 30.0
EXIT_SHOWS_S = 5.0  # a sender saw the daemon's connection fail: how long its exit may take to show
# Before a trial, the earlier ones' messages must have drained out of the daemon: a throttled syslog-ng
# still wrote a 4,000 msg/s trial's backlog seconds later, and made the next trials' messages late.
DRAIN_QUIET_S = 0.5  # no line of an earlier trial for this long
DRAIN_MAX_S = 60.0  # after the give-up time, for the senders' reports
SEND_LOOK_S = 0.25  # a TCP send blocked this long looks at the give-up time
TICK_S = 0.005  # a sender sleeps at least this long between batches
# A sender more than this behind its schedule at its last message has fallen behind (plus 5% of the trial).
BEHIND_S = 0.1
LINE_KEY = re.compile(rb"syslogbench h=(\d+) s=(\d+) q=(\d+)")
CAPACITY_ENV = "CAPACITY"
# A message's bytes -> the TLS records that carry them (rig/sender.py's TlsClient.encrypt).
Encrypt = Callable[[bytes | memoryview], bytes]
# transport -> a socket connected to the daemon, and over TLS what encrypts for it (the handshake done)
Opener = Callable[[str], tuple[socket.socket, Encrypt | None]]
SendRange = Callable[[int, int], int]  # send messages [first, last): the number now handed over
RECORD_BYTES = (
    16_384  # TLS's largest record: one record per encrypt, so a record partly sent holds all it has
)


def enabled() -> bool:
    return bool(os.environ.get(CAPACITY_ENV))


# -- the watcher's side: following the output ------------------------------------------------------------------


class Follower:
    """Reads what was appended to the output files since the last look, whole lines only: the files of our
    own layout (names), or with everywhere=True every file under the directory, as a user's config writes
    them (--config)."""

    def __init__(self, directory: Path, names: re.Pattern, everywhere: bool = False) -> None:
        self.directory, self.names, self.everywhere = directory, names, everywhere
        self.offsets: dict[str, int] = {}
        self.partial: dict[str, bytes] = {}

    def files(self) -> list[tuple[str, str, int]]:
        """(name, path, size) of every file followed."""
        if not self.everywhere:
            return [
                (e.name, e.path, e.stat().st_size)
                for e in os.scandir(self.directory)
                if self.names.match(e.name)
            ]
        found = []
        for root, _, names in os.walk(self.directory):
            for name in names:
                path = os.path.join(root, name)
                with contextlib.suppress(OSError):
                    found.append((os.path.relpath(path, self.directory), path, os.stat(path).st_size))
        return found

    def skip_to_end(self) -> None:
        """Start from what is there now (a capacity run's volume is empty at first; this is for safety)."""
        for name, _, size in self.files():
            self.offsets[name] = size

    def forget(self) -> None:
        """Drop what was read from the page cache, between trials. The daemon's cgroup is charged for the
        cache of what it wrote; left there, a search's earlier trials fill its memory limit (2 GB in the
        seed), and a later trial's writes wait for reclaim and writeback: trials would not be alike. Pages
        still dirty stay (the kernel starts their writeback)."""
        for _, path, _ in self.files():
            with contextlib.suppress(OSError), open(path, "rb") as handle:
                os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)

    def keys(self) -> list[tuple[bytes, bytes, bytes]]:
        """(host, sender, seq) of every whole line appended since the last call."""
        return [key for _, keys in self.batches() for key in keys]

    def batches(self) -> list[tuple[float, list[tuple[bytes, bytes, bytes]]]]:
        """Per file with new whole lines: when its bytes were read (each line was written by then), and the
        lines' keys. The time is taken before the lines are parsed, so that parsing a large backlog does not
        make its lines look later than they were."""
        found = []
        for name, path, size in self.files():
            offset = self.offsets.get(name, 0)
            if size <= offset:
                continue
            with open(path, "rb") as handle:
                handle.seek(offset)
                data = self.partial.pop(name, b"") + handle.read(size - offset)
            read_at = time.time()
            self.offsets[name] = size
            cut = data.rfind(b"\n") + 1
            if cut < len(data):
                self.partial[name] = data[cut:]
            found.append((read_at, LINE_KEY.findall(data, 0, cut)))
        return found


class Tally:
    """One trial's arrivals: per sender, which indexes arrived, when, and how late."""

    def __init__(
        self, trial: int, rate: float, messages: int, start: float, bound_s: float, copies: bool = False
    ) -> None:
        """copies: a message seen again is a copy (a user's config writes some to several files on purpose),
        not a duplicate."""
        self.trial, self.rate, self.messages, self.start, self.bound_s = trial, rate, messages, start, bound_s
        self.seen: dict[str, bytearray] = {}
        self.received: dict[str, int] = {}
        self.late: dict[str, int] = {}
        self.duplicated: dict[str, int] = {}
        self.copies: dict[str, int] = {}
        self.again = self.copies if copies else self.duplicated  # where a second sighting counts
        self.histogram: dict[int, int] = {}
        self.stale = 0  # lines of other trials
        self.longest_gap = 0.0  # seconds between two looks at the output, at most

    def arrive(self, keys: list[tuple[bytes, bytes, bytes]], seen_at: float) -> None:
        for host, sender, seq in keys:
            trial, index = capacity.trial_of(int(seq))
            if trial != self.trial or not 0 <= index < self.messages:
                self.stale += 1
                continue
            name = f"host{int(host)}-s{int(sender)}"
            flags = self.seen.setdefault(name, bytearray(self.messages))
            if flags[index]:
                self.again[name] = self.again.get(name, 0) + 1
                continue
            flags[index] = 1
            self.received[name] = self.received.get(name, 0) + 1
            latency = seen_at - capacity.intended_time(self.start, index, self.rate)
            if latency > self.bound_s:
                self.late[name] = self.late.get(name, 0) + 1
            value = capacity.rounded_us(latency)
            self.histogram[value] = self.histogram.get(value, 0) + 1

    def total_received(self) -> int:
        return sum(self.received.values())

    def sender(self, name: str, ledger: dict | None) -> SenderTrial:
        """One sender's accounting, against its report (none: it sent nothing we know of)."""
        ledger = ledger or {}
        sent = int(ledger.get("sent", 0))
        received = self.received.get(name, 0)
        return SenderTrial(
            id=name,
            intended=self.messages,
            sent=sent,
            received=received,
            lost=sent - received,
            late=self.late.get(name, 0),
            duplicated=self.duplicated.get(name, 0),
            copies=self.copies.get(name, 0),
            rate_target=round(self.rate, 3),
            rate_achieved=ledger.get("rate_achieved"),
            sender_bound=bool(ledger.get("sender_bound")),
            status=str(ledger.get("status", "no report from this sender")),
        )


def percentiles_ms(histogram: dict[int, int]) -> dict[str, float | None]:
    """p50 ... max from {us: count} (the host recomputes them with HdrHistogram; this is the watcher's own)."""
    total = sum(histogram.values())
    out: dict[str, float | None] = dict.fromkeys([*capacity.PERCENTILES, "max"])
    if not total:
        return out
    values = sorted(histogram)
    for name, pct in capacity.PERCENTILES.items():
        rank, seen = pct / 100 * total, 0
        for value in values:
            seen += histogram[value]
            if seen >= rank:
                out[name] = value / 1000
                break
    out["max"] = values[-1] / 1000
    return out


# -- the watcher's side: the trials ---------------------------------------------------------------------------


class Trials:
    """The trial ops of the control channel (channel.Server.handlers), and one trial at a time."""

    def __init__(self, cfg: settings.Settings, senders: list[str], bound_s: float) -> None:
        self.cfg, self.names, self.bound_s = cfg, senders, bound_s
        self.changed = threading.Condition()
        self.spec: dict | None = None  # the current trial, as the senders get it
        self.ready: set[str] = set()
        self.ledgers: dict[str, dict] = {}
        self.number = 0
        self.over = threading.Event()  # trial_end, or the watcher gave up
        self.ready_to_run = threading.Event()  # the daemon and every sender are up
        self.failure: str | None = None
        self.one_at_a_time = threading.Lock()
        # A user's config (--config) writes our lines wherever it likes, some of them to several files.
        self.user_config = userconfig.from_env(os.environ) is not None
        self.follower = Follower(control.LOGS, OUTPUT_RE, everywhere=self.user_config)
        self.snapshot: Callable[[str], object] | None = None  # run.take_snapshot, set by serve()
        self.own_cpu: Callable[[], float | None] = lambda: None
        self.machine: dict | None = None  # the daemon's machine, sent with the first trial's record

    def handlers(self) -> dict[str, Callable[[dict], dict]]:
        return {
            "trial": self.next_trial,
            "trial_ready": self.sender_ready,
            "trial_ledger": self.ledger,
            "trial_run": self.run,
            "trial_end": self.end,
        }

    # the senders' ops

    def next_trial(self, request: dict) -> dict:
        """A sender's long wait for the trial after `after`, or finish."""
        after = int(request.get("after", 0))
        with self.changed:
            self.changed.wait_for(lambda: self.over.is_set() or (self.spec and self.spec["trial"] > after))
            if self.over.is_set():
                return {"finish": True}
            return dict(self.spec or {})

    def sender_ready(self, request: dict) -> dict:
        """Rendered: wait until every sender is, then all get one start time."""
        name, trial = channel.sender_name(request), int(request["trial"])
        with self.changed:
            if not self.spec or self.spec["trial"] != trial:
                return {"error": f"trial {trial} is not the current one"}
            self.ready.add(name)
            if len(self.ready) == len(self.names) and "start" not in self.spec:
                self.spec["start"] = start = time.time() + START_LEAD_S
                # Past this, a message is late whenever it arrives: the senders stop, the watcher counts.
                self.spec["give_up"] = start + self.spec["duration"] + self.bound_s + LATE_WATCH_S
                self.changed.notify_all()
            self.changed.wait_for(lambda: "start" in (self.spec or {}) or self.over.is_set(), READY_WAIT_S)
            if not self.spec or "start" not in self.spec:
                return {"error": "the other senders were not ready in time"}
            return {"start": self.spec["start"], "give_up": self.spec["give_up"]}

    def ledger(self, request: dict) -> dict:
        name = channel.sender_name(request)
        with self.changed:
            if self.spec and int(request["trial"]) == self.spec["trial"]:
                self.ledgers[name] = dict(request["ledger"])
                self.changed.notify_all()
        return {}

    # the host's ops

    def end(self, request: dict) -> dict:
        with self.changed:
            self.over.set()
            self.changed.notify_all()
        return {}

    def run(self, request: dict) -> dict:
        """One trial at the total rate `rate` msg/s for `duration` s; its record (model.capacity.Trial)."""
        rate, duration = float(request["rate"]), float(request["duration"])
        if not self.ready_to_run.wait(float(request.get("wait", READY_WAIT_S))):
            return {"error": self.failure or "the daemon and the senders were not ready in time"}
        if self.failure:
            return {"error": self.failure}
        with self.one_at_a_time:
            return self.trial(rate, duration)

    def trial(self, rate: float, duration: float) -> dict:
        per_sender = rate / len(self.names)
        messages = max(1, round(per_sender * duration))
        if (code := daemon_exit()) is not None:
            # No "error" key: the channel would turn the answer into a refusal and lose the exit code.
            return {"daemon_exit": code}
        stale_before, drain_s = self.drain()
        self.follower.forget()
        with self.changed:
            self.number += 1
            self.ready, self.ledgers = set(), {}
            self.spec = {"trial": self.number, "rate": per_sender, "messages": messages, "duration": duration,
                         "bound": self.bound_s}  # fmt: skip
            self.changed.notify_all()
            ok = self.changed.wait_for(lambda: "start" in self.spec or self.over.is_set(), READY_WAIT_S)
        if not ok or self.over.is_set():
            missing = ", ".join(sorted(set(self.names) - self.ready)) or "none"
            return {"error": f"trial {self.number}: the senders were not ready after {READY_WAIT_S:.0f} s "
                             f"(not ready: {missing}; a sender's process that died says why in the "
                             "generator's log)"}  # fmt: skip
        start, give_up = self.spec["start"], self.spec["give_up"]
        before = self.take("start")
        cpu0 = self.own_cpu()
        tally = Tally(self.number, per_sender, messages, start, self.bound_s, copies=self.user_config)
        looks = self.follow(tally, give_up)
        died = self.exit_if_senders_failed()
        after = self.take("end") if died is None else None
        cpu = self.own_cpu()
        record = self.record(tally, rate, duration, looks, before, after, cpu0, cpu, died)
        record["drain_s"], record["drained_lines"] = drain_s, stale_before
        if self.number == 1 and self.machine:
            record["machine"] = self.machine
        if drain_s >= DRAIN_MAX_S:
            record["errors"].append(f"earlier trials' lines were still arriving after {DRAIN_MAX_S:.0f} s")
        return record

    def exit_if_senders_failed(self) -> int | None:
        """The daemon's exit code, if it has exited. A sender whose connection failed may have seen the
        daemon die before its supervisor wrote the exit (a few ms later): wait that long, so the trial says
        the daemon died rather than that a sender failed."""
        with self.changed:
            failed = any(str(r.get("status", "")).startswith("failed") for r in self.ledgers.values())
        deadline = time.monotonic() + (EXIT_SHOWS_S if failed else 0)
        while (code := daemon_exit()) is None and time.monotonic() < deadline:
            time.sleep(SAMPLE_S)
        return code

    def drain(self) -> tuple[int, float]:
        """Wait until no line of an earlier trial has arrived for DRAIN_QUIET_S (at most DRAIN_MAX_S): the
        lines it read, and how long it waited."""
        began = last = time.monotonic()
        stale = 0
        while (now := time.monotonic()) - last < DRAIN_QUIET_S and now - began < DRAIN_MAX_S:
            time.sleep(SAMPLE_S)
            if found := len(self.follower.keys()):
                stale, last = stale + found, time.monotonic()
        return stale, round(time.monotonic() - began, 3)

    def follow(self, tally: Tally, give_up: float) -> int:
        """Sample the output until every message sent is in, or the give-up time and every report are.
        Keeps the longest gap between two looks (tally.longest_gap): the latency's worst resolution."""
        looks, previous = 0, time.time()
        while True:
            time.sleep(SAMPLE_S)
            # A line read at t was written at the latest t (and after the last look at its file).
            for read_at, keys in self.follower.batches():
                tally.arrive(keys, read_at)
            now = time.time()
            tally.longest_gap, previous = max(tally.longest_gap, now - previous), now
            looks += 1
            with self.changed:
                reports = dict(self.ledgers)
            all_in = len(reports) == len(self.names)
            sent = sum(int(r.get("sent", 0)) for r in reports.values())
            if all_in and tally.total_received() >= sent:
                return looks
            if now > give_up and (all_in or now > give_up + LEDGER_WAIT_S):
                return looks
            if daemon_exit() is not None:
                return looks

    def take(self, moment: str) -> object | None:
        if self.snapshot is None:
            return None
        try:
            return self.snapshot(f"trial{self.number}-{moment}")
        except (OSError, ValueError, control.WaitTimeout):
            return None

    def record(
        self,
        tally: Tally,
        rate: float,
        duration: float,
        looks: int,
        before: object | None,
        after: object | None,
        cpu0: float | None,
        cpu1: float | None,
        died: int | None,
    ) -> dict:
        with self.changed:
            reports = dict(self.ledgers)
        senders = [tally.sender(name, reports.get(name)) for name in self.names]
        totals = capacity.trial_totals(senders)
        achieved = [s.rate_achieved for s in senders]
        elapsed = time.time() - tally.start
        udp = udp_delta(before, after)
        failed = [f"{s.id}: {s.status}" for s in senders if s.status.startswith("failed")]
        errors = [f"the daemon exited with code {died} during this trial"] if died is not None else failed
        return {
            "number": self.number,
            "offered_msgs_per_s": rate,
            "duration_s": duration,
            **totals,
            "achieved_msgs_per_s": round(sum(achieved), 1) if all(a is not None for a in achieved) else None,
            "sender_bound": any(s.sender_bound for s in senders),
            "latency_ms": percentiles_ms(tally.histogram),
            "latency_histogram_us": {str(k): v for k, v in sorted(tally.histogram.items())},
            "sample_s": round(elapsed / looks, 4) if looks else None,
            "sample_max_s": round(tally.longest_gap, 4),
            "stale_lines": tally.stale,
            "daemon_cpu_s": cpu_delta(before, after),
            "watcher_cpu_s": None if cpu0 is None or cpu1 is None else round(cpu1 - cpu0, 3),
            "udp_rcvbuf_errors": udp.get("RcvbufErrors") if udp else None,
            "udp_in_errors": udp.get("InErrors") if udp else None,
            "senders": [asdict(s) for s in senders],
            "daemon_exit": died,
            "errors": errors,
        }


def cpu_delta(before: object | None, after: object | None) -> float | None:
    start, end = getattr(before, "cpu_total_s", None), getattr(after, "cpu_total_s", None)
    return None if start is None or end is None else round(end - start, 4)


def udp_delta(before: object | None, after: object | None) -> dict[str, int] | None:
    start, end = getattr(before, "udp", None), getattr(after, "udp", None)
    if not start or not end:
        return None
    return {key: end[key] - start.get(key, 0) for key in end}


def daemon_exit() -> int | None:
    path = control.CONTROL.daemon.exit
    if not path.exists():
        return None
    try:
        return int(path.read_text().strip() or -1)
    except ValueError:
        return -1


# -- the generators' side -----------------------------------------------------------------------------------


def render(
    sender: SenderId, cfg: settings.Settings, scenario: scenarios.Scenario, spec: dict
) -> tuple[bytes, array]:
    """The trial's messages, one after the other (datagrams for UDP), and each one's end offset."""
    trial, count = int(spec["trial"]), int(spec["messages"])
    width = len(str(capacity.trial_seq(trial, count)))
    pris = pri_stream(cfg.seed + trial, sender)
    payload = preprocess.payload(scenario.preprocess)
    now = time.time()
    stamp = iso_timestamp(now) if scenario.format == "rfc5424" else bsd_timestamp(now)
    ends, parts, offset = array("Q"), [], 0
    for index in range(count):
        line = render_line(sender, capacity.trial_seq(trial, index), next(pris), stamp, width,
                           size=scenario.message_bytes, fmt=scenario.format, payload=payload)  # fmt: skip
        if scenario.transport == "udp":
            line = datagram(line, scenario.format)
        offset += len(line)
        ends.append(offset)
        parts.append(line)
    return b"".join(parts), ends


def open_loop(
    count: int,
    rate: float,
    start: float,
    give_up: float,
    send_range: SendRange,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[int, float, float]:
    """Send messages [0, count): message i is due at start + i/rate. A sender behind its schedule sends all
    that is due at once, and stays behind: the schedule never stretches. Stops at give_up (what is left is
    unsent). Returns (messages sent, when the last one was handed over, the longest oversleep): a sleep that
    ends long after it should is the sender's own scheduling, not the daemon's backpressure."""
    sent, last, oversleep = 0, start, 0.0
    if (wait := start - clock()) > 0:
        sleep(wait)
    while sent < count:
        now = clock()
        if now > give_up:
            break
        due = min(count, int((now - start) * rate + 1e-6) + 1)
        if due > sent:
            sent = send_range(sent, due)
            last = clock()
        # Behind: the next round at once. On time: sleep until the next message is due, at least a tick.
        if sent < count and (wait := start + sent / rate - clock()) > 0:
            wake = clock() + max(TICK_S, wait)
            sleep(max(0.0, wake - clock()))  # descheduled since the line above: do not sleep at all
            oversleep = max(oversleep, clock() - wake)
    return sent, last, oversleep


def udp_sender(sock: socket.socket, data: bytes, ends: array, give_up: float) -> SendRange:
    view = memoryview(data)

    def send_range(first: int, last: int) -> int:
        begin = ends[first - 1] if first else 0
        for index in range(first, last):
            sock.send(view[begin : ends[index]])
            begin = ends[index]
        return last

    return send_range


def tcp_sender(sock: socket.socket, data: bytes, ends: array, give_up: float) -> SendRange:
    """Sends whole messages: blocked past give_up, it still finishes the message it is in, so the next
    trial's first line is not glued to half of this one's."""
    view = memoryview(data)

    def send_range(first: int, last: int) -> int:
        pos, stop = (ends[first - 1] if first else 0), ends[last - 1]
        sock.settimeout(SEND_LOOK_S)
        while pos < stop:
            try:
                pos += sock.send(view[pos:stop])
            except TimeoutError:
                if time.time() > give_up:
                    break
        whole = bisect.bisect_right(ends, pos)  # messages whose every byte is out
        if pos < stop and whole < len(ends) and pos > (ends[whole - 1] if whole else 0):
            sock.settimeout(None)
            sock.sendall(view[pos : ends[whole]])
            whole += 1
        return whole

    return send_range


class TlsSends:
    """A TLS connection's sends over every trial. Messages go out as whole records of at most RECORD_BYTES;
    a message counts as handed over once its record is all in the kernel (the daemon cannot read a record
    sooner). What a trial's give-up time left unsent of a record goes first in the next trial, since the
    stream must stay whole: its messages count as unsent in their trial, and arrive as an earlier trial's."""

    def __init__(self, sock: socket.socket, encrypt: Encrypt) -> None:
        self.sock, self.encrypt = sock, encrypt
        self.pending = b""

    def push(self, give_up: float) -> bool:
        """Hand the pending records to the kernel; False if the give-up time came first (the rest kept)."""
        out, pos = memoryview(self.pending), 0
        self.sock.settimeout(SEND_LOOK_S)
        while pos < len(out):
            try:
                pos += self.sock.send(out[pos:])
            except TimeoutError:
                if time.time() > give_up:
                    break
        self.pending = bytes(out[pos:])
        return not self.pending

    def sender(self, sock: socket.socket, data: bytes, ends: array, give_up: float) -> SendRange:
        view = memoryview(data)

        def send_range(first: int, last: int) -> int:
            if not self.push(give_up):  # an earlier trial's record first
                return first
            whole = first
            while whole < last:
                begin = ends[whole - 1] if whole else 0
                upto = max(whole + 1, bisect.bisect_right(ends, begin + RECORD_BYTES, whole, last))
                self.pending = self.encrypt(view[begin : ends[upto - 1]])
                if not self.push(give_up):
                    break
                whole = upto
            return whole

        return send_range


def one_trial(
    link: channel.Link, sender: SenderId, cfg: settings.Settings, scenario: scenarios.Scenario,
    sock: socket.socket, spec: dict, tls: TlsSends | None = None,
) -> dict:  # fmt: skip
    """Render, wait for the common start, send open loop; the ledger of this trial."""
    data, ends = render(sender, cfg, scenario, spec)
    trial, count, rate = int(spec["trial"]), int(spec["messages"]), float(spec["rate"])
    answer = link.call("trial_ready", timeout=READY_WAIT_S + 10, sender=sender.name, trial=trial)
    start, give_up = float(answer["start"]), float(answer["give_up"])
    make = tls.sender if tls else (udp_sender if scenario.transport == "udp" else tcp_sender)
    cpu0 = cpu_seconds()
    sent, last, oversleep = open_loop(count, rate, start, give_up, make(sock, data, ends, give_up))
    cpu = cpu_seconds() - cpu0
    pace = max(last - start, (count - 1) / rate, 1e-6)
    behind = last - capacity.intended_time(start, count - 1, rate) if sent else 0.0
    fell_behind = sent < count or behind > BEHIND_S + 0.05 * count / rate
    # Over UDP nothing pushes back: a sender behind its schedule was short of CPU. Over TCP it may be the
    # daemon's backpressure (blocked in send, no CPU spent): behind with its CPU busy most of the time is ours.
    # A sender that woke more than half the bound late made its own messages late, whatever the daemon did.
    late_itself = oversleep > float(spec["bound"]) / 2
    sender_bound = late_itself or (fell_behind and (scenario.transport == "udp" or cpu > 0.75 * pace))
    return {
        "sent": sent,
        "intended": count,
        "rate_achieved": round(sent / pace, 1),
        "behind_s": round(behind, 4),
        "cpu_s": round(cpu, 4),
        "oversleep_s": round(oversleep, 4),
        "sender_bound": sender_bound,
        "status": "ok"
        if sent == count
        else f"gave up: {count - sent} not handed to the kernel by the trial's end",
    }


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def sender_main(sender: SenderId, cfg: settings.Settings, open_socket: Opener) -> None:
    """One sender of a capacity run: one connection for every trial, until finish."""
    scenario = scenarios.load(cfg.scenario)
    link = channel.link()
    sock, encrypt = open_socket(scenario.transport)
    tls = TlsSends(sock, encrypt) if encrypt else None
    link.ready(sender.name)
    after = 0
    while True:
        spec = link.call("trial", timeout=None, sender=sender.name, after=after)
        if spec.get("finish"):
            break
        after = int(spec["trial"])
        try:
            ledger = one_trial(link, sender, cfg, scenario, sock, spec, tls)
        except (OSError, channel.ChannelError, control.WaitTimeout) as error:
            ledger = {"sent": 0, "intended": int(spec["messages"]), "status": f"failed: {error}"}
            link.call("trial_ledger", sender=sender.name, trial=after, ledger=ledger)
            break
        link.call("trial_ledger", sender=sender.name, trial=after, ledger=ledger)
    sock.close()


def generator_main(host: int, cfg: settings.Settings, open_socket: Opener) -> int:
    """A generator in a capacity run: its senders, each a process, until the watcher's finish. open_socket
    is the plain sender's (rig/sender.py): the same connection, TCP, UDP or TLS, as in a run."""
    senders = [SenderId(host, number) for number in range(1, cfg.senders_per_host + 1)]
    workers = [multiprocessing.Process(target=sender_main, args=(s, cfg, open_socket)) for s in senders]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    channel.link().wait_finish(cfg.run_timeout)
    return 0


# -- the host's client, run in the watcher by `docker compose exec` -----------------------------------------


def client(argv: list[str]) -> int:
    """`run RATE DURATION` prints the trial's record as JSON; `end` ends the capacity run."""
    link = channel.Link("127.0.0.1")
    try:
        if argv[:1] == ["run"] and len(argv) == 3:
            answer = link.call("trial_run", timeout=None, rate=float(argv[1]), duration=float(argv[2]))
        elif argv == ["end"]:
            answer = link.call("trial_end", timeout=30)
        else:
            print(json.dumps({"error": f"usage: run RATE DURATION | end (got {argv})"}))
            return 2
    except (OSError, channel.ChannelError, control.WaitTimeout) as error:
        answer = {"error": str(error)}
    print(json.dumps(answer))
    return 0 if "error" not in answer else 1


if __name__ == "__main__":
    sys.exit(client(sys.argv[1:]))
