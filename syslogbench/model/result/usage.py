"""What the run used and achieved: its end, CPU, memory, I/O, rates and samples, and GNU time's line."""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median

from syslogbench.contract import Trigger
from syslogbench.model.result.plain import optional

SAMPLE_COLUMNS = ["t_s", "cpu_user_s", "cpu_system_s", "memory_bytes", "received"]


@dataclass
class End:
    trigger: str = Trigger.NOT_STARTED
    sec_fired_s: float | None = None
    done_spread_s: float | None = None


@dataclass
class Cpu:
    user_s: float | None = None
    system_s: float | None = None
    total_s: float | None = None  # at the cgroup's finest resolution; older results lack it
    percent: float | None = None

    @property
    def used_s(self) -> float | None:
        return None if self.user_s is None or self.system_s is None else self.user_s + self.system_s


@dataclass
class Memory:
    peak_bytes: float | None = None
    peak_source: str = "none"
    max_rss_bytes: float | None = None


@dataclass
class Io:
    write_bytes: float | None = None
    output_bytes: float | None = None


@dataclass
class Generators:
    send_s_max: float | None = None
    cpu_s_total: float | None = None
    cpu_share_of_send: float | None = None
    container_cpu_s: float | None = None
    tcp_congestion: str | None = optional()  # the senders' TCP congestion control; older results lack it


@dataclass
class SenderBound:
    value: bool | None = None
    reason: str = "not measured"


@dataclass
class Throughput:
    msgs_per_s: float | None = None
    mb_per_s: float | None = None


@dataclass
class Spread:
    min: float | None = None
    median: float | None = None
    max: float | None = None


@dataclass
class Rate:
    target_per_sender: int
    target_total: int
    achieved_per_sender: Spread = field(default_factory=Spread)
    achieved_total: float | None = None


@dataclass
class Samples:
    columns: list[str] = field(default_factory=lambda: list(SAMPLE_COLUMNS))
    rows: list[list[float | None]] = field(default_factory=list)

    def series(self) -> list[dict[str, float | None]]:
        """Each row by column name."""
        return [dict(zip(self.columns, row, strict=False)) for row in self.rows]


def rate_of(target: int, senders: int, achieved: list[float]) -> Rate:
    """Target and achieved send rates (msg/s), each sender's achieved rate as its ledger gives it."""
    return Rate(
        target_per_sender=target,
        target_total=target * senders,
        achieved_per_sender=Spread(
            min=min(achieved) if achieved else None,
            median=round(median(achieved), 1) if achieved else None,
            max=max(achieved) if achieved else None,
        ),
        # The senders send side by side: their rates add up to the load the daemon was offered.
        achieved_total=round(sum(achieved), 1) if achieved else None,
    )


def time_line(cpu: Cpu, elapsed: float | None, rss: float | None, rate: float | None) -> str:
    """Shaped like GNU time's default output, which the 2014 figures were, plus msg/s."""

    def num(value: float | None, fmt: str) -> str:
        return "?" if value is None else format(value, fmt)

    # GNU time truncates to hundredths (and whole percent), so 59.999 s is 0:59.99, never 0:60.00.
    hundredths = None if elapsed is None else int(elapsed * 100 + 1e-6)  # 68.24 * 100 is 6823.99...
    clock = "?" if hundredths is None else f"{hundredths // 6000}:{hundredths % 6000 / 100:05.2f}"
    percent = None if cpu.percent is None else int(cpu.percent)
    rss_kb = None if rss is None else rss / 1024
    return (
        f"{num(cpu.user_s, '.2f')}user {num(cpu.system_s, '.2f')}system {clock}elapsed "
        f"{num(percent, 'd')}%CPU (0avgtext+0avgdata {num(rss_kb, '.0f')}maxresident)k "
        f"{num(rate, ',.0f')} msg/s"
    )
