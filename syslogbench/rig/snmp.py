"""The kernel's UDP counters from /proc/net/snmp, copied into each snapshot by the daemon's supervisor.

/proc/net/snmp is per network namespace, so the copy taken inside the daemon's container counts only the
datagrams that reached the daemon's namespace. Stdlib only: runs in the watcher container.
"""

from __future__ import annotations

from pathlib import Path

SNAPSHOT_FILE = "snmp"  # the name the supervisor gives its copy of /proc/net/snmp
# The counters a result reports, as the kernel names them.
UDP_FIELDS = ("InDatagrams", "NoPorts", "InErrors", "RcvbufErrors")


def parse_udp(text: str | None) -> dict[str, int] | None:
    """The `Udp:` header line and the value line after it, as {name: value}; None when absent or garbled.

    Only the `Udp:` pair counts: `UdpLite:` has the same column names and must not be mixed in.
    """
    if text is None:
        return None
    rows = [line.split() for line in text.splitlines() if line.startswith("Udp: ")]
    if len(rows) != 2 or len(rows[0]) != len(rows[1]):
        return None
    names, values = rows[0][1:], rows[1][1:]
    if not all(value.isdigit() for value in values):
        return None
    counters = dict(zip(names, (int(value) for value in values), strict=True))
    return counters if all(name in counters for name in UDP_FIELDS) else None


def read_udp(snapshot_dir: Path) -> dict[str, int] | None:
    try:
        return parse_udp((Path(snapshot_dir) / SNAPSHOT_FILE).read_text())
    except OSError:
        return None


def udp_delta(start: dict[str, int] | None, end: dict[str, int] | None) -> dict[str, int] | None:
    """What the counters grew by between two snapshots; None if either is missing or a counter went back."""
    if start is None or end is None:
        return None
    delta = {name: end[name] - start[name] for name in UDP_FIELDS}
    return None if any(value < 0 for value in delta.values()) else delta


def read_buffers(path: Path) -> dict[str, str]:
    """The supervisor's "name value" lines of the daemon namespace's socket buffer sysctls
    (contract.DaemonFiles.buffers: rmem_default, rmem_max); empty where it wrote none."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return {}
    return dict(line.split(" ", 1) for line in lines if " " in line)
