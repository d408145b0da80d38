"""The life of a running stack, written once: a staging folder of its own that its watcher writes into, the
machine's fingerprint, the start stamp, up, and, however the body ends, down and the staging folder gone
(what the watcher wrote there moved out first, where it is kept). A run on one host (host/onehost.py), a
capacity search and a knob study's fixed-rate trial (host/capacity/session.py) each go through staged().
Also the running stack's interface (RunningStack, which the orchestrators give), what a run takes besides its
plan (RunOptions), and the staging folder of a run kept apart (kept())."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from syslogbench.host.compose import Up
    from syslogbench.model.result import Fingerprint

Show = Callable[[Path], None]
Fingerprinting = Callable[[dict[str, str]], "Fingerprint | None"]  # the orchestrator's, with the stack's env


class RunningStack(Protocol):
    """The containers of one run or one capacity search, from up until down: compose's project on one host
    (host/compose.py Compose) or a swarm's stack (host/swarm.py Stack)."""

    project: str

    def up(self, env: dict[str, str], timeout_s: float) -> Up: ...

    def exec(self, env: dict[str, str], service: str, args: list[str], timeout_s: float) -> object: ...

    def down(self, env: dict[str, str]) -> None: ...


@dataclass(frozen=True)
class RunOptions:
    """How one run goes, besides its plan: what the matrix and the fault campaign change."""

    show: Show
    extra_env: dict[str, str] = field(default_factory=dict)  # a matrix cell's id
    build: bool = True
    extra_files: tuple[Path, ...] = ()  # compose files over compose.yaml (a fault's small logs volume)
    project: str | None = None


@dataclass(frozen=True)
class Staged:
    """A stack between its staging and its clean-up: its environment (RESULTS_DIR its staging folder, and
    the fingerprint where one was taken), the fingerprint, when it began (after the fingerprint, before up),
    and at the end what was kept."""

    stack: RunningStack
    env: dict[str, str]
    staging: Path
    fingerprint: Fingerprint | None
    began: datetime
    kept: list[Path] = field(default_factory=list)  # the watcher's results moved out, once down
    ups: list[Up] = field(default_factory=list)

    def up(self, timeout_s: float) -> Up:
        """Up until the watcher ends (or timeout_s): compose's outcome, or the stack's."""
        done = self.stack.up(self.env, timeout_s)
        self.ups.append(done)
        return done

    def up_behind(self, timeout_s: float) -> threading.Thread:
        """up in a thread: a search's trials are asked while the stack runs."""
        thread = threading.Thread(target=self.up, args=(timeout_s,))
        thread.start()
        return thread


@contextlib.contextmanager
def staged(stack: RunningStack, env: dict[str, str], results_dir: Path, kind: str,
           fingerprint: Fingerprinting | None = None, keep: bool = True) -> Iterator[Staged]:  # fmt: skip
    """The stack staged: its staging folder (named for its kind and project, so that a run started at the
    same time from another project or checkout into the same results directory is never taken for this
    one), the fingerprint (before up, where fingerprint takes one: the orchestrator's), the start stamp. However the
    body ends, even Ctrl-C: the stack down, then (keep) the watcher's results moved into results_dir, and the
    staging folder removed with whatever a killed watcher left in it."""
    results_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{kind}-{stack.project}-", dir=results_dir))
    kept: list[Path] = []  # stage.kept, made first: the clean-up fills it even where no stage was made
    try:
        env["RESULTS_DIR"] = str(staging.resolve())
        found = fingerprint(env) if fingerprint else None
        # The start stamp after the fingerprint: a result starts when its run does, not its fingerprint.
        stage = Staged(stack, env, staging, found, datetime.now(UTC), kept)
        try:
            yield stage
        finally:
            stack.down(env)
    finally:
        if keep:
            kept += moved(staging, results_dir)
        shutil.rmtree(staging, ignore_errors=True)


def moved(staging: Path, results_dir: Path) -> list[Path]:
    """The results in staging moved into results_dir: their new paths, by name."""
    found = []
    for path in sorted(staging.glob("*.json")):
        target = results_dir / path.name
        path.replace(target)
        found.append(target)
    return found


@contextlib.contextmanager
def kept(folder: Path) -> Iterator[tuple[Path, list[Path]]]:
    """A staging folder for one run of a command that keeps runs of its own (knobs, compare, a search's
    burst), so that no other file is taken for its result: the folder, and the list that holds, once the
    body ends, the results moved from it into folder."""
    folder.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".run-", dir=folder))
    written: list[Path] = []
    try:
        yield staging, written
        written += moved(staging, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
