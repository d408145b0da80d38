"""Run settings from `.env` and the environment, validated before any container starts.

Stdlib only: the watcher and the generators import this inside their containers too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

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

    def name(self, key: str) -> str:
        value = self.raw(key) or ""
        if value and not re.fullmatch(r"[A-Za-z0-9._-]+", value):
            self.problem(key, f"{key}={value!r} may hold only letters, digits, '.', '_' and '-'")
        return value


def from_env(env: Mapping[str, str]) -> Settings:
    reader = _Reader(env)
    settings = Settings(
        scenario=reader.name("SCENARIO"),
        central_cpus=reader.integer("CENTRAL_CPUS", 1),
        central_mem=reader.size("CENTRAL_MEM"),
        remote_cpus=reader.integer("REMOTE_CPUS", 1),
        remote_mem=reader.size("REMOTE_MEM"),
        hosts=reader.integer("HOSTS", 1),
        senders_per_host=reader.integer("SENDERS_PER_HOST", 1),
        messages_per_sender=reader.integer("MESSAGES_PER_SENDER", 1),
        done_threshold=reader.integer("DONE_THRESHOLD", 0),
        done_window=reader.integer("DONE_WINDOW", 1),
        run_timeout=reader.integer("RUN_TIMEOUT", 1),
        keep_logs=reader.flag("KEEP_LOGS"),
        seed=reader.integer("SEED", 0),
    )
    # Only when its inputs are valid: a bad HOSTS would otherwise add a misleading second complaint.
    inputs_valid = not reader.bad & {"HOSTS", "SENDERS_PER_HOST", "DONE_THRESHOLD"}
    if inputs_valid and settings.done_threshold > settings.senders:
        reader.problems.append(
            f"DONE_THRESHOLD={settings.done_threshold} exceeds the {settings.senders} senders "
            "(HOSTS x SENDERS_PER_HOST), so it could never fire: lower it, or use 0 for all senders"
        )
    if reader.problems:
        raise SettingsError("invalid settings:\n  - " + "\n  - ".join(reader.problems))
    if settings.done_threshold == 0:
        settings = Settings(**{**settings.as_dict(), "done_threshold": settings.senders})
    return settings


def load(env_file: Path, environ: Mapping[str, str]) -> Settings:
    """Settings as compose sees them: the shell environment overrides `.env`."""
    merged = read_env_file(env_file) if env_file.exists() else {}
    merged.update({key: value for key, value in environ.items() if key in merged})
    return from_env(merged)
