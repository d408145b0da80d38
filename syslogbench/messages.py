"""The test messages: RFC3164, newline framed, each carrying its sender and sequence number.

Stdlib only: generators and the watcher import this inside their containers.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

FACILITIES = 24
SEVERITIES = 8
MESSAGE_BYTES = 100  # the seed's messages were about 100 bytes
DONE_WORD = "DONE"
# What the reconciler looks for in any daemon's output line, whatever the daemon put before it.
BODY_RE = re.compile(rb"syslogbench h=(\d+) s=(\d+) q=(\d+) f=(\d+) v=(\d+)( DONE)?")


@dataclass(frozen=True)
class SenderId:
    host: int
    sender: int

    @property
    def name(self) -> str:
        return f"host{self.host}-s{self.sender}"


def pri_stream(seed: int, sender: SenderId) -> Iterator[int]:
    """Facility x 8 + severity, uniform over all 24 x 8 pairs, the same for the same seed."""
    rng = random.Random(f"{seed}:{sender.host}:{sender.sender}")
    while True:
        yield rng.randrange(FACILITIES * SEVERITIES)


def bsd_timestamp(now: float) -> str:
    """RFC3164 TIMESTAMP: 'Mmm dd hh:mm:ss' with the day padded by a space."""
    parts = time.gmtime(now)
    return time.strftime("%b ", parts) + f"{parts.tm_mday:2d}" + time.strftime(" %H:%M:%S", parts)


def render_line(
    sender: SenderId,
    seq: int,
    pri: int,
    stamp: str,
    width: int,
    done: bool = False,
    size: int = MESSAGE_BYTES,
) -> bytes:
    facility, severity = divmod(pri, SEVERITIES)
    head = (
        f"<{pri}>{stamp} host{sender.host} bench[{sender.sender}]: "
        f"syslogbench h={sender.host} s={sender.sender} q={seq:0{width}d} f={facility} v={severity}"
    )
    if done:
        return f"{head} {DONE_WORD}\n".encode()
    pad = max(1, size - len(head) - 2)
    return f"{head} {'x' * pad}\n".encode()


def seq_width(count: int) -> int:
    return max(7, len(str(count + 1)))


def render_lines(
    seed: int, sender: SenderId, count: int, now: float, size: int = MESSAGE_BYTES
) -> Iterator[bytes]:
    """count ordinary messages of `size` bytes with q=1..count, then one DONE with q=count+1."""
    stamp = bsd_timestamp(now)
    width = seq_width(count)
    pris = pri_stream(seed, sender)
    for seq in range(1, count + 1):
        yield render_line(sender, seq, next(pris), stamp, width, size=size)
    yield render_line(sender, count + 1, next(pris), stamp, width, done=True)


def render_to_file(
    path: Path, seed: int, sender: SenderId, count: int, now: float, size: int = MESSAGE_BYTES
) -> int:
    """Write all messages to path in chunks, so memory stays bounded; return the byte count."""
    written = 0
    chunk: list[bytes] = []
    with path.open("wb") as out:
        for line in render_lines(seed, sender, count, now, size):
            chunk.append(line)
            if len(chunk) >= 10_000:
                written += out.write(b"".join(chunk))
                chunk.clear()
        written += out.write(b"".join(chunk))
    return written
