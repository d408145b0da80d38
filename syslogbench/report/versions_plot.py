"""The version matrix, on the report's first screen: msgs/s and CPU seconds per million messages of every
daemon version, a panel per tuning (each on its own scale: no bar is set against one of another tuning),
beside the 2014 daemons as published, with the baseline receiver in a panel of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from syslogbench.report import load as report
from syslogbench.report.drawing import (
    BAR_GID,
    MAX_WIDTH_IN,
    MIN_FONT_PT,
    PUBLISHED_COLOR,
    PUBLISHED_HATCH,
    Colors,
    colors_of,
    family,
    offsets,
    suptitle,
    thousands,
    title,
    whisker,
)
from syslogbench.report.load import Group
from syslogbench.report.published import seed2014


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
