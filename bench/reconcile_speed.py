"""How fast a run's output is reconciled (the compiled rig, `syslogbench-rig reconcile`, through
syslogbench/rig/reconcile.py as the watcher runs it): lines per second and per CPU second.

    cargo build --release --manifest-path rig-rust/Cargo.toml
    PYTHONPATH=. .venv/bin/python bench/reconcile_speed.py [DIR] [--lines N]

Writes 5 hosts x 4 senders x N/20 lines (the DONEs included; N is 1,000,000 by default) as split files, shaped
like rsyslog's (RSYSLOG_FileFormat: its timestamp, the host and tag, then the message), into DIR (a temporary
directory by default; a DIR that already holds them is reused), and reconciles them three times; prints the
best, in wall time and in the rig's CPU time, and its peak memory. On a shared machine the wall time also
counts waiting for a core: compare CPU with CPU there. It leaves DIR/request.json, the rig's request, so that
the rig alone can be measured too:

    /usr/bin/time -v rig-rust/target/release/syslogbench-rig reconcile < DIR/request.json

Not part of `make test`: a figure to compare before and after a change to the reconciliation.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from syslogbench.model import messages, rigrecord
from syslogbench.model.messages import SenderId
from syslogbench.model.preprocess import Expectation
from syslogbench.rig import compiled, reconcile

SEED = 2014
NOW = 1795168800.0  # 2026-11-22 10:00:00 UTC
SENDERS = [SenderId(host, sender) for host in range(1, 6) for sender in range(1, 5)]
ROUNDS = 3
RIG = Path(__file__).resolve().parents[2] / "rig-rust" / "target" / "release" / "syslogbench-rig"
CHUNK = 10_000


def write_output(log_dir: Path, per_sender: int) -> int:
    """The lines as a daemon files them, written a chunk at a time; returns how many."""
    handles: dict[tuple[int, int], object] = {}
    chunks: dict[tuple[int, int], list[bytes]] = {}
    done: list[bytes] = []
    lines = 0

    def flush(key: tuple[int, int]) -> None:
        if key not in handles:
            handles[key] = (log_dir / f"test.rsyslog.facility.{key[0]}.severity.{key[1]}.log").open("wb")
        handles[key].write(b"".join(chunks[key]))  # type: ignore[attr-defined]
        chunks[key].clear()

    for sender in SENDERS:
        for line in messages.render_lines(SEED, sender, per_sender - 1, NOW):
            match = messages.BODY_RE.search(line)
            assert match is not None
            written = b"2026-11-22T10:00:00.123456+00:00 host%d bench[%d]: %s" % (
                sender.host,
                sender.sender,
                line[match.start() :],
            )
            key = (int(match.group(4)), int(match.group(5)))
            chunks.setdefault(key, []).append(written)
            if len(chunks[key]) >= CHUNK:
                flush(key)
            if match.group(6):
                done.append(written)
            lines += 1
    for key in list(chunks):
        flush(key)
    for handle in handles.values():
        handle.close()  # type: ignore[attr-defined]
    (log_dir / "done.log").write_bytes(b"".join(done))
    return lines


def ledgers(per_sender: int) -> dict:
    from syslogbench.model.ledger import Ledger

    return {s.name: Ledger(id=s.name, status="ok", messages=per_sender) for s in SENDERS}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", type=Path)
    parser.add_argument("--lines", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    os.environ.setdefault(compiled.RIG_ENV, str(RIG))
    per_sender = args.lines // len(SENDERS)
    with tempfile.TemporaryDirectory() as scratch:
        log_dir = args.dir or Path(scratch)
        log_dir.mkdir(parents=True, exist_ok=True)
        lines = len(SENDERS) * per_sender
        if not any(log_dir.glob("test.rsyslog.*.log")):
            began = time.perf_counter()
            assert write_output(log_dir, per_sender) == lines
            print(f"wrote {lines:,} lines in {time.perf_counter() - began:.1f} s")
        request = reconcile.request("split", log_dir, SENDERS, per_sender, Expectation(), None, False)
        (log_dir / "request.json").write_text(json.dumps(rigrecord.write(request)))
        best = best_cpu = float("inf")
        peak = 0
        for _ in range(ROUNDS):
            t0 = time.perf_counter()
            counts = reconcile.reconcile(log_dir, ledgers(per_sender), SENDERS, per_sender)
            best = min(best, time.perf_counter() - t0)
            best_cpu = min(best_cpu, counts.rig_cpu_s)
            peak = max(peak, counts.rig_peak_rss_bytes)
        received = counts.total("received")
        if received != lines or not counts.clean:
            print(f"the generated output did not reconcile clean: {received} of {lines} received")
            return 1
        print(
            f"{lines:,} lines ({counts.output_bytes:,} bytes) in {best:.3f} s: {lines / best:,.0f} lines/s "
            f"(best of {ROUNDS}); the rig's {best_cpu:.3f} CPU s: {lines / best_cpu:,.0f} lines per CPU second; "
            f"its peak RSS {peak / 2**20:.1f} MiB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
