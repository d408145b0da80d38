"""The capacity search itself: a warm-up trial, then MLRsearch (FD.io CSIT's `mlrsearch` package) for the NDR
and the PDR, restarted lower when the rig limited it (docs/capacity.md). Each bound is then confirmed and the
latency measured by capacity/confirm.py; the command around both is capacity/command.py."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from MLRsearch import Config, MultipleLossRatioSearch, SearchGoal

from syslogbench.host.capacity.measurer import DaemonDied, Measurer, RigBound, TrialStopped
from syslogbench.model import capacity
from syslogbench.model.capacity import Bound, CapacitySettings

T = TypeVar("T")
AT_RATE = "at rate"  # a trial's purpose: compare's fixed rate, before the search (at_rate below)
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
    ndr_interval: capacity.Interval | None = None  # from the repeats at the NDR (capacity/repeats.py)

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


def at_rate(measurer: Measurer, cap: CapacitySettings, rate: float, found: Found) -> bool:
    """compare --capacity: one trial of TRIAL_FINAL at the rate every side runs (purpose "at rate"), right
    after the warm-up, so that the sides' trials fall within a turn or two of each other: the daemon's CPU
    per message there is paired across the sides (host/compare.py). Not given to the search; a rig that
    limits it is a note. False where a trial stopped the search (the daemon died)."""
    try:
        done = stopping(found, "the trial at a fixed rate",
                        lambda: measurer.checked(rate, cap.final_trial_s, AT_RATE))  # fmt: skip
    except RigBound as bound:
        found.notes.append(f"the trial at the comparison's fixed rate, {rate:,.0f} msg/s: {bound}")
        return True
    return done is not None


def search(
    measurer: Measurer,
    cap: CapacitySettings,
    log: Callable[[str], None],
    found: Found | None = None,
    cpu_rate: float | None = None,
) -> Found:
    """A warm-up trial (and, in a comparison, a trial at its fixed rate), then MLRsearch between RATE_MIN and
    RATE_MAX, into found (a new one for None); a sender-bound trial is not believed: the search starts again
    with RATE_MAX below what the senders reached."""
    found = found or Found(Bound(0.0, None, None), Bound(cap.pdr_target, None, None))
    if not warm_up(measurer, cap, found):
        return found
    if cpu_rate is not None and not at_rate(measurer, cap, cpu_rate, found):
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
