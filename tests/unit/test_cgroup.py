"""syslogbench.rig.cgroup: parse the supervisor's cgroup snapshot directories.

Expected figures are worked out by hand from the files under samples/cgroup_v1 and samples/cgroup_v2.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from syslogbench.rig import cgroup
from syslogbench.rig.cgroup import Snapshot, cpu_delta, oom_kills_between, read_snapshot, snapshot_files

SAMPLES = Path(__file__).resolve().parent / "samples"
SUPERVISOR = Path(__file__).resolve().parents[2] / "daemons" / "_common" / "supervise.sh"
# cpuacct.stat counts USER_HZ ticks; the parser asks sysconf, so the expectations do as well.
HZ = os.sysconf("SC_CLK_TCK")


def sample(name: str, tmp_path: Path) -> Path:
    """A writable copy of a sample snapshot, for tests that remove or damage files."""
    return Path(shutil.copytree(SAMPLES / name, tmp_path / name.replace("/", "_")))


# --- cgroup v1 --------------------------------------------------------------------------------------------


def test_v1_end_snapshot() -> None:
    snap = read_snapshot(SAMPLES / "cgroup_v1" / "end")
    assert snap == Snapshot(
        version=1,
        time=1700000062.75,
        cpu_user_s=490 / HZ,
        cpu_system_s=2010 / HZ,
        memory_peak_bytes=177209344,
        memory_peak_source="memory.max_usage_in_bytes",
        memory_current_bytes=150994944,
        memory_limit_bytes=2147483648,  # 2 GiB
        cpu_limit=8.0,  # 800000 / 100000
        io_write_bytes=1048576 + 52428800,  # the two devices' Write lines, not the Total lines
        max_rss_bytes=98304 * 1024,  # VmHWM: 98304 kB
        cpu_total_s=25.034719562,  # cpuacct.usage in ns
    )


@pytest.mark.skipif(HZ != 100, reason="USER_HZ is not 100 here")
def test_v1_ticks_at_100_hz() -> None:
    snap = read_snapshot(SAMPLES / "cgroup_v1" / "end")
    assert snap.cpu_user_s == 4.9
    assert snap.cpu_system_s == 20.1


def test_v1_unlimited(tmp_path: Path) -> None:
    path = sample("cgroup_v1/end", tmp_path)
    (path / "cpu.cfs_quota_us").write_text("-1\n")
    # What the kernel shows for "no limit" with 4 KiB pages.
    (path / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    snap = read_snapshot(path)
    assert snap.cpu_limit is None
    assert snap.memory_limit_bytes is None


def test_v1_fractional_cpu_limit(tmp_path: Path) -> None:
    path = sample("cgroup_v1/end", tmp_path)
    (path / "cpu.cfs_quota_us").write_text("150000\n")
    assert read_snapshot(path).cpu_limit == 1.5


def test_v1_no_peak_file_falls_back_to_usage(tmp_path: Path) -> None:
    path = sample("cgroup_v1/end", tmp_path)
    (path / "memory.max_usage_in_bytes").unlink()
    snap = read_snapshot(path)
    assert snap.memory_peak_bytes == 150994944
    assert snap.memory_peak_source == "memory.usage_in_bytes (no peak file)"


def test_v1_blkio_without_io_is_zero(tmp_path: Path) -> None:
    path = sample("cgroup_v1/end", tmp_path)
    (path / "blkio.throttle.io_service_bytes").write_text("Total 0\n")
    assert read_snapshot(path).io_write_bytes == 0


# --- cgroup v2 --------------------------------------------------------------------------------------------


def test_v2_end_snapshot() -> None:
    snap = read_snapshot(SAMPLES / "cgroup_v2" / "end")
    assert snap == Snapshot(
        version=2,
        time=1700000171.0,
        cpu_user_s=5.123456,
        cpu_system_s=21.719754,
        memory_peak_bytes=186646528,
        memory_peak_source="memory.peak",
        memory_current_bytes=160432128,
        memory_limit_bytes=None,  # memory.max is "max"
        cpu_limit=8.0,  # "800000 100000"
        io_write_bytes=2097152 + 73400320,
        max_rss_bytes=110592 * 1024,
        cpu_total_s=26.84321,  # usage_usec
    )


def test_v2_without_memory_peak() -> None:
    # Kernels before 5.19 have no memory.peak; the current usage stands in and says so.
    snap = read_snapshot(SAMPLES / "cgroup_v2" / "no_peak")
    assert snap.memory_peak_bytes == 160432128
    assert snap.memory_peak_source == "memory.current (no peak file)"
    assert snap.memory_current_bytes == 160432128
    assert snap.cpu_user_s == 5.123456


def test_v2_limits(tmp_path: Path) -> None:
    path = sample("cgroup_v2/end", tmp_path)
    (path / "cpu.max").write_text("max 100000\n")
    (path / "memory.max").write_text("2147483648\n")
    snap = read_snapshot(path)
    assert snap.cpu_limit is None
    assert snap.memory_limit_bytes == 2147483648


def test_v2_empty_io_stat_is_zero(tmp_path: Path) -> None:
    path = sample("cgroup_v2/end", tmp_path)
    (path / "io.stat").write_text("")
    assert read_snapshot(path).io_write_bytes == 0


# --- missing and broken files -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cgroup_v1/end", "cgroup_v2/end"])
def test_only_required_files(tmp_path: Path, name: str) -> None:
    path = sample(name, tmp_path)
    for file in path.iterdir():
        if file.name not in ("cgroup.version", "time"):
            file.unlink()
    snap = read_snapshot(path)
    assert snap.time == read_snapshot(SAMPLES / name).time
    assert (snap.cpu_user_s, snap.cpu_system_s) == (None, None)
    assert (snap.memory_peak_bytes, snap.memory_peak_source) == (None, "none")
    assert snap.memory_current_bytes is None
    assert snap.memory_limit_bytes is None
    assert snap.cpu_limit is None
    assert snap.io_write_bytes is None
    assert snap.max_rss_bytes is None


@pytest.mark.parametrize("name", ["cgroup_v1/end", "cgroup_v2/end"])
def test_garbage_files_give_none(tmp_path: Path, name: str) -> None:
    path = sample(name, tmp_path)
    for file in path.iterdir():
        if file.name not in ("cgroup.version", "time"):
            file.write_bytes(b"\xff\xfe garbage 12x\nWrite Write 8:0 rbytes=1 wbytes=zz\nVmHWM: lots kB\n")
    snap = read_snapshot(path)
    assert (snap.cpu_user_s, snap.cpu_system_s) == (None, None)
    assert (snap.memory_peak_bytes, snap.memory_peak_source) == (None, "none")
    assert snap.memory_limit_bytes is None
    assert snap.cpu_limit is None
    assert snap.io_write_bytes is None
    assert snap.max_rss_bytes is None


def test_proc_status_without_vmhwm(tmp_path: Path) -> None:
    # A zombie or kernel thread has no Vm* lines.
    path = sample("cgroup_v2/end", tmp_path)
    (path / "proc.status").write_text("Name:\tsyslog-ng\nState:\tZ (zombie)\nPid:\t9\n")
    assert read_snapshot(path).max_rss_bytes is None


def test_missing_version_names_directory(tmp_path: Path) -> None:
    path = sample("cgroup_v2/end", tmp_path)
    (path / "cgroup.version").unlink()
    with pytest.raises(ValueError, match=r"cgroup\.version") as err:
        read_snapshot(path)
    assert str(path) in str(err.value)


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"cgroup\.version"):
        read_snapshot(tmp_path / "nonexistent")


@pytest.mark.parametrize("content", ["3\n", "two\n", ""])
def test_bad_version(tmp_path: Path, content: str) -> None:
    path = sample("cgroup_v2/end", tmp_path)
    (path / "cgroup.version").write_text(content)
    with pytest.raises(ValueError, match="expected 1 or 2"):
        read_snapshot(path)


def test_missing_time_falls_back_to_mtime(tmp_path: Path) -> None:
    path = sample("cgroup_v2/end", tmp_path)
    (path / "time").unlink()
    os.utime(path / "cgroup.version", (1700000170.5, 1700000170.5))
    assert read_snapshot(path).time == 1700000170.5


# --- cpu_delta ---------------------------------------------------------------------------------------------


def test_cpu_delta_v1() -> None:
    start = read_snapshot(SAMPLES / "cgroup_v1" / "start")
    end = read_snapshot(SAMPLES / "cgroup_v1" / "end")
    user, system = cpu_delta(start, end)
    assert user == pytest.approx((490 - 12) / HZ)
    assert system == pytest.approx((2010 - 30) / HZ)


def test_cpu_delta_v2() -> None:
    start = read_snapshot(SAMPLES / "cgroup_v2" / "start")
    end = read_snapshot(SAMPLES / "cgroup_v2" / "end")
    user, system = cpu_delta(start, end)
    assert user == pytest.approx(5.003456)  # (5123456 - 120000) us
    assert system == pytest.approx(21.427409)  # (21719754 - 292345) us


def test_cpu_delta_unknown(tmp_path: Path) -> None:
    start = read_snapshot(SAMPLES / "cgroup_v2" / "start")
    path = sample("cgroup_v2/end", tmp_path)
    (path / "cpu.stat").write_text("usage_usec 26843210\nuser_usec 5123456\n")  # no system_usec
    user, system = cpu_delta(start, read_snapshot(path))
    assert user == pytest.approx(5.003456)
    assert system is None


def test_cpu_delta_refuses_mixed_versions_and_decreases() -> None:
    v1 = read_snapshot(SAMPLES / "cgroup_v1" / "end")
    v2_start = read_snapshot(SAMPLES / "cgroup_v2" / "start")
    v2_end = read_snapshot(SAMPLES / "cgroup_v2" / "end")
    assert cpu_delta(v1, v2_end) == (None, None)
    # Counters never go down unless the cgroup was recreated; a negative CPU time would be nonsense.
    assert cpu_delta(v2_end, v2_start) == (None, None)


# --- OOM kills: v1 memory.oom_control, v2 memory.events ------------------------------------------------------


@pytest.mark.parametrize("version", [1, 2])
def test_oom_snapshot_counts_the_kill_at_the_limit(version: int) -> None:
    """samples/cgroup_v<n>/oom: a 12 MiB limit reached, and the kernel's OOM killer ran once."""
    snap = read_snapshot(SAMPLES / f"cgroup_v{version}" / "oom")
    assert snap.oom_kills == 1
    assert snap.memory_limit_bytes == snap.memory_peak_bytes == 12 * 2**20


@pytest.mark.parametrize("version", [1, 2])
def test_no_oom_file_means_unknown_not_zero(version: int) -> None:
    assert read_snapshot(SAMPLES / f"cgroup_v{version}" / "end").oom_kills is None


def test_v1_oom_control_without_a_kill_count(tmp_path: Path) -> None:
    """Kernels before 4.13 have no oom_kill line: unknown, not zero."""
    path = sample("cgroup_v1/oom", tmp_path)
    (path / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\n")
    assert read_snapshot(path).oom_kills is None


def test_v2_memory_events_none_killed(tmp_path: Path) -> None:
    path = sample("cgroup_v2/oom", tmp_path)
    (path / "memory.events").write_text("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n")
    assert read_snapshot(path).oom_kills == 0


def test_oom_kills_between_start_and_end(tmp_path: Path) -> None:
    end = read_snapshot(SAMPLES / "cgroup_v1" / "oom")
    start = sample("cgroup_v1/oom", tmp_path)
    (start / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    assert oom_kills_between(read_snapshot(start), end) == 1
    assert oom_kills_between(None, end) == 1  # the daemon died before the start snapshot
    assert oom_kills_between(end, end) == 0
    assert oom_kills_between(None, read_snapshot(SAMPLES / "cgroup_v1" / "end")) is None
    assert oom_kills_between(end, None) is None


# --- the supervisor's lists ----------------------------------------------------------------------------------


def test_snapshot_files() -> None:
    assert "cpuacct.stat" in snapshot_files(1)
    assert "memory.peak" in snapshot_files(2)
    with pytest.raises(ValueError, match="expected 1 or 2"):
        snapshot_files(3)


@pytest.mark.parametrize("name", ["cgroup_v1/end", "cgroup_v2/end", "cgroup_v1/oom", "cgroup_v2/oom"])
def test_samples_only_hold_listed_files(name: str) -> None:
    version = int((SAMPLES / name / "cgroup.version").read_text())
    allowed = set(snapshot_files(version)) | {"cgroup.version", "time", "proc.status"}
    assert {file.name for file in (SAMPLES / name).iterdir()} <= allowed


def supervisor_lists(name: str) -> list[list[str]]:
    """Each value supervise.sh gives the variable (v2's first, then v1's), as its words."""
    values = re.findall(rf'^\s*{name}="([^"]*)"', SUPERVISOR.read_text(), re.MULTILINE)
    return [value.split() for value in values]


def test_supervisor_copies_every_file_from_its_controller() -> None:
    """What supervise.sh copies is what the reader reads: v1 from each controller's directory, v2 from one tree."""
    expected = [
        sorted(f"{directory}/{name}" if directory else name for name, directory in layout.FILES.items())
        for layout in (cgroup.V2, cgroup.V1)
    ]
    assert [sorted(files) for files in supervisor_lists("cgroup_files")] == expected


# --- the container's own cgroup, read live ---------------------------------------------------------------------

# Where each file of a snapshot sits in a live v1 tree: one directory per controller (these machines).
V1_CONTROLLERS = {
    "cpuacct": ["cpuacct.stat", "cpuacct.usage"],
    "cpu": ["cpu.cfs_quota_us", "cpu.cfs_period_us"],
    "memory": [
        "memory.max_usage_in_bytes",
        "memory.usage_in_bytes",
        "memory.limit_in_bytes",
        "memory.stat",
        "memory.oom_control",
    ],
    "blkio": ["blkio.throttle.io_service_bytes"],
}


def own_root(tmp_path: Path, version: int, sample: str = "end") -> Path:
    """A container's /sys/fs/cgroup as it sees its own cgroup, from a sample snapshot's files: v1 mounts each
    controller in its own directory, v2 has one tree with cgroup.controllers at its root."""
    source = SAMPLES / f"cgroup_v{version}" / sample
    root = tmp_path / f"v{version}-{sample}"
    if version == 2:
        shutil.copytree(source, root)
        (root / "cgroup.controllers").write_text("cpu io memory pids\n")
        return root
    for controller, names in V1_CONTROLLERS.items():
        (root / controller).mkdir(parents=True)
        for name in names:
            if (source / name).exists():
                shutil.copy(source / name, root / controller / name)
    return root


def test_own_v1_reads_each_controllers_directory(tmp_path: Path) -> None:
    own = cgroup.own(own_root(tmp_path, 1))
    assert own.version == 1
    assert own.cpu_seconds() == (490 / HZ, 2010 / HZ)
    assert own.cpu_total_s() == 25.034719562  # cpuacct.usage in ns
    assert own.memory() == cgroup.Memory(177209344, "memory.max_usage_in_bytes", 2 * 2**30)
    assert own.limits() == (8.0, 2 * 2**30)  # 800000 / 100000, memory.limit_in_bytes
    assert own.io_write_bytes() == 1048576 + 52428800


def test_own_v2_reads_one_tree(tmp_path: Path) -> None:
    own = cgroup.own(own_root(tmp_path, 2))
    assert own.version == 2
    assert own.cpu_seconds() == (5.123456, 21.719754)
    assert own.cpu_total_s() == 26.84321  # usage_usec
    assert own.memory() == cgroup.Memory(186646528, "memory.peak", None)  # memory.max is "max"
    assert own.limits() == (8.0, None)
    assert own.io_write_bytes() == 2097152 + 73400320


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("sample", ["end", "oom"])
def test_own_reads_what_a_snapshot_reads(tmp_path: Path, version: int, sample: str) -> None:
    """One reader per version: live and from the supervisor's copy, the same files give the same figures."""
    snapshot = read_snapshot(SAMPLES / f"cgroup_v{version}" / sample)
    live = cgroup.own(own_root(tmp_path, version, sample)).snapshot(snapshot.time, snapshot.max_rss_bytes)
    assert live == replace(snapshot, udp=None)


def test_own_is_decided_once_per_root(tmp_path: Path) -> None:
    root = own_root(tmp_path, 1)
    first = cgroup.own(root)
    (root / "cgroup.controllers").write_text("cpu memory\n")
    assert cgroup.own(root) is first and first.version == 1


def test_own_v2_ignores_a_v1_directory_beside_it(tmp_path: Path) -> None:
    root = own_root(tmp_path, 2)
    (root / "cpuacct").mkdir()
    (root / "cpuacct" / "cpuacct.stat").write_text("user 99999\nsystem 99999\n")
    assert cgroup.own(root).cpu_seconds() == (5.123456, 21.719754)


def test_own_v1_unlimited(tmp_path: Path) -> None:
    root = own_root(tmp_path, 1)
    (root / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    # What the kernel shows for "no limit" with 4 KiB pages.
    (root / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    assert cgroup.own(root).limits() == (None, None)


def test_own_v2_limited_and_unlimited(tmp_path: Path) -> None:
    root = own_root(tmp_path, 2)
    (root / "cpu.max").write_text("150000 100000\n")
    (root / "memory.max").write_text("536870912\n")
    assert cgroup.own(root).limits() == (1.5, 2**29)
    (root / "cpu.max").write_text("max 100000\n")
    (root / "memory.max").write_text("max\n")
    assert cgroup.own(root).limits() == (None, None)


def test_own_v2_without_a_peak_file_says_so(tmp_path: Path) -> None:
    root = own_root(tmp_path, 2, "no_peak")
    assert cgroup.own(root).memory() == cgroup.Memory(160432128, "memory.current (no peak file)", None)


@pytest.mark.parametrize("version", [1, 2])
def test_own_without_files_is_unknown(tmp_path: Path, version: int) -> None:
    root = tmp_path / str(version)
    root.mkdir()
    if version == 2:
        (root / "cgroup.controllers").touch()
    own = cgroup.own(root)
    assert own.version == version
    assert (own.cpu_seconds(), own.cpu_total_s(), own.limits()) == ((None, None), None, (None, None))
    assert own.memory() == cgroup.Memory(None, "none", None)


# --- samples.log: one block a second, the files the supervisor names ---------------------------------------------


def sample_block(version: int) -> list[str]:
    """A block's lines as supervise.sh appends them (its sample_files), from the end sample's files."""
    source = SAMPLES / f"cgroup_v{version}" / "end"
    files = (
        ["cpu.stat", "memory.current"]
        if version == 2
        else ["cpuacct/cpuacct.stat", "memory/memory.usage_in_bytes"]
    )
    return [
        f"{name} {line}" for name in files for line in (source / name.split("/")[-1]).read_text().splitlines()
    ]


def test_parse_sample_v1() -> None:
    assert cgroup.parse_sample(sample_block(1)) == (490 / HZ, 2010 / HZ, 150994944)


def test_parse_sample_v2() -> None:
    assert cgroup.parse_sample(sample_block(2)) == (5.123456, 21.719754, 160432128)


def test_parse_sample_of_nothing_is_unknown() -> None:
    assert cgroup.parse_sample([]) == (None, None, None)


def test_supervisor_samples_what_parse_sample_reads() -> None:
    assert supervisor_lists("sample_files") == [
        ["cpu.stat", "memory.current"],
        ["cpuacct/cpuacct.stat", "memory/memory.usage_in_bytes"],
    ]
