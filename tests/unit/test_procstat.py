"""The daemon's cores from the host's /proc/stat (rig/procstat.py), as each capacity trial records them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from syslogbench.rig import procstat
from syslogbench.rig.cgroup import read_snapshot
from syslogbench.rig.trialserver import cores_over

SAMPLES = Path(__file__).parent / "samples"
HZ = os.sysconf("SC_CLK_TCK")

# Two readings 10 s apart on a 2-core VM, the daemon on core 1 (shape of a real /proc/stat; the intr,
# ctxt and softirq lines are cut short).
BEFORE = """cpu  57812 0 24081 286532 2304 0 764 5327 0 0
cpu0 26349 0 10921 147763 679 0 85 2545 0 0
cpu1 31463 0 13159 138768 1625 0 678 2782 0 0
intr 2919215 0 0 0
ctxt 10428133
"""
AFTER = """cpu  58812 0 24581 287332 2304 0 864 5427 0 0
cpu0 26649 0 10921 148263 679 0 85 2575 0 0
cpu1 32163 0 13659 139068 1625 0 778 2852 0 0
intr 2919915 0 0 0
ctxt 10438133
"""


def test_busy_is_what_ran_and_steal_is_apart() -> None:
    times = procstat.parse(BEFORE, "1")
    assert times == procstat.CoreTimes(
        "1", (31463 + 13159 + 678) / HZ, (138768 + 1625) / HZ, 2782 / HZ, (2545 + 2782) / HZ
    )


def test_over_a_trial() -> None:
    grown = procstat.over(procstat.parse(BEFORE, "1"), procstat.parse(AFTER, "1"))
    # core 1: user +700, system +500, softirq +100 ticks, idle +300; steal +70; the host's steal +30 on core 0 too
    assert grown == procstat.CoresOverTrial(
        "1", round(1300 / HZ, 2), round(300 / HZ, 2), round(70 / HZ, 2), round(100 / HZ, 2)
    )


@pytest.mark.parametrize(("cores", "cpus"), [("1", [1]), ("0-1", [0, 1]), ("0,2-3", [0, 2, 3])])
def test_the_kernel_s_cpu_lists(cores: str, cpus: list[int]) -> None:
    assert procstat.cpu_list(cores) == cpus


@pytest.mark.parametrize("cores", ["", "1-0", "a", "2"])
def test_a_list_that_is_no_list_or_names_a_core_the_host_lacks_gives_none(cores: str) -> None:
    assert procstat.parse(BEFORE, cores) is None


def test_nothing_to_compare_gives_none() -> None:
    one, both = procstat.parse(BEFORE, "1"), procstat.parse(AFTER, "0-1")
    assert procstat.over(one, both) is None  # the daemon's cores changed
    assert procstat.over(procstat.parse(AFTER, "1"), procstat.parse(BEFORE, "1")) is None  # went back
    assert procstat.over(None, one) is None
    assert procstat.parse(None, "1") is None and procstat.parse(BEFORE, None) is None


def test_the_allowed_cores_come_from_the_daemon_s_status() -> None:
    status = (SAMPLES / "cgroup_v1" / "end" / "proc.status").read_text()
    assert procstat.allowed_cores(status) == "0-7"
    assert procstat.allowed_cores("Name:\tsyslog-ng\n") is None


def test_a_snapshot_carries_its_cores_and_a_trial_records_their_growth(tmp_path: Path) -> None:
    folders = []
    for name, stat in (("start", BEFORE), ("end", AFTER)):
        folder = Path(shutil.copytree(SAMPLES / "cgroup_v1" / name, tmp_path / name))
        status = (
            (folder / "proc.status").read_text().replace("Cpus_allowed_list:\t0-7", "Cpus_allowed_list:\t1")
        )
        (folder / "proc.status").write_text(status)
        (folder / procstat.SNAPSHOT_FILE).write_text(stat)
        folders.append(read_snapshot(folder))
    before, after = folders
    assert before.cores is not None and before.cores.cores == "1"
    assert cores_over(before, after) == {
        "daemon_cores": "1",
        "daemon_cores_busy_s": round(1300 / HZ, 2),
        "daemon_cores_idle_s": round(300 / HZ, 2),
        "daemon_cores_steal_s": round(70 / HZ, 2),
        "host_steal_s": round(100 / HZ, 2),
    }


def test_a_snapshot_without_the_file_records_none() -> None:
    before = read_snapshot(SAMPLES / "cgroup_v1" / "start")
    assert before.cores is None
    assert cores_over(before, read_snapshot(SAMPLES / "cgroup_v1" / "end")) == dict.fromkeys(
        procstat.TRIAL_FIELDS
    )
