"""Reconcile the daemon's output files against the senders' ledgers, by sequence number.

Counts come from the senders' side: a message is lost when its sender's ledger says it was sent and no
output line carries it whole. A line is the message only if everything after its fields is what the sender
sent there: the padding to the scenario's message size, or DONE. A line with a sender's key and anything
else there (cut by a size limit, mangled by a framing error) is counted as truncated, not as received.

The compiled rig reads the files (`syslogbench-rig reconcile`, rig-rust/src/reconcile/: blocks of whole
lines, one byte per sequence number per sender, the page cache dropped as it reads). This module gives it what
needs the model, in one request (model/rigrecord.py): the senders, every whole tail of their messages (from
messages.padding), the filter's masks (a file), the proof pattern; and joins its answer with the ledgers into
the result's Sender counts. Stdlib only: runs in the watcher container.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from syslogbench.contract import BLOCK_BYTES
from syslogbench.model import messages, rigrecord
from syslogbench.model.ledger import Ledger
from syslogbench.model.messages import SEVERITIES, SenderId
from syslogbench.model.preprocess import Expectation
from syslogbench.model.result import Sender
from syslogbench.rig import compiled

# A longer line is read as its first LONGEST_LINE bytes and CUT (rig-rust/src/reconcile/blocks.rs): it is no scenario's
# message (the committed ones send 100 or 400 bytes, and daemons cut messages at 8 to 64 KiB by default), and
# keeping it whole would let one missing newline hold the whole file in memory. The mark makes its tail unlike
# any sender's: a key in it is truncated. Not below BLOCK_BYTES, so that no cut depends on where reads fall.
LONGEST_LINE = BLOCK_BYTES
CUT = b" [cut: longer than 4 MiB]\n"
NO_LEDGER = "no ledger: the sender never reported"


@dataclass
class Reconciliation:
    senders: list[Sender]
    expected: int
    misfiled: int = 0
    unknown: int = 0
    split_files: int = 0
    output_bytes: int = 0
    done_log_lines: int = 0
    done_log_extra: int = 0
    # Message lines that do not show the scenario's processing (e.g. a host name not rewritten).
    unprocessed: int = 0
    # What the rig's reconciliation took (its own process): no count, so no part of a comparison.
    rig_cpu_s: float = field(default=0.0, compare=False)
    rig_peak_rss_bytes: int = field(default=0, compare=False)

    def total(self, name: str) -> int:
        return sum(getattr(sender, name) or 0 for sender in self.senders)

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
            self.total("truncated"),
            self.unprocessed,
        )
        every_done_once = self.done_log_lines == len(self.senders) and all(s.done_seen for s in self.senders)
        return not any(counts) and every_done_once


def digits_of(sender: SenderId) -> tuple[int, int]:
    return len(str(sender.host)), len(str(sender.sender))


def tail_tables(senders: list[SenderId], per_sender: int, expect: Expectation) -> list[rigrecord.TailTable]:
    """For each lengths of host and sender number among the senders: every tail that ends their ordinary
    messages whole ("f=F v=V " and the padding), with the lengths of q it does so with.

    The padding follows from the fields' lengths alone (messages.padding), so numbers of those lengths
    ("1" * n, which reads as a number of that length in every payload form, JSON's included) stand for every
    sender and sequence number of them. A tail whole with several lengths of q (a message too short for more
    than one 'x') lists them all.
    """
    widest = messages.seq_width(per_sender)
    tables = []
    for host, sender in sorted(set(map(digits_of, senders))):
        whole: dict[str, list[int]] = {}
        for pri in range(messages.FACILITIES * SEVERITIES):
            facility, severity = (str(n) for n in divmod(pri, SEVERITIES))
            for q in range(1, widest + 1):
                fields = ("1" * host, "1" * sender, "1" * q, facility, severity)
                padding = messages.padding(fields, expect.message_bytes, expect.format, expect.payload)
                whole.setdefault(f"f={facility} v={severity} {padding.decode()}", []).append(q)
        tables.append(rigrecord.TailTable(host, sender, whole))
    return tables


def rig_proof(pattern: re.Pattern[bytes] | None) -> rigrecord.Proof | None:
    """A proof pattern as the rig's byte regex takes it: MULTILINE as (?m); a backreference to group 1, which
    the rig's regex has not, as a group of its own that the rig holds equal to group 1."""
    if pattern is None:
        return None
    if pattern.flags & ~re.MULTILINE:
        raise ValueError(f"proof {pattern.pattern!r}: only MULTILINE is passed to the rig")
    source = pattern.pattern.decode()
    same = None
    if r"\1" in source:
        if not source.split("(", 1)[1].startswith(r"\d+)") or source.count(r"\1") != 1:
            raise ValueError(rf"proof {source!r}: the rig takes one \1, to a first group (\d+)")
        source, same = source.replace(r"\1", r"(\d+)"), [1, pattern.groups + 1]
    return rigrecord.Proof(("(?m)" if pattern.flags & re.MULTILINE else "") + source, same)


def write_masks(path: Path, masks: Iterator[bytearray | None]) -> bool:
    """Each sender's mask in turn into path (per_sender + 1 bytes each); False, and no file, if none has one."""
    first = next(masks, None)
    if first is None:
        return False
    with path.open("wb") as out:
        out.write(first)
        for mask in masks:
            assert mask is not None  # a scenario's filter applies to every sender alike
            out.write(mask)
    return True


def request(
    mode: str,
    log_dir: Path,
    senders: list[SenderId],
    per_sender: int,
    expect: Expectation,
    masks: Path | None,
    forget: bool,
    block_bytes: int = 0,
    arrived_out: Path | None = None,
) -> rigrecord.Request:
    return rigrecord.Request(
        mode=mode,
        log_dir=str(log_dir),
        senders=[[s.host, s.sender] for s in senders],
        per_sender=per_sender,
        tails=tail_tables(senders, per_sender, expect),
        masks=None if masks is None else str(masks),
        proof=rig_proof(expect.proof()) if mode == "split" else None,
        forget=forget,
        block_bytes=block_bytes,
        arrived_out=None if arrived_out is None else str(arrived_out),
    )


def ask(request_: rigrecord.Request) -> rigrecord.Reconciled:
    """The rig's answer (compiled.RigError if it could not give one, rigrecord.RecordError if it is not one)."""
    answer = compiled.call("reconcile", rigrecord.write(request_))
    return rigrecord.read(rigrecord.Reconciled, answer, "syslogbench-rig reconcile")


def sender_count(
    sender: SenderId, ledger: Ledger | None, counts: rigrecord.SenderCounts, per_sender: int
) -> Sender:
    """One sender's counts against its ledger. With a filter (pre-processing rows), expected is what it must
    let through, filtered what it must drop, and unexpected the dropped ones that arrived all the same (an
    error); a line with the sender's key that did not arrive whole is truncated, and not received."""
    ledger = ledger or Ledger(id=sender.name, status=NO_LEDGER)
    return Sender(
        id=sender.name,
        status=ledger.status,
        sent=ledger.sent,
        received=counts.received,
        # A sender that failed may still have delivered part: judge it against everything it should have sent.
        lost=counts.expected - counts.received,
        duplicated=counts.duplicated,
        done_seen=counts.done_seen,
        bytes=ledger.bytes or 0,
        send_s=ledger.send_s,
        cpu_s=ledger.cpu_s,
        tls=ledger.tls,
        rate_target=ledger.rate_target,
        rate_achieved=ledger.rate_achieved,
        expected=counts.expected,
        filtered=per_sender - counts.expected,
        unexpected=counts.unexpected,
        truncated=counts.truncated,
    )


def reconciliation(
    answer: rigrecord.Reconciled, senders: list[Sender], done_log_lines: int | None = None
) -> Reconciliation:
    return Reconciliation(
        senders=senders,
        expected=sum(count.expected or 0 for count in senders),
        misfiled=answer.misfiled,
        unknown=answer.unknown,
        split_files=answer.split_files,
        output_bytes=answer.output_bytes,
        done_log_lines=answer.done_log_lines if done_log_lines is None else done_log_lines,
        done_log_extra=answer.done_log_extra,
        unprocessed=answer.unprocessed,
        rig_cpu_s=answer.cpu_s,
        rig_peak_rss_bytes=answer.peak_rss_bytes,
    )


def reconcile(
    log_dir: Path,
    ledgers: dict[str, Ledger],
    senders: list[SenderId],
    per_sender: int,
    expect: Expectation | None = None,
    forget: bool = False,
    block_bytes: int = 0,
) -> Reconciliation:
    """per_sender counts the DONE message too; ledgers are keyed by SenderId.name.

    expect: what the scenario lets through and what its lines must show (default: everything, nothing).
    forget: drop the output from the page cache as it is read, as the watcher does.
    block_bytes: the rig's read size (0: its own, BLOCK_BYTES); no count depends on it.
    """
    expect = expect or Expectation()
    with tempfile.TemporaryDirectory(prefix="syslogbench-reconcile-") as scratch:
        masks = Path(scratch, "masks")
        has_masks = write_masks(masks, (expect.mask(s, per_sender) for s in senders))
        asked = request(
            "split", log_dir, senders, per_sender, expect, masks if has_masks else None, forget, block_bytes
        )
        answer = ask(asked)
    if len(answer.senders) != len(senders):
        raise rigrecord.RecordError(
            f"syslogbench-rig reconcile: {len(answer.senders)} senders for {len(senders)}"
        )
    counts = [
        sender_count(s, ledgers.get(s.name), count, per_sender)
        for s, count in zip(senders, answer.senders, strict=True)
    ]
    return reconciliation(answer, counts)
