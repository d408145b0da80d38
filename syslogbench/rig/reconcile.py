"""Reconcile the daemon's output files against the senders' ledgers, by sequence number.

Counts come from the senders' side: a message is lost when its sender's ledger says it was sent and no
output line carries its sequence number. Stdlib only: runs in the watcher container.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from syslogbench.model.messages import SenderId
from syslogbench.model.preprocess import Expectation

SPLIT_RE = re.compile(r"^test\.[A-Za-z0-9_-]+\.facility\.(\d+)\.severity\.(\d+)\.log$")
# One unsplit file (the baseline receiver; the "one plain file" destination): no filing to check.
PLAIN_RE = re.compile(r"^test\.[A-Za-z0-9_-]+\.all\.log$")
OUTPUT_RE = re.compile(f"{SPLIT_RE.pattern}|{PLAIN_RE.pattern}")
KEY_RE = re.compile(rb"syslogbench h=(\d+) s=(\d+) q=(\d+) ")
DONE_RE = re.compile(rb"syslogbench h=(\d+) s=(\d+) q=(\d+) f=\d+ v=\d+ DONE")
DONE_LOG = "done.log"


@dataclass
class SenderCount:
    id: str
    status: str
    sent: int
    received: int = 0
    lost: int = 0
    duplicated: int = 0
    done_seen: bool = False
    bytes: int = 0
    send_s: float | None = None
    cpu_s: float | None = None
    tls: dict | None = None  # TLS scenarios: what the sender negotiated
    # msg/s: what the scenario asked of each sender (0 all-out), and messages / send_s as it came out.
    rate_target: int | None = None
    rate_achieved: float | None = None
    # With a filter (pre-processing rows): messages it must let through, those it must drop, and dropped
    # ones that arrived all the same (an error). Without one, expected equals what the sender sends.
    expected: int = 0
    filtered: int = 0
    unexpected: int = 0


@dataclass
class Reconciliation:
    senders: list[SenderCount]
    expected: int
    misfiled: int = 0
    unknown: int = 0
    split_files: int = 0
    output_bytes: int = 0
    done_log_lines: int = 0
    done_log_extra: int = 0
    # Message lines that do not show the scenario's processing (e.g. a host name not rewritten).
    unprocessed: int = 0
    problems: list[str] = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(getattr(sender, name) for sender in self.senders)

    @property
    def clean(self) -> bool:
        """Every message arrived exactly once, in the right file, and done.log holds exactly the DONEs."""
        counts = (
            self.total("lost"),
            self.total("duplicated"),
            self.misfiled,
            self.unknown,
            self.done_log_extra,
            self.total("unexpected"),
            self.unprocessed,
        )
        every_done_once = self.done_log_lines == len(self.senders) and all(s.done_seen for s in self.senders)
        return not any(counts) and every_done_once

    @property
    def clean_but_for_loss(self) -> bool:
        """As clean, except that messages may be missing (UDP): whatever arrived, arrived once and in place.

        Every DONE that arrived is in done.log exactly once; a DONE that was lost is simply absent.
        """
        counts = (self.total("duplicated"), self.misfiled, self.unknown, self.done_log_extra)
        done_seen = sum(1 for s in self.senders if s.done_seen)
        return not any(counts) and self.done_log_lines == done_seen

    def as_senders(self) -> list[dict[str, object]]:
        # "tls" only where a sender negotiated it, so results of the other transports stay as they were.
        return [
            {key: value for key, value in asdict(sender).items() if key != "tls" or value is not None}
            for sender in self.senders
        ]


class Tally:
    """Occurrences of every sequence number of every expected sender (0..255, saturating)."""

    def __init__(self, senders: list[SenderId], per_sender: int) -> None:
        self.per_sender = per_sender
        self.seen = {
            (str(s.host).encode(), str(s.sender).encode()): bytearray(per_sender + 1) for s in senders
        }
        self.unknown = 0

    def add(self, host: bytes, sender: bytes, seq: int) -> None:
        counts = self.seen.get((host, sender))
        if counts is None or not 1 <= seq <= self.per_sender:
            self.unknown += 1
            return
        if counts[seq] < 255:
            counts[seq] += 1

    def counts(self, sender: SenderId) -> bytearray:
        return self.seen[(str(sender.host).encode(), str(sender.sender).encode())]


def tally_lines(data: bytes, tally: Tally) -> int:
    """Count every message line of an output file into the tally; return how many there were."""
    keys = KEY_RE.findall(data)
    for host, sender, seq in keys:
        tally.add(host, sender, int(seq))
    return len(keys)


def read_split_file(path: Path, facility: int, severity: int, tally: Tally) -> int:
    """Count every line into the tally; return how many lines sit in the wrong facility/severity file."""
    data = path.read_bytes()
    lines = tally_lines(data, tally)
    # Every correctly filed line carries exactly one " f=F v=V " token (DONE lines end in " DONE").
    filed = data.count(b" f=%d v=%d " % (facility, severity))
    return lines - filed


def read_plain_file(path: Path, tally: Tally, proof: re.Pattern[bytes] | None = None) -> int:
    """Count every line into the tally; return how many message lines lack the proof (0 without one)."""
    data = path.read_bytes()
    lines = tally_lines(data, tally)
    return 0 if proof is None else lines - len(proof.findall(data))


def read_done_log(path: Path) -> tuple[set[tuple[int, int]], int, int]:
    """(senders whose DONE is in done.log, DONE lines, lines that are not a DONE message)."""
    if not path.exists():
        return set(), 0, 0
    done: set[tuple[int, int]] = set()
    lines = extra = 0
    for line in path.read_bytes().splitlines():
        match = DONE_RE.search(line)
        if match is None:
            extra += 1
            continue
        lines += 1
        done.add((int(match.group(1)), int(match.group(2))))
    return done, lines, extra


def arrivals(counts: bytearray, mask: bytearray | None) -> tuple[int, int, int]:
    """(expected, expected that arrived, not expected that arrived), over sequence numbers 1..len-1."""
    if mask is None:
        expected = len(counts) - 1
        return expected, expected - counts.count(0) + 1, 0  # index 0 is never used
    arrived = bytes(1 if count else 0 for count in counts)
    hits = sum(a & m for a, m in zip(arrived, mask, strict=True))
    return sum(mask), hits, sum(arrived) - hits


def sender_count(
    sender: SenderId, ledger: dict | None, counts: bytearray, done: set, mask: bytearray | None = None
) -> SenderCount:
    if ledger is None:
        result = SenderCount(id=sender.name, status="no ledger: the sender never reported", sent=0)
    else:
        result = SenderCount(
            id=sender.name,
            status=str(ledger.get("status", "unknown")),
            sent=int(ledger.get("messages", 0)) if ledger.get("status") == "ok" else 0,
            bytes=int(ledger.get("bytes", 0)),
            send_s=ledger.get("send_s"),
            cpu_s=ledger.get("cpu_s"),
            tls=ledger.get("tls"),
            rate_target=ledger.get("rate_target"),
            rate_achieved=ledger.get("rate_achieved"),
        )
    per_sender = len(counts) - 1
    result.expected, result.received, result.unexpected = arrivals(counts, mask)
    result.filtered = per_sender - result.expected
    result.duplicated = sum(counts) - result.received - result.unexpected
    # A sender that failed may still have delivered part: judge it against everything it should have sent.
    result.lost = result.expected - result.received
    result.done_seen = (sender.host, sender.sender) in done
    return result


def reconcile(
    log_dir: Path,
    ledgers: dict[str, dict],
    senders: list[SenderId],
    per_sender: int,
    expect: Expectation | None = None,
) -> Reconciliation:
    """per_sender counts the DONE message too; ledgers are keyed by SenderId.name.

    expect: what the scenario lets through and what its lines must show (default: everything, nothing).
    """
    expect = expect or Expectation()
    tally = Tally(senders, per_sender)
    misfiled = split_files = output_bytes = unprocessed = 0
    for path in sorted(log_dir.iterdir()) if log_dir.exists() else []:
        match = SPLIT_RE.match(path.name)
        if match:
            split_files += 1
            output_bytes += path.stat().st_size
            misfiled += read_split_file(path, int(match.group(1)), int(match.group(2)), tally)
        elif PLAIN_RE.match(path.name):
            output_bytes += path.stat().st_size
            unprocessed += read_plain_file(path, tally, expect.proof())
    done, done_lines, done_extra = read_done_log(log_dir / DONE_LOG)
    counts = [
        sender_count(s, ledgers.get(s.name), tally.counts(s), done, expect.mask(s, per_sender))
        for s in senders
    ]
    return Reconciliation(
        senders=counts,
        expected=sum(count.expected for count in counts),
        misfiled=misfiled,
        unknown=tally.unknown,
        split_files=split_files,
        output_bytes=output_bytes,
        done_log_lines=done_lines,
        done_log_extra=done_extra,
        unprocessed=unprocessed,
    )
