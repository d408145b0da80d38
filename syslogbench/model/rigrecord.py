"""The records that cross between the Python rig and the compiled one (rig-rust/): requests on its stdin, and
records on its stdout, one JSON object per line. Each is defined here and in its role's Rust module
(rig-rust/src/send.rs, follow.rs); both sides refuse a key the other does not know, and a contract test
passes every record through both (tests/unit/test_rigrecord.py). Stdlib only: runs in every image.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeVar

from syslogbench.model.result import ResultError, load, plain

T = TypeVar("T")


class RecordError(ValueError):
    """A line from the compiled rig that is not the record expected: the message says which key."""


# -- send ---------------------------------------------------------------------------------------------------


@dataclass
class SendRequest:
    """Send the rendered file's messages: paced at `rate` msg/s from `start` (0: all due at once)."""

    file: str
    ends: str | None  # each message's end offset (little-endian u64s); None: a burst of the whole file
    count: int
    rate: float
    start: float  # epoch seconds
    give_up: float | None  # epoch seconds; what is left after it is unsent
    tick_s: float


@dataclass
class CloseRequest:
    drain_timeout_s: float


@dataclass
class SendRecord:
    """A sender's ledger for one request. Its lag is looked at every batch: behind_max_s is the largest,
    behind_end_s the last; oversleep_max_s the longest a sleep ran past its wake time."""

    op: str
    intended: int
    sent: int
    bytes: int
    pace_s: float
    cpu_s: float
    batches: int
    behind_max_s: float
    behind_end_s: float
    oversleep_max_s: float
    last_at: float
    status: str


@dataclass
class ClosedRecord:
    op: str
    left_bytes: int  # unacknowledged when the drain gave up
    drain_s: float
    cpu_s: float  # the sender process's CPU over its whole life
    peer_closed: bool | None  # TLS: the daemon answered our close_notify


@dataclass
class ConnectedRecord:
    op: str
    transport: str
    tls_version: str | None
    tls_cipher: str | None


@dataclass
class FailedRecord:
    op: str
    error: str


# -- follow -------------------------------------------------------------------------------------------------


@dataclass
class TrialRequest:
    trial: int
    rate: float  # msg/s of each sender
    messages: int  # of each sender
    start: float
    bound_s: float
    give_up: float
    ledger_wait_s: float
    senders: list[str]
    copies: bool


@dataclass
class ExpectRequest:
    sent: dict[str, int]


@dataclass
class DrainRequest:
    quiet_s: float
    max_s: float


@dataclass
class SenderTally:
    id: str
    received: int
    late: int
    duplicated: int
    copies: int


@dataclass
class LatencyMs:
    p50: float | None
    p90: float | None
    p99: float | None
    p999: float | None
    max: float | None


@dataclass
class TallyRecord:
    """One trial's arrivals. look_gap_*: the longest a line could wait between being written and being read
    (the latency's resolution), the largest over the trial and its 99th percentile over the passes."""

    op: str
    trial: int
    senders: list[SenderTally]
    stale: int
    early: int  # seen before their intended time (clocks apart): counted, and recorded at 1 us
    histogram_us: dict[str, int]
    latency_ms: LatencyMs
    looks: int
    look_gap_max_s: float
    look_gap_p99_s: float
    cpu_s: float
    ended: str


@dataclass
class DrainedRecord:
    op: str
    stale: int
    waited_s: float
    cpu_s: float


@dataclass
class ForgotRecord:
    op: str
    files: int


@dataclass
class Following:
    op: str


REQUESTS: dict[type, str] = {
    SendRequest: "send",
    CloseRequest: "close",
    TrialRequest: "trial",
    ExpectRequest: "expect",
    DrainRequest: "drain",
}
RECORDS = {
    "sent": SendRecord,
    "closed": ClosedRecord,
    "connected": ConnectedRecord,
    "failed": FailedRecord,
    "tally": TallyRecord,
    "drained": DrainedRecord,
    "forgot": ForgotRecord,
    "following": Following,
}


def request_line(request: object, op: str | None = None) -> str:
    """A request as the compiled rig reads it: its fields and the op that names it."""
    body: dict[str, Any] = {"op": op or REQUESTS[type(request)]}
    body.update(plain(request) if request is not None else {})  # type: ignore[arg-type]
    return json.dumps(body)


def read(kind: type[T], data: object) -> T:
    try:
        return load(kind, data, kind.__name__)
    except ResultError as error:
        raise RecordError(str(error)) from None


def record_from(data: object, kinds: tuple[type, ...]) -> Any:
    """A record already parsed from JSON (one that travelled over the control channel), of one of kinds."""
    kind = RECORDS.get(data.get("op")) if isinstance(data, dict) else None
    if kind not in kinds:
        raise RecordError(f"expected one of {', '.join(k.__name__ for k in kinds)}, got {str(data)[:200]}")
    return read(kind, data)


def record_of(line: str) -> object:
    """The record a line of the compiled rig's output carries, by its op; refused if any key is unknown."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise RecordError(f"not a JSON record: {line[:200]!r} ({error})") from None
    kind = RECORDS.get(data.get("op")) if isinstance(data, dict) else None
    if kind is None:
        raise RecordError(f"not a record of the rig: {line[:200]!r}")
    return read(kind, data)
