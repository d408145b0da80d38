"""The result document: its blocks together, its schema versions and the one upgrade of older ones, its
reader and writer, its id, and what a run that measured nothing records."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from syslogbench.contract import read_json, write_atomic
from syslogbench.model.result.config import UserConfig
from syslogbench.model.result.counts import Messages, Sender
from syslogbench.model.result.harness import Harness
from syslogbench.model.result.host import Host, Limits, Topology
from syslogbench.model.result.plain import ResultError, load, optional, plain
from syslogbench.model.result.relay import Relay
from syslogbench.model.result.scenario import Daemon, Scenario, shape_variant
from syslogbench.model.result.udp import Udp
from syslogbench.model.result.usage import (
    Cpu,
    End,
    Generators,
    Io,
    Memory,
    Rate,
    Samples,
    SenderBound,
    Throughput,
    rate_of,
    time_line,
)
from syslogbench.model.settings import DEFAULT_VARIANT

if TYPE_CHECKING:
    from syslogbench.model.scenarios import Scenario as ScenarioFile
    from syslogbench.model.settings import Settings


# 2 added scenario.variant; a version 1 document gets it in upgrade().
SCHEMA_VERSION = 2
VERDICTS = ("pass", "loss", "timeout", "error", "n/a")


@dataclass
class Matrix:
    id: str
    replicate: int


@dataclass
class Result:
    run_id: str
    started_utc: str
    finished_utc: str
    verdict: str
    scenario: Scenario
    daemon: Daemon
    limits: Limits
    host: Host
    messages: Messages
    summary: str
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    elapsed_s: float | None = None
    end: End = field(default_factory=End)
    cpu: Cpu = field(default_factory=Cpu)
    memory: Memory = field(default_factory=Memory)
    io: Io = field(default_factory=Io)
    senders: list[Sender] = field(default_factory=list)
    generators: Generators = field(default_factory=Generators)
    sender_bound: SenderBound = field(default_factory=SenderBound)
    throughput: Throughput = field(default_factory=Throughput)
    rate: Rate | None = optional()  # older results lack it
    udp: Udp | None = None  # UDP runs only
    progress: list[list[float]] = field(default_factory=list)
    samples: Samples = field(default_factory=Samples)
    harness: Harness = field(default_factory=Harness)
    matrix: Matrix | None = optional()  # one cell of `python -m syslogbench matrix`
    relay: Relay | None = optional()  # relay scenarios only
    topology: Topology | None = optional()  # older results lack it
    config: UserConfig | None = optional()  # `run --config`: a config of the user's own
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return plain(self)  # type: ignore[return-value]

    def to_json(self, indent: int | None = None) -> str:
        """The document as written: keys sorted, on one line unless indent is given."""
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        return load(cls, upgrade(data))

    def write(self, directory: Path, indent: int | None = 2) -> Path:
        """results/<run_id>.json, written then renamed so that a reader never sees half of it; on failure
        (a full disk) nothing is left behind and OSError says why. The one writer of results, beside read()."""
        path = directory / f"{self.run_id}.json"
        try:
            write_atomic(path, self.to_json(indent) + "\n")
        except OSError:
            for partial in directory.glob(f".{path.name}.tmp*"):  # what write_atomic left behind
                partial.unlink(missing_ok=True)
            raise
        return path

    @property
    def finished(self) -> datetime:
        return datetime.fromisoformat(self.finished_utc)

    @property
    def label(self) -> str:
        """The scenario id, and the variant when the run's load shape was not the scenario's own."""
        variant = self.scenario.variant
        return self.scenario.id if variant == DEFAULT_VARIANT else f"{self.scenario.id}@{variant}"


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """A document of any schema version as the current version has it; the input is left as it was."""
    version = data.get("schema_version") if isinstance(data, dict) else None
    if not isinstance(version, int) or not 1 <= version <= SCHEMA_VERSION:
        raise ResultError(f"result: schema_version {version!r} is not one of 1..{SCHEMA_VERSION}")
    if version == 1:
        scenario = data.get("scenario")
        if not isinstance(scenario, dict):
            raise ResultError("result: missing key 'scenario'")
        shape = (scenario.get("hosts"), scenario.get("senders_per_host"), scenario.get("messages_per_sender"))
        # Version 1 took every load's shape from .env, the seed's unless overridden.
        variant = shape_variant(*shape)  # type: ignore[arg-type]
        data = data | {"schema_version": 2, "scenario": scenario | {"variant": variant}}
    return data


def read(path: Path) -> Result:
    """The result in path; ResultError (naming the file) when it is not one. Result.write() writes it."""
    try:
        return Result.from_dict(read_json(path))
    except ValueError as error:  # json.JSONDecodeError and ResultError alike
        raise ResultError(f"{path.name}: {error}") from error


def utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_id(started: datetime, profile: str, suffix: str | None = None) -> str:
    """e.g. 20261124T054846.123Z-rsyslog-8.2504-3f9a: sorts by time, readable, unique below the second.

    Milliseconds and a random suffix, because two runs on one machine (two compose projects writing into one
    results directory) can start in the same second; the ids of one second were 20261124T054846Z-<profile>,
    and such old results still load (the id is a name, never parsed).
    """
    stamp = started.astimezone(UTC)
    tail = secrets.token_hex(2) if suffix is None else suffix
    return f"{stamp.strftime('%Y%m%dT%H%M%S')}.{stamp.microsecond // 1000:03d}Z-{profile}-{tail}"


def nothing_received(cfg: Settings) -> Messages:
    return Messages(expected=cfg.expected_messages, done_expected=cfg.senders)


def not_applicable(
    cfg: Settings, scenario: ScenarioFile, daemon: Daemon, host: Host, reason: str, when: datetime
) -> Result:
    """A combination the daemon cannot run is a result too: verdict n/a, nothing measured, the reason."""
    limits = Limits.of(cfg, host)
    messages = nothing_received(cfg)
    cpu = Cpu()
    return Result(
        run_id=run_id(when, daemon.profile),
        started_utc=utc(when),
        finished_utc=utc(when),
        verdict="n/a",
        errors=[f"n/a: {reason}"],
        notes=limits.notes(),
        scenario=Scenario.of(cfg, scenario),
        daemon=daemon,
        limits=limits,
        host=host,
        messages=messages,
        rate=rate_of(scenario.rate, cfg.senders, []),
        udp=Udp.of(messages, None) if scenario.transport == "udp" else None,
        summary=time_line(cpu, None, None, None),
    )


def main(argv: list[str]) -> int:
    bad = 0
    for name in argv:
        try:
            read(Path(name))
        except (OSError, ResultError) as error:
            print(f"{name}: {error}")
            bad += 1
    return 1 if bad else 0
