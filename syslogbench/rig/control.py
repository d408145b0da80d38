"""The control directory shared by watcher, daemon supervisor and generators (see docs/DESIGN.md).

Stdlib only: runs inside the containers.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from syslogbench import contract
from syslogbench.contract import read_json, write_atomic, write_json

__all__ = ["read_json", "write_atomic", "write_json"]

# Every name in the control volume (contract.Control); tests point it at a temporary directory.
CONTROL = contract.Control(contract.CONTROL_DIR)
LOGS = contract.LOG_DIR
POLL_S = 0.005


class WaitTimeout(TimeoutError):
    """A wait ran past its deadline."""


def exit_on_sigterm() -> None:
    """As PID 1 a process ignores SIGTERM unless it handles it, and compose then waits 10 s and SIGKILLs it.
    A generator or the last hop has nothing to save when stopped (the watcher reconciles): exit at once."""
    signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(128 + signal.SIGTERM))


def wait_for(path: Path, timeout: float, what: str, poll: float = POLL_S) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise WaitTimeout(f"gave up after {timeout:.0f} s waiting for {what} ({path})")
        time.sleep(poll)


def wait_for_any(paths: list[Path], timeout: float, what: str, poll: float = POLL_S) -> Path:
    """The first of paths to exist."""
    deadline = time.monotonic() + timeout
    while True:
        for path in paths:
            if path.exists():
                return path
        if time.monotonic() > deadline:
            raise WaitTimeout(f"gave up after {timeout:.0f} s waiting for {what}")
        time.sleep(poll)


def wait_for_end(timeout: float, poll: float) -> None:
    """The end of the run for a harness container's own CPU figure: the daemon's exit (its supervisor takes
    the end snapshot just before it writes it), or finish when the daemon never stopped."""
    wait_for_any([CONTROL.daemon.exit, CONTROL.finish], timeout, "the end of the run", poll)


def claim_index(directory: Path, limit: int) -> int:
    """Take the lowest free index 1..limit with O_EXCL, so each generator gets a stable host number."""
    directory.mkdir(parents=True, exist_ok=True)
    for index in range(1, limit + 1):
        try:
            os.close(os.open(directory / str(index), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            continue
        return index
    raise RuntimeError(f"all {limit} host indices are taken: more generator replicas run than HOSTS={limit}")
