"""Daemon families are records (daemons/_families/): a made-up third family gets the `--config` checks from
its record alone, with no change to any Python."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from syslogbench.host import configcheck, environment, families, fits, ownconfig, profiles
from syslogbench.model import scenarios

TINYLOG = """\
# A made-up family, as a newcomer would add one: no Python names it.
family: tinylog
user_config: true
example_profile: tinylog-1
main_config: tinylog.conf
config_dir: /etc/tinylog
check: [tinylogd, --check, "{config}"]
marks: '(?m)^\\s*tiny\\s+listen\\b'
comment: ";"
session_limit:
  read: '(?m)^\\s*tiny\\s+max_clients\\s+(\\d+)'
  write: 'tiny max_clients {}'
listener_hints:
  tcp: 'tiny listen tcp 514'
missing_module:
  - 'no such tiny module'
"""
TINY_CONFIG = "tiny listen tcp 514\ntiny max_clients 3 ; the default is 100\n"
RSYSLOG = 'module(load="imtcp")\ninput(type="imtcp" port="514")\n*.* /var/log/all.log\n'


@pytest.fixture
def tinylog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> families.Family:
    """The real records and tinylog's, in a directory of their own."""
    folder = tmp_path / "_families"
    shutil.copytree(families.DIRECTORY, folder)
    (folder / "tinylog.yaml").write_text(TINYLOG)
    monkeypatch.setattr(families, "DIRECTORY", folder)
    return families.get("tinylog")


def tiny_profile() -> profiles.Profile:
    return profiles.Profile(
        profile="tinylog-1", daemon="tinylog", version="1", package="tinylog=1", base="trixie",
        config={}, settings={}, version_cmd="tinylogd -v", default_connections=100,
    )  # fmt: skip


def refused(path: Path, family: str) -> str:
    with pytest.raises(ownconfig.UserConfigError) as error:
        ownconfig.load(path, family, {})
    return str(error.value)


def test_every_manifest_s_family_has_a_record() -> None:
    named = {profile.daemon for profile in profiles.all_profiles()}
    assert named <= set(families.all_families()), named - set(families.all_families())


def test_a_third_family_is_read_from_its_record(tinylog: families.Family, tmp_path: Path) -> None:
    config = tmp_path / "mine.conf"
    config.write_text(TINY_CONFIG)
    cfg = ownconfig.load(config, "tinylog", {})
    assert cfg.main_target == "/etc/tinylog/tinylog.conf"
    assert configcheck.check_command(cfg) == ["tinylogd", "--check", "/etc/tinylog/tinylog.conf"]
    assert cfg.record.listener_hint("tcp") == "; add tiny listen tcp 514"


def test_a_third_family_s_marks_tell_its_configs_from_the_others(
    tinylog: families.Family, tmp_path: Path
) -> None:
    tiny, rsyslog = tmp_path / "tinylog.conf", tmp_path / "rsyslog.conf"
    tiny.write_text(TINY_CONFIG)
    rsyslog.write_text(RSYSLOG)
    said = refused(tiny, "rsyslog")
    assert "tinylog.conf:1:" in said and "--profile tinylog-1" in said, said
    said = refused(rsyslog, "tinylog")
    assert "rsyslog.conf:1:" in said and "--profile rsyslog8" in said, said
    folder = tmp_path / "etc"
    folder.mkdir()
    assert "tinylog.conf" in refused(folder, "tinylog")  # a directory must hold the main config by its name


def test_a_third_family_s_session_limit_is_read_and_written_from_its_record(
    tinylog: families.Family, tmp_path: Path
) -> None:
    config = tmp_path / "tinylog.conf"
    config.write_text(TINY_CONFIG + "; tiny max_clients 900 is a comment\n")
    cfg, _ = environment.run_env({"HOSTS": "2", "SENDERS_PER_HOST": "2"})
    seed = scenarios.load("seed2014")
    said = fits.connections_problem(cfg, seed, tiny_profile(), [config])
    assert said is not None
    assert f"tiny max_clients 3 in {config}" in said and "set tiny max_clients 4 in your config" in said, said


def test_a_third_family_s_check_says_a_module_is_missing(
    tinylog: families.Family, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "tinylog.conf"
    config.write_text(TINY_CONFIG)
    cfg = ownconfig.load(config, "tinylog", {})

    def daemon_check(command: list[str], **_: object) -> subprocess.CompletedProcess[bytes]:
        assert command[-3:] == ["tinylogd", "--check", "/etc/tinylog/tinylog.conf"], command
        return subprocess.CompletedProcess(command, 1, b"", b"error: no such tiny module: tcp\n")

    monkeypatch.setattr(configcheck.subprocess, "run", daemon_check)
    with pytest.raises(ownconfig.UserConfigError, match="lacks a module the config loads"):
        configcheck.syntax_check(cfg, "tinylog:1", "tinylog-1")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("family: other\nuser_config: false\n", "must match the file's name"),
        ("family: tinylog\nuser_config: true\n", "needs example_profile"),
        ("family: tinylog\nuser_config: false\ncolour: red\n", "unknown keys ['colour']"),
        ("family: tinylog\nuser_config: false\nmarks: '('\n", "marks is not a valid regular expression"),
        ("family: tinylog\nuser_config: [\n", "not valid YAML at line"),
    ],
)
def test_a_bad_record_is_one_line(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "tinylog.yaml"
    path.write_text(text)
    with pytest.raises(families.FamilyError) as error:
        families.load(path)
    assert said in str(error.value) and "\n" not in str(error.value), error.value


def test_the_check_is_named_without_the_config_s_path() -> None:
    assert families.get("rsyslog").check_name == "rsyslogd -N1"
    assert families.get("syslog-ng").check_name == "syslog-ng --no-caps --syntax-only"
