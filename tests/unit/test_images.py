"""host/images.py: profiles built on registry images (the seed's 2014 daemons), refused or left out where no registry answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from syslogbench.host import cli, images, prerequisites, profiles, setup

pytestmark = pytest.mark.usefixtures("host_env")


# --- profiles built on registry images ---


@pytest.fixture
def no_registry(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """No registry answers, and nothing may reach Docker: the commands that would have run are recorded."""
    commands: list[list[str]] = []
    monkeypatch.setattr(images, "_registry_answers", {})
    monkeypatch.setattr(images, "image_exists", lambda ref: False)
    monkeypatch.setattr(images, "try_pull", lambda ref, timeout=0: False)
    monkeypatch.setattr(prerequisites, "ensure_compose", lambda log: None)
    monkeypatch.setattr(images, "ensure_bases", lambda suites, log: commands.append(["bases", *suites]))
    monkeypatch.setattr(images, "build_rig", lambda tag, log: commands.append(["rig", tag]))
    monkeypatch.setattr(setup.subprocess, "run", lambda command, **kwargs: commands.append(command))
    monkeypatch.setattr(setup, "check_image", lambda profile: None)
    monkeypatch.setattr(setup, "fresh_mtime", lambda path: None)
    return commands


def test_run_refuses_a_registry_profile_before_any_container(
    no_registry: list[list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    assert cli.main(["run", "--profile", "rsyslog7", "--results", str(results)]) == 2
    out = capsys.readouterr().out
    assert out.startswith(
        "syslogbench: error: needs Docker Hub: profile rsyslog7 builds FROM the registry image "
    )
    assert profiles.resolve("rsyslog7").registry_image in out
    assert no_registry == []
    assert not results.exists()


def test_setup_of_a_named_registry_profile_is_refused(
    no_registry: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["setup", "--profile", "nxlog"]) == 2
    assert "error: needs Docker Hub: profile nxlog builds FROM the registry image nxlog/nxlog-ce:" in (
        capsys.readouterr().out
    )
    assert no_registry == []


def test_setup_of_every_profile_leaves_registry_profiles_out_with_a_notice(
    no_registry: list[list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["setup"]) == 0
    out = capsys.readouterr().out
    registry = [p for p in profiles.all_profiles() if p.registry_image]
    local = [p for p in profiles.all_profiles() if not p.registry_image]
    assert registry and local
    for profile in registry:
        assert f"notice: skipping {profile.profile}: needs Docker Hub" in out
    built = [command[-1] for command in no_registry if command[0] == "docker"]
    assert built == [p.profile for p in local]
    suites = {setup.HARNESS_SUITE, images.RIG_SUITE, *(p.base for p in local)}
    assert no_registry[:2] == [["bases", *sorted(suites)], ["rig", "local"]]


def test_registry_answer_is_asked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    pulls: list[str] = []
    monkeypatch.setattr(images, "_registry_answers", {})
    monkeypatch.setattr(images, "image_exists", lambda ref: False)
    monkeypatch.setattr(images, "try_pull", lambda ref, timeout=0: pulls.append(ref) or False)
    assert not images.registry_image_available("debian/eol:wheezy")
    assert not images.registry_image_available("debian/eol:wheezy")
    assert pulls == ["debian/eol:wheezy"]


def test_a_local_copy_of_the_registry_image_is_enough(
    no_registry: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A registry profile whose image was loaded here (`docker load`) is built, and nothing is pulled."""
    ref = profiles.resolve("rsyslog7").registry_image
    monkeypatch.setattr(images, "image_exists", lambda image: image == ref)
    monkeypatch.setattr(images, "try_pull", lambda image, timeout=0: pytest.fail(f"pulled {image}"))
    assert cli.main(["setup", "--profile", "rsyslog7"]) == 0
    assert [command[-1] for command in no_registry if command[0] == "docker"] == ["rsyslog7"]


def test_main_profiles_says_where_the_image_comes_from(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["profiles"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert lines["rsyslog5"].endswith("(registry image debian/eol:wheezy)")
    assert lines["syslog-ng"].endswith("(Debian trixie)")
    # The one profile a command runs without --profile (its manifest says default: true) is marked.
    assert lines["rsyslog8"].endswith("(Debian trixie) default")
    assert [name for name, line in lines.items() if line.endswith(" default")] == ["rsyslog8"]


def test_main_check_says_a_registry_profile_needs_docker_hub(
    capsys: pytest.CaptureFixture[str], small_host: None
) -> None:
    assert cli.main(["check", "--profile", "syslog-ng-3.3", "HOSTS=2", "CENTRAL_CPUS=2"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "syslogbench: notice: syslog-ng-3.3 builds FROM the registry image debian/eol:wheezy: needs Docker Hub"
    )
