"""TLS without a daemon: the run's throwaway certificates, and the sender's TLS over loopback."""

from __future__ import annotations

import io
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
from syslogbench.model.rigrecord import SenderCounts
from syslogbench.model.settings import Settings, from_env
from syslogbench.rig import reconcile, sender, tlscerts, trials
from syslogbench.rig.watcher import run as watcher
from tests.unit.conftest import env

ROOT = Path(__file__).resolve().parents[2]


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
    # The compiled rig's build (rig-rust/target, ignored) holds rustls-pemfile, whose code spells the marker.
    listed = [name for name in listed if not name.startswith("rig-rust/target/")]
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


# --- the sender's TLS context ---------------------------------------------------------------------------------


def test_tls_context_requires_a_certificate_for_the_host_name(certs: dict[str, Path]) -> None:
    context = sender.tls_context(certs["ca.pem"])
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname is True
    assert context.minimum_version >= ssl.TLSVersion.TLSv1_2
    # Only the run's CA: no system CA could vouch for a server.
    assert [dict(entry[0] for entry in ca["subject"]) for ca in context.get_ca_certs()] == [
        {"commonName": "syslogbench throwaway CA"}
    ]


def test_tls_context_without_the_ca_file_says_who_writes_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="the watcher writes it"):
        sender.tls_context(tmp_path / "ca.pem")


def test_tls_ca_is_the_one_from_the_watcher_unless_overridden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(sender.TLS_CA_ENV, raising=False)
    assert sender.tls_ca() == sender.WORK_DIR / "ca.pem"
    monkeypatch.setenv(sender.TLS_CA_ENV, "/elsewhere/ca.pem")
    assert sender.tls_ca() == Path("/elsewhere/ca.pem")


# --- the sender over loopback ---------------------------------------------------------------------------------


def test_handshake_verifies_and_reports_what_was_negotiated(certs: dict[str, Path], server: Server) -> None:
    sock = connect(server)
    client = sender.start_tls(sock, certs["ca.pem"], "central")
    described = client.describe()
    assert described.version in ("TLSv1.2", "TLSv1.3")
    assert isinstance(described.cipher, str) and described.cipher
    client.close_notify()
    sock.close()


def test_a_server_from_another_ca_is_refused(other_ca: Path, server: Server) -> None:
    sock = connect(server)
    with pytest.raises(RuntimeError, match="does not verify against .* for the name 'central'") as caught:
        sender.start_tls(sock, other_ca, "central")
    assert "unable to get local issuer certificate" in str(caught.value)
    sock.close()


def test_a_certificate_for_another_name_is_refused(certs: dict[str, Path], server: Server) -> None:
    sock = connect(server)
    with pytest.raises(RuntimeError, match="for the name 'elsewhere'"):
        sender.start_tls(sock, certs["ca.pem"], "elsewhere")
    sock.close()


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
    with pytest.raises(RuntimeError, match="TLS handshake with central failed"):
        sender.start_tls(sock, certs["ca.pem"], "central")
    sock.close()
    thread.join(timeout=5)
    listener.close()


def test_every_byte_arrives_though_the_server_reads_late(certs: dict[str, Path]) -> None:
    """The tail-loss fix over TLS: close_notify, SHUT_WR, empty send queue, then wait for the server to close."""
    payload = b"".join(b"<13>syslogbench q=%08d tail test\n" % n for n in range(100_000))  # ~3.6 MB
    for server in serve(certs, read_delay=0.5):
        sock = connect(server)
        client = sender.start_tls(sock, certs["ca.pem"], "central")
        sock.settimeout(30)
        assert client.send_file(io.BytesIO(payload)) == len(payload)
        client.close_notify()
        assert sender.drain(sock, 30) == 0
        assert sender.wait_for_close(sock, 30) is True
        sock.close()
        assert server.done.wait(10)
        assert server.error == []
        assert bytes(server.received) == payload


def messages(count: int, tag: bytes) -> tuple[bytes, array]:
    """count lines, and each one's end offset, as a capacity trial renders them."""
    lines = [b"<13>syslogbench %s q=%08d capacity\n" % (tag, n) for n in range(count)]
    ends = array("Q", itertools.accumulate(len(line) for line in lines))
    return b"".join(lines), ends


def test_capacity_tls_sends_whole_records_and_keeps_the_stream_whole(certs: dict[str, Path]) -> None:
    """A trial's give-up time stops the sends with a record half out: that record's messages count unsent,
    and its rest goes first in the next trial, so the daemon still reads one valid TLS stream of whole lines."""
    first, first_ends = messages(200_000, b"t=1")  # ~8 MB: far more than the socket buffers hold
    second, second_ends = messages(1_000, b"t=2")
    for server in serve(certs, read_delay=2.0):
        sock = connect(server)
        sends = trials.TlsSends(sock, sender.start_tls(sock, certs["ca.pem"], "central").encrypt)
        handed = sends.sender(sock, first, first_ends, time.time() + 0.5)(0, len(first_ends))
        assert 0 < handed < len(first_ends)  # the server reads nothing yet: the give-up time stopped it
        assert sends.pending, "the give-up time came inside a record, which is kept for the next trial"
        rest = sends.sender(sock, second, second_ends, time.time() + 30)(0, len(second_ends))
        assert rest == len(second_ends) and not sends.pending
        client_close(sock)
        assert server.done.wait(10) and server.error == []
        got = bytes(server.received)
        assert got.endswith(second)
        cut = len(got) - len(second)  # the first trial's bytes that reached the server
        assert got[:cut] == first[:cut] and first[:cut].endswith(b"\n")  # whole lines only
        assert first_ends[handed - 1] < cut <= first_ends[handed - 1] + trials.RECORD_BYTES + 100


def client_close(sock: socket.socket) -> None:
    sock.shutdown(socket.SHUT_WR)
    sender.wait_for_close(sock, 10)
    sock.close()


def test_waiting_for_the_server_to_close_is_bounded(certs: dict[str, Path]) -> None:
    for server in serve(certs, close=False):
        sock = connect(server)
        client = sender.start_tls(sock, certs["ca.pem"], "central")
        client.send_file(io.BytesIO(b"one line\n"))
        client.close_notify()
        assert sender.drain(sock, 10) == 0
        started = time.monotonic()
        assert sender.wait_for_close(sock, 0.5) is False
        assert time.monotonic() - started < 1.5
        sock.close()


# --- the watcher's part ---------------------------------------------------------------------------------------


def watcher_settings(scenario: str) -> Settings:
    return from_env(env(small=True, SCENARIO=scenario, SENDERS_PER_HOST=2))


def test_the_watcher_makes_certificates_only_for_a_tls_scenario(control_dir: Path) -> None:
    assert watcher.prepare_tls(watcher_settings("seed2014")) is None
    assert not (control_dir / "tls").exists()
    assert watcher.prepare_tls(watcher_settings("tls-rfc5424")) is None
    assert sorted(path.name for path in (control_dir / "tls").iterdir()) == sorted(tlscerts.FILES)
    context = sender.tls_context(control_dir / "tls" / "ca.pem")
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
        watcher.tls_note(ledgers) == "TLS (sender side): TLSv1.3 TLS_AES_256_GCM_SHA384 on 2 of 3 connections"
    )
    assert watcher.tls_note({"host1-s1": Ledger("host1-s1", "ok")}) is None


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
