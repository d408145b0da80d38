"""The guard: RUN_TIMEOUT passed, the daemon exited, or a sender failed; each ends the run early."""

from __future__ import annotations

from syslogbench.contract import Trigger
from syslogbench.model.settings import Settings
from syslogbench.rig import control
from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher.concern import Ending
from syslogbench.rig.watcher.files import Ledgers


class Guard(Ending):
    every = 0.5  # a timeout, a dead daemon or a failed sender ends the run half a second late at most

    def __init__(self, cfg: Settings) -> None:
        self.cfg = cfg
        self.ledgers = Ledgers()

    def update(self, now: float) -> None:
        if now > self.cfg.run_timeout:
            self.trigger = Trigger.TIMEOUT
        elif control.CONTROL.daemon.exit.exists():
            self.trigger, self.error = (
                Trigger.DAEMON_EXITED,
                "the daemon exited before the DONE threshold fired",
            )
        elif failed := self.ledgers.failed():
            self.trigger, self.error = Trigger.SENDER_FAILED, "a sender failed: " + "; ".join(failed)

    def record(self, obs: Observed) -> None:
        if self.trigger is None:
            return
        obs.end_trigger = self.trigger
        obs.timed_out = self.trigger == Trigger.TIMEOUT
        if self.error:
            obs.errors.append(self.error)
