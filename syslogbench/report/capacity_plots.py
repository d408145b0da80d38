"""The capacity section's plots, from results/capacity/*.json alone: per scenario, transport and tuning (a
figure never sets a daemon against one of another tuning), the loss
ratio against the offered rate (one line per search, the PDR target marked) and the latency percentiles
against it (the hockey stick). Each point is a final-length trial the search believed: warm-up, repeated
and sender-bound trials are left out, as the search left them out, so a line never joins trials of two
lengths.

Each profile has one colour; its repeated searches are shades of it with markers of their own. The legends
sit below the panels, never on the data, and each log axis labels its decades only, so no two tick labels
meet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from matplotlib import colors as mcolors
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from syslogbench.report import drawing
from syslogbench.report.capacity_rows import label_of, tuning_of
from syslogbench.report.drawing import Plot
from syslogbench.report.load import DEFAULT_TUNING, RANKED_TUNINGS

LOSS_FLOOR = 1e-6  # a trial with no loss sits on this line of the log axis
USED = ("search", "confirm", "latency")  # the trials a search believed (docs/capacity.md)
MARKERS = ("o", "s", "^", "D", "v", "P")  # the repeats of one profile: one marker each, beside their shade
LINE_GID = "search:"  # each search's line names its run id, so a test can read the figure back


def final_trials(search: Mapping) -> list[Mapping]:
    """The believed trials of the search's final length, by offered rate."""
    final = float(search["settings"].get("final_trial_s", 0)) or max(
        t["duration_s"] for t in search["trials"]
    )
    chosen = [
        t
        for t in search["trials"]
        if t.get("purpose", "search") in USED and not t["sender_bound"] and t["duration_s"] >= final - 1e-6
    ]
    return sorted(chosen, key=lambda t: t["offered_msgs_per_s"])


def plain(value: float, _pos: object = None) -> str:
    return f"{value:g}"


def label(search: Mapping, repeated: bool) -> str:
    """The profile (a user's config named by its hash, as the report's tables name it, and the tuning); with
    the search's start when the profile was searched more than once."""
    name = label_of(search)
    return f"{name} ({search['run_id'][:15]})" if repeated else name


def shade(color: str, index: int, count: int) -> str:
    """The index-th of count shades of one colour: the first as it is, later ones mixed towards black."""
    if count < 2:
        return color
    rgb = mcolors.to_rgb(color)
    darker = 0.55 * index / (count - 1)
    return mcolors.to_hex(tuple(c * (1 - darker) for c in rgb))


def styles(searches: Sequence[Mapping], colors: Mapping[str, str]) -> dict[str, tuple[str, str, str]]:
    """Per search (by run id): its colour, marker and legend label. The searches of one profile (repeats,
    and a user's config of it) get shades and markers of their own, in the order they ran."""
    by_profile: dict[str, list[Mapping]] = {}
    for search in sorted(searches, key=lambda s: s["run_id"]):
        by_profile.setdefault(search["profile"], []).append(search)
    names = [label_of(s) for s in searches]
    found = {}
    for repeats in by_profile.values():
        for i, search in enumerate(repeats):
            color = shade(colors[search["profile"]], i, len(repeats))
            name = label(search, names.count(label_of(search)) > 1)
            found[search["run_id"]] = (color, MARKERS[i % len(MARKERS)], name)
    return found


def decades(ax: Axes, formatter: FuncFormatter | None = None, subs: tuple[float, ...] = (1.0,)) -> None:
    """A log y axis labelled at its decades (or at subs of them, 1-2-5) only: every minor label (700, 800,
    900 ms) would run into the next."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.yaxis.set_minor_formatter(NullFormatter())
    if formatter is not None:
        ax.yaxis.set_major_formatter(formatter)


def compact_rate(value: float, _pos: object = None) -> str:
    """800k, 1.2M: a rate axis that reaches 1,000,000 msg/s (the baseline) keeps its labels apart."""
    if abs(value) >= 1e6:
        return f"{value / 1e6:g}M"
    if abs(value) >= 1e3:
        return f"{value / 1e3:g}k"
    return f"{value:g}"


def rate_axis(ax: Axes) -> None:
    ax.set_xlabel("offered msg/s, all senders")
    ax.xaxis.set_major_formatter(FuncFormatter(compact_rate))
    ax.xaxis.set_major_locator(MaxNLocator(nbins=6))


def loss_panel(ax: Axes, searches: Sequence[Mapping], style: Mapping[str, tuple[str, str, str]]) -> None:
    for search in searches:
        trials = final_trials(search)
        color, marker, name = style[search["run_id"]]
        x = [t["offered_msgs_per_s"] for t in trials]
        y = [max(t["loss_ratio"], LOSS_FLOOR) for t in trials]
        ax.plot(x, y, marker=marker, color=color, label=name, gid=LINE_GID + search["run_id"])
    targets = sorted({float(s["pdr"]["loss_ratio"]) for s in searches if s["pdr"]["loss_ratio"]})
    for target in targets:
        ax.axhline(target, color="0.4", linestyle=":", label=f"PDR target {target:.2%}")
    decades(ax)
    ax.set_ylim(LOSS_FLOOR / 3, 1.5)  # the whole range, so that a search with no loss still shows its line
    ax.set_ylabel(f"loss ratio (lost + late + unsent); none = {LOSS_FLOOR:g}")
    rate_axis(ax)
    drawing.title(ax, "Loss against offered rate")


def latency_panel(ax: Axes, searches: Sequence[Mapping], style: Mapping[str, tuple[str, str, str]]) -> None:
    for search in searches:
        trials = [t for t in final_trials(search) if t["latency_ms"].get("p99") is not None]
        color, marker, _ = style[search["run_id"]]
        x = [t["offered_msgs_per_s"] for t in trials]
        ax.plot(x, [t["latency_ms"]["p99"] for t in trials], marker=marker, color=color)
        ax.plot(x, [t["latency_ms"]["p50"] for t in trials], linestyle="--", color=color)
    decades(ax, FuncFormatter(plain), subs=(1.0, 2.0, 5.0))  # latencies span two decades or less
    ax.set_ylabel("latency, ms (intended send time to output)")
    rate_axis(ax)
    drawing.title(ax, "Latency p50 and p99 against offered rate")


def legends(fig: Figure, loss: Axes) -> None:
    """Right of both panels: the searches (shared by the panels), then what the latency lines mean."""
    handles, labels = loss.get_legend_handles_labels()
    kinds = [
        Line2D([], [], color="0.3", marker="o", label="latency p99"),
        Line2D([], [], color="0.3", linestyle="--", label="latency p50"),
    ]
    fig.legend(
        [*handles, *kinds],
        [*labels, *(k.get_label() for k in kinds)],
        loc="outside right upper",
        frameon=False,
        fontsize=drawing.MIN_FONT_PT,
    )


def caption(searches: Sequence[Mapping]) -> str:
    hosts = dict.fromkeys(
        f"{(s['machine'] or {}).get('cpu_model', '?')}, {(s['machine'] or {}).get('cores', '?')} cores"
        for s in searches
    )
    finals = sorted({f"{float(s['settings'].get('final_trial_s', 0)):g} s" for s in searches})
    return (
        f"{'Machine' if len(hosts) == 1 else 'Machines'}: {'; '.join(hosts)}. Trials of {', '.join(finals)}; "
        "latency is an upper bound by one look at the output (docs/capacity.md)."
    )


def figure(key: str, searches: Sequence[Mapping]) -> Figure:
    profiles = sorted({s["profile"] for s in searches})
    colors = drawing.family_colors(profiles)  # one colour per profile, the baseline grey as in every plot
    style = styles(searches, colors)
    height = max(5.2, 1.8 + 0.24 * (len(searches) + 3))  # the legend's lines, one per search, fit beside
    fig = Figure(figsize=(drawing.MAX_WIDTH_IN, height), layout="constrained")
    loss, latency = fig.subplots(1, 2)
    loss_panel(loss, searches, style)
    latency_panel(latency, searches, style)
    legends(fig, loss)
    drawing.suptitle(fig, f"Capacity, {key}: loss and latency as the offered rate rises")
    drawing.finish(fig, caption(searches))
    return fig


def groups(searches: Sequence[Mapping]) -> dict[str, list[Mapping]]:
    """The searches by scenario, transport and tuning ("seed2014 (tcp)", "seed2014 (tcp), tuned"), each with
    at least one trial to draw."""
    found: dict[str, list[Mapping]] = {}
    for search in searches:
        if final_trials(search):
            tuning = tuning_of(search)
            key = f"{search['scenario']} ({search['transport']})"
            found.setdefault(key if tuning == DEFAULT_TUNING else f"{key}, {tuning}", []).append(search)
    return found


def write(searches: Sequence[Mapping], out_dir: Path, ranked: bool | None = None) -> list[Plot]:
    """One figure per scenario searched and tuning, as (caption, PNG path): with ranked True only those of
    the tunings the first screen ranks (the defaults, tuned), with False only the others (users' configs,
    knob steps)."""
    written = []
    with rc_context(drawing.RC):
        for key, chosen in groups(searches).items():
            if ranked is not None and (tuning_of(chosen[0]) in RANKED_TUNINGS) != ranked:
                continue
            png = drawing.save(figure(key, chosen), out_dir, drawing.safe_name(f"capacity-{key}"))
            written.append((f"Capacity, {key}: loss and latency against offered rate", png))
    return written
