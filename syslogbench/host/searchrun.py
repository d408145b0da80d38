"""`syslogbench capacity`: the daemon's NDR and PDR for one scenario's transport and destination, found by
MLRsearch over trials against a daemon that stays up (docs/capacity.md).

The daemon, the watcher and the generators come up once, on the plan's orchestrator (compose on one host,
host/compose.py, or a swarm stack); each trial is one `trial_run` on the control channel, asked through
`docker compose exec` (or `docker exec`) in the watcher (rig/trials.py). The plan is host/searchplan.py, the
trials and the latency host/measurer.py, the search host/search.py; the result, written to
results/capacity/<run id>.json once the rig is down, host/searchresult.py.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from syslogbench import contract
from syslogbench.contract import EXIT_CODES
from syslogbench.host import lock, searchceiling
from syslogbench.host.compose import Up, project_name
from syslogbench.host.log import log
from syslogbench.host.measurer import Measurer, RigBound, TrialStopped
from syslogbench.host.plan import Rig
from syslogbench.host.search import Found, confirm, search, warm_up
from syslogbench.host.searchplan import Search, cpuset
from syslogbench.host.searchresult import Start, record
from syslogbench.model import capacity, result
from syslogbench.model.capacity import Bound, CapacitySettings, Latency, Trial

# Beyond a trial's own length and the senders' readiness (capacity.READY_WAIT_S): the common start, compose exec.
EXEC_ALLOWANCE_S = 60.0
# The first trial waits for the rig: images start, the watcher resets the volumes, senders connect (the
# watcher's READY_TIMEOUT is 300 s), on a machine that may be busy.
FIRST_TRIAL_ALLOWANCE_S = 360.0
UP_ALLOWANCE_S = 600.0  # images start, senders connect; and the daemon's stop at the end
INTERRUPTIONS = {True: "Ctrl-C", False: "SIGTERM"}  # by: was it a plain KeyboardInterrupt
ROOT = Path(__file__).resolve().parents[2]  # the project's checkout: its commit goes into each result


def run(
    chosen: Search,
    results_dir: Path,
    build: bool = True,
    extra_files: tuple[Path, ...] = (),
    log: Callable[[str], None] = log,
    project: str | None = None,
    matrix: result.Matrix | None = None,
    tuning: dict[str, object] | None = None,
) -> int:
    """Bring the rig up on the plan's orchestrator, search, write the result, bring it down. extra_files:
    compose files over compose.yaml (a test's daemon config, a step of `knobs`); a user's config is checked by
    the daemon in its image before the rig comes up, as `run --config` does; matrix: the cell of `matrix
    --capacity` this search is; tuning: the config's tuning and knobs where the plan does not say them."""
    project = project or project_name()
    chosen, ceiling = searchceiling.ceiling(chosen, results_dir, build, extra_files, log)
    with lock.project(project), chosen.plan.on.rig(chosen.plan, project, build, extra_files, log) as rig:
        return measure(chosen, rig, results_dir, log, matrix, tuning, ceiling)


def measure(chosen: Search, runner: Rig, results_dir: Path, log: Callable[[str], None],
            matrix: result.Matrix | None = None, tuning: dict[str, object] | None = None,
            ceiling: capacity.Ceiling | None = None) -> int:  # fmt: skip
    cap, cfg, scenario = chosen.cap, chosen.plan.cfg, chosen.plan.scenario
    env, staging = trial_env(chosen, runner, results_dir)
    # As `run` does on one host: the watcher then takes this one.
    fingerprint = chosen.plan.on.fingerprint(chosen.plan, env)
    start = Start(datetime.now(UTC), fingerprint, project_commit(), matrix, tuning, ceiling)
    log(f"capacity: {chosen.plan.profile.profile}, scenario {scenario.id} ({scenario.transport}, "
        f"{scenario.destination}), {cfg.senders} senders, {cap.rate_min:,.0f} to {cap.rate_max:,.0f} msg/s")  # fmt: skip
    found = Found(Bound(0.0, None, None), Bound(cap.pdr_target, None, None))
    latency: dict[str, Latency] = {}
    stopped: KeyboardInterrupt | None = None
    with trials(runner, env, cap, staging) as measurer:
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
    data = record(chosen, measurer, found, latency, start, results_dir, log)
    if stopped is not None:
        raise stopped
    return EXIT_CODES["pass"] if data.outcome == "found" else EXIT_CODES["error"]


def trial_env(chosen: Search, runner: Rig, results_dir: Path) -> tuple[dict[str, str], Path]:
    """The rig's settings for trials (the daemon's and the senders' cores, the watcher's capacity mode) and
    the staging folder its watcher writes into, removed when the trials end."""
    cap = chosen.cap
    env = dict(chosen.plan.env)
    env.update(contract.CapacityEnv(cap.latency_bound_s, capacity.lifetime_s(cap)).to_env())
    cores = chosen.cpu_placement
    env.update(DAEMON_CPUSET=cpuset(cores["daemon"]), RIG_CPUSET=cpuset(cores["senders"]))
    staging = Path(tempfile.mkdtemp(prefix=f".capacity-{runner.project}-", dir=ensure(results_dir)))
    env["RESULTS_DIR"] = str(staging.resolve())
    return env, staging


@contextlib.contextmanager
def trials(runner: Rig, env: dict[str, str], cap: CapacitySettings, staging: Path) -> Iterator[Measurer]:
    """The rig up (compose in a thread, for the trials' lifetime), a measurer that asks it for trials, and,
    however the trials end, the watcher told, the rig down and the staging folder gone."""
    outcome: list[Up] = []
    lifetime = capacity.lifetime_s(cap)  # the confirmation and latency trials too
    compose = threading.Thread(target=lambda: outcome.append(runner.up(env, lifetime + UP_ALLOWANCE_S)))
    compose.start()
    measurer = Measurer(
        lambda rate, seconds: ask(runner, env, rate, seconds, cap, compose, measurer.trials), cap
    )
    try:
        yield measurer
    finally:
        end(runner, env)
        compose.join(UP_ALLOWANCE_S)
        runner.down(env)
        for leftover in staging.glob("*"):
            leftover.unlink()
        staging.rmdir()


def fixed_rate(chosen: Search, rate: float, results_dir: Path, extra_files: tuple[Path, ...] = (),
               log: Callable[[str], None] = log) -> Trial | str:  # fmt: skip
    """One trial of TRIAL_FINAL at a fixed rate, after a warm-up at RATE_MIN, on a rig of its own: the trial,
    or why there is none (one line). No result file: the caller keeps what it needs of the trial."""
    project = project_name()
    with lock.project(project), chosen.plan.on.rig(chosen.plan, project, False, extra_files, log) as runner:
        env, staging = trial_env(chosen, runner, results_dir)
        with trials(runner, env, chosen.cap, staging) as measurer:
            found = Found(Bound(0.0, None, None), Bound(chosen.cap.pdr_target, None, None))
            if not warm_up(measurer, chosen.cap, found):
                return "; ".join(found.errors) or "the warm-up trial could not run"
            try:
                return measurer.checked(rate, chosen.cap.final_trial_s, "latency")
            except (RigBound, TrialStopped) as error:
                return f"the trial at {rate:,.0f} msg/s: {error}"


def ensure(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def ask(runner: Rig, env: dict[str, str], rate: float, seconds: float, cap: CapacitySettings,
        compose: threading.Thread, done_before: list[Trial]) -> dict:  # fmt: skip
    """One trial, asked of the watcher; an answer with "error" when it could not be had."""
    if not compose.is_alive():
        return {"error": "compose ended before the trial: the watcher, the daemon or a generator stopped"}
    timeout = seconds + cap.latency_bound_s + EXEC_ALLOWANCE_S + capacity.READY_WAIT_S
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


def end(runner: Rig, env: dict[str, str]) -> None:
    with contextlib.suppress(subprocess.TimeoutExpired):  # the watcher then ends at CAPACITY_MAX_S
        runner.exec(env, "watcher", ["python3", "-m", "syslogbench.rig.trials", "end"], 60)


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
