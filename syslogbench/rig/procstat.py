"""The daemon's cores as the kernel counts them: /proc/stat, copied into each snapshot by the supervisor.

A daemon's cgroup says what the daemon used; it cannot say what else ran on its cores, nor how long the
hypervisor held them (steal: a virtual machine's core taken away while its guest had work). Both move a
capacity figure without the daemon changing. /proc/stat is not namespaced, so the copy taken in the
daemon's container is its host's (a swarm node's own), and the daemon's cores are the Cpus_allowed_list of
its process (proc.status, in the same snapshot). Stdlib only: runs in the watcher container.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from syslogbench.model.machine import cpu_list  # the kernel's CPU list syntax, shared with the host

SNAPSHOT_FILE = "stat"  # the name the supervisor gives its copy of /proc/stat
# /proc/stat's columns after the name: user nice system idle iowait irq softirq steal guest guest_nice.
# guest and guest_nice are already inside user and nice, so they are not added again.
BUSY_COLUMNS = (0, 1, 2, 5, 6)
IDLE_COLUMNS = (3, 4)
STEAL_COLUMN = 7


@dataclass(frozen=True)
class CoreTimes:
    """Seconds since boot, summed over a set of cores."""

    cores: str  # the set, as the kernel writes a list ("1", "0-3", "0,2")
    busy_s: float  # user, nice, system, irq and softirq: anything running on these cores
    idle_s: float  # idle and iowait
    steal_s: float  # time the hypervisor ran something else while these cores had work
    all_steal_s: float  # steal over every core of the host, the rig's included


def allowed_cores(status: str | None) -> str | None:
    """Cpus_allowed_list from a process's /proc/<pid>/status; None where absent."""
    for line in (status or "").splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip() or None
    return None


def parse(stat: str | None, cores: str | None) -> CoreTimes | None:
    """The busy and stolen seconds of `cores` from a /proc/stat text; None when either is missing or garbled
    (a core of the list absent from the file, a non-number)."""
    if stat is None or cores is None:
        return None
    hz = os.sysconf("SC_CLK_TCK")  # /proc/stat counts in USER_HZ ticks, as cpuacct.stat does
    try:
        rows = {
            int(parts[0][3:]): [int(value) for value in parts[1:]]
            for parts in (line.split() for line in stat.splitlines())
            if len(parts) > STEAL_COLUMN + 1 and parts[0].startswith("cpu") and parts[0][3:].isdigit()
        }
        wanted = [rows[core] for core in cpu_list(cores)]
    except (KeyError, ValueError):
        return None
    return CoreTimes(
        cores=cores,
        busy_s=sum(row[i] for row in wanted for i in BUSY_COLUMNS) / hz,
        idle_s=sum(row[i] for row in wanted for i in IDLE_COLUMNS) / hz,
        steal_s=sum(row[STEAL_COLUMN] for row in wanted) / hz,
        all_steal_s=sum(row[STEAL_COLUMN] for row in rows.values()) / hz,
    )


def read(snapshot_dir: Path, cores: str | None) -> CoreTimes | None:
    """The times of `cores` (the daemon's, from the same snapshot's proc.status) from a snapshot folder;
    None in snapshots without /proc/stat."""
    try:
        return parse((Path(snapshot_dir) / SNAPSHOT_FILE).read_text(), cores)
    except OSError:
        return None


@dataclass(frozen=True)
class CoresOverTrial:
    """What the daemon's cores did between two snapshots, as a trial records it."""

    daemon_cores: str
    daemon_cores_busy_s: float
    daemon_cores_idle_s: float
    daemon_cores_steal_s: float
    host_steal_s: float


TRIAL_FIELDS = tuple(CoresOverTrial.__dataclass_fields__)


def over(start: CoreTimes | None, end: CoreTimes | None) -> CoresOverTrial | None:
    """The growth between two readings of the same cores; None when one is missing, the daemon's cores
    changed in between, or a counter went back (another boot)."""
    if start is None or end is None or start.cores != end.cores:
        return None
    grown = [
        round(getattr(end, name) - getattr(start, name), 2)
        for name in ("busy_s", "idle_s", "steal_s", "all_steal_s")
    ]
    if min(grown) < 0:
        return None
    return CoresOverTrial(end.cores, *grown)
