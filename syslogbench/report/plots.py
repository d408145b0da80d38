"""The report's plots, from the result files alone: matplotlib (Agg), each written as PNG and SVG.

The version matrix, on the report's first screen: msgs/s and CPU seconds per million messages of every
daemon version, a panel per tuning (each on its own scale: no bar is set against one of another tuning),
beside the 2014 daemons as published, with the baseline receiver in a panel of its own. Every other figure
draws one section of one scenario, whose daemons are of one tuning (load.group_results).
Per scenario with a passing run: throughput per profile (bar = median of the pass runs, whiskers =
bootstrap 95% interval of the median, one dot per run; the baseline in its own panel), CPU user and
system seconds as stacked bars (with the published 2014 medians under ours for the seed scenario), peak
memory per profile (max RSS and cgroup peak side by side), and one run over time from its `samples`.

Every figure is at most MAX_WIDTH_IN wide, so that the page shows it at its own size, and no text is
smaller than MIN_FONT_PT: 9 pt at DPI 110 is 13.75 px.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import re
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
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
MAX_WIDTH_IN = 12.0  # 1,320 px: the HTML page's column at a 1,400 px window shows it unscaled
MIN_FONT_PT = 9.0
MIB = 2**20
RC = {
    "svg.hashsalt": "syslogbench",  # stable ids: the same results give the same SVG
    "font.size": 10,
    "axes.titlesize": 11.5,
    "axes.labelsize": 10.5,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 10,
    "figure.titlesize": 13,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
BASELINE_COLOR = "#8c8c8c"
PUBLISHED_COLOR = "#d9d9d9"
# Daemon families take these in the order of their names, so a new family needs no edit here.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
USER_COLOR = "#4c72b0"
SYSTEM_COLOR = "#dd8452"
RSS_COLOR = "#55a868"
PEAK_COLOR = "#c44e52"
SENDER_BOUND_HATCH = "///"
PUBLISHED_HATCH = ".."
CAPTION_SIZE = MIN_FONT_PT
LABEL_CHARS = 10  # longer profile names are wrapped under their bar: rsyslog-/8.2504
CUT_FACTOR = 3.0  # a published bar this many times the next tallest is cut, and says so
BAR_GID = "bar:"  # each bar's gid names what it shows, so a test can read the figure back

# (caption, path of the PNG; the SVG is beside it)
Plot = tuple[str, Path]
Colors = Mapping[str, str]


@dataclass(frozen=True)
class Written:
    """What write_plots wrote: the version matrix's chart (none without a seed run), then per scenario."""

    matrix: list[Plot]
    scenarios: dict[str, list[Plot]]
    capacity: list[Plot] = field(default_factory=list)  # report/capacity_plots.py: one per scenario searched
    capacity_folded: list[Plot] = field(
        default_factory=list
    )  # of the other tunings: users' configs, knob steps


# -- helpers ---------------------------------------------------------------------------------------


def family(group: Group) -> str:
    """The daemon family the results record (`daemon.name`): baseline, rsyslog, syslog-ng, ..."""
    return report.BASELINE if group.profile == report.BASELINE else group.daemon


def family_colors(families: Iterable[str]) -> dict[str, str]:
    """One colour per family, the baseline grey; the same families give the same colours."""
    named = sorted(set(families) - {report.BASELINE})
    colors = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(named)}
    return {report.BASELINE: BASELINE_COLOR, **colors}


def colors_of(groups: Sequence[Group], colors: Colors | None) -> Colors:
    return colors if colors is not None else family_colors(family(g) for g in groups)


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
    """A long profile name broken after a hyphen, and at a space (a user config's "(config <hash>)"), so
    that neighbouring labels do not collide."""
    if " " in name:
        return "\n".join(wrap(part, width) for part in name.split(" "))
    lines = []
    while len(name) > width and "-" in name[1:width]:
        cut = name.rindex("-", 1, width) + 1
        lines.append(name[:cut])
        name = name[cut:]
    return "\n".join([*lines, name])


def fit(text: str, width_in: float, size_pt: float) -> str:
    """text broken into lines that fit width_in at size_pt (an average glyph is about 0.55 em wide)."""
    chars = max(20, int(width_in * 72 / (size_pt * 0.55)))
    return "\n".join(textwrap.wrap(text, chars, break_on_hyphens=False))


def title(ax: Axes, text: str) -> None:
    """An axes title, left-aligned and wrapped to the axes: a centred long title runs off the figure."""
    width = ax.get_position().width * ax.figure.get_figwidth()
    ax.set_title(fit(text, width, RC["axes.titlesize"]), loc="left")


def suptitle(fig: Figure, text: str) -> None:
    size = float(RC["figure.titlesize"])
    fig.suptitle(fit(text, fig.get_figwidth(), size), x=0.01, ha="left", fontsize=size)


def tick_label(group: Group) -> str:
    """The profile, n counted runs, and how many were not counted."""
    label = f"{wrap(group.profile)}\nn={group.throughput.n if group.throughput else 0}"
    skipped = sum(group.not_counted.values())
    return label + (f"\n+{skipped} not pass" if skipped else "")


def missing_label(group: Group) -> str:
    """What stands in for a bar that has no figure."""
    return "no pass run" if not group.counted else "not measured"


def figure_width(count: int, legend: bool = True) -> float:
    """Inches: room for each of count labels, and for a legend right of the axes; never past MAX_WIDTH_IN."""
    return min(MAX_WIDTH_IN, max(7.0, 1.2 * count + (3.6 if legend else 1.5)))


def tick_labels(groups: Sequence[Group]) -> list[str]:
    return [tick_label(g) for g in groups]


def outside_legend(ax: Axes, handles: Sequence[Any]) -> None:
    """The legend right of the axes, where it hides no bar and no label."""
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def offsets(count: int, width: float = 0.3) -> list[float]:
    """Evenly spread offsets for the dots of `count` runs over one bar: no random jitter."""
    if count < 2:
        return [0.0] * count
    return [-width / 2 + width * i / (count - 1) for i in range(count)]


def finish(fig: Figure, caption: str) -> None:
    fig.supxlabel(fit(caption, fig.get_figwidth(), CAPTION_SIZE), fontsize=CAPTION_SIZE, color="0.3")


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


def missing_text(ax: Axes, x: float, text: str) -> None:
    ax.text(x, 0, text, ha="center", va="bottom", color="0.35", fontsize=MIN_FONT_PT)


def whisker(
    ax: Axes,
    at: float,
    median: float,
    low: float | None,
    high: float | None,
    label: str,
    across: bool = False,
) -> None:
    """The 95% interval of the median at position `at`, up a vertical bar or `across` a horizontal one;
    labelled `_ci:<label>` (hidden from legends) so that a test can read it back. None: no interval."""
    if low is None or high is None:
        return
    spread = [[median - low], [high - median]]
    if across:
        drawn = ax.errorbar(
            median, at, xerr=spread, fmt="none", ecolor="black", elinewidth=1.4, capsize=4, zorder=4
        )
    else:
        drawn = ax.errorbar(
            at,
            median,
            yerr=spread,
            fmt="none",
            ecolor="black",
            elinewidth=1.6,
            capsize=7,
            capthick=1.6,
            zorder=4,
        )
    drawn.set_label(f"_ci:{label}")


# -- throughput ------------------------------------------------------------------------------------


def throughput_bar(ax: Axes, i: int, group: Group, baseline: Group | None, colors: Colors) -> float:
    """One profile's bar, whiskers, dots and label at x = i; the height its label needs (0 for none)."""
    t = group.throughput
    if t is None:
        missing_text(ax, i, missing_label(group))
        return 0.0
    bound = {run.run_id for run in group.sender_bound_runs}
    ax.bar(
        i,
        t.median,
        width=0.62,
        color=colors[family(group)],
        alpha=0.85,
        edgecolor="black",
        linewidth=0.6,
        hatch=SENDER_BOUND_HATCH if bound else None,
        gid=f"{BAR_GID}{group.profile}",
    )
    whisker(ax, i, t.median, t.ci_low, t.ci_high, group.profile)
    values = group.values("msgs_per_s")
    counted = [run for run in group.counted if run.throughput.msgs_per_s is not None]
    for dx, value, run in zip(offsets(len(values)), values, counted, strict=True):
        bound_dot = run.run_id in bound
        ax.scatter(
            i + dx,
            value,
            s=48 if bound_dot else 22,
            marker="^" if bound_dot else "o",
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
    ax.annotate(
        "\n".join(label),
        (i, peak),
        xytext=(0, 6),
        textcoords="offset points",
        ha="center",
        va="bottom",
        fontsize=MIN_FONT_PT,
        color="darkred" if t.erratic else "black",
    )
    return peak


def throughput_panel(ax: Axes, groups: Sequence[Group], baseline: Group | None, colors: Colors) -> None:
    top = max((throughput_bar(ax, i, g, baseline, colors) for i, g in enumerate(groups)), default=0.0)
    value_axis(ax, top, 1.25, "throughput, messages per second")
    profile_axis(ax, groups)


def throughput_handles(groups: Sequence[Group], colors: Colors) -> list[Any]:
    families = list(dict.fromkeys(family(g) for g in groups))
    handles: list[Any] = [Patch(facecolor=colors[f], edgecolor="black", label=f) for f in families]
    if any(
        g.throughput and g.throughput.ci_low is not None and g.throughput.ci_high is not None for g in groups
    ):
        # Only where a whisker is drawn: one run per profile has no interval.
        handles.append(
            Line2D(
                [], [], color="black", marker="_", markersize=12, linewidth=1.6, label="95% CI of the median"
            )
        )
    handles.append(
        Line2D([], [], color="black", marker="o", markerfacecolor="white", linestyle="", label="one run")
    )
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
    return handles


def throughput_reading(groups: Sequence[Group]) -> str:
    """How to read the bars: all-out runs drain as fast as they can; a rate set by the senders caps them."""
    capped = any(run.rate and run.rate.target_per_sender for g in groups for run in g.runs)
    return "the senders' set rate caps it: not a maximum" if capped else "higher is better"


def throughput_figure(
    scenario: str, groups: Sequence[Group], caption: str, colors: Colors | None = None
) -> Figure:
    """The daemons' msgs/s; the baseline, some ten times faster, in a panel of its own scale."""
    colors = colors_of(groups, colors)
    baseline = report.baseline_group(groups)
    daemons = [g for g in groups if g is not baseline]
    fig = Figure(figsize=(figure_width(len(groups) + (1 if baseline else 0)), 6.0), layout="constrained")
    if baseline is not None and daemons:
        ours, own = fig.subplots(1, 2, gridspec_kw={"width_ratios": [len(daemons), 1.5]})
        throughput_panel(own, [baseline], baseline, colors)
        own.set_xlabel("")
        title(own, "Baseline receiver, on its own scale")
    else:
        ours, own = fig.add_subplot(), None
    throughput_panel(ours, daemons or groups, baseline, colors)
    suptitle(fig, f"Throughput per profile, scenario {scenario} ({throughput_reading(groups)})")
    outside_legend(own or ours, throughput_handles(groups, colors))
    finish(fig, f"Bar: median msgs/s of the pass runs. {caption}")
    return fig


# -- CPU -------------------------------------------------------------------------------------------


def stacked_cpu(
    ax: Axes,
    missing: Sequence[str],
    user: Sequence[float | None],
    system: Sequence[float | None],
    names: Sequence[str],
) -> None:
    """User and system seconds stacked, one bar each, the `missing` text where either is None.

    A bar CUT_FACTOR times taller than the next is cut at the axis top and labelled with its figure,
    so that it does not flatten the others (NXLog's 1,021 s in 2014 against 82 to 113 s)."""
    totals = [u + s for u, s in zip(user, system, strict=True) if u is not None and s is not None]
    ordered = sorted(totals, reverse=True)
    cut = len(ordered) > 1 and ordered[0] > CUT_FACTOR * ordered[1]
    top = ordered[1] * 1.6 if cut else max(totals, default=0.0)
    for i, (u, s) in enumerate(zip(user, system, strict=True)):
        if u is None or s is None:
            missing_text(ax, i, missing[i])
            continue
        ax.bar(
            i,
            u,
            width=0.62,
            color=USER_COLOR,
            edgecolor="black",
            linewidth=0.5,
            gid=f"{BAR_GID}user:{names[i]}",
        )
        ax.bar(
            i,
            s,
            width=0.62,
            bottom=u,
            color=SYSTEM_COLOR,
            edgecolor="black",
            linewidth=0.5,
            gid=f"{BAR_GID}system:{names[i]}",
        )
        if cut and u + s > top * 1.3:
            ax.text(
                i,
                top * 1.25,
                f"{u + s:,.0f} s\n({u:,.0f} user,\n{s:,.0f} system):\nbar cut",
                ha="center",
                va="top",
                fontsize=MIN_FONT_PT,
                bbox={"facecolor": "white", "edgecolor": "0.5", "boxstyle": "round"},
            )
            continue
        ax.annotate(
            f"{u + s:,.1f} s",
            (i, u + s),
            xytext=(0, 4),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=MIN_FONT_PT,
        )
    value_axis(ax, top, 1.3, "CPU time, seconds", grouped_digits=False)


def cpu_figure(scenario: str, groups: Sequence[Group], caption: str) -> Figure:
    # The section may be "seed2014 on machine 2": the runs' own scenario says whether 2014 compares.
    with_seed = groups[0].runs[0].label == report.DEFAULT_SCENARIO
    medians = seed2014.medians()
    width = figure_width(max(len(groups), len(medians) if with_seed else 0))
    fig = Figure(figsize=(width, 10.5 if with_seed else 5.8), layout="constrained")
    ours, theirs = fig.subplots(2, 1) if with_seed else (fig.add_subplot(), None)
    stacked_cpu(
        ours,
        [missing_label(g) for g in groups],
        [g.median("cpu_user_s") for g in groups],
        [g.median("cpu_system_s") for g in groups],
        [g.profile for g in groups],
    )
    profile_axis(ours, groups)
    title(ours, f"This project: daemon CPU per profile, scenario {scenario}")
    if theirs is not None:
        stacked_cpu(
            theirs,
            ["not measured"] * len(medians),
            [m.user_s for m in medians.values()],
            [m.system_s for m in medians.values()],
            list(medians),
        )
        theirs.set_xticks(range(len(medians)), list(medians))
        theirs.set_xlim(-0.6, len(medians) - 0.4)
        theirs.set_xlabel("daemon (median of 3 runs, published)")
        title(theirs, "Published 2014, on other hardware (E5-2620, 8 cores, VMware): a scale of its own")
    handles = [
        Patch(facecolor=USER_COLOR, edgecolor="black", label="user"),
        Patch(facecolor=SYSTEM_COLOR, edgecolor="black", label="system"),
    ]
    outside_legend(ours, handles)
    finish(fig, f"Stacked bars: median user and system CPU seconds of the daemon's container. {caption}")
    return fig


# -- memory ----------------------------------------------------------------------------------------


def memory_figure(scenario: str, groups: Sequence[Group], caption: str) -> Figure:
    fig = Figure(figsize=(figure_width(len(groups)), 6.0), layout="constrained")
    ax = fig.add_subplot()
    width = 0.36
    top = 0.0
    for i, group in enumerate(groups):
        if not group.counted:
            missing_text(ax, i, missing_label(group))
            continue
        for dx, metric, color in (
            (-width / 2, "max_rss_bytes", RSS_COLOR),
            (width / 2, "peak_bytes", PEAK_COLOR),
        ):
            value = group.median(metric)
            if value is None:
                missing_text(ax, i + dx, "n/a")
                continue
            mib = value / MIB
            ax.bar(
                i + dx,
                mib,
                width=width,
                color=color,
                edgecolor="black",
                linewidth=0.5,
                gid=f"{BAR_GID}{metric}:{group.profile}",
            )
            ax.annotate(
                f"{mib:,.0f}",
                (i + dx, mib),
                xytext=(0, 3),
                textcoords="offset points",
                ha="center",
                fontsize=MIN_FONT_PT,
            )
            top = max(top, mib)
    value_axis(ax, top, 1.15, "memory, MiB")
    profile_axis(ax, groups)
    suptitle(fig, f"Peak memory per profile, scenario {scenario} (lower is better)")
    handles = [
        Patch(facecolor=RSS_COLOR, edgecolor="black", label="max RSS of the\ndaemon (VmHWM)"),
        Patch(facecolor=PEAK_COLOR, edgecolor="black", label="cgroup peak (with\nthe page cache)"),
    ]
    outside_legend(ax, handles)
    finish(fig, f"Medians of the pass runs. {caption}")
    return fig


# -- the version matrix ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One bar of the version matrix: its label, colour, hatch, median, 95% interval and every run."""

    label: str
    color: str
    hatch: str | None
    median: float
    low: float | None
    high: float | None
    runs: Sequence[float]


def our_rows(groups: Sequence[Group], metric: str, colors: Colors) -> list[Row]:
    rows = []
    for group in groups:
        summary = group.summaries[metric]
        if summary is None:
            continue
        label = f"{group.profile} (n={summary.n})"
        color = colors[family(group)]
        rows.append(
            Row(label, color, None, summary.median, summary.ci_low, summary.ci_high, group.values(metric))
        )
    return rows


def published_rows(metric: str) -> list[Row]:
    """The 2014 daemons, each run's figure derived from its elapsed or CPU seconds, as the table does."""
    rows = []
    for daemon, runs in seed2014.RUNS.items():
        if metric == "msgs_per_s":
            values = [seed2014.MESSAGES_TOTAL / run.elapsed_s for run in runs]
        else:
            values = [(run.user_s + run.system_s) / seed2014.MESSAGES_TOTAL * 1e6 for run in runs]
        rows.append(
            Row(
                f"2014: {daemon} (n={len(runs)})",
                PUBLISHED_COLOR,
                PUBLISHED_HATCH,
                median(values),
                None,
                None,
                values,
            )
        )
    return rows


def horizontal_bars(ax: Axes, rows: Sequence[Row], spec: str) -> None:
    """rows top to bottom: a bar at the median, the whisker of its interval, a dot per run, the figure."""
    positions = list(range(len(rows)))[::-1]
    for y, row in zip(positions, rows, strict=True):
        ax.barh(
            y,
            row.median,
            height=0.64,
            color=row.color,
            hatch=row.hatch,
            edgecolor="black",
            linewidth=0.6,
            gid=f"{BAR_GID}{row.label}",
        )
        whisker(ax, y, row.median, row.low, row.high, row.label, across=True)
        for dy, value in zip(offsets(len(row.runs), 0.36), row.runs, strict=True):
            ax.scatter(value, y + dy, s=14, facecolor="white", edgecolor="black", linewidth=0.8, zorder=5)
        ax.annotate(
            f"{row.median:{spec}}",
            (reach(row), y),
            xytext=(5, 0),
            textcoords="offset points",
            va="center",
            fontsize=MIN_FONT_PT,
        )
    ax.set_yticks(positions, [row.label for row in rows])
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.grid(axis="x", color="0.9")
    ax.set_axisbelow(True)


def reach(row: Row) -> float:
    """How far right a row draws: its bar, its whisker or its last dot."""
    return max([row.median, *row.runs, row.high or 0])


def linear_axis(ax: Axes, rows: Sequence[Row]) -> None:
    ax.set_xlim(0, max(map(reach, rows)) * 1.22)
    ax.xaxis.set_major_formatter(FuncFormatter(thousands))


def cpu_axis(ax: Axes, rows: Sequence[Row]) -> None:
    """A linear scale of its own, with the rows' names shown once, on the throughput panel beside it."""
    linear_axis(ax, rows)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:g}"))
    ax.tick_params(axis="y", labelleft=False)


def tuning_panel(groups: Sequence[Group], colors: Colors) -> tuple[list[Row], list[Row], str, str]:
    """One tuning's daemons: their msgs/s and CPU s per million messages, titled with the tuning."""
    daemons = [g for g in groups if g.profile != report.BASELINE]
    words = report.tuning_words(report.section_tuning(groups))
    return (
        our_rows(daemons, "msgs_per_s", colors),
        our_rows(daemons, "cpu_s_per_million", colors),
        f"This machine, {words}: messages per second (higher is better)",
        f"Daemon CPU s per million messages, {words} (lower is better)",
    )


def versions_figure(
    scenario: str,
    groups: Sequence[Group],
    caption: str,
    colors: Colors | None = None,
    tuned: Sequence[Sequence[Group]] = (),
) -> Figure:
    """The version matrix: our daemons' msgs/s and CPU s per million messages (groups, then a panel for each
    of the other tunings' sections in tuned) beside the 2014 daemons', in the same units, and the baseline
    receiver in panels of its own under them."""
    every = [g for section in (groups, *tuned) for g in section]
    colors = colors_of(every, colors)
    baseline = next((b for section in (groups, *tuned) if (b := report.baseline_group(section))), None)
    daemons = [g for g in every if g.profile != report.BASELINE]
    base_rates = our_rows([baseline], "msgs_per_s", colors) if baseline else []
    base_cpus = our_rows([baseline], "cpu_s_per_million", colors) if baseline else []
    fig = Figure(figsize=(MAX_WIDTH_IN, 6.6 + 2.2 * len(tuned)), layout="constrained")
    # This machine's runs of each tuning and 2014's (8 cores, other hardware) on scales of their own: one axis
    # would set their lengths against each other, which neither two tunings nor the two machines allow.
    candidates = [
        *(tuning_panel(section, colors) for section in (groups, *tuned)),
        (
            published_rows("msgs_per_s"),
            published_rows("cpu_s_per_million"),
            "2014, published, on 8 cores: messages per second",
            "2014: CPU s per million messages",
        ),
        (
            base_rates,
            base_cpus,
            "The baseline receiver, on a scale of its own",
            "The baseline: CPU s per million messages",
        ),
    ]
    panels = [panel for panel in candidates if panel[0] and panel[1]]
    heights = [max(len(panel[0]), 1.5) for panel in panels]
    axes = fig.subplots(
        len(panels), 2, gridspec_kw={"height_ratios": heights, "width_ratios": [1.25, 1]}, squeeze=False
    )
    for (rate_rows, cpu_rows, rate_title, cpu_title), (rate_ax, cpu_ax) in zip(panels, axes, strict=True):
        horizontal_bars(rate_ax, rate_rows, ",.0f")
        horizontal_bars(cpu_ax, cpu_rows, ".1f")
        linear_axis(rate_ax, rate_rows)
        cpu_axis(cpu_ax, cpu_rows)
        title(rate_ax, rate_title)
        title(cpu_ax, cpu_title)
    suptitle(
        fig,
        f"The version matrix, scenario {scenario}: this machine's runs and the 2014 runs as published. {caption}",
    )
    handles = [
        Patch(facecolor=colors[f], edgecolor="black", label=f"{f}, this machine")
        for f in dict.fromkeys(family(g) for g in daemons)
    ]
    handles += [
        Patch(
            facecolor=PUBLISHED_COLOR,
            hatch=PUBLISHED_HATCH,
            edgecolor="black",
            label="2014, published (8 cores)",
        ),
        Line2D([], [], color="black", marker="_", markersize=10, linewidth=1.4, label="95% CI of the median"),
        Line2D([], [], color="black", marker="o", markerfacecolor="white", linestyle="", label="one run"),
    ]
    # The legend takes the caption's place: the two would overlap at the foot of the figure.
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncols=len(handles),
        frameon=False,
        title="Bars: medians of the pass runs; the 2014 rates derived from the published elapsed times",
        title_fontsize=MIN_FONT_PT,
    )
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


# -- all of them -----------------------------------------------------------------------------------


def scenario_plots(
    scenario: str, groups: Sequence[Group], out_dir: Path, run_id: str | None, colors: Colors
) -> list[Plot]:
    runs = [run for group in groups for run in group.runs]
    caption = machine_caption(runs)
    name = safe_name(scenario)
    figures = [
        ("throughput", "Throughput per profile", throughput_figure(scenario, groups, caption, colors)),
        ("cpu", "CPU user and system per profile", cpu_figure(scenario, groups, caption)),
        ("memory", "Peak memory per profile", memory_figure(scenario, groups, caption)),
    ]
    plots = [
        (f"{title}, scenario {scenario}", save(fig, out_dir, f"{kind}-{name}"))
        for kind, title, fig in figures
    ]
    run = choose_run(runs, run_id)
    if run is not None:
        png = save(timeseries_figure(run, caption), out_dir, f"timeseries-{name}")
        plots.append((f"One run over time: {run.run_id}", png))
    return plots


def write_plots(
    results: Sequence[Result], out_dir: Path, scenario_id: str | None = None, run_id: str | None = None
) -> Written:
    """The version matrix's chart, and every plot of every scenario with a passing run (or only
    scenario_id's), as (caption, PNG path); a scenario where nothing passed has no figure to draw."""
    if run_id is not None and choose_run(results, run_id) is None:
        log.warning("report: no run %s with samples: no over-time plot", run_id)
    grouped = report.group_results(results, scenario_id)
    colors = family_colors(family(g) for groups in grouped.values() for g in groups)
    written = Written([], {})
    with rc_context(RC):
        # One section per tuning on the matrix's machine: a panel each.
        matrix = [
            (name, groups) for name, groups in report.version_matrix(grouped) if report.daemon_groups(groups)
        ]
        if matrix:
            (name, groups), tuned = matrix[0], [section for _, section in matrix[1:]]
            caption = machine_caption(
                [run for _, section in matrix for group in section for run in group.runs]
            )
            png = save(versions_figure(name, groups, caption, colors, tuned), out_dir, "versions")
            written.matrix.append((f"The version matrix, scenario {name}", png))
    jobs = [
        (scenario, groups, out_dir, run_id, colors)
        for scenario, groups in grouped.items()
        if any(group.counted for group in groups)
    ]
    for job, drawn in zip(jobs, in_parallel(scenario_job, jobs), strict=True):
        written.scenarios[job[0]] = drawn
    return written


Job = tuple[str, Sequence[Group], Path, str | None, Colors]
JOBS_PER_WORKER = 4


def scenario_job(job: Job) -> list[Plot]:
    with rc_context(RC):
        return scenario_plots(*job)


def in_parallel(work: Callable[[Job], list[Plot]], jobs: list[Job]) -> list[list[Plot]]:
    """Each scenario's figures in a process of its own, one per core: drawing is all CPU, and one scenario's
    figures need nothing of another's. Spawned, not forked: the caller may have threads (a test runner's)."""
    workers = min(len(jobs) // JOBS_PER_WORKER, os.cpu_count() or 1)
    if workers < 2:  # starting a process (matplotlib's import) costs more than a few scenarios' figures
        return [work(job) for job in jobs]
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        return pool.map(work, jobs, chunksize=1)
