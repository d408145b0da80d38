"""The run's message counts: all together, and each sender's (rig/reconcile.py counts them). What each
count means: model/countnames.py."""

from __future__ import annotations

from dataclasses import dataclass

from syslogbench.model.result.plain import optional


@dataclass
class Messages:
    expected: int
    sent: int = 0
    received: int = 0
    lost: int = 0
    duplicated: int = 0
    misfiled: int = 0
    unknown: int = 0
    done_expected: int = 0
    done_received: int = 0
    done_log_lines: int = 0
    done_log_extra: int = 0
    # Reconciled runs only (older results lack them too).
    filtered: int | None = optional()
    unexpected: int | None = optional()
    unprocessed: int | None = optional()
    # Lines with a sender's key that did not arrive whole (cut or mangled); older results lack it.
    truncated: int | None = optional()


@dataclass
class Tls:
    version: str | None = None
    cipher: str | None = None
    peer_closed: bool | None = None


@dataclass
class Sender:
    id: str
    status: str
    sent: int
    received: int
    lost: int
    duplicated: int
    done_seen: bool
    bytes: int = 0
    send_s: float | None = None
    cpu_s: float | None = None
    tls: Tls | None = optional()  # TLS scenarios only
    rate_target: int | None = None
    rate_achieved: float | None = None
    # Older results lack these three.
    expected: int | None = optional()
    filtered: int | None = optional()
    unexpected: int | None = optional()
    truncated: int | None = optional()  # older results lack it too
