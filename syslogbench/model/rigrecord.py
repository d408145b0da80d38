"""The records that cross between Python and the compiled rig (rig-rust/, `syslogbench-rig`).

Each is defined twice, here and in rig-rust/src/reconcile.rs, field for field; both sides refuse a record with
an unknown key or a missing one (serde's deny_unknown_fields there, `read` here), and a contract test
(tests/unit/test_rigrecord.py) passes each through both. Stdlib only: the watcher imports it.

The reconcile role: Python writes a `Request` (what needs the model: the senders, the whole tails of their
messages, the filter masks, the proof pattern), the rig reads the output files and answers `Reconciled`.
"""

from __future__ import annotations

import types
import typing
from dataclasses import asdict, dataclass, fields, is_dataclass
from typing import Any, TypeVar

T = TypeVar("T")


class RecordError(ValueError):
    """A document that is not the record it should be; the message names the key."""


@dataclass(frozen=True)
class TailTable:
    """Every tail ("f=F v=V " and the padding) that ends an ordinary message whole, for senders whose host and
    sender numbers have these lengths -> the lengths of q with which it does."""

    host_digits: int
    sender_digits: int
    whole: dict[str, list[int]]


@dataclass(frozen=True)
class Proof:
    """A byte regex (no Unicode classes) that every message line of a plain file must match; `same`: two
    groups that must be equal (what a backreference said in the Python pattern)."""

    source: str
    same: list[int] | None


@dataclass(frozen=True)
class Request:
    mode: str  # "split" (our own configs) or "fanout" (a user's config: every file under log_dir)
    log_dir: str
    senders: list[list[int]]  # [host, sender], in the order of Reconciled.senders
    per_sender: int  # sequence numbers 1..per_sender, the DONE last
    tails: list[TailTable]
    masks: str | None  # a file of per_sender + 1 bytes per sender: 1 where the number must arrive
    proof: Proof | None
    forget: bool  # drop each read from the page cache
    block_bytes: int  # the read size (0: the rig's, 4 MiB)
    arrived_out: str | None  # fanout: where the arrival table of each sender with a loss is written


@dataclass(frozen=True)
class SenderCounts:
    expected: int
    received: int
    unexpected: int
    duplicated: int
    truncated: int
    done_seen: bool


@dataclass(frozen=True)
class FileCounts:
    file: str
    lines: int
    messages: int
    duplicated: int
    truncated: int
    facilities: list[int]
    severities: list[int]


@dataclass(frozen=True)
class Reconciled:
    senders: list[SenderCounts]
    misfiled: int
    unknown: int
    split_files: int
    output_bytes: int
    done_log_lines: int
    done_log_extra: int
    unprocessed: int
    files: list[FileCounts]  # fanout only
    fanout: dict[str, int]  # fanout only: number of files -> messages in that many
    cpu_s: float  # the rig's own CPU seconds and peak memory for this reconciliation
    peak_rss_bytes: int


def write(record: object) -> dict[str, Any]:
    """The record as JSON-ready data."""
    return asdict(record)  # type: ignore[call-overload]


def read(kind: type[T], data: object, where: str = "record") -> T:
    """A record from JSON data: every field there, no other key, each value of its field's type."""
    if not isinstance(data, dict):
        raise RecordError(f"{where}: expected an object, got {data!r}")
    known = {f.name for f in fields(kind)}  # type: ignore[arg-type]
    if unknown := sorted(set(data) - known):
        raise RecordError(f"{where}: unknown key {unknown[0]!r}")
    if missing := [name for name in known if name not in data]:
        raise RecordError(f"{where}: missing key {missing[0]!r}")
    hints = typing.get_type_hints(kind)
    return kind(**{name: _value(hints[name], data[name], f"{where}.{name}") for name in known})


def _value(hint: object, value: object, where: str) -> object:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is types.UnionType:  # X | None
        if value is None:
            return None
        (hint,) = [arg for arg in args if arg is not type(None)]
        origin, args = typing.get_origin(hint), typing.get_args(hint)
    if isinstance(hint, type) and is_dataclass(hint):
        return read(hint, value, where)
    if origin is list:
        if not isinstance(value, list):
            raise RecordError(f"{where}: expected a list, got {value!r}")
        return [_value(args[0], item, f"{where}.{i}") for i, item in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise RecordError(f"{where}: expected an object, got {value!r}")
        return {key: _value(args[1], item, f"{where}.{key}") for key, item in value.items()}
    wanted = {int: (int,), float: (int, float), bool: (bool,), str: (str,)}[hint]  # type: ignore[index]
    if not isinstance(value, wanted) or (hint is not bool and isinstance(value, bool)):
        raise RecordError(f"{where}: expected {hint.__name__}, got {value!r}")  # type: ignore[union-attr]
    return float(value) if hint is float else value  # type: ignore[arg-type]
