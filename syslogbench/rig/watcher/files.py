"""Readers of the volumes that several concerns share: the output's line count, done.log, samples.log,
the ledgers and the disk queue's size. Each reads only what was added since its last look."""

from __future__ import annotations

import os
import time
from pathlib import Path

from syslogbench.rig import control
from syslogbench.rig.cgroup import Snapshot, parse_sample
from syslogbench.rig.reconcile import BLOCK_BYTES, OUTPUT_RE


class LineCounter:
    """Counts newlines in the daemon's split files, reading only what was added since the last look."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.offsets: dict[str, int] = {}
        self.lines = 0

    def update(self) -> int:
        for entry in os.scandir(self.directory):
            if not OUTPUT_RE.match(entry.name):
                continue
            offset = self.offsets.get(entry.name, 0)
            if entry.stat().st_size > offset:
                self.offsets[entry.name] = self.count(entry.path, offset)
        return self.lines

    def count(self, path: str, offset: int) -> int:
        """Count the newlines after offset, a block at a time (what a fast daemon writes in 2 s is hundreds
        of MiB: never held at once); returns the new offset."""
        with open(path, "rb") as handle:
            handle.seek(offset)
            while data := handle.read(BLOCK_BYTES):
                offset += len(data)
                self.lines += data.count(b"\n")
        return offset


class DoneTail:
    """Follows done.log like SEC does, noting when each DONE line appeared (seconds after the start)."""

    def __init__(self, path: Path, t0: float) -> None:
        self.path, self.t0 = path, t0
        self.offset = 0
        self.seen: list[float] = []

    def update(self) -> int:
        size = self.path.stat().st_size if self.path.exists() else 0
        if size > self.offset:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                data = handle.read(size - self.offset)
            complete = data[: data.rfind(b"\n") + 1]
            self.offset += len(complete)
            now = time.monotonic() - self.t0
            self.seen += [now] * sum(1 for line in complete.splitlines() if b"DONE" in line)
        return len(self.seen)


class SampleTail:
    """Reads the supervisor's samples.log as blocks complete; CPU is made relative to the start snapshot."""

    def __init__(self, path: Path, start: Snapshot | None) -> None:
        self.path = path
        self.offset = 0
        self.pending: list[str] = []
        self.base = (start.cpu_user_s, start.cpu_system_s) if start else (None, None)

    def update(self) -> list[tuple[float | None, float | None, int | None]]:
        size = self.path.stat().st_size if self.path.exists() else 0
        if size <= self.offset:
            return []
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            data = handle.read(size - self.offset)
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        blocks = []
        for line in complete.decode(errors="replace").splitlines():
            if line.startswith("sample "):
                self.pending = []
            elif line.startswith("end "):
                blocks.append(self.relative(*parse_sample(self.pending)))
            else:
                self.pending.append(line)
        return blocks

    def relative(self, user: float | None, system: float | None, memory: int | None) -> tuple:
        base_user, base_system = self.base
        user = None if user is None or base_user is None else round(user - base_user, 3)
        system = None if system is None or base_system is None else round(system - base_system, 3)
        return user, system, memory


def read_ledgers() -> dict[str, dict]:
    return {path.stem: control.read_json(path) for path in control.CONTROL.ledgers.glob("*.json")}


def failed_senders() -> list[str]:
    return [
        f"{name}: {ledger['status']}" for name, ledger in read_ledgers().items() if ledger["status"] != "ok"
    ]


def directory_bytes(directory: Path) -> int:
    """Size of every file under directory (the central daemon's disk queue files)."""
    total = 0
    for root, _, files in os.walk(directory):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except FileNotFoundError:  # the daemon removed it meanwhile
                continue
    return total
