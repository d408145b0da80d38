"""The DONE/SEC end: the real SEC follows done.log, as in 2014; its threshold ends the run.

elapsed_s runs to the threshold-th DONE as it appeared in done.log: the file's mtime when the watcher saw it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from syslogbench import contract
from syslogbench.contract import Trigger
from syslogbench.model.settings import Settings
from syslogbench.rig import control
from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher.concern import Ending
from syslogbench.rig.watcher.files import DoneTail

SEC_FIRED = Path("/tmp/sec-fired")
SEC_STOP_S = 5.0  # SEC exits at once on SIGTERM; one that does not is killed, so the run still ends
# How often SEC looks at done.log when nothing new came: it only sets when the run stops (sec_fired_s), not
# elapsed_s, which the watcher's own look at done.log gives (files.DoneTail). Idle, 0.05 s cost SEC 1.09 ms
# of CPU a second, 0.25 s 0.40 ms (docs/findings/harness-cpu.md).
SEC_POLL_S = 0.25
SEC_GRACE_S = 2.0  # 2 s without firing after the last DONE (8 of SEC's looks) means never
# The end triggers of this concern: the run then ran to the DONEs (the relay tail follows only these).
TRIGGERS = (Trigger.SEC, Trigger.ALL_DONE_WITHOUT_SEC)


def sec_rule(cfg: Settings) -> str:
    return (
        "type=SingleWithThreshold\n"
        "ptype=SubStr\n"
        "pattern=DONE\n"
        "desc=syslogbench DONE threshold\n"
        f"action=write {SEC_FIRED} fired\n"
        f"window={cfg.done_window}\n"
        f"thresh={cfg.done_threshold}\n"
    )


def start_sec(cfg: Settings) -> subprocess.Popen:
    """The real SEC, following done.log from its (empty) start.

    The watcher creates done.log empty before the start, so SEC need not wait for --reopen-timeout to
    notice the file; the daemon appends to it.
    """
    rules = Path("/tmp/done-threshold.sec")
    rules.write_text(sec_rule(cfg))
    SEC_FIRED.unlink(missing_ok=True)
    command = [
        "sec",
        f"--conf={rules}",
        f"--input={control.LOGS / contract.DONE_LOG}",
        "--reopen-timeout=1",
        f"--poll-timeout={SEC_POLL_S}",
        "--log=/tmp/sec.log",
    ]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


def stop_sec(sec: subprocess.Popen) -> None:
    sec.terminate()
    try:
        sec.wait(timeout=SEC_STOP_S)
    except subprocess.TimeoutExpired:
        sec.kill()
        sec.wait(timeout=SEC_STOP_S)


class DoneEnd(Ending):
    """SEC fired; or every sender's DONE is in and SEC stayed silent (its window can no longer be met)."""

    def __init__(self, cfg: Settings, tail: DoneTail) -> None:
        self.cfg, self.tail = cfg, tail
        self.note: str | None = None
        self.stopped_s: float | None = None

    def update(self, now: float) -> None:
        self.tail.update()
        seen = self.tail.seen
        if SEC_FIRED.exists():
            self.trigger = Trigger.SEC
        elif len(seen) >= self.cfg.senders and now - seen[-1] > SEC_GRACE_S:
            self.trigger = Trigger.ALL_DONE_WITHOUT_SEC
            self.note = (
                f"SEC's SingleWithThreshold ({self.cfg.done_threshold} DONE in {self.cfg.done_window} s) did "
                f"not fire: the {self.cfg.senders} DONE messages reached done.log over "
                f"{seen[-1] - seen[0]:.1f} s. The run ended when the watcher saw every DONE."
            )

    def stop(self, now: float) -> None:
        self.tail.update()  # DONEs that came in the last poll
        self.stopped_s = now

    def record(self, obs: Observed) -> None:
        seen, threshold = self.tail.seen, self.cfg.done_threshold
        if self.trigger:
            obs.end_trigger = self.trigger
        if self.note:
            obs.notes.append(self.note)
        obs.sec_fired_s = (
            round(self.stopped_s, 3) if self.trigger == Trigger.SEC and self.stopped_s is not None else None
        )
        if self.trigger and len(seen) >= threshold:
            obs.elapsed_s = seen[threshold - 1]
        if seen:
            obs.done_spread_s = round(seen[-1] - seen[0], 3)
