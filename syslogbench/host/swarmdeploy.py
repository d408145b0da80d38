"""A stack on the swarm, from its deploy to its removal: `docker stack deploy` of a stack file (host/stack.py
writes it), its tasks watched until the watcher's ends (the watcher stopped first when another task fails,
or when the stack runs past its time), and `docker stack rm`, waiting until the stack's network is gone so
that the next deploy does not fail with "network not found".
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time

from syslogbench import contract
from syslogbench.host.log import log
from syslogbench.host.swarmnodes import SwarmError, docker

NETWORK_GONE_S = 120  # `docker stack rm` returns at once; its network goes once every task has ended
POLL_S = 1.0
WATCHER_SETTLE_S = 3.0  # from its task's start until the watcher handles SIGTERM (Python's start-up)
WATCHER_GRACE_S = 150  # the watcher's stop_grace_period (120 s) and a little more
# Task states that end a task for good (restart_policy none): a daemon or generator in one of these before
# the watcher's own end stops the run, as compose's --abort-on-container-exit does on one host.
ENDED = {"complete", "failed", "rejected", "shutdown", "orphaned"}
BAD = {"failed", "rejected", "orphaned"}


def stack_network(name: str) -> str:
    return f"{name}_{contract.NETWORK}"


def wait_gone(name: str, timeout: float = NETWORK_GONE_S) -> None:
    """Until the stack's network is gone: a deploy right after `docker stack rm` fails while it is there."""
    deadline = time.monotonic() + timeout
    while docker("network", "ls", "-q", "--filter", f"name=^{stack_network(name)}$", check=False).strip():
        if time.monotonic() > deadline:
            raise SwarmError(
                f"the network {stack_network(name)} was still there {timeout:.0f} s after docker stack rm"
            )
        time.sleep(POLL_S)


def remove(name: str) -> None:
    docker("stack", "rm", name, check=False)
    wait_gone(name)


def tasks(name: str) -> list[dict]:
    """Every task of the stack: its service, node, current state and error."""
    text = docker("stack", "ps", name, "--no-trunc", "--format", "{{json .}}", check=False)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def state_of(task: dict) -> str:
    return (task.get("CurrentState") or "").split(" ")[0].lower()


def task_problems(name: str, entries: list[dict]) -> list[str]:
    """Tasks other than the watcher's that ended badly, as `docker stack ps` tells it."""
    problems = []
    for task in entries:
        service = task.get("Name", "").removeprefix(f"{name}_")
        if service.startswith("watcher") or state_of(task) not in BAD:
            continue
        problems.append(f"{service} on {task.get('Node')}: {task.get('CurrentState')}: {task.get('Error')}")
    return problems


def watcher_task(name: str, entries: list[dict]) -> str:
    """How the watcher's task ended, e.g. "Rejected 5 seconds ago on node1: No such image: ..."."""
    for task in entries:
        if task.get("Name", "").startswith(f"{name}_watcher"):
            error = f": {task['Error']}" if task.get("Error") else ""
            return f"{task.get('CurrentState')} on {task.get('Node') or 'no node'}{error}"
    return "none was found"


def watcher_listed(name: str, entries: list[dict]) -> bool:
    return any(t.get("Name", "").startswith(f"{name}_watcher") for t in entries)


def watcher_running(name: str, entries: list[dict]) -> bool:
    return any(t.get("Name", "").startswith(f"{name}_watcher") and state_of(t) == "running" for t in entries)


def watcher_ended(name: str, entries: list[dict]) -> bool:
    return any(t.get("Name", "").startswith(f"{name}_watcher") and state_of(t) in ENDED for t in entries)


def deploy(name: str, text: str, pull: bool) -> None:
    """`docker stack deploy` of the stack file text, after removing what an interrupted run of this name
    left. pull: the nodes pull the images from a registry; without one they have them already."""
    remove(name)
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix=f"{name}-") as file:
        file.write(text)
        file.flush()
        resolve = "always" if pull else "never"
        command = ["docker", "stack", "deploy", "--resolve-image", resolve, "-c", file.name, name]
        said = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if said.returncode != 0:
        raise subprocess.CalledProcessError(said.returncode, command, said.stdout, said.stderr)
    for line in (said.stdout + said.stderr).splitlines():
        if "ignor" in line.lower() or "unsupported" in line.lower():  # the stack file is meant to have none
            log(f"notice: docker stack deploy: {line}")


def watch(name: str, timeout: float) -> list[str]:
    """Until the watcher's task ends. A daemon or generator task that fails first stops the watcher (scaled
    to 0: SIGTERM, and its stop grace to write an error result, after which its task is gone), as compose
    stops the rest on one host."""
    reasons: list[str] = []
    deadline, stopped_at, running_since = time.monotonic() + timeout, None, None
    while True:
        entries = tasks(name)
        if watcher_ended(name, entries) or (stopped_at is not None and not watcher_listed(name, entries)):
            return reasons
        if running_since is None and watcher_running(name, entries):
            running_since = time.monotonic()
        # A watcher stopped before it runs (and arms its SIGTERM handler) would leave no result at all.
        settled = running_since is not None and time.monotonic() - running_since > WATCHER_SETTLE_S
        if stopped_at is None and settled and (problems := task_problems(name, entries)):
            reasons.append("tasks that ended before the watcher (docker stack ps): " + "; ".join(problems))
            stopped_at = stop_watcher(name, reasons[-1])
        elif stopped_at is None and time.monotonic() > deadline:
            reasons.insert(0, f"the stack did not finish within {timeout:.0f} s")
            stopped_at = stop_watcher(name, reasons[0])
        elif stopped_at is not None and time.monotonic() > stopped_at + WATCHER_GRACE_S:
            reasons.append(f"the watcher did not end within {WATCHER_GRACE_S} s of its stop")
            return reasons
        time.sleep(POLL_S)


def stop_watcher(name: str, reason: str) -> float:
    """SIGTERM to the watcher, the way Swarm has: its service scaled to 0. Returns when."""
    log(f"{reason}: stopping the watcher, which writes what it has")
    docker("service", "scale", "--detach", f"{name}_watcher=0", check=False)
    return time.monotonic()
