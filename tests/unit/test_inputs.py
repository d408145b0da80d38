"""Every command checks its input the same way: each bad input is one line (or a list of them), exit 2 (4 for a
scenario the daemon cannot run), before any container."""

from __future__ import annotations

import pytest

from syslogbench.host import cli, environment, setup
from syslogbench.host.compose import Compose


@pytest.fixture
def no_docker(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*a: object, **k: object) -> None:
        raise AssertionError("a container or a build was started")

    monkeypatch.setattr(Compose, "up", refused)
    monkeypatch.setattr(setup, "setup", refused)
    monkeypatch.setattr(environment, "docker_version", lambda: "test")


def said(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().out.strip().splitlines()


@pytest.mark.parametrize("command", ["run", "stack", "capacity"])
def test_a_config_that_is_no_file_is_one_line(command: str, no_docker: None, capsys) -> None:
    assert cli.main([command, "--config", "/dev/null"]) == 2
    lines = said(capsys)
    assert len(lines) == 1 and "/dev/null: neither a regular file nor a directory" in lines[0], lines


@pytest.mark.parametrize("command", ["run", "stack", "capacity"])  # the commands that take --config
def test_udp_rcvbuf_beside_a_config_of_one_s_own_is_one_line(command: str, no_docker: None, capsys) -> None:
    """The buffer renders into the profile's own config only, so every command refuses it with --config."""
    args = ["--profile", "syslog-ng", "--config", "examples/syslog-ng-debian-trixie.conf"]
    assert cli.main([command, *args, "SCENARIO=udp", "UDP_RCVBUF=4m"]) == 2
    lines = said(capsys)
    assert len(lines) == 1 and "set the buffer in your config" in lines[0], lines


def test_a_matrix_with_a_config_that_is_no_file_is_one_line(no_docker: None, capsys, tmp_path) -> None:
    code = cli.main(["matrix", "--profiles", "rsyslog8", "--results", str(tmp_path), "--config", "/dev/null"])
    lines = said(capsys)
    assert code == 2 and len(lines) == 1 and "neither a regular file nor a directory" in lines[0], lines


def test_a_count_of_310_digits_is_one_line(no_docker: None, capsys) -> None:
    assert cli.main(["check", "MESSAGES_PER_SENDER=" + "9" * 310]) == 2
    lines = said(capsys)
    assert len(lines) == 1 and "(310 characters) is above 301,989,886" in lines[0], lines


def test_a_key_given_twice_is_refused(no_docker: None, capsys) -> None:
    assert cli.main(["check", "HOSTS=2", "HOSTS=3"]) == 2
    lines = said(capsys)
    assert len(lines) == 1 and "HOSTS is given twice" in lines[0], lines


def test_check_lists_every_problem(no_docker: None, capsys) -> None:
    assert cli.main(["check", "FOO=1", "HOSTS=x", "SENDERS_PER_HOST=0", "SEED=3"]) == 2
    lines = said(capsys)
    assert lines[0].endswith("4 problems:"), lines
    for key in ("FOO", "HOSTS", "SENDERS_PER_HOST", "SEED"):
        assert sum(key in line for line in lines[1:]) >= 1, (key, lines)


@pytest.mark.parametrize("command", ["run", "check"])
def test_run_settings_take_ascii_digits_only(command: str, no_docker: None, capsys, tmp_path) -> None:
    assert cli.main([command, "RUN_TIMEOUT=\uff11\uff10"]) == 2
    lines = said(capsys)
    assert len(lines) == 1 and "not a whole number in ASCII digits" in lines[0], lines


@pytest.mark.parametrize("key", ["HOSTS=2", "SCENARIO=udp"])
def test_fingerprint_refuses_settings_it_does_not_use(key: str, no_docker: None, capsys) -> None:
    assert cli.main(["fingerprint", key]) == 2
    lines = said(capsys)
    assert len(lines) == 1 and "fingerprint does not use" in lines[0], lines


@pytest.mark.parametrize(
    "command", [["matrix", "--profiles", "rsylog8"], ["faults", "--profiles", "rsylog8"]]
)
def test_a_mistyped_profile_gets_a_guess_everywhere(
    command: list[str], no_docker: None, capsys, tmp_path
) -> None:
    assert cli.main([*command, "--results", str(tmp_path)]) == 2
    lines = said(capsys)
    assert len(lines) == 1 and "did you mean rsyslog8?" in lines[0], lines


@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        (["--latency-rate", "fast"], "--latency-rate fast: give msg/s in all senders, at least 100, or auto, or off"),
        (["RATE_MAX=9000"], "RATE_MAX: settings of a capacity search; add --capacity (the latency trials take "),
        (["--latency-rate", "off", "TRIAL_FINAL=2"], "TRIAL_FINAL: settings of a capacity search; add --capacity"),
    ],
)  # fmt: skip
def test_knobs_takes_the_search_settings_its_latency_trials_use_only(
    args: list[str], wanted: str, no_docker: None, capsys, tmp_path
) -> None:
    code = cli.main(["knobs", "--profile", "rsyslog-8.2504", "--results", str(tmp_path), *args])
    lines = said(capsys)
    assert code == 2 and len(lines) == 1 and wanted in lines[0], lines
