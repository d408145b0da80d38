"""Accounting for a config that is not ours (`run --config`): every message counted by its key, in whatever
file under /var/log it landed.

Per message: lost (in no file, and not declared dropped), duplicated (twice or more in one file), copied (in
several files: Debian's default config writes a mail message to syslog and to mail.log on purpose, so a copy
is no error), truncated (the key is there, the line is not whole), filtered (missing, as EXPECT_DROPPED
declared). Misfiled is not counted: it checks our own split into one file per facility and severity.

One file is tallied at a time (one byte per message, reconcile.Tally); what each file holds is then added into
one count of files per message, as big integers (a C-speed add over the whole tally).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from syslogbench.model import userconfig
from syslogbench.model.ledger import Ledger
from syslogbench.model.messages import SEVERITIES, SenderId, pri_stream
from syslogbench.model.preprocess import Expectation
from syslogbench.model.result import ConfigFile, OutputFile, Sender, UserConfig
from syslogbench.rig.reconcile import (
    ARRIVED,
    DONE_LOG,
    Reconciliation,
    Tally,
    copies,
    line_blocks,
    sender_count,
    who,
)

FIELDS_SEEN_RE = re.compile(rb"syslogbench h=\d+ s=\d+ q=\d+ f=(\d+) v=(\d+) ")
MISFILED_NOTE = (
    "misfiled is not counted for a config of your own: it checks our split into one file per facility and "
    "severity; the per-file table (config.output_files) shows where each facility and severity went"
)


@dataclass
class FanOut:
    files: list[OutputFile] = field(default_factory=list)
    copied: int = 0  # messages found in more than one file
    copies: int = 0  # lines beyond each message's first file
    fanout: dict[str, int] = field(default_factory=dict)  # number of files -> messages in that many
    lost_by_priority: dict[str, int] = field(default_factory=dict)  # "local7.info" -> lost messages


def output_files(log_dir: Path) -> list[Path]:
    """Every regular file under log_dir, but our own done.log when the config left it empty."""
    found = []
    for root, _, names in os.walk(log_dir):
        for name in names:
            path = Path(root, name)
            if path.is_file() and not (path == log_dir / DONE_LOG and path.stat().st_size == 0):
                found.append(path)
    return sorted(found)


def priorities(seed: int, sender: SenderId, per_sender: int) -> bytearray:
    """Each message's PRI (index 1..per_sender, the DONE last), as the sender drew it; index 0 unused."""
    stream = pri_stream(seed, sender)
    return bytearray(1) + bytearray(next(stream) for _ in range(per_sender))


def kept_table(dropped: frozenset[int]) -> bytes:
    """bytes.translate table over PRIs: 1 where the message must arrive."""
    return bytes(0 if pri in dropped else 1 for pri in range(256))


class FileTally:
    """One file's lines, added into the count of files each message landed in."""

    def __init__(self, senders: list[SenderId], per_sender: int, expect: Expectation) -> None:
        self.senders, self.per_sender, self.expect = senders, per_sender, expect
        self.files_with = {who(s): 0 for s in senders}  # big int: byte i counts the files holding message i
        self.duplicated = dict.fromkeys(self.files_with, 0)
        self.truncated = dict.fromkeys(self.files_with, 0)
        self.unknown = 0
        self.output_bytes = 0

    def add(self, path: Path, name: str, forget: bool) -> OutputFile:
        tally = Tally(self.senders, self.per_sender, self.expect)
        lines, seen = 0, set()
        for block in line_blocks(path, forget=forget):
            lines += block.data.count(b"\n", block.start, block.end)
            tally.add(block)
            seen.update(FIELDS_SEEN_RE.findall(block.data, block.start, block.end))
        self.output_bytes += path.stat().st_size
        self.unknown += tally.unknown
        messages = duplicated = truncated = 0
        for sender in self.senders:
            key, counts = who(sender), tally.counts(sender)
            total, distinct = copies(counts), len(counts) - counts.count(0)
            messages += total
            duplicated += total - distinct
            self.duplicated[key] += total - distinct
            truncated += tally.truncated(sender)
            self.truncated[key] += tally.truncated(sender)
            if distinct:  # fewer than 255 files: no byte carries into the next
                self.files_with[key] += int.from_bytes(counts.translate(ARRIVED), "little")
        return OutputFile(
            file=name,
            lines=lines,
            messages=messages,
            duplicated=duplicated,
            truncated=truncated,
            facilities=sorted({userconfig.FACILITY_NAMES[int(f)] for f, _ in seen if int(f) < 24},
                              key=userconfig.FACILITY_NAMES.index),
            severities=sorted({userconfig.SEVERITY_NAMES[int(v)] for _, v in seen if int(v) < SEVERITIES},
                              key=userconfig.SEVERITY_NAMES.index),
        )  # fmt: skip

    def files_of(self, sender: SenderId) -> bytes:
        return self.files_with[who(sender)].to_bytes(self.per_sender + 1, "little")


def account(
    log_dir: Path,
    ledgers: dict[str, Ledger],
    senders: list[SenderId],
    per_sender: int,
    expect: Expectation,
    dropped: frozenset[int],
    forget: bool = False,
) -> tuple[Reconciliation, FanOut]:
    """The run's counts (as for our own configs, misfiled left at 0) and the fan-out over the files."""
    tallies = FileTally(senders, per_sender, expect)
    fan = FanOut()
    for path in output_files(log_dir) if log_dir.exists() else []:
        fan.files.append(tallies.add(path, str(path.relative_to(log_dir)), forget))
    spread: Counter[int] = Counter()
    lost_by: Counter[str] = Counter()
    counts = []
    for sender in senders:
        files = tallies.files_of(sender)
        pris = priorities(expect.seed, sender, per_sender) if dropped or files.count(0) > 1 else None
        mask = bytearray(pris.translate(kept_table(dropped))) if dropped and pris is not None else None
        if mask is not None:
            mask[0] = 0
        arrived = bytearray(files.translate(ARRIVED))
        done = {(sender.host, sender.sender)} if arrived[per_sender] else set()
        count = sender_count(
            sender, ledgers.get(sender.name), arrived, done, mask, tallies.truncated[who(sender)]
        )
        count.duplicated = tallies.duplicated[who(sender)]
        counts.append(count)
        spread.update({n: files.count(n, 1) for n in range(1, max(files) + 1)})
        if count.lost and pris is not None:
            lost_by.update(lost_priorities(arrived, mask, pris))
    fan.fanout = {str(n): spread[n] for n in sorted(spread)}
    fan.copied = sum(m for n, m in spread.items() if n > 1)
    fan.copies = sum((n - 1) * m for n, m in spread.items())
    fan.lost_by_priority = dict(sorted(lost_by.items(), key=lambda item: (-item[1], item[0])))
    return reconciliation(counts, tallies, fan), fan


def lost_priorities(arrived: bytearray, mask: bytearray | None, pris: bytearray) -> Counter[str]:
    lost: Counter[str] = Counter()
    index = arrived.find(0, 1)
    while index != -1:
        if mask is None or mask[index]:
            lost[userconfig.priority_name(pris[index])] += 1
        index = arrived.find(0, index + 1)
    return lost


def reconciliation(counts: list[Sender], tallies: FileTally, fan: FanOut) -> Reconciliation:
    done = sum(1 for count in counts if count.done_seen)
    return Reconciliation(
        senders=counts,
        expected=sum(count.expected for count in counts),
        unknown=tallies.unknown,
        split_files=len(fan.files),
        output_bytes=tallies.output_bytes,
        done_log_lines=done,  # every DONE that arrived, in whichever file
    )


def clean(counts: Reconciliation) -> bool:
    """Every message that should arrive did, whole and once per file it went to (copies are no error)."""
    faults = ("lost", "duplicated", "truncated", "unexpected")
    return counts.unknown == 0 and not any(counts.total(name) for name in faults)


def config_block(user: userconfig.UserRun, directory: Path = userconfig.CONFIG_DIR) -> UserConfig:
    """The result's record of the config, as the watcher sees the user's files (mounted read-only)."""
    try:
        found = userconfig.identity(directory, user.private)
    except OSError as error:  # the run goes on; the result says the config could not be read
        found = {"sha256": f"unreadable: {error.strerror}", "files": [], "text": None}
    return UserConfig(
        sha256=str(found["sha256"]),
        main=user.main,
        files=[ConfigFile(**entry) for entry in found["files"]],  # type: ignore[arg-type]
        text=found["text"],  # type: ignore[arg-type]
        expect_dropped=user.expect_dropped,
    )


def fill(block: UserConfig, fan: FanOut) -> None:
    block.output_files, block.copied, block.copies = fan.files, fan.copied, fan.copies
    block.fanout, block.lost_by_priority = fan.fanout, fan.lost_by_priority
