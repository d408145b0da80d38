"""One generator container: a "remote host" running SENDERS_PER_HOST parallel senders.

Each sender renders all its messages to a file before the start signal (so rendering CPU stays out of the
measured window) and connects; the compiled sender (rig-rust, `syslogbench-rig send`, on this socket) sends
them as fast as the daemon accepts (or paced), makes the TLS handshake where the scenario has TLS, and waits
until the kernel's send queue is empty; then this process writes the ledger. Stdlib only: this runs in the
generator container.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import resource
import signal
import socket
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

from syslogbench import contract
from syslogbench.model import capacity, machine, preprocess, scenarios, settings
from syslogbench.model.ledger import OK, Ledger
from syslogbench.model.messages import SenderId, datagram, render_lines
from syslogbench.model.result import GeneratorReport, Tls
from syslogbench.model.rigrecord import ClosedRecord, CloseRequest, ConnectedRecord, SendRecord, SendRequest
from syslogbench.rig import cgroup, channel, control, trialsender
from syslogbench.rig.compiled import RigError, RigProcess, write_rendered

CENTRAL = os.environ.get("CENTRAL_HOST", contract.CENTRAL_HOST)
PORT = int(os.environ.get("CENTRAL_PORT", contract.CENTRAL_PORT))
READY_TIMEOUT, START_WAIT = contract.READY_TIMEOUT, contract.START_WAIT
# After SIGTERM: the senders have this long to write their ledgers (compose allows 10 s before SIGKILL).
STOP_GRACE_S = 5.0
DRAIN_TIMEOUT = 120.0  # the compiled sender waits this long for the daemon to acknowledge every byte
WORK_DIR = Path(os.environ.get("WORK_DIR", "/tmp"))
# TLS: the name the server certificate must carry, and where the run's throwaway CA is (the watcher writes it).
TLS_SERVER_NAME = os.environ.get("TLS_SERVER_NAME", contract.CENTRAL_HOST)
TLS_CA_ENV = "TLS_CA"
# The senders' TCP congestion control, the same on every machine. Reno is the one every Linux lets an
# unprivileged process choose (net.ipv4.tcp_allowed_congestion_control); where BBR is the default, as on the
# machines of the November 2026 runs, cubic is not allowed. BBR paces each connection with a timer although
# the daemon's receive window limits them all (ss: rwnd_limited 93 to 94% of the time), and its timers cost
# the generators, on the daemon's cores, about twice the CPU on rsyslog (docs/findings/tcp-congestion-reno.md).
TCP_CONGESTION = "reno"


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


def tls_ca() -> Path:
    """The run's CA, which the watcher sends with its hello (main() keeps it in WORK_DIR)."""
    return Path(os.environ.get(TLS_CA_ENV) or WORK_DIR / "ca.pem")


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


def open_rig(transport: str) -> RigProcess:
    """A capacity run's sender (rig/trialsender.py): its connection to the daemon, kept across the trials, and
    the compiled sender on it (over TLS, with the handshake made)."""
    sock = daemon_socket(transport, READY_TIMEOUT)
    rig, _ = start_rig(sock, transport)
    sock.close()  # the rig holds its own copy of the descriptor
    return rig


def daemon_socket(transport: str, timeout: float) -> socket.socket:
    """A socket to the daemon, once the watcher says it listens (channel: listening)."""
    channel.link().wait_listening(timeout)
    return udp_socket(timeout) if transport == "udp" else connect(timeout)


def start_rig(
    sock: socket.socket, transport: str, ca: Path | None = None, server_name: str = TLS_SERVER_NAME
) -> tuple[RigProcess, ConnectedRecord]:
    """The compiled sender on our socket; over TLS it makes the handshake, verifying the server against the
    run's throwaway CA only (not the system's) and for its host name."""
    args = ["--fd", str(sock.fileno()), "--transport", transport]
    if transport == "tls":
        args += ["--ca", str(ca or tls_ca()), "--server-name", server_name]
    rig = RigProcess("send", args, pass_fds=(sock.fileno(),))
    try:
        return rig, rig.answer(ConnectedRecord, READY_TIMEOUT)
    except RigError:
        rig.close()
        raise


def render(path: Path, cfg: settings.Settings, sender: SenderId, scenario: scenarios.Scenario) -> Path | None:
    """Every message to path (datagrams for UDP); a paced or UDP sender also gets each message's end offset
    (compiled.write_rendered). Returns that file, or None for a burst."""
    lines = render_lines(cfg.seed, sender, cfg.messages_per_sender, time.time(), scenario.message_bytes,
                         scenario.format, preprocess.payload(scenario.preprocess))  # fmt: skip
    if scenario.transport == "udp":
        lines = (datagram(line, scenario.format) for line in lines)
    return write_rendered(path, lines, indexed=scenario.transport == "udp" or bool(scenario.rate))


def send_all(sender: SenderId, cfg: settings.Settings) -> Ledger:
    """Render, connect, wait for the start, send (compiled), drain: the sender's ledger."""
    scenario = scenarios.load(cfg.scenario)
    path = rendered(sender)
    render_cpu0, render_t0 = cpu_seconds(), time.monotonic()
    ends = render(path, cfg, sender, scenario)
    render_s, render_cpu_s = time.monotonic() - render_t0, cpu_seconds() - render_cpu0
    sock = daemon_socket(scenario.transport, START_WAIT)
    rig, connected = start_rig(sock, scenario.transport)
    sock.close()  # the rig holds its own copy of the descriptor
    try:
        channel.link().ready(sender.name)
        channel.link().wait_start(START_WAIT)
        t0 = time.monotonic()
        count = cfg.messages_per_sender + 1
        # Blocking sends: a daemon slower than us is the thing measured. The watcher's RUN_TIMEOUT bounds it.
        rig.ask(SendRequest(str(path), str(ends) if ends else None, count, float(scenario.rate), time.time(),
                            None, capacity.SEND_TICK_S))  # fmt: skip
        sent = rig.answer(SendRecord, cfg.run_timeout)
        rig.ask(CloseRequest(DRAIN_TIMEOUT))
        closed = rig.answer(ClosedRecord, DRAIN_TIMEOUT * 2 + 10)
        send_s = time.monotonic() - t0
    finally:
        rig.close()
    return ledger_of(sender, cfg, scenario, sent, closed, connected, send_s, render_s, render_cpu_s)


def ledger_of(
    sender: SenderId,
    cfg: settings.Settings,
    scenario: scenarios.Scenario,
    sent: SendRecord,
    closed: ClosedRecord,
    connected: ConnectedRecord,
    send_s: float,
    render_s: float,
    render_cpu_s: float,
) -> Ledger:
    ok = sent.sent == sent.intended and closed.left_bytes == 0
    undelivered = f"{sent.intended - sent.sent} messages not sent, {closed.left_bytes} bytes unacknowledged"
    tls = (
        Tls(connected.tls_version, connected.tls_cipher, closed.peer_closed)
        if connected.tls_version
        else None
    )
    # The rate is the sender's own: messages over the time to hand the last one to the kernel. The TCP
    # drain after it waits for the peer's last ACK, which a delayed ACK can hold back ~40 ms.
    pace_s = sent.pace_s if scenario.rate or scenario.transport == "udp" else send_s
    return replace(
        ledger(
            sender,
            cfg,
            OK if ok else f"incomplete: {undelivered}",
            sent.bytes,
            send_s,
            sent.cpu_s,
            render_s,
            render_cpu_s,
        ),  # fmt: skip
        transport=scenario.transport,
        rate_target=scenario.rate,
        rate_achieved=round(sent.intended / pace_s, 1) if pace_s > 0 else None,
        pace_s=round(sent.pace_s, 6) if scenario.rate or scenario.transport == "udp" else None,
        behind_max_s=sent.behind_max_s if scenario.rate else None,
        tls=tls,
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
        return trialsender.generator_main(host, cfg, open_rig)
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
        rendered(sender).with_suffix(".ends").unlink(missing_ok=True)
    # Stay up until the watcher is done: under --abort-on-container-exit an early exit would end the run.
    channel.link().wait_finish(cfg.run_timeout + START_WAIT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
