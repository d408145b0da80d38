"""The report's capacity parts, from results/capacity/*.json (docs/capacity.md):
- the first screen's answer from searches of their own, after the side-by-side ratios of
  report/compare_answer.py (report/capacity_answer.py, lead_blocks): per transport and tuning (the
  defaults, then tuned), the daemon version with the highest NDR, its latency, and how the others of that
  tuning compare, overlaps said;
- the capacity summary near the top (summary_section): one row per profile, tuning, scenario, settings and
  machine, pooled by report/capacity_rows.py and flagged by report/capacity_flags.py;
- the section of every search (section): the plots, then each search's machine and trials, folded.

The results are read through model.capacity, the model the search writes them with; a file it cannot read
is left out with a note rather than breaking the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from syslogbench.model import capacity as model
from syslogbench.report import capacity_flags, capacity_rows
from syslogbench.report.blocks import (
    Block,
    Details,
    Figure,
    Heading,
    Note,
    Notes,
    Paragraph,
    Section,
    Table,
)
from syslogbench.report.capacity_rows import Row, label_of
from syslogbench.report.load import BASELINE

ANCHOR = "capacity"
FOLDED_FIGURES = "capacity-folded"  # the key of the plots of the other tunings, shown folded (no anchor)
SUMMARY_ANCHOR = "capacity-summary"
TITLE = "Capacity searches: every trial"
SUMMARY_TITLE = "Capacity summary: the highest rate each daemon holds"
DEFINITIONS = (
    "*NDR* (no-drop rate): the highest offered rate, msg/s over all senders, at which no message was lost or "
    "late; *PDR* (partial-drop rate): at most the PDR target (0.5%) lost or late. A message is late when it "
    "arrived more than the search's LATENCY_BOUND (1 s) after its intended send time. A search offers one "
    "rate after another in trials (the deciding ones 10 s long) to a daemon that stays up (docs/capacity.md). "
    "*Latency*: from a message's intended send time to its sight in the output, measured after the search at "
    "10%, 50% and 90% of the PDR. *n*: the searches pooled in a row; the NDR is their median and range."
)
FLAGS_NOTE = (
    "Flags: *at least (rig-limited)*: no rate the daemon failed at was found, because the senders or the "
    "watcher could go no faster (the NDR is a floor); *at least (RATE_MAX)*: the search reached its own "
    "ceiling; *contradicted*: a later trial of the same search, at or below the NDR (or PDR), broke that "
    "goal; *unconfirmed*: the result's own check did not see the rate hold again; *test config*: a user's "
    "config, not the profile's own; *other settings*: a setting that changes what is measured differs from "
    "the defaults (named); *rig-heavy*: in a trial the search relied on, the rig took over 5% of the daemon's "
    "CPU, or looked at the output too coarsely for its latency; *stolen*: in such a trial the hypervisor took "
    "over 5% of the time of the daemon's own cores (steal); *fingerprints differ*: machines named alike whose cpu fingerprints (loops per CPU "
    "second) differ by over 25%, so the range is partly the machines'. Sorted by transport, then tuning, then "
    "NDR."
)
SUMMARY_HEADER = ("transport", "profile", "tuning", "scenario", "machine", "n", "NDR msg/s (median)", "NDR range",
                  "PDR msg/s", "latency p50/p99 ms at 10% of PDR", "at 50% of PDR", "at 90% of PDR", "flags")  # fmt: skip
SEARCHES_HEADER = ("profile", "scenario", "transport", "NDR msg/s (95% interval of the next search)", "NDR bounds", "PDR msg/s", "PDR target",
                   "latency p99 at 50% PDR (ms)", "outcome", "flags", "result")  # fmt: skip
TRIALS_HEADER = ("trial", "offered msg/s", "s", "sent", "lost", "late", "unsent", "loss ratio", "p50 ms",
                 "p99 ms", "max ms", "daemon CPU s", "note")  # fmt: skip
# The first screen's words for each transport and the scenario the searches ran.
TRANSPORT_NAMES = {"tcp": "TCP", "udp": "UDP", "tls": "TLS"}


def load(results_dir: Path) -> tuple[list[dict], list[str]]:
    """Every capacity result under results_dir/capacity, oldest first, read through the model that wrote it,
    and what could not be read (one line each)."""
    found, skipped = [], []
    for path in sorted((results_dir / "capacity").glob("*.json")):
        try:
            found.append(model.read(path).to_dict())
        except model.CapacityResultError as error:
            skipped.append(f"{path.name}: {error}")
    return found, skipped


def ms(value: object) -> str:
    return "-" if value is None else f"{float(value):.1f}"  # type: ignore[arg-type]


def search_row(data: Mapping) -> list[str]:
    ndr, pdr = data["ndr"], data["pdr"]
    half = (data.get("latency_at_pdr") or {}).get("50%") or {}
    return [
        label_of(data),
        data["scenario"],
        data["transport"],
        model.rate_text(capacity_flags.published(ndr)) + next_search_text(data.get("ndr_interval")),
        f"{model.rate_text(ndr.get('lower_msgs_per_s'))} .. {model.rate_text(ndr.get('upper_msgs_per_s'))}",
        model.rate_text(capacity_flags.published(pdr)),
        f"{float(pdr.get('loss_ratio', 0)):.2%}",
        ms(half.get("p99")),
        data["outcome"],
        "; ".join(capacity_flags.flags(data)) or "-",
        f"`{data['run_id']}`",
    ]


def next_search_text(interval: Mapping | None) -> str:
    """The NDR's interval for the next search, after the published NDR: " (next search 3,100-4,900)"."""
    if not interval or interval.get("low_msgs_per_s") is None:
        return ""
    return f" (next search {model.rate_text(interval['low_msgs_per_s'])}\u2013{model.rate_text(interval['high_msgs_per_s'])})"


def trial_rows(trials: Sequence[Mapping]) -> list[list[str]]:
    """By offered rate: the loss ratio and the latency against it."""
    rows = []
    for trial in sorted(trials, key=lambda t: (t["offered_msgs_per_s"], t["number"])):
        latency = trial.get("latency_ms") or {}
        note = {
            "warmup": "warm-up",
            "latency": "latency at a fraction of the PDR",
            "confirm": "confirmation of a bound (CONFIRM_S)",
            "repeated": "watcher held up: repeated, not used",
            "at rate": "the comparison's fixed rate (CPU per message)",
            "ndr repeat": "repeat at the NDR (its interval)",
        }.get(  # fmt: skip
            trial.get("purpose", ""), ""
        )
        note = "sender-bound, not used" if trial.get("sender_bound") else note
        if trial.get("daemon_exit") is not None:
            note = f"daemon exited ({trial['daemon_exit']})"
        rows.append([
            str(trial["number"]), model.rate_text(trial["offered_msgs_per_s"]), f"{trial['duration_s']:g}",
            f"{trial['sent']:,}", f"{trial['lost']:,}", f"{trial['late']:,}", f"{trial.get('unsent', 0):,}",
            f"{trial['loss_ratio']:.4%}", ms(latency.get("p50")), ms(latency.get("p99")), ms(latency.get("max")),
            ms(trial.get("daemon_cpu_s")), note,
        ])  # fmt: skip
    return rows


def machine_line(data: Mapping) -> str:
    host = data["machine"] or {}
    nodes = data.get("nodes") or []
    where = f"Swarm of {len(nodes)} nodes; the central node: " if nodes else "Machine: "
    text = f"{where}{host.get('cpu_model', '?')}, {host.get('cores', '?')} cores, kernel {host.get('kernel', '?')}"
    fingerprint = host.get("fingerprint") or {}
    figures = [
        f"{name} {fingerprint[name].get('value', 0):,.0f} {fingerprint[name].get('unit', '')}".rstrip()
        for name in ("cpu", "file_churn", "loopback_tcp")
        if isinstance(fingerprint.get(name), Mapping)
    ]
    placement = ", ".join(f"{role} on {place}" for role, place in (data.get("cpu_placement") or {}).items())
    return (
        text
        + (f"; fingerprint: {', '.join(figures)}" if figures else "; no fingerprint")
        + (f"; CPU placement: {placement}" if placement else "")
        + clocks_text(data.get("clocks"), bool(nodes))
    )


def clocks_text(clocks: Mapping | None, swarm: bool) -> str:
    """Each generator's clock against the watcher's on a swarm, where it matters (one host has one clock), and
    the refusal wherever there is one."""
    if not clocks:
        return ""
    refused = "" if clocks["trusted"] else f"; latency not trusted: {clocks['why']}"
    if not swarm:
        return refused
    nodes = ", ".join(
        f"{node['node'] or node['host']} {node['offset_s'] * 1000:+.1f} +/- {node['uncertainty_s'] * 1000:.1f} ms"
        for node in clocks["nodes"]
    )
    return f"; clocks against the watcher's: {nodes}{refused}"


def search_blocks(data: Mapping, numbers: Mapping[str, int]) -> list[Block]:
    """One search, folded: its machine, every trial, its notes."""
    number = numbers.get(capacity_rows.machine_of(data))
    title = f"{label_of(data)}, {data['scenario']} ({data['transport']}): `{data['run_id']}`"
    where = f"[Machine {number}](#machines). " if number else ""
    blocks: list[Block] = [
        Paragraph(where + machine_line(data)),
        Table(TRIALS_HEADER, trial_rows(data["trials"])),
    ]
    if interval := data.get("ndr_interval"):
        blocks.insert(1, Paragraph(model.interval_text(model.Interval(**interval)) + "."))
    if notes := [*data.get("errors", []), *data.get("notes", [])]:
        blocks.append(Notes(notes))
    return [Details(f"Trials of {title}", blocks)]


def range_text(row: Row) -> str:
    low, high = min(row.ndrs, default=None), max(row.ndrs, default=None)
    return model.rate_text(low) if low == high else f"{model.rate_text(low)}\u2013{model.rate_text(high)}"


def latency_text(row: Row, fraction: str) -> str:
    p50, p99 = row.latency(fraction, "p50"), row.latency(fraction, "p99")
    if p50 is None and p99 is None:
        return "-"
    return f"{round_ms(p50)}/{round_ms(p99)}"


def round_ms(value: float | None) -> str:
    """Two significant figures at least: 18, 552, 1,760, 2.3."""
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def summary_row(row: Row, numbers: Mapping[str, int]) -> list[str]:
    number = numbers.get(row.machine)
    return [
        TRANSPORT_NAMES.get(row.transport, row.transport),
        row.profile,
        "-" if row.profile == BASELINE else row.tuning,  # a receiver: no tuning of its own
        row.scenario,
        f"[{number}](#machines)" if number else "?",
        str(row.n),
        model.rate_text(row.ndr),
        range_text(row),
        model.rate_text(row.pdr),
        *(latency_text(row, fraction) for fraction in capacity_rows.FRACTIONS),
        "; ".join(row.flags) or "-",
    ]


def summary_section(searches: Sequence[Mapping], numbers: Mapping[str, int]) -> Section | None:
    """The pooled rows, near the top of the page: what the first screen's answers come from."""
    found = capacity_rows.rows(searches)
    if not found:
        return None
    default = [row for row in found if not row.settings]
    other = [row for row in found if row.settings]
    if not default:  # nothing at the defaults: the rows at other settings are the table
        default, other = other, []
    blocks: list[Block] = [
        Heading(SUMMARY_TITLE, 2),
        Note(DEFINITIONS),
        Table(SUMMARY_HEADER, [summary_row(row, numbers) for row in default], css_class="stack"),
    ]
    if other:  # folded, so the page grows with the searches at the defaults, not with every experiment
        rows = [summary_row(row, numbers) for row in other]
        title = f"Searches at other settings ({len(other)} rows)"
        blocks.append(Details(title, [Table(SUMMARY_HEADER, rows, css_class="stack")]))
    blocks.append(Note(FLAGS_NOTE + f" Every search and its trials: [{TITLE}](#{ANCHOR})."))
    return Section(blocks, anchor=SUMMARY_ANCHOR)


def section(
    searches: Sequence[Mapping],
    skipped: Sequence[str],
    numbers: Mapping[str, int],
    figures: Sequence[tuple[str, str]] = (),
    folded: Sequence[tuple[str, str]] = (),
) -> Section | None:
    """None when there is no capacity result: the report then has no capacity section. figures: the plots
    of report/capacity_plots.py, as (caption, path), of the tunings the first screen ranks; folded: those of
    the other tunings (users' configs, knob steps). Each search's trials are folded."""
    if not searches and not skipped:
        return None
    blocks: list[Block] = [Heading(TITLE, 2), Note(DEFINITIONS)]
    blocks.extend(Figure(caption, path) for caption, path in figures)
    if folded:
        title = f"Plots of the other tunings: users' configs and knob steps ({len(folded)})"
        blocks.append(Details(title, [Figure(caption, path) for caption, path in folded]))
    blocks.append(
        Details(
            f"Every search ({len(searches)}), one row each",
            [Table(SEARCHES_HEADER, [search_row(d) for d in searches])],
        )
    )
    if skipped:
        blocks.append(Notes([f"not read: {text}" for text in skipped]))
    # One line for them all, each search's own trials folded inside: 136 lines of their own made the page
    # taller than its goal.
    trials = [block for data in searches for block in search_blocks(data, numbers)]
    blocks.append(Details(f"The trials of each search ({len(searches)})", trials))
    return Section(blocks, anchor=ANCHOR)
