"""Relay scenarios only: the daemon's queue, the last hop as it reported itself, the tail and a restart."""

from __future__ import annotations

from dataclasses import dataclass, field

from syslogbench.model.result.plain import optional


@dataclass
class LastHop:
    """The relay target as it reported itself (rig/lasthop.py); times are seconds after the start signal."""

    target: str
    lines_per_s: int
    pause_s: float
    host: str
    port: int
    connections: int
    lines: int
    done_lines: int
    receive_buffer_bytes: int = 0
    # Connections the central daemon ended with a reset (RST) instead of a close (FIN): the kernel then drops
    # whatever this side had not read yet, so messages in flight are lost whatever queue the daemon had.
    resets: int = 0
    # Connections that ended inside a line; the pieces go to lasthop.fragments.log. A daemon that resends the
    # message whole loses nothing.
    fragments: int = 0
    bytes: int = 0
    paused_from_s: float | None = None
    paused_until_s: float | None = None
    first_line_s: float | None = None
    last_line_s: float | None = None
    drained_s: float | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Queue:
    buffer: str
    where: str
    capacity_bytes: int | None
    peak_bytes: int | None
    bytes_after_stop: int | None
    samples: list[list[float]] = field(default_factory=list)


@dataclass
class Tail:
    lines_at_done: int
    lines_at_stop: int
    waited_s: float
    last_line_s: float


@dataclass
class Restart:
    senders_done_s: float | None
    requested_s: float | None
    exit_code: int | None
    stop_s: float | None = optional()


@dataclass
class Relay:
    queue: Queue
    last_hop: LastHop | None = None
    tail: Tail | None = optional()
    restart: Restart | None = optional()
