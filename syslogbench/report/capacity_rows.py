"""The capacity searches pooled into the rows a reader compares: one row per profile, tuning, scenario, settings
and machine, with n, the NDR's median and range, the PDR, the latency at 10/50/90% of the PDR, and the flags
of its searches (report/capacity_flags.py) that say how far a row can be trusted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from statistics import median

from syslogbench.model import capacity as model
from syslogbench.model.result import Host
from syslogbench.report import capacity_flags
from syslogbench.report.load import (
    BASELINE,
    DEFAULT_TUNING,
    machine_label,
    profile_label,
    tuning_name,
    tuning_rank,
)

FRACTIONS = ("10%", "50%", "90%")  # of the PDR, where the latency is measured after the search
TRANSPORT_ORDER = ("tcp", "udp", "tls")

# The settings whose defaults changed as the procedure did: a search at their earlier values is what the first
# screen shows for a transport that no search at today's defaults has (report/capacity_answer.py,
# lead_blocks).
EARLIER_KEYS = frozenset(
    {*(capacity_flags.SETTING_NAMES[name] for name in model.BEFORE_THE_KEY), "DAEMON_CORES"}
)


def config_of(data: Mapping) -> str | None:
    config = data.get("config") or {}
    return str(config["sha256"]) if config.get("sha256") else None


def profile_of(data: Mapping) -> str:
    """A search of a user's own config (capacity --config) is named by the config's hash, as a run is."""
    return profile_label(data["profile"], config_of(data))


def tuning_of(data: Mapping) -> str:
    """The search's tuning, as a run's is named (load.tuning_name): "default" in a result from before the
    tuning axis, "user" for a user's config."""
    return tuning_name(data.get("tuning"), data.get("knobs"), config_of(data) is not None)


def label_of(data: Mapping) -> str:
    """The search's profile, config and tuning where it is not the default: "rsyslog-8.2504, tuned"."""
    return profile_label(data["profile"], config_of(data), tuning_of(data))


def machine_of(data: Mapping) -> str:
    """The machine as the Machines table names it: the same words as a run's, so the two pool."""
    host = data.get("machine") or {}
    return machine_label(
        Host(
            cpu_model=str(host.get("cpu_model", "?")),
            cores=int(host.get("cores", 0) or 0),
            memory_bytes=int(host.get("memory_bytes", 0) or 0),
            kernel=str(host.get("kernel", "?")),
            docker_version=str(host.get("docker_version", "?")),
            cgroup_version=int(host.get("cgroup_version", 0) or 0),
            boot=str(host["boot"]) if host.get("boot") else None,
        )
    )


def finished(data: Mapping) -> datetime:
    """When the search ended (or began, for one cut short before it wrote its end); the epoch if neither."""
    for key in ("finished_utc", "started_utc"):
        try:
            when = datetime.fromisoformat(str(data.get(key) or "").replace("Z", "+00:00"))
        except ValueError:
            continue
        return when if when.tzinfo else when.replace(tzinfo=UTC)
    return datetime.fromtimestamp(0, UTC)


@dataclass
class Row:
    """The searches of one profile, tuning, scenario, settings and machine."""

    profile: str
    scenario: str
    transport: str
    machine: str
    settings: tuple[str, ...]
    searches: list[Mapping] = field(default_factory=list)
    tuning: str = DEFAULT_TUNING

    @property
    def label(self) -> str:
        """The profile with its tuning where it is not the default, as a sentence names it."""
        return profile_label(self.profile, None, self.tuning)

    @property
    def n(self) -> int:
        return len(self.searches)

    @property
    def ndrs(self) -> list[float]:
        return [rate for s in self.searches if (rate := capacity_flags.published(s["ndr"]))]

    @property
    def ndr(self) -> float | None:
        return median(self.ndrs) if self.ndrs else None

    @property
    def pdr(self) -> float | None:
        values = [rate for s in self.searches if (rate := capacity_flags.published(s["pdr"]))]
        return median(values) if values else None

    @property
    def pdr_target(self) -> float:
        return float(self.searches[0]["pdr"].get("loss_ratio") or 0)

    def latency(self, fraction: str, percentile: str) -> float | None:
        """The median over the searches of one latency percentile at a fraction of the PDR, in ms."""
        values = [
            value
            for s in self.searches
            if (value := ((s.get("latency_at_pdr") or {}).get(fraction) or {}).get(percentile)) is not None
        ]
        return median(values) if values else None

    @property
    def flags(self) -> list[str]:
        """Every flag of any of its searches; "contradicted" says in how many; and whether its machines'
        fingerprints differ."""
        found: dict[str, int] = {}
        for search in self.searches:
            for flag in capacity_flags.flags(search):
                found[flag] = found.get(flag, 0) + 1
        pooled = [
            f"{flag} ({count} of {self.n})"
            if flag in (capacity_flags.CONTRADICTED, capacity_flags.UNCONFIRMED) and self.n > 1
            else flag
            for flag, count in found.items()
        ]
        return pooled + ([spread] if (spread := capacity_flags.fingerprint_spread(self.searches)) else [])

    @property
    def plain(self) -> bool:
        """A daemon's own config at the default settings, found: a row the first screen may rank."""
        return self.own_config and not any(
            flag.startswith(capacity_flags.OTHER_SETTINGS) for flag in self.flags
        )

    @property
    def own_config(self) -> bool:
        """A daemon's own config, found (not a floor): what the first screen ranks, at the defaults where any
        such row exists, else at an earlier search procedure (earlier_procedure)."""
        return self.profile != BASELINE and not any(
            flag.startswith(("at least", capacity_flags.TEST_CONFIG)) for flag in self.flags
        )

    @property
    def earlier_procedure(self) -> bool:
        """Its settings differ from today's defaults only in how the search decides a rate (TRIAL_SUM,
        EXCEED_RATIO, CONFIRM_S) or where the rig ran (DAEMON_CORES, 0 by default before 2026-11-27): the
        daemon's own config at the procedure of its day."""
        return all(setting.split("=", 1)[0] in EARLIER_KEYS for setting in self.settings)

    def overlaps(self, other: Row) -> bool:
        """Whether the two rows' NDR ranges share a rate: then their order is not settled."""
        return (
            bool(self.ndrs and other.ndrs)
            and min(self.ndrs) <= max(other.ndrs)
            and min(other.ndrs) <= max(self.ndrs)
        )


def transport_rank(transport: str) -> tuple[int, str]:
    return (
        TRANSPORT_ORDER.index(transport) if transport in TRANSPORT_ORDER else len(TRANSPORT_ORDER),
        transport,
    )


def rows(searches: Sequence[Mapping]) -> list[Row]:
    """The summary's rows: by transport, then tuning (the defaults first: rows of two tunings are never
    ranked together), then NDR (highest first)."""
    found: dict[tuple, Row] = {}
    for search in searches:
        settings = tuple(capacity_flags.other_settings(search))
        key = (profile_of(search), search["scenario"], search["transport"], machine_of(search), settings)
        tuning = tuning_of(search)
        # A floor (capped at RATE_MAX, or stopped short) is a row of its own: pooled with searches that found
        # a rate, it would make their row a floor too, or count its cap as a rate.
        floor = capacity_flags.at_least(search) is not None
        found.setdefault((*key, tuning, floor), Row(*key, tuning=tuning)).searches.append(search)
    return sorted(
        found.values(),
        key=lambda row: (
            transport_rank(row.transport),
            tuning_rank(row.tuning),
            -(row.ndr or 0),
            row.profile,
        ),
    )


def busiest_machine(searches: Sequence[Mapping]) -> str | None:
    """The machine with the most capacity results (the earliest to finish one, on a tie)."""
    if not searches:
        return None
    counts: dict[str, int] = {}
    for search in sorted(searches, key=finished):
        counts[machine_of(search)] = counts.get(machine_of(search), 0) + 1
    return max(counts, key=counts.__getitem__)
