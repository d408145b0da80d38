"""The report's capacity section: from results/capacity/*.json (docs/capacity.md), the NDR and PDR per
daemon and transport, then per search its trials (offered rate against loss and latency: the hockey stick),
with the machine each search ran on above them.

The results are read through model.capacity, the model the search writes them with; a file it cannot read
is left out with a note rather than breaking the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from syslogbench.model import capacity as model
from syslogbench.report.blocks import Block, Figure, Heading, Note, Notes, Paragraph, Section, Table
from syslogbench.report.load import profile_label

ANCHOR = "capacity"
TITLE = "Capacity: the highest rate each daemon holds"
INTRO = (
    "NDR: the highest offered rate (msg/s, all senders) with no message lost or late; PDR: with at most the "
    "PDR target lost or late. A message is late when it arrived more than the search's LATENCY_BOUND after "
    "its intended send time (docs/capacity.md). Bounds are the search's: the rate held and the lowest rate "
    "not held."
)
SUMMARY_HEADER = ("profile", "daemon", "scenario", "transport", "NDR msg/s", "NDR bounds", "PDR msg/s",
                  "PDR target", "latency p99 at 50% PDR (ms)", "outcome", "result")  # fmt: skip
TRIALS_HEADER = ("trial", "offered msg/s", "s", "sent", "lost", "late", "unsent", "loss ratio", "p50 ms",
                 "p99 ms", "max ms", "daemon CPU s", "note")  # fmt: skip


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


def summary_row(data: Mapping) -> list[str]:
    ndr, pdr = data["ndr"], data["pdr"]
    half = (data.get("latency_at_pdr") or {}).get("50%") or {}
    return [
        profile_of(data),
        str(data.get("daemon_version", "")),
        data["scenario"],
        data["transport"],
        model.rate_text(ndr.get("lower_msgs_per_s")),
        f"{model.rate_text(ndr.get('lower_msgs_per_s'))} .. {model.rate_text(ndr.get('upper_msgs_per_s'))}",
        model.rate_text(pdr.get("lower_msgs_per_s")),
        f"{float(pdr.get('loss_ratio', 0)):.2%}",
        ms(half.get("p99")),
        data["outcome"],
        f"`{data['run_id']}`",
    ]


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
    )


def profile_of(data: Mapping) -> str:
    """A search of a user's own config (capacity --config) is named by the config's hash, as a run is."""
    config = data.get("config") or {}
    return profile_label(data["profile"], str(config["sha256"]) if config.get("sha256") else None)


def search_blocks(data: Mapping) -> list[Block]:
    title = f"{profile_of(data)}, {data['scenario']} ({data['transport']}): `{data['run_id']}`"
    blocks: list[Block] = [Heading(title, 3), Paragraph(machine_line(data))]
    blocks.append(Table(TRIALS_HEADER, trial_rows(data["trials"])))
    if notes := [*data.get("errors", []), *data.get("notes", [])]:
        blocks.append(Notes(notes))
    return blocks


def section(results_dir: Path, figures: Sequence[tuple[str, str]] = ()) -> Section | None:
    """None when there is no capacity result: the report then has no capacity section. figures: the plots
    of report/capacity_plots.py, as (caption, path)."""
    found, skipped = load(results_dir)
    if not found and not skipped:
        return None
    blocks: list[Block] = [Heading(TITLE, 2), Note(INTRO)]
    blocks.append(Table(SUMMARY_HEADER, [summary_row(data) for data in found]))
    blocks.extend(Figure(caption, path) for caption, path in figures)
    if skipped:
        blocks.append(Notes([f"not read: {text}" for text in skipped]))
    for data in found:
        blocks.extend(search_blocks(data))
    return Section(blocks, anchor=ANCHOR)
