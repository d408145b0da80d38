"""Pre-processing (seed 004's rows) and raw receive (seed 003): what arrives, and how a line shows it.

One place defines each row, so the daemon configs (rendered with these values) and the reconciler agree:
- which sequence numbers of a sender must arrive (a filter lets an exact, known subset through);
- what the senders' payload is (JSON and key=value rows send their fields in that form);
- what every output line must show (a rewritten host name, the raw line as received).

Every DONE message passes every filter, so the run always ends. Stdlib only: runs in the containers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from syslogbench.model.messages import MESSAGE_BYTES, SEVERITIES, SenderId, pri_stream
from syslogbench.model.scenarios import Scenario

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
# The payload form the senders render for each preprocess value (messages.PAYLOADS).
PAYLOAD = {"json": "json", "kv": "kv"}


def payload(preprocess: str) -> str:
    return PAYLOAD.get(preprocess, "text")


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


def expected_mask(preprocess: str, seed: int, sender: SenderId, per_sender: int) -> bytearray | None:
    """1 at each sequence number (1..per_sender, the DONE last) that must arrive; None: every one must.

    Index 0 is unused, like the reconciler's tally.
    """
    if preprocess == "regexp":
        mask = bytearray(per_sender + 1)
        mask[2::2] = b"\x01" * len(range(2, per_sender + 1, 2))
    elif preprocess == "facility-filter":
        kept = set(KEPT_FACILITIES)
        # One byte per message, never a list of them: a run of millions reconciles in bounded memory.
        mask = bytearray(1) + bytearray(1 if f in kept else 0 for f in facilities(seed, sender, per_sender))
    else:
        return None
    mask[per_sender] = 1  # the DONE always passes
    return mask


# What every message line of the output must match besides the reconciler's key (None: nothing more).
PROOFS: dict[str, re.Pattern[bytes]] = {
    # The host field carries relay-host<h>, with h the sender's own host number.
    "hostname-rewrite": re.compile(
        rb"\b" + re.escape(HOST_PREFIX.encode()) + rb"host(\d+) [^\n]*syslogbench h=\1 ", re.MULTILINE
    ),
    # The line is stored as it came off the wire: it begins with the sender's <PRI>.
    "raw": re.compile(rb"^<\d{1,3}>[^\n]*syslogbench h=\d+ s=\d+ q=\d+ ", re.MULTILINE),
}


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
    def of(cls, scenario: Scenario | None, seed: int) -> Expectation:
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
            return PROOFS["raw"]
        return PROOFS.get(self.preprocess)

    @property
    def what_proof_shows(self) -> str:
        if self.receive == "raw":
            return "the raw line, beginning with its <PRI>"
        return {"hostname-rewrite": f"the host name rewritten to {HOST_PREFIX}hostN"}.get(self.preprocess, "")
