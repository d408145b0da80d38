"""Reconcile the daemon's output files against the senders' ledgers, by sequence number.

Counts come from the senders' side: a message is lost when its sender's ledger says it was sent and no
output line carries it whole. A line is the message only if everything after its fields is what the sender
sent there: the padding to the scenario's message size, or DONE. A line with a sender's key and anything
else there (cut by a size limit, mangled by a framing error) is counted as truncated, not as received.

Memory does not grow with the output: files are read in blocks of whole lines (`line_blocks`), and each
sender's tally is one byte per sequence number. Stdlib only: runs in the watcher container.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from syslogbench.model import messages
from syslogbench.model.ledger import Ledger
from syslogbench.model.messages import SenderId
from syslogbench.model.preprocess import Expectation
from syslogbench.model.result import Sender

SPLIT_RE = re.compile(r"^test\.[A-Za-z0-9_-]+\.facility\.(\d+)\.severity\.(\d+)\.log$")
# One unsplit file (the baseline receiver; the "one plain file" destination): no filing to check.
PLAIN_RE = re.compile(r"^test\.[A-Za-z0-9_-]+\.all\.log$")
OUTPUT_RE = re.compile(f"{SPLIT_RE.pattern}|{PLAIN_RE.pattern}")
# A message line: its sender ("H s=S", one group, so that one bytes object is the key per line), its
# sequence number, and its tail, the rest of the line ("f=F v=V " and the padding, or DONE), which must be
# what the sender sent. Every output form of every scenario ends the line there: the daemons write the
# message text last, and the JSON and key=value rows rebuild the line as "syslogbench h= s= q= f= v= <x>"
# from the parsed fields.
LINE_RE = re.compile(rb"syslogbench h=(\d+ s=\d+) q=(\d+) ([^\n]*)")
TAIL_RE = re.compile(rb"f=(\d+) v=(\d+) (x+|DONE)")
FIELDS_RE = re.compile(rb"f=\d+ v=\d+ ")
DONE = b"DONE"
# Tails remembered per table, mangled ones included, so that a run whose every line is cut the same way works
# each one out once; the bound keeps memory small whatever arrives. Whole tails are 192 facility/severity
# pairs x a few lengths of q.
TAILS_KEPT = 16_384
DONE_RE = re.compile(rb"syslogbench h=(\d+) s=(\d+) q=(\d+) f=\d+ v=\d+ DONE")
DONE_LOG = "done.log"
# Read size. 4 MiB holds about 40,000 seed lines: large enough that the per-read cost vanishes beside the
# per-line work, small enough that one block's findall list stays a few MiB (tests/perf/reconcile_speed.py).
BLOCK_BYTES = 4 * 2**20
# A longer line is read as its first LONGEST_LINE bytes and CUT: it is no scenario's message (the committed ones
# send 100 or 400 bytes, and daemons cut messages at 8 to 64 KiB by default), and keeping it whole would let
# one missing newline (a framing error) hold the whole file in memory. The mark makes its tail unlike any sender's: a key in it is truncated.
# Not below BLOCK_BYTES: a line that ends within one read is never longer, so whether a line is cut does not
# depend on where the reads fall.
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


class Tails(dict):
    """tail -> the length of q with which it ends an ordinary message whole (0: none), for the senders whose
    host and sender numbers have the lengths given.

    The padding follows from the lengths of the header's and the body's fields alone (messages.padding), so
    whole lines end in a few hundred tails at most, however many lines and senders there are; each tail is
    worked out once. A tail can be whole with several lengths of q only where the message is too short for
    more than one 'x' of padding; it then maps to 0 here, and `lengths` has them all.
    """

    def __init__(self, digits: tuple[int, int], expect: Expectation, widest: int) -> None:
        super().__init__()
        # Numbers of those lengths stand for every sender of them.
        self.host, self.sender = "1" * digits[0], "1" * digits[1]
        self.expect, self.widest = expect, widest
        self.known: dict[bytes, frozenset[int]] = {}

    def __missing__(self, tail: bytes) -> int:
        lengths = self.lengths(tail)
        digits = next(iter(lengths)) if len(lengths) == 1 else 0
        if len(self) < TAILS_KEPT:
            self[tail] = digits
        return digits

    def lengths(self, tail: bytes) -> frozenset[int]:
        """Every length of q with which tail ends an ordinary message of these senders whole."""
        lengths = self.known.get(tail)
        if lengths is None:
            lengths = self.work_out(tail)
            if len(self.known) < TAILS_KEPT:
                self.known[tail] = lengths
        return lengths

    def work_out(self, tail: bytes) -> frozenset[int]:
        match = TAIL_RE.fullmatch(tail)
        if match is None or match.group(3) == DONE:
            return frozenset()
        facility, severity, padding = match.groups()
        return frozenset(
            digits
            for digits in range(1, self.widest + 1)
            # "1" * digits reads as a number of that length in every payload form (JSON's included).
            if padding == self.padding("1" * digits, facility.decode(), severity.decode())
        )

    def padding(self, seq: str, facility: str, severity: str) -> bytes:
        fields = (self.host, self.sender, seq, facility, severity)
        return messages.padding(fields, self.expect.message_bytes, self.expect.format, self.expect.payload)


class Block(NamedTuple):
    """Whole lines: data[start:end], handed to the regexps as (data, start, end) so that no block is copied."""

    data: bytes
    start: int
    end: int

    def lines(self) -> list[bytes]:
        return self.data[self.start : self.end].splitlines()


def line_blocks(path: Path, size: int | None = None, forget: bool = False) -> Iterator[Block]:
    """The file in blocks that end at a newline (the last one at the file's end, newline or not), read size
    bytes at a time (BLOCK_BYTES by default; at most LONGEST_LINE).

    A line split across two reads comes as one small block of its own. forget: drop each read from the page
    cache. A run's output was written by the daemon, and what its cgroup could not keep cached is charged to
    the reader's cgroup when read: without this, reading a 3 GB output would fill the watcher's memory limit
    with cache.
    """
    size = size or BLOCK_BYTES
    rest, skipping, offset = bytearray(), False, 0  # rest: the line begun in earlier reads
    with path.open("rb", buffering=0) as handle:
        while data := handle.read(size):
            if forget:
                os.posix_fadvise(handle.fileno(), offset, len(data), os.POSIX_FADV_DONTNEED)
            offset += len(data)
            start = 0
            if skipping:  # the rest of an overlong line, already read as cut
                start = data.find(b"\n") + 1
                skipping = start == 0
                if skipping:
                    continue
            last = data.rfind(b"\n", start) + 1
            if last == 0:  # no newline in this read: the line goes on
                rest += data[start:]
                if len(rest) > LONGEST_LINE:
                    yield cut(bytes(rest))
                    rest, skipping = bytearray(), True
                continue
            if rest:  # the line begun in earlier reads ends in this one
                first = data.index(b"\n", start) + 1
                yield whole(bytes(rest) + data[start:first])
                rest, start = bytearray(), first
            if last > start:
                yield Block(data, start, last)
            rest += data[last:]
    if rest:
        yield whole(bytes(rest))


def whole(line: bytes) -> Block:
    """One line (or the file's unterminated end), cut if it is overlong."""
    return cut(line) if len(line.rstrip(b"\n")) > LONGEST_LINE else Block(line, 0, len(line))


def cut(line: bytes) -> Block:
    data = line[:LONGEST_LINE] + CUT
    return Block(data, 0, len(data))


def is_done_tail(tail: bytes) -> bool:
    match = TAIL_RE.fullmatch(tail)
    return match is not None and match.group(3) == DONE


def digits_of(sender: SenderId) -> tuple[int, int]:
    return len(str(sender.host)), len(str(sender.sender))


def who(sender: SenderId) -> bytes:
    """A sender as LINE_RE's first group shows it."""
    return b"%d s=%d" % (sender.host, sender.sender)


class Tally:
    """Occurrences of every sequence number of every expected sender in whole lines (0..255, saturating),
    and each sender's lines that arrived cut or mangled."""

    def __init__(self, senders: list[SenderId], per_sender: int, expect: Expectation | None = None) -> None:
        expect = expect or Expectation()
        self.per_sender = per_sender
        widest = messages.seq_width(per_sender)
        shared = {digits: Tails(digits, expect, widest) for digits in set(map(digits_of, senders))}
        self.seen = {who(s): (bytearray(per_sender + 1), shared[digits_of(s)]) for s in senders}
        self.cut = dict.fromkeys(self.seen, 0)
        self.unknown = 0

    def add(self, block: Block) -> tuple[int, int]:
        """Count every message line of block; (lines, those that still show their facility and severity)."""
        found = LINE_RE.findall(*block)
        seen, last = self.seen, self.per_sender
        shown = len(found)
        # One pass over millions of lines, kept to a few operations per line: the common case (an ordinary
        # message, whole) is one dict lookup more than counting the key alone.
        for sender, seq, tail in found:
            mine = seen.get(sender)
            number = int(seq)
            if mine is None or not 1 <= number <= last:
                self.unknown += 1
                shown -= FIELDS_RE.match(tail) is None
                continue
            counts, tails = mine
            if tails[tail] == len(seq) and number < last or self.whole(tails, tail, seq, number):
                if counts[number] < 255:
                    counts[number] += 1
            else:
                self.cut[sender] += 1
                shown -= FIELDS_RE.match(tail) is None
        return len(found), shown

    def whole(self, tails: Tails, tail: bytes, seq: bytes, number: int) -> bool:
        """The rarer whole lines: the DONE, and a tail whole with several lengths of q."""
        if number == self.per_sender:
            return is_done_tail(tail)
        return len(seq) in tails.lengths(tail)

    def counts(self, sender: SenderId) -> bytearray:
        return self.seen[who(sender)][0]

    def truncated(self, sender: SenderId) -> int:
        return self.cut[who(sender)]


def read_split_file(path: Path, facility: int, severity: int, tally: Tally, forget: bool = False) -> int:
    """Count every line into the tally; return how many lines sit in the wrong facility/severity file."""
    # Every correctly filed line carries exactly one " f=F v=V " token (DONE lines end in " DONE"). A line
    # cut before it cannot say where it belongs: it is truncated, not misfiled.
    token = b" f=%d v=%d " % (facility, severity)
    misfiled = 0
    for block in line_blocks(path, forget=forget):
        _, shown = tally.add(block)
        misfiled += shown - block.data.count(token, block.start, block.end)
    return misfiled


def read_plain_file(
    path: Path, tally: Tally, proof: re.Pattern[bytes] | None = None, forget: bool = False
) -> int:
    """Count every line into the tally; return how many message lines lack the proof (0 without one)."""
    unproven = 0
    for block in line_blocks(path, forget=forget):
        lines, _ = tally.add(block)
        # The proofs match within one line (MULTILINE ^, [^\n]*), and a block starts at a line's start.
        unproven += 0 if proof is None else lines - len(proof.findall(*block))
    return unproven


def read_done_log(path: Path) -> tuple[set[tuple[int, int]], int, int]:
    """(senders whose DONE is in done.log, DONE lines, lines that are not a DONE message)."""
    if not path.exists():
        return set(), 0, 0
    done: set[tuple[int, int]] = set()
    lines = extra = 0
    for line in (line for block in line_blocks(path) for line in block.lines()):
        match = DONE_RE.search(line)
        if match is None:
            extra += 1
            continue
        lines += 1
        done.add((int(match.group(1)), int(match.group(2))))
    return done, lines, extra


# bytes.translate tables over a tally: 1 where a number arrived at all.
ARRIVED = bytes([0] + [1] * 255)


def arrivals(counts: bytearray, mask: bytearray | None) -> tuple[int, int, int]:
    """(expected, expected that arrived, not expected that arrived), over sequence numbers 1..len-1.

    In C-speed passes over the tally (translate, count, one big-integer AND): a few ms per million numbers.
    """
    if mask is None:
        expected = len(counts) - 1
        return expected, expected - counts.count(0) + 1, 0  # index 0 is never used
    arrived = counts.translate(ARRIVED)
    both = int.from_bytes(arrived, "little") & int.from_bytes(mask, "little")
    hits = both.to_bytes(len(arrived), "little").count(1)
    return mask.count(1), hits, arrived.count(1) - hits


def copies(counts: bytearray) -> int:
    """The sum of the tally; without summing byte by byte when no number arrived twice (the usual case)."""
    if counts.translate(None, b"\x00\x01"):
        return sum(counts)
    return len(counts) - counts.count(0)


def sender_count(
    sender: SenderId,
    ledger: Ledger | None,
    counts: bytearray,
    done: set,
    mask: bytearray | None = None,
    truncated: int = 0,
) -> Sender:
    """One sender's counts against its ledger. With a filter (pre-processing rows), expected is what it must
    let through, filtered what it must drop, and unexpected the dropped ones that arrived all the same (an
    error); a line with the sender's key that did not arrive whole is truncated, and not received."""
    ledger = ledger or Ledger(id=sender.name, status=NO_LEDGER)
    per_sender = len(counts) - 1
    expected, received, unexpected = arrivals(counts, mask)
    return Sender(
        id=sender.name,
        status=ledger.status,
        sent=ledger.sent,
        received=received,
        # A sender that failed may still have delivered part: judge it against everything it should have sent.
        lost=expected - received,
        duplicated=copies(counts) - received - unexpected,
        done_seen=(sender.host, sender.sender) in done,
        bytes=ledger.bytes or 0,
        send_s=ledger.send_s,
        cpu_s=ledger.cpu_s,
        tls=ledger.tls,
        rate_target=ledger.rate_target,
        rate_achieved=ledger.rate_achieved,
        expected=expected,
        filtered=per_sender - expected,
        unexpected=unexpected,
        truncated=truncated,
    )


def reconcile(
    log_dir: Path,
    ledgers: dict[str, Ledger],
    senders: list[SenderId],
    per_sender: int,
    expect: Expectation | None = None,
    forget: bool = False,
) -> Reconciliation:
    """per_sender counts the DONE message too; ledgers are keyed by SenderId.name.

    expect: what the scenario lets through and what its lines must show (default: everything, nothing).
    forget: drop the output from the page cache as it is read (line_blocks), as the watcher does.
    """
    expect = expect or Expectation()
    tally = Tally(senders, per_sender, expect)
    misfiled = split_files = output_bytes = unprocessed = 0
    for path in sorted(log_dir.iterdir()) if log_dir.exists() else []:
        match = SPLIT_RE.match(path.name)
        if match:
            split_files += 1
            output_bytes += path.stat().st_size
            misfiled += read_split_file(path, int(match.group(1)), int(match.group(2)), tally, forget)
        elif PLAIN_RE.match(path.name):
            output_bytes += path.stat().st_size
            unprocessed += read_plain_file(path, tally, expect.proof(), forget)
    done, done_lines, done_extra = read_done_log(log_dir / DONE_LOG)
    counts = [
        sender_count(
            s, ledgers.get(s.name), tally.counts(s), done, expect.mask(s, per_sender), tally.truncated(s)
        )
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
