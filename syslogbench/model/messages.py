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
# A DONE message anywhere in a line (done.log, and the end of a run on a user's config).
DONE_RE = re.compile(rb"syslogbench h=(\d+) s=(\d+) q=(\d+) f=\d+ v=\d+ DONE")


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


def iso_timestamp(now: float) -> str:
    """RFC5424 TIMESTAMP in UTC with microseconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"


def header(fmt: str, pri: int, stamp: str, sender: SenderId) -> str:
    if fmt == "rfc5424":  # VERSION, TIMESTAMP, HOSTNAME, APP-NAME, PROCID, MSGID, no STRUCTURED-DATA
        return f"<{pri}>1 {stamp} host{sender.host} bench {sender.sender} - - "
    return f"<{pri}>{stamp} host{sender.host} bench[{sender.sender}]: "


def frame(fmt: str, message: str) -> bytes:
    """RFC3164 is newline framed; RFC5424 over TCP uses octet counting (RFC 6587): 'LEN SP MSG'."""
    if fmt == "rfc5424":
        body = message.encode()
        return b"%d %s" % (len(body), body)
    return f"{message}\n".encode()


def datagram(framed: bytes, fmt: str) -> bytes:
    """A framed message as one UDP datagram carries it: no newline, no octet count (RFC 5426)."""
    if fmt == "rfc5424":
        return framed.split(b" ", 1)[1]
    return framed.removesuffix(b"\n")


def body_fields(sender: SenderId, seq: int, pri: int, width: int) -> tuple[str, ...]:
    facility, severity = divmod(pri, SEVERITIES)
    return str(sender.host), str(sender.sender), f"{seq:0{width}d}", str(facility), str(severity)


def json_body(fields: tuple[str, ...], rest: str) -> str:
    """The same h/s/q/f/v in JSON (q as a number, JSON allows no leading zeros); x is the padding or DONE."""
    h, s, q, f, v = fields
    return f'{{"h":{h},"s":{s},"q":{int(q)},"f":{f},"v":{v},"x":"{rest}"}}'


def kv_body(fields: tuple[str, ...], rest: str) -> str:
    """key=value pairs; without the word "syslogbench", so only a daemon that parsed them can rebuild the key."""
    h, s, q, f, v = fields
    return f"h={h} s={s} q={q} f={f} v={v} x={rest}"


def text_body(fields: tuple[str, ...], rest: str) -> str:
    h, s, q, f, v = fields
    return f"syslogbench h={h} s={s} q={q} f={f} v={v} {rest}"


# The payload forms: text (the seed's), json and kv (the pre-processing rows that parse the payload).
PAYLOADS = {"text": text_body, "json": json_body, "kv": kv_body}


def pad_length(head: str, body: str, size: int) -> int:
    """The 'x's that make an ordinary message `size` bytes with its newline (at least one)."""
    return max(1, size - len(head) - len(body) - 1)


# Every timestamp of a format has the same length, so any one stands for all in a message's length.
SAMPLE_STAMP = {"rfc3164": bsd_timestamp(0), "rfc5424": iso_timestamp(0)}


def padding(
    fields: tuple[str, ...], size: int = MESSAGE_BYTES, fmt: str = "rfc3164", payload: str = "text"
) -> bytes:
    """The padding render_line gave the ordinary message with these fields (h, s, q, f, v as a line shows
    them): what a line that arrived whole carries after " v=V ". It follows from the fields' lengths alone.
    """
    h, s, _, f, v = fields
    head = header(fmt, int(f) * SEVERITIES + int(v), SAMPLE_STAMP[fmt], SenderId(int(h), int(s)))
    return b"x" * pad_length(head, PAYLOADS[payload](fields, ""), size)


def render_line(
    sender: SenderId,
    seq: int,
    pri: int,
    stamp: str,
    width: int,
    done: bool = False,
    size: int = MESSAGE_BYTES,
    fmt: str = "rfc3164",
    payload: str = "text",
) -> bytes:
    """One framed message; an ordinary one is `size` bytes counting its newline (or, octet-counted, as if)."""
    head = header(fmt, pri, stamp, sender)
    body = PAYLOADS[payload]
    fields = body_fields(sender, seq, pri, width)
    if done:
        return frame(fmt, head + body(fields, DONE_WORD))
    return frame(fmt, head + body(fields, "x" * pad_length(head, body(fields, ""), size)))


def seq_width(count: int) -> int:
    return max(7, len(str(count + 1)))


def render_lines(
    seed: int,
    sender: SenderId,
    count: int,
    now: float,
    size: int = MESSAGE_BYTES,
    fmt: str = "rfc3164",
    payload: str = "text",
) -> Iterator[bytes]:
    """count ordinary messages of `size` bytes with q=1..count, then one DONE with q=count+1."""
    stamp = iso_timestamp(now) if fmt == "rfc5424" else bsd_timestamp(now)
    width = seq_width(count)
    pris = pri_stream(seed, sender)
    for seq in range(1, count + 1):
        yield render_line(sender, seq, next(pris), stamp, width, size=size, fmt=fmt, payload=payload)
    yield render_line(sender, count + 1, next(pris), stamp, width, done=True, fmt=fmt, payload=payload)


def render_to_file(
    path: Path,
    seed: int,
    sender: SenderId,
    count: int,
    now: float,
    size: int = MESSAGE_BYTES,
    fmt: str = "rfc3164",
    payload: str = "text",
) -> int:
    """Write all messages to path in chunks, so memory stays bounded; return the byte count."""
    written = 0
    chunk: list[bytes] = []
    with path.open("wb") as out:
        for line in render_lines(seed, sender, count, now, size, fmt, payload):
            chunk.append(line)
            if len(chunk) >= 10_000:
                written += out.write(b"".join(chunk))
                chunk.clear()
        written += out.write(b"".join(chunk))
    return written
