"""The compiled rig (rig-rust/) as a child process: one role, requests on its stdin and records on its stdout
(model/rigrecord.py). Every wait for a record has a timeout; a record the rig did not send, a refused one, or
the process's death is a RigError that says what happened. Stdlib only: runs in the containers.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

from syslogbench.model import rigrecord
from syslogbench.model.rigrecord import FailedRecord, RecordError

T = TypeVar("T")
RIG_ENV = "SYSLOGBENCH_RIG"
INSTALLED = Path("/usr/local/bin/syslogbench-rig")  # where the images put it (rig-rust/Dockerfile)
BUILT = Path(__file__).resolve().parents[2] / "rig-rust" / "target" / "release" / "syslogbench-rig"


def write_rendered(path: Path, lines: Iterable[bytes], indexed: bool) -> Path | None:
    """Rendered messages into path, as the compiled sender reads them; indexed: also each message's end
    offset, little-endian u64s, into path.ends (paced and UDP sends go in batches of whole messages).
    Returns that file, or None for a burst, which goes out whole."""
    ends, offset, chunk = array("Q"), 0, []
    with path.open("wb") as out:
        for line in lines:
            offset += len(line)
            if indexed:
                ends.append(offset)
            chunk.append(line)
            if len(chunk) >= 10_000:
                out.write(b"".join(chunk))
                chunk.clear()
        out.write(b"".join(chunk))
    if not indexed:
        return None
    if sys.byteorder != "little":
        ends.byteswap()
    index = path.with_suffix(".ends")
    index.write_bytes(ends.tobytes())
    return index


class RigError(RuntimeError):
    """The compiled rig failed, or answered what was not asked: the message says what it said."""


def binary() -> Path:
    """The rig's binary: SYSLOGBENCH_RIG, the image's, or a checkout's own build (tests on the host)."""
    for candidate in (os.environ.get(RIG_ENV), INSTALLED, BUILT, shutil.which("syslogbench-rig")):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    raise RigError(
        f"no syslogbench-rig binary: build it with `cargo build --release --manifest-path rig-rust/Cargo.toml`"
        f" or set {RIG_ENV}"
    )


class Rig:
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
