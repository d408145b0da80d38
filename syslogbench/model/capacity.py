"""The capacity search's settings, its trials' accounting and its result (docs/capacity.md).

A search offers the daemon one rate after another in trials against a daemon that stays up, and finds the
highest rate it holds with no message lost or late (NDR) and with at most PDR_TARGET of them (PDR). A message
counts against a trial if it never arrived, or arrived more than LATENCY_BOUND after its intended send time.
Stdlib only: the watcher, the generators and the host all import it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from syslogbench import contract
from syslogbench.model import codec, settings
from syslogbench.model.result import UdpBuffers
from syslogbench.model.rigrecord import FailedRecord, SenderTally, SendRecord

# The trial number goes into each message's sequence number, above TRIAL_SEQ_SPAN: each trial has sequence
# numbers of its own, so a message from an earlier trial that arrives late is never counted for a later one.
# At 10,000,000 a 60 s confirmation at 1,000,000 msg/s over 4 senders (15,000,000 each) ran into the next
# trial's numbers, and a third of it counted as stale; rig-rust/src/key.rs holds the same span.
TRIAL_SEQ_SPAN = 1_000_000_000
# A paced sender sends what is due, then sleeps at least this long: batches every few ms, no busy loop. Each
# tick costs a wake-up and a send call per sender, about 25 us on the virtual machines here: four senders at
# 100,000 msg/s in all took 3.8-4.6% of a core at 5 ms and 2.5-3.4% at 10 ms (bench/rig_speed.py --ticks),
# but batches twice as large raised every p50 in the searches tried (docs/findings/sender-schedule.md), so 5 ms
# it stays.
SEND_TICK_S = 0.005
# A message whose own time is this close after a grid point goes in that point's batch (schedule.rs).
GRID_SLACK_S = 1e-6
# Latencies are kept in microseconds, rounded to 3 significant digits (HdrHistogram's precision below):
# the watcher sends {rounded value: count}, the host records it into an HdrHistogram.
LATENCY_DIGITS = 3
PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p999": 99.9}


# The daemon's supervisor stops it this long after it starts (daemons/_common/supervise.sh).
MAX_LIFETIME_S = int(contract.SUPERVISOR_ENV["MAX_LIFETIME"] or 0)
# After the search, a trial at each of these fractions of the PDR measures its latency, as CSIT reports it.
PDR_FRACTIONS = (0.1, 0.5, 0.9)
LATENCY_TRIALS = len(PDR_FRACTIONS)


class CapacityError(ValueError):
    """A capacity setting that cannot be used: the message says what to change."""


@dataclass(frozen=True)
class CapacitySettings:
    """The search's own settings, given as KEY=VALUE beside the run's (docs/capacity.md). Rates are msg/s
    summed over every sender."""

    latency_bound_s: float = contract.DEFAULT_LATENCY_BOUND_S  # LATENCY_BOUND (contract.CapacityEnv)
    pdr_target: float = 0.005  # PDR_TARGET: the loss ratio the PDR may have (CSIT's 0.5%)
    rate_min: float = 100.0  # RATE_MIN
    rate_max: float = 100_000.0  # RATE_MAX
    relative_width: float = 0.05  # SEARCH_WIDTH: the search stops when upper/lower bound is within this
    initial_trial_s: float = 1.0  # TRIAL_INITIAL
    final_trial_s: float = 10.0  # TRIAL_FINAL
    # SEARCH_MAX: a whole search, trials and pauses, its confirmation and latency trials included: 10 minutes
    # (docs/capacity.md, "Defaults").
    search_max_s: float = 600.0
    pause_s: float = 2.0  # TRIAL_PAUSE: between trials, so queues drain
    # DAEMON_CORES: N >= 1 gives the daemon the host's last N cores and the senders, the watcher and the
    # last hop the others (cpusets), as the 2014 remote hosts were apart; 0 runs every role on any core.
    # None: half the host's cores (default_daemon_cores), decided by the search's plan and recorded as the
    # number in force. With the rig on the daemon's cores two searches in a row published rates 12.6% (rsyslog)
    # and 23% (syslog-ng) apart; with the daemon on a core of its own, three searches of each published one
    # rate (docs/findings/capacity-daemon-own-core.md).
    daemon_cores: float | None = None
    # Repeated final trials, as CSIT runs them on noisy systems: a rate is decided once its final trials add
    # up to TRIAL_SUM seconds (0: one trial of TRIAL_FINAL), and it holds if the trials that lost more than
    # the goal allows make up at most EXCEED_RATIO of that time (CSIT's 0.5). With 30 s and 0.5, a trial
    # shorter than TRIAL_FINAL can never alone make a rate an upper bound: MLRsearch would need more than
    # 15 s of excess, and every short trial is under 10 s (docs/capacity.md, "Defaults"). With 0, one 1 s
    # trial that lost 128 datagrams set both bounds of a UDP search (issue 27).
    trial_sum_s: float = 30.0  # TRIAL_SUM
    exceed_ratio: float = 0.5  # EXCEED_RATIO
    # CONFIRM_S: after the search, the NDR and the PDR are each held this long before they are published
    # (RFC 2544's 60 s); 0: no confirmation, the search's lower bounds are published as they are.
    confirm_s: float = 60.0

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


# What a search ran with before its result recorded these settings: one final trial per rate (TRIAL_SUM and
# EXCEED_RATIO came in 4194329), and no confirmation (CONFIRM_S came after).
BEFORE_THE_KEY = {"trial_sum_s": 0.0, "exceed_ratio": 0.0, "confirm_s": 0.0}

# KEY=VALUE name -> field; each a number of its own unit (seconds, msg/s, or a ratio).
KEYS = {
    "LATENCY_BOUND": "latency_bound_s",
    "PDR_TARGET": "pdr_target",
    "RATE_MIN": "rate_min",
    "RATE_MAX": "rate_max",
    "SEARCH_WIDTH": "relative_width",
    "TRIAL_INITIAL": "initial_trial_s",
    "TRIAL_FINAL": "final_trial_s",
    "SEARCH_MAX": "search_max_s",
    "TRIAL_PAUSE": "pause_s",
    "DAEMON_CORES": "daemon_cores",
    "TRIAL_SUM": "trial_sum_s",
    "EXCEED_RATIO": "exceed_ratio",
    "CONFIRM_S": "confirm_s",
}
# Seconds a trial costs beyond its own length and TRIAL_PAUSE: the drain, the common start, compose exec
# (committed TRIAL_SUM=30 searches took 5.4 to 5.7 s per trial beyond their lengths, the pause and compose
# up and down included).
TRIAL_OVERHEAD_S = 5.0
# The daemon and the senders up, a trial's templates rendered (rig/trials.py): the senders make the messages
# as they send, so the wait does not grow with a trial's messages.
READY_WAIT_S = 120.0


def split(overrides: Mapping[str, str]) -> tuple[CapacitySettings, dict[str, str]]:
    """The capacity settings among the overrides (validated), and the rest (the run's own settings)."""
    values: dict[str, float] = {}
    for key in sorted(set(overrides) & set(KEYS)):
        try:
            values[KEYS[key]] = settings.decimal(key, overrides[key])
        except settings.SettingsError as error:
            raise CapacityError(str(error)) from None
    cap = CapacitySettings(**values)
    check(cap)
    return cap, {k: v for k, v in overrides.items() if k not in KEYS}


def check(cap: CapacitySettings) -> None:
    """Every rule at once would hide which one to fix first: the first broken one, with the fix."""
    if not 0 <= cap.pdr_target < 1:
        raise CapacityError(f"PDR_TARGET={cap.pdr_target:.12g} is outside [0, 1): 0.005 is CSIT's 0.5%")
    if cap.latency_bound_s <= 0:
        raise CapacityError(
            f"LATENCY_BOUND={cap.latency_bound_s:.12g}: every message would be late; give seconds above 0 (default 1)"
        )
    if cap.rate_min <= 0:
        raise CapacityError(f"RATE_MIN={cap.rate_min:.12g}: give a rate above 0 msg/s")
    if cap.rate_max <= cap.rate_min:
        raise CapacityError(
            f"the rate range RATE_MIN={cap.rate_min:.12g} to RATE_MAX={cap.rate_max:.12g} is empty: make RATE_MAX larger"
        )
    if not 0 < cap.relative_width < 1:
        raise CapacityError(f"SEARCH_WIDTH={cap.relative_width:.12g}: give a ratio in (0, 1), e.g. 0.05")
    if not 0 < cap.initial_trial_s <= cap.final_trial_s:
        raise CapacityError(
            f"TRIAL_INITIAL={cap.initial_trial_s:.12g} s, TRIAL_FINAL={cap.final_trial_s:.12g} s: "
            "both above 0, the first no longer than the second"
        )
    if cap.daemon_cores is not None and (cap.daemon_cores < 0 or cap.daemon_cores != int(cap.daemon_cores)):
        raise CapacityError(
            f"DAEMON_CORES={cap.daemon_cores:.12g}: give a whole number of cores (0: every role on any core)"
        )
    if not 0 <= cap.exceed_ratio < 1:
        raise CapacityError(
            f"EXCEED_RATIO={cap.exceed_ratio:.12g} is outside [0, 1): the share of a rate's final trials that may "
            "lose more than the goal (0: none; CSIT's 0.5)"
        )
    if cap.trial_sum_s and cap.trial_sum_s < cap.final_trial_s:
        raise CapacityError(
            f"TRIAL_SUM={cap.trial_sum_s:.12g} s is shorter than one final trial (TRIAL_FINAL={cap.final_trial_s:.12g} "
            "s): give 0 for one trial per rate, or a multiple of TRIAL_FINAL"
        )
    if cap.search_max_s < cap.final_trial_s or cap.pause_s < 0:
        raise CapacityError(
            f"SEARCH_MAX={cap.search_max_s:.12g} s must hold one final trial ({cap.final_trial_s:.12g} s), "
            f"and TRIAL_PAUSE={cap.pause_s:.12g} s cannot be negative"
        )
    check_lifetime(cap)
    if cap.confirm_s < 0 or (cap.confirm_s and cap.confirm_s < cap.final_trial_s):
        raise CapacityError(
            f"CONFIRM_S={cap.confirm_s:.12g} s: give 0 for no confirmation, or at least TRIAL_FINAL="
            f"{cap.final_trial_s:.12g} s (RFC 2544's 60 s by default)"
        )
    if cap.search_max_s < cap.final_trial_s + reserve_s(cap):
        raise CapacityError(
            f"SEARCH_MAX={cap.search_max_s:.12g} s cannot hold a final trial and, after the search, the "
            f"confirmation and latency trials ({reserve_s(cap):.0f} s): give at least "
            f"{cap.final_trial_s + reserve_s(cap):.0f}, or a shorter CONFIRM_S"
        )


def trial_cost_s(cap: CapacitySettings, seconds: float) -> float:
    """What one trial of `seconds` takes of SEARCH_MAX: its length, the pause before it, and the overhead."""
    return seconds + cap.pause_s + TRIAL_OVERHEAD_S


def reserve_s(cap: CapacitySettings) -> float:
    """What SEARCH_MAX keeps for after the search: one confirmation each of the NDR and the PDR, and the
    latency trials. MLRsearch gets the rest."""
    confirm = 2 * trial_cost_s(cap, cap.confirm_s) if cap.confirm_s else 0.0
    return confirm + len(PDR_FRACTIONS) * trial_cost_s(cap, cap.final_trial_s)


# Beyond SEARCH_MAX (which holds the confirmation and the latency trials): their drains and a last trial.
def beyond_s(cap: CapacitySettings) -> float:
    return 2 * (cap.confirm_s + cap.final_trial_s) + 120


def lifetime_s(cap: CapacitySettings) -> float:
    """How long the rig serves a search: SEARCH_MAX, and beyond it the last trials' drains (host/capacity/command.py)."""
    return cap.search_max_s + beyond_s(cap)


def check_lifetime(cap: CapacitySettings) -> None:
    """The daemon's supervisor stops it MAX_LIFETIME after it starts, whatever runs: a search must end
    before, with the rig's start (settings.START_ALLOWANCE_S) on top. A pause or a latency bound longer than
    the whole search could never be waited for."""
    if cap.pause_s > cap.search_max_s or cap.latency_bound_s > cap.search_max_s:
        raise CapacityError(
            f"TRIAL_PAUSE={cap.pause_s:.12g} s and LATENCY_BOUND={cap.latency_bound_s:.12g} s must each be at most "
            f"SEARCH_MAX={cap.search_max_s:.12g} s: a wait longer than the whole search never ends in it"
        )
    room = MAX_LIFETIME_S - settings.START_ALLOWANCE_S
    if lifetime_s(cap) > room:
        most = room - beyond_s(cap)
        raise CapacityError(
            f"SEARCH_MAX={cap.search_max_s:.12g} s with what follows its trials (CONFIRM_S={cap.confirm_s:.12g} s, "
            f"TRIAL_FINAL={cap.final_trial_s:.12g} s) runs {lifetime_s(cap):,.0f} s, but the "
            f"daemon's supervisor stops it MAX_LIFETIME={MAX_LIFETIME_S} s after it starts, {settings.START_ALLOWANCE_S} s "
            f"of which may go to starting: use SEARCH_MAX={max(most, 0):.0f} or less"
        )


def default_daemon_cores(host_cores: int) -> int:
    """One host's default DAEMON_CORES: half its cores for the daemon, the rest for the rig; 0 (any core)
    on a one-core host, where no core is left to keep apart."""
    return host_cores // 2


def placement(daemon_cores: int, host_cores: int) -> dict[str, str]:
    """The cpuset of each role (Docker's syntax, e.g. "1" or "2-3"; "any": no cpuset): the daemon on the
    host's last daemon_cores cores, the rest of the rig on the others. CapacityError when no core is left."""
    if daemon_cores == 0:
        return {"daemon": "any", "senders": "any", "watcher": "any"}
    if daemon_cores >= host_cores:
        raise CapacityError(
            f"DAEMON_CORES={daemon_cores} leaves no core for the senders and the watcher on this "
            f"{host_cores}-core host: give at most {host_cores - 1}, or 0 for any core"
        )
    daemon = _cores(host_cores - daemon_cores, host_cores - 1)
    rig = _cores(0, host_cores - daemon_cores - 1)
    return {"daemon": daemon, "senders": rig, "watcher": rig}


def _cores(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"


# -- one trial ------------------------------------------------------------------------------------------------


def trial_seq(trial: int, index: int) -> int:
    """The sequence number of a trial's message `index` (0-based)."""
    return trial * TRIAL_SEQ_SPAN + index + 1


def trial_of(seq: int) -> tuple[int, int]:
    """(trial, index) of a sequence number trial_seq made."""
    trial, rest = divmod(seq, TRIAL_SEQ_SPAN)
    return trial, rest - 1


def intended_time(start: float, index: int, rate: float, tick_s: float = 0.0, phase_s: float = 0.0) -> float:
    """When message `index` of a sender is due: its own time is index/rate after the start; on a grid
    (tick_s > 0) it is due at the first point of the sender's grid, start + phase_s + k * tick_s, at or after
    that: the batch it goes in. rig-rust/src/schedule.rs keeps the same schedule (the trial test of
    tests/unit/test_capacity_search.py writes at these times, and the compiled follower sees none early)."""
    own = index / rate
    if tick_s <= 0:
        return start + own
    step = max(0, math.ceil((own - phase_s - GRID_SLACK_S) / tick_s))
    return start + phase_s + step * tick_s


def phase_s(position: int, senders: int, tick_s: float = SEND_TICK_S) -> float:
    """Where the grid of a trial's sender `position` (0-based, of `senders`) starts after the trial's start:
    spread evenly over one tick, so that the senders do not all wake at once."""
    return round(tick_s * position / max(senders, 1), 9)


def rounded_us(latency_s: float) -> int:
    """A latency in microseconds, to LATENCY_DIGITS significant digits (at least 1 us: HdrHistogram's
    lowest value). Below zero cannot be: arrivals are seen after the send."""
    us = max(1, round(latency_s * 1e6))
    digits = len(str(us))
    if digits <= LATENCY_DIGITS:
        return us
    step = 10 ** (digits - LATENCY_DIGITS)
    return round(us / step) * step


@dataclass
class SenderTrial:
    """One sender's part of one trial. intended = sent + unsent; sent = received + lost; late <= received."""

    id: str
    intended: int
    sent: int = 0
    received: int = 0
    lost: int = 0
    late: int = 0
    duplicated: int = 0
    # A user config's (--config) further sightings of a received message: the copies it writes on purpose to
    # other files, with any duplicates (a trial does not tell them apart; `run --config` does).
    copies: int = 0
    rate_target: float = 0.0  # msg/s this sender was asked for
    rate_achieved: float | None = None  # what it handed to the kernel over its own sending time
    sender_bound: bool = False  # it fell behind with its own CPU, not from the daemon's backpressure
    status: str = "ok"
    # The evidence (the compiled sender's record; None in results from before it): its CPU over the trial,
    # its largest lag behind the schedule at any batch, and the longest a sleep ran past its wake time.
    cpu_s: float | None = None
    behind_max_s: float | None = None
    oversleep_max_s: float | None = None
    cpu_system_s: float | None = None  # of cpu_s, the kernel's (None in results from before it)
    # Its generator's clock against the watcher's, measured just before the trial (ClockCheck): the start it
    # got was moved by clock_offset_s onto its own clock. None in results from before clocks were checked.
    clock_offset_s: float | None = None
    clock_uncertainty_s: float | None = None
    node: str | None = None  # its generator's node (NODE_HOSTNAME): a swarm node, or the one host's name

    @property
    def unsent(self) -> int:
        return self.intended - self.sent

    def consistent(self) -> str | None:
        """What breaks the accounting, or None."""
        if self.sent != self.received + self.lost:
            return f"{self.id}: sent {self.sent} != received {self.received} + lost {self.lost}"
        if self.lost < 0:
            return f"{self.id}: {self.received} received but {self.sent} sent: its report is missing or wrong"
        if not 0 <= self.late <= self.received:
            return f"{self.id}: late {self.late} is not within received {self.received}"
        if not 0 <= self.sent <= self.intended:
            return f"{self.id}: sent {self.sent} outside 0..intended {self.intended}"
        return None


# A sender behind its schedule by more than this (plus 5% of the trial) at any batch has fallen behind.
BEHIND_S = 0.1
# A sender busy this share of its sending time was short of CPU (not blocked by the daemon's backpressure).
BUSY_SHARE = 0.75


def sender_bound(record: SendRecord, rate: float, transport: str, bound_s: float) -> bool:
    """Whether a sender, not the daemon, made its trial's messages late or unsent, from its own evidence.

    A sender that woke more than half the bound late made its own messages late, whatever the daemon did.
    Over UDP nothing pushes back: a sender behind its schedule was short of CPU. Over TCP it may be the
    daemon's backpressure (blocked in send, no CPU spent): behind, with its CPU busy most of the time, is ours.
    """
    if record.oversleep_max_s > bound_s / 2:
        return True
    allowed = BEHIND_S + 0.05 * record.intended / rate if rate > 0 else math.inf
    fell_behind = record.sent < record.intended or record.behind_max_s > allowed
    pace = max(record.pace_s, (record.intended - 1) / rate if rate > 0 else 0.0, 1e-6)
    return fell_behind and (transport == "udp" or record.cpu_s > BUSY_SHARE * pace)


def sender_trial(
    name: str,
    intended: int,
    rate: float,
    count: SenderTally | None,
    report: SendRecord | FailedRecord | None,
    transport: str,
    bound_s: float,
) -> SenderTrial:
    """One sender's accounting: what the follower counted against what its compiled sender reported (none:
    it sent nothing we know of)."""
    received = count.received if count else 0
    sent = report.sent if isinstance(report, SendRecord) else 0
    trial = SenderTrial(
        id=name,
        intended=intended,
        sent=sent,
        received=received,
        lost=sent - received,
        late=count.late if count else 0,
        duplicated=count.duplicated if count else 0,
        copies=count.copies if count else 0,
        rate_target=round(rate, 3),
        status="no report from this sender" if report is None else "",
    )
    if isinstance(report, FailedRecord):
        trial.status = f"failed: {report.error}"
    elif isinstance(report, SendRecord):
        pace = max(report.pace_s, (intended - 1) / rate if rate > 0 else 0.0, 1e-6)
        trial.status = report.status
        trial.rate_achieved = round(report.sent / pace, 1)
        trial.sender_bound = sender_bound(report, rate, transport, bound_s)
        trial.cpu_s, trial.behind_max_s = report.cpu_s, report.behind_max_s
        trial.oversleep_max_s, trial.cpu_system_s = report.oversleep_max_s, report.cpu_system_s
    return trial


# -- clocks ---------------------------------------------------------------------------------------------------

# A sender checks its clock against the watcher's this many times before each trial and keeps the round trip
# that took the least time: the one least delayed on its way, so the best estimate (as NTP filters its samples).
CLOCK_ROUNDS = 8
# A clock known to no better than this share of LATENCY_BOUND cannot place a latency against the bound: the
# same tenth the rig allows its own look gap.
CLOCK_SHARE_MAX = 0.1


@dataclass(frozen=True)
class ClockCheck:
    """A generator's clock against the watcher's, from its best round trip on the control channel."""

    offset_s: float  # the generator's clock minus the watcher's: positive, the generator's is ahead
    uncertainty_s: float  # half that round trip: the watcher read its clock somewhere inside it
    round_trips: int


def clock_offset(t_send: float, t_remote: float, t_receive: float) -> tuple[float, float]:
    """One round trip, NTP's way: the remote clock's offset from the local one, t_remote - (t_send +
    t_receive) / 2 (the remote read its clock halfway, if the two ways took as long), and the round trip's
    time. t_send and t_receive are on the local clock, t_remote on the remote's."""
    return t_remote - (t_send + t_receive) / 2, t_receive - t_send


def best_round_trip(samples: list[tuple[float, float, float]]) -> ClockCheck:
    """samples: (t_send, t_watcher, t_receive) as the generator saw them, the watcher remote. The one with
    the shortest round trip; its uncertainty is half that trip (whatever the split of the two ways was)."""
    if not samples:
        raise ValueError("no round trip to measure a clock by")
    remote_minus_local, rtt = min((clock_offset(*sample) for sample in samples), key=lambda pair: pair[1])
    return ClockCheck(-remote_minus_local, max(rtt, 0.0) / 2, len(samples))


def watcher_to_sender(moment: float, offset_s: float) -> float:
    """A time the watcher gave (the trial's start, its give-up) on the sender's clock: a sender whose clock is
    offset_s ahead sends message i at start + offset_s + i/rate by its clock, which is start + i/rate by the
    watcher's, the clock the follower times arrivals and intended times by."""
    return moment + offset_s


@dataclass
class NodeClock:
    """One generator's clock over a search: from the checks before its trials (each sender's, each trial)."""

    host: str  # the generator, e.g. "host1"
    node: str | None  # its node (a swarm node, or the one host's name); None if the sender did not say
    offset_s: float  # the check with the smallest uncertainty: the generator's clock minus the watcher's
    uncertainty_s: float  # the largest uncertainty of a correction applied in the search (the worst trial's)
    offset_min_s: float  # the offsets applied ranged over these: their spread is the drift, plus noise
    offset_max_s: float
    checks: int  # sender-trials checked


@dataclass
class Clocks:
    """Whether the latencies (and over TCP the late counts, which rest on them) are on one clock."""

    nodes: list[NodeClock]
    limit_s: float  # CLOCK_SHARE_MAX of LATENCY_BOUND: an uncertainty above it makes latency untrusted
    trusted: bool
    why: str | None  # why not, when not
    how: str = (
        f"each sender, before each trial, timed {CLOCK_ROUNDS} round trips to the watcher on the control channel "
        "and kept the shortest; the watcher moved the trial's start onto that sender's clock by the offset"
    )


def node_clocks(trials: list[Trial]) -> list[NodeClock]:
    """Per generator, from every sender-trial that carries a check."""
    checked: dict[str, list[SenderTrial]] = {}
    for trial in trials:
        for sender in trial.senders:
            if sender.clock_offset_s is not None and sender.clock_uncertainty_s is not None:
                checked.setdefault(sender.id.split("-")[0], []).append(sender)
    nodes = []
    for host, senders in sorted(checked.items()):
        offsets = [s.clock_offset_s for s in senders if s.clock_offset_s is not None]
        best = min(senders, key=lambda s: s.clock_uncertainty_s or 0.0)
        worst = max(s.clock_uncertainty_s or 0.0 for s in senders)
        nodes.append(NodeClock(host, senders[0].node, round(best.clock_offset_s or 0.0, 6), round(worst, 6),
                               round(min(offsets), 6), round(max(offsets), 6), len(senders)))  # fmt: skip
    return nodes


def clocks_of(trials: list[Trial], bound_s: float) -> Clocks | None:
    """The search's clocks, and the refusal: a generator whose clock was known to no better than a tenth of
    LATENCY_BOUND in some trial makes the search's latencies untrusted (the search itself still ran). None
    when no trial carries a check (a rig from before clocks were checked)."""
    nodes = node_clocks(trials)
    if not nodes:
        return None
    limit = round(CLOCK_SHARE_MAX * bound_s, 6)
    loose = [n for n in nodes if n.uncertainty_s > limit]
    why = None
    if loose:
        why = "; ".join(
            f"{n.host}{f' (node {n.node})' if n.node else ''}'s clock was known to +/- {n.uncertainty_s * 1000:.1f} ms "
            f"only, over a tenth of LATENCY_BOUND ({limit * 1000:.0f} ms)"
            for n in loose
        )
    return Clocks(nodes, limit, not loose, why)


# The rig may take at most this share of the daemon's CPU in a trial before the trial says so.
RIG_SHARE_MAX = 0.05
# A look gap above this share of LATENCY_BOUND makes the latency the rig's more than the daemon's.
LOOK_GAP_SHARE_MAX = 0.1


@dataclass
class RigCost:
    """What the rig itself cost one trial, beside the daemon, and how finely it saw arrivals."""

    senders_cpu_s: float | None  # every compiled sender's own CPU over its sending
    watcher_cpu_s: float | None  # the watcher's container (the compiled follower is in it)
    follower_cpu_s: float | None  # the compiled follower's own CPU over the trial
    daemon_cpu_s: float | None
    share: float | None  # (senders + watcher + last hop) / daemon
    look_gap_max_s: float | None  # the longest a line could wait between being written and being read
    look_gap_p99_s: float | None
    flags: list[str] = field(default_factory=list)  # what makes this trial's figures the rig's
    last_hop_cpu_s: float | None = None  # relay: the last hop's container (results before it lack it)
    # Files outside the latency's sample were read once a poll interval: the longest a line waited there.
    poll_gap_max_s: float | None = None
    # Received messages whose latency was measured (None: results from before the sample).
    latency_share: float | None = None
    # Of senders_cpu_s and follower_cpu_s, the kernel's (system time): over UDP most of a sender's CPU is the
    # receiving side's kernel path, run in its context (docs/findings/rig-cost.md). None in results from before it.
    senders_system_s: float | None = None
    follower_system_s: float | None = None


def summed(values: list[float | None]) -> float | None:
    """The sum, or None if any is unknown."""
    if any(value is None for value in values):
        return None
    return round(sum(value for value in values if value is not None), 4)


def rig_cost(
    senders: list[SenderTrial], watcher_cpu_s: float | None, daemon_cpu_s: float | None, tally: object,
    bound_s: float, last_hop_cpu_s: float | None = None,
) -> RigCost:  # fmt: skip
    """tally: the follower's record (model.rigrecord.TallyRecord). last_hop_cpu_s: a relay trial's last hop
    (None elsewhere, where there is none)."""
    senders_cpu = summed([s.cpu_s for s in senders])
    total = None if senders_cpu is None or watcher_cpu_s is None else senders_cpu + watcher_cpu_s
    if total is not None and last_hop_cpu_s is not None:
        total += last_hop_cpu_s
    share = round(total / daemon_cpu_s, 4) if total is not None and daemon_cpu_s else None
    cost = RigCost(senders_cpu, watcher_cpu_s, getattr(tally, "cpu_s", None), daemon_cpu_s, share,
                   getattr(tally, "look_gap_max_s", None), getattr(tally, "look_gap_p99_s", None),
                   last_hop_cpu_s=last_hop_cpu_s, poll_gap_max_s=getattr(tally, "poll_gap_max_s", None),
                   latency_share=latency_share(tally),
                   senders_system_s=summed([s.cpu_system_s for s in senders]),
                   follower_system_s=getattr(tally, "cpu_system_s", None))  # fmt: skip
    if share is not None and share > RIG_SHARE_MAX:
        cost.flags.append(f"the rig took {share:.1%} of the daemon's CPU (over {RIG_SHARE_MAX:.0%})")
    loose = [s for s in senders if (s.clock_uncertainty_s or 0.0) > CLOCK_SHARE_MAX * bound_s]
    if loose:
        worst = max(s.clock_uncertainty_s or 0.0 for s in loose)
        cost.flags.append(f"{len(loose)} sender(s)' clocks were known to +/- {worst * 1000:.1f} ms only (over a "
                          f"tenth of LATENCY_BOUND, {bound_s * 100:.0f} ms): the latencies are not trusted")  # fmt: skip
    gap = max((g for g in (cost.look_gap_max_s, cost.poll_gap_max_s) if g is not None), default=None)
    if gap is not None and gap > LOOK_GAP_SHARE_MAX * bound_s:
        cost.flags.append(f"a line could wait {gap * 1000:.1f} ms before it was read (over a tenth of "
                          f"LATENCY_BOUND, {bound_s * 100:.0f} ms)")  # fmt: skip
    return cost


def latency_share(tally: object) -> float | None:
    """The share of a trial's received messages whose latency the follower measured (its sample's files)."""
    sampled, senders = getattr(tally, "sampled", None), getattr(tally, "senders", None)
    received = sum(s.received for s in senders or [])
    return round(sampled / received, 4) if sampled is not None and received else None


@dataclass
class Latency:
    """Milliseconds from each received message's intended send time to the sample where it was first seen."""

    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    p999: float | None = None
    max: float | None = None


@dataclass
class Trial:
    """One trial, as the result holds it. loss_ratio = (lost + late + unsent) / intended: what the search
    counts against the rate. A sender-bound trial is recorded but the search does not rely on it."""

    number: int
    offered_msgs_per_s: float  # the rate asked for, all senders together
    duration_s: float
    intended: int
    sent: int
    received: int
    lost: int
    late: int
    unsent: int
    duplicated: int
    loss_ratio: float
    achieved_msgs_per_s: float | None  # what the senders really offered, all together
    sender_bound: bool
    latency_ms: Latency
    latency_histogram_us: dict[str, int]  # {rounded us: count}, for merging trials (HdrHistogram on the host)
    sample_s: float | None  # how often the output was looked at: the latency's resolution
    stale_lines: int  # lines of earlier trials seen during this one (they count in their own trial as lost)
    daemon_cpu_s: float | None
    watcher_cpu_s: float | None
    udp_rcvbuf_errors: int | None
    udp_in_errors: int | None
    senders: list[SenderTrial] = field(default_factory=list)
    # Before the trial: how long the earlier trials' lines took to stop arriving, and how many there were.
    drain_s: float | None = None
    # The longest gap between two looks at the output. Past half of LATENCY_BOUND the watcher itself was held
    # up (a busy machine) and made latencies up: the search repeats such a trial (host/capacity/measurer.py).
    sample_max_s: float | None = None
    drained_lines: int = 0
    daemon_exit: int | None = None  # the daemon died during this trial
    errors: list[str] = field(default_factory=list)
    # "warmup" (before the search, waits for the rig: not given to the search), "search", "confirm" (a
    # CONFIRM_S trial at a bound, after the search) or "latency" (at a fraction of the PDR, after that).
    purpose: str = "search"
    copies: int = 0  # a user config's (SenderTrial.copies)
    early: int = 0  # messages seen before their intended time (clocks apart), recorded at 1 us
    follower_cpu_s: float | None = None  # the compiled follower's own CPU (also in watcher_cpu_s)
    last_hop_cpu_s: float | None = None  # relay: the last hop's container over the trial
    rig: RigCost | None = None  # the rig's own cost and resolution; None in results from before it
    # Messages first seen in each second from the trial's start (the follower's); empty in results from
    # before it.
    arrived_per_s: list[int] = field(default_factory=list)
    # The daemon's cores over the trial, from its host's /proc/stat (rig/procstat.py): the CPU list, their
    # busy time (the daemon's and anything else's), idle time, the hypervisor's steal there and on every
    # core of that host. None in results from before, or where a snapshot lacked the file.
    daemon_cores: str | None = None
    daemon_cores_busy_s: float | None = None
    daemon_cores_idle_s: float | None = None
    daemon_cores_steal_s: float | None = None
    host_steal_s: float | None = None

    def consistent(self) -> str | None:
        for sender in self.senders:
            if problem := sender.consistent():
                return problem
        sums = {
            name: sum(getattr(s, name) for s in self.senders) for name in ("intended", "sent", "received")
        }
        sums |= {"lost": sum(s.lost for s in self.senders), "late": sum(s.late for s in self.senders)}
        for name, total in sums.items():
            if getattr(self, name) != total:
                return f"trial {self.number}: {name} {getattr(self, name)} != the senders' sum {total}"
        return None


def trial_totals(senders: list[SenderTrial]) -> dict[str, int | float]:
    """The trial's counts from its senders' (the only place they are summed)."""
    intended = sum(s.intended for s in senders)
    totals: dict[str, int | float] = {
        name: sum(getattr(s, name) for s in senders)
        for name in ("intended", "sent", "received", "lost", "late", "duplicated", "copies")
    }
    totals["unsent"] = sum(s.unsent for s in senders)
    bad = totals["lost"] + totals["late"] + totals["unsent"]
    totals["loss_ratio"] = round(bad / intended, 9) if intended else 0.0
    return totals


def trial_from_dict(data: Mapping) -> Trial:
    known = {f.name for f in fields(Trial)}
    values = {k: v for k, v in data.items() if k in known}
    values["latency_ms"] = Latency(**data.get("latency_ms") or {})
    values["senders"] = [SenderTrial(**s) for s in data.get("senders") or []]
    if data.get("rig") is not None:
        values["rig"] = RigCost(**data["rig"])
    return Trial(**values)


# -- the search's result ----------------------------------------------------------------------------------


@dataclass
class Bound:
    """A goal's answer: the relevant lower bound (the rate held) and upper bound (the rate not held), and
    the confirmation after the search (host/capacity/search.py): the rate that held a CONFIRM_S trial, with no later
    trial at or below it breaking the goal."""

    loss_ratio: float  # the goal: 0 for NDR, PDR_TARGET for PDR
    lower_msgs_per_s: float | None
    upper_msgs_per_s: float | None
    # True: confirmed_msgs_per_s held its confirmation (the lower bound, or a rate below it after steps
    # down); False: no rate could be confirmed, `unconfirmed` says why; None: not asked (CONFIRM_S=0, or a
    # result older than confirmation).
    confirmed: bool | None = None
    confirmed_msgs_per_s: float | None = None
    unconfirmed: str | None = None

    def published(self) -> float | None:
        """The rate the result gives as the NDR or PDR: the confirmed one; the search's lower bound when
        confirmation was not asked; none when it failed."""
        if self.confirmed is None:
            return self.lower_msgs_per_s
        return self.confirmed_msgs_per_s if self.confirmed else None


@dataclass
class Load:
    """The rig that offered the load: it changes what a daemon holds, so the result keeps it."""

    hosts: int
    senders_per_host: int
    remote_mem_bytes: int  # REMOTE_MEM: each generator's memory limit
    remote_cpus: int  # REMOTE_CPUS


@dataclass
class Ceiling:
    """Where the search's RATE_MAX came from: "given" (RATE_MAX=), "burst" (factor times the drain rate of
    a burst run of the same daemon and config just before the search, on its placement: host/capacity/ceiling.py)
    or "default" (that burst run gave no rate: RATE_MAX's default, and why)."""

    source: str
    rate_max: float
    burst_run_id: str | None = None  # its result: results/capacity/bursts/<id>.json
    burst_msgs_per_s: float | None = None
    factor: float | None = None
    why: str | None = None


@dataclass
class CapacityResult:
    """results/capacity/<run_id>.json."""

    run_id: str
    kind: str  # "capacity"
    profile: str
    daemon_version: str
    scenario: str
    transport: str
    destination: str
    senders: int
    settings: dict[str, float]
    started_utc: str
    finished_utc: str
    # "found", "unconfirmed" (a bound's confirmation failed: its `unconfirmed` says why), "daemon-died",
    # "error", "interrupted" (Ctrl-C or SIGTERM: the trials so far)
    outcome: str
    ndr_msgs_per_s: float | None
    pdr_msgs_per_s: float | None
    pdr_loss_ratio: float
    ndr: Bound
    pdr: Bound
    trials: list[Trial]
    latency_at_pdr: dict[str, Latency]  # "10%", "50%", "90%" of the PDR: measured there after the search
    cpu_placement: dict[str, str]  # which cpuset each role ran on ("" = any core)
    rig_limit_msgs_per_s: float | None  # the senders could not offer more than this (sender-bound)
    died_at_msgs_per_s: float | None  # the rate of the trial during which the daemon died
    machine: dict[str, object]
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # A user config's (--config): its sha256, file names and sizes, and text unless private
    # (model.userconfig.identity); None: the profile's own rendered config.
    config: dict[str, object] | None = None
    # `matrix --capacity`: the matrix's id and the replicate (model.result.Matrix's fields), which let a
    # matrix resume; None: a search of its own.
    matrix: dict[str, object] | None = None
    # capacity --swarm: every node of the swarm as `docker node inspect` described it (host/swarm.py's
    # Node); machine is then the central node's. None: one host.
    nodes: list[dict[str, object]] | None = None
    # What made the figures, beside `settings` (the search's): the rig's shape and memory, the UDP buffers
    # (UDP only), and the project's commit (`git rev-parse HEAD` at the command's start, or "unknown (why)").
    # None in results older than these.
    load: Load | None = None
    udp_buffers: UdpBuffers | None = None
    commit: str | None = None
    # Each generator's clock against the watcher's, and whether the latencies are trusted (Clocks); None in
    # results older than the check.
    clocks: Clocks | None = None
    # TUNING: "default", "tuned", "custom" (a step of `knobs`) or "user" (--config), and each knob the config
    # set (as a run's result has them, model/result.py Daemon). None in results older than the tuning axis.
    tuning: str | None = None
    knobs: dict[str, Any] | None = None
    # Where RATE_MAX came from (given, or a burst run's drain rate); None in results older than it.
    ceiling: Ceiling | None = None

    @property
    def at_ceiling(self) -> bool:
        """The published NDR is RATE_MAX: the daemon held every rate tried, its confirmation too, so its NDR
        is "at least". A confirmation that broke at RATE_MAX found a limit below it: the rate then published
        is the daemon's."""
        published = self.ndr_msgs_per_s
        return (
            published is not None
            and self.ndr.upper_msgs_per_s is None
            and published >= self.settings["rate_max"]
        )

    def to_dict(self) -> dict:
        return codec.plain(self)  # type: ignore[return-value]


class CapacityResultError(ValueError):
    """A file that is not a capacity result this model can read: the message says what is wrong."""


def result_from_dict(data: Mapping) -> CapacityResult:
    """The writer's own model, read back strictly (model/codec.py, as a run's result is): an unknown or
    missing key, or a value not of its field's type, is one line."""
    try:
        return codec.load(CapacityResult, data, "capacity result")
    except codec.CodecError as error:
        raise CapacityResultError(str(error)) from None


def read(path: Path) -> CapacityResult:
    """results/capacity/<run id>.json; CapacityResultError (one line) for a file that is not one."""
    try:
        data = codec.read_json(path)
    except codec.CodecError as error:
        raise CapacityResultError(str(error)) from None
    return result_from_dict(data)


def table(result: CapacityResult) -> str:
    """The short table `syslogbench capacity` prints."""
    rows = [f"{'trial':>5} {'offered':>10} {'dur s':>6} {'sent':>9} {'recv':>9} {'lost':>7} {'late':>7} "
            f"{'unsent':>7} {'loss':>8} {'p99 ms':>8} {'max ms':>8}  note"]  # fmt: skip
    for t in result.trials:
        lat = t.latency_ms
        note = "sender-bound" if t.sender_bound else ("daemon died" if t.daemon_exit is not None else "")
        note = " ".join(n for n in (note, t.purpose if t.purpose != "search" else "") if n)
        rows.append(
            f"{t.number:>5} {t.offered_msgs_per_s:>10,.0f} {t.duration_s:>6.1f} {t.sent:>9,} "
            f"{t.received:>9,} {t.lost:>7,} {t.late:>7,} {t.unsent:>7,} {t.loss_ratio:>8.4%} "
            f"{_ms(lat.p99):>8} {_ms(lat.max):>8}  {note}"
        )
    for name, bound, rate in (
        ("NDR", result.ndr, result.ndr_msgs_per_s),
        ("PDR", result.pdr, result.pdr_msgs_per_s),
    ):
        rows.append(
            f"{name} (loss <= {bound.loss_ratio:g}): {rate_text(rate)} msg/s; "
            f"bounds {rate_text(bound.lower_msgs_per_s)} .. {rate_text(bound.upper_msgs_per_s)}"
            f"{confirmation_text(bound)}"
        )
    if result.at_ceiling:
        rows.append(at_least_text(result))
    if (ceiling := result.ceiling) is not None:
        rows.append(ceiling_text(ceiling))
    return "\n".join(rows)


def at_least_text(result: CapacityResult) -> str:
    return (f"NDR at least {rate_text(result.ndr_msgs_per_s)} msg/s: the search's RATE_MAX held, so the daemon's "
            "own limit is above it; give a higher RATE_MAX")  # fmt: skip


def ceiling_text(ceiling: Ceiling) -> str:
    """Where RATE_MAX came from, in one line."""
    if ceiling.source == "burst":
        return (f"RATE_MAX {rate_text(ceiling.rate_max)} msg/s: {ceiling.factor:g} times the burst drain rate "
                f"{rate_text(ceiling.burst_msgs_per_s)} msg/s (run {ceiling.burst_run_id})")  # fmt: skip
    if ceiling.source == "default":
        return f"RATE_MAX {rate_text(ceiling.rate_max)} msg/s: {ceiling.why}"
    return f"RATE_MAX {rate_text(ceiling.rate_max)} msg/s, as given"


def confirmation_text(bound: Bound) -> str:
    if bound.confirmed is None:
        return ""
    if bound.confirmed:
        return f"; confirmed at {rate_text(bound.confirmed_msgs_per_s)}"
    return f"; {bound.unconfirmed or 'unconfirmed'}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def rate_text(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"
