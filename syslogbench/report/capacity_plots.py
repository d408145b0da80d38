"""The capacity section's plots, from results/capacity/*.json alone: per transport and destination, the loss
ratio against the offered rate (one line per search, the PDR target marked) and the latency percentiles
against it (the hockey stick). Each point is a final-length trial the search believed: warm-up, repeated
and sender-bound trials are left out, as the search left them out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from syslogbench.report import plots
from syslogbench.report.capacity import profile_of
from syslogbench.report.plots import Plot

LOSS_FLOOR = 1e-6  # a trial with no loss sits on this line of the log axis
USED = ("search", "confirm", "latency")  # the trials a search believed (docs/capacity.md)


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
    """The profile (a user's config named by its hash, as the report's tables name it); with the search's
    start when the profile was searched more than once."""
    name = profile_of(search)
    return f"{name} ({search['run_id'][:15]})" if repeated else name


def loss_panel(ax: Axes, searches: Sequence[Mapping], colors: Mapping[str, str]) -> None:
    names = [profile_of(s) for s in searches]
    for search in searches:
        trials = final_trials(search)
        x = [t["offered_msgs_per_s"] for t in trials]
        y = [max(t["loss_ratio"], LOSS_FLOOR) for t in trials]
        name = label(search, names.count(profile_of(search)) > 1)
        ax.plot(x, y, marker="o", color=colors[search["profile"]], label=name)
    targets = sorted({float(s["pdr"]["loss_ratio"]) for s in searches if s["pdr"]["loss_ratio"]})
    for target in targets:
        ax.axhline(target, color="0.4", linestyle=":", label=f"PDR target {target:.2%}")
    ax.set_yscale("log")
    ax.set_ylabel(f"loss ratio (lost + late + unsent); none = {LOSS_FLOOR:g}")
    ax.set_xlabel("offered msg/s, all senders")
    ax.xaxis.set_major_formatter(FuncFormatter(plots.thousands))
    plots.title(ax, "Loss against offered rate")


def latency_panel(ax: Axes, searches: Sequence[Mapping], colors: Mapping[str, str]) -> None:
    names = [profile_of(s) for s in searches]
    for search in searches:
        trials = [t for t in final_trials(search) if t["latency_ms"].get("p99") is not None]
        x = [t["offered_msgs_per_s"] for t in trials]
        color, name = colors[search["profile"]], label(search, names.count(profile_of(search)) > 1)
        ax.plot(x, [t["latency_ms"]["p99"] for t in trials], marker="o", color=color, label=f"{name} p99")
        ax.plot(x, [t["latency_ms"]["p50"] for t in trials], linestyle="--", color=color, label=f"{name} p50")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(plain))
    ax.yaxis.set_minor_formatter(FuncFormatter(plain))
    ax.set_ylabel("latency, ms (intended send time to output)")
    ax.set_xlabel("offered msg/s, all senders")
    ax.xaxis.set_major_formatter(FuncFormatter(plots.thousands))
    plots.title(ax, "Latency p50 (dashed) and p99 against offered rate")


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
    colors = plots.family_colors(profiles)  # one colour per profile, the baseline grey as in every plot
    fig = Figure(figsize=(plots.MAX_WIDTH_IN, 5.2), layout="constrained")
    loss, latency = fig.subplots(1, 2)
    loss_panel(loss, searches, colors)
    latency_panel(latency, searches, colors)
    loss.legend(loc="lower right", frameon=False, fontsize=plots.MIN_FONT_PT)
    plots.suptitle(fig, f"Capacity, {key}: loss and latency as the offered rate rises")
    plots.finish(fig, caption(searches))
    return fig


def groups(searches: Sequence[Mapping]) -> dict[str, list[Mapping]]:
    """The searches by scenario and transport, each with at least one trial to draw."""
    found: dict[str, list[Mapping]] = {}
    for search in searches:
        if final_trials(search):
            found.setdefault(f"{search['scenario']} ({search['transport']})", []).append(search)
    return found


def write(searches: Sequence[Mapping], out_dir: Path) -> list[Plot]:
    """One figure per scenario searched, as (caption, PNG path)."""
    written = []
    with rc_context(plots.RC):
        for key, chosen in groups(searches).items():
            png = plots.save(figure(key, chosen), out_dir, plots.safe_name(f"capacity-{key}"))
            written.append((f"Capacity, {key}: loss and latency against offered rate", png))
    return written
