"""syslogbench.rig.snmp: the kernel's UDP counters from /proc/net/snmp, and their place in a snapshot."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from syslogbench.rig import cgroup, snmp

# /proc/net/snmp as a 6.x kernel writes it (Ip, Icmp and IcmpMsg rows trimmed), with UdpLite after Udp.
SAMPLE = """\
Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams OutRequests
Ip: 1 64 81234 0 0 0 80012
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab
Tcp: 1 200 120000 -1 3 4 0 0 1
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
Udp: 34911 2 45093 8 45093 0 0 0 0
UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
UdpLite: 7 7 7 7 7 7 7 7 7
"""


def test_parse_udp_reads_the_udp_pair_only() -> None:
    counters = snmp.parse_udp(SAMPLE)
    assert counters is not None
    assert {name: counters[name] for name in snmp.UDP_FIELDS} == {
        "InDatagrams": 34911,
        "NoPorts": 2,
        "InErrors": 45093,
        "RcvbufErrors": 45093,
    }
    assert counters["OutDatagrams"] == 8  # not UdpLite's 7


def test_parse_udp_none_without_the_udp_rows() -> None:
    assert snmp.parse_udp(None) is None
    assert snmp.parse_udp("") is None
    assert snmp.parse_udp(SAMPLE.replace("Udp: ", "Xdp: ")) is None


def test_parse_udp_none_when_garbled() -> None:
    assert snmp.parse_udp(SAMPLE.replace("Udp: 34911 2", "Udp: 34911 x")) is None  # not a number
    assert snmp.parse_udp(SAMPLE.replace(" 0 0 0 0\nUdpLite", " 0 0 0\nUdpLite")) is None  # a column short
    no_rcvbuf = SAMPLE.replace(
        "RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\nUdp:", "A B C D E\nUdp:"
    )
    assert snmp.parse_udp(no_rcvbuf) is None  # an older kernel without the counters we report


def test_udp_delta_is_end_minus_start() -> None:
    start = {"InDatagrams": 100, "NoPorts": 1, "InErrors": 0, "RcvbufErrors": 0}
    end = {"InDatagrams": 8104, "NoPorts": 1, "InErrors": 5, "RcvbufErrors": 4}
    assert snmp.udp_delta(start, end) == {"InDatagrams": 8004, "NoPorts": 0, "InErrors": 5, "RcvbufErrors": 4}


def test_udp_delta_none_when_missing_or_going_back() -> None:
    counters = {"InDatagrams": 100, "NoPorts": 1, "InErrors": 0, "RcvbufErrors": 0}
    assert snmp.udp_delta(None, counters) is None
    assert snmp.udp_delta(counters, None) is None
    assert snmp.udp_delta(counters, counters | {"InDatagrams": 99}) is None


def test_read_snapshot_carries_the_udp_counters(tmp_path: Path) -> None:
    (tmp_path / "cgroup.version").write_text("2\n")
    (tmp_path / "time").write_text("1700000000.5\n")
    (tmp_path / "snmp").write_text(SAMPLE)
    snapshot = cgroup.read_snapshot(tmp_path)
    assert snapshot.udp is not None and snapshot.udp["RcvbufErrors"] == 45093
    (tmp_path / "snmp").unlink()
    assert cgroup.read_snapshot(tmp_path).udp is None


# --- the supervisor: the snmp copy, and readiness by transport ---------------------------------------------

SUPERVISOR = Path(__file__).resolve().parents[2] / "daemons" / "_common" / "supervise.sh"


def test_supervisor_copies_proc_net_snmp_under_the_name_the_watcher_reads() -> None:
    assert f'cp /proc/net/snmp "$dir.tmp/{snmp.SNAPSHOT_FILE}"' in SUPERVISOR.read_text()


def health(control: Path, port: int) -> int:
    env = {"CONTROL_DIR": str(control), "CENTRAL_PORT": str(port), "PATH": os.environ["PATH"]}
    return subprocess.run(["sh", str(SUPERVISOR), "--health"], env=env, check=False).returncode


def test_supervisor_health_looks_for_a_udp_socket_when_the_transport_is_udp(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as bound:
        bound.bind(("127.0.0.1", 0))
        port = bound.getsockname()[1]
        (tmp_path / "transport").write_text("udp\n")
        assert health(tmp_path, port) == 0
        (tmp_path / "transport").write_text("tcp\n")
        assert health(tmp_path, port) != 0  # nothing listens on that TCP port
    (tmp_path / "transport").write_text("udp\n")
    assert health(tmp_path, port) != 0  # the socket is gone


def test_supervisor_health_tcp_without_a_transport_file(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert health(tmp_path, server.getsockname()[1]) == 0
