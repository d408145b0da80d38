"""Results from results/: loading through the result model, and grouping by scenario, variant, machine, tuning
and profile; and the knob studies of results/knobs/, read through their model."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from syslogbench.model.codec import wrong_field
from syslogbench.model.knobs import KnobsResult, KnobsResultError
from syslogbench.model.knobs import read as read_knobs
from syslogbench.model.result import Host, Result, ResultError, read
from syslogbench.report import stats

DEFAULT_SCENARIO = "seed2014"


BASELINE = "baseline"  # the simplest receiver: the ceiling every daemon is set against


COUNTED_VERDICT = "pass"

# The tunings (model/result/scenario.py Daemon.tuning): the package's defaults, its maintainers' recommended settings, a
# user's own config (--config), and a step of `knobs` (custom). The report ranks daemons within one tuning only.
DEFAULT_TUNING = "default"
TUNED = "tuned"
USER_TUNING = "user"
CUSTOM_TUNING = "custom"
TUNING_ORDER = (DEFAULT_TUNING, TUNED, USER_TUNING)
# The tunings the first screen ranks, each on its own, and how a sentence names them.
RANKED_TUNINGS = (DEFAULT_TUNING, TUNED)
TUNING_WORDS = {DEFAULT_TUNING: "at the defaults", TUNED: "tuned", USER_TUNING: "with a user's config"}


log = logging.getLogger(__name__)


def read_result(path: Path) -> Result | None:
    """The result in path, or None, with one line naming the file and what is wrong with it."""
    try:
        result = read(path)
    except (OSError, UnicodeDecodeError, ResultError) as err:
        log.warning("report: skipping %s: not a syslogbench result (%s)", path, err)
        return None
    wrong = wrong_field(result)
    if wrong is not None:
        log.warning("report: skipping %s: %s", path, wrong)
        return None
    return result


def load_results(results_dir: Path) -> list[Result]:
    """Every result in results_dir (all *.json but schema.json), in file-name order. Only the folder's own
    files: the runs a knob study keeps under results/knobs/<id>/runs/ are its steps', not runs of their own."""
    paths = sorted(p for p in results_dir.glob("*.json") if p.name != "schema.json")
    return [result for result in map(read_result, paths) if result is not None]


def load_knobs(results_dir: Path) -> tuple[list[KnobsResult], list[str]]:
    """Every knob study in results_dir/knobs (its *.json, not the folders beside them), by file name, read
    strictly through its model; and what could not be read, one line each, as a warning too."""
    found, skipped = [], []
    for path in sorted((results_dir / "knobs").glob("*.json")):
        try:
            found.append(read_knobs(path))
        except KnobsResultError as error:
            log.warning("report: skipping %s: not a knob study (%s)", path, error)
            skipped.append(f"{path.name}: {error}")
    return found, skipped


def finished_at(result: Result) -> datetime:
    return result.finished


def scenario_of(result: Result) -> str:
    """The scenario id, and its variant when the run's load shape was not the scenario's own: unlike runs
    never pool."""
    return result.label


def tuning_name(tuning: str | None, knobs: Mapping[str, object] | None, user_config: bool) -> str:
    """A tuning as the report keys and names it: "default", "tuned", "user", or a step of `knobs` by its knobs'
    values ("custom: file-cache=10, io-buffer=64k"), so that two steps never pool. A result from before the
    tuning axis records none: it ran the package's defaults, or a user's own config (--config)."""
    if not tuning:
        return USER_TUNING if user_config else DEFAULT_TUNING
    if tuning != CUSTOM_TUNING or not knobs:
        return tuning
    values = [
        f"{name}={knob.get('value', '?') if isinstance(knob, Mapping) else knob}"
        for name, knob in knobs.items()
    ]
    return f"{CUSTOM_TUNING}: {', '.join(values)}"


def tuning_words(tuning: str) -> str:
    """ "at the defaults", "tuned": a tuning in a sentence."""
    return TUNING_WORDS.get(tuning, f"at {tuning}")


def tuning_of(result: Result) -> str:
    return tuning_name(result.daemon.tuning, result.daemon.knobs, result.config is not None)


def tuning_rank(tuning: str) -> tuple[int, str]:
    """The default first, then tuned, then a user's configs, then the custom steps by name."""
    return (TUNING_ORDER.index(tuning) if tuning in TUNING_ORDER else len(TUNING_ORDER), tuning)


def profile_of(result: Result) -> str:
    """A group's name: the profile, a user config's hash (run --config: never pooled), and the tuning where it
    is not the default ("rsyslog-8.2504, tuned": never pooled with the default)."""
    return profile_label(result.daemon.profile, config_of(result), tuning_of(result))


def config_of(result: Result) -> str | None:
    return result.config.sha256 if result.config else None


def profile_label(profile: str, config_sha256: str | None, tuning: str = DEFAULT_TUNING) -> str:
    """The profile, the user config's hash when it ran one (--config), and the tuning unless it is the default
    or the user's config (which the hash names), as runs and searches name it."""
    label = profile + (f" (config {config_sha256[:12]})" if config_sha256 else "")
    return label if tuning in (DEFAULT_TUNING, USER_TUNING) else f"{label}, {tuning}"


def machine_label(host: Host) -> str:
    """What the result says of its machine. Runs whose labels differ never pool: the same CPU model can
    give quite different figures (docs/measurement.md, the machine fingerprint), so a result that knows its
    boot is its own machine's."""
    gib = host.memory_bytes / 2**30
    return (
        f"{host.cpu_model}, {host.cores} cores, {gib:.1f} GiB RAM, "
        f"kernel {host.kernel}, cgroup v{host.cgroup_version}, Docker {host.docker_version}"
    ) + (f", boot {host.boot}" if host.boot else "")


def machine_numbers(results: Sequence[Result]) -> dict[str, int]:
    """Each machine's number in the report: 1 for the one whose first run is the oldest."""
    first: dict[str, datetime] = {}
    for result in results:
        label = machine_label(result.host)
        first[label] = min(first.get(label, result.finished), result.finished)
    return {label: number for number, label in enumerate(sorted(first, key=first.__getitem__), start=1)}


def latest_per_profile(results: Sequence[Result], scenario_id: str = DEFAULT_SCENARIO) -> list[Result]:
    """The newest run (by finished_utc) of each daemon profile in the scenario, sorted by profile."""
    latest: dict[str, Result] = {}
    for result in results:
        if scenario_of(result) != scenario_id:
            continue
        profile = profile_of(result)
        if profile not in latest or finished_at(result) > finished_at(latest[profile]):
            latest[profile] = result
    return [latest[profile] for profile in sorted(latest)]


def scenario_ids(results: Sequence[Result]) -> list[str]:
    """The scenarios present: the default one first, then by name."""
    found = {scenario_of(result) for result in results}
    return sorted(found, key=lambda s: (s != DEFAULT_SCENARIO, s))


def profile_order(profile: str) -> tuple[bool, str]:
    """The baseline first, then the profiles by name."""
    return profile != BASELINE, profile


def sender_bound(result: Result) -> bool | None:
    """The run's sender_bound.value: True, False, or None when not recorded or not known."""
    return result.sender_bound.value


def cpu_per_million(result: Result) -> float | None:
    used, received = result.cpu.used_s, result.messages.received
    return None if used is None or not received else used / received * 1e6


# What the statistics are taken of, from each counted run; None (not measured) is left out.
METRICS: dict[str, Callable[[Result], float | None]] = {
    "msgs_per_s": lambda r: r.throughput.msgs_per_s,
    "elapsed_s": lambda r: r.elapsed_s,
    "cpu_user_s": lambda r: r.cpu.user_s,
    "cpu_system_s": lambda r: r.cpu.system_s,
    "cpu_s": lambda r: r.cpu.used_s,
    # The daemon's CPU per million messages: what compares across machines (docs/measurement.md).
    "cpu_s_per_million": cpu_per_million,
    "max_rss_bytes": lambda r: r.memory.max_rss_bytes,
    "peak_bytes": lambda r: r.memory.peak_bytes,
}


@dataclass
class Group:
    """Every run of one profile in one scenario; only the `pass` runs count toward the statistics."""

    scenario: str
    profile: str
    runs: list[Result]
    summaries: dict[str, stats.Summary | None] = field(default_factory=dict)
    tuning: str = DEFAULT_TUNING

    def __post_init__(self) -> None:
        self.runs = sorted(self.runs, key=finished_at)
        self.summaries = {metric: stats.summarize(self.values(metric)) for metric in METRICS}

    @property
    def daemon(self) -> str:
        return self.runs[-1].daemon.name or self.profile

    @property
    def name(self) -> str:
        """The profile (and a user config's hash) without the tuning: where a column says the tuning."""
        return profile_label(self.runs[-1].daemon.profile, config_of(self.runs[-1]))

    @property
    def counted(self) -> list[Result]:
        return [run for run in self.runs if run.verdict == COUNTED_VERDICT]

    def values(self, metric: str) -> list[float]:
        found = (METRICS[metric](run) for run in self.counted)
        return [float(value) for value in found if value is not None]

    def median(self, metric: str) -> float | None:
        summary = self.summaries[metric]
        return summary.median if summary else None

    @property
    def throughput(self) -> stats.Summary | None:
        return self.summaries["msgs_per_s"]

    @property
    def cpu_per_million(self) -> stats.Summary | None:
        return self.summaries["cpu_s_per_million"]

    @property
    def not_counted(self) -> Counter[str]:
        return Counter(run.verdict for run in self.runs if run.verdict != COUNTED_VERDICT)

    @property
    def sender_bound_runs(self) -> list[Result]:
        return [run for run in self.runs if sender_bound(run)]

    @property
    def erratic(self) -> bool:
        return bool(self.throughput and self.throughput.erratic)


def group_results(results: Sequence[Result], scenario_id: str | None = None) -> dict[str, list[Group]]:
    """Per scenario (the default first), its sections, each of its profiles' groups, the baseline first.

    Runs of two machines never pool, nor runs of two tunings: each machine's runs get a section of their own,
    named "<scenario> on machine <n>" (see machine_numbers), and each tuning but the default one, "<scenario>
    (tuned)", so that what a section ranks is of one tuning. The baseline, a receiver with no tuning, is in
    each section of its scenario and machine: the ceiling every daemon there is set against."""
    chosen = [r for r in results if scenario_id is None or scenario_of(r) == scenario_id]
    numbers = machine_numbers(chosen)
    by_key: dict[tuple[str, int, str, str], list[Result]] = {}
    for result in chosen:
        tuning = DEFAULT_TUNING if result.daemon.profile == BASELINE else tuning_of(result)
        key = (scenario_of(result), numbers[machine_label(result.host)], tuning, profile_of(result))
        by_key.setdefault(key, []).append(result)
    grouped: dict[str, list[Group]] = {}
    for scenario in scenario_ids(chosen):
        machines = sorted({m for s, m, _, _ in by_key if s == scenario})
        for machine in machines:
            here = {(t, p): runs for (s, m, t, p), runs in by_key.items() if (s, m) == (scenario, machine)}
            receivers = [key for key, runs in here.items() if runs[0].daemon.profile == BASELINE]
            tunings = sorted({t for t, p in here if (t, p) not in receivers}, key=tuning_rank)
            for tuning in tunings or [DEFAULT_TUNING]:
                name = section_name(scenario, tuning, machine if len(machines) > 1 else None)
                keys = sorted([*receivers, *(k for k in here if k[0] == tuning and k not in receivers)],
                              key=lambda k: profile_order(k[1]))  # fmt: skip
                grouped[name] = [Group(name, p, here[t, p], tuning=t) for t, p in keys]
    return grouped


def section_name(scenario: str, tuning: str, machine: int | None) -> str:
    """ "seed2014", "seed2014 (tuned)", "seed2014 (tuned) on machine 2"."""
    name = scenario if tuning == DEFAULT_TUNING else f"{scenario} ({tuning})"
    return name if machine is None else f"{name} on machine {machine}"


def section_tuning(groups: Iterable[Group]) -> str:
    """The tuning of a section's daemons (its baseline has none of its own)."""
    return next((group.tuning for group in groups if group.profile != BASELINE), DEFAULT_TUNING)


def baseline_group(groups: Sequence[Group]) -> Group | None:
    """The scenario's `baseline` profile, if it has a counted throughput."""
    for group in groups:
        if group.profile == BASELINE and group.throughput:
            return group
    return None


def fastest_group(groups: Sequence[Group]) -> Group | None:
    """The daemon profile with the highest median msgs/s (the first on a tie).

    The baseline is a receiver, not a daemon: it is the fastest only when it is all there is.
    """
    measured = [group for group in groups if group.throughput]
    daemons = [group for group in measured if group.profile != BASELINE] or measured
    return max(daemons, key=lambda g: g.throughput.median if g.throughput else 0, default=None)


def throughput_ratio(group: Group, reference: Group | None) -> stats.Ratio | None:
    """median msgs/s of group / that of reference, with a bootstrap 95% interval."""
    if reference is None or not group.throughput or not reference.throughput:
        return None
    return stats.ratio_of_medians(group.values("msgs_per_s"), reference.values("msgs_per_s"))


def seed_sections(grouped: Mapping[str, Sequence[Group]]) -> dict[str, Sequence[Group]]:
    """The sections of the seed scenario at its own shape, one per machine and tuning."""
    return {name: groups for name, groups in grouped.items() if groups[0].runs[0].label == DEFAULT_SCENARIO}


def matrix_rank(sections: Sequence[Sequence[Group]]) -> tuple[int, datetime]:
    """The machine with the most profiles counted wins (at any tuning); on a tie, the one with the newest run."""
    counted = {group.profile for groups in sections for group in groups if group.throughput}
    newest = max(finished_at(r) for groups in sections for g in groups for r in g.runs)
    return len(counted), newest


def version_matrix(grouped: Mapping[str, Sequence[Group]]) -> list[tuple[str, Sequence[Group]]]:
    """The sections the report opens with, as (name, groups): the seed scenario on the machine where the most
    profiles counted, one section per tuning, the default first; none without a seed run."""
    machines: dict[str, list[tuple[str, Sequence[Group]]]] = {}
    for name, groups in seed_sections(grouped).items():
        machines.setdefault(machine_label(groups[0].runs[0].host), []).append((name, groups))
    if not machines:
        return []
    best = max(machines.values(), key=lambda found: matrix_rank([groups for _, groups in found]))
    return sorted(best, key=lambda section: tuning_rank(section_tuning(section[1])))


def daemon_groups(groups: Sequence[Group]) -> list[Group]:
    """The daemons' groups with a counted throughput, fastest first; the baseline is a receiver."""
    measured = [g for g in groups if g.throughput and g.profile != BASELINE]
    return sorted(measured, key=lambda g: -g.throughput.median if g.throughput else 0)
