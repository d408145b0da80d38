"""compose.yaml and the compose files rendered from the manifests: one service per daemon version, and the
harness under every profile name, with nothing kept by hand."""

from __future__ import annotations

from pathlib import Path

import yaml

from syslogbench.host import profiles, render
from syslogbench.model import settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
# PyYAML resolves the `<<: *daemon` merge keys, as compose does.
DAEMONS = yaml.safe_load(render.COMPOSE_DAEMONS.read_text())
EVERY = yaml.safe_load(render.COMPOSE_PROFILES.read_text())
HARNESS = {"watcher", "generator", "lasthop"}


def test_rendered_compose_files_are_current() -> None:
    for path, text in render.compose_files().items():
        assert path.read_text() == text, f"{path.name} is not what the manifests give: run `make render`"


def test_compose_includes_the_daemon_services() -> None:
    assert COMPOSE["include"] == ["compose.daemons.yaml"]
    assert set(COMPOSE["services"]) == HARNESS
    assert set(DAEMONS["services"]) == {p.profile for p in profiles.all_profiles()}


def test_harness_runs_under_every_profile_name_and_no_other() -> None:
    assert EVERY["services"]["every-daemon"] == {"profiles": list(profiles.names())}
    for name in HARNESS:
        spec = COMPOSE["services"][name]
        assert spec["extends"] == {"file": "compose.profiles.yaml", "service": "every-daemon"}, name
        assert "profiles" not in spec, name


def test_a_debian_version_builds_its_family_stage_with_its_manifest_values() -> None:
    assert DAEMONS["services"]["rsyslog-8.2504"] == {
        **DAEMONS["x-daemon"],
        "profiles": ["rsyslog-8.2504", "rsyslog8"],
        "build": {
            "context": "daemons",
            "dockerfile": "Dockerfile",
            "target": "rsyslog",
            "args": {
                "SUITE": "trixie",
                "PACKAGES": "rsyslog=8.2504.0-1+deb13u2 rsyslog-gnutls=8.2504.0-1+deb13u2",
                "VERSION_CMD": "rsyslogd -v",
                "PROFILE": "rsyslog-8.2504",
            },
        },
        "image": "syslogbench/rsyslog-8.2504:${IMAGE_TAG:-local}",
    }
    baseline = DAEMONS["services"]["baseline"]["build"]
    assert (baseline["target"], baseline["args"]["PACKAGES"]) == ("baseline", "python3=3.11.2-1+b1")


def test_a_registry_version_builds_its_own_dockerfile() -> None:
    assert DAEMONS["services"]["rsyslog5"]["build"] == {
        "context": "daemons",
        "dockerfile": "rsyslog5/Dockerfile",
    }


def test_a_dollar_in_a_manifest_value_reaches_the_build_as_it_is() -> None:
    profile = profiles.resolve("baseline")
    odd = profiles.Profile(**{**profile.__dict__, "version_cmd": "sh -c 'echo $HOME'"})
    assert render.build(odd)["args"]["VERSION_CMD"] == "sh -c 'echo $$HOME'"


def test_daemon_services_share_limits_and_alias() -> None:
    for name, spec in DAEMONS["services"].items():
        assert spec["cpu_quota"] == "${CENTRAL_CPUS}00000", name
        assert spec["mem_limit"] == "${CENTRAL_MEM}", name
        assert spec["networks"]["bench"]["aliases"] == ["central"], name
        assert spec["depends_on"]["watcher"]["condition"] == "service_healthy", name
        assert spec["depends_on"]["lasthop"]["condition"] == "service_healthy", name
        assert "queue:/var/spool/bench-queue" in spec["volumes"], name
        assert spec["healthcheck"]["test"] == ["CMD", "/usr/local/bin/supervise", "--health"], name
        assert spec["stop_grace_period"] == "90s", name


def test_no_published_ports_and_no_docker_socket() -> None:
    for name, spec in {**COMPOSE["services"], **DAEMONS["services"]}.items():
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
