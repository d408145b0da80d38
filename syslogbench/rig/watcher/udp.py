"""The UDP quiet end: a DONE datagram may be lost, so SEC may never fire.

Once every ledger is in (nothing more will be sent), output that has not grown for UDP_QUIET_S means the
daemon has written all it will write. elapsed_s is then the last growth the watcher saw (UDP_POLL_S
resolution): the arrival of the last message the daemon wrote.
"""

from __future__ import annotations

from syslogbench.contract import Trigger
from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher.concern import Concern
from syslogbench.rig.watcher.files import DoneTail, Ledgers, OutputSize

UDP_QUIET_S = 2.0
UDP_POLL_S = 0.1


class UdpQuiet(Concern):
    """Ends a UDP run whose DONE datagrams did not all arrive: every ledger in, then no new line for a while."""

    every = UDP_POLL_S

    def __init__(self, counter: OutputSize, done: DoneTail, senders: int) -> None:
        self.counter, self.done, self.senders = counter, done, senders
        self.bytes = 0
        self.last_growth: float | None = None
        self.ledgers = Ledgers()
        self.ledgers_in: float | None = None
        self.ended = False
        self.done_count = 0  # DONE lines in done.log when it ended the run

    def update(self, now: float) -> None:
        # Only while some DONE is missing: with every DONE in, SEC (or all-done-without-sec) ends the run.
        if len(self.done.seen) < self.senders and self.over(now):
            self.ended, self.done_count = True, len(self.done.seen)

    def over(self, now: float) -> bool:
        size = self.counter.update()  # growth in bytes is growth in lines: the daemon appends whole lines
        if size > self.bytes:
            self.bytes, self.last_growth = size, now
        if self.ledgers_in is None and len(self.ledgers.update()) >= self.senders:
            self.ledgers_in = now
        if self.ledgers_in is None:
            return False
        return now - max(self.ledgers_in, self.last_growth or 0.0) >= UDP_QUIET_S

    def record(self, obs: Observed) -> None:
        if not self.ended:
            return
        obs.end_trigger = Trigger.UDP_QUIET
        obs.notes.append(
            f"{self.done_count} of {self.senders} DONE datagrams reached done.log, so SEC could not fire: "
            f"the run ended when every sender's ledger was in and no line had arrived for {UDP_QUIET_S:g} s. "
            "elapsed_s runs to the last arrival the watcher saw (0.1 s polling)."
        )
        obs.elapsed_s = self.last_growth
