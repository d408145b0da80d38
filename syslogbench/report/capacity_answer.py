"""The first screen's capacity answer from searches of their own (after report/compare_answer.py's side-by-side
ratios), from the pooled rows of report/capacity_rows.py: per transport and
tuning (the defaults, then tuned), the daemon version with the highest NDR, its PDR and latency, and how the
others of that tuning compare, overlaps said. No ranking sets a daemon against one of another tuning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from syslogbench.model import capacity as model
from syslogbench.report import capacity_flags, capacity_rows
from syslogbench.report.blocks import Block, Heading, Lead, Note, Paragraph
from syslogbench.report.capacity import SUMMARY_ANCHOR, TRANSPORT_NAMES, latency_text, range_text
from syslogbench.report.capacity_rows import Row
from syslogbench.report.load import DEFAULT_SCENARIO, RANKED_TUNINGS, tuning_words

LEAD_NOTE = (
    "*n*: the searches of that version at the search's default settings; with more than one, the NDR is their median "
    "and the range theirs. *overlaps*: the two versions' ranges share a rate, so their order is not settled. "
    "*Latency*: p50/p99 from a message's intended send time to its sight in the output, measured after the "
    "search at 50% and 90% of the PDR. A flag is explained in the capacity summary."
)


def lead_blocks(
    searches: Sequence[Mapping],
    numbers: Mapping[str, int],
    anchors: Sequence[str],
    side_by_side: Mapping[tuple[str, str], set[str]] | None = None,
) -> list[Block]:
    """The first screen's capacity answer: per transport, one ranking per tuning (the defaults, then tuned),
    each over the rows of the daemons' own configs at that tuning and the default settings, on the machine
    with the most searches (of that transport, where the machine with the most in all has none). No ranking
    sets a daemon against one of another tuning. A tuning with nothing to rank says so in one line: for the
    transport, or once where no transport has a ranking at it. The opening names the machine most rankings
    stand on; one on another names its own. Nothing when no search exists. Where a comparison ranks every
    version of a ranking side by side (`side_by_side`: per scenario and tuning, the profiles ranked so), that
    ranking is the one to trust: one line points to it (searches made hours apart can order versions by the
    machine's drift, docs/compare.md)."""
    busiest = capacity_rows.busiest_machine(searches)
    if busiest is None:
        return []
    every = capacity_rows.rows(searches)
    own = [row for row in every if row.own_config and row.tuning in RANKED_TUNINGS]
    transports = list(dict.fromkeys(row.transport for row in own))
    choices = {
        (transport, tuning): choice
        for transport in transports
        for tuning in RANKED_TUNINGS
        if (choice := lead_choice([row for row in own if row.tuning == tuning], transport, busiest))
    }
    stands = [machine for machine, _, _ in choices.values()]
    lead = max(dict.fromkeys(stands), key=lambda m: (stands.count(m), m == busiest), default=busiest)
    ranked = {tuning for _, tuning in choices}
    blocks: list[Block] = [
        Heading("How much each daemon holds without loss, searched one at a time", 2),
        Paragraph(
            f"Per transport, on [machine {numbers.get(lead)}](#machines) ({lead.split(', kernel')[0]}) "
            "unless named: the version with the highest *NDR* (no message lost or over 1 s late), its *PDR* "
            "(at most 0.5%) and latency, ranked within one tuning: *at the defaults* or *tuned* (docs/tuning.md). "
            "These searches ran one at a time, often hours apart, so an order between close versions can be "
            "the machine's drift; a ranking side by side, above, is the one to trust. "
            f"Every search is in the [capacity summary](#{SUMMARY_ANCHOR})."
        ),
    ]
    for transport in transports:
        for tuning in RANKED_TUNINGS:
            if (transport, tuning) not in choices:
                if tuning in ranked:
                    blocks.append(Note(unranked_line(every, tuning, transport)))
                continue
            machine, chosen, earlier = choices[transport, tuning]
            if above := ranked_above(chosen, side_by_side or {}):
                blocks.append(Note(above))
                continue
            where = "" if machine == lead else f"[machine {numbers.get(machine)}](#machines)"
            text = lead_text(transport, chosen, anchors, where)
            if earlier:
                text += f" {earlier_note(chosen)}"
            blocks.append(Lead(text))
    blocks += [Note(unranked_line(every, tuning)) for tuning in RANKED_TUNINGS if tuning not in ranked]
    blocks.append(Note(LEAD_NOTE))
    return blocks


def ranked_above(chosen: Sequence[Row], side_by_side: Mapping[tuple[str, str], set[str]]) -> str:
    """The line that stands for a ranking of searches made apart, where a comparison above ranks each of
    its versions side by side; "" where none does."""
    best = chosen[0]
    ranked = side_by_side.get((best.scenario, best.tuning), set())
    if not ranked or any(row.profile not in ranked for row in chosen):
        return ""
    name = f"{TRANSPORT_NAMES.get(best.transport, best.transport)}, {tuning_words(best.tuning)}"
    return (
        f"*{name}:* every version searched here is ranked side by side above (`{best.scenario}`); their "
        f"searches made one at a time are in the [capacity summary](#{SUMMARY_ANCHOR})."
    )


def lead_choice(own: Sequence[Row], transport: str, busiest: str) -> tuple[str, list[Row], bool] | None:
    """A transport's machine, its ranked rows (of the scenario searched most there), and whether they ran
    at an earlier procedure (no search at today's defaults yet); None when there is nothing to rank."""
    of_transport = [row for row in own if row.transport == transport and row.plain]
    earlier = not of_transport
    if earlier:  # no search at today's defaults yet: those that differ only in the search procedure
        of_transport = [row for row in own if row.transport == transport and row.earlier_procedure]
    if not of_transport:
        return None
    # The machine with the most versions searched more than once (an answer with a range beats one search
    # each, which an unsteady machine can reorder), then the most of this transport's searches; on a tie the
    # busiest in all, then the one searched last.
    searched = [(row.machine, capacity_rows.finished(s)) for row in of_transport for s in row.searches]
    machines = [m for m, _ in searched]
    last = {m: max(when for other, when in searched if other == m) for m in machines}
    repeated = [row.machine for row in of_transport if row.n > 1]
    machine = max(last, key=lambda m: (repeated.count(m), machines.count(m), m == busiest, last[m]))
    chosen = [row for row in of_transport if row.machine == machine]
    main = max(
        dict.fromkeys(row.scenario for row in chosen),
        key=lambda s: sum(r.n for r in chosen if r.scenario == s),
    )
    return machine, [r for r in chosen if r.scenario == main], earlier


def lead_text(transport: str, chosen: Sequence[Row], anchors: Sequence[str], where: str = "") -> str:
    """One transport's answer at one tuning (the rows', all of one): the version that holds the most, its
    latency, and how the others of that tuning compare."""
    best, others = chosen[0], chosen[1:]
    name = f"{TRANSPORT_NAMES.get(transport, transport)}, {tuning_words(best.tuning)}"
    text = (
        f"**{name}** ({scenario_link(best, anchors)}{', on ' + where if where else ''}): **{best.label}** holds the most without loss: "
        f"**{ndr_text(best)}**; {pdr_text(best)}. {latency_sentence(best)}"
    )
    if best.flags:
        why = [line for search in best.searches for line in capacity_flags.contradictions(search)][:1]
        text += f" Flagged: {'; '.join(best.flags)}" + (f" ({why[0]})." if why else ".")
    if not others:  # others may have been searched, with a floor among their searches (unranked)
        return text + f" No other version is ranked here ([capacity summary](#{SUMMARY_ANCHOR}))."
    text += " Others: " + "; ".join(compare_text(best, other) for other in others) + "."
    if overlapping := [other.label for other in others if best.overlaps(other)]:
        text += (
            f" Its searches overlap those of {', '.join(overlapping)}: more repeats are needed to settle that "
            "order."
        )
    return text


def ndr_text(row: Row) -> str:
    """ "NDR 90,971 msg/s (median of 2 searches, range 84,024–97,919)"."""
    if row.n == 1:
        return f"NDR {model.rate_text(row.ndr)} msg/s (n=1: one search, no range)"
    if len(row.ndrs) == row.n and len(set(row.ndrs)) == 1:  # every search on one grid rate: no range
        return f"NDR {model.rate_text(row.ndr)} msg/s (each of n={row.n} searches)"
    return f"NDR {model.rate_text(row.ndr)} msg/s (median of n={row.n} searches, range {range_text(row)})"


def pdr_text(row: Row) -> str:
    """The lead's PDR, or why it has none: a dash there read as a missing figure, not as a rate that failed
    its confirmation."""
    if row.pdr is not None:
        return f"PDR {model.rate_text(row.pdr)} msg/s"
    if capacity_flags.UNCONFIRMED in row.flags:
        return "no PDR: it did not hold again in its confirmation"
    return "no PDR published"


def latency_sentence(row: Row) -> str:
    """The lead's latency: p50/p99 at 50% and 90% of the PDR, or why there is none."""
    half, most = latency_text(row, "50%"), latency_text(row, "90%")
    if half == most == "-":  # e.g. SEARCH_MAX left no time after the confirmations' steps down
        return "Latency at 50% and 90% of its PDR: not measured (the searches' notes say why)."
    return f"Latency p50/p99 {half} ms at 50% of its PDR, {most} ms at 90%."


def compare_text(best: Row, other: Row) -> str:
    """How one other version stands against the best: its NDR, n, and whether their ranges overlap."""
    spread = f", {range_text(other)}" if other.n > 1 else ""
    ratio = f"{best.ndr / other.ndr:.2f}x" if best.ndr and other.ndr else "?"
    overlap = ", overlaps" if best.overlaps(other) else ""
    return f"{other.label} {model.rate_text(other.ndr)} (n={other.n}{spread}; best is {ratio}{overlap})"


def scenario_link(row: Row, anchors: Sequence[str]) -> str:
    """The scenario searched, linked where it has a section, and its senders: `seed2014`, 20 senders."""
    anchor = f"scenario-{row.scenario}"
    if anchor in anchors:
        name = f"[`{row.scenario}`](#{anchor})"
    elif (
        row.scenario == DEFAULT_SCENARIO and "versions" in anchors
    ):  # the seed scenario, defined by the burst
        name = f"[`{row.scenario}`](#versions), the seed scenario's messages"
    else:
        name = f"`{row.scenario}`"
    senders = row.searches[0].get("senders")
    return f"{name}, {senders} senders" if senders else name


def earlier_note(rows: Sequence[Row]) -> str:
    settings = sorted({setting for row in rows for setting in row.settings})
    return (
        "*No search of this transport ran at today's defaults (several final trials per rate, a 60 s "
        "confirmation, the daemon on cores of its own): these ran at the procedure of their day "
        f"({', '.join(settings)}).*"
    )


def unranked_line(rows: Sequence[Row], tuning: str, transport: str | None = None) -> str:
    """One short line for a tuning with no ranking, of one transport (or of any): none searched yet, or none
    of its searches rankable (a floor, a flag, other settings: the summary has them)."""
    words = tuning_words(tuning)
    if transport is None:
        what, where = words[:1].upper() + words[1:], " of any transport"
    else:
        what, where = f"{TRANSPORT_NAMES.get(transport, transport)}, {words}", ""
    found = [row for row in rows if row.tuning == tuning and transport in (None, row.transport)]
    if found:
        return f"*{what}:* no search{where} to rank yet ([capacity summary](#{SUMMARY_ANCHOR}))."
    return f"*{what}:* no search{where} yet."
