"""How fast the reconciler reads a run's output: lines per second over 1,000,000 generated lines.

    PYTHONPATH=. .venv/bin/python tests/perf/reconcile_speed.py [DIR]

Writes 5 hosts x 4 senders x 50,000 lines (the DONEs included) as split files, shaped like rsyslog's
(RSYSLOG_FileFormat: its timestamp, the host and tag, then the message), into DIR (a temporary directory by
default), and reconciles them three times; prints the best, in wall time and in CPU time. On a shared
machine the wall time also counts waiting for a core: compare CPU with CPU there. Not part of `make test`: a
figure to compare before and after a change to syslogbench/rig/reconcile.py.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from syslogbench.model import messages
from syslogbench.model.messages import SenderId
from syslogbench.rig import reconcile

SEED = 2014
NOW = 1795168800.0  # 2026-11-22 10:00:00 UTC
SENDERS = [SenderId(host, sender) for host in range(1, 6) for sender in range(1, 5)]
PER_SENDER = 50_000  # the DONE included: 20 x 50,000 = 1,000,000 lines
ROUNDS = 3


def write_output(log_dir: Path) -> int:
    """The lines as a daemon files them; returns how many."""
    files: dict[tuple[int, int], list[bytes]] = defaultdict(list)
    done: list[bytes] = []
    for sender in SENDERS:
        for line in messages.render_lines(SEED, sender, PER_SENDER - 1, NOW):
            match = messages.BODY_RE.search(line)
            assert match is not None
            written = b"2026-11-22T10:00:00.123456+00:00 host%d bench[%d]: %s" % (
                sender.host,
                sender.sender,
                line[match.start() :],
            )
            files[(int(match.group(4)), int(match.group(5)))].append(written)
            if match.group(6):
                done.append(written)
    for (facility, severity), lines in files.items():
        (log_dir / f"test.rsyslog.facility.{facility}.severity.{severity}.log").write_bytes(b"".join(lines))
    (log_dir / "done.log").write_bytes(b"".join(done))
    return sum(len(lines) for lines in files.values())


def ledgers() -> dict[str, dict]:
    return {s.name: {"status": "ok", "messages": PER_SENDER} for s in SENDERS}


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        log_dir = Path(argv[0]) if argv else Path(scratch)
        log_dir.mkdir(parents=True, exist_ok=True)
        lines = write_output(log_dir)
        best = best_cpu = float("inf")
        for _ in range(ROUNDS):
            t0, cpu0 = time.perf_counter(), time.process_time()
            counts = reconcile.reconcile(log_dir, ledgers(), SENDERS, PER_SENDER)
            best = min(best, time.perf_counter() - t0)
            best_cpu = min(best_cpu, time.process_time() - cpu0)
        received = counts.total("received")
        if received != lines or not counts.clean:
            print(f"the generated output did not reconcile clean: {received} of {lines} received")
            return 1
        print(
            f"{lines:,} lines in {best:.3f} s: {lines / best:,.0f} lines/s (best of {ROUNDS}); "
            f"{best_cpu:.3f} CPU s: {lines / best_cpu:,.0f} lines per CPU second"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
