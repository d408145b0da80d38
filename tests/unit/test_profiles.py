"""Daemon profiles: manifests, Dockerfiles and rendered configs agree with each other."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

from syslogbench import profiles, render, scenarios
from syslogbench.profiles import Profile, ProfileError

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = sorted(p for p in (ROOT / "daemons").iterdir() if p.is_dir() and not p.name.startswith("_"))
BASES = yaml.safe_load((ROOT / "images" / "bases.yaml").read_text())


def loadable(folder: Path) -> Profile | None:
    """The folder's profile, or None: a broken manifest fails test_manifest_loads, not the collection."""
    try:
        return profiles.load_manifest(folder / "manifest.yaml")
    except Exception:  # noqa: BLE001 - reported by test_manifest_loads
        return None


PROFILES = [profile for profile in map(loadable, FOLDERS) if profile is not None]
BY_FAMILY = {daemon: [p for p in PROFILES if p.daemon == daemon] for daemon in ("rsyslog", "syslog-ng")}
BASELINES = [p for p in PROFILES if p.daemon == "baseline"]


def ids(profile: Profile) -> str:
    return profile.profile


def dockerfile(profile: Profile) -> list[str]:
    """Dockerfile instructions, with continuation lines joined and comments dropped."""
    text = (profile.folder / "Dockerfile").read_text()
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    return [line.strip() for line in joined.splitlines() if line.strip()]


def instruction(profile: Profile, name: str) -> list[str]:
    return [line[len(name) + 1 :].strip() for line in dockerfile(profile) if line.startswith(name + " ")]


def installed_packages(profile: Profile) -> list[str]:
    packages = []
    for run in instruction(profile, "RUN"):
        for command in run.split("&&"):
            words = shlex.split(command)
            if words[:2] == ["apt-get", "install"]:
                packages += [word for word in words[2:] if not word.startswith("-")]
    return packages


def test_there_are_profiles() -> None:
    assert len(FOLDERS) >= 2
    assert [p.profile for p in profiles.all_profiles()] == [folder.name for folder in FOLDERS]
    assert BY_FAMILY["rsyslog"] and BY_FAMILY["syslog-ng"]
    assert len(PROFILES) == sum(len(family) for family in BY_FAMILY.values()) + len(BASELINES)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_manifest_loads(folder: Path) -> None:
    assert (folder / "manifest.yaml").is_file()
    assert profiles.load_manifest(folder / "manifest.yaml").profile == folder.name


@pytest.mark.parametrize("profile", PROFILES, ids=ids)
def test_manifest_matches_its_folder(profile: Profile) -> None:
    assert profile.folder.name == profile.profile
    assert profile.image == f"syslogbench/{profile.profile}:{profiles.image_tag()}"
    if profile.daemon == "baseline":
        return  # the baseline's package is its interpreter, not a daemon of that version
    assert profile.package.startswith(("rsyslog=", "syslog-ng-core="))
    assert profile.package.split("=", 1)[1].startswith(profile.version)
    assert (profile.folder / "Dockerfile").is_file()


@pytest.mark.parametrize("profile", PROFILES, ids=ids)
def test_dockerfile_builds_from_the_manifest_base(profile: Profile) -> None:
    assert instruction(profile, "FROM") == [f"syslogbench/base:{profile.base}"]


@pytest.mark.parametrize("profile", PROFILES, ids=ids)
def test_base_is_declared(profile: Profile) -> None:
    assert profile.base in BASES
    assert "pinned" in BASES[profile.base]


@pytest.mark.parametrize("profile", PROFILES, ids=ids)
def test_dockerfile_installs_exactly_the_manifest_package(profile: Profile) -> None:
    assert installed_packages(profile) == [profile.package]


@pytest.mark.parametrize("profile", PROFILES, ids=ids)
def test_dockerfile_cmd_is_the_manifest_command(profile: Profile) -> None:
    (cmd,) = instruction(profile, "CMD")
    assert json.loads(cmd) == profile.command


@pytest.mark.parametrize("profile", PROFILES, ids=ids)
def test_dockerfile_sets_version_cmd(profile: Profile) -> None:
    assert f'VERSION_CMD="{profile.version_cmd}"' in instruction(profile, "ENV")


@pytest.mark.parametrize("profile", PROFILES, ids=ids)
def test_command_uses_the_committed_config(profile: Profile) -> None:
    # Rendered profiles start on active.conf, which the supervisor links to the SCENARIO's config.
    config = profile.config.get("file", "active.conf") if "template" not in profile.config else "active.conf"
    assert f"/etc/syslogbench/{config}" in profile.command
    if "template" not in profile.config:
        assert (profile.folder / config).is_file(), (
            f"{config} is the hand-written config of {profile.profile}"
        )


@pytest.mark.parametrize("profile", [p for p in PROFILES if "template" in p.config], ids=ids)
def test_committed_configs_are_rendered_for_each_supported_scenario(profile: Profile) -> None:
    supported = [s for s in scenarios.all_scenarios() if not scenarios.unsupported(s, profile.features)]
    committed = (profile.folder / "scenarios").glob("*.conf")
    # Sorted by id, not by path: "relay.conf" sorts after "relay-pause.conf" but "relay" before "relay-pause".
    assert sorted(path.stem for path in committed) == sorted(s.id for s in supported), (
        "run `python -m syslogbench render`"
    )
    for scenario in supported:
        path = render.config_path(profile, scenario.id)
        assert path.read_text() == render.render(profile, scenario), (
            f"{path.relative_to(ROOT)} differs from its template and manifest: run `python -m syslogbench render`"
        )
    assert (profile.folder / "scenarios" / "seed2014.conf").is_file(), "every daemon runs the seed scenario"


def test_plain_and_parallelize_scenarios_render_as_expected() -> None:
    rsyslog, syslog_ng = BY_FAMILY["rsyslog"][0], next(p for p in PROFILES if "parallelize" in p.features)
    plain = scenarios.load("plain")
    assert 'action(type="omfile" file="/var/log/bench/test.rsyslog.all.log")' in render.render(rsyslog, plain)
    assert "dynaFile" not in render.render(rsyslog, plain)
    assert 'file("/var/log/bench/test.syslog-ng.all.log")' in render.render(syslog_ng, plain)
    text = render.render(syslog_ng, scenarios.load("parallelize4"))
    assert "log { source(s_bench); parallelize(partitions(4)); destination(d_bench); };" in text


@pytest.mark.parametrize("profile", BY_FAMILY["rsyslog"], ids=ids)
def test_rsyslog_config(profile: Profile) -> None:
    text = render.render(profile)
    assert 'module(load="imtcp")' in text
    assert 'input(type="imtcp" port="514")' in text
    assert "\n$RepeatedMsgReduction off\n" in text
    assert (
        'string="/var/log/bench/test.rsyslog.facility.%syslogfacility%.severity.%syslogseverity%.log"' in text
    )
    assert 'dynaFile="bench_split"' in text
    done_action = (
        r'if \(\$msg contains "DONE"\) then \{\s*'
        r'action\(type="omfile" file="/var/log/bench/done\.log"\)'
    )
    assert re.search(done_action, text)


def test_rsyslog_omfile_params_are_rendered() -> None:
    profile = BY_FAMILY["rsyslog"][0]
    text = render.render(profile, omfile={"dynaFileCacheSize": "200"})
    assert 'action(type="omfile" dynaFile="bench_split" dynaFileCacheSize="200")' in text


@pytest.mark.parametrize("profile", BY_FAMILY["syslog-ng"], ids=ids)
def test_syslog_ng_config(profile: Profile) -> None:
    text = render.render(profile)
    major_minor = ".".join(profile.version.split(".")[:2])
    assert text.startswith(f"@version: {major_minor}\n")
    assert "tcp(port(514) max-connections(25))" in text
    assert "threaded(yes)" in text
    assert 'file("/var/log/bench/test.syslog-ng.facility.${FACILITY_NUM}.severity.${LEVEL_NUM}.log")' in text
    assert 'file("/var/log/bench/done.log")' in text
    assert 'match("DONE" value("MESSAGE"))' in text


def test_resolve_aliases() -> None:
    rsyslog = profiles.resolve("rsyslog8")
    syslog_ng = profiles.resolve("syslog-ng")
    assert rsyslog.daemon == "rsyslog"
    assert syslog_ng.daemon == "syslog-ng"
    assert [p.profile for p in PROFILES if "rsyslog8" in p.aliases] == [rsyslog.profile]
    assert [p.profile for p in PROFILES if "syslog-ng" in p.aliases] == [syslog_ng.profile]


@pytest.mark.parametrize("profile", PROFILES, ids=ids)
def test_resolve_by_profile_name(profile: Profile) -> None:
    assert profiles.resolve(profile.profile) == profile


def test_resolve_unknown_lists_known_names() -> None:
    with pytest.raises(ProfileError) as error:
        profiles.resolve("nope")
    message = str(error.value)
    assert message.startswith("unknown profile 'nope'. Known profiles: ")
    for profile in PROFILES:
        assert profile.profile in message
        for alias in profile.aliases:
            assert alias in message


def test_names_and_aliases_are_unique() -> None:
    every = [name for p in PROFILES for name in [p.profile, *p.aliases]]
    assert len(every) == len(set(every))
    assert sorted(profiles.names()) == sorted(every)


def test_manifest_errors(tmp_path: Path) -> None:
    data = yaml.safe_load((FOLDERS[0] / "manifest.yaml").read_text())
    folder = tmp_path / data["profile"]
    folder.mkdir()
    manifest = folder / "manifest.yaml"

    manifest.write_text(yaml.safe_dump({key: value for key, value in data.items() if key != "package"}))
    with pytest.raises(ProfileError, match=r"missing keys \['package'\]"):
        profiles.load_manifest(manifest)

    manifest.write_text(yaml.safe_dump({**data, "colour": "blue"}))
    with pytest.raises(ProfileError, match=r"unknown keys \['colour'\]"):
        profiles.load_manifest(manifest)

    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "manifest.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ProfileError, match="must match its folder 'elsewhere'"):
        profiles.load_manifest(other / "manifest.yaml")
