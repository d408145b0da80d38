"""One run over time, from its `samples`: msgs/s received, the daemon's CPU (user and system, cores busy)
and its container's memory, about once a second.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from syslogbench.model.result import Result
from syslogbench.report import load as report
from syslogbench.report.drawing import (
    MIB,
    PALETTE,
    PEAK_COLOR,
    SYSTEM_COLOR,
    USER_COLOR,
    finish,
    suptitle,
    thousands,
    title,
)


def sample_series(result: Result) -> dict[str, list[float]]:
    """Per sample interval: end time, msgs/s, CPU user and system (cores busy), memory MiB."""
    rows = result.samples.series()
    series: dict[str, list[float]] = {k: [] for k in ("t", "rate", "t_cpu", "user", "system", "t_mem", "mem")}
    for row in rows:
        if row.get("t_s") is not None and row.get("memory_bytes") is not None:
            series["t_mem"].append(row["t_s"])
            series["mem"].append(row["memory_bytes"] / MIB)
    for before, after in zip(rows, rows[1:], strict=False):
        if before.get("t_s") is None or after.get("t_s") is None:
            continue
        dt = after["t_s"] - before["t_s"]
        if dt <= 0:
            continue
        if before.get("received") is not None and after.get("received") is not None:
            series["t"].append(after["t_s"])
            series["rate"].append((after["received"] - before["received"]) / dt)
        cpu = ("cpu_user_s", "cpu_system_s")
        if all(before.get(k) is not None and after.get(k) is not None for k in cpu):
            series["t_cpu"].append(after["t_s"])
            series["user"].append((after["cpu_user_s"] - before["cpu_user_s"]) / dt)
            series["system"].append((after["cpu_system_s"] - before["cpu_system_s"]) / dt)
    return series


def steps(ends: Sequence[float], rates: Sequence[float], start: float) -> tuple[list[float], list[float]]:
    """x and y for a step="pre" line whose first step begins at start, not at the first interval's end."""
    if not ends:
        return [], []
    return [start, *ends], [rates[0], *rates]


def has_samples(result: Result) -> bool:
    return len(result.samples.rows) >= 2


def timeseries_figure(result: Result, caption: str) -> Figure:
    s = sample_series(result)
    first = next((row[0] for row in result.samples.rows if row and row[0] is not None), 0.0)
    fig = Figure(figsize=(10, 8.4), layout="constrained")
    rate_ax, cpu_ax, mem_ax = fig.subplots(3, 1, sharex=True)
    elapsed = result.elapsed_s

    rate_ax.step(
        *steps(s["t"], s["rate"], first), where="pre", color=PALETTE[0], linewidth=1.4, label="per sample"
    )
    overall = result.throughput.msgs_per_s
    if overall is not None:
        rate_ax.axhline(overall, color="0.3", linestyle="--", linewidth=1, label=f"whole run: {overall:,.0f}")
    rate_ax.set_ylabel("received, messages/s")
    rate_ax.yaxis.set_major_formatter(FuncFormatter(thousands))
    rate_ax.set_ylim(bottom=0)
    title(rate_ax, "Throughput: lines received per second")

    if s["t_cpu"]:
        t_cpu, user = steps(s["t_cpu"], s["user"], first)
        system = steps(s["t_cpu"], s["system"], first)[1]
        total = [u + y for u, y in zip(user, system, strict=True)]
        cpu_ax.fill_between(t_cpu, 0, user, step="pre", color=USER_COLOR, alpha=0.85, label="user")
        cpu_ax.fill_between(t_cpu, user, total, step="pre", color=SYSTEM_COLOR, alpha=0.85, label="system")
    else:
        cpu_ax.text(0.5, 0.5, "no CPU samples", transform=cpu_ax.transAxes, ha="center", color="0.35")
    cpu_ax.set_ylabel("daemon CPU, cores busy")
    cpu_ax.set_ylim(bottom=0)
    title(cpu_ax, "CPU of the daemon's container (1.0 = one core fully busy)")

    mem_ax.plot(s["t_mem"], s["mem"], color=PEAK_COLOR, linewidth=1.6, label="cgroup memory")
    mem_ax.set_ylabel("memory, MiB")
    mem_ax.yaxis.set_major_formatter(FuncFormatter(thousands))
    mem_ax.set_ylim(bottom=0)
    title(mem_ax, "Memory of the daemon's container (cgroup, page cache included)")
    mem_ax.set_xlabel("time since the start signal, seconds")

    for ax in (rate_ax, cpu_ax, mem_ax):
        if elapsed is not None:
            ax.axvline(elapsed, color="black", linestyle=":", linewidth=1.2, label=f"done: {elapsed:.1f} s")
        ax.grid(color="0.9")
        ax.set_axisbelow(True)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    mem_ax.set_xlim(left=0)
    suptitle(
        fig,
        f"One run over time: {result.daemon.profile}, scenario {result.label}, verdict {result.verdict}, "
        f"run {result.run_id}",
    )
    finish(fig, f"Samples about once a second; rates are differences between samples. {caption}")
    return fig


def choose_run(results: Sequence[Result], run_id: str | None = None) -> Result | None:
    """The run with run_id if it has samples, else the latest run with samples; None if none has."""
    sampled = [r for r in results if has_samples(r)]
    if run_id is not None:
        sampled = [r for r in sampled if r.run_id == run_id]
    return max(sampled, key=report.finished_at, default=None)
