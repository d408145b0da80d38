"""A capacity search's confirmation: after the search, each bound held for CONFIRM_S (RFC 2544's 60 s) before it
is published, stepping down while a trial at or below it breaks its goal, then the latency at fractions of
the PDR (docs/capacity.md, "Confirmation before publishing")."""

from __future__ import annotations

import time
from collections.abc import Callable

from syslogbench.host.capacity.measurer import BACKOFF, Measurer, RigBound
from syslogbench.host.capacity.search import Found, stopping
from syslogbench.model import capacity
from syslogbench.model.capacity import Bound, CapacitySettings, Latency, Trial

# -- confirmation -------------------------------------------------------------------------------------------
# After the search, each bound is held for CONFIRM_S (RFC 2544's 60 s) before it is published, and no later
# trial at or below a published rate may break its goal (the latency trials included). A rate that breaks
# is not published: its goal steps down to the highest rate at or below BACKOFF of it where the search's
# own full-length trials met the goal (none: BACKOFF of it), and confirms again, until one holds, RATE_MIN
# is passed, or SEARCH_MAX is over; the bound then says it is unconfirmed, and why.


def meets(trial: Trial, goal: Bound) -> bool:
    return trial.loss_ratio <= goal.loss_ratio


def after_search(trials: list[Trial]) -> list[Trial]:
    """The confirmation and latency trials the daemon alone decided (not repeated, not sender-bound)."""
    return [t for t in trials if t.purpose in ("confirm", "latency") and not t.sender_bound]


def contradiction(trials: list[Trial], goal: Bound, rate: float) -> Trial | None:
    """A trial after the search at or below rate that broke the goal: rate cannot be published."""
    broken = [
        t for t in after_search(trials) if t.offered_msgs_per_s <= rate * (1 + 1e-9) and not meets(t, goal)
    ]
    return max(broken, key=lambda t: t.offered_msgs_per_s, default=None)


def held(trials: list[Trial], goal: Bound, rate: float, seconds: float) -> bool:
    """A confirmation trial at this very rate already met the goal (the NDR's may serve the PDR)."""
    return any(t.purpose == "confirm" and abs(t.offered_msgs_per_s - rate) < 1e-6 and t.duration_s >= seconds
               and meets(t, goal) for t in after_search(trials))  # fmt: skip


def behind(trial: Trial, bound_s: float) -> tuple[int, float] | None:
    """From which second a trial's daemon stayed more than bound_s behind the senders' schedule, and the
    msg/s it wrote over the whole trial's sending, from its arrivals per second; None where it was not behind
    at the end of the sending, or no arrivals were recorded. Single slow seconds that it caught up on do not
    count, and no second alone gives the rate: the per-second counts of a daemon at its limit vary by 15%
    here, and one trial's last second, at 0.70 of the rate in a trial whose seconds ranged 0.68-1.28, once
    drove a 30% step down (issue 47)."""
    seconds = int(trial.duration_s)
    if not trial.arrived_per_s or not seconds:
        return None
    counts = (trial.arrived_per_s + [0] * seconds)[:seconds]  # a second with nothing is not in the list
    backlog, since = 0.0, 0
    for second, count in enumerate(counts):
        backlog = max(0.0, backlog + trial.offered_msgs_per_s - count)
        if backlog <= trial.offered_msgs_per_s * bound_s:
            since = second + 1
    if since == seconds:
        return None
    return since, sum(counts) / seconds


def fell_behind(trial: Trial, bound_s: float, found: tuple[int, float] | None = None) -> str | None:
    """behind() in words (found: its answer, where the caller has it): "it was more than 1 s behind from
    49 s of 60 on, and wrote 52,120 msg/s over the whole trial (97% of the rate)"."""
    if (found := found or behind(trial, bound_s)) is None:
        return None
    since, wrote = found
    return (
        f"it was more than {bound_s:g} s behind from {since} s of {int(trial.duration_s)} on, and wrote "
        f"{wrote:,.0f} msg/s over the whole trial ({wrote / trial.offered_msgs_per_s:.0%} of the rate)"
    )


def step_down(trials: list[Trial], goal: Bound, rate: float, cap: CapacitySettings,
              wrote: float | None = None) -> float | None:  # fmt: skip
    """The next rate to confirm below one that broke: the highest at or below BACKOFF of it, and at or
    below what the daemon wrote over the trial that broke it, once behind there (wrote, but not below half of it),
    where a full-length trial of the search met the goal, else that ceiling; None below RATE_MIN. A confirmation that fell behind at
    120,084 msg/s wrote 89,879 a second from then: the next one at 97,919 failed too, and a step cost 67 s
    of SEARCH_MAX (docs/capacity.md)."""
    # Not below half the broken rate in one step: a daemon that stalled for a while wrote little from then.
    ceiling = BACKOFF * rate if wrote is None else max(min(BACKOFF * rate, wrote), rate / 2)
    passed = [t.offered_msgs_per_s for t in trials if t.purpose == "search" and not t.sender_bound
              and t.duration_s >= cap.final_trial_s - 1e-6 and t.offered_msgs_per_s <= ceiling
              and meets(t, goal)]  # fmt: skip
    below = max(passed, default=ceiling)
    return round(below, 1) if below >= cap.rate_min else None


def unconfirmed(goal: Bound, why: str, log: Callable[[str], None]) -> None:
    goal.confirmed, goal.confirmed_msgs_per_s, goal.unconfirmed = False, None, why
    log(f"notice: {why}")


def settle(measurer: Measurer, goal: Bound, name: str, cap: CapacitySettings, deadline: float,
           log: Callable[[str], None]) -> None:  # fmt: skip
    """Confirm the goal's rate (its last confirmed one, else the search's lower bound), stepping down
    while a trial at or below it breaks the goal."""
    rate = goal.confirmed_msgs_per_s if goal.confirmed else goal.lower_msgs_per_s
    while rate is not None:
        if (broken := contradiction(measurer.trials, goal, rate)) is not None:
            why = f"a {broken.duration_s:.0f} s trial at {broken.offered_msgs_per_s:,.0f} msg/s lost {broken.loss_ratio:.4%}"
            lag = behind(broken, cap.latency_bound_s)
            if lag is not None:
                why += f" ({fell_behind(broken, cap.latency_bound_s, lag)})"
            rate = step_down(measurer.trials, goal, min(rate, broken.offered_msgs_per_s), cap,
                             None if lag is None else lag[1])  # fmt: skip
            if rate is None:
                return unconfirmed(
                    goal, f"{name} unconfirmed: {why}, and no rate from RATE_MIN up was left", log
                )
            log(f"notice: {name}: {why}; confirming {rate:,.0f} msg/s")
            continue
        if held(measurer.trials, goal, rate, cap.confirm_s):
            goal.confirmed, goal.confirmed_msgs_per_s, goal.unconfirmed = True, rate, None
            return None
        if time.monotonic() + capacity.trial_cost_s(cap, cap.confirm_s) > deadline:
            return unconfirmed(goal, f"{name} unconfirmed: no time left within SEARCH_MAX={cap.search_max_s:g} s "
                                     f"for a {cap.confirm_s:g} s trial at {rate:,.0f} msg/s", log)  # fmt: skip
        try:
            measurer.checked(rate, cap.confirm_s, "confirm")
        except RigBound as bound:
            return unconfirmed(goal, f"{name} unconfirmed: the rig limited its confirmation: {bound}", log)
    return None


def confirm(measurer: Measurer, found: Found, cap: CapacitySettings, deadline: float,
            log: Callable[[str], None]) -> dict[str, Latency]:  # fmt: skip
    """Confirm the NDR and the PDR, then the latency trials at fractions of the PDR; when a latency trial
    breaks a goal at or below its rate, that rate steps down and is confirmed again. The latencies of
    the last round. Without CONFIRM_S, the latency trials only (a broken one still unpublishes its rate)."""
    if found.errors or found.interrupted:
        return {}
    goals = {"NDR": found.ndr, "PDR": found.pdr}
    trial = "a confirmation or latency trial"
    latency = stopping(found, trial, lambda: confirmed_latency(measurer, found, goals, cap, deadline, log))
    if latency is not None:
        return latency
    for name, goal in goals.items():
        if cap.confirm_s and not goal.confirmed:
            unconfirmed(goal, f"{name} unconfirmed: the confirmation stopped ({found.stopped})", log)
    return {}


def confirmed_latency(measurer: Measurer, found: Found, goals: dict[str, Bound], cap: CapacitySettings,
                      deadline: float, log: Callable[[str], None]) -> dict[str, Latency]:  # fmt: skip
    """confirm()'s rounds: settle each goal, measure the latency, again while a latency trial broke one."""
    while True:
        if cap.confirm_s:
            for name, goal in goals.items():
                settle(measurer, goal, name, cap, deadline, log)
        latency = measurer.latency(found.pdr.published(), found.notes, deadline)
        broken = [(name, goal) for name, goal in goals.items() if goal.published() is not None
                  and contradiction(measurer.trials, goal, goal.published() or 0) is not None]  # fmt: skip
        if not broken:
            return latency
        if cap.confirm_s:
            continue  # settle() steps each broken goal down below the trial that broke it, and confirms again
        for name, goal in broken:
            trial = contradiction(measurer.trials, goal, goal.published() or 0)
            assert trial is not None
            unconfirmed(goal, f"{name} unconfirmed: the latency trial at {trial.offered_msgs_per_s:,.0f} msg/s, "
                              f"at or below it, lost {trial.loss_ratio:.4%}", log)  # fmt: skip
        return latency
