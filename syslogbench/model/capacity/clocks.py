"""Each generator's clock against the watcher's: checked before each trial on the control channel, and over
a search whether the latencies are on one clock."""

from __future__ import annotations

from dataclasses import dataclass

from syslogbench.model.capacity.rigcost import CLOCK_SHARE_MAX
from syslogbench.model.capacity.sender import SenderTrial
from syslogbench.model.capacity.trial import Trial

# A sender checks its clock against the watcher's this many times before each trial and keeps the round trip
# that took the least time: the one least delayed on its way, so the best estimate (as NTP filters its samples).
CLOCK_ROUNDS = 8


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
