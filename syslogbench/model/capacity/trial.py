"""One trial of a capacity search: its messages' sequence numbers and schedule, its latency, and its record
as the result holds it (summed from its senders' parts, model/capacity/sender.py)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from syslogbench.model.capacity.rigcost import RigCost
from syslogbench.model.capacity.sender import SenderTrial
from syslogbench.model.codec import COLUMNS

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
# Latencies are kept in microseconds to 3 significant digits (the follower's HdrHistogram, tally.rs): the
# watcher sends {bucket's value: count}, the host keeps it in HdrHistogram's encoding (Trial.latency_histogram).
LATENCY_DIGITS = 3
PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p999": 99.9}


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
    sample_s: float | None  # how often the output was looked at: the latency's resolution
    stale_lines: int  # lines of earlier trials seen during this one (they count in their own trial as lost)
    daemon_cpu_s: float | None
    watcher_cpu_s: float | None
    udp_rcvbuf_errors: int | None
    udp_in_errors: int | None
    # Written as columns (model/codec.py COLUMNS); read in either layout.
    senders: list[SenderTrial] = field(default_factory=list, metadata=COLUMNS)
    # Before the trial: how long the earlier trials' lines took to stop arriving, and how many there were.
    drain_s: float | None = None
    # The longest gap between two looks at the output. Past half of LATENCY_BOUND the watcher itself was held
    # up (a busy machine) and made latencies up: the search repeats such a trial (host/capacity/measurer.py).
    sample_max_s: float | None = None
    drained_lines: int = 0
    daemon_exit: int | None = None  # the daemon died during this trial
    errors: list[str] = field(default_factory=list)
    # "warmup" (before the search, waits for the rig: not given to the search), "at rate" (in a comparison,
    # right after the warm-up: its fixed rate, for CPU per message; not given to the search either), "search",
    # "confirm" (a CONFIRM_S trial at a bound, after the search), "latency" (at a fraction of the PDR, after
    # that), "ndr repeat" (NDR_REPEATS trials at the published NDR, last: its interval, model/capacity/interval.py)
    # or "repeated" (one the watcher or a sender held up, run again: kept, not used).
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
    # The follower's latency histogram (1 us to an hour at LATENCY_DIGITS significant digits) in
    # HdrHistogram's compressed V2 encoding, base64: the host encodes the watcher's answer as it arrives
    # (host/capacity/histogram.py, which also decodes it; this model stays stdlib-only).
    latency_histogram: str | None = None
    # The same as {us: count}, as the watcher answers it: in results from before the encoding, and from the
    # Python watcher before the follower, whose values (rounded to 3 decimal digits) the encoding would change.
    # None where latency_histogram holds it.
    latency_histogram_us: dict[str, int] | None = None
    # Where a trial's time went beyond its length (None in results from before): the watcher's, from the
    # host's request to the common start (the drain of earlier lines, the senders' rendering and clock checks,
    # the start's lead) and from the end of the schedule to its answer (the last arrivals, the senders'
    # reports, the record); and the host's whole wait for the answer, `docker compose exec` included.
    setup_s: float | None = None
    wrapup_s: float | None = None
    asked_s: float | None = None

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
