"""Parse a cgroup snapshot directory (`snapshots/<name>/` in the control directory, see docs/DESIGN.md).

The daemon's supervisor copies the container's own cgroup files there verbatim; this module turns them into
figures. Standard library only: it also runs inside the Debian containers with plain python3.

Every figure is optional: a file that is missing (older kernel, controller not enabled) or unparsable gives
None for that figure instead of failing the whole result. Only `cgroup.version` is required, because without
it we cannot tell which files to read.

Caveat for io_write_bytes: the kernel charges a write to every device that appears in the stat file, so on
stacked devices (device-mapper, md) the same bytes can be listed under the logical and the physical device.
We sum all devices, as `docker stats` does; compare runs on the same storage setup only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from syslogbench.rig import snmp

# Files copied from the cgroup directory, per cgroup version. The supervisor copies whichever exist.
_V1_FILES = [
    "cpuacct.stat",
    "cpuacct.usage",
    "memory.max_usage_in_bytes",
    "memory.usage_in_bytes",
    "memory.limit_in_bytes",
    "memory.stat",
    "blkio.throttle.io_service_bytes",
    "cpu.cfs_quota_us",
    "cpu.cfs_period_us",
    "memory.oom_control",
]
_V2_FILES = [
    "cpu.stat",
    "memory.peak",
    "memory.current",
    "memory.max",
    "memory.stat",
    "io.stat",
    "cpu.max",
    "memory.events",
]

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


def snapshot_files(version: int) -> list[str]:
    """The cgroup file names the supervisor copies for this cgroup version (shared so both sides agree)."""
    if version == 1:
        return list(_V1_FILES)
    if version == 2:
        return list(_V2_FILES)
    raise ValueError(f"unknown cgroup version {version!r}; expected 1 or 2")


def read_snapshot(path: Path) -> Snapshot:
    path = Path(path)
    version = _read_version(path)
    time = _read_time(path)
    max_rss = _vm_hwm_bytes(_read_text(path / "proc.status"))
    read = _read_v1 if version == 1 else _read_v2
    return replace(read(path, time, max_rss), udp=snmp.read_udp(path))


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


# --- the two layouts ---------------------------------------------------------------------------------------


def _read_v1(path: Path, time: float, max_rss: int | None) -> Snapshot:
    user_s, system_s = _cpuacct_stat_seconds(_read_text(path / "cpuacct.stat"))
    current = _int_file(path / "memory.usage_in_bytes")
    peak, peak_source = _peak(path, "memory.max_usage_in_bytes", "memory.usage_in_bytes", current)
    limit = _v1_limit(_int_file(path / "memory.limit_in_bytes"))
    return Snapshot(
        version=1,
        time=time,
        cpu_user_s=user_s,
        cpu_system_s=system_s,
        cpu_total_s=_ns_to_s(_int_file(path / "cpuacct.usage")),
        memory_peak_bytes=peak,
        memory_peak_source=peak_source,
        memory_current_bytes=current,
        memory_limit_bytes=limit,
        cpu_limit=_cpu_limit(_int_file(path / "cpu.cfs_quota_us"), _int_file(path / "cpu.cfs_period_us")),
        io_write_bytes=_blkio_write_bytes(_read_text(path / "blkio.throttle.io_service_bytes")),
        max_rss_bytes=max_rss,
        oom_kills=_keyed_ints(_read_text(path / "memory.oom_control")).get("oom_kill"),
    )


def _v1_limit(limit: int | None) -> int | None:
    return None if limit is None or limit >= _V1_UNLIMITED_MEMORY or limit < 0 else limit


def _read_v2(path: Path, time: float, max_rss: int | None) -> Snapshot:
    cpu = _keyed_ints(_read_text(path / "cpu.stat"))
    current = _int_file(path / "memory.current")
    peak, peak_source = _peak(path, "memory.peak", "memory.current", current)
    return Snapshot(
        version=2,
        time=time,
        cpu_user_s=_usec_to_s(cpu.get("user_usec")),
        cpu_system_s=_usec_to_s(cpu.get("system_usec")),
        cpu_total_s=_usec_to_s(cpu.get("usage_usec")),
        memory_peak_bytes=peak,
        memory_peak_source=peak_source,
        memory_current_bytes=current,
        memory_limit_bytes=_int_or_max(_read_text(path / "memory.max")),
        cpu_limit=_cpu_max(_read_text(path / "cpu.max")),
        io_write_bytes=_io_stat_write_bytes(_read_text(path / "io.stat")),
        max_rss_bytes=max_rss,
        oom_kills=_keyed_ints(_read_text(path / "memory.events")).get("oom_kill"),
    )


def oom_kills_between(start: Snapshot | None, end: Snapshot | None) -> int | None:
    """OOM kills in the daemon's cgroup during the run: end minus start (the whole count when there was no
    start snapshot, e.g. the daemon died before the start signal); None where the kernel did not say."""
    if end is None or end.oom_kills is None:
        return None
    before = start.oom_kills if start is not None and start.oom_kills is not None else 0
    return max(end.oom_kills - before, 0)


def _peak(path: Path, peak_file: str, current_file: str, current: int | None) -> tuple[int | None, str]:
    peak = _int_file(path / peak_file)
    if peak is not None:
        return peak, peak_file
    # memory.peak only exists from Linux 5.19; the usage at snapshot time is a lower bound, labelled so.
    if current is not None:
        return current, f"{current_file} (no peak file)"
    return None, "none"


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


def _int_file(file: Path) -> int | None:
    return _int(_read_text(file))


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


def _cpuacct_stat_seconds(text: str | None) -> tuple[float | None, float | None]:
    # cpuacct.stat counts in USER_HZ ticks (not the kernel's HZ), which is what SC_CLK_TCK reports.
    ticks = _keyed_ints(text)
    hz = os.sysconf("SC_CLK_TCK")
    user, system = ticks.get("user"), ticks.get("system")
    return (
        None if user is None else user / hz,
        None if system is None else system / hz,
    )


def _ns_to_s(ns: int | None) -> float | None:
    return None if ns is None else ns / 1_000_000_000


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


def own_cpu_seconds(root: Path = Path("/sys/fs/cgroup")) -> tuple[float | None, float | None]:
    """User and system CPU seconds of the container this runs in, read live from its own cgroup."""
    if (root / "cgroup.controllers").exists():
        cpu = _keyed_ints(_read_text(root / "cpu.stat"))
        return _usec_to_s(cpu.get("user_usec")), _usec_to_s(cpu.get("system_usec"))
    return _cpuacct_stat_seconds(_read_text(root / "cpuacct" / "cpuacct.stat"))


def own_cpu_total_s(root: Path = Path("/sys/fs/cgroup")) -> float | None:
    """CPU seconds (user + system) of the container this runs in, at the cgroup's finest resolution: v1's
    cpuacct.stat counts 10 ms ticks, too coarse for a container that uses a few tens of milliseconds."""
    if (root / "cgroup.controllers").exists():
        return _usec_to_s(_keyed_ints(_read_text(root / "cpu.stat")).get("usage_usec"))
    return _ns_to_s(_int_file(root / "cpuacct" / "cpuacct.usage"))


@dataclass(frozen=True)
class OwnMemory:
    peak_bytes: int | None
    peak_source: str  # the file peak_bytes came from, as Snapshot.memory_peak_source
    limit_bytes: int | None  # None when unlimited


def own_memory(root: Path = Path("/sys/fs/cgroup")) -> OwnMemory:
    """The memory peak and limit of the container this runs in, read live from its own cgroup (the same
    files and fallbacks as a snapshot's)."""
    if (root / "cgroup.controllers").exists():
        peak, source = _peak(root, "memory.peak", "memory.current", _int_file(root / "memory.current"))
        return OwnMemory(peak, source, _int_or_max(_read_text(root / "memory.max")))
    memory = root / "memory"
    current = _int_file(memory / "memory.usage_in_bytes")
    peak, source = _peak(memory, "memory.max_usage_in_bytes", "memory.usage_in_bytes", current)
    return OwnMemory(peak, source, _v1_limit(_int_file(memory / "memory.limit_in_bytes")))


def parse_sample(lines: list[str]) -> tuple[float | None, float | None, int | None]:
    """One block of the supervisor's samples.log: `<file> <content line>` per line -> user s, system s, memory."""
    files: dict[str, list[str]] = {}
    for line in lines:
        name, _, content = line.partition(" ")
        files.setdefault(name.rsplit("/", 1)[-1], []).append(content)
    text = {name: "\n".join(contents) for name, contents in files.items()}
    if "cpu.stat" in text:
        cpu = _keyed_ints(text["cpu.stat"])
        user, system = _usec_to_s(cpu.get("user_usec")), _usec_to_s(cpu.get("system_usec"))
        return user, system, _int(text.get("memory.current"))
    user, system = _cpuacct_stat_seconds(text.get("cpuacct.stat"))
    return user, system, _int(text.get("memory.usage_in_bytes"))


def own_limits(root: Path = Path("/sys/fs/cgroup")) -> tuple[float | None, int | None]:
    """The CPUs (quota / period) and memory bytes the container this runs in may use; None: unlimited."""
    if (root / "cgroup.controllers").exists():
        return _cpu_max(_read_text(root / "cpu.max")), _int_or_max(_read_text(root / "memory.max"))
    cpu = _cpu_limit(
        _int_file(root / "cpu" / "cpu.cfs_quota_us"), _int_file(root / "cpu" / "cpu.cfs_period_us")
    )
    memory = _int_file(root / "memory" / "memory.limit_in_bytes")
    return cpu, None if memory is None or memory >= _V1_UNLIMITED_MEMORY or memory < 0 else memory
