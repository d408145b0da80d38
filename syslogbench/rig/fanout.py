"""Accounting for a config that is not ours (`run --config`): every message counted by its key, in whatever
file under /var/log it landed.

Per message: lost (in no file, and not declared dropped), duplicated (twice or more in one file), copied (in
several files: Debian's default config writes a mail message to syslog and to mail.log on purpose, so a copy
is no error), truncated (the key is there, the line is not whole), filtered (missing, as EXPECT_DROPPED
declared). Misfiled is not counted: it checks our own split into one file per facility and severity.

The compiled rig reads the files (`syslogbench-rig reconcile` in its fanout mode, rig-rust/src/reconcile/fanout.rs):
each file tallied on its own, one byte per message, then added into one count of files per message. This
module gives it the masks of what EXPECT_DROPPED lets through, and names the PRIs of what was lost from the
arrival tables it writes for the senders with a loss (the PRIs are the model's: messages.pri_stream).
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from syslogbench.model import rigrecord, userconfig
from syslogbench.model.ledger import Ledger
from syslogbench.model.messages import SenderId, pri_stream
from syslogbench.model.preprocess import Expectation
from syslogbench.model.result import ConfigFile, OutputFile, UserConfig
from syslogbench.rig import reconcile
from syslogbench.rig.reconcile import Reconciliation

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


def priorities(seed: int, sender: SenderId, per_sender: int) -> bytearray:
    """Each message's PRI (index 1..per_sender, the DONE last), as the sender drew it; index 0 unused."""
    stream = pri_stream(seed, sender)
    return bytearray(1) + bytearray(next(stream) for _ in range(per_sender))


def kept_table(dropped: frozenset[int]) -> bytes:
    """bytes.translate table over PRIs: 1 where the message must arrive."""
    return bytes(0 if pri in dropped else 1 for pri in range(256))


def kept_mask(pris: bytearray, dropped: frozenset[int]) -> bytearray:
    """1 at each message that must arrive (index 0 unused)."""
    mask = bytearray(pris.translate(kept_table(dropped)))
    mask[0] = 0
    return mask


def output_file(counts: rigrecord.FileCounts) -> OutputFile:
    return OutputFile(
        file=counts.file,
        lines=counts.lines,
        messages=counts.messages,
        duplicated=counts.duplicated,
        truncated=counts.truncated,
        facilities=[userconfig.FACILITY_NAMES[f] for f in counts.facilities],
        severities=[userconfig.SEVERITY_NAMES[v] for v in counts.severities],
    )


def account(
    log_dir: Path,
    ledgers: dict[str, Ledger],
    senders: list[SenderId],
    per_sender: int,
    expect: Expectation,
    dropped: frozenset[int],
    forget: bool = False,
    block_bytes: int = 0,
) -> tuple[Reconciliation, FanOut]:
    """The run's counts (as for our own configs, misfiled left at 0) and the fan-out over the files."""
    with tempfile.TemporaryDirectory(prefix="syslogbench-fanout-") as scratch:
        masks, arrived_out = Path(scratch, "masks"), Path(scratch, "arrived")
        has_masks = dropped and reconcile.write_masks(
            masks, (kept_mask(priorities(expect.seed, s, per_sender), dropped) for s in senders)
        )
        asked = reconcile.request(
            "fanout", log_dir, senders, per_sender, expect, masks if has_masks else None, forget, block_bytes,
            arrived_out,
        )  # fmt: skip
        answer = reconcile.ask(asked)
        counts = [
            reconcile.sender_count(s, ledgers.get(s.name), count, per_sender)
            for s, count in zip(senders, answer.senders, strict=True)
        ]
        lost_by: Counter[str] = Counter()
        with arrived_out.open("rb") as tables:
            for sender, count in zip(senders, counts, strict=True):
                if count.lost:
                    arrived = tables.read(per_sender + 1)
                    pris = priorities(expect.seed, sender, per_sender)
                    mask = kept_mask(pris, dropped) if dropped else None
                    lost_by.update(lost_priorities(arrived, mask, pris))
    spread = {n: answer.fanout[n] for n in sorted(answer.fanout, key=int)}
    fan = FanOut(files=[output_file(f) for f in answer.files], fanout=spread)
    fan.copied = sum(m for n, m in answer.fanout.items() if int(n) > 1)
    fan.copies = sum((int(n) - 1) * m for n, m in answer.fanout.items())
    fan.lost_by_priority = dict(sorted(lost_by.items(), key=lambda item: (-item[1], item[0])))
    return reconcile.reconciliation(answer, counts), fan


def lost_priorities(arrived: bytes, mask: bytearray | None, pris: bytearray) -> Counter[str]:
    lost: Counter[str] = Counter()
    index = arrived.find(0, 1)
    while index != -1:
        if mask is None or mask[index]:
            lost[userconfig.priority_name(pris[index])] += 1
        index = arrived.find(0, index + 1)
    return lost


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
