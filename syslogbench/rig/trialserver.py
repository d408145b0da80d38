"""The watcher's side of a capacity run's trials (the story: rig/trials.py): the trial ops of the control
channel, and one trial at a time: its spec for the senders, their common start, the compiled follower's count,
and the trial's record (model.capacity.Trial) for the host. Stdlib only: runs in the watcher container.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from syslogbench.model import capacity, settings, userconfig
from syslogbench.model.rigrecord import (
    DrainedRecord,
    DrainRequest,
    ExpectRequest,
    FailedRecord,
    Following,
    ForgotRecord,
    RecordError,
    SendRecord,
    TallyRecord,
    TrialRequest,
    record_from,
)
from syslogbench.rig import channel, control, procstat
from syslogbench.rig.compiled import RigError, RigProcess
from syslogbench.rig.trials import RIG_ANSWER_S

LOOK_S = 0.05  # how often the trial's thread looks at the senders' reports and the daemon (not the output)
LATE_WATCH_S = 2.0  # after the bound: how long late arrivals are still counted as late, not lost
START_LEAD_S = 0.2  # from the last sender's trial_ready to the common start
LEDGER_WAIT_S = 30.0
EXIT_SHOWS_S = 5.0  # a sender saw the daemon's connection fail: how long its exit may take to show
# Before a trial, the earlier ones' messages must have drained out of the daemon: a throttled syslog-ng
# still wrote a 4,000 msg/s trial's backlog seconds later, and made the next trials' messages late.
DRAIN_QUIET_S = 0.5  # no line of an earlier trial for this long
DRAIN_MAX_S = 60.0  # after the give-up time, for the senders' reports


class Trials:
    """The trial ops of the control channel (channel.Server.handlers), and one trial at a time."""

    def __init__(self, cfg: settings.Settings, senders: list[str], bound_s: float) -> None:
        self.cfg, self.names, self.bound_s = cfg, senders, bound_s
        self.changed = threading.Condition()
        self.spec: dict | None = None  # the current trial, as the senders get it
        self.ready: set[str] = set()
        self.ledgers: dict[str, SendRecord | FailedRecord] = {}
        # Each sender's clock check of the current trial (its trial_ready): offset, uncertainty, node.
        self.clocks: dict[str, tuple[float, float, str | None]] = {}
        self.number = 0
        self.over = threading.Event()  # trial_end, or the watcher gave up
        self.ready_to_run = threading.Event()  # the daemon and every sender are up
        self.failure: str | None = None
        self.one_at_a_time = threading.Lock()
        # A user's config (--config) writes our lines wherever it likes, some of them to several files.
        self.user_config = userconfig.from_env(os.environ) is not None
        self.follower: RigProcess | None = None  # started once the daemon is up (start_following)
        self.snapshot: Callable[[str], object] | None = None  # run.take_snapshot, set by serve()
        self.own_cpu: Callable[[], float | None] = lambda: None
        # Relay: the last hop's cgroup CPU total now (harness.last_hop_cpu), by a name; None elsewhere.
        self.last_hop_cpu: Callable[[str], float | None] = lambda _name: None
        self.machine: dict | None = None  # the daemon's machine, sent with the first trial's record
        self.transport = ""

    def start_following(self, directory: Path = control.LOGS) -> None:
        """The compiled follower, from what the output holds now (a capacity run's volume is empty at first)."""
        args = ["--dir", str(directory), *(["--everywhere"] if self.user_config else [])]
        self.follower = RigProcess("follow", args)
        self.follower.answer(Following, RIG_ANSWER_S)

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
        clock = sender_clock(request)
        if name not in self.names:
            return {"error": f"{name} is not a sender of this run"}
        with self.changed:
            if not self.spec or self.spec["trial"] != trial:
                return {"error": f"trial {trial} is not the current one"}
            self.ready.add(name)
            if clock is not None:
                self.clocks[name] = clock
            if len(self.ready) == len(self.names) and "start" not in self.spec:
                self.spec["start"] = start = time.time() + START_LEAD_S
                # Past this, a message is late whenever it arrives: the senders stop, the watcher counts.
                self.spec["give_up"] = start + self.spec["duration"] + self.bound_s + LATE_WATCH_S
                self.changed.notify_all()
            wait = float(self.spec["ready_wait_s"])
            self.changed.wait_for(lambda: "start" in (self.spec or {}) or self.over.is_set(), wait)
            if not self.spec or "start" not in self.spec:
                return {"error": "the other senders were not ready in time"}
            # On the sender's clock: its schedule then meets the follower's intended times (watcher's clock).
            shift = self.clocks[name][0] if name in self.clocks else 0.0
            return {"start": capacity.watcher_to_sender(self.spec["start"], shift),
                    "give_up": capacity.watcher_to_sender(self.spec["give_up"], shift),
                    "phase_s": capacity.phase_s(self.names.index(name), len(self.names))}  # fmt: skip

    def ledger(self, request: dict) -> dict:
        """A sender's record of the trial (its compiled sender's, or why it failed), read strictly."""
        name = channel.sender_name(request)
        try:
            record = record_from(request["ledger"], (SendRecord, FailedRecord))
        except RecordError as error:
            record = FailedRecord("failed", f"its report was not a record: {error}")
        with self.changed:
            if self.spec and int(request["trial"]) == self.spec["trial"]:
                self.ledgers[name] = record
                self.changed.notify_all()
        return {}

    def phases(self) -> list[float]:
        """Each sender's phase on the tick's grid, in the order of the names (capacity.phase_s)."""
        return [capacity.phase_s(position, len(self.names)) for position in range(len(self.names))]

    # the host's ops

    def end(self, request: dict) -> dict:
        with self.changed:
            self.over.set()
            self.changed.notify_all()
        if self.follower is not None:
            self.follower.close()
        return {}

    def run(self, request: dict) -> dict:
        """One trial at the total rate `rate` msg/s for `duration` s; its record (model.capacity.Trial)."""
        rate, duration = float(request["rate"]), float(request["duration"])
        if not self.ready_to_run.wait(float(request.get("wait", capacity.READY_WAIT_S))):
            return {"error": self.failure or "the daemon and the senders were not ready in time"}
        if self.failure:
            return {"error": self.failure}
        with self.one_at_a_time:
            asked = time.time()
            try:
                record = self.trial(rate, duration)
            except RigError as error:
                return {"error": f"trial {self.number}: the compiled follower: {error}"}
            return timed(record, asked, (self.spec or {}).get("start"), duration)

    def trial(self, rate: float, duration: float) -> dict:
        per_sender = rate / len(self.names)
        messages = max(1, round(per_sender * duration))
        if messages >= capacity.TRIAL_SEQ_SPAN:
            return {"error": f"{messages:,} messages per sender do not fit a trial's sequence numbers "
                             f"({capacity.TRIAL_SEQ_SPAN:,}): a lower rate or a shorter trial"}  # fmt: skip
        if (code := daemon_exit()) is not None:
            # No "error" key: the channel would turn the answer into a refusal and lose the exit code.
            return {"daemon_exit": code}
        assert self.follower is not None, "start_following() comes before any trial"
        self.follower.ask(DrainRequest(DRAIN_QUIET_S, DRAIN_MAX_S))
        drained = self.follower.answer(DrainedRecord, DRAIN_MAX_S + RIG_ANSWER_S)
        self.follower.ask(None, "forget")
        self.follower.answer(ForgotRecord, RIG_ANSWER_S)
        hop0 = self.last_hop_cpu(f"trial{self.number + 1}-start")  # before the trial: it answers in 0.1 s
        with self.changed:
            self.number += 1
            self.ready, self.ledgers, self.clocks = set(), {}, {}
            ready_wait = capacity.READY_WAIT_S
            self.spec = {"trial": self.number, "rate": per_sender, "messages": messages, "duration": duration,
                         "bound": self.bound_s, "ready_wait_s": ready_wait}  # fmt: skip
            self.changed.notify_all()
            ok = self.changed.wait_for(lambda: "start" in self.spec or self.over.is_set(), ready_wait)
        if not ok or self.over.is_set():
            missing = ", ".join(sorted(set(self.names) - self.ready)) or "none"
            return {"error": f"trial {self.number}: the senders were not ready after {ready_wait:.0f} s "
                             f"(not ready: {missing}; a sender's process that died says why in the "
                             "generator's log)"}  # fmt: skip
        start, give_up = self.spec["start"], self.spec["give_up"]
        before = self.take("start")
        cpu0 = self.own_cpu()
        request = TrialRequest(self.number, per_sender, messages, start, self.bound_s, give_up, LEDGER_WAIT_S,
                               list(self.names), self.user_config, capacity.SEND_TICK_S, self.phases())  # fmt: skip
        tally = self.follow(request)
        died = self.exit_if_senders_failed()
        after = self.take("end") if died is None else None
        cpu = self.own_cpu()
        hop1 = self.last_hop_cpu(f"trial{self.number}-end")
        hop = None if hop0 is None or hop1 is None else round(hop1 - hop0, 4)
        record = self.record(tally, rate, duration, before, after, cpu0, cpu, died, hop)
        record["drain_s"], record["drained_lines"] = drained.waited_s, drained.stale
        if self.number == 1 and self.machine:
            record["machine"] = self.machine
        if drained.waited_s >= DRAIN_MAX_S:
            record["errors"].append(f"earlier trials' lines were still arriving after {DRAIN_MAX_S:.0f} s")
        return record

    def follow(self, request: TrialRequest) -> TallyRecord:
        """The follower counts the trial; this thread tells it what the senders sent once every report is in
        (it then ends when all of that has arrived), or to stop when the daemon has exited."""
        assert self.follower is not None
        self.follower.ask(request)
        told = stopped = False
        deadline = request.give_up + LEDGER_WAIT_S + RIG_ANSWER_S
        while not self.follower.ready(LOOK_S):
            with self.changed:
                reports = dict(self.ledgers)
            if not told and len(reports) == len(self.names):
                sent = {name: r.sent if isinstance(r, SendRecord) else 0 for name, r in reports.items()}
                self.follower.ask(ExpectRequest(sent))
                told = True
            if not stopped and daemon_exit() is not None:
                self.follower.ask(None, "stop")
                stopped = True
            if time.time() > deadline:
                raise RigError(
                    f"no count of trial {request.trial} {deadline - request.give_up:.0f} s after its end"
                )
        return self.follower.answer(TallyRecord, RIG_ANSWER_S)

    def exit_if_senders_failed(self) -> int | None:
        """The daemon's exit code, if it has exited. A sender whose connection failed may have seen the
        daemon die before its supervisor wrote the exit (a few ms later): wait that long, so the trial says
        the daemon died rather than that a sender failed."""
        with self.changed:
            failed = any(isinstance(r, FailedRecord) for r in self.ledgers.values())
        deadline = time.monotonic() + (EXIT_SHOWS_S if failed else 0)
        while (code := daemon_exit()) is None and time.monotonic() < deadline:
            time.sleep(LOOK_S)
        return code

    def take(self, moment: str) -> object | None:
        if self.snapshot is None:
            return None
        try:
            return self.snapshot(f"trial{self.number}-{moment}")
        except (OSError, ValueError, control.WaitTimeout):
            return None

    def record(
        self,
        tally: TallyRecord,
        rate: float,
        duration: float,
        before: object | None,
        after: object | None,
        cpu0: float | None,
        cpu1: float | None,
        died: int | None,
        last_hop_cpu: float | None = None,
    ) -> dict:
        with self.changed:
            reports = dict(self.ledgers)
        counts = {count.id: count for count in tally.senders}
        spec = self.spec or {}
        senders = [
            capacity.sender_trial(name, int(spec.get("messages", 0)), float(spec.get("rate", 0)),
                                  counts.get(name), reports.get(name), self.transport, self.bound_s)
            for name in self.names
        ]  # fmt: skip
        for sender in senders:
            if sender.id in self.clocks:
                sender.clock_offset_s, sender.clock_uncertainty_s, sender.node = self.clocks[sender.id]
        totals = capacity.trial_totals(senders)
        achieved = [s.rate_achieved for s in senders]
        udp = udp_delta(before, after)
        failed = [f"{s.id}: {s.status}" for s in senders if s.status.startswith("failed")]
        errors = [f"the daemon exited with code {died} during this trial"] if died is not None else failed
        daemon_cpu = cpu_delta(before, after)
        watcher_cpu = None if cpu0 is None or cpu1 is None else round(cpu1 - cpu0, 3)
        return {
            "number": self.number,
            "offered_msgs_per_s": rate,
            "duration_s": duration,
            **totals,
            "achieved_msgs_per_s": round(sum(achieved), 1) if all(a is not None for a in achieved) else None,
            "sender_bound": any(s.sender_bound for s in senders),
            "latency_ms": asdict(tally.latency_ms),
            "latency_histogram_us": tally.histogram_us,
            "sample_s": tally.look_gap_p99_s,
            "sample_max_s": tally.look_gap_max_s,
            "arrived_per_s": tally.arrived_per_s,
            "stale_lines": tally.stale,
            "early": tally.early,
            "daemon_cpu_s": daemon_cpu,
            "watcher_cpu_s": watcher_cpu,
            "follower_cpu_s": tally.cpu_s,
            "last_hop_cpu_s": last_hop_cpu,
            "rig": asdict(
                capacity.rig_cost(senders, watcher_cpu, daemon_cpu, tally, self.bound_s, last_hop_cpu)
            ),
            **cores_over(before, after),
            "udp_rcvbuf_errors": udp.get("RcvbufErrors") if udp else None,
            "udp_in_errors": udp.get("InErrors") if udp else None,
            "senders": [asdict(s) for s in senders],
            "daemon_exit": died,
            "errors": errors,
        }


def timed(record: dict, asked: float, start: float | None, duration: float) -> dict:
    """A trial's record with where the watcher's time went around it (model.capacity.Trial setup_s, wrapup_s):
    what a trial costs beyond its length, measured apart from the host's exec."""
    if "number" in record and start is not None:
        record["setup_s"] = round(start - asked, 3)
        record["wrapup_s"] = round(time.time() - start - duration, 3)
    return record


def sender_clock(request: dict) -> tuple[float, float, str | None] | None:
    """A sender's clock check from its trial_ready (offset, uncertainty, node); None from a sender that sent
    none (its start is then the watcher's as it is)."""
    if request.get("clock_offset_s") is None:
        return None
    offset, uncertainty = float(request["clock_offset_s"]), float(request["clock_uncertainty_s"])
    if not (abs(offset) < 86_400 and 0 <= uncertainty < 86_400):  # a day: NaN or nonsense, not a clock
        raise ValueError(f"not a clock check: offset {offset}, uncertainty {uncertainty}")
    node = request.get("node")
    return round(offset, 6), round(uncertainty, 6), None if node is None else str(node)


def cpu_delta(before: object | None, after: object | None) -> float | None:
    start, end = getattr(before, "cpu_total_s", None), getattr(after, "cpu_total_s", None)
    return None if start is None or end is None else round(end - start, 4)


def cores_over(before: object | None, after: object | None) -> dict[str, str | float | None]:
    """What the daemon's cores did over the trial (rig/procstat.py): busy, idle, stolen, and stolen
    host-wide; every field None where a snapshot lacked them."""
    cores = procstat.over(getattr(before, "cores", None), getattr(after, "cores", None))
    if cores is None:
        return dict.fromkeys(procstat.TRIAL_FIELDS)
    return asdict(cores)


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
