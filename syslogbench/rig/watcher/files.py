"""Readers of the volumes that several concerns share: the output's line count, done.log, samples.log,
the ledgers and the disk queue's size. Each reads only what was added since its last look. And `clear`,
which empties a volume (the reset before a run, the clean-up after it)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from syslogbench.contract import BLOCK_BYTES, OUTPUT_RE
from syslogbench.model.ledger import Ledger, failures
from syslogbench.rig import control
from syslogbench.rig.cgroup import Snapshot, parse_sample


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


class OutputSize:
    """The daemon's split files so far, from their sizes alone (one stat each, nothing read): counting their
    lines read every byte the daemon wrote once more, in the measured window (docs/findings/harness-cpu.md). Lines are
    estimated with the mean line length of the first `line_sample` bytes of the largest file; exact counts come from the
    reconciliation after the run. every_file: a user's config (run --config), whose files may have any name in
    any directory there; copies in several files count once in each."""

    def __init__(self, directory: Path, line_sample: int = 64 * 1024, every_file: bool = False) -> None:
        self.directory, self.line_sample, self.every_file = directory, line_sample, every_file
        self.bytes = 0
        self.line_bytes: float | None = None  # mean bytes per line, once measured
        self.at: float | None = None  # seconds after the start of the last look, where the caller said

    def update(self, now: float | None = None, max_age: float = 0.0) -> int:
        """The output's bytes now, or as of a look at most max_age seconds before now (one look serves the
        samples and the progress alike); `lines` is the estimate for them, `at` when they were looked at."""
        if now is not None and self.at is not None and now - self.at < max_age:
            return self.bytes
        self.at = now
        sizes = {}
        for path in self.paths():
            try:
                sizes[path] = os.stat(path).st_size
            except FileNotFoundError:  # removed meanwhile
                continue
        self.bytes = sum(sizes.values())
        if self.line_bytes is None and sizes and max(sizes.values()) >= self.line_sample:
            self.line_bytes = mean_line_bytes(max(sizes, key=sizes.__getitem__), self.line_sample)
        return self.bytes

    def paths(self) -> list[str]:
        if self.every_file:
            return [os.path.join(root, name) for root, _, names in os.walk(self.directory) for name in names]
        return [entry.path for entry in os.scandir(self.directory) if OUTPUT_RE.match(entry.name)]

    @property
    def lines(self) -> int:
        return round(self.bytes / self.line_bytes) if self.line_bytes else 0


def mean_line_bytes(path: str, size: int) -> float | None:
    """Mean length of the whole lines in the first `size` bytes of path."""
    with open(path, "rb") as handle:
        data = handle.read(size)
    whole = data[: data.rfind(b"\n") + 1]
    count = whole.count(b"\n")
    return len(whole) / count if count else None


class DoneTail:
    """Follows done.log like SEC does, noting when each DONE line appeared (seconds after the start).

    Given the start's wall-clock time, a line's time is done.log's modification time when the watcher saw
    it: the kernel's clock at the daemon's last write (to its clock tick), whatever the watcher's polling
    interval. Lines that came together share it, within [the previous look, this look]."""

    def __init__(self, path: Path, t0: float, wall0: float | None = None) -> None:
        self.path, self.t0, self.wall0 = path, t0, wall0
        self.offset = 0
        self.looked = 0.0  # seconds after the start of the previous look
        self.seen: list[float] = []

    def update(self) -> int:
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return len(self.seen)
        now = time.monotonic() - self.t0
        if stat.st_size > self.offset:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                data = handle.read(stat.st_size - self.offset)
            complete = data[: data.rfind(b"\n") + 1]
            self.offset += len(complete)
            done = sum(1 for line in complete.splitlines() if b"DONE" in line)
            self.seen += [self.written(stat.st_mtime_ns, now)] * done
        self.looked = now
        return len(self.seen)

    def written(self, mtime_ns: int, now: float) -> float:
        """When the new lines were written: the file's mtime, kept between the previous look and now (a clock
        step between the two clocks cannot push it out); now without the start's wall-clock time."""
        if self.wall0 is None:
            return now
        return min(now, max(self.looked, mtime_ns / 1e9 - self.wall0))


class SampleTail:
    """Reads the supervisor's samples.log as blocks complete; CPU is made relative to the start snapshot."""

    def __init__(self, path: Path, start: Snapshot | None) -> None:
        self.path = path
        self.offset = 0
        self.pending: list[str] = []
        self.base = (start.cpu_user_s, start.cpu_system_s) if start else (None, None)

    def update(self) -> list[tuple[float | None, float | None, int | None]]:
        size = file_size(self.path)
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


class Ledgers:
    """The ledgers written so far, each read once: a sender writes its ledger once (renamed into place), and
    the guard looks twice a second, the UDP quiet end ten times."""

    def __init__(self) -> None:
        self.known: dict[str, Ledger] = {}

    def update(self) -> dict[str, Ledger]:
        directory = control.CONTROL.ledgers
        if not directory.exists():
            return self.known
        for entry in os.scandir(directory):
            name, dot, ext = entry.name.rpartition(".")
            if dot and ext == "json" and not name.startswith(".") and name not in self.known:
                self.known[name] = read_ledger(Path(entry.path))
        return self.known

    def failed(self) -> list[str]:
        return failures(self.update())


def file_size(path: Path) -> int:
    """0 for a file not there yet; one system call, since the watch asks every look."""
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def read_ledger(path: Path) -> Ledger:
    return Ledger.from_json(control.read_json(path), path.name)


def read_ledgers() -> dict[str, Ledger]:
    """Every ledger written so far, by sender name."""
    return {path.stem: read_ledger(path) for path in control.CONTROL.ledgers.glob("*.json")}


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


def clear(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for entry in directory.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
