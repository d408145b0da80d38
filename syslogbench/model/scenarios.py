"""Scenarios are data: scenarios/<id>.yaml, typed and validated. `SCENARIO=<id>` picks one.

A scenario holds the whole experiment: the axes of a run (transport, format, message size, destination,
parallelize, ...) and its load (hosts, senders per host, messages per sender, the DONE rule, the seed).
.env holds only what belongs to the machine. Once results exist for an id, the file is frozen: a change
means a new id. Runs inside the containers too (Debian's python3-yaml).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

DIRECTORY = Path(os.environ.get("SCENARIO_DIR", Path(__file__).resolve().parents[2] / "scenarios"))
DEFAULT = "seed2014"

# key -> (type, allowed values or None, minimum or None)
FIELDS: dict[str, tuple[type, tuple | None, int | None]] = {
    "id": (str, None, None),
    "description": (str, None, None),
    "transport": (str, ("tcp", "udp", "tls"), None),
    "format": (str, ("rfc3164", "rfc5424"), None),
    "message_bytes": (int, None, 80),
    "destination": (str, ("split", "plain", "relay"), None),
    "parallelize": (int, None, 0),
    # Messages per second per sender; 0 is all-out (as fast as the daemon accepts).
    "rate": (int, None, 0),
    # Total concurrent connections the scenario is about (seed 004's table); 0: not a connection-count
    # scenario. When set, hosts x senders_per_host must equal it.
    "connections": (int, None, 0),
    "preprocess": (str, ("none", "regexp", "facility-filter", "hostname-rewrite", "json", "kv"), None),
    # parsed: the daemon parses each message; raw: it stores the received line without parsing (seed 003).
    "receive": (str, ("parsed", "raw"), None),
    # The central daemon's queue towards the relay target.
    "buffer": (str, ("none", "disk-reliable", "disk-normal", "disk-assisted"), None),
    # How the relay target behaves: normal, slow (reads at a limited rate), pause (stops reading a while),
    # pause-restart (pause, and the central daemon is stopped and started again meanwhile).
    "relay_target": (str, ("normal", "slow", "pause", "pause-restart"), None),
    # The load: `hosts` generator containers, each with `senders_per_host` parallel senders (connections),
    # each sending `messages_per_sender` messages and one DONE.
    "hosts": (int, None, 1),
    "senders_per_host": (int, None, 1),
    "messages_per_sender": (int, None, 1),
    # The run ends when SEC's SingleWithThreshold sees done_threshold DONE lines in done.log within
    # done_window seconds; 0 means every sender (hosts x senders_per_host).
    "done_threshold": (int, None, 0),
    "done_window": (int, None, 1),
    # Facility and severity are drawn from this seed: the same seed gives the same messages.
    "seed": (int, None, 0),
}
# The load's keys. The result records the load as it ran (the settings, a variant included), not these.
LOAD = ("hosts", "senders_per_host", "messages_per_sender", "done_threshold", "done_window", "seed")
# Keys added after results existed for the first scenarios: a file may leave them out, and gets these.
DEFAULTS: dict[str, object] = {
    "rate": 0,
    "connections": 0,
    "preprocess": "none",
    "receive": "parsed",
    "buffer": "none",
    "relay_target": "normal",
}
# The feature a daemon's manifest must list for a scenario value that not every daemon has.
FEATURES: dict[str, dict[object, str]] = {
    "transport": {"udp": "udp", "tls": "tls"},
    "format": {"rfc5424": "rfc5424"},
    "destination": {"plain": "plain-file", "relay": "relay"},
    "preprocess": {
        "regexp": "pre-regexp",
        "facility-filter": "pre-facility-filter",
        "hostname-rewrite": "pre-hostname-rewrite",
        "json": "pre-json",
        "kv": "pre-kv",
    },
    "receive": {"raw": "raw-receive"},
    "buffer": {
        "disk-reliable": "disk-reliable",
        "disk-normal": "disk-normal",
        "disk-assisted": "disk-assisted",
    },
}


class ScenarioError(ValueError):
    """A scenario file or id is wrong; the message names the file and the key."""


@dataclass(frozen=True)
class Scenario:
    id: str
    description: str
    transport: str
    format: str
    message_bytes: int
    destination: str
    parallelize: int
    hosts: int
    senders_per_host: int
    messages_per_sender: int
    done_threshold: int
    done_window: int
    seed: int
    rate: int = 0
    connections: int = 0
    preprocess: str = "none"
    receive: str = "parsed"
    buffer: str = "none"
    relay_target: str = "normal"

    def as_dict(self) -> dict[str, object]:
        """The axes only: the load goes into a result from the settings, which may be a variant of it."""
        return {key: value for key, value in asdict(self).items() if key not in LOAD}

    @property
    def shape(self) -> tuple[int, int, int]:
        """(hosts, senders per host, messages per sender): the load's shape a variant departs from."""
        return self.hosts, self.senders_per_host, self.messages_per_sender

    @property
    def framing(self) -> str:
        if self.transport == "udp":
            return "datagram"
        return "octet-counting" if self.format == "rfc5424" else "newline"

    def needs(self) -> list[str]:
        """Manifest features this scenario needs beyond what every daemon does."""
        needed = [feature for key, table in FEATURES.items() if (feature := table.get(getattr(self, key)))]
        if self.parallelize:
            needed.append("parallelize")
        return needed


def check_field(path: Path, key: str, value: object) -> list[str]:
    kind, allowed, minimum = FIELDS[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        return [f"{path.name}: {key} must be a {kind.__name__}, got {value!r}"]
    if allowed is not None and value not in allowed:
        return [f"{path.name}: {key}={value!r} is not one of {list(allowed)}"]
    if minimum is not None and value < minimum:
        return [f"{path.name}: {key}={value} is below {minimum}"]
    return []


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
        f"{path.name}: unknown key {key!r} (known: {', '.join(FIELDS)})" for key in data if key not in FIELDS
    ]
    data = {**DEFAULTS, **data}
    problems += [f"{path.name}: missing key {key!r}" for key in FIELDS if key not in data]
    # In FIELDS' order, so the list of problems reads the same on every run.
    for key in (key for key in FIELDS if key in data):
        problems += check_field(path, key, data[key])
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


def unsupported(scenario: Scenario, features: list[str]) -> list[str]:
    """Why a daemon with these manifest features cannot run the scenario (empty: it can)."""
    return [f"needs the {need!r} feature" for need in scenario.needs() if need not in features]
