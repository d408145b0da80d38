"""The capacity search itself: a warm-up trial, then MLRsearch (FD.io CSIT's `mlrsearch` package) for the NDR
and the PDR, restarted lower when the rig limited it; then each bound confirmed and the latency measured
at fractions of the PDR (docs/capacity.md). The command around it is host/searchrun.py."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from MLRsearch import Config, MultipleLossRatioSearch, SearchGoal

from syslogbench.host.measurer import BACKOFF, DaemonDied, Measurer, RigBound, TrialStopped
from syslogbench.model import capacity
from syslogbench.model.capacity import Bound, CapacitySettings, Latency, Trial

T = TypeVar("T")
MAX_RESTARTS = 8  # BACKOFF ** 8 = 0.43: the watcher's limit may be far below RATE_MAX


def goals(cap: CapacitySettings) -> list[SearchGoal]:
    """NDR (nothing lost or late) and PDR (at most PDR_TARGET), each decided by final trials adding up to
    TRIAL_SUM (one trial by default), of which EXCEED_RATIO may lose more."""
    return [
        SearchGoal(
            loss_ratio=ratio,
            exceed_ratio=cap.exceed_ratio,
            relative_width=cap.relative_width,
            initial_trial_duration=cap.initial_trial_s,
            final_trial_duration=cap.final_trial_s,
            duration_sum=max(cap.trial_sum_s, cap.final_trial_s),
        )
        for ratio in (0.0, cap.pdr_target)
    ]


@dataclass
class Found:
    """What the search found, and what stopped it."""

    ndr: Bound
    pdr: Bound
    rig_limit: float | None = None
    died_at: float | None = None
    interrupted: bool = False  # Ctrl-C or SIGTERM
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    stopped: str = ""  # what ended the search early: the daemon died, or a trial could not run

    def stopped_by(self, error: TrialStopped, trial: str) -> None:
        """The search ends here: the daemon died during a trial (at its rate), or the trial could not run."""
        self.stopped = str(error)
        if isinstance(error, DaemonDied):
            self.died_at = error.rate
            self.errors.append(str(error))
        else:
            self.errors.append(f"{trial} could not be run: {error}")


def stopping(found: Found, trial: str, step: Callable[[], T]) -> T | None:
    """step's value; None when a trial stopped the search (recorded in found)."""
    try:
        return step()
    except TrialStopped as error:
        found.stopped_by(error, trial)
        return None


def warm_up(measurer: Measurer, cap: CapacitySettings, found: Found) -> bool:
    """One short trial at RATE_MIN before the search: it waits for the rig to come up (which must not count
    against the search's own time limit) and lets the daemon open its files. Not given to the search."""
    warmed = stopping(
        found, "the warm-up trial", lambda: measurer.trial(cap.rate_min, cap.initial_trial_s, "warmup")
    )
    return warmed is not None


def out_of_time_hint(error: str, left_s: float, cap: CapacitySettings) -> str:
    """What to change when MLRsearch gave up for time ("Optimized search takes too long."): noisy trials
    near the bounds (UDP drops) keep it from narrowing them."""
    if "too long" not in error:
        return ""
    return (f" (MLRsearch had {left_s:.0f} s of SEARCH_MAX={cap.search_max_s:.0f}, the rest kept for the "
            f"confirmations and latency trials: raise SEARCH_MAX, or widen SEARCH_WIDTH, e.g. to "
            f"{cap.relative_width * 2:g} from {cap.relative_width:g})")  # fmt: skip


def search(
    measurer: Measurer, cap: CapacitySettings, log: Callable[[str], None], found: Found | None = None
) -> Found:
    """A warm-up trial, then MLRsearch between RATE_MIN and RATE_MAX, into found (a new one for None); a
    sender-bound trial is not believed: the search starts again with RATE_MAX below what the senders reached."""
    found = found or Found(Bound(0.0, None, None), Bound(cap.pdr_target, None, None))
    if not warm_up(measurer, cap, found):
        return found
    # SEARCH_MAX holds the confirmation and the latency trials too: MLRsearch gets what they leave.
    deadline = time.monotonic() + cap.search_max_s - capacity.reserve_s(cap)
    top = cap.rate_max
    for _ in range(MAX_RESTARTS + 1):
        left = deadline - time.monotonic()
        config = Config()
        config.goals = goals(cap)
        config.min_load, config.max_load = cap.rate_min, top
        config.search_duration_max = max(left, 1.0)
        config.warmup_duration = None
        mlrsearch = partial(
            MultipleLossRatioSearch(config=config).search, measurer=measurer, debug=lambda _: None
        )
        try:
            answers = stopping(found, "a trial", mlrsearch)
        except RigBound as bound:
            found.rig_limit = bound.limit
            top = bound.top
            found.notes.append(f"{bound}: the search starts again with RATE_MAX {top:,.0f} msg/s")
            log(f"notice: {found.notes[-1]}")
            if top <= cap.rate_min:
                found.errors.append(
                    f"the rig cannot measure even RATE_MIN={cap.rate_min:,.0f} msg/s: {bound}"
                )
                return found
            continue
        except RuntimeError as error:  # MLRsearch's own: out of time, or RATE_MIN already fails
            found.errors.append(f"the search stopped: {error}{out_of_time_hint(str(error), left, cap)}")
            return found
        if answers is None:  # the daemon died, or a trial could not run
            return found
        for goal, answer in answers.items():
            bound = found.ndr if goal.loss_ratio == 0.0 else found.pdr
            bound.lower_msgs_per_s = _load(answer.relevant_lower_bound)
            bound.upper_msgs_per_s = _load(answer.relevant_upper_bound)
        return found
    found.errors.append(f"the rig (senders or watcher) limited the search after {MAX_RESTARTS} restarts")
    return found


def _load(stat: object | None) -> float | None:
    return None if stat is None else round(float(stat), 1)


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
