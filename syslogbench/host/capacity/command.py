"""`syslogbench capacity`: the daemon's NDR and PDR for one scenario's transport and destination, found by
MLRsearch over trials against a daemon that stays up (docs/capacity.md).

Without RATE_MAX, a burst run sets it (capacity/ceiling.py). The daemon, the watcher and the generators then
come up once, on the plan's orchestrator (compose on one host, or a swarm stack), staged by host/lifecycle.py
(capacity/session.py has the trials); each trial is asked of the watcher. `knobs` and `compare --capacity` (so
`matrix --capacity`) run their searches through run() and fixed_rate() here too. The plan is capacity/searchplan.py, the trials capacity/measurer.py, the search
capacity/search.py, the confirmation and latency capacity/confirm.py; the result, written to
results/capacity/<run id>.json once the rig is down, capacity/record.py.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from syslogbench.contract import EXIT_CODES
from syslogbench.host import lock
from syslogbench.host.capacity import ceiling as ceilings
from syslogbench.host.capacity.confirm import confirm
from syslogbench.host.capacity.measurer import RigBound, TrialStopped
from syslogbench.host.capacity.record import Start, record
from syslogbench.host.capacity.repeats import daemon_cores, repeat
from syslogbench.host.capacity.search import Found, search, warm_up
from syslogbench.host.capacity.session import trial_env, trials
from syslogbench.host.compose import project_name
from syslogbench.host.lifecycle import staged
from syslogbench.host.log import log
from syslogbench.model import capacity
from syslogbench.model.capacity import Bound, Latency, Trial

if TYPE_CHECKING:
    from syslogbench.host.capacity.searchplan import Search
    from syslogbench.host.capacity.turns import Interleaved
    from syslogbench.host.lifecycle import RunningStack

INTERRUPTIONS = {True: "Ctrl-C", False: "SIGTERM"}  # by: was it a plain KeyboardInterrupt
ROOT = Path(__file__).resolve().parents[3]  # the project's checkout: its commit goes into each result


def run(
    chosen: Search,
    results_dir: Path,
    build: bool = True,
    extra_files: tuple[Path, ...] = (),
    log: Callable[[str], None] = log,
    project: str | None = None,
    tuning: dict[str, object] | None = None,
    interleaved: Interleaved | None = None,
) -> int:
    """Bring the stack up on the plan's orchestrator, search, write the result, bring it down. extra_files:
    compose files over compose.yaml (a test's daemon config, a step of `knobs`); a user's config is checked by
    the daemon in its image before the stack comes up, as `run --config` does; tuning: the config's tuning and knobs where the plan does not say them;
    interleaved: this search is one of several taking turns (capacity/turns.py), its ceiling set."""
    project = project or project_name()
    if interleaved is None:
        chosen, ceiling = ceilings.ceiling(chosen, results_dir, build, extra_files, log)
    else:
        ceiling = interleaved.ceiling
    on = chosen.plan.on
    with lock.project(project), on.running_stack(chosen.plan, project, build, extra_files, log) as stack:
        return search_stack(chosen, stack, results_dir, log, tuning, ceiling, interleaved)


def search_stack(chosen: Search, runner: RunningStack, results_dir: Path, log: Callable[[str], None],
            tuning: dict[str, object] | None = None, ceiling: capacity.Ceiling | None = None, interleaved: Interleaved | None = None) -> int:  # fmt: skip
    if interleaved is not None:  # a comparison's rounds are its repeats: its searches run none at the NDR
        chosen = replace(chosen, cap=replace(chosen.cap, ndr_repeats=0.0))
    cap, cfg, scenario = chosen.cap, chosen.plan.cfg, chosen.plan.scenario
    found = Found(Bound(0.0, None, None), Bound(cap.pdr_target, None, None))
    latency: dict[str, Latency] = {}
    stopped: KeyboardInterrupt | None = None
    # The fingerprint as `run` takes it on one host (the watcher then takes this one); none on a swarm, nor
    # beside other searches' stacks, whose start it would measure.
    fingerprint = None if interleaved else partial(chosen.plan.on.fingerprint, chosen.plan)
    if interleaved is not None:
        found.notes.append(interleaved.note)
    turn, cpu_rate = (None, None) if interleaved is None else (interleaved.turn, interleaved.cpu_rate)
    with staged(runner, trial_env(chosen), results_dir, "capacity", fingerprint, keep=False) as stage:
        start = Start(stage.began, stage.fingerprint, project_commit(), tuning, ceiling)
        log(f"capacity: {chosen.plan.profile.profile}, scenario {scenario.id} ({scenario.transport}, "
            f"{scenario.destination}), {cfg.senders} senders, {cap.rate_min:,.0f} to {cap.rate_max:,.0f} msg/s")  # fmt: skip
        with trials(stage, cap, turn) as measurer:
            measurer.log = log
            try:
                started = time.monotonic()
                found = search(measurer, cap, log, found, cpu_rate)
                # The warm-up waited for the rig: SEARCH_MAX runs from the search's first trial, as search() counts it.
                latency = confirm(measurer, found, cap, started + cap.search_max_s, log)
                cores = daemon_cores(chosen.cpu_placement.get("daemon", ""), measurer.machine)
                found.ndr_interval = repeat(measurer, found, cap, started + cap.search_max_s, cores, log)
            except KeyboardInterrupt as signal:  # Ctrl-C or SIGTERM: the trials so far still make a result
                stopped = signal
                found.interrupted = True
                done, by = len(measurer.trials), INTERRUPTIONS[type(signal) is KeyboardInterrupt]
                found.errors.append(
                    f"the search was stopped ({by}) after {done} trial{'' if done == 1 else 's'}: no NDR or PDR"
                )
    data = record(chosen, measurer, found, latency, start, results_dir, log)
    if stopped is not None:
        raise stopped
    return EXIT_CODES["pass"] if data.outcome == "found" else EXIT_CODES["error"]


def fixed_rate(chosen: Search, rate: float, results_dir: Path, extra_files: tuple[Path, ...] = (),
               log: Callable[[str], None] = log) -> Trial | str:  # fmt: skip
    """One trial of TRIAL_FINAL at a fixed rate, after a warm-up at RATE_MIN, on a stack of its own (no
    fingerprint): the trial, or why there is none (one line). No result file: the caller keeps what it needs
    of the trial."""
    project, on = project_name(), chosen.plan.on
    with (
        lock.project(project),
        on.running_stack(chosen.plan, project, False, extra_files, log) as runner,
        staged(runner, trial_env(chosen), results_dir, "capacity", keep=False) as stage,
        trials(stage, chosen.cap) as measurer,
    ):
        found = Found(Bound(0.0, None, None), Bound(chosen.cap.pdr_target, None, None))
        if not warm_up(measurer, chosen.cap, found):
            return "; ".join(found.errors) or "the warm-up trial could not run"
        try:
            return measurer.checked(rate, chosen.cap.final_trial_s, "latency")
        except (RigBound, TrialStopped) as error:
            return f"the trial at {rate:,.0f} msg/s: {error}"


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
