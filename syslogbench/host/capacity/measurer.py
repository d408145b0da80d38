"""The capacity search's measurer: one trial per call, asked of the watcher, and what a trial says of the rig
rather than of the daemon (the senders could not offer the rate, the watcher could not follow it); and the
latency figures, one final-length trial at 10%, 50% and 90% of the published PDR, as CSIT reports them.
Each trial's percentiles are the watcher's own, from its histogram (rig-rust/src/follow/tally.rs), which the
trial keeps in HdrHistogram's encoding (histogram.py, encoded as the answer arrives: session.py)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from MLRsearch import AbstractMeasurer, MeasurementResult

from syslogbench.model import capacity
from syslogbench.model.capacity import CapacitySettings, Latency, Trial

# A search the rig could not feed (the senders) or follow (the watcher) starts again this far below what the
# senders reached, or below the rate the watcher could not follow.
BACKOFF = 0.9
# A trial whose watcher was held up, or a sender lagged in, is run again, at most this many more times.
STALL_REPEATS = 2


class TrialStopped(RuntimeError):
    """A trial ended the search: no later trial can run."""


class DaemonDied(TrialStopped):
    def __init__(self, rate: float, code: int | None) -> None:
        super().__init__(f"the daemon died (exit code {code}) during the trial at {rate:,.0f} msg/s")
        self.rate, self.code = rate, code


class RigBound(RuntimeError):
    """The rig, not the daemon, limited the trial: it says nothing of the daemon. limit: the rate the rig
    reached (or could not follow); top: the RATE_MAX the search starts again with."""

    def __init__(self, text: str, limit: float, top: float) -> None:
        super().__init__(text)
        self.limit, self.top = limit, top


def delivered_in_time(trial: Trial) -> bool:
    """Every intended message sent, and none lost or late. A sender that fell behind for a moment (woken
    276 ms late on a busy machine, at 667 msg/s and 1% of a core) then still offered the whole load, and the
    daemon kept up with it: the trial is the daemon's evidence, its sender_bound flag kept as the rig's.
    Believing the lag instead lowered RATE_MAX below the rate a throttled daemon holds."""
    return trial.sent == trial.intended and trial.lost == 0 and trial.late == 0


def told(trial: Trial) -> str:
    """A trial in one line, as it ends: what was asked, what went wrong, the p99."""
    p99 = trial.latency_ms.p99 if trial.latency_ms else None
    latency = "" if p99 is None else f", p99 {p99:,.1f} ms"
    problems = "".join(f"; {error}" for error in trial.errors)
    return (f"trial {trial.number} ({trial.purpose}, {trial.duration_s:g} s at {trial.offered_msgs_per_s:,.0f} "
            f"msg/s): lost {trial.lost:,}, late {trial.late:,}, unsent {trial.unsent:,} "
            f"({trial.loss_ratio:.2%}){latency}{problems}")  # fmt: skip


class SenderBound(RigBound):
    """The senders could not offer the rate."""

    def __init__(self, rate: float, achieved: float | None) -> None:
        reached = achieved or rate / 2
        text = f"the senders reached only {achieved or 0:,.0f} of {rate:,.0f} msg/s"
        super().__init__(text, reached, BACKOFF * reached)


class WatcherBound(RigBound):
    """The watcher could not follow the output at this rate: held up in every attempt at the trial."""

    def __init__(self, rate: float, gap_s: float | None) -> None:
        super().__init__(
            f"the watcher was held up ({gap_s or 0:.1f} s between two looks at the output) in "
            f"{STALL_REPEATS + 1} trials at {rate:,.0f} msg/s: it cannot follow that rate here",
            rate,
            BACKOFF * rate,
        )


class TrialFailed(TrialStopped):
    """The rig could not run a trial (the watcher's answer says why)."""


RunTrial = Callable[[float, float], dict]  # (total msg/s, seconds) -> the watcher's trial record
# A search's turn on the machine (capacity/turns.py): one trial of several searches at a time.
Turn = Callable[[], contextlib.AbstractContextManager[None]]


@dataclass(eq=False)
class Measurer(AbstractMeasurer):
    """MLRsearch's measurer: one trial per call, with the pause before it; every trial kept."""

    run_trial: RunTrial
    cap: CapacitySettings
    sleep: Callable[[float], None] = time.sleep
    turn: Turn = contextlib.nullcontext
    # Where each trial's one line goes as it ends: a search of many minutes shows that it moves, and why.
    log: Callable[[str], None] = lambda line: None
    trials: list[Trial] = field(default_factory=list, init=False)
    # The daemon's machine, as the watcher sends it with the first trial.
    machine: dict | None = field(default=None, init=False)

    def trial(self, rate: float, duration: float, purpose: str = "search") -> Trial:
        if self.trials:
            self.sleep(self.cap.pause_s)  # queues drain before the next rate
        with self.turn():
            answer = self.run_trial(rate, duration)
        self.machine = answer.pop("machine", None) or self.machine
        if answer.get("daemon_exit") is not None and "number" not in answer:
            raise DaemonDied(rate, answer["daemon_exit"])
        if "number" not in answer:
            raise TrialFailed(answer.get("error") or f"no trial record: {answer}")
        trial = capacity.trial_from_dict(answer)
        trial.purpose = purpose
        if problem := trial.consistent():
            trial.errors.append(f"accounting: {problem}")
        self.trials.append(trial)
        self.log(told(trial))
        if trial.daemon_exit is not None:
            raise DaemonDied(rate, trial.daemon_exit)
        if failed := [s for s in trial.senders if s.status.startswith("failed")]:
            # Its process has ended: no later trial can run. The trial keeps the reason in its errors.
            raise TrialFailed(f"{len(failed)} sender(s) failed at {rate:,.0f} msg/s: {failed[0].status}")
        return trial

    def stalled(self, trial: Trial) -> bool:
        return trial.sample_max_s is not None and trial.sample_max_s > self.cap.latency_bound_s / 2

    def lagged(self, trial: Trial) -> bool:
        return trial.sender_bound and not delivered_in_time(trial)

    def checked(self, rate: float, duration: float, purpose: str = "search") -> Trial:
        """A trial the daemon alone decided: one the watcher was held up in, or a sender fell behind in, is run
        again (at most STALL_REPEATS more times; a busy machine's moment passes, a rig's limit stays); RigBound
        when the watcher or the senders limited it every time. Every trial the search, the confirmation and
        the latency use passes here."""
        trial = self.trial(rate, duration, purpose)
        for _ in range(STALL_REPEATS):
            if not self.stalled(trial) and not self.lagged(trial):
                break
            trial.purpose = "repeated"  # kept, but not used
            trial = self.trial(rate, duration, purpose)
        if self.stalled(trial):
            trial.purpose = "repeated"
            raise WatcherBound(rate, trial.sample_max_s)
        if self.lagged(trial):
            raise SenderBound(rate, trial.achieved_msgs_per_s)
        return trial

    def measure(self, intended_duration: float, intended_load: float) -> MeasurementResult:
        trial = self.checked(intended_load, intended_duration)
        # Late is lost: only what arrived within LATENCY_BOUND of its intended time was forwarded.
        return MeasurementResult(
            intended_duration=intended_duration,
            intended_load=intended_load,
            intended_count=trial.intended,
            offered_count=trial.sent,
            forwarding_count=trial.received - trial.late,
        )

    def latency(self, pdr: float | None, notes: list[str], deadline: float) -> dict[str, Latency]:
        """One final-length trial at 10%, 50% and 90% of the published PDR, while the time allows; what
        kept a fraction from its figure goes to notes."""
        out: dict[str, Latency] = {}
        if pdr is None:
            notes.append("no latency at fractions of the PDR: no PDR is published")
            return out
        cap = self.cap
        for fraction in capacity.PDR_FRACTIONS:
            if time.monotonic() + capacity.trial_cost_s(cap, cap.final_trial_s) > deadline:
                notes.append(f"no time left for the latency at {fraction:.0%} of the PDR")
                break
            try:
                trial = self.checked(max(cap.rate_min, pdr * fraction), cap.final_trial_s, "latency")
            except RigBound as bound:
                notes.append(f"no latency at {fraction:.0%} of the PDR: {bound}")
                continue
            out[f"{fraction:.0%}"] = trial.latency_ms
        return out
