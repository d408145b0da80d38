"""`docker compose config` accepts every profile, and an unknown profile starts nothing."""

from __future__ import annotations

import subprocess

import pytest

from syslogbench.host import profiles

from .conftest import ROOT

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("name", sorted(profiles.names()))
def test_compose_config_accepts_profile(name: str) -> None:
    done = subprocess.run(
        ["docker", "compose", "--profile", name, "config", "--services"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    services = set(done.stdout.split())
    assert services == {"watcher", "generator", "lasthop", profiles.resolve(name).profile}


def test_unknown_profile_starts_nothing() -> None:
    done = subprocess.run(
        ["docker", "compose", "--profile", "rsyslog9", "up", "--no-build"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert "no service selected" in done.stderr
