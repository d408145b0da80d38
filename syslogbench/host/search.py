"""`syslogbench capacity`: the daemon's NDR and PDR for one scenario's transport and destination, found by
MLRsearch over trials against a daemon that stays up (docs/capacity.md).

The daemon, the watcher and the generators come up once, through the same executor as `run`
(host/compose.py); each trial is one `trial_run` on the control channel, asked through `docker compose exec`
in the watcher (rig/trials.py). The search itself is FD.io CSIT's `mlrsearch` package; latencies are merged
and read with `hdrhistogram`. The result goes to results/capacity/<run id>.json.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from hdrh.histogram import HdrHistogram
from MLRsearch import AbstractMeasurer, Config, MeasurementResult, MultipleLossRatioSearch, SearchGoal

from syslogbench import contract
from syslogbench.contract import EXIT_CODES
from syslogbench.host import benchmark, environment, lock, profiles, resources, setup, swarm, userconfig
from syslogbench.host.compose import Compose, Up, project_name
from syslogbench.host.log import log
from syslogbench.model import capacity, machine, result, scenarios, settings
from syslogbench.model import userconfig as userconfig_model
from syslogbench.model.capacity import (
    Bound,
    CapacityResult,
    CapacitySettings,
    Latency,
    Load,
    Trial,
    UdpBuffers,
)

# A last hop that reads as fast as it can, or at a fixed rate; a pause belongs to one burst (rig/lasthop.py).
RELAY_TARGETS = ("normal", "slow")
EXEC_ALLOWANCE_S = 120.0  # beyond a trial's own length: rendering, the common start, compose exec itself
# The first trial waits for the rig: images start, the watcher resets the volumes, senders connect (the
# watcher's READY_TIMEOUT is 300 s), on a machine that may be busy.
FIRST_TRIAL_ALLOWANCE_S = 360.0
UP_ALLOWANCE_S = 600.0  # images start, senders connect; and the daemon's stop at the end
HIGHEST_US = 3_600_000_000  # an hour: no latency is longer, or the trial would have given up on it
PDR_FRACTIONS = capacity.PDR_FRACTIONS  # latency at these fractions of the PDR, as CSIT reports it
# A search the rig could not feed (the senders) or follow (the watcher) starts again this far below what the
# senders reached, or below the rate the watcher could not follow; MAX_RESTARTS times at most.
BACKOFF = 0.9
MAX_RESTARTS = 8  # 0.9 ** 8 = 0.43: the watcher's limit may be far below RATE_MAX
INTERRUPTIONS = {True: "Ctrl-C", False: "SIGTERM"}  # by: was it a plain KeyboardInterrupt
STALL_REPEATS = 2  # a trial whose watcher was held up is run again, at most this many more times
ROOT = Path(__file__).resolve().parents[2]  # the project's checkout: its commit goes into each result


class DaemonDied(RuntimeError):
    def __init__(self, rate: float, code: int | None) -> None:
        super().__init__(f"the daemon died (exit code {code}) during the trial at {rate:,.0f} msg/s")
        self.rate, self.code = rate, code


class RigBound(RuntimeError):
    """The rig, not the daemon, limited the trial: it says nothing of the daemon. limit: the rate the rig
    reached (or could not follow); top: the RATE_MAX the search starts again with."""

    def __init__(self, text: str, limit: float, top: float) -> None:
        super().__init__(text)
        self.limit, self.top = limit, top


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


class Unsupported(settings.SettingsError):
    """The profile cannot run the scenario's transport or destination: `matrix --capacity` counts it n/a."""


class TrialFailed(RuntimeError):
    """The rig could not run a trial (the watcher's answer says why)."""


@dataclass(frozen=True)
class Plan:
    """What a capacity search runs, checked before any container starts."""

    profile: profiles.Profile
    cfg: settings.Settings
    env: dict[str, str]
    scenario: scenarios.Scenario
    cap: CapacitySettings
    cpu_placement: dict[str, str]  # which cores (one host) or nodes (a swarm) each role has
    user: userconfig.UserConfig | None = None
    swarm: OnSwarm | None = None  # capacity --swarm


@dataclass(frozen=True)
class OnSwarm:
    """The swarm's nodes and where the services go (host/swarm.py), and the registry the nodes pull from."""

    nodes: list[swarm.Node]
    placement: swarm.Placement
    registry: str | None = None


def plan(
    profile_name: str,
    overrides: dict[str, str],
    config: tuple[Path, bool] | None = None,
    on_swarm: bool = False,
    registry: str | None = None,
) -> Plan:
    """Every bad input as one line (SettingsError, CapacityError, ProfileError, ScenarioError, SwarmError)
    before any container: a PDR target outside [0, 1), an empty rate range, LATENCY_BOUND=0, a transport the
    profile lacks; a user config (--config) that cannot be searched; a swarm it cannot run on."""
    cap, rest = capacity.split(overrides)
    refuse_unused(rest)
    profile = profiles.resolve(profile_name)
    rest, options = userconfig.split_settings(rest)
    user = userconfig.given(config, profile.daemon, options)
    if user is not None and user.expect_dropped:
        raise settings.SettingsError(
            "capacity --config counts every message a trial sends, so a config that drops some on purpose "
            f"(EXPECT_DROPPED={user.expect_dropped}) cannot be searched yet: use run --config for it"
        )
    if on_swarm and int(cap.daemon_cores):
        raise settings.SettingsError(
            f"DAEMON_CORES={int(cap.daemon_cores)} is for one host: on a swarm the daemon has the central node and "
            "the senders their own nodes; leave it out"
        )
    cores = capacity.placement(int(cap.daemon_cores), os.cpu_count() or 1)  # one that leaves none: one line
    cfg, env = environment.run_env(rest)
    userconfig.refuse_udp_rcvbuf(user, cfg.udp_rcvbuf)
    scenario = scenarios.load(cfg.scenario)
    if reasons := scenarios.unsupported(scenario, profile.features):
        raise Unsupported(
            f"{profile.profile} cannot run scenario {scenario.id}: {'; '.join(reasons)}; pick another scenario"
        )
    if found := load_problems(cfg, scenario, profile, cap, user):
        raise resources.DoesNotFit(settings.listed("the search cannot run", found))
    if scenario.destination == "relay" and scenario.relay_target not in RELAY_TARGETS:
        raise settings.SettingsError(
            f"scenario {scenario.id}: its last hop pauses ({scenario.relay_target}) once, at a run's start, which "
            f"a search of many trials has not got; pick a relay scenario whose target is "
            f"{' or '.join(RELAY_TARGETS)} (relay, relay-slow-disk-*)"
        )
    if not on_swarm:
        return Plan(profile, cfg, env, scenario, cap, cores, user)
    where = OnSwarm(*swarm.checked(profile, cfg, scenario, user, central_here=True), registry)
    central = where.placement.central
    nodes = {"daemon": f"node {central.hostname}",
             "senders": "nodes " + ", ".join(n.hostname for n in where.placement.generators)}  # fmt: skip
    return Plan(profile, cfg, env, scenario, cap, nodes, user, where)


# Run settings a search has no use for: its trials set their own length and message count, and it ends
# when the search does. Each is named with the commands that take it.
NOT_FOR_CAPACITY = {
    "MESSAGES_PER_SENDER": "its trials send as many as each rate and length needs; for run, check, matrix",
    "RUN_TIMEOUT": "it ends when the search does (SEARCH_MAX); for run, check, matrix",
    userconfig_model.QUIET_ENV: "its trials end on their own; for run --config and matrix --config",
}


def refuse_unused(overrides: dict[str, str]) -> None:
    """A setting the search would ignore is refused, so that no one reads a result as if it had held."""
    unused = [
        f"{key}: capacity does not use it ({NOT_FOR_CAPACITY[key]})"
        for key in NOT_FOR_CAPACITY
        if key in overrides
    ]
    if unused:
        raise settings.SettingsError(settings.listed("settings capacity does not use", unused))


def load_problems(
    cfg: settings.Settings,
    scenario: scenarios.Scenario,
    profile: profiles.Profile,
    cap: CapacitySettings,
    user: userconfig.UserConfig | None,
) -> list[str]:
    """What `run` refuses of a load that cannot fit, as far as a search has it: more TCP sessions than the
    config takes, a datagram too large. (A trial's messages are rendered to a file a chunk at a time
    (rig/compiled.py write_rendered): no rate needs more REMOTE_MEM.)"""
    files = user.files if user else None
    found = [
        resources.connections_problem(cfg, scenario, profile, files),
        resources.datagram_problem(cfg, scenario),
    ]
    return [problem for problem in found if problem]


# -- latency ------------------------------------------------------------------------------------------------


def histogram(counts: dict[str, int]) -> HdrHistogram:
    found = HdrHistogram(1, HIGHEST_US, capacity.LATENCY_DIGITS)
    for value, count in counts.items():
        found.record_value(min(int(value), HIGHEST_US), count)
    return found


def merged(trials: list[Trial]) -> HdrHistogram:
    """Trials merge by adding their histograms, not by averaging their percentiles."""
    total = HdrHistogram(1, HIGHEST_US, capacity.LATENCY_DIGITS)
    for trial in trials:
        total.add(histogram(trial.latency_histogram_us))
    return total


def percentiles(found: HdrHistogram) -> Latency:
    if not found.get_total_count():
        return Latency()
    values = {name: found.get_value_at_percentile(pct) / 1000 for name, pct in capacity.PERCENTILES.items()}
    return Latency(**values, max=found.get_max_value() / 1000)


# -- the trials ---------------------------------------------------------------------------------------------

RunTrial = Callable[[float, float], dict]  # (total msg/s, seconds) -> the watcher's trial record


class Measurer(AbstractMeasurer):
    """MLRsearch's measurer: one trial per call, with the pause before it; every trial kept."""

    def __init__(
        self, run_trial: RunTrial, cap: CapacitySettings, sleep: Callable[[float], None] = time.sleep
    ):
        self.run_trial, self.cap, self.sleep = run_trial, cap, sleep
        self.trials: list[Trial] = []
        self.machine: dict | None = None  # the daemon's machine, as the watcher sends it with the first trial

    def trial(self, rate: float, duration: float, purpose: str = "search") -> Trial:
        if self.trials:
            self.sleep(self.cap.pause_s)  # queues drain before the next rate
        answer = self.run_trial(rate, duration)
        self.machine = answer.pop("machine", None) or self.machine
        if answer.get("daemon_exit") is not None and "number" not in answer:
            raise DaemonDied(rate, answer["daemon_exit"])
        if "number" not in answer:
            raise TrialFailed(answer.get("error") or f"no trial record: {answer}")
        trial = capacity.trial_from_dict(answer)
        trial.purpose = purpose
        trial.latency_ms = percentiles(histogram(trial.latency_histogram_us))
        if problem := trial.consistent():
            trial.errors.append(f"accounting: {problem}")
        self.trials.append(trial)
        if trial.daemon_exit is not None:
            raise DaemonDied(rate, trial.daemon_exit)
        if failed := [s for s in trial.senders if s.status.startswith("failed")]:
            # Its process has ended: no later trial can run. The trial keeps the reason in its errors.
            raise TrialFailed(f"{len(failed)} sender(s) failed at {rate:,.0f} msg/s: {failed[0].status}")
        return trial

    def stalled(self, trial: Trial) -> bool:
        return trial.sample_max_s is not None and trial.sample_max_s > self.cap.latency_bound_s / 2

    def checked(self, rate: float, duration: float, purpose: str = "search") -> Trial:
        """A trial the daemon alone decided: one the watcher was held up in is run again (at most
        STALL_REPEATS more times); RigBound when the watcher or the senders limited it. Every trial the
        search, the confirmation and the latency use passes here."""
        trial = self.trial(rate, duration, purpose)
        for _ in range(STALL_REPEATS):
            if not self.stalled(trial):
                break
            trial.purpose = "repeated"  # kept, but not used
            trial = self.trial(rate, duration, purpose)
        if self.stalled(trial):
            trial.purpose = "repeated"
            raise WatcherBound(rate, trial.sample_max_s)
        if trial.sender_bound:
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

    def stopped_by(self, error: DaemonDied | TrialFailed, trial: str) -> None:
        """The search ends here: the daemon died during a trial (at its rate), or the trial could not run."""
        if isinstance(error, DaemonDied):
            self.died_at = error.rate
            self.errors.append(str(error))
        else:
            self.errors.append(f"{trial} could not be run: {error}")


def warm_up(measurer: Measurer, cap: CapacitySettings, found: Found) -> bool:
    """One short trial at RATE_MIN before the search: it waits for the rig to come up (which must not count
    against the search's own time limit) and lets the daemon open its files. Not given to the search."""
    try:
        measurer.trial(cap.rate_min, cap.initial_trial_s, "warmup")
    except (DaemonDied, TrialFailed) as error:
        found.stopped_by(error, "the warm-up trial")
        return False
    return True


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
        try:
            answers = MultipleLossRatioSearch(config=config).search(
                measurer=measurer, debug=lambda text: None
            )
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
        except (DaemonDied, TrialFailed) as error:
            found.stopped_by(error, "a trial")
            return found
        except RuntimeError as error:  # MLRsearch's own: out of time, or RATE_MIN already fails
            found.errors.append(f"the search stopped: {error}")
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


def step_down(trials: list[Trial], goal: Bound, rate: float, cap: CapacitySettings) -> float | None:
    """The next rate to confirm below one that broke: the highest at or below BACKOFF of it where a
    full-length trial of the search met the goal, else BACKOFF of it; None below RATE_MIN."""
    ceiling = BACKOFF * rate
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
            rate = step_down(measurer.trials, goal, min(rate, broken.offered_msgs_per_s), cap)
            if rate is None:
                return unconfirmed(
                    goal, f"{name} unconfirmed: {why}, and no rate from RATE_MIN up was left", log
                )
            log(f"notice: {name}: {why}; confirming {rate:,.0f} msg/s")
            continue
        if held(measurer.trials, goal, rate, cap.confirm_s):
            goal.confirmed, goal.confirmed_msgs_per_s, goal.unconfirmed = True, rate, None
            return None
        if time.monotonic() + cap.confirm_s + cap.pause_s + capacity.TRIAL_OVERHEAD_S > deadline:
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
    try:
        return confirmed_latency(measurer, found, goals, cap, deadline, log)
    except (DaemonDied, TrialFailed) as error:
        found.stopped_by(error, "a confirmation or latency trial")
        for name, goal in goals.items():
            if cap.confirm_s and not goal.confirmed:
                unconfirmed(goal, f"{name} unconfirmed: the confirmation stopped ({error})", log)
        return {}


def confirmed_latency(measurer: Measurer, found: Found, goals: dict[str, Bound], cap: CapacitySettings,
                      deadline: float, log: Callable[[str], None]) -> dict[str, Latency]:  # fmt: skip
    """confirm()'s rounds: settle each goal, measure the latency, again while a latency trial broke one."""
    while True:
        if cap.confirm_s:
            for name, goal in goals.items():
                settle(measurer, goal, name, cap, deadline, log)
        latency = latency_trials(measurer, found, cap, deadline)
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


def latency_trials(
    measurer: Measurer, found: Found, cap: CapacitySettings, deadline: float
) -> dict[str, Latency]:
    """One final-length trial at 10%, 50% and 90% of the published PDR, while the time allows."""
    pdr = found.pdr.published()
    out: dict[str, Latency] = {}
    if pdr is None:
        found.notes.append("no latency at fractions of the PDR: no PDR is published")
        return out
    for fraction in PDR_FRACTIONS:
        if time.monotonic() + cap.final_trial_s + cap.pause_s + capacity.TRIAL_OVERHEAD_S > deadline:
            found.notes.append(f"no time left for the latency at {fraction:.0%} of the PDR")
            break
        try:
            trial = measurer.checked(max(cap.rate_min, pdr * fraction), cap.final_trial_s, "latency")
        except RigBound as bound:
            found.notes.append(f"no latency at {fraction:.0%} of the PDR: {bound}")
            continue
        out[f"{fraction:.0%}"] = trial.latency_ms
    return out


def latency_at_pdr(
    measurer: Measurer, found: Found, cap: CapacitySettings, budget_s: float
) -> dict[str, Latency]:
    """One final-length trial at 10%, 50% and 90% of the PDR where the time allows, each checked as the
    search's are (sender-bound, watcher held up); without a confirmation (CONFIRM_S=0)."""
    deadline = time.monotonic() + budget_s
    return latency_trials(measurer, found, cap, deadline) if not found.errors else {}


# -- the command --------------------------------------------------------------------------------------------


def run(
    profile_name: str,
    overrides: dict[str, str],
    results_dir: Path,
    build: bool = True,
    extra_files: tuple[Path, ...] = (),
    log: Callable[[str], None] = log,
    project: str | None = None,
    config: tuple[Path, bool] | None = None,
    matrix: result.Matrix | None = None,
    on_swarm: bool = False,
    registry: str | None = None,
) -> int:
    """Check, bring the rig up, search, write the result, bring it down. extra_files: compose files over
    compose.yaml (a test's daemon config); config: a user's own (its path, and whether its text stays
    private), checked by the daemon in its image before the rig comes up, as `run --config` does; matrix:
    the cell of `matrix --capacity` this search is; on_swarm: on the swarm the docker CLI points at, the
    images pushed to registry where given (as run --swarm)."""
    chosen = plan(profile_name, overrides, config, on_swarm, registry)
    project = project or project_name()
    user = chosen.user
    with lock.project(project):
        if chosen.swarm is not None:
            return measure(chosen, on_the_swarm(chosen, project, log), results_dir, log, matrix)
        if build:
            setup.setup([chosen.profile.profile])
        if user is not None:
            port, transport = contract.CENTRAL_PORT, chosen.scenario.transport
            log(userconfig.check(user, chosen.profile.image, chosen.profile.profile, transport, port))
        service = chosen.profile.profile
        with userconfig.compose_files(user, service, chosen.cfg.scenario, extra_files) as files_over:
            return measure(chosen, Compose(service, project, files_over), results_dir, log, matrix)


def on_the_swarm(chosen: Plan, project: str, log: Callable[[str], None]) -> swarm.Stack:
    """The rig as a stack, as run --swarm deploys it: images pushed where a registry is given, a user's
    config checked by the daemon in its image first."""
    where = chosen.swarm
    assert where is not None
    if where.registry:
        swarm.push(where.registry, ["watcher", "generator", chosen.profile.profile])
    if chosen.user is not None:
        log(swarm.config_checked(chosen.user, chosen.profile, chosen.scenario, where.registry))

    def render(capacity_env: dict[str, str]) -> str:
        return swarm.rendered(chosen.profile, chosen.cfg, where.placement, where.registry, chosen.user,
                              capacity_env)  # fmt: skip

    return swarm.Stack(project, render, bool(where.registry))


def measure(chosen: Plan, runner: Compose | swarm.Stack, results_dir: Path, log: Callable[[str], None],
            matrix: result.Matrix | None = None) -> int:  # fmt: skip
    cap, cfg = chosen.cap, chosen.cfg
    env = dict(chosen.env)
    lifetime = capacity.lifetime_s(cap)  # the confirmation and latency trials too
    env.update(contract.CapacityEnv(cap.latency_bound_s, lifetime).to_env())
    cores = chosen.cpu_placement
    env.update(DAEMON_CPUSET=cpuset(cores["daemon"]), RIG_CPUSET=cpuset(cores["senders"]))
    staging = Path(tempfile.mkdtemp(prefix=f".capacity-{runner.project}-", dir=ensure(results_dir)))
    env["RESULTS_DIR"] = str(staging.resolve())
    # As `run` does on one host: the watcher then takes this one. On a swarm the watcher measures the
    # central node itself and sends it with the first trial.
    fingerprint = None if chosen.swarm else benchmark.measure_fingerprint(cfg, env)
    began = datetime.now(UTC)
    commit = project_commit()
    log(f"capacity: {chosen.profile.profile}, scenario {chosen.scenario.id} ({chosen.scenario.transport}, "
        f"{chosen.scenario.destination}), {cfg.senders} senders, {cap.rate_min:,.0f} to {cap.rate_max:,.0f} msg/s")  # fmt: skip
    outcome: list[Up] = []
    compose = threading.Thread(target=lambda: outcome.append(runner.up(env, lifetime + UP_ALLOWANCE_S)))
    compose.start()
    measurer = Measurer(
        lambda rate, seconds: ask(runner, env, rate, seconds, cap, compose, measurer.trials), cap
    )
    found = Found(Bound(0.0, None, None), Bound(cap.pdr_target, None, None))
    latency: dict[str, Latency] = {}
    stopped: KeyboardInterrupt | None = None
    try:
        started = time.monotonic()
        found = search(measurer, cap, log, found)
        # The warm-up waited for the rig: SEARCH_MAX runs from the search's first trial, as search() counts it.
        latency = confirm(measurer, found, cap, started + cap.search_max_s, log)
    except KeyboardInterrupt as signal:  # Ctrl-C or SIGTERM: the trials so far still make a result
        stopped = signal
        found.interrupted = True
        done, by = len(measurer.trials), INTERRUPTIONS[type(signal) is KeyboardInterrupt]
        found.errors.append(
            f"the search was stopped ({by}) after {done} trial{'' if done == 1 else 's'}: no NDR or PDR"
        )
    finally:
        end(runner, env)
        compose.join(UP_ALLOWANCE_S)
        runner.down(env)
        for leftover in staging.glob("*"):
            leftover.unlink()
        staging.rmdir()
    data = build_result(chosen, measurer.trials, found, latency, began, fingerprint, measurer.machine)
    data.matrix = None if matrix is None else asdict(matrix)
    data.commit = commit
    write_result(data, results_dir, log)
    if stopped is not None:
        raise stopped
    return EXIT_CODES["pass"] if data.outcome == "found" else EXIT_CODES["error"]


def write_result(data: CapacityResult, results_dir: Path, log: Callable[[str], None]) -> Path:
    path = ensure(results_dir / "capacity") / f"{data.run_id}.json"
    path.write_text(json.dumps(data.to_dict(), indent=2, sort_keys=True) + "\n")
    print(capacity.table(data.to_dict()))
    for error in data.errors:
        log(f"error: {error}")
    log(f"result: {path}")
    return path


def cpuset(cores: str) -> str:
    """compose's cpuset for one host's placement (an empty one is any core; a swarm's nodes take none)."""
    return cores if cores[:1].isdigit() else ""


def ensure(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def ask(runner: Compose, env: dict[str, str], rate: float, seconds: float, cap: CapacitySettings,
        compose: threading.Thread, done_before: list[Trial]) -> dict:  # fmt: skip
    """One trial, asked of the watcher; an answer with "error" when it could not be had."""
    if not compose.is_alive():
        return {"error": "compose ended before the trial: the watcher, the daemon or a generator stopped"}
    timeout = seconds + cap.latency_bound_s + EXEC_ALLOWANCE_S
    timeout += 0 if done_before else FIRST_TRIAL_ALLOWANCE_S
    args = ["python3", "-m", "syslogbench.rig.trials", "run", f"{rate:.3f}", f"{seconds:.3f}"]
    for _ in range(60):  # until the watcher's port is open (it opens it once the volumes are reset)
        try:
            done = runner.exec(env, "watcher", args, timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"the trial at {rate:,.0f} msg/s did not answer within {timeout:.0f} s"}
        answer = last_json(done.stdout)
        if answer is not None and "cannot reach the watcher" not in str(answer.get("error", "")):
            return answer
        if not compose.is_alive():
            break
        time.sleep(2)
    return {"error": f"no trial answer from the watcher: {(done.stderr or done.stdout).strip()[-300:]}"}


def last_json(text: str) -> dict | None:
    for line in reversed(text.strip().splitlines()):
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict):
            return found
    return None


def end(runner: Compose, env: dict[str, str]) -> None:
    with contextlib.suppress(subprocess.TimeoutExpired):  # the watcher then ends at CAPACITY_MAX_S
        runner.exec(env, "watcher", ["python3", "-m", "syslogbench.rig.trials", "end"], 60)


def build_result(chosen: Plan, trials: list[Trial], found: Found, latency: dict[str, Latency],
                 began: datetime, fingerprint: result.Fingerprint | None = None,
                 central: dict | None = None) -> CapacityResult:  # fmt: skip
    """central: the daemon's machine as the watcher read it (a swarm's central node)."""
    errors = [*found.errors, *(e for t in trials for e in t.errors)]
    outcome = "daemon-died" if found.died_at is not None else ("error" if errors else "found")
    if outcome == "found" and False in (found.ndr.confirmed, found.pdr.confirmed):
        outcome = "unconfirmed"  # a bound could not be confirmed: its `unconfirmed` says why
    outcome = "interrupted" if found.interrupted else outcome
    facts = asdict(
        replace(machine.host_facts(docker_version=environment.docker_version()), fingerprint=fingerprint)
    )
    clocks = capacity.clocks_of(trials, chosen.cap.latency_bound_s)
    # The search still ran; its latencies (and over TCP its late counts) are then not on one clock.
    distrust = [] if clocks is None or clocks.trusted else [f"latency is not trusted: {clocks.why}"]
    nodes = None
    if chosen.swarm is not None:  # the central node's, not this machine's
        facts = {**(central or {}), "docker_version": chosen.swarm.placement.central.engine}
        facts.pop(contract.UDP_BUFFERS_KEY, None)  # udp_buffers holds them
        nodes = [asdict(node) for node in chosen.swarm.nodes]
    return CapacityResult(
        run_id=result.run_id(began, chosen.profile.profile, None) + f"-{chosen.scenario.id}",
        kind="capacity",
        profile=chosen.profile.profile,
        daemon_version=chosen.profile.version,
        scenario=chosen.scenario.id,
        transport=chosen.scenario.transport,
        destination=chosen.scenario.destination,
        senders=chosen.cfg.senders,
        settings=chosen.cap.as_dict(),
        started_utc=result.utc(began),
        finished_utc=result.utc(datetime.now(UTC)),
        outcome=outcome,
        ndr_msgs_per_s=found.ndr.published(),
        pdr_msgs_per_s=found.pdr.published(),
        pdr_loss_ratio=chosen.cap.pdr_target,
        ndr=found.ndr,
        pdr=found.pdr,
        trials=trials,
        latency_at_pdr=latency,
        cpu_placement=chosen.cpu_placement,
        rig_limit_msgs_per_s=found.rig_limit,
        died_at_msgs_per_s=found.died_at,
        machine=facts,
        nodes=nodes,
        errors=errors,
        notes=[*found.notes, *distrust],
        config=None if chosen.user is None else chosen.user.identity(),
        load=load_of(chosen.cfg),
        udp_buffers=udp_buffers(chosen, central) if chosen.scenario.transport == "udp" else None,
        clocks=clocks,
    )


def load_of(cfg: settings.Settings) -> Load:
    return Load(cfg.hosts, cfg.senders_per_host, cfg.remote_mem, cfg.remote_cpus)


def udp_buffers(chosen: Plan, central: dict | None) -> UdpBuffers:
    """UDP_RCVBUF as asked, and what the watcher read of the daemon's namespace (with the first trial)."""
    seen = (central or {}).get(contract.UDP_BUFFERS_KEY) or {}
    return result.udp_buffers(chosen.cfg.udp_rcvbuf, seen)


def project_commit(root: Path = ROOT) -> str:
    """The project's commit at the command's start, so a result names the code that made it; "unknown"
    and why when this is not a git checkout (an unpacked archive) or git is missing."""
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=30, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unknown (git could not run: {error})"
    if done.returncode != 0:
        return f"unknown (not a git checkout: {(done.stderr.strip().splitlines() or ['git failed'])[-1]})"
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
    return done.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else "")
