"""A capacity search's stack, up for trials: the environment of a trial run (the daemon's and the senders'
cores, the watcher's capacity mode), the stack up in a thread for the trials' lifetime (its staging folder,
fingerprint, start, down and clean-up are lifecycle.staged's), each trial asked of the watcher through
`docker compose exec` (or `docker exec`) on the control channel (rig/trials.py), and, however the trials end,
the watcher told."""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from syslogbench import contract
from syslogbench.host.capacity import histogram
from syslogbench.host.capacity.cores import cores_env
from syslogbench.host.capacity.measurer import Measurer, Turn
from syslogbench.model import capacity
from syslogbench.model.capacity import CapacitySettings, Trial

if TYPE_CHECKING:
    from syslogbench.host.capacity.searchplan import Search
    from syslogbench.host.lifecycle import RunningStack, Staged

# Beyond a trial's own length and the senders' readiness (capacity.READY_WAIT_S): the common start, compose exec.
EXEC_ALLOWANCE_S = 60.0
# The first trial waits for the rig: images start, the watcher resets the volumes, senders connect (the
# watcher's READY_TIMEOUT is 300 s), on a machine that may be busy.
FIRST_TRIAL_ALLOWANCE_S = 360.0
UP_ALLOWANCE_S = 600.0  # images start, senders connect; and the daemon's stop at the end


def trial_env(chosen: Search) -> dict[str, str]:
    """The stack's settings for trials: the daemon's and the senders' cores, the watcher's capacity mode."""
    cap = chosen.cap
    env = dict(chosen.plan.env)
    env.update(contract.CapacityEnv(cap.latency_bound_s, capacity.lifetime_s(cap)).to_env())
    env.update(cores_env(chosen.cpu_placement))
    return env


@contextlib.contextmanager
def trials(stage: Staged, cap: CapacitySettings, turn: Turn | None = None) -> Iterator[Measurer]:
    """The staged stack up (in a thread, for the trials' lifetime: the confirmation and latency trials too)
    and a measurer that asks it for trials (each in its turn, where several searches share the machine);
    however the trials end, the watcher told, before staged() brings the stack down."""
    runner, env = stage.stack, stage.env
    compose = stage.up_behind(capacity.lifetime_s(cap) + UP_ALLOWANCE_S)
    measurer = Measurer(
        lambda rate, seconds: ask(runner, env, rate, seconds, cap, compose, measurer.trials), cap
    )
    if turn is not None:
        measurer.turn = turn
    try:
        yield measurer
    finally:
        end(runner, env)
        compose.join(UP_ALLOWANCE_S)


def ask(runner: RunningStack, env: dict[str, str], rate: float, seconds: float, cap: CapacitySettings,
        compose: threading.Thread, done_before: list[Trial]) -> dict:  # fmt: skip
    """One trial, asked of the watcher; an answer with "error" when it could not be had."""
    if not compose.is_alive():
        return {"error": "compose ended before the trial: the watcher, the daemon or a generator stopped"}
    timeout = seconds + cap.latency_bound_s + EXEC_ALLOWANCE_S + capacity.READY_WAIT_S
    timeout += 0 if done_before else FIRST_TRIAL_ALLOWANCE_S
    args = ["python3", "-m", "syslogbench.rig.trials", "run", f"{rate:.3f}", f"{seconds:.3f}"]
    asked = time.monotonic()
    for _ in range(60):  # until the watcher's port is open (it opens it once the volumes are reset)
        try:
            done = runner.exec(env, "watcher", args, timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"the trial at {rate:,.0f} msg/s did not answer within {timeout:.0f} s"}
        answer = last_json(done.stdout)
        if answer is not None and "cannot reach the watcher" not in str(answer.get("error", "")):
            found = encoded(answer)
            if "number" in found:  # a trial's record: the host's whole wait for it
                found["asked_s"] = round(time.monotonic() - asked, 3)
            return found
        if not compose.is_alive():
            break
        time.sleep(2)
    return {"error": f"no trial answer from the watcher: {(done.stderr or done.stdout).strip()[-300:]}"}


def encoded(answer: dict) -> dict:
    """The trial's histogram in HdrHistogram's encoding, a few KB where a long trial's {us: count} took 130 KB
    of its result; one that would not come back exactly is the trial's error, not a traceback."""
    if (counts := answer.pop("latency_histogram_us", None)) is None:
        return answer
    try:
        answer["latency_histogram"] = histogram.encode(counts)
    except histogram.HistogramError as error:
        return {"error": f"the trial's latency histogram: {error}"}
    return answer


def last_json(text: str) -> dict | None:
    for line in reversed(text.strip().splitlines()):
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict):
            return found
    return None


def end(runner: RunningStack, env: dict[str, str]) -> None:
    with contextlib.suppress(subprocess.TimeoutExpired):  # the watcher then ends at CAPACITY_MAX_S
        runner.exec(env, "watcher", ["python3", "-m", "syslogbench.rig.trials", "end"], 60)
