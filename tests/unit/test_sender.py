"""The generator side without a daemon: the control directory, draining a socket, ledgers, own CPU."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pytest

from syslogbench.model.ledger import Ledger
from syslogbench.model.messages import SenderId
from syslogbench.model.rigrecord import ClosedRecord, CloseRequest, SendRecord, SendRequest
from syslogbench.rig import channel, control, sender
from syslogbench.rig.compiled import write_rendered

# --- claim_index ---------------------------------------------------------------------------------------------


def test_claim_index_gives_the_lowest_free_index_then_refuses(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    assert [control.claim_index(hosts, 3) for _ in range(3)] == [1, 2, 3]
    assert sorted(path.name for path in hosts.iterdir()) == ["1", "2", "3"]
    with pytest.raises(RuntimeError, match="HOSTS=3") as caught:
        control.claim_index(hosts, 3)
    assert str(caught.value) == "all 3 host indices are taken: more generator replicas run than HOSTS=3"


def test_claim_index_fills_a_gap(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    hosts.mkdir()
    (hosts / "1").touch()
    (hosts / "3").touch()
    assert control.claim_index(hosts, 3) == 2


def test_claim_index_from_threads_is_unique(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    claimed: list[int] = []
    lock = threading.Lock()

    def claim() -> None:
        index = control.claim_index(hosts, 8)
        with lock:
            claimed.append(index)

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(claimed) == list(range(1, 9))


# --- write_atomic, write_json ----------------------------------------------------------------------------------


def test_write_atomic_leaves_only_the_file(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "er" / "start"
    control.write_atomic(target, "1700000000.5\n")
    assert target.read_text() == "1700000000.5\n"
    control.write_atomic(target, "again\n")
    assert target.read_text() == "again\n"
    assert sorted(path.name for path in target.parent.iterdir()) == ["start"]


def test_write_json_round_trips_sorted(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    control.write_json(target, {"b": 1, "a": [1, 2]})
    assert target.read_text() == '{\n  "a": [\n    1,\n    2\n  ],\n  "b": 1\n}\n'
    assert control.read_json(target) == {"a": [1, 2], "b": 1}
    assert [path.name for path in tmp_path.iterdir()] == ["run.json"]


# --- waits ---------------------------------------------------------------------------------------------------


def test_wait_for_returns_when_the_file_exists(tmp_path: Path) -> None:
    path = tmp_path / "ready"
    path.touch()
    control.wait_for(path, 0.0, "the daemon to listen on port 514")


def test_wait_for_times_out_quickly_naming_what(tmp_path: Path) -> None:
    path = tmp_path / "daemon" / "ready"
    began = time.monotonic()
    with pytest.raises(control.WaitTimeout) as caught:
        control.wait_for(path, 0.05, "the daemon to listen on port 514")
    took = time.monotonic() - began
    assert took < 10.0, f"gave up after {took:.2f} s, not at once"
    assert str(caught.value) == f"gave up after 0 s waiting for the daemon to listen on port 514 ({path})"
    assert isinstance(caught.value, TimeoutError)


def test_wait_for_sees_a_file_that_appears_later(tmp_path: Path) -> None:
    path = tmp_path / "start"
    timer = threading.Timer(0.05, path.touch)
    timer.start()
    try:
        control.wait_for(path, 5.0, "the start signal")
    finally:
        timer.cancel()
    assert path.exists()


# --- drain ---------------------------------------------------------------------------------------------------


def serve_once(read: bool) -> tuple[socket.socket, threading.Thread, list[int], threading.Event]:
    """A loopback TCP server accepting one connection; it counts what it reads, or reads nothing until told."""
    server = socket.create_server(("127.0.0.1", 0))
    received: list[int] = []
    release = threading.Event()

    def run() -> None:
        conn, _ = server.accept()
        with conn:
            if not read:
                release.wait(10)
                return
            total = 0
            while chunk := conn.recv(65536):
                total += len(chunk)
            received.append(total)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return server, thread, received, release


def burst(tmp_path: Path, payload: bytes) -> Path:
    path = tmp_path / "burst.msgs"
    assert write_rendered(path, iter([payload]), indexed=False) is None
    return path


def test_the_compiled_sender_drains_until_the_peer_has_everything(tmp_path: Path) -> None:
    server, thread, received, _ = serve_once(read=True)
    payload = b"<13>Nov 22 10:00:00 host1 bench[1]: syslogbench h=1 s=1 q=0000001 f=1 v=5 x\n" * 2000
    path = burst(tmp_path, payload)
    with server, socket.create_connection(server.getsockname(), timeout=5) as sock:
        rig, _ = sender.start_rig(sock, "tcp")
        rig.ask(SendRequest(str(path), None, 2000, 0.0, time.time(), None, 0.005))
        assert rig.answer(SendRecord, 10).sent == 2000
        rig.ask(CloseRequest(5.0))
        assert rig.answer(ClosedRecord, 15).left_bytes == 0
        rig.close()
        thread.join(5)
    assert received == [len(payload)]


def test_the_compiled_sender_gives_up_draining_with_bytes_left_when_the_peer_stops_reading(
    tmp_path: Path,
) -> None:
    server, thread, _, release = serve_once(read=False)
    payload = b"x" * 16 * 2**20  # far more than the peer's receive buffer and our send queue hold
    path = burst(tmp_path, payload)
    with server, socket.create_connection(server.getsockname(), timeout=5) as sock:
        rig, _ = sender.start_rig(sock, "tcp")
        now = time.time()
        rig.ask(SendRequest(str(path), None, 1, 0.0, now, now + 0.5, 0.005))
        sent = rig.answer(SendRecord, 10)
        assert (sent.sent, sent.status) == (0, "gave up: 1 not handed to the kernel by the trial's end")
        assert 0 < sent.bytes < len(payload)
        rig.ask(CloseRequest(0.2))
        closed = rig.answer(ClosedRecord, 10)  # the upper bound: a close that never gives up fails here
        assert 0 < closed.left_bytes <= sent.bytes
        # It gave up at its drain timeout, not before: drain_s is on the same clock as the rig's deadline
        # (began + drain_timeout_s), and bytes were left, so the deadline is what ended the drain.
        assert closed.drain_s >= 0.2, f"gave up draining after {closed.drain_s} s, before its 0.2 s"
        rig.close()
        release.set()
    thread.join(5)


# --- record_death ----------------------------------------------------------------------------------------------


def test_record_death_killed_names_exit_code_and_memory_limit(
    control_dir: Path, watcher_channel: channel.Server
) -> None:
    who = SenderId(2, 3)
    sender.record_death(who, -9)
    ledger = json.loads((control_dir / "ledgers" / "host2-s3.json").read_text())
    assert ledger == {"id": "host2-s3", "status": "died: exit code -9 (killed, memory limit?)"}
    assert "memory limit" in ledger["status"]


def test_record_death_other_exit_code(control_dir: Path, watcher_channel: channel.Server) -> None:
    sender.record_death(SenderId(1, 1), 1)
    ledger = control.read_json(control_dir / "ledgers" / "host1-s1.json")
    assert ledger == {"id": "host1-s1", "status": "died: exit code 1"}


def test_record_death_keeps_a_ledger_the_sender_sent(
    control_dir: Path, watcher_channel: channel.Server
) -> None:
    who = SenderId(1, 2)
    written = Ledger(id="host1-s2", status="ok", messages=11)
    channel.link().ledger(who.name, written)
    sender.record_death(who, 0)
    assert control.read_json(control_dir / "ledgers" / "host1-s2.json") == {
        "id": "host1-s2",
        "status": "ok",
        "messages": 11,
    }


def test_minus_rounds_and_passes_none() -> None:
    assert sender._minus(3.5004, 1.25) == 2.25
    assert sender._minus(None, 1.0) is None
    assert sender._minus(1.0, None) is None


def test_the_senders_congestion_control_is_pinned_to_reno() -> None:
    """Reno is in every kernel's tcp_allowed_congestion_control, so an unprivileged sender gets it anywhere."""
    assert sender.congestion_in_force() == "reno"
    server, thread, _, _ = serve_once(read=True)
    with server:  # open until the server's thread has accepted: closed first, its accept fails
        with socket.create_connection(server.getsockname(), timeout=5) as sock:
            assert sender.pin_congestion(sock) == "reno"
            name = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
            assert name.rstrip(b"\0") == b"reno"
        thread.join(5)
