"""One run at a time per compose project: a second `run` or `matrix` on a busy project is refused.

Two runs in one project would share its containers and volumes: the second's watcher clears the first's
logs and control files, and a false pass is possible. The lock is an flock on a file named after the project
in the machine's temporary directory (the compose project is the Docker engine's, so machine-wide, not per
user). The kernel drops it when the process ends, however it ends: no stale lock to clean up.
"""

from __future__ import annotations

import fcntl
import os
import re
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from syslogbench.model.settings import SettingsError

# Projects this process holds: a matrix holds its project, and each of its runs takes it again.
HELD: dict[str, int] = {}


class ProjectBusy(SettingsError):
    """Another run holds the project: refused before any container starts (exit code bad-input)."""


def lock_path(project: str, directory: Path | None = None) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", project)
    return (directory or Path(tempfile.gettempdir())) / f"syslogbench-{safe}.lock"


def busy_message(project: str, holder: str) -> str:
    by = f" (pid {holder})" if holder else ""
    return (
        f"compose project {project!r} is busy with another run{by}: wait for it, or run in parallel with "
        f"another project and image tag, e.g. SYSLOGBENCH_PROJECT={project}-2 IMAGE_TAG={project}-2"
    )


def open_lock_file(path: Path) -> tuple[int, bool]:
    """The file's descriptor, and whether it is writable (another user's file can still be locked read-only)."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o666), True
    except PermissionError:
        return os.open(path, os.O_RDONLY), False


@contextmanager
def project(name: str, directory: Path | None = None) -> Iterator[None]:
    """Hold the project's lock for the block; raises ProjectBusy when another process holds it."""
    if name in HELD:
        yield
        return
    path = lock_path(name, directory)
    fd, writable = open_lock_file(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ProjectBusy(busy_message(name, path.read_text(errors="replace").strip())) from None
    if writable:  # the holder's pid, for the refusal message of whoever comes next
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    HELD[name] = fd
    try:
        yield
    finally:
        del HELD[name]
        os.close(fd)  # closing the descriptor releases the flock


def flock_by(fd: int, deadline: float) -> bool:
    """The exclusive flock on fd, tried every 0.5 s until deadline (time.monotonic); whether it was had."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.5)


@contextmanager
def taking_turns(name: str, timeout_s: float, directory: Path | None = None) -> Iterator[bool]:
    """Wait (at most timeout_s) for the lock `name` and hold it for the block; yields False when the wait ran
    out, and the block runs anyway (the caller says so). Two set-ups of one checkout at once (two runs of
    different projects, or two test workers) would vendor the rig's crates into one folder together."""
    fd, _ = open_lock_file(lock_path(name, directory))
    try:
        yield flock_by(fd, time.monotonic() + timeout_s)
    finally:
        os.close(fd)  # closing the descriptor releases the flock
