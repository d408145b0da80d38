"""TLS without a daemon: the run's throwaway certificates, and the sender's TLS over loopback."""

from __future__ import annotations

import itertools
import socket
import ssl
import subprocess
import threading
import time
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from syslogbench.model.ledger import Ledger
from syslogbench.model.messages import SenderId
from syslogbench.model.result import Tls, plain
from syslogbench.model.rigrecord import (
    ClosedRecord,
    CloseRequest,
    ConnectedRecord,
    SenderCounts,
    SendRecord,
    SendRequest,
)
from syslogbench.model.settings import Settings, from_env
from syslogbench.rig import reconcile, sender, tlscerts
from syslogbench.rig.compiled import RigError, RigProcess, write_rendered
from syslogbench.rig.watcher import accounting
from syslogbench.rig.watcher import run as watcher
from tests.unit.conftest import env

ROOT = Path(__file__).resolve().parents[2]
RECORD_BYTES = 16_384  # the compiled sender's most plaintext per TLS record (rig-rust/src/send/link.rs)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return tlscerts.generate(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second, unrelated CA: its server certificate must not verify against the run's CA."""
    return tlscerts.generate(tmp_path_factory.mktemp("other"))["ca.pem"]


@dataclass
class Server:
    """A TLS server on loopback that starts reading late, then reads until the client's close_notify."""

    port: int
    received: bytearray = field(default_factory=bytearray)
    error: list[BaseException] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


def serve(certs: dict[str, Path], read_delay: float = 0.0, close: bool = True) -> Iterator[Server]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certs["server.pem"], certs["server.key"])
    listener = socket.create_server(("127.0.0.1", 0))
    server = Server(listener.getsockname()[1])

    def run() -> None:
        try:
            raw, _ = listener.accept()
            raw.settimeout(10)
            with context.wrap_socket(raw, server_side=True) as conn:
                time.sleep(read_delay)  # the client's data piles up in the buffers meanwhile
                while data := conn.recv(65536):
                    server.received += data
                server.done.set()
                if not close:
                    time.sleep(1)  # a daemon that never closes: the client's wait must still end
        except (OSError, ssl.SSLError) as error:
            server.error.append(error)
        finally:
            server.done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        listener.close()
        thread.join(timeout=10)


@pytest.fixture
def server(certs: dict[str, Path]) -> Iterator[Server]:
    yield from serve(certs)


def connect(server: Server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


# --- the throwaway certificates -------------------------------------------------------------------------------


def test_generate_writes_the_three_files_only_with_a_private_key(tmp_path: Path) -> None:
    written = tlscerts.generate(tmp_path / "tls")
    assert sorted(written) == sorted(tlscerts.FILES)
    assert sorted(path.name for path in (tmp_path / "tls").iterdir()) == sorted(tlscerts.FILES)
    assert (tmp_path / "tls" / "server.key").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "tls" / "ca.pem").stat().st_mode & 0o777 == 0o644
    assert b"PRIVATE KEY" in (tmp_path / "tls" / "server.key").read_bytes()
    assert b"PRIVATE KEY" not in (tmp_path / "tls" / "ca.pem").read_bytes()


def test_each_run_gets_a_new_ca(tmp_path: Path) -> None:
    first = tlscerts.generate(tmp_path / "a")["ca.pem"].read_bytes()
    second = tlscerts.generate(tmp_path / "b")["ca.pem"].read_bytes()
    assert first != second


def test_the_server_certificate_verifies_for_central_with_openssl(certs: dict[str, Path]) -> None:
    checked = subprocess.run(
        ["openssl", "verify", "-CAfile", certs["ca.pem"], "-verify_hostname", "central", certs["server.pem"]],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stderr
    wrong = subprocess.run(
        ["openssl", "verify", "-CAfile", certs["ca.pem"], "-verify_hostname", "other", certs["server.pem"]],
        capture_output=True,
        text=True,
    )
    assert wrong.returncode != 0


def checkout_files() -> list[Path]:
    """Every file in the checkout, tracked, untracked and ignored alike (symlinks such as .venv not followed)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    # The compiled rig's crates and build (rig-rust/vendor, target; never committed) hold the crates' own
    # test keys: third-party files, not ones this project wrote.
    listed = [name for name in listed if not name.startswith(("rig-rust/vendor/", "rig-rust/target/"))]
    return [ROOT / name for name in listed if (ROOT / name).is_file() and not (ROOT / name).is_symlink()]


def test_no_private_key_is_written_under_the_repository(tmp_path: Path) -> None:
    """Generating puts keys only where asked (the control volume in a run), never in the checkout."""
    marker = b"PRIVATE " + b"KEY-----"  # split, so this file does not match itself
    before = set(checkout_files())
    written = tlscerts.generate(tmp_path / "tls")
    assert marker in written["server.key"].read_bytes()
    files = checkout_files()
    assert set(files) == before
    assert [path for path in files if marker in path.read_bytes()] == []


def test_a_missing_openssl_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(tlscerts.CertError, match="install Debian's openssl package"):
        tlscerts.generate(tmp_path / "tls")


# --- the compiled sender's TLS over loopback (rig-rust/src/send/tls.rs) -------------------------------------


def test_tls_ca_is_the_one_from_the_watcher_unless_overridden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(sender.TLS_CA_ENV, raising=False)
    assert sender.tls_ca() == sender.WORK_DIR / "ca.pem"
    monkeypatch.setenv(sender.TLS_CA_ENV, "/elsewhere/ca.pem")
    assert sender.tls_ca() == Path("/elsewhere/ca.pem")


def start(server: Server, ca: Path, name: str = "central") -> tuple[RigProcess, ConnectedRecord]:
    sock = connect(server)
    try:
        return sender.start_rig(sock, "tls", ca, name)
    finally:
        sock.close()  # the rig has its own copy


def close(rig: RigProcess, drain_s: float = 30.0) -> ClosedRecord:
    rig.ask(CloseRequest(drain_s))
    closed = rig.answer(ClosedRecord, drain_s * 2 + 10)
    rig.close()
    return closed


def test_handshake_verifies_and_reports_what_was_negotiated(certs: dict[str, Path], server: Server) -> None:
    rig, connected = start(server, certs["ca.pem"])
    assert connected.tls_version in ("TLSv1.2", "TLSv1.3")
    assert isinstance(connected.tls_cipher, str) and connected.tls_cipher
    assert close(rig).left_bytes == 0


def test_a_server_from_another_ca_is_refused(other_ca: Path, server: Server) -> None:
    with pytest.raises(
        RigError, match="does not verify against .*/ca.pem for the name .central.: BadSignature"
    ):
        start(server, other_ca)


def test_a_certificate_for_another_name_is_refused(certs: dict[str, Path], server: Server) -> None:
    with pytest.raises(
        RigError,
        match="does not verify against .* for the name .elsewhere.: NotValidForName",
    ):
        start(server, certs["ca.pem"], "elsewhere")


def test_a_missing_ca_says_where_it_was_looked_for(tmp_path: Path, server: Server) -> None:
    with pytest.raises(RigError, match=f"no CA certificate at {tmp_path}/ca.pem"):
        start(server, tmp_path / "ca.pem")


def test_a_server_that_is_not_tls_fails_the_handshake_without_hanging(certs: dict[str, Path]) -> None:
    listener = socket.create_server(("127.0.0.1", 0))

    def plain() -> None:
        conn, _ = listener.accept()
        conn.recv(4096)
        conn.sendall(b"this is not TLS\n" * 10)
        conn.close()

    thread = threading.Thread(target=plain, daemon=True)
    thread.start()
    sock = socket.create_connection(listener.getsockname(), timeout=5)
    with pytest.raises(RigError, match="TLS handshake with central failed"):
        sender.start_rig(sock, "tls", certs["ca.pem"], "central")
    sock.close()
    thread.join(timeout=5)
    listener.close()


def rendered(tmp_path: Path, name: str, lines: list[bytes]) -> tuple[Path, Path, array]:
    """The rendered file and its offsets, as a sender writes them for the compiled sender."""
    path = tmp_path / f"{name}.msgs"
    ends_file = write_rendered(path, iter(lines), indexed=True)
    assert ends_file is not None
    return path, ends_file, array("Q", itertools.accumulate(len(line) for line in lines))


def test_every_byte_arrives_though_the_server_reads_late(certs: dict[str, Path], tmp_path: Path) -> None:
    """The tail-loss fix over TLS: close_notify, SHUT_WR, empty send queue, then wait for the server to close."""
    lines = [b"<13>syslogbench q=%08d tail test\n" % n for n in range(100_000)]  # ~3.6 MB
    path = tmp_path / "burst.msgs"
    assert write_rendered(path, iter(lines), indexed=False) is None
    for server in serve(certs, read_delay=0.5):
        rig, _ = start(server, certs["ca.pem"])
        rig.ask(SendRequest(str(path), None, len(lines), 0.0, time.time(), None, 0.005))
        sent = rig.answer(SendRecord, 30)
        assert (sent.sent, sent.bytes, sent.status) == (len(lines), path.stat().st_size, "ok")
        closed = close(rig)
        assert (closed.left_bytes, closed.peer_closed) == (0, True)
        assert server.done.wait(10)
        assert server.error == []
        assert bytes(server.received) == path.read_bytes()


def test_capacity_tls_sends_whole_records_and_keeps_the_stream_whole(
    certs: dict[str, Path], tmp_path: Path
) -> None:
    """A trial's give-up time stops the sends with a record half out: that record's messages count unsent,
    and its rest goes first in the next trial, so the daemon still reads one valid TLS stream of whole lines."""
    first = [b"<13>syslogbench t=1 q=%08d capacity\n" % n for n in range(200_000)]  # ~8 MB: over the buffers
    second = [b"<13>syslogbench t=2 q=%08d capacity\n" % n for n in range(1_000)]
    first_path, first_ends_file, first_ends = rendered(tmp_path, "first", first)
    second_path, second_ends_file, _ = rendered(tmp_path, "second", second)
    for server in serve(certs, read_delay=2.0):
        rig, _ = start(server, certs["ca.pem"])
        now = time.time()
        rig.ask(SendRequest(str(first_path), str(first_ends_file), len(first), 0.0, now, now + 0.5, 0.005))
        handed = rig.answer(SendRecord, 30).sent
        assert 0 < handed < len(first)  # the server reads nothing yet: the give-up time stopped it
        now = time.time()
        rig.ask(SendRequest(str(second_path), str(second_ends_file), len(second), 0.0, now, now + 30, 0.005))
        assert rig.answer(SendRecord, 60).sent == len(second)
        close(rig)
        assert server.done.wait(10) and server.error == []
        got = bytes(server.received)
        tail = b"".join(second)
        assert got.endswith(tail)
        cut = len(got) - len(tail)  # the first trial's bytes that reached the server
        whole = b"".join(first)
        assert got[:cut] == whole[:cut] and whole[:cut].endswith(b"\n")  # whole lines only
        assert first_ends[handed - 1] < cut <= first_ends[handed - 1] + RECORD_BYTES + 100


def test_waiting_for_the_server_to_close_is_bounded(certs: dict[str, Path], tmp_path: Path) -> None:
    path = tmp_path / "one.msgs"
    write_rendered(path, iter([b"one line\n"]), indexed=False)
    for server in serve(certs, close=False):
        rig, _ = start(server, certs["ca.pem"])
        rig.ask(SendRequest(str(path), None, 1, 0.0, time.time(), None, 0.005))
        assert rig.answer(SendRecord, 10).sent == 1
        started = time.monotonic()
        closed = close(rig, drain_s=0.5)
        assert (closed.left_bytes, closed.peer_closed) == (0, False)
        took = time.monotonic() - started  # drain 0.5 s; generous for a busy machine, far below the 11 s wait
        assert took < 5.0, f"closing waited {took:.2f} s for a server that never closes"


# --- the watcher's part ---------------------------------------------------------------------------------------


def watcher_settings(scenario: str) -> Settings:
    return from_env(env(small=True, SCENARIO=scenario, SENDERS_PER_HOST=2))


def test_the_watcher_makes_certificates_only_for_a_tls_scenario(control_dir: Path) -> None:
    assert watcher.prepare_tls(watcher_settings("seed2014")) is None
    assert not (control_dir / "tls").exists()
    assert watcher.prepare_tls(watcher_settings("tls-rfc5424")) is None
    assert sorted(path.name for path in (control_dir / "tls").iterdir()) == sorted(tlscerts.FILES)
    context = ssl.create_default_context(cafile=control_dir / "tls" / "ca.pem")
    assert context.verify_mode == ssl.CERT_REQUIRED


def test_the_watcher_reports_a_certificate_failure(
    control_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(control_dir))  # no openssl to be found
    problem = watcher.prepare_tls(watcher_settings("tls"))
    assert (
        problem
        == "cannot make the TLS certificates: the openssl command is missing: install Debian's openssl package"
    )


def test_the_tls_note_counts_what_the_senders_negotiated() -> None:
    tls13 = Tls(version="TLSv1.3", cipher="TLS_AES_256_GCM_SHA384", peer_closed=True)
    ledgers = {
        "host1-s1": Ledger("host1-s1", "ok", tls=tls13),
        "host1-s2": Ledger("host1-s2", "ok", tls=tls13),
        "host1-s3": Ledger("host1-s3", "failed: x"),
    }
    assert (
        accounting.tls_note(ledgers)
        == "TLS (sender side): TLSv1.3 TLS_AES_256_GCM_SHA384 on 2 of 3 connections"
    )
    assert accounting.tls_note({"host1-s1": Ledger("host1-s1", "ok")}) is None


def test_the_result_carries_tls_only_for_senders_that_negotiated_it() -> None:
    tls = Tls(version="TLSv1.2", cipher="ECDHE-ECDSA-AES256-GCM-SHA384", peer_closed=True)
    counts = SenderCounts(expected=2, received=0, unexpected=0, duplicated=0, truncated=0, done_seen=False)
    ledger = Ledger(id="host1-s1", status="ok", messages=2, bytes=10)
    with_tls = reconcile.sender_count(SenderId(1, 1), replace(ledger, tls=tls), counts, 2)
    without = reconcile.sender_count(SenderId(1, 2), ledger, counts, 2)
    senders = [plain(sender) for sender in (with_tls, without)]  # as the result's senders are written
    assert senders[0]["tls"] == {
        "version": "TLSv1.2",
        "cipher": "ECDHE-ECDSA-AES256-GCM-SHA384",
        "peer_closed": True,
    }
    assert "tls" not in senders[1]
