"""The compiled rig (rig-rust/, the `syslogbench-rig` binary): one role, requests on its stdin and records on
its stdout (model/rigrecord.py). `RigProcess` keeps a role running (a sender, a trial's follower); `call` asks
one request of a role that answers once and exits (a run's reconciliation). Every wait has a timeout; a
record the rig did not send, a refused one, or the process's death is a RigError that says what happened, in
one line. Stdlib only: runs in the containers.

The binary is at $SYSLOGBENCH_RIG, or where the images install it. From a checkout (the unit tests):
`cargo build --release --manifest-path rig-rust/Cargo.toml` builds rig-rust/target/release/syslogbench-rig.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO, TypeVar

from syslogbench.model import rigrecord
from syslogbench.model.rigrecord import FailedRecord, RecordError

T = TypeVar("T")
RIG_ENV = "SYSLOGBENCH_RIG"
INSTALLED = Path("/usr/local/bin/syslogbench-rig")  # where the images put it (rig-rust/Dockerfile)
BUILT = Path(__file__).resolve().parents[2] / "rig-rust" / "target" / "release" / "syslogbench-rig"
RENDER_CHUNK = 10_000  # messages written at a time
CLEAN_EVERY_BYTES = 64 * 2**20  # rendered bytes between two flushes to disk (clean)
BUILD = "cargo build --release --manifest-path rig-rust/Cargo.toml"


def write_rendered(path: Path, lines: Iterable[bytes], indexed: bool) -> Path | None:
    """Rendered messages into path, as the compiled sender reads them; indexed: also each message's end
    offset, little-endian u64s, into path.ends (paced and UDP sends go in batches of whole messages).
    Returns that file, or None for a burst, which goes out whole. Both are written RENDER_CHUNK messages at a
    time: a sender's memory does not grow with its messages (a 60 s trial at 1,000,000 msg/s is 1.8 GB)."""
    index = path.with_suffix(".ends") if indexed else None
    offset, chunk, ends, written = 0, [], array("Q"), 0
    with path.open("wb") as out, index.open("wb") if index else open(os.devnull, "wb") as offsets:
        for line in lines:
            offset += len(line)
            ends.append(offset)
            chunk.append(line)
            if len(chunk) >= RENDER_CHUNK:
                out.write(b"".join(chunk))
                write_offsets(offsets, ends, indexed)
                chunk, ends = [], array("Q")
                if out.tell() - written >= CLEAN_EVERY_BYTES:
                    written = out.tell()
                    clean(out, *([offsets] if indexed else []))
        out.write(b"".join(chunk))
        write_offsets(offsets, ends, indexed)
    return index


def clean(*files: BinaryIO) -> None:
    """Write what was rendered so far to disk. Dirty pages count against the generator's memory limit until
    written: 4 senders rendering a 60 s trial at 1,000,000 msg/s write 6 GB under a 512 MiB limit, and the
    kernel killed them (-9) before writeback caught up. Clean pages stay cached (the kernel reclaims them
    as it needs): dropping them made a 60 s trial at 900,000 msg/s read its messages back from disk, and
    fall behind."""
    for handle in files:
        handle.flush()
        os.fdatasync(handle.fileno())


def write_offsets(out: BinaryIO, ends: array, indexed: bool) -> None:
    if not indexed:
        return
    if sys.byteorder != "little":
        ends.byteswap()
    out.write(ends.tobytes())


class RigError(RuntimeError):
    """The compiled rig failed, or answered what was not asked: the message says what it said."""


def binary() -> Path:
    """The rig's binary: SYSLOGBENCH_RIG where set, else the image's, a checkout's own build (tests on the
    host), or one on PATH."""
    if named := os.environ.get(RIG_ENV):
        if not Path(named).is_file():
            raise RigError(f"syslogbench-rig not found at {named} (${RIG_ENV}); build it with: {BUILD}")
        return Path(named)
    for candidate in (INSTALLED, BUILT, shutil.which("syslogbench-rig")):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    raise RigError(f"syslogbench-rig not found at {INSTALLED} nor in this checkout; build it with: {BUILD}")


def call(role: str, request: object, *options: str, timeout: float = 900) -> object:
    """The rig's answer to one request (JSON data), or RigError: not there, failed, timed out, or no JSON."""
    path = binary()
    try:
        done = subprocess.run(
            [str(path), role, *options],
            input=json.dumps(request).encode(),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except PermissionError as error:
        raise RigError(f"syslogbench-rig at {path} cannot run: {error.strerror}") from None
    except subprocess.TimeoutExpired:
        raise RigError(f"syslogbench-rig {role} gave no answer within {timeout:g} s (stopped)") from None
    said = done.stderr.decode(errors="replace").strip().splitlines()
    if done.returncode != 0:
        # The rig's own last line reads "syslogbench-rig ROLE: why".
        reason = (
            said[-1].removeprefix(f"syslogbench-rig {role}: ") if said else f"exit code {done.returncode}"
        )
        raise RigError(f"syslogbench-rig {role} failed: {reason}")
    try:
        return json.loads(done.stdout)
    except ValueError:
        raise RigError(f"syslogbench-rig {role} answered no JSON: {done.stdout[:200]!r}") from None


class RigProcess:
    """One role of the compiled rig, running."""

    def __init__(self, role: str, args: list[str], pass_fds: tuple[int, ...] = ()) -> None:
        self.role = role
        self.process = subprocess.Popen(
            [str(binary()), role, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=pass_fds,
            bufsize=0,
        )
        self.pending = b""

    def ask(self, request: object, op: str | None = None) -> None:
        try:
            self.process.stdin.write((rigrecord.request_line(request, op) + "\n").encode())  # type: ignore[union-attr]
        except (BrokenPipeError, OSError) as error:
            raise RigError(f"{self.role}: the rig is gone ({error}){self.stderr()}") from None

    def ready(self, timeout: float) -> bool:
        """Whether a record can be read now, or within timeout seconds."""
        if b"\n" in self.pending:
            return True
        readable, _, _ = select.select([self.process.stdout], [], [], max(0.0, timeout))
        return bool(readable)

    def answer(self, kind: type[T], timeout: float) -> T:
        """The next record, which must be a `kind` (a FailedRecord says why the rig failed)."""
        record = self.next_record(timeout)
        if isinstance(record, FailedRecord):
            raise RigError(record.error)
        if not isinstance(record, kind):
            raise RigError(f"{self.role}: expected {kind.__name__}, got {record!r}")
        return record

    def next_record(self, timeout: float) -> object:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not self.ready(left):
                raise RigError(f"{self.role}: no record from the rig within {timeout:.0f} s")
            chunk = os.read(self.process.stdout.fileno(), 65536)  # type: ignore[union-attr]
            if not chunk:
                raise RigError(f"{self.role}: the rig exited ({self.process.wait()}){self.stderr()}")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        try:
            return rigrecord.record_of(line.decode(errors="replace"))
        except RecordError as error:
            raise RigError(f"{self.role}: {error}") from None

    def stderr(self) -> str:
        if self.process.poll() is None or self.process.stderr is None:
            return ""
        text = self.process.stderr.read().decode(errors="replace").strip()
        return f": {text.splitlines()[-1]}" if text else ""

    def close(self, timeout: float = 5.0) -> None:
        """Close its stdin (it ends) and wait; kill it if it does not."""
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
