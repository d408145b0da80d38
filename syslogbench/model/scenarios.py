"""Scenarios are data: scenarios/<id>.yaml, typed and validated. `SCENARIO=<id>` picks one.

A scenario fixes the axes of a run (transport, format, message size, destination, parallelize); the load's
shape (hosts, senders, messages) stays in .env. Once results exist for an id, the file is frozen: a change
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
    # Total concurrent connections; 0 takes the load's shape from .env (HOSTS x SENDERS_PER_HOST).
    "connections": (int, None, 0),
    "preprocess": (str, ("none", "regexp", "facility-filter", "hostname-rewrite", "json", "kv"), None),
    # parsed: the daemon parses each message; raw: it stores the received line without parsing (seed 003).
    "receive": (str, ("parsed", "raw"), None),
    # The central daemon's queue towards the relay target.
    "buffer": (str, ("none", "disk-reliable", "disk-normal", "disk-assisted"), None),
    # How the relay target behaves: normal, slow (reads at a limited rate), pause (stops reading a while),
    # pause-restart (pause, and the central daemon is stopped and started again meanwhile).
    "relay_target": (str, ("normal", "slow", "pause", "pause-restart"), None),
}
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
    rate: int = 0
    connections: int = 0
    preprocess: str = "none"
    receive: str = "parsed"
    buffer: str = "none"
    relay_target: str = "normal"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

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
    return problems


def validate(path: Path, data: object) -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: expected a mapping of keys, got {type(data).__name__}")
    problems = [
        f"{path.name}: unknown key {key!r} (known: {', '.join(FIELDS)})" for key in data if key not in FIELDS
    ]
    data = {**DEFAULTS, **data}
    problems += [f"{path.name}: missing key {key!r}" for key in FIELDS if key not in data]
    for key in FIELDS.keys() & data.keys():
        problems += check_field(path, key, data[key])
    if not problems and data["id"] != path.stem:
        problems.append(f"{path.name}: id {data['id']!r} must equal the file name {path.stem!r}")
    if not problems:
        problems += impossible(path, data)
    if problems:
        raise ScenarioError("invalid scenario:\n  - " + "\n  - ".join(problems))
    return Scenario(**data)


def load(scenario_id: str, directory: Path = DIRECTORY) -> Scenario:
    path = directory / f"{scenario_id}.yaml"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in directory.glob("*.yaml")))
        raise ScenarioError(f"unknown scenario {scenario_id!r}: set SCENARIO to one of {known}")
    return validate(path, yaml.safe_load(path.read_text()))


def all_scenarios(directory: Path = DIRECTORY) -> list[Scenario]:
    return [load(path.stem, directory) for path in sorted(directory.glob("*.yaml"))]


def unsupported(scenario: Scenario, features: list[str]) -> list[str]:
    """Why a daemon with these manifest features cannot run the scenario (empty: it can)."""
    return [f"needs the {need!r} feature" for need in scenario.needs() if need not in features]


def load_shape(
    scenario: Scenario, hosts: int, senders_per_host: int, messages_per_sender: int
) -> tuple[int, int, int]:
    """(hosts, senders per host, messages per sender) for a scenario that fixes the connection count.

    The configured total of messages is spread over the scenario's connections, so runs with different
    connection counts move the same amount of data. Hosts stay as configured when they divide the count.
    """
    if not scenario.connections:
        return hosts, senders_per_host, messages_per_sender
    total = hosts * senders_per_host * messages_per_sender
    new_hosts = hosts if scenario.connections % hosts == 0 else 1
    return new_hosts, scenario.connections // new_hosts, max(1, total // scenario.connections)


def shape_problem(scenario: Scenario, hosts: int, senders_per_host: int) -> str | None:
    """Why the load's shape does not fit the scenario (None: it fits)."""
    if not scenario.connections or hosts * senders_per_host == scenario.connections:
        return None
    return (
        f"scenario {scenario.id} needs {scenario.connections} connections, but HOSTS x SENDERS_PER_HOST = "
        f"{hosts} x {senders_per_host}: run it with `python -m syslogbench run SCENARIO={scenario.id}`, "
        f"which sets the shape, or set HOSTS and SENDERS_PER_HOST to multiply to {scenario.connections}"
    )
