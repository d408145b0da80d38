"""The published NDR's interval (docs/capacity.md, "The NDR's interval"): where the next search of the same
command on the same machine should publish its NDR, from NDR_REPEATS trials of TRIAL_FINAL repeated at the
published rate after the search. Stdlib only.

Two things move the next search's NDR. The machine: a core's speed here wanders by a third within minutes, and
a daemon's CPU per message at one rate moves with it, so each repeat's messages per daemon CPU second is one
draw of the speed the daemon runs at; their spread on the log scale, as a 95% t prediction interval for one
more draw, is h below. The search's resolution: this search's NDR lies below the lowest rate that broke the
goal above it (`upper`), and the next search's lies as far below its own. So:

    low  = NDR / (upper / NDR) x exp(-h)
    high = upper x exp(h),   h = t95(n - 1) x s x sqrt(1 + 1/n)

with s the standard deviation of log(messages per daemon CPU second) over the n repeats. It assumes the NDR
moves with the core's speed as the CPU per message at that rate does; bench/next_search.py checks it against
the next search (docs/findings/ndr-next-search.md).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from syslogbench.model.capacity.trial import Trial
from syslogbench.model.student import t95

REPEAT = "ndr repeat"  # the repeats' purpose in the result's trials


@dataclass
class Interval:
    """The NDR's 95% interval for the next search, and the repeats it is from; low and high are None where
    there is none, and `why` says why."""

    repeats: int  # trials of TRIAL_FINAL run at the published NDR (purpose REPEAT in the result's trials)
    held: int  # of them, those that lost nothing and had nothing late
    msgs_per_cpu_s: list[float] = field(default_factory=list)  # each repeat's messages per daemon CPU second
    core_share: float | None = None  # the daemon's CPU over the repeats' length, per core of its placement
    # The lowest rate above the NDR at which a final-length trial broke it.
    upper_msgs_per_s: float | None = None
    low_msgs_per_s: float | None = None
    high_msgs_per_s: float | None = None
    why: str | None = None


def lowest_broken(trials: list[Trial], ndr: float, final_s: float) -> float | None:
    """The lowest rate above the NDR at which a search or confirmation trial of at least TRIAL_FINAL lost
    or had late messages: the search's resolution above it (its upper bound, or lower after a step-down)."""
    broken = [t.offered_msgs_per_s for t in trials if t.purpose in ("search", "confirm") and not t.sender_bound
              and t.duration_s >= final_s - 1e-6 and t.offered_msgs_per_s > ndr and t.loss_ratio > 0]  # fmt: skip
    return min(broken, default=None)


def drift(draws: list[float]) -> float:
    """h: the half-width, on the log scale, of the 95% t prediction interval for one more draw."""
    logs = [math.log(d) for d in draws]
    n = len(logs)
    return t95(n - 1) * statistics.stdev(logs) * math.sqrt(1 + 1 / n)


def interval(ndr: float, repeats: list[Trial], upper: float | None, cores: int) -> Interval:
    """The interval from the repeats at the NDR (those that ran to their end: not sender-bound, with the
    daemon's CPU read) and the lowest rate above it that broke."""
    usable = [t for t in repeats if not t.sender_bound and t.daemon_cpu_s and t.received > 0]
    found = Interval(repeats=len(repeats), held=sum(1 for t in repeats if t.loss_ratio == 0),
                     msgs_per_cpu_s=[round(t.received / (t.daemon_cpu_s or 1), 1) for t in usable],
                     upper_msgs_per_s=upper)  # fmt: skip
    if usable:
        busy = sum(t.daemon_cpu_s or 0.0 for t in usable) / sum(t.duration_s for t in usable)
        found.core_share = round(busy / max(cores, 1), 3)
    if upper is None:
        found.why = "no rate above the NDR broke it: the NDR is at least what it says, with no interval"
    elif len(usable) < 2:
        found.why = (f"{len(usable)} of {len(repeats)} repeats at the NDR ran to their end with the daemon's "
                     "CPU read: an interval needs 2")  # fmt: skip
    else:
        h = drift(found.msgs_per_cpu_s)
        found.low_msgs_per_s = round(ndr * ndr / upper * math.exp(-h), 1)
        found.high_msgs_per_s = round(upper * math.exp(h), 1)
    return found


def interval_text(found: Interval) -> str:
    """One line: "NDR interval for the next search 81,200 .. 104,300 msg/s (95%), from 5 repeats at the NDR
    (5 held; messages per daemon CPU second spread 3.1%, the daemon at 0.97 of its cores) and the lowest
    rate above it that broke, 96,000 msg/s"."""
    spread = ""
    if len(found.msgs_per_cpu_s) >= 2:
        spread = f"; messages per daemon CPU second spread {statistics.stdev(found.msgs_per_cpu_s) / statistics.fmean(found.msgs_per_cpu_s):.1%}"
    share = "" if found.core_share is None else f", the daemon at {found.core_share:.2f} of its cores"
    repeats = f"{found.repeats} repeats at the NDR ({found.held} held{spread}{share})"
    if found.low_msgs_per_s is None or found.high_msgs_per_s is None:
        return f"NDR interval: none: {found.why}; {repeats}"
    return (f"NDR interval for the next search {found.low_msgs_per_s:,.0f} .. {found.high_msgs_per_s:,.0f} msg/s "
            f"(95%), from {repeats} and the lowest rate above it that broke, {found.upper_msgs_per_s:,.0f} msg/s")  # fmt: skip
