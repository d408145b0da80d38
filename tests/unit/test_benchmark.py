"""host/benchmark.py: the KEY=VALUE pairs, the run's settings and environment, the host's notices, the images it builds."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from syslogbench.host import cli, environment, images, pairs, profiles, setup
from syslogbench.model import settings
from tests.unit.conftest import SEED_ENV_FILE, env

pytestmark = pytest.mark.usefixtures("host_env")
SMALL = env(small=True)


def test_the_real_env_file_sets_every_key_but_the_load() -> None:
    real = settings.read_env_file(Path(cli.__file__).resolve().parents[2] / ".env")
    assert (
        set(real)
        == set(SMALL) - {*settings.SHAPE, *settings.RULES}
        == set(settings.read_env_file(environment.ENV_FILE))
    )


def test_parse_overrides_accepts_key_value() -> None:
    assert pairs.parse_overrides(["HOSTS=2", "SENDERS_PER_HOST=3"]) == {
        "HOSTS": "2",
        "SENDERS_PER_HOST": "3",
    }


def test_parse_overrides_keeps_everything_after_the_first_equals() -> None:
    assert pairs.parse_overrides(["SCENARIO=a=b", "SEED="]) == {"SCENARIO": "a=b", "SEED": ""}


def test_parse_overrides_empty() -> None:
    assert pairs.parse_overrides([]) == {}


@pytest.mark.parametrize("pair", ["hosts=2", "HOSTS", "=2", "Hosts=2"])
def test_parse_overrides_rejects(pair: str) -> None:
    with pytest.raises(settings.SettingsError, match="KEY=VALUE") as caught:
        pairs.parse_overrides([pair])
    assert str(caught.value) == f"{pair!r} is not KEY=VALUE: write e.g. HOSTS=2 (keys as in .env)"


def test_run_env_seed_scenario() -> None:
    cfg, env = environment.run_env({})
    assert (cfg.hosts, cfg.senders_per_host, cfg.messages_per_sender) == (5, 4, 300_000)
    assert (cfg.done_threshold, cfg.variant) == (20, "default")
    assert env["DOCKER_VERSION"] == "test"
    assert (env["HOSTS"], env["GENERATORS"]) == ("5", "5")


def test_run_env_override_wins_over_shell_and_env_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOSTS", "3")
    monkeypatch.setenv("SENDERS_PER_HOST", "2")
    cfg, env = environment.run_env({"HOSTS": "2"})
    assert (cfg.hosts, cfg.senders_per_host, cfg.done_threshold) == (2, 2, 4)
    assert cfg.variant == "2x2x300000"
    assert (env["HOSTS"], env["SENDERS_PER_HOST"], env["GENERATORS"]) == ("2", "2", "2")


def test_run_env_takes_the_load_of_a_connection_scenario_from_its_file() -> None:
    cfg, env = environment.run_env({"SCENARIO": "conn50"})
    assert (cfg.hosts, cfg.senders_per_host, cfg.messages_per_sender) == (5, 10, 120_000)
    assert (cfg.done_threshold, cfg.variant) == (50, "default")
    assert (env["HOSTS"], env["SENDERS_PER_HOST"], env["MESSAGES_PER_SENDER"]) == ("5", "10", "120000")
    assert env["GENERATORS"] == "5"
    cfg, env = environment.run_env({"SCENARIO": "conn1"})
    assert (cfg.senders, cfg.messages_per_sender, env["GENERATORS"]) == (1, 6_000_000, "1")


def test_run_env_rejects_an_unknown_key() -> None:
    with pytest.raises(settings.SettingsError, match="FOO") as caught:
        environment.run_env({"FOO": "1"})
    assert str(caught.value) == (
        "unknown setting(s) ['FOO']: the keys are those in .env and HOSTS, SENDERS_PER_HOST, MESSAGES_PER_SENDER"
    )


@pytest.mark.parametrize("key", ["SEED", "DONE_THRESHOLD", "DONE_WINDOW"])
def test_run_env_refuses_to_change_the_scenarios_rules(key: str) -> None:
    with pytest.raises(settings.SettingsError) as caught:
        environment.run_env({key: "7"})
    assert str(caught.value) == (
        f"{key}: set by the scenario (scenarios/<SCENARIO>.yaml), not here; another value is another "
        "experiment: copy the scenario to a new id and change it there"
    )


def test_run_env_rejects_negative_hosts() -> None:
    with pytest.raises(settings.SettingsError) as caught:
        environment.run_env({"HOSTS": "-1"})
    assert str(caught.value) == "HOSTS=-1 is below 1: use a value of at least 1"


def test_host_notices_central_cpus_above_cores(small_host: None) -> None:
    cfg = settings.from_env({**SMALL, "CENTRAL_CPUS": "8"})
    assert environment.host_notices(cfg) == [
        "CENTRAL_CPUS=8 but this host has 2 cores: the effective limit is 2"
    ]


def test_host_notices_remote_cpus_and_memory(small_host: None) -> None:
    cfg = settings.from_env({**SMALL, "REMOTE_CPUS": "3", "CENTRAL_MEM": "16g"})
    assert environment.host_notices(cfg) == [
        "REMOTE_CPUS=3 but this host has 2 cores: the effective limit is 2",
        "CENTRAL_MEM exceeds this host's 8.0 GiB: the effective limit is that",
    ]


def test_host_notices_none_within_limits(small_host: None) -> None:
    cfg = settings.from_env({**SMALL, "CENTRAL_CPUS": "2", "REMOTE_CPUS": "2", "CENTRAL_MEM": "8g"})
    assert environment.host_notices(cfg) == []


def test_host_notices_seed_scenario_on_two_cores(small_host: None) -> None:
    cfg, _ = environment.run_env({})
    assert environment.host_notices(cfg) == [
        "CENTRAL_CPUS=8 but this host has 2 cores: the effective limit is 2"
    ]


@pytest.mark.parametrize(
    ("manifest", "ok"), [("profile: rsyslog-8.2302\n", True), ("profile: rsyslog-8.2102\n", False)]
)
def test_a_built_image_must_carry_its_own_manifest(
    monkeypatch: pytest.MonkeyPatch, manifest: str, ok: bool
) -> None:
    done = subprocess.CompletedProcess([], 0, stdout=manifest, stderr="")
    monkeypatch.setattr(setup.subprocess, "run", lambda command, **kwargs: done)
    profile = profiles.resolve("rsyslog-8.2302")
    if ok:
        setup.check_image(profile)
        return
    with pytest.raises(images.SetupError, match="carries the manifest of rsyslog-8.2102, not rsyslog-8.2302"):
        setup.check_image(profile)


def test_fresh_mtime_gives_each_dockerfile_its_own_time(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for path in (first, second):
        path.write_text("FROM x\n")
        os.utime(path, ns=(10**18, 10**18))  # the same size and mtime, as git leaves them
    setup.fresh_mtime(first)
    setup.fresh_mtime(second)
    assert len({first.stat().st_mtime_ns, second.stat().st_mtime_ns, 10**18}) == 3


def test_every_key_of_the_real_env_file_is_a_setting() -> None:
    real = settings.read_env_file(Path(cli.__file__).resolve().parents[2] / ".env")
    assert set(real) <= set(settings.ENV_KEYS) and settings.env_file_problems(real, ".env") == []


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("UDP_RCVBUFF=4m", ".env: UDP_RCVBUFF is not a setting: did you mean UDP_RCVBUF? the keys are SCENARIO, "),
        ("SEED=7", ".env: SEED: set by the scenario (scenarios/<SCENARIO>.yaml), not here: remove it"),
        ("ZZZ=1", ".env: ZZZ is not a setting: the keys are SCENARIO, "),
    ],
)  # fmt: skip
def test_a_mistyped_key_in_the_env_file_is_refused_as_on_the_command_line(line: str, said: str) -> None:
    environment.ENV_FILE.write_text(SEED_ENV_FILE + line + "\n")
    with pytest.raises(settings.SettingsError) as refused:
        environment.run_env({})
    assert said in str(refused.value), refused.value
