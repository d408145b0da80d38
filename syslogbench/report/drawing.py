"""What the report's figures share: matplotlib (Agg) and its style (RC), the colours, titles and captions
that fit their figure, whiskers and dots, saving each figure as PNG and SVG, and the axes of the charts
with a bar per profile (report/profile_plots.py).

Every figure is at most MAX_WIDTH_IN wide, so that the page shows it at its own size, and no text is
smaller than MIN_FONT_PT: 9 pt at DPI 110 is 13.75 px.
"""

from __future__ import annotations

import io
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

from matplotlib.axes import Axes  # noqa: E402 - after choosing the backend
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402
from PIL import Image  # noqa: E402 - matplotlib's own dependency, pinned in requirements-dev.txt

from syslogbench.model.result import Result  # noqa: E402
from syslogbench.report import load as report  # noqa: E402
from syslogbench.report.load import Group  # noqa: E402

DPI = 110
PNG_COLOURS = 256  # of a saved PNG: its palette
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
BAR_GID = "bar:"  # each bar's gid names what it shows, so a test can read the figure back

# (caption, path of the PNG; the SVG is beside it)
Plot = tuple[str, Path]
Colors = Mapping[str, str]


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
    """fig as stem.png and stem.svg in out_dir; the PNG's path. The PNG in a palette of PNG_COLOURS: a
    chart has few, so it looks the same at about a third of the bytes, and the committed report stays small
    (results/report/plots: 16 MB before, in truecolour)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    png = out_dir / f"{stem}.png"
    drawn = io.BytesIO()
    fig.savefig(drawn, format="png", dpi=DPI, metadata={"Software": None})
    Image.open(drawn).convert("RGB").quantize(PNG_COLOURS).save(png, optimize=True)
    fig.savefig(out_dir / f"{stem}.svg", metadata={"Date": None})
    return png


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


# -- the axes of a bar chart with a bar per profile ------------------------------------------------


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
