"""What the compiled rig (rig-rust) costs: the follower's lines per CPU second, and the sender's messages per CPU
second, paced and burst, over TCP, UDP and TLS, on loopback.

    PYTHONPATH=. .venv/bin/python bench/rig_speed.py [--out results/rig/<name>.json]

follow: one trial of 4 senders x LINES/4 messages; a writer appends them (120-byte lines, the seed's shape) in
blocks of 4,000 lines to 192 split files, as a daemon would, and the follower's own CPU over the trial is read
from its record (cpu_s, getrusage of the rig's process).

send: each sender writes N messages of 120 bytes to a receiver on loopback that reads and drops them (a Python
thread, or for UDP a socket with a large buffer); paced at 100,000 msg/s for 10 s, and as a burst; and at
25,000 msg/s (one of four senders) at ticks of 1, 2 and 5 ms. The sender's CPU is its record's cpu_s (getrusage, user + system: the kernel's send path is in it).

--ticks: only four senders as a trial has them (the seed scenario's messages, made from the templates that
rig/trialsender.py renders, each sender on its own grid and its own connection to a dropping reader), at
100,000 and 160,000 msg/s in all, at ticks of 5 and 10 ms, the two ticks taken in turn so that a machine that
slows down between them charges both alike.

Prints one JSON document (and writes it with --out): the figures with the machine's name and core count. Not
part of `make test`: a benchmark whose output goes into docs/findings/rig-cost.md and sender-schedule.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import ssl
import sys
import tempfile
import threading
import time
from pathlib import Path

from syslogbench.host.environment import run_env
from syslogbench.model import capacity, scenarios
from syslogbench.model.messages import SenderId, render_line
from syslogbench.model.rigrecord import (
    ClosedRecord,
    CloseRequest,
    ExpectRequest,
    Following,
    SendRecord,
    SendRequest,
    TallyRecord,
    TrialRequest,
)
from syslogbench.rig import sender, tlscerts, trialsender
from syslogbench.rig.compiled import RigProcess, write_rendered

LINE_BYTES = 120
SENDERS = [SenderId(1, n) for n in range(1, 5)]


def trial_lines(count: int, trial: int = 1) -> dict[SenderId, list[bytes]]:
    width = len(str(capacity.trial_seq(trial, count)))
    return {
        who: [render_line(who, capacity.trial_seq(trial, i), (i * 7) % 192, "Nov 26 12:00:00", width,
                          size=LINE_BYTES) for i in range(count)]
        for who in SENDERS
    }  # fmt: skip


def follow_speed(lines: int) -> dict[str, float]:
    per_sender = lines // len(SENDERS)
    rendered = trial_lines(per_sender)
    with tempfile.TemporaryDirectory(prefix="rig-follow-") as tmp:
        directory = Path(tmp)
        rig = RigProcess("follow", ["--dir", str(directory)])
        rig.answer(Following, 30)
        start = time.time()
        names = [who.name for who in SENDERS]
        rig.ask(TrialRequest(1, 1e9, per_sender, start, 3600.0, start + 3600, 30.0, names, False, 0.0,
                             [0.0] * len(names)))  # fmt: skip
        rig.ask(ExpectRequest({name: per_sender for name in names}))
        files = [
            (directory / f"test.perf.facility.{p // 8}.severity.{p % 8}.log").open("ab") for p in range(192)
        ]
        began = time.monotonic()
        block = 4000
        for first in range(0, per_sender, block // len(SENDERS)):
            for who, mine in rendered.items():
                chunk = mine[first : first + block // len(SENDERS)]
                out = files[(first + who.sender) % len(files)]
                out.write(b"".join(chunk))
                out.flush()
        tally = rig.answer(TallyRecord, 600)
        wall = time.monotonic() - began
        rig.close()
        for out in files:
            out.close()
    received = sum(s.received for s in tally.senders)
    assert received == per_sender * len(SENDERS), tally
    return {
        "lines": received,
        "follower_cpu_s": tally.cpu_s,
        "lines_per_cpu_s": round(received / tally.cpu_s) if tally.cpu_s else None,
        "wall_s": round(wall, 3),
        "look_gap_max_ms": round(tally.look_gap_max_s * 1000, 3),
        "look_gap_p99_ms": round(tally.look_gap_p99_s * 1000, 3),
    }


def follow_paced(rate: int, seconds: float) -> dict[str, float]:
    """The follower behind a daemon that writes each line on its own, to its facility and severity's file of
    192 (as syslog-ng does with the seed's split): `rate` lines a second for `seconds`, in 1 ms steps."""
    per_sender = int(rate * seconds) // len(SENDERS)
    rendered = trial_lines(per_sender)
    order = [(i, who) for i in range(per_sender) for who in SENDERS]
    with tempfile.TemporaryDirectory(prefix="rig-follow-") as tmp:
        directory = Path(tmp)
        rig = RigProcess("follow", ["--dir", str(directory)])
        rig.answer(Following, 30)
        start = time.time() + 0.2
        names = [who.name for who in SENDERS]
        rig.ask(TrialRequest(1, rate / len(SENDERS), per_sender, start, 3600.0, start + 3600, 30.0, names,
                             False, 0.0, [0.0] * len(names)))  # fmt: skip
        rig.ask(ExpectRequest({name: per_sender for name in names}))
        fds = [
            os.open(directory / f"test.perf.facility.{p // 8}.severity.{p % 8}.log",
                    os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            for p in range(192)
        ]  # fmt: skip
        time.sleep(max(0.0, start - time.time()))
        step = max(1, rate // 1000)
        for first in range(0, len(order), step):
            time.sleep(max(0.0, start + first / rate - time.time()))
            for i, who in order[first : first + step]:
                os.write(fds[(i * 7) % 192], rendered[who][i])
        tally = rig.answer(TallyRecord, 600)
        rig.close()
        for fd in fds:
            os.close(fd)
    received = sum(s.received for s in tally.senders)
    assert received == per_sender * len(SENDERS), tally
    return {
        "rate": rate,
        "lines": received,
        "follower_cpu_s": tally.cpu_s,
        "core_share": round(tally.cpu_s / seconds, 4),
        "lines_per_cpu_s": round(received / tally.cpu_s) if tally.cpu_s else None,
        "look_gap_max_ms": round(tally.look_gap_max_s * 1000, 3),
        "look_gap_p99_ms": round(tally.look_gap_p99_s * 1000, 3),
        "poll_gap_max_ms": round(tally.poll_gap_max_s * 1000, 3),
        "latency_share": round(tally.sampled / received, 4),
        "latency_p50_ms": tally.latency_ms.p50,
    }


def drop_reader(listener: socket.socket, tls: ssl.SSLContext | None) -> threading.Thread:
    def read() -> None:
        conn, _ = listener.accept()
        if tls:
            conn = tls.wrap_socket(conn, server_side=True)
        with conn:
            while conn.recv(1 << 20):
                pass

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def send_speed(
    transport: str,
    count: int,
    rate: float,
    certs: dict[str, Path],
    tmp: Path,
    tick: float = capacity.SEND_TICK_S,
) -> dict[str, float]:
    lines = [
        render_line(SenderId(1, 1), i + 1, i % 192, "Nov 26 12:00:00", 8, size=LINE_BYTES)
        for i in range(count)
    ]
    if transport == "udp":
        lines = [line.rstrip(b"\n") for line in lines]
    path = tmp / f"{transport}.msgs"
    ends = write_rendered(path, iter(lines), indexed=True)
    thread = None
    if transport == "udp":
        receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        receiver.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 26)
        receiver.bind(("127.0.0.1", 0))
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.connect(receiver.getsockname())
    else:
        receiver = socket.create_server(("127.0.0.1", 0))
        context = None
        if transport == "tls":
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(certs["server.pem"], certs["server.key"])
        thread = drop_reader(receiver, context)
        sock = socket.create_connection(receiver.getsockname())
    rig, _ = sender.start_rig(sock, transport, certs["ca.pem"], "central")
    sock.close()
    start = time.time() + 0.1
    burst = not rate and transport != "udp"  # a run's burst goes out whole, as in a run (sendfile over TCP)
    rig.ask(SendRequest(str(path), None if burst else str(ends), count, rate, start, None, tick))
    record = rig.answer(SendRecord, 600)
    rig.ask(CloseRequest(30.0))
    rig.answer(ClosedRecord, 90)
    rig.close()
    if thread:
        thread.join(30)
    receiver.close()
    return {
        "messages": record.sent,
        "rate": rate or "burst",
        "sender_cpu_s": record.cpu_s,
        "msgs_per_cpu_s": round(record.sent / record.cpu_s) if record.cpu_s else None,
        "pace_s": record.pace_s,
        "core_share": round(record.cpu_s / record.pace_s, 4) if record.pace_s else None,
        "behind_max_ms": round(record.behind_max_s * 1000, 3),
        "batches": record.batches,
    }


def four_senders(rate: float, tick: float, seconds: float = 10.0) -> dict[str, float]:
    """A trial's four senders on loopback: `rate` msg/s in all, each on its own grid (capacity.phase_s)."""
    records: list[SendRecord | None] = [None] * len(SENDERS)
    cfg, _ = run_env({"SCENARIO": "seed2014"})
    seed = scenarios.load("seed2014")
    start = time.time() + 1.0

    def one(position: int) -> None:
        receiver = socket.create_server(("127.0.0.1", 0))
        reader = drop_reader(receiver, None)
        sock = socket.create_connection(receiver.getsockname())
        rig, _ = sender.start_rig(sock, "tcp", Path("/nonexistent"), "central")
        sock.close()
        count = int(rate / len(SENDERS) * seconds)
        made = trialsender.templates(SENDERS[position], cfg, seed, {"trial": 1, "messages": count})
        phase = capacity.phase_s(position, len(SENDERS), tick)
        rig.ask(SendRequest("", None, count, rate / len(SENDERS), start, None, tick, phase, made))
        records[position] = rig.answer(SendRecord, 600)
        rig.ask(CloseRequest(30.0))
        rig.answer(ClosedRecord, 90)
        rig.close()
        reader.join(30)
        receiver.close()

    threads = [threading.Thread(target=one, args=(k,)) for k in range(len(SENDERS))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done = [r for r in records if r is not None]
    cpu = sum(r.cpu_s for r in done)
    return {
        "rate": rate,
        "tick_ms": tick * 1000,
        "messages": sum(r.sent for r in done),
        "senders_cpu_s": round(cpu, 4),
        "core_share": round(cpu / seconds, 4),
        "behind_max_ms": round(max(r.behind_max_s for r in done) * 1000, 3),
    }


def machine() -> dict[str, object]:
    return {
        "machine": platform.processor() or platform.machine(),
        "cpu_model": next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            "unknown",
        ),  # fmt: skip
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "measured_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--follow-lines", type=int, default=8_000_000)
    parser.add_argument("--ticks", action="store_true", help="only four senders at 5 and 10 ms ticks")
    args = parser.parse_args(argv)
    found = machine()
    if args.ticks:
        found["four senders"] = [
            four_senders(rate, tick)
            for _ in range(2)
            for rate in (100_000.0, 160_000.0)
            for tick in (0.005, 0.010)
        ]
    else:
        found.update(measure_all(args.follow_lines))
    text = json.dumps(found, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


def measure_all(follow_lines: int) -> dict[str, object]:
    found: dict[str, object] = {}
    found["follow"] = follow_speed(follow_lines)
    found["follow, a line a write"] = [follow_paced(rate, 10.0) for rate in (35_000, 100_000)]
    with tempfile.TemporaryDirectory(prefix="rig-send-") as tmp:
        certs = tlscerts.generate(Path(tmp) / "tls")
        sends = {}
        for transport in ("tcp", "udp", "tls"):
            sends[f"{transport} paced 100,000 msg/s"] = send_speed(
                transport, 1_000_000, 100_000.0, certs, Path(tmp)
            )
            sends[f"{transport} burst"] = send_speed(transport, 2_000_000, 0.0, certs, Path(tmp))
        # What the tick costs: one of a trial's four senders at 100,000 msg/s in all.
        for tick in (0.001, 0.002, 0.005):
            sends[f"tcp paced 25,000 msg/s, tick {tick * 1000:g} ms"] = send_speed(
                "tcp", 250_000, 25_000.0, certs, Path(tmp), tick
            )
        found["send"] = sends
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
