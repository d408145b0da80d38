"""Pre-processing (seed 004's rows) and raw receive (seed 003): what arrives, and how a line shows it.

One record (`Kind`) defines each row, so the scenario's validation, the daemon configs (rendered with these
values) and the reconciler agree:
- which sequence numbers of a sender must arrive (a filter lets an exact, known subset through);
- what the senders' payload is (JSON and key=value rows send their fields in that form);
- what every output line must show (a rewritten host name, the raw line as received).

Every DONE message passes every filter, so the run always ends. Stdlib only: runs in the containers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from syslogbench.model.messages import MESSAGE_BYTES, SEVERITIES, SenderId, pri_stream

# The regexp row: messages with an even sequence number, and every DONE. Valid as a POSIX ERE (rsyslog's
# re_match) and as a PCRE (syslog-ng's match()); the message text has " q=<digits> " in every payload form
# that this row uses.
FILTER_REGEXP = " q=[0-9]*[02468] | DONE"
# The facility row: facilities 0..11 (kern .. ftp, half of the 24), and every DONE.
KEPT_FACILITIES = range(0, 12)
# syslog-ng's facility() filter takes names (or one number), not a list of numbers: RFC 5424's 0..11.
FACILITY_NAMES = (
    "kern",
    "user",
    "mail",
    "daemon",
    "auth",
    "syslog",
    "lpr",
    "news",
    "uucp",
    "cron",
    "authpriv",
    "ftp",
)
# The hostname row: hostN becomes relay-hostN.
HOST_PREFIX = "relay-"


def daemon_params() -> dict[str, object]:
    """What the config templates need to render the rows; the reconciler reads the same values."""
    return {
        "filter_regexp": FILTER_REGEXP,
        "kept_facilities": list(KEPT_FACILITIES),
        "facility_names": [FACILITY_NAMES[number] for number in KEPT_FACILITIES],
        "host_prefix": HOST_PREFIX,
    }


def facilities(seed: int, sender: SenderId, per_sender: int) -> Iterator[int]:
    """The facility of each message 1..per_sender (the last is the DONE), as messages.render_lines draws them."""
    pris = pri_stream(seed, sender)
    return (next(pris) // SEVERITIES for _ in range(per_sender))


def even_numbers(seed: int, sender: SenderId, per_sender: int) -> bytearray:
    """The regexp row's subset: the even sequence numbers (the DONE is set by the caller)."""
    mask = bytearray(per_sender + 1)
    mask[2::2] = b"\x01" * len(range(2, per_sender + 1, 2))
    return mask


def kept_facilities(seed: int, sender: SenderId, per_sender: int) -> bytearray:
    """The facility row's subset: the messages the seed drew a kept facility for."""
    kept = set(KEPT_FACILITIES)
    # One byte per message, never a list of them: a run of millions reconciles in bounded memory.
    return bytearray(1) + bytearray(1 if f in kept else 0 for f in facilities(seed, sender, per_sender))


@dataclass(frozen=True)
class Kind:
    """One pre-processing row: its scenario value, and everything the rest of the harness derives from it."""

    name: str  # the scenario's `preprocess:` value
    feature: str | None = None  # the manifest feature a daemon needs for it (None: every daemon does it)
    payload: str = "text"  # the form the senders render (messages.PAYLOADS): the parsing rows send fields
    # Which sequence numbers 1..per_sender (index 0 unused) must arrive; None: every one.
    subset: Callable[[int, SenderId, int], bytearray] | None = None
    # What every message line of the output must match besides the reconciler's key; None: nothing more.
    proof: re.Pattern[bytes] | None = None


KINDS = {
    kind.name: kind
    for kind in (
        Kind("none"),
        Kind("regexp", "pre-regexp", subset=even_numbers),
        Kind("facility-filter", "pre-facility-filter", subset=kept_facilities),
        Kind(
            "hostname-rewrite",
            "pre-hostname-rewrite",
            # The host field carries relay-host<h>, with h the sender's own host number.
            proof=re.compile(
                rb"\b" + re.escape(HOST_PREFIX.encode()) + rb"host(\d+) [^\n]*syslogbench h=\1 ", re.MULTILINE
            ),
        ),
        Kind("json", "pre-json", payload="json"),
        Kind("kv", "pre-kv", payload="kv"),
    )
}
# Raw receive (the scenario's `receive: raw`): the line is stored as it came off the wire, so it begins with
# the sender's <PRI>.
RAW_PROOF = re.compile(rb"^<\d{1,3}>[^\n]*syslogbench h=\d+ s=\d+ q=\d+ ", re.MULTILINE)


def payload(preprocess: str) -> str:
    return KINDS[preprocess].payload


def expected_mask(preprocess: str, seed: int, sender: SenderId, per_sender: int) -> bytearray | None:
    """1 at each sequence number (1..per_sender, the DONE last) that must arrive; None: every one must.

    Index 0 is unused, like the reconciler's tally.
    """
    subset = KINDS[preprocess].subset
    if subset is None:
        return None
    mask = subset(seed, sender, per_sender)
    mask[per_sender] = 1  # the DONE always passes
    return mask


class Axes(Protocol):
    """The scenario's axes an expectation takes (model/scenarios.py, which builds on this module's rows)."""

    preprocess: str
    receive: str
    format: str
    message_bytes: int


@dataclass(frozen=True)
class Expectation:
    """What a scenario lets through and what its output lines must show; the default expects everything."""

    preprocess: str = "none"
    receive: str = "parsed"
    seed: int = 2014
    # What the senders rendered, so the reconciler knows the padding of a message that arrived whole.
    format: str = "rfc3164"
    message_bytes: int = MESSAGE_BYTES

    @classmethod
    def of(cls, scenario: Axes | None, seed: int) -> Expectation:
        if scenario is None:
            return cls(seed=seed)
        return cls(scenario.preprocess, scenario.receive, seed, scenario.format, scenario.message_bytes)

    @property
    def payload(self) -> str:
        return payload(self.preprocess)

    def mask(self, sender: SenderId, per_sender: int) -> bytearray | None:
        return expected_mask(self.preprocess, self.seed, sender, per_sender)

    def proof(self) -> re.Pattern[bytes] | None:
        if self.receive == "raw":
            return RAW_PROOF
        return KINDS[self.preprocess].proof
