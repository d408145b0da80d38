"""The report's plots, from the result files alone: matplotlib (Agg), each written as PNG and SVG.

Per scenario: throughput per profile (bar = median of the pass runs, whiskers = bootstrap 95%
interval of the median, one dot per run), CPU user and system seconds as stacked bars (with the
published 2014 medians beside ours for the seed2014 scenario), peak memory per profile (max RSS and
cgroup peak side by side), and one run over time (msgs/s, CPU, memory) from its `samples`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

from matplotlib import rc_context  # noqa: E402 - after choosing the backend
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from syslogbench.model.result import Result  # noqa: E402
from syslogbench.report import load as report  # noqa: E402
from syslogbench.report.load import Group  # noqa: E402
from syslogbench.report.published import seed2014  # noqa: E402

log = logging.getLogger(__name__)

DPI = 110
MIB = 2**20
RC = {
    "svg.hashsalt": "syslogbench",  # stable ids: the same results give the same SVG
    "font.size": 10,
    "axes.titlesize": 12,
    "axes.labelsize": 10.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
FAMILY_COLORS = {
    "baseline": "#8c8c8c",
    "rsyslog": "#1f77b4",
    "syslog-ng": "#ff7f0e",
    "other": "#2ca02c",
}
USER_COLOR = "#4c72b0"
SYSTEM_COLOR = "#dd8452"
RSS_COLOR = "#55a868"
PEAK_COLOR = "#c44e52"
SENDER_BOUND_HATCH = "///"
CAPTION_SIZE = 8.5
LABEL_CHARS = 16  # longer profile names are wrapped under their bar

# (caption, path of the PNG; the SVG is beside it)
Plot = tuple[str, Path]


# -- helpers ---------------------------------------------------------------------------------------


def family(group: Group) -> str:
    """The colour family: baseline, rsyslog, syslog-ng, or other."""
    if group.profile == report.BASELINE:
        return "baseline"
    for name in (group.profile, group.daemon):
        for known in ("syslog-ng", "rsyslog"):
            if name.lower().startswith(known):
                return known
    return "other"


def thousands(value: float, _pos: object = None) -> str:
    return f"{value:,.0f}"


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text) or "scenario"


def machine_caption(results: Sequence[Result]) -> str:
    hosts = list(
        dict.fromkeys(f"{r.host.cpu_model}, {r.host.cores} cores, kernel {r.host.kernel}" for r in results)
    )
    return ("Machine: " if len(hosts) == 1 else "Machines: ") + "; ".join(hosts)


def wrap(name: str, width: int = LABEL_CHARS) -> str:
    """A long profile name broken after a hyphen, so that neighbouring labels do not collide."""
    lines = []
    while len(name) > width and "-" in name[1:width]:
        cut = name.rindex("-", 1, width) + 1
        lines.append(name[:cut])
        name = name[cut:]
    return "\n".join([*lines, name])


def tick_label(group: Group) -> str:
    """The profile, n counted runs, and how many were not counted."""
    label = f"{wrap(group.profile)}\nn={group.throughput.n if group.throughput else 0}"
    skipped = sum(group.not_counted.values())
    return label + (f"\n+{skipped} not pass" if skipped else "")


def missing_label(group: Group) -> str:
    """What stands in for a bar that has no figure."""
    return "no pass run" if not group.counted else "not measured"


def figure_width(groups: Sequence[Group]) -> float:
    """Inches: room for each profile's label, and for the legend right of the axes."""
    return max(8.0, 1.5 * len(groups) + 4.5)


def tick_labels(groups: Sequence[Group]) -> list[str]:
    return [tick_label(g) for g in groups]


def outside_legend(ax: Axes, handles: Sequence[Any]) -> None:
    """The legend right of the axes, where it hides no bar and no label."""
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)


def offsets(count: int, width: float = 0.3) -> list[float]:
    """Evenly spread x offsets for the dots of `count` runs over one bar: no random jitter."""
    if count < 2:
        return [0.0] * count
    return [-width / 2 + width * i / (count - 1) for i in range(count)]


def finish(fig: Figure, caption: str) -> None:
    fig.supxlabel(caption, fontsize=CAPTION_SIZE, color="0.3")


def save(fig: Figure, out_dir: Path, stem: str) -> Path:
    """fig as stem.png and stem.svg in out_dir; the PNG's path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    png = out_dir / f"{stem}.png"
    fig.savefig(png, dpi=DPI, metadata={"Software": None})
    fig.savefig(out_dir / f"{stem}.svg", metadata={"Date": None})
    return png


def profile_axis(ax: Axes, groups: Sequence[Group]) -> None:
    ax.set_xticks(range(len(groups)), tick_labels(groups))
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_xlabel("daemon profile (n = runs with verdict pass)")


def value_axis(ax: Axes, top: float, headroom: float, label: str, grouped_digits: bool = True) -> None:
    """The y axis of a bar chart: from 0 with room for the labels above the bars, and a light grid."""
    ax.set_ylim(0, (top or 1) * headroom)
    if grouped_digits:
        ax.yaxis.set_major_formatter(FuncFormatter(thousands))
    ax.set_ylabel(label)
    ax.grid(axis="y", color="0.9")
    ax.set_axisbelow(True)


# -- throughput ------------------------------------------------------------------------------------


def throughput_figure(scenario: str, groups: Sequence[Group], caption: str) -> Figure:
    fig = Figure(figsize=(figure_width(groups), 5.8), layout="constrained")
    ax = fig.add_subplot()
    baseline = report.baseline_group(groups)
    top = 0.0
    for i, group in enumerate(groups):
        t = group.throughput
        if t is None:
            ax.text(i, 0, missing_label(group), ha="center", va="bottom", color="0.35", fontsize=9)
            continue
        bound = bool(group.sender_bound_runs)
        ax.bar(
            i,
            t.median,
            width=0.62,
            color=FAMILY_COLORS[family(group)],
            alpha=0.85,
            edgecolor="black",
            linewidth=0.6,
            hatch=SENDER_BOUND_HATCH if bound else None,
        )
        values = group.values("msgs_per_s")
        bound = {run.run_id for run in group.sender_bound_runs}
        counted = [run for run in group.counted if run.throughput.msgs_per_s is not None]
        markers = ["^" if run.run_id in bound else "o" for run in counted]
        if t.ci_low is not None and t.ci_high is not None:
            ax.errorbar(
                i,
                t.median,
                yerr=[[t.median - t.ci_low], [t.ci_high - t.median]],
                fmt="none",
                ecolor="black",
                elinewidth=1.6,
                capsize=7,
                capthick=1.6,
                zorder=4,
            )
        for dx, value, marker in zip(offsets(len(values)), values, markers, strict=True):
            bound_dot = marker == "^"
            ax.scatter(
                i + dx,
                value,
                s=48 if bound_dot else 22,
                marker=marker,
                facecolor="crimson" if bound_dot else "white",
                edgecolor="black",
                linewidth=0.9,
                zorder=5,
            )
        label = [f"{t.median:,.0f}"]
        ratio = report.throughput_ratio(group, baseline)
        if ratio is not None and group is not baseline:
            label.append(f"{ratio.value:.0%} of baseline")
        if t.erratic and t.cov is not None:
            label.append(f"erratic: CoV {t.cov:.0%}")
        peak = max([t.median, *values, t.ci_high or 0])
        top = max(top, peak)
        ax.annotate(
            "\n".join(label),
            (i, peak),
            xytext=(0, 6),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=9,
            color="darkred" if t.erratic else "black",
        )
    if baseline and baseline.throughput:
        ax.axhline(baseline.throughput.median, color="0.4", linestyle="--", linewidth=1, zorder=0)
    value_axis(ax, top, 1.22, "throughput, messages per second")
    profile_axis(ax, groups)
    ax.set_title(f"Throughput per profile, scenario {scenario} (higher is better)")
    families = list(dict.fromkeys(family(g) for g in groups))
    handles: list[Any] = [Patch(facecolor=FAMILY_COLORS[f], edgecolor="black", label=f) for f in families]
    handles += [
        Line2D([], [], color="black", marker="_", markersize=12, linewidth=1.6, label="95% CI of the median"),
        Line2D([], [], color="black", marker="o", markerfacecolor="white", linestyle="", label="one run"),
    ]
    if any(g.sender_bound_runs for g in groups):
        handles += [
            Line2D(
                [],
                [],
                color="black",
                marker="^",
                markerfacecolor="crimson",
                linestyle="",
                label="sender-bound run",
            ),
            Patch(
                facecolor="white",
                edgecolor="black",
                hatch=SENDER_BOUND_HATCH,
                label="profile with a\nsender-bound run",
            ),
        ]
    if baseline:
        handles.append(Line2D([], [], color="0.4", linestyle="--", label="baseline median"))
    outside_legend(ax, handles)
    finish(fig, f"Bar: median msgs/s of the pass runs. {caption}")
    return fig


# -- CPU -------------------------------------------------------------------------------------------


def stacked_cpu(
    ax: Axes, missing: Sequence[str], user: Sequence[float | None], system: Sequence[float | None]
) -> float:
    """User and system seconds stacked, one bar each, the `missing` text where either is None."""
    top = 0.0
    for i, (u, s) in enumerate(zip(user, system, strict=True)):
        if u is None or s is None:
            ax.text(i, 0, missing[i], ha="center", va="bottom", color="0.35", fontsize=9)
            continue
        ax.bar(i, u, width=0.62, color=USER_COLOR, edgecolor="black", linewidth=0.5)
        ax.bar(i, s, width=0.62, bottom=u, color=SYSTEM_COLOR, edgecolor="black", linewidth=0.5)
        ax.annotate(
            f"{u + s:,.1f} s", (i, u + s), xytext=(0, 4), textcoords="offset points", ha="center", fontsize=9
        )
        top = max(top, u + s)
    value_axis(ax, top, 1.15, "CPU time, seconds", grouped_digits=False)
    return top


def cpu_figure(scenario: str, groups: Sequence[Group], caption: str) -> Figure:
    # The section may be "seed2014 on machine 2": the runs' own scenario says whether 2014 compares.
    with_seed = groups[0].runs[0].label == report.DEFAULT_SCENARIO
    width = figure_width(groups) + (6.5 if with_seed else 0)
    fig = Figure(figsize=(width, 5.8), layout="constrained")
    if with_seed:
        ratios = [figure_width(groups) - 2.5, 6.5]
        ours, theirs = fig.subplots(1, 2, gridspec_kw={"width_ratios": ratios})
    else:
        ours, theirs = fig.add_subplot(), None
    stacked_cpu(
        ours,
        [missing_label(g) for g in groups],
        [g.median("cpu_user_s") for g in groups],
        [g.median("cpu_system_s") for g in groups],
    )
    profile_axis(ours, groups)
    ours.set_title(f"This project: daemon CPU per profile, scenario {scenario}")
    if theirs is not None:
        medians = seed2014.medians()
        stacked_cpu(
            theirs,
            ["not measured"] * len(medians),
            [m.user_s for m in medians.values()],
            [m.system_s for m in medians.values()],
        )
        theirs.set_xticks(range(len(medians)), list(medians))
        for label in theirs.get_xticklabels():
            label.set_rotation(20)
            label.set_ha("right")
        theirs.set_xlabel("daemon (median of 3 runs, published)")
        theirs.set_title("Published 2014, on other hardware (E5-2620, 8 cores, VMware)")
    handles = [
        Patch(facecolor=USER_COLOR, edgecolor="black", label="user"),
        Patch(facecolor=SYSTEM_COLOR, edgecolor="black", label="system"),
    ]
    outside_legend(theirs if theirs is not None else ours, handles)
    finish(fig, f"Stacked bars: median user and system CPU seconds of the daemon's container. {caption}")
    return fig


# -- memory ----------------------------------------------------------------------------------------


def memory_figure(scenario: str, groups: Sequence[Group], caption: str) -> Figure:
    fig = Figure(figsize=(figure_width(groups), 5.8), layout="constrained")
    ax = fig.add_subplot()
    width = 0.36
    top = 0.0
    for i, group in enumerate(groups):
        if not group.counted:
            ax.text(i, 0, missing_label(group), ha="center", va="bottom", color="0.35", fontsize=9)
            continue
        for dx, metric, color in (
            (-width / 2, "max_rss_bytes", RSS_COLOR),
            (width / 2, "peak_bytes", PEAK_COLOR),
        ):
            value = group.median(metric)
            if value is None:
                ax.text(i + dx, 0, "n/a", ha="center", va="bottom", color="0.35", fontsize=8.5)
                continue
            mib = value / MIB
            ax.bar(i + dx, mib, width=width, color=color, edgecolor="black", linewidth=0.5)
            ax.annotate(
                f"{mib:,.0f}",
                (i + dx, mib),
                xytext=(0, 3),
                textcoords="offset points",
                ha="center",
                fontsize=8.5,
            )
            top = max(top, mib)
    value_axis(ax, top, 1.15, "memory, MiB")
    profile_axis(ax, groups)
    ax.set_title(f"Peak memory per profile, scenario {scenario} (lower is better)")
    handles = [
        Patch(facecolor=RSS_COLOR, edgecolor="black", label="max RSS of the daemon (VmHWM)"),
        Patch(facecolor=PEAK_COLOR, edgecolor="black", label="cgroup peak (includes page cache)"),
    ]
    outside_legend(ax, handles)
    finish(fig, f"Medians of the pass runs. {caption}")
    return fig


# -- one run over time -----------------------------------------------------------------------------


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
    fig = Figure(figsize=(10, 8.2), layout="constrained")
    rate_ax, cpu_ax, mem_ax = fig.subplots(3, 1, sharex=True)
    elapsed = result.elapsed_s

    rate_ax.step(
        *steps(s["t"], s["rate"], first),
        where="pre",
        color=FAMILY_COLORS["rsyslog"],
        linewidth=1.4,
        label="per sample",
    )
    overall = result.throughput.msgs_per_s
    if overall is not None:
        rate_ax.axhline(overall, color="0.3", linestyle="--", linewidth=1, label=f"whole run: {overall:,.0f}")
    rate_ax.set_ylabel("received, messages/s")
    rate_ax.yaxis.set_major_formatter(FuncFormatter(thousands))
    rate_ax.set_ylim(bottom=0)
    rate_ax.set_title("Throughput: lines received per second")

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
    cpu_ax.set_title("CPU of the daemon's container (1.0 = one core fully busy)")

    mem_ax.plot(s["t_mem"], s["mem"], color=PEAK_COLOR, linewidth=1.6, label="cgroup memory")
    mem_ax.set_ylabel("memory, MiB")
    mem_ax.yaxis.set_major_formatter(FuncFormatter(thousands))
    mem_ax.set_ylim(bottom=0)
    mem_ax.set_title("Memory of the daemon's container (cgroup, page cache included)")
    mem_ax.set_xlabel("time since the start signal, seconds")

    for ax in (rate_ax, cpu_ax, mem_ax):
        if elapsed is not None:
            ax.axvline(elapsed, color="black", linestyle=":", linewidth=1.2, label=f"done: {elapsed:.1f} s")
        ax.grid(color="0.9")
        ax.set_axisbelow(True)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    mem_ax.set_xlim(left=0)
    fig.suptitle(
        f"One run over time: {result.daemon.profile}, scenario {result.label}, verdict {result.verdict}\n"
        f"run {result.run_id}",
        fontsize=12,
    )
    finish(fig, f"Samples about once a second; rates are differences between samples. {caption}")
    return fig


def choose_run(results: Sequence[Result], run_id: str | None = None) -> Result | None:
    """The run with run_id if it has samples, else the latest run with samples; None if none has."""
    sampled = [r for r in results if has_samples(r)]
    if run_id is not None:
        sampled = [r for r in sampled if r.run_id == run_id]
    return max(sampled, key=report.finished_at, default=None)


# -- all of them -----------------------------------------------------------------------------------


def write_plots(
    results: Sequence[Result], out_dir: Path, scenario_id: str | None = None, run_id: str | None = None
) -> dict[str, list[Plot]]:
    """Every plot for every scenario (or only scenario_id); per scenario, (caption, PNG path)."""
    written: dict[str, list[Plot]] = {}
    if run_id is not None and choose_run(results, run_id) is None:
        log.warning("no run %s with samples: no over-time plot", run_id)
    with rc_context(RC):
        for scenario, groups in report.group_results(results, scenario_id).items():
            runs = [run for group in groups for run in group.runs]
            caption = machine_caption(runs)
            name = safe_name(scenario)
            plots: list[Plot] = []
            for kind, title, make in (
                ("throughput", "Throughput per profile", throughput_figure),
                ("cpu", "CPU user and system per profile", cpu_figure),
                ("memory", "Peak memory per profile", memory_figure),
            ):
                plots.append(
                    (
                        f"{title}, scenario {scenario}",
                        save(make(scenario, groups, caption), out_dir, f"{kind}-{name}"),
                    )
                )
            run = choose_run(runs, run_id)
            if run is not None:
                png = save(timeseries_figure(run, caption), out_dir, f"timeseries-{name}")
                plots.append((f"One run over time: {run.run_id}", png))
            written[scenario] = plots
    return written
