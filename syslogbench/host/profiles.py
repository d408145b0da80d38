"""Daemon profiles: one folder per daemon version under daemons/, each with a manifest.yaml."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DAEMONS = ROOT / "daemons"
REQUIRED = ("profile", "daemon", "version", "package", "base", "config", "settings", "version_cmd", "command")
# `base: registry:<image>` builds FROM a registry image (the seed's old distributions and NXLog) instead of
# one of our syslogbench/base:<suite> images; those profiles need a registry that answers.
REGISTRY_PREFIX = "registry:"


def image_tag() -> str:
    """IMAGE_TAG lets two checkouts on one machine build and run their own images side by side."""
    return os.environ.get("IMAGE_TAG") or "local"


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
    command: list[str]
    aliases: list[str] = field(default_factory=list)
    features: list[str] = field(default_factory=list)
    notes: str = ""

    @property
    def folder(self) -> Path:
        return DAEMONS / self.profile

    @property
    def image(self) -> str:
        return f"syslogbench/{self.profile}:{image_tag()}"

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


def load_manifest(path: Path) -> Profile:
    data = yaml.safe_load(path.read_text())
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise ProfileError(f"{path}: missing keys {missing}")
    unknown = sorted(set(data) - set(Profile.__dataclass_fields__))
    if unknown:
        raise ProfileError(f"{path}: unknown keys {unknown}")
    profile = Profile(**data)
    if profile.base.startswith(REGISTRY_PREFIX) and not profile.registry_image:
        raise ProfileError(f"{path}: base {profile.base!r} names no image after {REGISTRY_PREFIX!r}")
    if profile.profile != path.parent.name:
        raise ProfileError(f"{path}: profile {profile.profile!r} must match its folder {path.parent.name!r}")
    return profile


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


def resolve(name: str) -> Profile:
    table = names()
    if name not in table:
        raise ProfileError(f"unknown profile {name!r}. Known profiles: {', '.join(sorted(table))}")
    return table[name]
