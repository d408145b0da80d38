"""One generator container: a "remote host" running SENDERS_PER_HOST parallel senders.

Each sender renders all its messages to a file before the start signal (so rendering CPU stays out of the
measured window), sends them with sendfile as fast as the daemon accepts, waits until the kernel's send
queue is empty, and writes a ledger. Stdlib only: this runs in the generator container.
"""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import resource
import socket
import struct
import sys
import termios
import time
from pathlib import Path

from syslogbench import cgroup, control, preprocess, scenarios, settings
from syslogbench.messages import SenderId, render_to_file

CENTRAL = os.environ.get("CENTRAL_HOST", "central")
PORT = int(os.environ.get("CENTRAL_PORT", "514"))
READY_TIMEOUT = float(os.environ.get("READY_TIMEOUT", "300"))
DRAIN_TIMEOUT = 120.0
WORK_DIR = Path(os.environ.get("WORK_DIR", "/tmp"))


def connect(timeout: float) -> socket.socket:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return socket.create_connection((CENTRAL, PORT), timeout=10)
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
    left = unsent_bytes(sock)
    while left and time.monotonic() < deadline:
        time.sleep(0.01)
        left = unsent_bytes(sock)
    return left


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def send_all(sender: SenderId, cfg: settings.Settings) -> dict[str, object]:
    scenario = scenarios.load(cfg.scenario)
    path = WORK_DIR / f"{sender.name}.msgs"
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
    sock = connect(READY_TIMEOUT)
    # Blocking sends: a daemon slower than us is the thing measured. The watcher's RUN_TIMEOUT bounds the run.
    sock.settimeout(cfg.run_timeout)
    control.write_atomic(control.CONTROL / "ready" / sender.name, "")
    control.wait_for_start(READY_TIMEOUT)
    cpu0, t0 = cpu_seconds(), time.monotonic()
    with path.open("rb") as data:
        sent = sock.sendfile(data)
    left = drain(sock, DRAIN_TIMEOUT)
    send_s, cpu_s = time.monotonic() - t0, cpu_seconds() - cpu0
    sock.close()
    path.unlink()
    status = "ok" if sent == total and left == 0 else f"incomplete: {left} bytes unacknowledged"
    return {
        "id": sender.name,
        "host": sender.host,
        "sender": sender.sender,
        "status": status,
        "messages": cfg.messages_per_sender + 1,
        "first_seq": 1,
        "last_seq": cfg.messages_per_sender + 1,
        "done_seq": cfg.messages_per_sender + 1,
        "bytes": sent,
        "send_s": round(send_s, 6),
        "cpu_s": round(cpu_s, 6),
        "render_s": round(render_s, 6),
        "render_cpu_s": round(render_cpu_s, 6),
        "finished_at": time.time(),
    }


def ledger_path(sender: SenderId) -> Path:
    return control.CONTROL / "ledgers" / f"{sender.name}.json"


def sender_main(sender: SenderId, cfg: settings.Settings) -> None:
    try:
        ledger = send_all(sender, cfg)
    except Exception as error:  # noqa: BLE001 - any failure must reach the watcher as a verdict
        ledger = {
            "id": sender.name,
            "host": sender.host,
            "sender": sender.sender,
            "status": f"failed: {error}",
        }
        print(f"{sender.name}: {error}", file=sys.stderr)
    control.write_json(ledger_path(sender), ledger)


def record_death(sender: SenderId, exitcode: int | None) -> None:
    """A sender killed (e.g. by the memory limit) writes no ledger; write one for it."""
    if not ledger_path(sender).exists():
        status = f"died: exit code {exitcode}" + (" (killed, memory limit?)" if exitcode == -9 else "")
        control.write_json(ledger_path(sender), {"id": sender.name, "status": status})


def _minus(end: float | None, start: float | None) -> float | None:
    return None if end is None or start is None else round(end - start, 3)


def main() -> int:
    cfg = settings.from_env(os.environ)
    control.wait_for(control.CONTROL / "run.json", READY_TIMEOUT, "the watcher's run.json")
    host = control.claim_index(control.CONTROL / "hosts", cfg.hosts)
    senders = [SenderId(host, number) for number in range(1, cfg.senders_per_host + 1)]
    workers = [multiprocessing.Process(target=sender_main, args=(s, cfg)) for s in senders]
    for worker in workers:
        worker.start()
    try:
        control.wait_for_start(READY_TIMEOUT)
    except control.WaitTimeout:
        for worker in workers:
            worker.join()
        return 1
    user0, system0 = cgroup.own_cpu_seconds()
    for sender, worker in zip(senders, workers, strict=True):
        worker.join()
        record_death(sender, worker.exitcode)
    user1, system1 = cgroup.own_cpu_seconds()
    # The whole container's CPU while sending (kernel TCP work included), not only the senders' own.
    control.write_json(
        control.CONTROL / "generators" / f"host{host}.json",
        {"host": host, "cpu_user_s": _minus(user1, user0), "cpu_system_s": _minus(system1, system0)},
    )
    # Stay up until the watcher is done: under --abort-on-container-exit an early exit would end the run.
    control.wait_for(
        control.CONTROL / "finish", cfg.run_timeout + READY_TIMEOUT, "the finish signal", poll=0.2
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
