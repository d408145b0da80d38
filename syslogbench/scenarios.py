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

DIRECTORY = Path(os.environ.get("SCENARIO_DIR", Path(__file__).resolve().parent.parent / "scenarios"))
DEFAULT = "seed2014"

# key -> (type, allowed values or None, minimum or None)
FIELDS: dict[str, tuple[type, tuple | None, int | None]] = {
    "id": (str, None, None),
    "description": (str, None, None),
    "transport": (str, ("tcp",), None),
    "format": (str, ("rfc3164", "rfc5424"), None),
    "message_bytes": (int, None, 80),
    "destination": (str, ("split", "plain"), None),
    "parallelize": (int, None, 0),
}
# The feature a daemon's manifest must list for a scenario value that not every daemon has.
FEATURES = {
    "destination": {"plain": "plain-file"},
    "parallelize": "parallelize",
    "format": {"rfc5424": "rfc5424"},
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

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    @property
    def framing(self) -> str:
        return "octet-counting" if self.format == "rfc5424" else "newline"

    def needs(self) -> list[str]:
        """Manifest features this scenario needs beyond what every daemon does."""
        needed = []
        if self.destination == "plain":
            needed.append(FEATURES["destination"]["plain"])
        if self.parallelize:
            needed.append(FEATURES["parallelize"])
        if self.format == "rfc5424":
            needed.append(FEATURES["format"]["rfc5424"])
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


def validate(path: Path, data: object) -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: expected a mapping of keys, got {type(data).__name__}")
    problems = [
        f"{path.name}: unknown key {key!r} (known: {', '.join(FIELDS)})" for key in data if key not in FIELDS
    ]
    problems += [f"{path.name}: missing key {key!r}" for key in FIELDS if key not in data]
    for key in FIELDS.keys() & data.keys():
        problems += check_field(path, key, data[key])
    if not problems and data["id"] != path.stem:
        problems.append(f"{path.name}: id {data['id']!r} must equal the file name {path.stem!r}")
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
