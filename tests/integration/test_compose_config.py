"""`docker compose config` accepts every profile, an unknown profile or none starts nothing, and a new daemon
version is one copied folder, one edited manifest and `render`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from syslogbench.contract import image_name
from syslogbench.host import profiles
from syslogbench.host.compose import APART

from .conftest import PROJECT, ROOT

pytestmark = pytest.mark.integration
# Not part of the project's files: the git data, the virtualenv, the results and caches.
NOT_COPIED = shutil.ignore_patterns(".git", ".venv", "results", "__pycache__", ".pytest_cache", ".ruff_cache")


def compose(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", "compose", *args], cwd=cwd, capture_output=True, text=True)


@pytest.mark.parametrize("name", sorted(profiles.names()))
def test_compose_config_accepts_profile(name: str) -> None:
    done = compose("--profile", name, "config", "--services")
    assert done.returncode == 0, done.stderr
    services = set(done.stdout.split())
    assert services == {"watcher", "generator", "lasthop", profiles.resolve(name).profile}


def test_compose_lists_every_profile_name() -> None:
    done = compose("config", "--profiles")
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split()) == sorted(profiles.names())


@pytest.mark.parametrize("args", [["--profile", "rsyslog9"], []], ids=["unknown-profile", "no-profile"])
def test_no_daemon_profile_starts_nothing_at_once(args: list[str]) -> None:
    """The harness runs under the daemon profiles only, so compose refuses before creating anything."""
    started = time.monotonic()
    done = compose("-p", "syslogbench-never", *args, "up", "--no-build")
    assert done.returncode != 0
    assert "no service selected" in done.stderr
    assert time.monotonic() - started < 30


def test_a_new_version_is_a_copied_folder_an_edited_manifest_and_render(tmp_path: Path) -> None:
    """Copy syslog-ng-4.8, change only its profile name (and drop its alias, which stays 4.8's), render:
    compose knows the new profile, with the harness under it, and nothing else was edited by hand."""
    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy, ignore=NOT_COPIED)
    new = "syslog-ng-4.8-copy"
    shutil.copytree(copy / "daemons" / "syslog-ng-4.8", copy / "daemons" / new)
    manifest = copy / "daemons" / new / "manifest.yaml"
    lines = manifest.read_text().splitlines(keepends=True)
    edited = [
        f"profile: {new}\n"
        if line.startswith("profile:")
        else "aliases: []\n"
        if line.startswith("aliases:")
        else line
        for line in lines
    ]
    assert sum(a != b for a, b in zip(lines, edited, strict=True)) == 2
    manifest.write_text("".join(edited))

    done = subprocess.run(
        [sys.executable, "-m", "syslogbench", "render"], cwd=copy, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"rendered daemons/{new}/scenarios/seed2014.conf" in done.stdout
    assert "rendered compose.daemons.yaml" in done.stdout

    listed = compose("config", "--profiles", cwd=copy)
    assert listed.returncode == 0, listed.stderr
    assert new in listed.stdout.split()
    assert sorted(listed.stdout.split()) == sorted([*profiles.names(), new])
    assert compose("--profile", new, "config", "-q", cwd=copy).returncode == 0
    services = compose("--profile", new, "config", "--services", cwd=copy)
    assert set(services.stdout.split()) == {"watcher", "generator", "lasthop", new}, services.stderr
    build = yaml.safe_load(compose("--profile", new, "config", cwd=copy).stdout)["services"][new]["build"]
    assert (build["target"], build["args"]["PROFILE"]) == ("syslog-ng", new)
    assert build["args"]["PACKAGES"] == profiles.resolve("syslog-ng-4.8").package


def test_a_helper_container_of_a_compose_built_image_belongs_to_no_project(built: None) -> None:
    """Compose labels the images it builds with its project and service, and containers inherit them: a
    helper `docker run` of the watcher's image (a logs-volume read, a fingerprint) must not pass for that
    project's watcher, whose exit would end a run under way (compose.APART)."""
    image = image_name("watcher")
    inspect = ["docker", "inspect", "-f", "{{json .Config.Labels}}"]
    built_by = json.loads(
        subprocess.run([*inspect, image], capture_output=True, text=True, check=True).stdout
    )
    assert built_by.get("com.docker.compose.project"), built_by  # else this test shows nothing
    name = f"{PROJECT}-apart"
    subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
    try:
        subprocess.run(["docker", "create", *APART, "--name", name, "--network", "none", image, "true"],
                       capture_output=True, check=True)  # fmt: skip
        labels = json.loads(
            subprocess.run([*inspect, name], capture_output=True, text=True, check=True).stdout
        )
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
    assert (labels["com.docker.compose.project"], labels["com.docker.compose.service"]) == ("", ""), labels
