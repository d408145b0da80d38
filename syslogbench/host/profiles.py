"""Daemon profiles: one folder per daemon version under daemons/, each with a manifest.yaml.

The manifest is a version's only source. A version on a Debian suite builds from daemons/Dockerfile, at the
stage its `daemon:` names (how that family starts); a registry-based one builds from its folder's Dockerfile.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import yaml

from syslogbench import contract

ROOT = Path(__file__).resolve().parents[2]
DAEMONS = ROOT / "daemons"
# Every Debian-suite version builds here, at its family's stage.
FAMILY_DOCKERFILE = DAEMONS / "Dockerfile"
REQUIRED = ("profile", "daemon", "version", "package", "base", "config", "settings", "version_cmd")
# `base: registry:<image>` builds FROM a registry image (the seed's old distributions and NXLog) instead of
# one of our syslogbench/base:<suite> images; those profiles need a registry that answers.
REGISTRY_PREFIX = "registry:"


image_tag = contract.image_tag


class ProfileError(ValueError):
    """A profile name or manifest is wrong; the message says what to do."""


@dataclass(frozen=True)
class Profile:
    profile: str
    daemon: str
    version: str
    package: str
    base: str
    config: dict
    settings: dict
    version_cmd: str
    aliases: list[str] = field(default_factory=list)
    # Packages of the daemon's own source installed beside it at exactly its version (rsyslog-gnutls).
    plugins: list[str] = field(default_factory=list)
    features: list[str] = field(default_factory=list)
    # The most TCP connections the daemon takes where its config sets no limit of its own (None: no such limit
    # known); a limit the config sets (syslog-ng's max-connections()) is read from the rendered config.
    default_connections: int | None = None
    notes: str = ""
    # The fault campaign's daemon-oom: a memory limit (CENTRAL_MEM) this version cannot keep within under the
    # campaign's load; empty: no OOM runs for it (docs/faults.md).
    oom_memory: str = ""
    # The profile a command runs without --profile; exactly one manifest says so (default_name).
    default: bool = False

    @property
    def folder(self) -> Path:
        return DAEMONS / self.profile

    @property
    def image(self) -> str:
        return contract.image_name(self.profile, image_tag())

    @property
    def registry_image(self) -> str | None:
        """The registry image the Dockerfile builds FROM, or None for a syslogbench/base:<suite> profile."""
        if self.base.startswith(REGISTRY_PREFIX):
            return self.base[len(REGISTRY_PREFIX) :]
        return None

    @property
    def suite(self) -> str | None:
        """The syslogbench/base:<suite> this profile builds FROM, or None for a registry image."""
        return None if self.registry_image else self.base

    @property
    def packages(self) -> list[str]:
        """What the image installs, name=version each: the package, then its plugins at the same version."""
        version = self.package.split("=", 1)[1]
        return [self.package, *(f"{plugin}={version}" for plugin in self.plugins)]

    @property
    def dockerfile(self) -> Path:
        return self.folder / "Dockerfile" if self.registry_image else FAMILY_DOCKERFILE

    @property
    def target(self) -> str | None:
        """The stage of daemons/Dockerfile this version builds (its family), or None for its own Dockerfile."""
        return None if self.registry_image else self.daemon

    @property
    def command(self) -> list[str]:
        """How the daemon starts: the CMD of its family's stage, or of its own Dockerfile."""
        return stage_commands(self.dockerfile)[self.target]


@cache
def stage_commands(dockerfile: Path) -> dict[str | None, list[str]]:
    """The CMD of each stage of a Dockerfile, by stage name; None names the last one (the image built
    without a target)."""
    commands: dict[str | None, list[str]] = {}
    stage = None
    for line in dockerfile.read_text().splitlines():
        if match := re.match(r"FROM\s+\S+(?:\s+AS\s+(\S+))?\s*$", line, re.IGNORECASE):
            stage = match.group(1)
        elif line.startswith("CMD "):
            commands[stage] = commands[None] = json.loads(line[len("CMD ") :])
    return commands


def read_manifest(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" at line {where.line + 1}" if where else ""
        raise ProfileError(f"{path}: not valid YAML{line}: {getattr(error, 'problem', error)}") from None
    if not isinstance(data, dict):
        raise ProfileError(f"{path}: must be a mapping of keys (profile:, daemon:, version:, ...)")
    return data


def load_manifest(path: Path) -> Profile:
    data = read_manifest(path)
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise ProfileError(f"{path}: missing keys {missing}")
    unknown = sorted(set(data) - set(Profile.__dataclass_fields__))
    if unknown:
        known = ", ".join(Profile.__dataclass_fields__)
        raise ProfileError(f"{path}: unknown keys {unknown}; the keys are: {known}")
    profile = Profile(**data)
    if profile.profile != path.parent.name:
        raise ProfileError(f"{path}: profile {profile.profile!r} must match its folder {path.parent.name!r}")
    check_build(path, profile)
    return profile


def check_build(path: Path, profile: Profile) -> None:
    """What the image is built from must exist and be pinned, before any build starts."""
    if profile.base.startswith(REGISTRY_PREFIX) and not profile.registry_image:
        raise ProfileError(f"{path}: base {profile.base!r} names no image after {REGISTRY_PREFIX!r}")
    name, sep, version = profile.package.partition("=")
    if not (name and sep and version):
        raise ProfileError(f"{path}: package {profile.package!r} must be pinned as name=version")
    if any("=" in plugin for plugin in profile.plugins):
        raise ProfileError(f"{path}: plugins {profile.plugins} are names only: each installs at {version}")
    if not profile.dockerfile.is_file():
        raise ProfileError(f"{path}: a registry base needs its own Dockerfile in {profile.folder.name}/")
    if profile.target not in stage_commands(profile.dockerfile):
        stages = ", ".join(sorted(s for s in stage_commands(profile.dockerfile) if s))
        raise ProfileError(
            f"{path}: daemon {profile.daemon!r} has no stage in daemons/Dockerfile (the families: {stages})"
        )


def all_profiles() -> list[Profile]:
    manifests = sorted(DAEMONS.glob("*/manifest.yaml"))
    return [load_manifest(path) for path in manifests if not path.parent.name.startswith("_")]


def names() -> dict[str, Profile]:
    """Every valid --profile name, aliases included, mapped to its profile."""
    table: dict[str, Profile] = {}
    for profile in all_profiles():
        for name in [profile.profile, *profile.aliases]:
            if name in table:
                raise ProfileError(
                    f"profile name {name!r} is used by both {table[name].profile} and {profile.profile}"
                )
            table[name] = profile
    return table


def default_name() -> str:
    """The --profile of a command given none: the first name (an alias, if it has one) of the one manifest
    that says `default: true`."""
    marked = [profile for profile in all_profiles() if profile.default]
    if len(marked) != 1:
        said = ", ".join(p.profile for p in marked) or "none"
        raise ProfileError(
            f"daemons/*/manifest.yaml: exactly one manifest must say default: true (the profile a command runs "
            f"without --profile); these do: {said}"
        )
    return [*marked[0].aliases, marked[0].profile][0]


def resolve(name: str) -> Profile:
    table = names()
    if name not in table:
        raise ProfileError(
            f"unknown profile {name!r}{did_you_mean(name, table)}. Known profiles: {', '.join(sorted(table))}"
        )
    return table[name]


def did_you_mean(name: str, table: dict[str, Profile]) -> str:
    """The closest profile name to a mistyped one, as a hint (empty when none is close)."""
    guess = difflib.get_close_matches(name.replace(" ", ""), sorted(table), n=1)
    return f" (did you mean {guess[0]}?)" if guess else ""
