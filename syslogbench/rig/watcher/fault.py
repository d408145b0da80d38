"""When something dies: the watcher's SIGTERM, and what it can still say about the run (docs/DESIGN.md,
"When something dies").

`up --exit-code-from watcher` implies --abort-on-container-exit: when any container exits (the daemon's
killed, a generator killed, the kernel's OOM killer), compose stops every other one, the watcher last, since
the others depend on it. The watcher then still has its stop grace (compose.yaml, stop_grace_period) to
reconcile what had arrived and write a result with verdict `error`; this module names what it knows.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from types import FrameType

from syslogbench.contract import LOGS_FULL_BELOW_BYTES
from syslogbench.model.messages import SenderId
from syslogbench.rig import control
from syslogbench.rig.cgroup import oom_kills_between
from syslogbench.rig.outcome import Observed

STOPPED = (
    "the watcher was stopped (SIGTERM) before the run ended: compose stops every container once one of them "
    "exits, so some container ended first (the host side names it where `syslogbench run` started the run)"
)


class Terminated(BaseException):
    """SIGTERM reached the watcher. Not an Exception, like KeyboardInterrupt: the handlers that keep a failing
    step from costing the result must not swallow it and go on waiting past compose's grace."""


def on_sigterm(signum: int, frame: FrameType | None) -> None:
    # Once only: after the first SIGTERM the watcher is writing its result, and a second must not cut it.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated(STOPPED)


def arm() -> None:
    """From here on a SIGTERM ends the run with a result (PID 1 would otherwise ignore it, and be killed)."""
    signal.signal(signal.SIGTERM, on_sigterm)


def disarm() -> None:
    """The result is being written: a SIGTERM now waits for it (compose's grace covers that)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def missing_senders(senders: list[SenderId]) -> str | None:
    """After the start, a sender without a ledger did not finish: its generator container ended first (a
    container that vanishes leaves no ledger). Before it, the senders that were not ready."""
    started = control.CONTROL.start.exists()
    written = control.CONTROL.ledgers if started else control.CONTROL.ready_dir
    have = {path.stem if started else path.name for path in written.glob("host*")}
    missing = [sender.name for sender in senders if sender.name not in have]
    if not missing:
        return None
    if started:
        return f"no ledger from {len(missing)} of {len(senders)} senders ({', '.join(missing)}): they had not finished when their generator stopped"
    return f"{len(missing)} of {len(senders)} senders were not ready ({', '.join(missing)})"


def daemon_gone(obs: Observed) -> str | None:
    """The supervisor writes daemon/exit when the daemon process ends; without it, its whole container ended
    (killed or stopped by compose) and took the supervisor with it."""
    if obs.daemon_exit is not None or not control.CONTROL.go.exists():
        return None
    exit_file = control.CONTROL.daemon.exit
    if exit_file.exists():
        return f"the daemon exited with code {exit_file.read_text().strip()}"
    return (
        "the daemon's supervisor wrote no exit code: the daemon's container ended (killed or stopped) with it"
    )


# The supervisor appends a sample about once a second while the run goes on; this much silence means its
# container is frozen (docker pause) or gone.
SILENT_S = 10.0


def supervisor_silent(samples: Path) -> str | None:
    """Why the daemon's supervisor will not answer the stop, when its samples stopped coming."""
    try:
        age = time.time() - samples.stat().st_mtime
    except OSError:
        return None  # no samples yet: the run ended before the start, where the usual waits apply
    if age < SILENT_S:
        return None
    return (
        f"the daemon's supervisor had written no sample for {age:.0f} s: its container was frozen "
        "(docker pause) or had stopped, so the daemon's end figures are missing"
    )


# A daemon stopped by the watcher exits 0, or 143 for the supervisor's SIGTERM; these come from elsewhere.
SIGNALLED = {134: "SIGABRT", 137: "SIGKILL", 139: "SIGSEGV", 135: "SIGBUS", 136: "SIGFPE"}


def killed_by_signal(code: int | None) -> str | None:
    """A daemon that died of a signal (SIGKILL from outside, a crash), named by its code. (When its stop
    outlasts the supervisor's grace, the supervisor's own SIGKILL also ends as 137: that too is no clean end.)"""
    if code not in SIGNALLED:
        return None
    return f"the daemon exited with code {code} ({SIGNALLED[code]}): it did not end by the watcher's stop"


def memory_kill(obs: Observed, central_mem: str) -> str | None:
    """The daemon killed for memory, named by the kernel's own count (the end snapshot), with the limit and
    the peak, rather than by what its senders saw (connection reset by peer)."""
    kills = oom_kills_between(obs.start, obs.end)
    if not kills or obs.end is None:
        return None
    limit = obs.end.memory_limit_bytes
    setting = f" (CENTRAL_MEM={central_mem})" if central_mem else ""
    peak = obs.end.memory_peak_bytes
    figures = f"limit {mib(limit)}{setting}, peak {mib(peak)} ({obs.end.memory_peak_source})"
    said = f"the kernel's OOM killer killed {kills} process(es) in its cgroup"
    if obs.daemon_exit not in (None, 137):
        # Seen at 6 MiB on syslog-ng 3.28: the victims were the health check's `docker exec`s, while the
        # daemon lived on, starved, and received nothing.
        return f"the daemon's cgroup ran out of memory: {figures}; {said}, but not the daemon (it exited with code {obs.daemon_exit})"
    return f"the daemon was killed for memory: {figures}; {said}"


def logs_full(logs: Path) -> str | None:
    """The logs volume full (ENOSPC for the daemon), named as such rather than by the loss it caused."""
    try:
        stat = os.statvfs(logs)
    except OSError:
        return None
    free, size = stat.f_bavail * stat.f_frsize, stat.f_blocks * stat.f_frsize
    if free >= LOGS_FULL_BELOW_BYTES:
        return None
    return (
        f"the logs volume is full: {free:,} bytes free of {mib(size)}; the daemon could not write every "
        "message it received: free space where the volume lives (Docker's data root, or the volume's own size)"
    )


def mib(size: int | None) -> str:
    return "unknown" if size is None else f"{round(size / 2**20, 1):g} MiB"
