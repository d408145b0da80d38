"""Read a cgroup's figures: from a snapshot directory (`snapshots/<name>/` in the control directory, see
docs/DESIGN.md), or live from the container's own cgroup (`own()`), with one reader per cgroup version.

The daemon's supervisor copies the container's own cgroup files into a snapshot verbatim; this module turns
them into figures. Standard library only: it also runs inside the Debian containers with plain python3.

Every figure is optional: a file that is missing (older kernel, controller not enabled) or unparsable gives
None for that figure instead of failing the whole result. Only `cgroup.version` is required, because without
it we cannot tell which files to read.

Caveat for io_write_bytes: the kernel charges a write to every device that appears in the stat file, so on
stacked devices (device-mapper, md) the same bytes can be listed under the logical and the physical device.
We sum all devices, as `docker stats` does; compare runs on the same storage setup only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import ClassVar

from syslogbench.rig import procstat, snmp

# cgroup v1 reports "no memory limit" as PAGE_COUNTER_MAX * page size (9223372036854771712 with 4 KiB pages),
# whose exact value depends on the page size; no real limit comes near 4 EiB, so anything above is unlimited.
_V1_UNLIMITED_MEMORY = 2**62


@dataclass(frozen=True)
class Snapshot:
    version: int  # 1 or 2
    time: float  # epoch seconds when the supervisor took the snapshot
    cpu_user_s: float | None
    cpu_system_s: float | None
    memory_peak_bytes: int | None
    memory_peak_source: str  # which file memory_peak_bytes came from, or "none"
    memory_current_bytes: int | None
    memory_limit_bytes: int | None  # None when unlimited
    cpu_limit: float | None  # quota/period in CPUs; None when unlimited
    io_write_bytes: int | None
    max_rss_bytes: int | None  # VmHWM of the daemon process
    # Total CPU at nanosecond (v1 cpuacct.usage) or microsecond (v2 usage_usec) resolution: user and
    # system come in 10 ms ticks on v1, too coarse for a very short run.
    cpu_total_s: float | None = None
    # The kernel's UDP counters in the daemon's network namespace (/proc/net/snmp), None where not copied.
    udp: dict[str, int] | None = None
    # How many processes the kernel's OOM killer has killed in the cgroup (`oom_kill` in v1
    # memory.oom_control, Linux 4.13+, or v2 memory.events); None where the file was not copied.
    oom_kills: int | None = None
    # The daemon's cores' busy and stolen time since boot (/proc/stat), None where not copied.
    cores: procstat.CoreTimes | None = None


def snapshot_files(version: int) -> list[str]:
    """The cgroup file names the supervisor copies for this cgroup version (shared so both sides agree)."""
    if version not in LAYOUTS:
        raise ValueError(f"unknown cgroup version {version!r}; expected 1 or 2")
    return list(LAYOUTS[version].FILES)


def read_snapshot(path: Path) -> Snapshot:
    path = Path(path)
    layout = LAYOUTS[_read_version(path)]
    cg = layout(lambda name: _read_text(path / name))
    status = _read_text(path / "proc.status")
    cores = procstat.read(path, procstat.allowed_cores(status))
    return cg.snapshot(_read_time(path), _vm_hwm_bytes(status), snmp.read_udp(path), cores)


def cpu_delta(start: Snapshot, end: Snapshot) -> tuple[float | None, float | None]:
    """CPU seconds (user, system) the cgroup used between two snapshots; None where unknown."""
    # Counters from different cgroup versions are not comparable (v1 ticks vs v2 microseconds).
    if start.version != end.version:
        return None, None
    return _delta(start.cpu_user_s, end.cpu_user_s), _delta(start.cpu_system_s, end.cpu_system_s)


def _delta(start: float | None, end: float | None) -> float | None:
    if start is None or end is None:
        return None
    # Counters only grow; a decrease means the cgroup was recreated in between: the difference is meaningless.
    if end < start:
        return None
    return end - start


# --- the two layouts: one reader per cgroup version ----------------------------------------------------------

# A file's text by its name, None when it cannot be read: from a snapshot directory, a live cgroup tree or
# one block of samples.log.
Read = Callable[[str], "str | None"]


@dataclass(frozen=True)
class Memory:
    peak_bytes: int | None
    peak_source: str  # the file peak_bytes came from, as Snapshot.memory_peak_source
    limit_bytes: int | None  # None when unlimited


class Cgroup:
    """The figures of one cgroup, whatever its version; V1 and V2 say which file holds each."""

    version: ClassVar[int]
    # Each file a snapshot copies, and the directory it sits in under a live /sys/fs/cgroup ("" for v2's one
    # tree). The supervisor (daemons/_common/supervise.sh) copies the same list; a unit test keeps them in step.
    FILES: ClassVar[dict[str, str]]

    def __init__(self, read: Read) -> None:
        self.read = read

    @classmethod
    def live(cls, root: Path) -> Cgroup:
        return cls(lambda name: _read_text(root / cls.FILES[name] / name))

    def cpu_seconds(self) -> tuple[float | None, float | None]:
        """User and system CPU seconds."""
        raise NotImplementedError

    def cpu_total_s(self) -> float | None:
        """User + system CPU seconds at the cgroup's finest resolution: v1's cpuacct.stat counts 10 ms ticks,
        too coarse for a container that uses a few tens of milliseconds."""
        raise NotImplementedError

    def memory_current(self) -> int | None:
        raise NotImplementedError

    def memory(self) -> Memory:
        raise NotImplementedError

    def cpu_limit(self) -> float | None:
        """quota / period in CPUs; None when unlimited."""
        raise NotImplementedError

    def io_write_bytes(self) -> int | None:
        raise NotImplementedError

    def oom_kills(self) -> int | None:
        """How many processes the kernel's OOM killer has killed in the cgroup; None where not said."""
        raise NotImplementedError

    def limits(self) -> tuple[float | None, int | None]:
        """The CPUs and memory bytes the cgroup may use; None: unlimited."""
        return self.cpu_limit(), self.memory().limit_bytes

    def snapshot(
        self,
        time: float,
        max_rss: int | None,
        udp: dict[str, int] | None = None,
        cores: procstat.CoreTimes | None = None,
    ) -> Snapshot:
        user_s, system_s = self.cpu_seconds()
        memory = self.memory()
        return Snapshot(
            version=self.version,
            time=time,
            cpu_user_s=user_s,
            cpu_system_s=system_s,
            cpu_total_s=self.cpu_total_s(),
            memory_peak_bytes=memory.peak_bytes,
            memory_peak_source=memory.peak_source,
            memory_current_bytes=self.memory_current(),
            memory_limit_bytes=memory.limit_bytes,
            cpu_limit=self.cpu_limit(),
            io_write_bytes=self.io_write_bytes(),
            max_rss_bytes=max_rss,
            udp=udp,
            oom_kills=self.oom_kills(),
            cores=cores,
        )

    def peak(self, peak_file: str, current_file: str) -> tuple[int | None, str]:
        peak = _int(self.read(peak_file))
        if peak is not None:
            return peak, peak_file
        # memory.peak only exists from Linux 5.19; the usage at snapshot time is a lower bound, labelled so.
        current = _int(self.read(current_file))
        if current is not None:
            return current, f"{current_file} (no peak file)"
        return None, "none"


class V1(Cgroup):
    """cgroup v1 (hybrid, as on the project's machines): one directory per controller."""

    version = 1
    FILES = {
        "cpuacct.stat": "cpuacct",
        "cpuacct.usage": "cpuacct",
        "memory.max_usage_in_bytes": "memory",
        "memory.usage_in_bytes": "memory",
        "memory.limit_in_bytes": "memory",
        "memory.stat": "memory",
        "blkio.throttle.io_service_bytes": "blkio",
        "cpu.cfs_quota_us": "cpu",
        "cpu.cfs_period_us": "cpu",
        # oom_kill counts the kernel's OOM kills (Linux 4.13+): a daemon killed for memory is then named so,
        # rather than by what its senders saw (connection reset).
        "memory.oom_control": "memory",
    }

    def cpu_seconds(self) -> tuple[float | None, float | None]:
        # cpuacct.stat counts in USER_HZ ticks (not the kernel's HZ), which is what SC_CLK_TCK reports.
        ticks = _keyed_ints(self.read("cpuacct.stat"))
        hz = os.sysconf("SC_CLK_TCK")
        user, system = ticks.get("user"), ticks.get("system")
        return None if user is None else user / hz, None if system is None else system / hz

    def cpu_total_s(self) -> float | None:
        ns = _int(self.read("cpuacct.usage"))
        return None if ns is None else ns / 1_000_000_000

    def memory_current(self) -> int | None:
        return _int(self.read("memory.usage_in_bytes"))

    def memory(self) -> Memory:
        peak, source = self.peak("memory.max_usage_in_bytes", "memory.usage_in_bytes")
        limit = _int(self.read("memory.limit_in_bytes"))
        unlimited = limit is None or limit >= _V1_UNLIMITED_MEMORY or limit < 0
        return Memory(peak, source, None if unlimited else limit)

    def cpu_limit(self) -> float | None:
        return _cpu_limit(_int(self.read("cpu.cfs_quota_us")), _int(self.read("cpu.cfs_period_us")))

    def io_write_bytes(self) -> int | None:
        return _blkio_write_bytes(self.read("blkio.throttle.io_service_bytes"))

    def oom_kills(self) -> int | None:
        return _keyed_ints(self.read("memory.oom_control")).get("oom_kill")


class V2(Cgroup):
    """cgroup v2 (current Ubuntu, GitHub's runners): one tree, whose root holds cgroup.controllers."""

    version = 2
    FILES = {
        name: ""
        for name in (
            "cpu.stat",
            "memory.peak",
            "memory.current",
            "memory.max",
            "memory.stat",
            "io.stat",
            "cpu.max",
            "memory.events",  # oom_kill, as v1's memory.oom_control
        )
    }

    def cpu_seconds(self) -> tuple[float | None, float | None]:
        cpu = _keyed_ints(self.read("cpu.stat"))
        return _usec_to_s(cpu.get("user_usec")), _usec_to_s(cpu.get("system_usec"))

    def cpu_total_s(self) -> float | None:
        return _usec_to_s(_keyed_ints(self.read("cpu.stat")).get("usage_usec"))

    def memory_current(self) -> int | None:
        return _int(self.read("memory.current"))

    def memory(self) -> Memory:
        peak, source = self.peak("memory.peak", "memory.current")
        return Memory(peak, source, _int_or_max(self.read("memory.max")))

    def cpu_limit(self) -> float | None:
        return _cpu_max(self.read("cpu.max"))

    def io_write_bytes(self) -> int | None:
        return _io_stat_write_bytes(self.read("io.stat"))

    def oom_kills(self) -> int | None:
        return _keyed_ints(self.read("memory.events")).get("oom_kill")


LAYOUTS: dict[int, type[Cgroup]] = {1: V1, 2: V2}
ROOT = Path("/sys/fs/cgroup")


@cache
def own(root: Path = ROOT) -> Cgroup:
    """The cgroup of the container this runs in, read live. v1 or v2 is decided here, once per process, as the
    supervisor decides it: v2's single tree holds cgroup.controllers at its root."""
    layout = V2 if (root / "cgroup.controllers").exists() else V1
    return layout.live(root)


def oom_kills_between(start: Snapshot | None, end: Snapshot | None) -> int | None:
    """OOM kills in the daemon's cgroup during the run: end minus start (the whole count when there was no
    start snapshot, e.g. the daemon died before the start signal); None where the kernel did not say."""
    if end is None or end.oom_kills is None:
        return None
    before = start.oom_kills if start is not None and start.oom_kills is not None else 0
    return max(end.oom_kills - before, 0)


# --- the required files -------------------------------------------------------------------------------------


def _read_version(path: Path) -> int:
    text = _read_text(path / "cgroup.version")
    if text is None:
        raise ValueError(f"{path}: no readable cgroup.version; not a cgroup snapshot directory")
    try:
        version = int(text.strip())
    except ValueError:
        version = 0
    if version not in (1, 2):
        raise ValueError(f"{path}: cgroup.version holds {text.strip()!r}; expected 1 or 2")
    return version


def _read_time(path: Path) -> float:
    value = _float(_read_text(path / "time"))
    if value is not None:
        return value
    # The type promises a float and a lost timestamp should not void the CPU and memory figures. The
    # supervisor writes cgroup.version in the same moment, so its modification time is a close substitute.
    return (path / "cgroup.version").stat().st_mtime


# --- single-file parsers: text in, figure or None out -------------------------------------------------------


def _read_text(file: Path) -> str | None:
    try:
        return file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError:
        return None


def _float(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text.strip())
    except ValueError:
        return None


def _keyed_ints(text: str | None) -> dict[str, int]:
    """`key value` lines (cpu.stat, cpuacct.stat, memory.stat); lines that do not parse are skipped."""
    values: dict[str, int] = {}
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) == 2:
            value = _int(parts[1])
            if value is not None:
                values[parts[0]] = value
    return values


def _usec_to_s(usec: int | None) -> float | None:
    return None if usec is None else usec / 1_000_000


def _int_or_max(text: str | None) -> int | None:
    """A v2 limit file: a number, or "max" for unlimited (None either way when it does not parse)."""
    if text is None or text.strip() == "max":
        return None
    return _int(text)


def _cpu_limit(quota_us: int | None, period_us: int | None) -> float | None:
    # A quota of -1 (or any non-positive value) means no CPU limit.
    if quota_us is None or period_us is None or quota_us <= 0 or period_us <= 0:
        return None
    return quota_us / period_us


def _cpu_max(text: str | None) -> float | None:
    """cpu.max is "<quota> <period>" with quota "max" when unlimited."""
    parts = (text or "").split()
    if len(parts) != 2 or parts[0] == "max":
        return None
    return _cpu_limit(_int(parts[0]), _int(parts[1]))


def _blkio_write_bytes(text: str | None) -> int | None:
    # Lines are "<maj:min> <op> <bytes>" plus a final "Total <bytes>" that also counts reads, so sum the
    # per-device Write lines only. The Total line is always there ("Total 0" when no I/O happened), so a file
    # without one, or with any other kind of line, is not what we think it is.
    if text is None:
        return None
    total, seen_total = 0, False
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "Total" and _int(parts[1]) is not None:
            seen_total = True
        elif len(parts) == 3 and _is_device(parts[0]) and _int(parts[2]) is not None:
            if parts[1] == "Write":
                total += int(parts[2])
        elif parts:
            return None
    return total if seen_total else None


def _io_stat_write_bytes(text: str | None) -> int | None:
    # Lines are "<maj:min> rbytes=.. wbytes=.. rios=.. ..."; an empty file means no I/O happened yet.
    if text is None:
        return None
    total = 0
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        fields = dict(field.partition("=")[::2] for field in parts[1:])
        wbytes = _int(fields.get("wbytes"))
        if not _is_device(parts[0]) or wbytes is None:
            return None
        total += wbytes
    return total


def _is_device(text: str) -> bool:
    major, colon, minor = text.partition(":")
    return colon == ":" and major.isdigit() and minor.isdigit()


def _vm_hwm_bytes(text: str | None) -> int | None:
    # "VmHWM:    123456 kB"; the kernel's "kB" is KiB. Kernel threads and zombies have no VmHWM line.
    for line in (text or "").splitlines():
        if line.startswith("VmHWM:"):
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                kib = _int(parts[1])
                return None if kib is None else kib * 1024
            return None
    return None


def parse_sample(lines: list[str]) -> tuple[float | None, float | None, int | None]:
    """One block of the supervisor's samples.log: `<file> <content line>` per line -> user s, system s, memory."""
    files: dict[str, list[str]] = {}
    for line in lines:
        name, _, content = line.partition(" ")
        files.setdefault(name.rsplit("/", 1)[-1], []).append(content)
    text = {name: "\n".join(contents) for name, contents in files.items()}
    # The block names its own files: the supervisor samples v2's cpu.stat, or v1's cpuacct.stat.
    cg = (V2 if "cpu.stat" in text else V1)(text.get)
    return (*cg.cpu_seconds(), cg.memory_current())
