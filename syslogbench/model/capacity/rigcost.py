"""What the rig itself cost one trial beside the daemon, how finely it saw arrivals, and the shares past
which a trial's figures are the rig's more than the daemon's."""

from __future__ import annotations

from dataclasses import dataclass, field

from syslogbench.model.capacity.sender import SenderTrial

# The rig may take at most this share of the daemon's CPU in a trial before the trial says so.
RIG_SHARE_MAX = 0.05
# A look gap above this share of LATENCY_BOUND makes the latency the rig's more than the daemon's.
LOOK_GAP_SHARE_MAX = 0.1
# A clock known to no better than this share of LATENCY_BOUND cannot place a latency against the bound: the
# same tenth the rig allows its own look gap.
CLOCK_SHARE_MAX = 0.1


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
