"""UDP runs only: the drop rate beside the kernel's counters, and the daemon's receive buffer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from syslogbench.model.result.counts import Messages
from syslogbench.model.result.plain import optional


@dataclass
class UdpKernel:
    in_datagrams: int
    in_errors: int
    rcvbuf_errors: int
    no_ports: int
    drop_rate: float | None


@dataclass
class UdpBuffers:
    """The daemon's UDP receive buffer (UDP runs and searches only), read in its network namespace."""

    requested_bytes: int | None  # UDP_RCVBUF; None: not set, the kernel's default
    rmem_default: int | None  # /proc/sys/net/core/rmem_default: a socket's buffer unless the daemon asks
    rmem_max: int | None  # /proc/sys/net/core/rmem_max: the most SO_RCVBUF can ask (it gets twice that)
    socket_bytes: int | None  # the listening socket's buffer in force, by the kernel's rule (how)
    how: str  # where socket_bytes comes from
    # The same buffer read from the socket itself: `ss -m`'s rb (sk_rcvbuf, what getsockopt(SO_RCVBUF)
    # gives) as the supervisor read it once the daemon listened. None: not read (older results, an image
    # without ss); it differs from socket_bytes when the daemon did not ask what the rule assumes.
    socket_read_bytes: int | None = optional()


def udp_buffers(requested: int | None, seen: Mapping) -> UdpBuffers:
    """The buffers from what the daemon's supervisor read in its namespace (contract.UDP_BUFFERS_KEY's
    dict: rmem_default, rmem_max, socket_rcvbuf). socket_bytes is the kernel's rule for SO_RCVBUF applied to
    the sysctls: twice the request, capped at twice rmem_max (without CAP_NET_ADMIN, which the daemons lack,
    SO_RCVBUFFORCE fails and rsyslog falls back to SO_RCVBUF), else rmem_default; socket_read_bytes is what
    the socket holds (ss -m), the figure to believe when the two differ."""
    default, most = _int(seen.get("rmem_default")), _int(seen.get("rmem_max"))
    read = _int(seen.get("socket_rcvbuf"))
    if requested is None:
        how = "the kernel's default (rmem_default): UDP_RCVBUF not set"
        return UdpBuffers(None, default, most, default, how, read)
    socket = None if most is None else 2 * min(requested, most)
    how = "the kernel's rule: 2 x min(UDP_RCVBUF, rmem_max); SO_RCVBUFFORCE needs CAP_NET_ADMIN"
    return UdpBuffers(requested, default, most, socket, how, read)


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, int | str) and str(value).isdigit() else None


@dataclass
class Udp:
    sent: int
    received: int
    lost: int
    drop_rate: float | None
    kernel: UdpKernel | None = None
    buffers: UdpBuffers | None = optional()  # older results lack it

    @classmethod
    def of(cls, messages: Messages, kernel: UdpKernel | None) -> Udp:
        """The drop rate from the sequence numbers (lost / sent), beside the kernel's counters."""
        sent, lost = messages.sent, messages.lost
        return cls(sent, messages.received, lost, round(lost / sent, 6) if sent else None, kernel)
