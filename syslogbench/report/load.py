"""Results from results/: loading through the result model, and grouping by scenario, variant and profile."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from syslogbench.model.codec import wrong_field
from syslogbench.model.result import Host, Result, ResultError, read
from syslogbench.report import stats

DEFAULT_SCENARIO = "seed2014"


BASELINE = "baseline"  # the simplest receiver: the ceiling every daemon is set against


COUNTED_VERDICT = "pass"


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
    """Every result in results_dir (all *.json but schema.json), in file-name order."""
    paths = sorted(p for p in results_dir.glob("*.json") if p.name != "schema.json")
    return [result for result in map(read_result, paths) if result is not None]


def finished_at(result: Result) -> datetime:
    return result.finished


def scenario_of(result: Result) -> str:
    """The scenario id, and its variant when the run's load shape was not the scenario's own: unlike runs
    never pool."""
    return result.label


def profile_of(result: Result) -> str:
    """A run of a user's own config (run --config) is its own group, by the config's hash: never pooled."""
    return profile_label(result.daemon.profile, result.config.sha256 if result.config else None)


def profile_label(profile: str, config_sha256: str | None) -> str:
    """The profile, and the user config's hash when it ran one (--config), as runs and searches name it."""
    return profile + (f" (config {config_sha256[:12]})" if config_sha256 else "")


def machine_label(host: Host) -> str:
    """What the result says of its machine. Runs whose labels differ never pool: the same CPU model can
    give quite different figures (docs/measurement.md, the machine fingerprint)."""
    gib = host.memory_bytes / 2**30
    return (
        f"{host.cpu_model}, {host.cores} cores, {gib:.1f} GiB RAM, "
        f"kernel {host.kernel}, cgroup v{host.cgroup_version}, Docker {host.docker_version}"
    )


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

    def __post_init__(self) -> None:
        self.runs = sorted(self.runs, key=finished_at)
        self.summaries = {metric: stats.summarize(self.values(metric)) for metric in METRICS}

    @property
    def daemon(self) -> str:
        return self.runs[-1].daemon.name or self.profile

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
    """Per scenario (the default first), its profiles' groups, the baseline first.

    Runs of one scenario on two machines never pool: each machine's runs get a section of their own,
    named "<scenario> on machine <n>" (see machine_numbers)."""
    chosen = [r for r in results if scenario_id is None or scenario_of(r) == scenario_id]
    numbers = machine_numbers(chosen)
    by_key: dict[tuple[str, int, str], list[Result]] = {}
    for result in chosen:
        key = (scenario_of(result), numbers[machine_label(result.host)], profile_of(result))
        by_key.setdefault(key, []).append(result)
    grouped: dict[str, list[Group]] = {}
    for scenario in scenario_ids(chosen):
        machines = sorted({m for s, m, _ in by_key if s == scenario})
        for machine in machines:
            name = scenario if len(machines) == 1 else f"{scenario} on machine {machine}"
            profiles = sorted((p for s, m, p in by_key if (s, m) == (scenario, machine)), key=profile_order)
            grouped[name] = [Group(name, p, by_key[scenario, machine, p]) for p in profiles]
    return grouped


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
    """The sections of the seed scenario at its own shape, one per machine."""
    return {name: groups for name, groups in grouped.items() if groups[0].runs[0].label == DEFAULT_SCENARIO}


def matrix_rank(groups: Sequence[Group]) -> tuple[int, datetime]:
    """The machine with the most profiles counted wins; on a tie, the one with the newest run."""
    return sum(1 for g in groups if g.throughput), max(finished_at(r) for g in groups for r in g.runs)


def version_matrix(grouped: Mapping[str, Sequence[Group]]) -> tuple[str, Sequence[Group]] | None:
    """The section the report opens with, (name, groups): the seed scenario on the machine where the
    most profiles counted; None without a seed run."""
    seeds = seed_sections(grouped)
    if not seeds:
        return None
    name = max(seeds, key=lambda key: matrix_rank(seeds[key]))
    return name, seeds[name]


def daemon_groups(groups: Sequence[Group]) -> list[Group]:
    """The daemons' groups with a counted throughput, fastest first; the baseline is a receiver."""
    measured = [g for g in groups if g.throughput and g.profile != BASELINE]
    return sorted(measured, key=lambda g: -g.throughput.median if g.throughput else 0)
