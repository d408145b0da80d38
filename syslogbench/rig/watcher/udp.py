"""The UDP quiet end: a DONE datagram may be lost, so SEC may never fire.

Once every ledger is in, output that has not grown for UDP_QUIET_S ends the run (quiet.py, the rule a user's
config ends on too). elapsed_s is then the last growth the watcher saw (UDP_POLL_S resolution): the arrival
of the last message the daemon wrote.
"""

from __future__ import annotations

from syslogbench.contract import Trigger
from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher.concern import Ending
from syslogbench.rig.watcher.files import DoneTail, OutputSize
from syslogbench.rig.watcher.quiet import QuietOutput

UDP_QUIET_S = 2.0
UDP_POLL_S = 0.1


class UdpQuiet(Ending):
    """Ends a UDP run whose DONE datagrams did not all arrive: every ledger in, then no new line for a while."""

    every = UDP_POLL_S

    def __init__(self, counter: OutputSize, done: DoneTail, senders: int) -> None:
        self.counter, self.done, self.senders = counter, done, senders
        self.bytes = 0
        self.quiet = QuietOutput(senders, UDP_QUIET_S)
        self.done_count = 0  # DONE lines in done.log when it ended the run

    @property
    def last_growth(self) -> float | None:
        return self.quiet.last_growth

    def update(self, now: float) -> None:
        # Only while some DONE is missing: with every DONE in, SEC (or all-done-without-sec) ends the run.
        if len(self.done.seen) < self.senders and self.over(now):
            self.trigger, self.done_count = Trigger.UDP_QUIET, len(self.done.seen)

    def over(self, now: float) -> bool:
        size = self.counter.update()  # growth in bytes is growth in lines: the daemon appends whole lines
        grew = size > self.bytes
        self.bytes = max(self.bytes, size)
        return self.quiet.over(now, grew)

    def record(self, obs: Observed) -> None:
        if self.trigger is None:
            return
        obs.end_trigger = self.trigger
        obs.notes.append(
            f"{self.done_count} of {self.senders} DONE datagrams reached done.log, so SEC could not fire: "
            f"the run ended when every sender's ledger was in and no line had arrived for {UDP_QUIET_S:g} s. "
            "elapsed_s runs to the last arrival the watcher saw (0.1 s polling)."
        )
        obs.elapsed_s = self.last_growth
