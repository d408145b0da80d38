"""The records that cross between Python and the compiled rig (rig-rust/, `syslogbench-rig`): requests on its
stdin and records on its stdout, one JSON object per line.

Each is defined twice, here and in its role's Rust module (records.rs in rig-rust/src/send/, follow/, reconcile/),
field for field; both sides refuse a record with an unknown key or a missing one (serde's deny_unknown_fields
there, `read` here), and a contract test (tests/unit/test_rigrecord.py) passes each through both. Stdlib only:
every image imports it. What each count means: model/countnames.py.

- send: the open-loop sender, one request per send and a record of what it did (its ledger).
- follow: a capacity trial's follower, a request per trial and its tally.
- reconcile: Python writes a `Request` (what needs the model: the senders, the whole tails of their messages,
  the filter masks, the proof pattern), the rig reads the output files and answers `Reconciled`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from syslogbench.model import codec

T = TypeVar("T")


class RecordError(ValueError):
    """A document that is not the record it should be; the message names the key."""


# -- send ---------------------------------------------------------------------------------------------------


@dataclass
class Templates:
    """A trial's messages, made by the compiled sender as it sends (rig-rust/src/templates.rs): one framed
    message per priority, the trial's message of index 0 (messages.render_line writes them); message i is
    one of them, drawn by the sender's stream from stream_seed, with the nine digits at its index_at set to
    i + 1 (the low digits of capacity.trial_seq)."""

    lines: list[str]
    index_at: list[int]
    stream_seed: int


@dataclass
class SendRequest:
    """Send the rendered file's messages, or a trial's made from templates (file "", ends None): paced at
    `rate` msg/s from `start` (0: all due at once)."""

    file: str
    ends: str | None  # each message's end offset (little-endian u64s); None: a burst of the whole file
    count: int
    rate: float
    start: float  # epoch seconds
    give_up: float | None  # epoch seconds; what is left after it is unsent
    # Paced: the batches go every tick_s on the sender's own grid from start + phase_s, and each message is
    # due at its batch (rig-rust/src/schedule.rs; capacity.phase_s spreads a trial's senders over a tick).
    tick_s: float
    phase_s: float = 0.0
    templates: Templates | None = None


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
    cpu_system_s: float  # of cpu_s, the kernel's: the send path (and here the receiving side's softirq)
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
    tick_s: float  # the senders' grid (SendRequest), which latency counts from
    phases_s: list[float]  # each sender's phase, in the order of senders


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
    """One trial's arrivals. look_gap_*: the longest a line of the latency's sample could wait between being
    written and being read (the latency's resolution), the largest over the trial and its 99th percentile over
    the passes. Above 1,000 lines/s the follower watches one split file in K and polls the others
    (rig-rust/src/follow/sample.rs): poll_gap_max_s is how finely late was told from on time there."""

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
    poll_gap_max_s: float  # files outside the latency's sample: the longest a line waited to be read
    sampled: int  # received messages whose latency is in histogram_us (the sample's files)
    arrived_per_s: list[int]  # messages first seen in each second from the trial's start
    cpu_s: float
    cpu_system_s: float  # of cpu_s, the kernel's: reads and wake-ups
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


# -- reconcile ---------------------------------------------------------------------------------------------


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
    """A record from JSON data: every field there, no other key, each value of its field's type (the
    results' one strict reader, model/codec.py)."""
    try:
        return codec.load(kind, data, where)
    except codec.CodecError as error:
        raise RecordError(str(error)) from None


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
    body.update(write(request) if request is not None else {})
    return json.dumps(body)


def record_from(data: object, kinds: tuple[type, ...]) -> Any:
    """A record already parsed from JSON (one that travelled over the control channel), of one of kinds."""
    kind = RECORDS.get(data.get("op")) if isinstance(data, dict) else None
    if kind not in kinds:
        raise RecordError(f"expected one of {', '.join(k.__name__ for k in kinds)}, got {str(data)[:200]}")
    return read(kind, data, kind.__name__)


def record_of(line: str) -> object:
    """The record a line of the compiled rig's output carries, by its op; refused if any key is unknown."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise RecordError(f"not a JSON record: {line[:200]!r} ({error})") from None
    kind = RECORDS.get(data.get("op")) if isinstance(data, dict) else None
    if kind is None:
        raise RecordError(f"not a record of the rig: {line[:200]!r}")
    return read(kind, data, kind.__name__)
