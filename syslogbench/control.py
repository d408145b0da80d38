"""The control directory shared by watcher, daemon supervisor and generators (see docs/DESIGN.md).

Stdlib only: runs inside the containers.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

CONTROL = Path(os.environ.get("CONTROL_DIR", "/bench/control"))
LOGS = Path(os.environ.get("LOG_DIR", "/var/log/bench"))
POLL_S = 0.005


class WaitTimeout(TimeoutError):
    """A wait ran past its deadline."""


def write_atomic(path: Path, text: str) -> None:
    """Write then rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text)
    tmp.replace(path)


def write_json(path: Path, data: object) -> None:
    write_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def read_json(path: Path) -> dict:
    return json.loads(path.read_text())


def wait_for(path: Path, timeout: float, what: str, poll: float = POLL_S) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise WaitTimeout(f"gave up after {timeout:.0f} s waiting for {what} ({path})")
        time.sleep(poll)


def wait_for_start(timeout: float) -> None:
    """The start signal; the watcher's finish (it gave up before the start) ends the wait too."""
    deadline = time.monotonic() + timeout
    while not (CONTROL / "start").exists():
        if (CONTROL / "finish").exists():
            raise WaitTimeout("the watcher finished the run before giving the start signal")
        if time.monotonic() > deadline:
            raise WaitTimeout(f"gave up after {timeout:.0f} s waiting for the start signal")
        time.sleep(POLL_S)


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
