"""One sender's ledger: what it says it sent (rig/sender.py), the reference the reconciliation counts against
(rig/reconcile.py). It travels as JSON over the control channel into ledgers/<sender>.json; `to_json` and
`from_json` are the only places that see it as a dict. Stdlib only: the generators and the watcher import it.
"""

from __future__ import annotations

from dataclasses import dataclass

from syslogbench.model.result import Tls, load, optional, plain

OK = "ok"


@dataclass
class Ledger:
    """A sender that failed or died has only its id, maybe its numbers, and a status saying what happened."""

    id: str
    status: str  # "ok", or what went wrong: "failed: ...", "died: ...", "incomplete: ..."
    host: int | None = optional()
    sender: int | None = optional()
    # The messages it sent, the DONE included, numbered first_seq..last_seq; the DONE is done_seq.
    messages: int | None = optional()
    first_seq: int | None = optional()
    last_seq: int | None = optional()
    done_seq: int | None = optional()
    bytes: int | None = optional()
    send_s: float | None = optional()
    cpu_s: float | None = optional()
    render_s: float | None = optional()
    render_cpu_s: float | None = optional()
    finished_at: float | None = optional()  # wall-clock time.time()
    transport: str | None = optional()
    # msg/s: what the scenario asked of it (0 all-out), and messages over the time it took to send them.
    rate_target: int | None = optional()
    rate_achieved: float | None = optional()
    pace_s: float | None = optional()  # paced senders: the time to hand the last message to the kernel
    # Paced senders: the largest lag of a batch behind its schedule (looked at every batch, rig-rust send).
    behind_max_s: float | None = optional()
    tls: Tls | None = optional()  # TLS scenarios: what it negotiated

    @property
    def ok(self) -> bool:
        """The one test of a sender's success: everything it rendered left it, and was acknowledged (TCP)."""
        return self.status == OK

    @property
    def sent(self) -> int:
        """Messages it sent, the DONE included; a sender that did not finish vouches for none."""
        return (self.messages or 0) if self.ok else 0

    def to_json(self) -> dict[str, object]:
        return plain(self)  # type: ignore[return-value]

    @classmethod
    def from_json(cls, data: object, where: str = "ledger") -> Ledger:
        """ResultError (a ValueError) naming the key, for a document that is not a ledger."""
        return load(cls, data, where)


def failures(ledgers: dict[str, Ledger]) -> list[str]:
    """'<sender>: <status>' for every sender that did not succeed, by the name its ledger is filed under."""
    return [f"{name}: {ledger.status}" for name, ledger in ledgers.items() if not ledger.ok]
