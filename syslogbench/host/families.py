"""Daemon families: one record per family, daemons/_families/<family>.yaml, read and checked here.

A record holds what Python needs to know about a family's configs: the main config's name and directory, the
daemon's own config check, the marks that tell its configs from another family's, how a config states its TCP
session limit, the listener hints, the missing-module patterns, and whether `run --config` takes its configs.
How the daemon starts stays in daemons/Dockerfile (the CMD of the family's stage). A new family is a new
record: no Python names a family.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import yaml

from syslogbench.host.tuning import Knob, parse_knobs
from syslogbench.model import settings

DIRECTORY = Path(__file__).resolve().parents[2] / "daemons" / "_families"
# The placeholder in a record's check command for the main config's path in the image.
CONFIG_PLACEHOLDER = "{config}"


class FamilyError(settings.SettingsError):
    """A family record that cannot be used, or a family with no record: one line saying what to fix."""


@dataclass(frozen=True)
class SessionLimit:
    """How a config states its TCP session limit. read: the limit (its first non-empty group); write: the
    same, as a format with one {} for the number. Without `listener`, the limit is global: every match counts
    and a file without one says nothing. With it, each listener (inside each `block`, or anywhere) that is not
    `not_tcp` gives its own limit, or None where it sets none (the daemon's default holds)."""

    read: re.Pattern[str]
    write: str
    block: re.Pattern[str] | None = None
    listener: re.Pattern[str] | None = None
    not_tcp: re.Pattern[str] | None = None


@dataclass(frozen=True)
class Modules:
    """The command that lists an image's plugins, and the line that names one (group 1)."""

    command: list[str]
    line: re.Pattern[str]


@dataclass(frozen=True)
class Family:
    family: str
    user_config: bool
    example_profile: str = ""
    main_config: str = ""
    config_dir: str = ""
    check: list[str] = field(default_factory=list)
    marks: re.Pattern[str] | None = None
    comment: str = "#"
    state_dirs: list[str] = field(default_factory=list)
    session_limit: SessionLimit | None = None
    listener_hints: dict[str, str] = field(default_factory=dict)
    # Where a config of this family sets its UDP receive buffer (UDP_RCVBUF renders into the profile's own).
    udp_buffer: str = ""
    missing_module: list[re.Pattern[str]] = field(default_factory=list)
    unknown_word: re.Pattern[str] | None = None
    modules: Modules | None = None
    # Where the family's template takes a knob's parameter (slot -> what it is), how one is written there
    # ({key} and {value}), and the knobs themselves (host/tuning.py).
    slots: dict[str, str] = field(default_factory=dict)
    param_style: str = ""
    knobs: tuple[Knob, ...] = ()

    def check_command(self, main_target: str) -> list[str]:
        return [word.replace(CONFIG_PLACEHOLDER, main_target) for word in self.check]

    @property
    def check_name(self) -> str:
        """The check command as a user would name it: without the config's path, nor the option before it."""
        at = next(i for i, word in enumerate(self.check) if CONFIG_PLACEHOLDER in word)
        before = at - 1 if at and self.check[at - 1].startswith("-") else at
        return " ".join(self.check[:before] + self.check[at + 1 :])

    def listener_hint(self, transport: str) -> str:
        hint = self.listener_hints.get(transport)
        return f"; add {hint}" if hint else ""

    def lacks_module(self, said: str) -> bool:
        return any(pattern.search(said) for pattern in self.missing_module)


# What a record must hold when `run --config` takes the family's configs.
USER_CONFIG_KEYS = ("example_profile", "main_config", "config_dir", "check", "marks", "session_limit")


def pattern(where: str, key: str, text: object) -> re.Pattern[str]:
    if not isinstance(text, str):
        raise FamilyError(f"{where}: {key} must be a regular expression in quotes, got {text!r}")
    try:
        return re.compile(text)
    except re.error as error:
        raise FamilyError(f"{where}: {key} is not a valid regular expression ({error}): fix it") from None


def optional_pattern(where: str, data: dict, name: str, within: str = "") -> re.Pattern[str] | None:
    key = f"{within}.{name}" if within else name
    return pattern(where, key, data[name]) if data.get(name) is not None else None


def session_limit(where: str, data: object) -> SessionLimit | None:
    if data is None:
        return None
    if not isinstance(data, dict) or not {"read", "write"} <= set(data):
        raise FamilyError(f"{where}: session_limit needs read: (a pattern) and write: (a format with {{}})")
    unknown = sorted(set(data) - set(SessionLimit.__dataclass_fields__))
    if unknown:
        raise FamilyError(f"{where}: session_limit has unknown keys {unknown}")
    if "{}" not in str(data["write"]):
        raise FamilyError(f"{where}: session_limit.write must hold {{}} where the number goes")
    return SessionLimit(
        read=pattern(where, "session_limit.read", data["read"]),
        write=str(data["write"]),
        block=optional_pattern(where, data, "block", "session_limit"),
        listener=optional_pattern(where, data, "listener", "session_limit"),
        not_tcp=optional_pattern(where, data, "not_tcp", "session_limit"),
    )


def modules(where: str, data: object) -> Modules | None:
    if data is None:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("command"), list) or "line" not in data:
        raise FamilyError(f"{where}: modules needs command: (a list of words) and line: (a pattern)")
    return Modules([str(word) for word in data["command"]], pattern(where, "modules.line", data["line"]))


def read(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark else ""
        raise FamilyError(f"{path}: not valid YAML{line}: fix the record") from None
    if not isinstance(data, dict):
        raise FamilyError(f"{path}: must be a mapping of keys (family:, user_config:, ...)")
    return data


def parse(path: Path, data: dict) -> Family:
    """The record, every key checked; FamilyError names the first problem."""
    where = str(path)
    unknown = sorted(set(data) - set(Family.__dataclass_fields__))
    if unknown:
        raise FamilyError(
            f"{where}: unknown keys {unknown}; the keys are: {', '.join(Family.__dataclass_fields__)}"
        )
    if data.get("family") != path.stem:
        raise FamilyError(f"{where}: family {data.get('family')!r} must match the file's name {path.stem!r}")
    if not isinstance(data.get("user_config"), bool):
        raise FamilyError(f"{where}: user_config must be true or false")
    if data["user_config"] and (missing := [key for key in USER_CONFIG_KEYS if not data.get(key)]):
        raise FamilyError(f"{where}: user_config: true needs {', '.join(missing)}")
    check = [str(word) for word in data.get("check") or []]
    if check and not any(CONFIG_PLACEHOLDER in word for word in check):
        raise FamilyError(f"{where}: check must name the config as {CONFIG_PLACEHOLDER}")
    hints = data.get("listener_hints") or {}
    if not isinstance(hints, dict):
        raise FamilyError(f"{where}: listener_hints must map a transport (tcp, udp, tls) to a hint")
    return Family(
        family=path.stem,
        user_config=data["user_config"],
        example_profile=str(data.get("example_profile") or ""),
        main_config=str(data.get("main_config") or ""),
        config_dir=str(data.get("config_dir") or "").rstrip("/"),
        check=check,
        marks=optional_pattern(where, data, "marks"),
        comment=str(data.get("comment") or "#"),
        state_dirs=[str(folder) for folder in data.get("state_dirs") or []],
        session_limit=session_limit(where, data.get("session_limit")),
        listener_hints={str(key): " ".join(str(value).split()) for key, value in hints.items()},
        udp_buffer=str(data.get("udp_buffer") or ""),
        missing_module=[pattern(where, "missing_module", text) for text in data.get("missing_module") or []],
        unknown_word=optional_pattern(where, data, "unknown_word"),
        modules=modules(where, data.get("modules")),
        slots=slots(where, data),
        param_style=param_style(where, data),
        knobs=parse_knobs(where, data.get("knobs"), data.get("slots") or {}),
    )


def slots(where: str, data: dict) -> dict[str, str]:
    found = data.get("slots") or {}
    if not isinstance(found, dict):
        raise FamilyError(f"{where}: slots must map each slot of the template to what it is")
    if data.get("knobs") and not found:
        raise FamilyError(f"{where}: knobs need slots: where the template takes each knob")
    return {str(key): " ".join(str(value).split()) for key, value in found.items()}


def param_style(where: str, data: dict) -> str:
    style = str(data.get("param_style") or "")
    if data.get("knobs") and not ("{key}" in style and "{value}" in style):
        raise FamilyError(
            f"{where}: knobs need param_style: how a parameter is written, with {{key}} and {{value}}"
        )
    return style


def load(path: Path) -> Family:
    return parse(path, read(path))


def all_families() -> dict[str, Family]:
    """Every record under DIRECTORY, by family name."""
    return records(DIRECTORY)


@cache
def records(directory: Path) -> dict[str, Family]:
    return {path.stem: load(path) for path in sorted(directory.glob("*.yaml"))}


def get(name: str) -> Family:
    table = all_families()
    if name not in table:
        raise FamilyError(
            f"daemon family {name!r} has no record: add {DIRECTORY / (name + '.yaml')} (see the others there)"
        )
    return table[name]


def with_user_config() -> list[Family]:
    """The families whose configs `run --config` takes."""
    return [family for family in all_families().values() if family.user_config]


def first_number(match: re.Match[str]) -> int:
    """The limit of a `read` match: its first group that matched (several alternatives may say it)."""
    return int(next((group for group in match.groups() if group), match.group(0)))


def session_limits(text: str, family: Family) -> list[int | None]:
    """Each TCP listener's session limit in one config file; None: the listener sets none, so the daemon's
    own default holds. A family whose limit is global gives one entry per statement of it, and none for a
    file that sets none."""
    limit = family.session_limit
    if limit is None:
        return []
    live = uncommented(text, family.comment)
    if limit.listener is None:
        return [first_number(match) for match in limit.read.finditer(live)]
    blocks = (
        [enclosed(live, found.end() - 1, "{", "}") for found in limit.block.finditer(live)]
        if limit.block
        else [live]
    )
    return [found for body in blocks for found in listener_limits(body, limit)]


def listener_limits(body: str, limit: SessionLimit) -> list[int | None]:
    """Each listener's limit in one block: its options are what its bracket encloses."""
    assert limit.listener is not None
    found: list[int | None] = []
    after = 0
    for driver in limit.listener.finditer(body):
        if driver.start() < after:
            continue  # a word inside the previous driver's options
        options = enclosed(body, driver.end() - 1, "(", ")")
        after = driver.end() + len(options)
        if limit.not_tcp and limit.not_tcp.search(options):
            continue
        match = limit.read.search(options)
        found.append(first_number(match) if match else None)
    return found


def uncommented(text: str, mark: str = "#") -> str:
    """The text without its comments, from mark to the end of each line (a mark inside a string is rare in
    the configs read for their session limits)."""
    return "\n".join(line.split(mark, 1)[0] for line in text.splitlines())


def enclosed(text: str, start: int, opening: str, closing: str) -> str:
    """The text between the bracket at start and the one that closes it (to the end when none does)."""
    depth = 0
    for index in range(start, len(text)):
        depth += (text[index] == opening) - (text[index] == closing)
        if depth == 0:
            return text[start + 1 : index]
    return text[start + 1 :]
