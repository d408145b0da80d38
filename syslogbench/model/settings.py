"""Run settings: the machine's from `.env` and the environment, the load from the scenario; validated
before any container starts.

The scenario (scenarios/<SCENARIO>.yaml) holds the load. HOSTS, SENDERS_PER_HOST and MESSAGES_PER_SENDER in
the environment override its shape, and the run is then recorded as a named variant ("2x2x2000"). The
watcher and the generators import this inside their containers too (stdlib and the scenario's PyYAML).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from syslogbench.model import scenarios

# The shape of the load: the scenario's, unless the environment sets it (a variant).
SHAPE = ("HOSTS", "SENDERS_PER_HOST", "MESSAGES_PER_SENDER")
# The rest of the load, also the scenario's. Neither the command line nor compose passes these on (a
# different value is a different experiment: a new scenario id); the environment may still set them for
# a test or the calibration, which call from_env directly.
RULES = ("DONE_THRESHOLD", "DONE_WINDOW", "SEED")
DEFAULT_VARIANT = "default"
SIZE_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
MIN_MEMORY = 6 * 1024**2  # Docker refuses memory limits below 6 MiB.


class SettingsError(ValueError):
    """One or more settings are invalid; the message lists each and how to fix it."""


@dataclass(frozen=True)
class Settings:
    scenario: str
    central_cpus: int
    central_mem: int
    remote_cpus: int
    remote_mem: int
    hosts: int
    senders_per_host: int
    messages_per_sender: int
    done_threshold: int
    done_window: int
    run_timeout: int
    keep_logs: bool
    seed: int
    # "default" when the load's shape is the scenario's own, else "<hosts>x<senders_per_host>x<messages>".
    variant: str = DEFAULT_VARIANT

    @property
    def senders(self) -> int:
        return self.hosts * self.senders_per_host

    @property
    def expected_messages(self) -> int:
        """Messages plus one DONE per sender."""
        return self.senders * (self.messages_per_sender + 1)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def read_env_file(path: Path) -> dict[str, str]:
    """Parse KEY=VALUE lines the way compose does for plain values (no quoting tricks)."""
    values: dict[str, str] = {}
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise SettingsError(f"{path}:{number}: expected KEY=VALUE, got {raw!r}")
        key, value = line.split("=", 1)
        values[key.strip()] = value.strip().strip("'\"")
    return values


def parse_size(text: str) -> int:
    match = re.fullmatch(r"(\d+)([bkmg]?)", text.strip().lower())
    if not match:
        raise ValueError(text)
    return int(match.group(1)) * SIZE_UNITS[match.group(2)]


class _Reader:
    """Collects every problem instead of stopping at the first, so one run of the check lists them all."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.problems: list[str] = []
        self.bad: set[str] = set()  # keys with a problem, so checks built on them can be skipped

    def problem(self, key: str, text: str) -> None:
        self.bad.add(key)
        self.problems.append(text)

    def raw(self, key: str) -> str | None:
        value = self.env.get(key)
        if value is None or value == "":
            self.problem(key, f"{key} is not set: add it to .env (see the comments there)")
            return None  # so the typed readers do not report the same key a second time
        return value

    def integer(self, key: str, minimum: int) -> int:
        value = self.raw(key)
        if value is None:
            return minimum
        if not re.fullmatch(r"-?\d+", value):
            self.problem(key, f"{key}={value!r} is not a whole number: use e.g. {key}={max(minimum, 1)}")
            return minimum
        number = int(value)
        if number < minimum:
            self.problem(key, f"{key}={number} is below {minimum}: use a value of at least {minimum}")
        return number

    def size(self, key: str) -> int:
        value = self.raw(key)
        if value is None:
            return MIN_MEMORY
        try:
            size = parse_size(value)
        except ValueError:
            self.problem(key, f"{key}={value!r} is not a size: use a number with b, k, m or g, e.g. 512m")
            return MIN_MEMORY
        if size < MIN_MEMORY:
            self.problem(key, f"{key}={value} is below Docker's minimum of 6m: use at least 6m")
        return size

    def flag(self, key: str) -> bool:
        value = self.raw(key)
        if value not in (None, "0", "1"):
            self.problem(key, f"{key}={value!r} must be 0 or 1")
        return value == "1"

    def load_value(self, key: str, own: int, minimum: int) -> int:
        """The scenario's value (own), unless the environment sets the key."""
        if self.env.get(key) in (None, ""):
            return own
        return self.integer(key, minimum)

    def name(self, key: str) -> str:
        value = self.raw(key) or ""
        if value and not re.fullmatch(r"[A-Za-z0-9._-]+", value):
            self.problem(key, f"{key}={value!r} may hold only letters, digits, '.', '_' and '-'")
        return value


def scenario_of(reader: _Reader, scenario_id: str) -> scenarios.Scenario | None:
    """The scenario whose load the settings take. When it cannot be loaded but the environment gives the
    whole load (a unit test's made-up id), the settings stand on the environment alone, and the scenario's
    own error is reported where the scenario is loaded (by the command line before any container, or in
    the watcher's result)."""
    if not scenario_id or "SCENARIO" in reader.bad:
        return None
    try:
        return scenarios.load(scenario_id)
    except scenarios.ScenarioError as error:
        if not all(reader.env.get(key) for key in (*SHAPE, *RULES)):
            reader.problem("SCENARIO", str(error))
        return None


def variant_name(hosts: int, senders_per_host: int, messages_per_sender: int) -> str:
    return f"{hosts}x{senders_per_host}x{messages_per_sender}"


def from_env(env: Mapping[str, str]) -> Settings:
    reader = _Reader(env)
    scenario_id = reader.name("SCENARIO")
    scenario = scenario_of(reader, scenario_id)
    own = {key.upper(): getattr(scenario, key) if scenario else 1 for key in scenarios.LOAD}
    settings = Settings(
        scenario=scenario_id,
        central_cpus=reader.integer("CENTRAL_CPUS", 1),
        central_mem=reader.size("CENTRAL_MEM"),
        remote_cpus=reader.integer("REMOTE_CPUS", 1),
        remote_mem=reader.size("REMOTE_MEM"),
        hosts=reader.load_value("HOSTS", own["HOSTS"], 1),
        senders_per_host=reader.load_value("SENDERS_PER_HOST", own["SENDERS_PER_HOST"], 1),
        messages_per_sender=reader.load_value("MESSAGES_PER_SENDER", own["MESSAGES_PER_SENDER"], 1),
        done_threshold=reader.load_value("DONE_THRESHOLD", own["DONE_THRESHOLD"], 0),
        done_window=reader.load_value("DONE_WINDOW", own["DONE_WINDOW"], 1),
        run_timeout=reader.integer("RUN_TIMEOUT", 1),
        keep_logs=reader.flag("KEEP_LOGS"),
        seed=reader.load_value("SEED", own["SEED"], 0),
    )
    # Only when its inputs are valid: a bad HOSTS would otherwise add a misleading second complaint.
    inputs_valid = not reader.bad & {"SCENARIO", "HOSTS", "SENDERS_PER_HOST", "DONE_THRESHOLD"}
    if inputs_valid and settings.done_threshold > settings.senders:
        reader.problems.append(
            f"DONE_THRESHOLD={settings.done_threshold} exceeds the {settings.senders} senders "
            "(HOSTS x SENDERS_PER_HOST), so it could never fire: lower it, or use 0 for all senders"
        )
    if reader.problems:
        raise SettingsError("invalid settings:\n  - " + "\n  - ".join(reader.problems))
    shape = (settings.hosts, settings.senders_per_host, settings.messages_per_sender)
    resolved = {
        "done_threshold": settings.done_threshold or settings.senders,
        "variant": DEFAULT_VARIANT if scenario and shape == scenario.shape else variant_name(*shape),
    }
    return Settings(**{**settings.as_dict(), **resolved})


def load(env_file: Path, environ: Mapping[str, str]) -> Settings:
    """Settings as compose sees them: the shell environment overrides `.env`, and may set the shape."""
    merged = read_env_file(env_file) if env_file.exists() else {}
    merged.update({key: value for key, value in environ.items() if key in merged or key in SHAPE})
    return from_env(merged)
