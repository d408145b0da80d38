"""One generator container: a "remote host" running SENDERS_PER_HOST parallel senders.

Each sender renders all its messages to a file before the start signal (so rendering CPU stays out of the
measured window), sends them with sendfile as fast as the daemon accepts, waits until the kernel's send
queue is empty, and writes a ledger. Stdlib only: this runs in the generator container.
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import multiprocessing
import os
import resource
import signal
import socket
import ssl
import struct
import sys
import termios
import time
from array import array
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import BinaryIO

from syslogbench import contract
from syslogbench.model import machine, preprocess, scenarios, settings
from syslogbench.model.ledger import OK, Ledger
from syslogbench.model.messages import SenderId, datagram, render_lines, render_to_file
from syslogbench.model.result import GeneratorReport, Tls
from syslogbench.rig import cgroup, channel, control, trials

CENTRAL = os.environ.get("CENTRAL_HOST", contract.CENTRAL_HOST)
PORT = int(os.environ.get("CENTRAL_PORT", contract.CENTRAL_PORT))
READY_TIMEOUT, START_WAIT = contract.READY_TIMEOUT, contract.START_WAIT
# After SIGTERM: the senders have this long to write their ledgers (compose allows 10 s before SIGKILL).
STOP_GRACE_S = 5.0
DRAIN_TIMEOUT = 120.0
DRAIN_LOOK_S = (0.01, 0.25)  # the shortest and the longest wait between two looks at the send queue
WORK_DIR = Path(os.environ.get("WORK_DIR", "/tmp"))
# TLS: the name the server certificate must carry, and where the run's throwaway CA is (the watcher writes it).
TLS_SERVER_NAME = os.environ.get("TLS_SERVER_NAME", contract.CENTRAL_HOST)
TLS_CA_ENV = "TLS_CA"
TLS_CHUNK = 256 * 1024
# The senders' TCP congestion control, the same on every machine. Reno is the one every Linux lets an
# unprivileged process choose (net.ipv4.tcp_allowed_congestion_control); where BBR is the default, as on the
# machines of the November 2026 runs, cubic is not allowed. BBR paces each connection with a timer although
# the daemon's receive window limits them all (ss: rwnd_limited 93 to 94% of the time), and its timers cost
# the generators, on the daemon's cores, about twice the CPU on rsyslog (docs/measurement.md).
TCP_CONGESTION = "reno"
# A paced sender sends what is due, then sleeps at least this long: batches every few ms, no busy loop.
TICK_S = 0.005


def pin_congestion(sock: socket.socket) -> str | None:
    """Set the senders' congestion control (TCP_CONGESTION) where the kernel allows it; the one in force."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, TCP_CONGESTION.encode())
    try:
        name = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
    except OSError:
        return None
    return name.split(b"\0", 1)[0].decode() or None


def congestion_in_force() -> str | None:
    """What pin_congestion gives a sender's socket in this container (for the generator's report)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        return pin_congestion(sock)


def connect(timeout: float) -> socket.socket:
    deadline = time.monotonic() + timeout
    while True:
        try:
            sock = socket.create_connection((CENTRAL, PORT), timeout=10)
            pin_congestion(sock)
            return sock
        except OSError as error:
            if time.monotonic() > deadline:
                raise control.WaitTimeout(f"cannot connect to {CENTRAL}:{PORT}: {error}") from error
            time.sleep(0.2)


def unsent_bytes(sock: socket.socket) -> int:
    """Bytes still in the send queue (sent but not acknowledged, or not yet sent)."""
    raw = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, struct.pack("i", 0))
    return struct.unpack("i", raw)[0]


def drain(sock: socket.socket, timeout: float) -> int:
    """Close our side and wait until the peer has acknowledged every byte; return what is left."""
    sock.shutdown(socket.SHUT_WR)
    deadline = time.monotonic() + timeout
    left, wait = unsent_bytes(sock), DRAIN_LOOK_S[0]
    while left and time.monotonic() < deadline:
        time.sleep(wait)
        before, left = left, unsent_bytes(sock)
        wait = next_look(before, left, wait)
    return left


def next_look(before: int, left: int, wait: float) -> float:
    """The wait before the next look at the send queue: about half the time it takes to empty at the pace it
    went, and twice as long as the last while it does not move. rsyslog serves its connections unevenly
    and left queues standing for tens of seconds, looked at every 10 ms inside the measured window."""
    shortest, longest = DRAIN_LOOK_S
    if left >= before:
        return min(wait * 2, longest)
    pace = (before - left) / wait
    return min(max(left / pace / 2, shortest), longest)


def tls_ca() -> Path:
    """The run's CA, which the watcher sends with its hello (main() keeps it in WORK_DIR)."""
    return Path(os.environ.get(TLS_CA_ENV) or WORK_DIR / "ca.pem")


def tls_context(cafile: Path) -> ssl.SSLContext:
    """Verify the server against the run's CA only (not the system's) and for its host name."""
    if not cafile.exists():
        raise FileNotFoundError(f"no CA certificate at {cafile}: the watcher writes it for a TLS scenario")
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(cafile))
    context.verify_mode = ssl.CERT_REQUIRED
    context.check_hostname = True
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


class TlsClient:
    """TLS over our own TCP socket through memory BIOs.

    The raw socket stays ours, so the tail-loss fix holds unchanged: after the last record we queue TLS
    close_notify ourselves without waiting for the peer's, then drain() shuts the socket for writing and
    waits until the kernel's send queue is empty. An ssl.SSLSocket would block in unwrap() on a daemon
    that never answers close_notify.
    """

    def __init__(self, sock: socket.socket, context: ssl.SSLContext, server_name: str) -> None:
        self.sock = sock
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = context.wrap_bio(self.incoming, self.outgoing, server_hostname=server_name)

    def flush(self) -> None:
        if data := self.outgoing.read():
            self.sock.sendall(data)

    def handshake(self) -> None:
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.flush()
                data = self.sock.recv(65536)
                if not data:
                    raise ConnectionError(
                        "the server closed the connection during the TLS handshake"
                    ) from None
                self.incoming.write(data)
            except ssl.SSLError:
                self.flush()  # our alert, so the daemon logs why
                raise
        self.flush()

    def send_file(self, data: BinaryIO) -> int:
        """Encrypt and send the rendered file in chunks; return the plaintext bytes sent."""
        sent = 0
        while chunk := data.read(TLS_CHUNK):
            self.tls.write(chunk)
            self.flush()
            sent += len(chunk)
        return sent

    def encrypt(self, data: bytes | memoryview) -> bytes:
        """data as TLS records, to be sent in this order (a capacity trial's sends, rig/trials.py)."""
        self.tls.write(data)
        return self.outgoing.read()

    def close_notify(self) -> None:
        """Queue our close_notify and send it; the peer's answer is not awaited here."""
        # SSLWantReadError: close_notify is written, the peer's has not arrived, which is expected.
        with contextlib.suppress(ssl.SSLWantReadError):
            self.tls.unwrap()
        self.flush()

    def describe(self, peer_closed: bool | None = None) -> Tls:
        """What was negotiated, for the ledger; peer_closed: whether the daemon answered our close_notify."""
        cipher = self.tls.cipher()
        return Tls(version=self.tls.version(), cipher=cipher[0] if cipher else None, peer_closed=peer_closed)


def start_tls(sock: socket.socket, cafile: Path, server_name: str = TLS_SERVER_NAME) -> TlsClient:
    client = TlsClient(sock, tls_context(cafile), server_name)
    try:
        client.handshake()
    except ssl.SSLCertVerificationError as error:
        raise RuntimeError(
            f"TLS: the server's certificate does not verify against {cafile} for the name {server_name!r}: "
            f"{error.verify_message}"
        ) from error
    except (ssl.SSLError, OSError) as error:
        raise RuntimeError(
            f"TLS handshake with {server_name} failed: {error or type(error).__name__}"
        ) from error
    return client


def wait_for_close(sock: socket.socket, timeout: float) -> bool:
    """Read (and drop) what the peer still sends until it closes: closing with unread data would send RST."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            if not sock.recv(65536):
                return True
        except OSError:
            return False
    return False


def udp_socket(timeout: float) -> socket.socket:
    """A UDP socket connected to the daemon (so send() needs no address); retried until the name resolves."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            family, kind, proto, _, address = socket.getaddrinfo(CENTRAL, PORT, type=socket.SOCK_DGRAM)[0]
            sock = socket.socket(family, kind, proto)
            sock.connect(address)
            return sock
        except OSError as error:
            if time.monotonic() > deadline:
                raise control.WaitTimeout(f"cannot resolve {CENTRAL} for UDP: {error}") from error
            time.sleep(0.2)


def open_socket(transport: str) -> tuple[socket.socket, Callable[[bytes | memoryview], bytes] | None]:
    """A connection to the daemon for a capacity run's trials (rig/trials.py), kept across them; over TLS,
    with the handshake done, and what encrypts for it."""
    sock = daemon_socket(transport, READY_TIMEOUT)
    return sock, (start_tls(sock, tls_ca()).encrypt if transport == "tls" else None)


def daemon_socket(transport: str, timeout: float) -> socket.socket:
    """A socket to the daemon, once the watcher says it listens (channel: listening)."""
    channel.link().wait_listening(timeout)
    return udp_socket(timeout) if transport == "udp" else connect(timeout)


def due(rate: int, elapsed: float, total: int) -> int:
    """How many messages should be out `elapsed` seconds after the start: the first at 0, then one every 1/rate s.

    rate 0 is all-out: everything is due at once.
    """
    if rate <= 0:
        return total
    # The epsilon keeps a sleep that ends exactly on time (100.1 - 100.0 = 0.0999...) from missing its message.
    return min(total, int(rate * elapsed + 1e-6) + 1)


def paced(
    total: int,
    rate: int,
    send_range: Callable[[int, int], None],
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    tick: float = TICK_S,
) -> int:
    """Send messages [0, total) in batches so that the average rate is `rate` msg/s; return the batch count.

    Each round sends everything due by now (so a late round catches up and the average holds), then sleeps
    until the next message is due, but never less than `tick`, so the CPU stays free between batches.
    """
    t0, sent, batches = clock(), 0, 0
    while sent < total:
        target = due(rate, clock() - t0, total)
        if target > sent:
            send_range(sent, target)
            sent, batches = target, batches + 1
        if sent < total:
            next_due = sent / rate  # message index `sent` is due once rate * t + 1 > sent
            sleep(max(tick, next_due - (clock() - t0)))
    return batches


def render_indexed(
    path: Path, cfg: settings.Settings, sender: SenderId, scenario: scenarios.Scenario
) -> array:
    """Render every message to path, as datagrams for UDP; return each message's end offset in the file."""
    ends = array("Q")
    offset = 0
    chunk: list[bytes] = []
    lines = render_lines(
        cfg.seed,
        sender,
        cfg.messages_per_sender,
        time.time(),
        scenario.message_bytes,
        scenario.format,
        preprocess.payload(scenario.preprocess),
    )
    with path.open("wb") as out:
        for line in lines:
            if scenario.transport == "udp":
                line = datagram(line, scenario.format)
            offset += len(line)
            ends.append(offset)
            chunk.append(line)
            if len(chunk) >= 10_000:
                out.write(b"".join(chunk))
                chunk.clear()
        out.write(b"".join(chunk))
    return ends


def send_udp(sock: socket.socket, path: Path, ends: array, rate: int) -> int:
    """One datagram per message, paced; return the bytes sent. A full send buffer blocks, it never drops."""
    sent = 0
    with path.open("rb") as data, mmap.mmap(data.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        view = memoryview(mapped)

        def send_range(first: int, last: int) -> None:
            nonlocal sent
            start = ends[first - 1] if first else 0
            for index in range(first, last):
                sent += sock.send(view[start : ends[index]])
                start = ends[index]

        try:
            paced(len(ends), rate, send_range)
        finally:
            view.release()
    return sent


def send_tcp_paced(sock: socket.socket, path: Path, ends: array, rate: int) -> int:
    """sendfile on the byte range of each batch of whole messages; return the bytes sent."""
    sent = 0
    with path.open("rb") as data:

        def send_range(first: int, last: int) -> None:
            nonlocal sent
            start = ends[first - 1] if first else 0
            sent += sock.sendfile(data, start, ends[last - 1] - start)

        paced(len(ends), rate, send_range)
    return sent


def send_rated(sender: SenderId, cfg: settings.Settings, scenario: scenarios.Scenario) -> Ledger:
    """UDP (any rate) or TCP at a fixed rate: messages are indexed so they can go out in batches."""
    path = rendered(sender)
    render_cpu0, render_t0 = cpu_seconds(), time.monotonic()
    ends = render_indexed(path, cfg, sender, scenario)
    render_s, render_cpu_s = time.monotonic() - render_t0, cpu_seconds() - render_cpu0
    udp = scenario.transport == "udp"
    sock = daemon_socket(scenario.transport, START_WAIT)
    sock.settimeout(cfg.run_timeout)
    channel.link().ready(sender.name)
    channel.link().wait_start(START_WAIT)
    cpu0, t0 = cpu_seconds(), time.monotonic()
    sent = (send_udp if udp else send_tcp_paced)(sock, path, ends, scenario.rate)
    # The rate is the sender's own: messages over the time to hand the last one to the kernel. The TCP
    # drain after it waits for the peer's last ACK, which a delayed ACK can hold back ~40 ms.
    pace_s = time.monotonic() - t0
    left = 0 if udp else drain(sock, DRAIN_TIMEOUT)
    send_s, cpu_s = time.monotonic() - t0, cpu_seconds() - cpu0
    sock.close()
    total = ends[-1]
    status = OK if sent == total and left == 0 else f"incomplete: {total - sent + left} bytes not delivered"
    return replace(
        ledger(sender, cfg, status, sent, send_s, cpu_s, render_s, render_cpu_s),
        transport=scenario.transport,
        rate_target=scenario.rate,
        rate_achieved=round(len(ends) / pace_s, 1) if pace_s > 0 else None,
        pace_s=round(pace_s, 6),
    )


def ledger(
    sender: SenderId,
    cfg: settings.Settings,
    status: str,
    sent: int,
    send_s: float,
    cpu_s: float,
    render_s: float,
    render_cpu_s: float,
) -> Ledger:
    return Ledger(
        id=sender.name,
        status=status,
        host=sender.host,
        sender=sender.sender,
        messages=cfg.messages_per_sender + 1,
        first_seq=1,
        last_seq=cfg.messages_per_sender + 1,
        done_seq=cfg.messages_per_sender + 1,
        bytes=sent,
        send_s=round(send_s, 6),
        cpu_s=round(cpu_s, 6),
        render_s=round(render_s, 6),
        render_cpu_s=round(render_cpu_s, 6),
        finished_at=time.time(),
    )


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def send_all(sender: SenderId, cfg: settings.Settings) -> Ledger:
    scenario = scenarios.load(cfg.scenario)
    if scenario.transport == "udp" or scenario.rate:
        return send_rated(sender, cfg, scenario)
    path = rendered(sender)
    render_cpu0, render_t0 = cpu_seconds(), time.monotonic()
    total = render_to_file(
        path,
        cfg.seed,
        sender,
        cfg.messages_per_sender,
        time.time(),
        scenario.message_bytes,
        scenario.format,
        preprocess.payload(scenario.preprocess),  # JSON or key=value for the parsing rows
    )
    render_s, render_cpu_s = time.monotonic() - render_t0, cpu_seconds() - render_cpu0
    sock = daemon_socket(scenario.transport, START_WAIT)
    tls = start_tls(sock, tls_ca()) if scenario.transport == "tls" else None
    # Blocking sends: a daemon slower than us is the thing measured. The watcher's RUN_TIMEOUT bounds the run.
    sock.settimeout(cfg.run_timeout)
    channel.link().ready(sender.name)
    channel.link().wait_start(START_WAIT)
    cpu0, t0 = cpu_seconds(), time.monotonic()
    with path.open("rb") as data:
        # No sendfile over TLS: the records are made in user space.
        sent = tls.send_file(data) if tls else sock.sendfile(data)
    if tls:
        tls.close_notify()
    left = drain(sock, DRAIN_TIMEOUT)
    send_s, cpu_s = time.monotonic() - t0, cpu_seconds() - cpu0
    peer_closed = wait_for_close(sock, DRAIN_TIMEOUT) if tls else None
    sock.close()
    status = OK if sent == total and left == 0 else f"incomplete: {left} bytes unacknowledged"
    return replace(
        ledger(sender, cfg, status, sent, send_s, cpu_s, render_s, render_cpu_s),
        transport=scenario.transport,
        rate_target=0,
        rate_achieved=round((cfg.messages_per_sender + 1) / send_s, 1) if send_s > 0 else None,
        tls=tls.describe(peer_closed) if tls else None,
    )


def rendered(sender: SenderId) -> Path:
    """The sender's messages, rendered before the start signal; its generator removes it after the run."""
    return WORK_DIR / f"{sender.name}.msgs"


def sender_main(sender: SenderId, cfg: settings.Settings) -> None:
    try:
        record = send_all(sender, cfg)
    except Exception as error:  # noqa: BLE001 - any failure must reach the watcher as a verdict
        record = Ledger(id=sender.name, status=f"failed: {error}", host=sender.host, sender=sender.sender)
        print(f"{sender.name}: {error}", file=sys.stderr)
    channel.link().ledger(sender.name, record)


def record_death(sender: SenderId, exitcode: int | None) -> None:
    """A sender killed (e.g. by the memory limit) sends no ledger; send one for it, which the watcher keeps
    only where the sender's own did not arrive."""
    status = f"died: exit code {exitcode}" + (" (killed, memory limit?)" if exitcode == -9 else "")
    channel.link().ledger(sender.name, Ledger(id=sender.name, status=status), only_if_absent=True)


def _minus(end: float | None, start: float | None, digits: int = 3) -> float | None:
    return None if end is None or start is None else round(end - start, digits)


def stop(workers: list[multiprocessing.Process]) -> None:
    """SIGTERM (compose stopping the run): the senders see the daemon go within a moment and write their
    ledgers, which the watcher needs to count what they sent; give them STOP_GRACE_S, then exit."""
    deadline = time.monotonic() + STOP_GRACE_S
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
    os._exit(128 + signal.SIGTERM)


def main() -> int:
    control.exit_on_sigterm()
    # The settings and a TLS scenario's CA come from the watcher, with this generator's host number: a
    # generator needs nothing but the watcher's port (docs/DESIGN.md, "The control channel").
    hello = channel.link().hello(READY_TIMEOUT)
    cfg = settings.Settings(**hello["settings"])
    if ca := channel.ca_file(hello["ca"], WORK_DIR):
        os.environ.setdefault(TLS_CA_ENV, str(ca))  # a test may name another CA
    host = int(hello["host"])
    # Compose starts GENERATORS replicas; those beyond the run's hosts are not needed. They idle until the
    # finish signal rather than exit, since any exit under --exit-code-from would end the run.
    if host > cfg.hosts:
        print(f"generator {host}: not needed, the run has {cfg.hosts} hosts", flush=True)
        channel.link().wait_finish(cfg.run_timeout + START_WAIT + READY_TIMEOUT)
        return 0
    if hello.get("capacity"):  # trials against a daemon that stays up (docs/capacity.md)
        return trials.generator_main(host, cfg, open_socket)
    senders = [SenderId(host, number) for number in range(1, cfg.senders_per_host + 1)]
    workers = [multiprocessing.Process(target=sender_main, args=(s, cfg)) for s in senders]
    for worker in workers:
        worker.start()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop(workers))
    try:
        channel.link().wait_start(START_WAIT)
    except control.WaitTimeout:
        for worker in workers:
            worker.join()
        return 1
    user0, system0 = cgroup.own().cpu_seconds()
    run0 = cgroup.own().cpu_total_s()
    for sender, worker in zip(senders, workers, strict=True):
        worker.join()
        record_death(sender, worker.exitcode)
    user1, system1 = cgroup.own().cpu_seconds()
    # The harness's share of the machine (result: harness) runs to the end of the run, like the daemon's CPU.
    channel.link().wait_end(cfg.run_timeout + START_WAIT)
    run1 = cgroup.own().cpu_total_s()
    # The whole container's CPU (kernel TCP work included), not only the senders' own; and the node it ran on,
    # for the result's topology (its services are the watcher's to add).
    report = GeneratorReport(
        host=host,
        tcp_congestion=congestion_in_force(),
        cpu_user_s=_minus(user1, user0),
        cpu_system_s=_minus(system1, system0),
        run_cpu_s=_minus(run1, run0, 6),
        node=machine.node([]),
    )
    channel.link().generator(host, asdict(report))
    # Each sender's rendered file goes only now: freeing its pages cost about 1 ms of CPU each, in the window.
    for sender in senders:
        rendered(sender).unlink(missing_ok=True)
    # Stay up until the watcher is done: under --abort-on-container-exit an early exit would end the run.
    channel.link().wait_finish(cfg.run_timeout + START_WAIT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
