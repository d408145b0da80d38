"""Scenarios are data: scenarios/<id>.yaml, typed and validated. `SCENARIO=<id>` picks one.

A scenario holds the whole experiment: the axes of a run (transport, format, message size, destination,
parallelize, ...) and its load (hosts, senders per host, messages per sender, the DONE rule, the seed).
.env holds only what belongs to the machine. Once results exist for an id, the file is frozen: a change
means a new id. Runs inside the containers too (Debian's python3-yaml).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, make_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from syslogbench.model import preprocess

if TYPE_CHECKING:
    import yaml

DIRECTORY = Path(os.environ.get("SCENARIO_DIR", Path(__file__).resolve().parents[2] / "scenarios"))
DEFAULT = "seed2014"
REQUIRED = object()  # a Field's default when every file must give the key


@dataclass(frozen=True)
class Field:
    """One key of a scenario file, declared once. The file's validation and defaults, the features a daemon
    needs, the Scenario type, the result's scenario (model/result/scenario.py) and its part of results/schema.json
    (`make render`) all come from these records: a new axis is one record here, plus the watcher's part."""

    name: str
    kind: type  # int or str
    about: str = ""  # what it means: the comment of the declaration, and the schema's description
    allowed: tuple[object, ...] = ()  # the values it may take; empty: any of its kind
    minimum: int | None = None
    # A key added after results existed for the first scenarios: a file may leave it out, and gets this.
    default: object = REQUIRED
    # The feature a daemon's manifest must list for a value that not every daemon has; None: every daemon.
    needs: Callable[[Any], str | None] = lambda value: None
    load: bool = False  # part of the load: the result records it as it ran (the settings, a variant included)

    def problems(self, where: str, value: object) -> list[str]:
        if not isinstance(value, self.kind) or isinstance(value, bool):
            return [f"{where}: {self.name} must be a {self.kind.__name__}, got {value!r}"]
        if self.allowed and value not in self.allowed:
            return [f"{where}: {self.name}={value!r} is not one of {list(self.allowed)}"]
        if self.minimum is not None and value < self.minimum:  # type: ignore[operator]
            return [f"{where}: {self.name}={value} is below {self.minimum}"]
        return []

    def schema(self) -> dict[str, object]:
        """This key's JSON schema, as results/schema.json holds it under scenario."""
        described = {"description": self.about} if self.about else {}
        if self.allowed:
            return {"enum": list(self.allowed), **described}
        minimum = {} if self.minimum is None else {"minimum": self.minimum}
        return {"type": {int: "integer", str: "string"}[self.kind], **minimum, **described}


FIELDS = (
    Field("id", str),
    Field("description", str),
    Field("transport", str, allowed=("tcp", "udp", "tls"), needs={"udp": "udp", "tls": "tls"}.get),
    Field("format", str, allowed=("rfc3164", "rfc5424"), needs={"rfc5424": "rfc5424"}.get),
    Field("message_bytes", int, minimum=80),
    Field(
        "destination",
        str,
        allowed=("split", "plain", "relay"),
        needs={"plain": "plain-file", "relay": "relay"}.get,
    ),
    Field("parallelize", int, minimum=0, needs=lambda partitions: "parallelize" if partitions else None),
    Field("rate", int, "messages per second per sender; 0 is all-out", minimum=0, default=0),
    Field(
        "connections",
        int,
        "the concurrent connections the scenario is about (seed 004's table), hosts x senders_per_host; 0: not "
        "a connection-count scenario",
        minimum=0,
        default=0,
    ),
    Field(
        "preprocess",
        str,
        "the pre-processing row (model/preprocess.py)",
        allowed=tuple(preprocess.KINDS),
        default="none",
        needs=lambda name: preprocess.KINDS[name].feature,
    ),
    Field(
        "receive",
        str,
        "parsed: the daemon parses each message; raw: it stores the received line without parsing (seed 003)",
        allowed=("parsed", "raw"),
        default="parsed",
        needs={"raw": "raw-receive"}.get,
    ),
    Field(
        "buffer",
        str,
        "the central daemon's queue towards the relay target",
        allowed=("none", "disk-reliable", "disk-normal", "disk-assisted"),
        default="none",
        needs=lambda buffer: None if buffer == "none" else buffer,
    ),
    Field(
        "relay_target",
        str,
        "how the relay target reads: normal, slow (at a limited rate), pause (stops reading a while), "
        "pause-restart (pauses, and the central daemon is stopped and started again meanwhile)",
        allowed=("normal", "slow", "pause", "pause-restart"),
        default="normal",
    ),
    # The load: `hosts` generator containers, each with `senders_per_host` parallel senders (connections),
    # each sending `messages_per_sender` messages and one DONE.
    Field("hosts", int, minimum=1, load=True),
    Field("senders_per_host", int, minimum=1, load=True),
    Field("messages_per_sender", int, minimum=1, load=True),
    # The run ends when SEC's SingleWithThreshold sees done_threshold DONE lines in done.log within
    # done_window seconds; 0 means every sender (hosts x senders_per_host).
    Field("done_threshold", int, minimum=0, load=True),
    Field("done_window", int, minimum=1, load=True),
    # Facility and severity are drawn from this seed: the same seed gives the same messages.
    Field("seed", int, minimum=0, load=True),
)
KEYS = {field.name: field for field in FIELDS}
# The load's keys. The result records the load as it ran (the settings, a variant included), not these.
LOAD = tuple(field.name for field in FIELDS if field.load)
DEFAULTS = {field.name: field.default for field in FIELDS if field.default is not REQUIRED}


class ScenarioError(ValueError):
    """A scenario file or id is wrong; the message names the file and the key."""


class Axes:
    """What a scenario says beyond its keys (the keys themselves come from FIELDS)."""

    def as_dict(self) -> dict[str, object]:
        """The axes only: the load goes into a result from the settings, which may be a variant of it."""
        return {field.name: getattr(self, field.name) for field in FIELDS if not field.load}

    @property
    def shape(self) -> tuple[int, int, int]:
        """(hosts, senders per host, messages per sender): the load's shape a variant departs from."""
        return self.hosts, self.senders_per_host, self.messages_per_sender  # type: ignore[attr-defined]

    @property
    def framing(self) -> str:
        if self.transport == "udp":  # type: ignore[attr-defined]
            return "datagram"
        return "octet-counting" if self.format == "rfc5424" else "newline"  # type: ignore[attr-defined]

    def needs(self) -> list[str]:
        """Manifest features this scenario needs beyond what every daemon does."""
        return [feature for field in FIELDS if (feature := field.needs(getattr(self, field.name)))]


# One attribute per key, typed and defaulted as FIELDS declares it; frozen, built by keyword.
Scenario = make_dataclass(
    "Scenario",
    [
        (field.name, field.kind) if field.default is REQUIRED else (field.name, field.kind, field.default)
        for field in FIELDS
    ],
    bases=(Axes,),
    namespace={"__module__": __name__},
    frozen=True,
    kw_only=True,
)


def impossible(path: Path, data: dict) -> list[str]:
    """Combinations that cannot work, whatever the daemon."""
    problems = []
    relay_only = [key for key in ("buffer", "relay_target") if data[key] != DEFAULTS[key]]
    if data["destination"] != "relay" and relay_only:
        problems += [f"{path.name}: {key}={data[key]!r} needs destination: relay" for key in relay_only]
    if data["transport"] == "tls" and data["rate"]:
        problems.append(f"{path.name}: a fixed rate is not implemented over TLS yet; use rate: 0 with tls")
    if data["receive"] == "raw" and data["destination"] == "split":
        problems.append(f"{path.name}: receive: raw cannot split by facility (nothing is parsed); use plain")
    connections = data["hosts"] * data["senders_per_host"]
    if data["connections"] and data["connections"] != connections:
        problems.append(
            f"{path.name}: connections: {data['connections']} but hosts x senders_per_host = "
            f"{data['hosts']} x {data['senders_per_host']} = {connections}: make them agree"
        )
    if data["done_threshold"] > connections:
        problems.append(
            f"{path.name}: done_threshold: {data['done_threshold']} exceeds the {connections} senders "
            "(hosts x senders_per_host), so it could never fire: lower it, or use 0 for all senders"
        )
    return problems


def validate(path: Path, data: object) -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioError(
            f"{path}: expected a mapping of keys, got {type(data).__name__}: write `key: value` lines, "
            f"as in {DEFAULT}.yaml"
        )
    problems = [
        f"{path.name}: unknown key {key!r} (known: {', '.join(KEYS)})" for key in data if key not in KEYS
    ]
    data = {**DEFAULTS, **data}
    problems += [f"{path.name}: missing key {key!r}" for key in KEYS if key not in data]
    # In FIELDS' order, so the list of problems reads the same on every run.
    for field in (field for field in FIELDS if field.name in data):
        problems += field.problems(path.name, data[field.name])
    if not problems and data["id"] != path.stem:
        problems.append(f"{path.name}: id {data['id']!r} must equal the file name {path.stem!r}")
    if not problems:
        problems += impossible(path, data)
    if problems:
        if len(problems) == 1:
            raise ScenarioError(problems[0])
        raise ScenarioError("invalid scenario:\n  - " + "\n  - ".join(problems))
    return Scenario(**data)


def load(scenario_id: str, directory: Path | None = None) -> Scenario:
    directory = directory or DIRECTORY
    path = directory / f"{scenario_id}.yaml"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in directory.glob("*.yaml")))
        raise ScenarioError(f"unknown scenario {scenario_id!r}: set SCENARIO to one of {known}")
    return validate(path, read(path))


def read(path: Path) -> object:
    """The file's YAML; a file that cannot be read, is not UTF-8 or is not YAML is one line naming it."""
    # Imported here: the result model imports this module for FIELDS alone, and stays standard library only.
    import yaml

    try:
        data = path.read_bytes()
    except OSError as error:
        raise ScenarioError(f"{path}: cannot be read ({error.strerror}): check its permissions") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ScenarioError(
            f"{path}:{line}: not UTF-8 (byte 0x{data[error.start]:02x}): save the file as UTF-8"
        ) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ScenarioError(yaml_problem(path, error)) from None


def yaml_problem(path: Path, error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    context, start = getattr(error, "context", None), getattr(error, "context_mark", None)
    if context and start is not None:  # e.g. the line where an unclosed quote opened
        problem = f"{context} from line {start.line + 1}: {problem}"
    return f"{where}: not valid YAML ({problem}): fix that line (quotes, brackets, indentation with spaces)"


def all_scenarios(directory: Path | None = None) -> list[Scenario]:
    directory = directory or DIRECTORY
    return [load(path.stem, directory) for path in sorted(directory.glob("*.yaml"))]


def all_out_twin(scenario: Scenario, directory: Path | None = None) -> Scenario | None:
    """The scenario that is this paced one in every key but its rate, sent all-out (udp: udp-allout;
    tcp-rate: seed2014), or None where there is none or this one is not paced."""
    if not scenario.rate:  # type: ignore[attr-defined]
        return None

    def keys(one: Scenario) -> dict[str, object]:
        return {k: v for k, v in asdict(one).items() if k not in ("id", "description", "rate")}

    mine = keys(scenario)
    return next((other for other in all_scenarios(directory) if not other.rate and keys(other) == mine), None)


def unsupported(scenario: Scenario, features: list[str]) -> list[str]:
    """Why a daemon with these manifest features cannot run the scenario (empty: it can)."""
    return [f"needs the {need!r} feature" for need in scenario.needs() if need not in features]
