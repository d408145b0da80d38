"""The machines the results came from: each numbered once for the whole report, the Machines table with the
median of each machine's fingerprints, a scenario's fingerprints per profile, and a run's in a sentence.

Runs of two machines never pool (load.group_results); capacity searches (report/capacity_rows.py) and knob
studies (report/knobs.py) name their machines alike, so that one machine has one number everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import median

from syslogbench.model.knobs import KnobsResult
from syslogbench.model.result import Fingerprint, Result
from syslogbench.report import capacity_flags, capacity_rows, knobs
from syslogbench.report.blocks import Block, Heading, Note, Section, Table
from syslogbench.report.cells import DASH, NA, fmt, fmt_interval
from syslogbench.report.load import Group, finished_at, machine_label, machine_numbers

# Each figure as the report shows it: (label, the Fingerprint's field, scale, format, the amount's unit).
FINGERPRINT_COLUMNS: list[tuple[str, str, float, str, str]] = [
    ("cpu", "cpu", 1e6, ".1f", "M loops"),
    ("file churn", "file_churn", 1e3, ",.0f", "k ops"),
    ("loopback TCP", "loopback_tcp", 1, ",.0f", " MB"),
]
FINGERPRINT_HEADER = [
    "profile",
    "runs with a fingerprint",
    *(
        f"{label} {unit.strip()} per CPU s: median (min{DASH}max)"
        for label, _, _, _, unit in FINGERPRINT_COLUMNS
    ),
    "measured in",
]
MACHINES_HEADER = [
    "machine",
    "what its results say of it",
    "runs",
    "capacity searches",
    "knob studies",
    "comparisons",
    "first result",
    "last result",
    *(f"{label}, {unit.strip()} per CPU s" for label, _, _, _, unit in FINGERPRINT_COLUMNS),
]
MACHINES_ANCHOR = "machines"
MACHINES_TITLE = "Machines"
MACHINES_NOTE = (
    "Each machine the results in this report came from, as the results describe it, with the median (and "
    "range) of its runs' fingerprints per CPU second. Runs of two machines never pool: where a scenario ran "
    "on several, each has its own section, named by the machine's number here. docs/measurement.md says how "
    "to compare two machines with the fingerprint."
)
FINGERPRINT_NOTE = (
    "Fixed work timed on the machine just before each run, under the daemon's limits "
    "(`host.fingerprint`): a pure-Python loop (cpu), open-append-close across 192 files on a volume of the logs "
    "volume's kind (file churn: what rsyslog's seed run spends its time on), and 100-byte lines over "
    "loopback TCP. Shown per CPU second, the rate the daemon's CPU seconds scale with; the cell is the median "
    "over the profile's runs here and their range. docs/measurement.md says how to compare two machines."
)
NO_FINGERPRINT_NOTE = (
    "No run here carries a machine fingerprint (results written before `host.fingerprint` existed, or n/a): "
    "whether they ran on machines that differ cannot be told from the results."
)


def all_machine_numbers(
    runs: Sequence[Result],
    searches: Sequence[Mapping],
    studies: Sequence[KnobsResult] = (),
    compared: Sequence[tuple[str, str]] = (),
) -> dict[str, int]:
    """The runs' machines numbered as their sections name them (load.machine_numbers), then the machines
    only capacity searches ran on, by their first search, then those only knob studies ran on, then those
    only comparisons ran on (compared: each comparison's machine label and end)."""
    numbers = machine_numbers(runs)
    for search in sorted(searches, key=capacity_rows.finished):
        numbers.setdefault(capacity_rows.machine_of(search), len(numbers) + 1)
    for study in sorted(studies, key=lambda s: s.finished_utc):
        numbers.setdefault(knobs.machine_of(study, numbers), len(numbers) + 1)
    for label, _ in sorted(compared, key=lambda pair: pair[1]):
        numbers.setdefault(label, len(numbers) + 1)
    return numbers


# -- the fingerprint -------------------------------------------------------------------------------


def fingerprints(results: Sequence[Result]) -> list[Fingerprint]:
    return [run.host.fingerprint for run in results if run.host.fingerprint is not None]


def values_cell(values: Sequence[float], spec: str, scale: float) -> str:
    """The median of these figures and their range."""
    if not values:
        return NA
    return f"{fmt(median(values), spec, scale)} ({fmt_interval(min(values), max(values), spec, scale)})"


def fingerprint_cell(found: Sequence[Fingerprint], name: str, scale: float, spec: str) -> str:
    """The median work per CPU second of one figure over these runs, and its range: the rate CPU times
    scale with, which neighbours on the machine change far less than the rate per wall second."""
    return values_cell([rate for f in found if (rate := getattr(f, name).per_cpu_s) is not None], spec, scale)


def fingerprint_rows(groups: Sequence[Group]) -> list[list[str]]:
    """Per profile, over all its runs in the scenario (counted or not: the machine is the same)."""
    rows = []
    for group in groups:
        found = fingerprints(group.runs)
        cells = [
            fingerprint_cell(found, name, scale, spec) for _, name, scale, spec, _ in FINGERPRINT_COLUMNS
        ]
        sources = ", ".join(sorted({f.source for f in found})) or NA
        rows.append([group.profile, f"{len(found)} of {len(group.runs)}", *cells, sources])
    return rows


def fingerprint_blocks(groups: Sequence[Group]) -> list[Block]:
    heading = Heading("Machine fingerprint", 3)
    if not fingerprints([run for group in groups for run in group.runs]):
        return [heading, Note(NO_FINGERPRINT_NOTE)]
    return [heading, Note(FINGERPRINT_NOTE), Table(FINGERPRINT_HEADER, fingerprint_rows(groups))]


def fingerprint_line(result: Result) -> str:
    """One run's fingerprint in a sentence: per wall second, and per CPU second."""
    found = result.host.fingerprint
    if found is None:
        return "Fingerprint: none (an older or n/a result)."
    parts = []
    for label, name, scale, spec, unit in FINGERPRINT_COLUMNS:
        figure = getattr(found, name)
        per_cpu = fmt(figure.per_cpu_s, spec, scale, unit)
        parts.append(f"{label} {fmt(figure.value, spec, scale, unit)}/s ({per_cpu} per CPU s)")
    took = found.wall_s if found.wall_s is not None else found.seconds
    return f"Fingerprint ({found.source}, {took:.1f} s): {', '.join(parts)}."


# -- the machines table ----------------------------------------------------------------------------


def per_cpu_values(runs: Sequence[Result], searches: Sequence[Mapping], name: str) -> list[float]:
    """One fingerprint figure per CPU second, from the runs' and the capacity searches' machines alike."""
    values = [rate for f in fingerprints(runs) if (rate := getattr(f, name).per_cpu_s) is not None]
    values += [
        rate
        for search in searches
        if (rate := capacity_flags.fingerprint_per_cpu_s(search, name)) is not None
    ]
    return values


def machines_rows(
    results: Sequence[Result],
    numbers: Mapping[str, int],
    searches: Sequence[Mapping] = (),
    studies: Sequence[tuple[str, str]] = (),
    compared: Sequence[tuple[str, str]] = (),
) -> list[list[str]]:
    """One row per machine, numbered as the report's sections name them, with its fingerprint's medians:
    the machines of the runs, of the capacity searches (report/capacity_rows.py names them alike), of the
    knob studies and of the comparisons, each of the last two given as its machine's label and its end."""
    rows = []
    for label, number in numbers.items():
        runs = sorted((r for r in results if machine_label(r.host) == label), key=finished_at)
        caps = [s for s in searches if capacity_rows.machine_of(s) == label]
        knobs = [{"finished_utc": end} for machine, end in studies if machine == label]
        compares = [{"finished_utc": end} for machine, end in compared if machine == label]
        figures = [
            values_cell(per_cpu_values(runs, caps, name), spec, scale)
            for _, name, scale, spec, _ in FINGERPRINT_COLUMNS
        ]
        others = [*caps, *knobs, *compares]
        times = sorted([*(finished_at(run) for run in runs), *(capacity_rows.finished(s) for s in others)])
        dates = [f"{times[0]:%Y-%m-%d %H:%M}", f"{times[-1]:%Y-%m-%d %H:%M}"] if times else [NA, NA]
        counts = [str(len(runs)), str(len(caps)), str(len(knobs)), str(len(compares))]
        rows.append([str(number), label, *counts, *dates, *figures])
    return rows


def machines_section(
    results: Sequence[Result],
    numbers: Mapping[str, int],
    searches: Sequence[Mapping],
    studies: Sequence[KnobsResult] = (),
    compared: Sequence[tuple[str, str]] = (),
) -> Section:
    ran = [(knobs.machine_of(study, numbers), study.finished_utc) for study in studies]
    return Section(
        [
            Heading(MACHINES_TITLE, 2),
            Note(MACHINES_NOTE),
            Table(MACHINES_HEADER, machines_rows(results, numbers, searches, ran, compared)),
        ],
        anchor=MACHINES_ANCHOR,
    )


def machines_line(results: Sequence[Result]) -> str:
    labels = list(dict.fromkeys(machine_label(result.host) for result in results))
    noun = "Machine" if len(labels) == 1 else "Machines"
    return f"{noun}: " + "; ".join(labels) + "."
