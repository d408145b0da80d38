"""compose.yaml agrees with the daemon folders: one service per profile, every name in x-every-daemon."""

from __future__ import annotations

from pathlib import Path

import yaml

from syslogbench.host import profiles
from syslogbench.model import settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
HARNESS = {"watcher", "generator", "lasthop"}


def daemon_services() -> dict[str, dict]:
    return {name: spec for name, spec in COMPOSE["services"].items() if name not in HARNESS}


def test_one_service_per_daemon_folder() -> None:
    assert set(daemon_services()) == {p.profile for p in profiles.all_profiles()}


def test_service_builds_its_folder_and_tags_the_manifest_image() -> None:
    for profile in profiles.all_profiles():
        spec = daemon_services()[profile.profile]
        assert spec["build"] == {"context": "daemons", "dockerfile": f"{profile.profile}/Dockerfile"}
        assert spec["image"] == f"syslogbench/{profile.profile}:${{IMAGE_TAG:-local}}"
        assert sorted(spec["profiles"]) == sorted([profile.profile, *profile.aliases])


def test_harness_runs_under_every_profile_name() -> None:
    every = set(COMPOSE["x-every-daemon"])
    assert every == set(profiles.names())
    for name in HARNESS:
        assert set(COMPOSE["services"][name]["profiles"]) == every


def test_daemon_services_share_limits_and_alias() -> None:
    for name, spec in daemon_services().items():
        assert spec["cpu_quota"] == "${CENTRAL_CPUS}00000", name
        assert spec["mem_limit"] == "${CENTRAL_MEM}", name
        assert spec["networks"]["bench"]["aliases"] == ["central"], name
        assert spec["depends_on"]["watcher"]["condition"] == "service_healthy", name
        assert spec["depends_on"]["lasthop"]["condition"] == "service_healthy", name
        assert "queue:/var/spool/bench-queue" in spec["volumes"], name


def test_no_published_ports_and_no_docker_socket() -> None:
    for name, spec in COMPOSE["services"].items():
        assert "ports" not in spec, f"{name} publishes a port"
        for volume in spec.get("volumes", []):
            assert "docker.sock" not in str(volume), f"{name} mounts the Docker socket"


def test_settings_passed_to_containers_are_the_env_keys() -> None:
    env_keys = {
        line.split("=", 1)[0]
        for line in (ROOT / ".env").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert set(COMPOSE["x-settings"]) == env_keys | set(settings.SHAPE)  # the shape: a variant's override


def test_last_hop_runs_the_generator_image_on_the_bench_network() -> None:
    """The relay target needs the syslogbench package, not a daemon image; it listens on the bench network."""
    spec, generator = COMPOSE["services"]["lasthop"], COMPOSE["services"]["generator"]
    assert spec["image"] == generator["image"] and spec["build"] == generator["build"]
    assert spec["command"] == ["python3", "-m", "syslogbench.rig.lasthop"]
    assert spec["networks"] == ["bench"]
    assert spec["depends_on"]["watcher"]["condition"] == "service_healthy"
    assert "queue:/var/spool/bench-queue" in COMPOSE["services"]["watcher"]["volumes"]
