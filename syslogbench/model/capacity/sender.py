"""One sender's part of one trial: what the follower counted against what the compiled sender reported, and
whether the sender, not the daemon, made its messages late or unsent. What each count means:
model/countnames.py."""

from __future__ import annotations

import math
from dataclasses import dataclass

from syslogbench.model.rigrecord import FailedRecord, SenderTally, SendRecord


@dataclass
class SenderTrial:
    """One sender's part of one trial. intended = sent + unsent; sent = received + lost; late <= received."""

    id: str
    intended: int
    sent: int = 0
    received: int = 0
    lost: int = 0
    late: int = 0
    duplicated: int = 0
    # A user config's (--config) further sightings of a received message: the copies it writes on purpose to
    # other files, with any duplicates (a trial does not tell them apart; `run --config` does).
    copies: int = 0
    rate_target: float = 0.0  # msg/s this sender was asked for
    rate_achieved: float | None = None  # what it handed to the kernel over its own sending time
    sender_bound: bool = False  # it fell behind with its own CPU, not from the daemon's backpressure
    status: str = "ok"
    # The evidence (the compiled sender's record; None in results from before it): its CPU over the trial,
    # its largest lag behind the schedule at any batch, and the longest a sleep ran past its wake time.
    cpu_s: float | None = None
    behind_max_s: float | None = None
    oversleep_max_s: float | None = None
    cpu_system_s: float | None = None  # of cpu_s, the kernel's (None in results from before it)
    # Its generator's clock against the watcher's, measured just before the trial (ClockCheck): the start it
    # got was moved by clock_offset_s onto its own clock. None in results from before clocks were checked.
    clock_offset_s: float | None = None
    clock_uncertainty_s: float | None = None
    node: str | None = None  # its generator's node (NODE_HOSTNAME): a swarm node, or the one host's name

    @property
    def unsent(self) -> int:
        return self.intended - self.sent

    def consistent(self) -> str | None:
        """What breaks the accounting, or None."""
        if self.sent != self.received + self.lost:
            return f"{self.id}: sent {self.sent} != received {self.received} + lost {self.lost}"
        if self.lost < 0:
            return f"{self.id}: {self.received} received but {self.sent} sent: its report is missing or wrong"
        if not 0 <= self.late <= self.received:
            return f"{self.id}: late {self.late} is not within received {self.received}"
        if not 0 <= self.sent <= self.intended:
            return f"{self.id}: sent {self.sent} outside 0..intended {self.intended}"
        return None


# A sender behind its schedule by more than this (plus 5% of the trial) at any batch has fallen behind.
BEHIND_S = 0.1
# A sender busy this share of its sending time was short of CPU (not blocked by the daemon's backpressure).
BUSY_SHARE = 0.75


def sender_bound(record: SendRecord, rate: float, transport: str, bound_s: float) -> bool:
    """Whether a sender, not the daemon, made its trial's messages late or unsent, from its own evidence.

    A sender that woke more than half the bound late made its own messages late, whatever the daemon did.
    Over UDP nothing pushes back: a sender behind its schedule was short of CPU. Over TCP it may be the
    daemon's backpressure (blocked in send, no CPU spent): behind, with its CPU busy most of the time, is ours.
    """
    if record.oversleep_max_s > bound_s / 2:
        return True
    allowed = BEHIND_S + 0.05 * record.intended / rate if rate > 0 else math.inf
    fell_behind = record.sent < record.intended or record.behind_max_s > allowed
    pace = max(record.pace_s, (record.intended - 1) / rate if rate > 0 else 0.0, 1e-6)
    return fell_behind and (transport == "udp" or record.cpu_s > BUSY_SHARE * pace)


def sender_trial(
    name: str,
    intended: int,
    rate: float,
    count: SenderTally | None,
    report: SendRecord | FailedRecord | None,
    transport: str,
    bound_s: float,
) -> SenderTrial:
    """One sender's accounting: what the follower counted against what its compiled sender reported (none:
    it sent nothing we know of)."""
    received = count.received if count else 0
    sent = report.sent if isinstance(report, SendRecord) else 0
    trial = SenderTrial(
        id=name,
        intended=intended,
        sent=sent,
        received=received,
        lost=sent - received,
        late=count.late if count else 0,
        duplicated=count.duplicated if count else 0,
        copies=count.copies if count else 0,
        rate_target=round(rate, 3),
        status="no report from this sender" if report is None else "",
    )
    if isinstance(report, FailedRecord):
        trial.status = f"failed: {report.error}"
    elif isinstance(report, SendRecord):
        pace = max(report.pace_s, (intended - 1) / rate if rate > 0 else 0.0, 1e-6)
        trial.status = report.status
        trial.rate_achieved = round(report.sent / pace, 1)
        trial.sender_bound = sender_bound(report, rate, transport, bound_s)
        trial.cpu_s, trial.behind_max_s = report.cpu_s, report.behind_max_s
        trial.oversleep_max_s, trial.cpu_system_s = report.oversleep_max_s, report.cpu_system_s
    return trial
