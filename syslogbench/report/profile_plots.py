"""Per scenario, one bar per profile (the daemons of one tuning: load.group_results): throughput (bar = median
of the pass runs, whiskers = bootstrap 95% interval of the median, one dot per run; the baseline in its own
panel), CPU user and system seconds as stacked bars (with the published 2014 medians under ours for the seed
scenario), and peak memory (max RSS and cgroup peak side by side).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from syslogbench.report import load as report
from syslogbench.report.drawing import (
    BAR_GID,
    MIB,
    MIN_FONT_PT,
    PEAK_COLOR,
    RSS_COLOR,
    SENDER_BOUND_HATCH,
    SYSTEM_COLOR,
    USER_COLOR,
    Colors,
    colors_of,
    family,
    figure_width,
    finish,
    missing_label,
    missing_text,
    offsets,
    outside_legend,
    profile_axis,
    suptitle,
    title,
    value_axis,
    whisker,
)
from syslogbench.report.load import Group
from syslogbench.report.published import seed2014

CUT_FACTOR = 3.0  # a published bar this many times the next tallest is cut, and says so

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
