"""The first screen's like with like, from capacity comparisons whose sides differ in tuning
(model/compare_pairs.py): per comparison, what `tuned` buys each family and how the families stand at each
tuning, paired round by round (the comparisons section has each one's table of pairs: report/compare.py). A
comparison whose sides share one tuning gives nothing here: the side-by-side ranking has it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from syslogbench.model import compare as model
from syslogbench.model import compare_pairs
from syslogbench.report import compare_answer
from syslogbench.report.blocks import Block, Details, Heading, Note, Paragraph
from syslogbench.report.compare import machine_of, mixed

TITLE = "What tuning buys, searched side by side"
NOTE = (
    "Each pair is two sides of one comparison that differ in one thing alone, the tuning (what `tuned` buys "
    "that family) or the profile (two families at one tuning), paired round by round as every side is paired "
    "with the first: the geometric mean of the rounds' NDR ratios and its 95% interval, judged against the "
    "comparison's own A/A floor. *n*: the rounds where both sides found an NDR; one pair has no interval. A round "
    "where one did not still bounds the ratio (≥ or ≤): what one search held over the lowest rate the other failed."
)


def sentence(pair: compare_pairs.Pair, field: str) -> str:
    """ "`rsyslog-8.2504@tuned` over `rsyslog-8.2504`: **3.871×** [3.41, 4.39], n=3, differs"."""
    ratio = pair.ratios[field]
    if ratio.value is None:
        bounded = "".join(f"; {bound.text()}" for bound in ratio.bounds)
        return f"`{pair.side}` over `{pair.base}`: no round where both found an NDR{bounded}"
    within = "" if ratio.low is None else f" [{ratio.low:.2f}, {ratio.high:.2f}]"
    return (
        f"`{pair.side}` over `{pair.base}`: **{ratio.value:.3f}×**{within}, n={ratio.pairs}, {ratio.verdict}"
    )


def lead_text(found: model.CompareResult, numbers: Mapping[str, int], field: str) -> str:
    """One comparison's pairs in a sentence: what tuning buys each family, then each tuning's families."""
    where = numbers.get(machine_of(found))
    machine = f"[machine {where}](#machines)" if where else "a machine"
    found_pairs = compare_pairs.pairs(found)
    bought = [sentence(p, field) for p in found_pairs if p.differs_in == compare_pairs.TUNING]
    families = [sentence(p, field) for p in found_pairs if p.differs_in == compare_pairs.PROFILE]
    said = machine_of(found).split(", kernel")[0]
    parts = [f"Tuned over default: {'; '.join(bought)}" if bought else "",
             f"Families at one tuning: {'; '.join(families)}" if families else ""]  # fmt: skip
    head = f"**`{found.scenario}`**, {found.rounds} rounds, on {machine} ({said})"
    return f"{head}. " + ". ".join(part for part in parts if part) + "."


def blocks(found: Sequence[model.CompareResult], numbers: Mapping[str, int]) -> list[Block]:
    """The first screen's pairs: a sentence per comparison; nothing where no comparison mixes tunings."""
    chosen = compare_answer.newest(found, mixed)
    if not chosen:
        return []
    lines: list[Block] = [Paragraph(lead_text(one, numbers, "ndr_msgs_per_s")) for one in chosen]
    return [Heading(TITLE, 2), *lines, Details("How the pairs are made", [Note(NOTE)])]
