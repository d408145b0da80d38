"""relay_target pause-restart: once every sender is done and a second more, so that every message is in the
daemon's queue while the last hop still pauses, ask the supervisor to restart the daemon, once."""

from __future__ import annotations

from syslogbench.model import result as model
from syslogbench.rig import control
from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher.concern import Concern

RESTART_AFTER_SENDERS_S = 1.0  # time for the daemon to read what the senders' kernels acked


class Restart(Concern):
    every = 0.1

    def __init__(self, senders: int) -> None:
        self.senders = senders
        self.senders_done_s: float | None = None
        self.requested_s: float | None = None

    def update(self, now: float) -> None:
        if self.requested_s is not None:
            return
        if self.senders_done_s is None:
            if len(list(control.CONTROL.ledgers.glob("*.json"))) >= self.senders:
                self.senders_done_s = round(now, 3)
            return
        if now - self.senders_done_s >= RESTART_AFTER_SENDERS_S:
            control.write_atomic(control.CONTROL.restart, "")
            self.requested_s = round(now, 3)

    def holds(self, now: float) -> bool:
        # The DONEs can all arrive before the restart is asked (a slow sender outlasted the last hop's pause):
        # the run still waits for the supervisor's answer, or the restart this scenario is about never happens.
        return not control.CONTROL.daemon.restarted.exists()

    def record(self, obs: Observed) -> None:
        """The supervisor's answer (daemon/restarted) in the result's relay section, or an error."""
        done = control.CONTROL.daemon.restarted
        entry = model.Restart(
            senders_done_s=self.senders_done_s, requested_s=self.requested_s, exit_code=None
        )
        if not done.exists():
            obs.errors.append(
                "relay_target pause-restart: the daemon was not restarted before the run ended "
                f"(senders done at {self.senders_done_s} s, restart asked at {self.requested_s} s)"
            )
        else:
            code, tenths = done.read_text().split()
            entry.exit_code, entry.stop_s = int(code), int(tenths) / 10
        if obs.relay is not None:
            obs.relay.restart = entry
