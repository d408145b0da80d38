"""The knob tables, after the capacity summary: per daemon family, the newest knob study of each profile and
scenario (results/knobs/<id>.json, `python -m syslogbench knobs`), one row per step: its runs, its median drain
rate, that over the default step's, its CPU per message and, for the steps of the chain from the default to
the last, its share of the whole gain; then the knobs that did nothing alone, in one sentence, and what each
knob tried trades away. No study, no section.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from statistics import median

from syslogbench.model.knobs import DONE, KnobsResult, Step
from syslogbench.report import capacity_rows
from syslogbench.report.blocks import Block, Details, Heading, Note, Notes, Paragraph, Section, Table

ANCHOR = "knobs"
TITLE = "Knobs: what each setting buys, one at a time"
NOTE = (
    "`python -m syslogbench knobs` runs one profile and scenario from the package's defaults towards tuned "
    "(docs/tuning.md): the default config, each knob alone at each value asked, then the knobs that bought "
    "most together, one more a step, each a config rendered and mounted for it; and a control, the image's own "
    "default config as `run` runs it, whose distance from 1.00 is what the way a step runs costs, or the "
    "machine's drift: a knob's gain no farther from 1 says nothing. Each round runs every step once, in a "
    "fresh random order. The rates are "
    "burst drain rates, as in the version matrix, not capacity. *runs*: counted of all (over TCP and TLS a run with loss counts no rate; over UDP an all-out burst "
    "loses datagrams in every run, so a run with loss counts, its rate what the daemon received, and *median "
    "loss* gives the share lost). *knobs set*: each knob's value in the step's config. *x default*: the step's median msgs/s over the default step's. *CPU µs per message*: the "
    "daemon's, median over the counted runs, per message received. *share of the gain*: for each step of the chain from the default "
    "to the last step, its gain over the step before as a share of the whole gain from the first to the last; "
    "a dash where the whole is no gain. *p99 ms at the fixed rate* (studies that measured it): the 99th "
    "percentile of the latency, from each message's intended send time, in one capacity trial of each step's "
    "config at one rate for all steps (`--latency-rate`), below what the defaults hold."
)
HEADER = ("step", "knobs set", "phase", "runs", "median msgs/s", "x default", "CPU µs per message",
          "share of the gain")  # fmt: skip
# A knob whose every step alone left the median within this much of the default's did nothing measurable.
IDLE_WITHIN = 0.05
CONTROL = "control"  # the phase of the step that runs the image's own default config, as `run` does
DASH = "-"


def family_of(study: KnobsResult) -> str:
    """The daemon family: as the study names it, or (a study from before it did) its profile's name less the
    version, as every profile is named (rsyslog-8.2504, syslog-ng-4.8)."""
    return study.daemon or re.sub(r"-[0-9][0-9.]*$", "", study.profile)


def machine_of(study: KnobsResult, known: Iterable[str]) -> str:
    """The study's machine as the Machines table names it. A study from before `knobs` recorded the Docker
    version is of the one known machine alike in all else, where exactly one is."""
    label = capacity_rows.machine_of({"machine": study.machine})
    if study.docker_known:
        return label
    stem = label.rsplit(", Docker ", 1)[0]
    alike = [other for other in known if other.rsplit(", Docker ", 1)[0] == stem]
    return alike[0] if len(alike) == 1 else label


def newest(studies: Sequence[KnobsResult]) -> list[KnobsResult]:
    """The newest study of each profile and scenario (by its end, then its id), by family, profile, scenario."""
    found: dict[tuple[str, str], KnobsResult] = {}
    for study in studies:
        key = (study.profile, study.scenario)
        if key not in found or (study.finished_utc, study.id) > (found[key].finished_utc, found[key].id):
            found[key] = study
    return sorted(found.values(), key=lambda s: (family_of(s), s.profile, s.scenario))


def rate(value: float | None) -> str:
    return DASH if value is None else f"{value:,.0f}"


def share_cell(study: KnobsResult, step: Step) -> str:
    """Its share of the whole gain: chain steps only (the first has none), a dash where there is none."""
    if step.name not in study.chain:
        return ""
    share = study.shares.get(step.name)
    return DASH if share is None else f"{share:.0%}"


LATENCY_HEADER = "p99 ms at the fixed rate"


def latency_cell(step: Step) -> str:
    """The step's p99 at the fixed rate; the control has none; why, in short, where its trial gave none."""
    found = step.latency
    if found is None:
        return DASH
    if found.error is not None or found.p99_ms is None:
        return f"none: {found.error or 'no latency'}"[:80]
    return f"{found.p99_ms:.2f}"


LOSS_HEADER = "median loss"


def lossy(study: KnobsResult) -> bool:
    """A study whose counted runs lost messages: UDP's, where drops are part of what is measured."""
    return any(run.passed and run.verdict != "pass" for step in study.steps for run in step.runs)


def loss_cell(step: Step) -> str:
    found = [run.lost / (run.received + run.lost) for run in step.passed
             if run.lost is not None and run.received is not None and run.received + run.lost]  # fmt: skip
    return DASH if not found else f"{median(found):.1%}"


def header(study: KnobsResult) -> tuple[str, ...]:
    extra = [LOSS_HEADER] if lossy(study) else []
    extra += [] if study.latency_rate is None else [LATENCY_HEADER]
    return (*HEADER, *extra)


def step_row(study: KnobsResult, step: Step) -> list[str]:
    cpu = step.median_cpu_us
    extra = [loss_cell(step)] if lossy(study) else []
    extra += [] if study.latency_rate is None else [latency_cell(step)]
    return [
        f"`{step.name}`",
        ", ".join(f"{name}={value}" for name, value in step.knobs.items()) or "none: the defaults",
        step.phase,
        f"{len(step.passed)} of {len(step.runs)}",
        rate(step.median_rate),
        DASH if step.gain is None else f"{step.gain:.2f}",
        DASH if cpu is None else f"{cpu:.2f}",
        share_cell(study, step),
        *extra,
    ]


def tried(study: KnobsResult) -> list[str]:
    """The knobs some step set, in the family's order."""
    used = {name for step in study.steps for name in step.knobs}
    return [name for name in study.knobs if name in used] + sorted(used - set(study.knobs))


def floor(study: KnobsResult) -> float:
    """How far from 1.0 a gain must be to say something: IDLE_WITHIN, or the control's own distance from the
    default where that is larger (two runs of the same defaults that differ by more say the rest is noise)."""
    controls = [
        abs(step.gain - 1.0) for step in study.steps if step.phase == CONTROL and step.gain is not None
    ]
    return max([IDLE_WITHIN, *controls])


def idle(study: KnobsResult) -> list[str]:
    """The knobs that did nothing: every step of the knob alone with a gain, each within floor() of 1.0."""
    found, within = [], floor(study)
    for name in tried(study):
        gains = [step.gain for step in study.steps if step.phase == "alone" and list(step.knobs) == [name]]
        if gains and all(g is not None and abs(g - 1.0) <= within for g in gains):
            found.append(name)
    return found


def idle_sentence(study: KnobsResult) -> str:
    """The knobs that did nothing, in one sentence; and how far the control stood from the default."""
    names = idle(study)
    within = f"{floor(study):.0%}"
    controls = [step.gain for step in study.steps if step.phase == CONTROL and step.gain is not None]
    why = " (the control's distance from the default)" if floor(study) > IDLE_WITHIN else ""
    if names:
        listed = ", ".join(f"`{name}`" for name in names)
        text = (
            f"Not told apart from the default alone (the median within ±{within}{why} of the default's at every "
            f"value tried): {listed}."
        )
    else:
        text = f"No knob alone left the median within ±{within}{why} of the default's: each one moved it."
    return text + "".join(f" The control ran at {gain:.2f} times the default." for gain in controls)


def trades_lines(study: KnobsResult) -> list[str]:
    """What each knob tried trades away, with its parameter and the daemon's default (the family's record)."""
    lines = []
    for name in tried(study):
        knob = study.knobs.get(name)
        if knob is None:
            lines.append(f"`{name}`: not in the study's knobs")
            continue
        left_out = "; `tuned` leaves it out" if not knob.tuned else ""
        lines.append(f"`{name}` ({knob.param}, default {knob.default}{left_out}): {knob.trades}")
    return lines


def cited(study: KnobsResult, numbers: Mapping[str, int]) -> str:
    """Which study, on which machine (named as the Machines table names it), and its capacity searches."""
    machine = machine_of(study, numbers)
    number = numbers.get(machine)
    where = f"[machine {number}](#machines)" if number else "a machine"
    rounds = "one round" if study.replicates == 1 else f"{study.replicates} rounds"
    cut = "" if study.outcome == DONE else f" ({study.outcome}: the steps and runs made until then)"
    text = (
        f"**`{study.profile}`** ({study.daemon_version}), scenario `{study.scenario}`: knob study `{study.id}`, "
        f"{rounds}{cut}, on {where} ({machine.split(', kernel')[0]}), {study.started_utc} to "
        f"{study.finished_utc}."
    )
    if study.latency_rate is not None:
        text += f" The fixed rate of its latency trials: {study.latency_rate:,.0f} msg/s in all senders."
    searches = [f"`{step}`: `{found}`" for step, found in study.capacity.items() if found]
    if searches:
        text += (
            f" Capacity searches of its steps (results/knobs/{study.id}/capacity/): {'; '.join(searches)}."
        )
    return text


def study_blocks(study: KnobsResult, numbers: Mapping[str, int]) -> list[Block]:
    """The study's table, its idle knobs; what each knob trades away, folded (the family's record says it)."""
    return [
        Paragraph(cited(study, numbers)),
        Table(header(study), [step_row(study, step) for step in study.steps], css_class="stack"),
        Paragraph(idle_sentence(study)),
        Details(f"What each knob tried trades away ({len(tried(study))})", [Notes(trades_lines(study))]),
    ]


def section(
    studies: Sequence[KnobsResult], skipped: Sequence[str], numbers: Mapping[str, int]
) -> Section | None:
    """A table per family's profile and scenario, the newest study of each; None without a study."""
    if not studies and not skipped:
        return None
    blocks: list[Block] = [Heading(TITLE, 2), Note(NOTE)]
    family = None
    for study in newest(studies):
        if family_of(study) != family:
            family = family_of(study)
            blocks.append(Heading(family, 3))
        blocks += study_blocks(study, numbers)
    if skipped:
        blocks.append(Notes([f"not read: {line}" for line in skipped]))
    return Section(blocks, anchor=ANCHOR)
