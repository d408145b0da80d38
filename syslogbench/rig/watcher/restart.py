"""relay_target pause-restart: once every sender is done and a second more, so that every message is in the
daemon's queue while the last hop still pauses, ask the supervisor to restart the daemon, once."""

from __future__ import annotations

from syslogbench.rig import control
from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher.concern import Concern

RESTART_AFTER_SENDERS_S = 1.0  # time for the daemon to read what the senders' kernels acked


class Restart(Concern):
    def __init__(self, senders: int) -> None:
        self.senders = senders
        self.senders_done_s: float | None = None
        self.requested_s: float | None = None
        self.next_at = 0.0

    def update(self, now: float) -> None:
        if self.requested_s is not None or now < self.next_at:
            return
        self.next_at = now + 0.1
        if self.senders_done_s is None:
            if len(list(control.CONTROL.ledgers.glob("*.json"))) >= self.senders:
                self.senders_done_s = round(now, 3)
            return
        if now - self.senders_done_s >= RESTART_AFTER_SENDERS_S:
            control.write_atomic(control.CONTROL.restart, "")
            self.requested_s = round(now, 3)

    def record(self, obs: Observed) -> None:
        """The supervisor's answer (daemon/restarted) in the result's relay section, or an error."""
        done = control.CONTROL.daemon.restarted
        entry: dict[str, object] = {"senders_done_s": self.senders_done_s, "requested_s": self.requested_s}
        if not done.exists():
            obs.errors.append(
                "relay_target pause-restart: the daemon was not restarted before the run ended "
                f"(senders done at {self.senders_done_s} s, restart asked at {self.requested_s} s)"
            )
            entry["exit_code"] = None
        else:
            code, tenths = done.read_text().split()
            entry |= {"exit_code": int(code), "stop_s": int(tenths) / 10}
        if obs.relay is not None:
            obs.relay["restart"] = entry
