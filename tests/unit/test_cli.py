"""The syslogbench command without Docker: overrides, settings checks, host notices, profiles."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from syslogbench.contract import EXIT_CODES
from syslogbench.host import (
    benchmark,
    cli,
    compose,
    environment,
    events,
    fingerprintcontainer,
    lock,
    onehost,
    setup,
)
from syslogbench.model import scenarios, settings
from tests.unit.conftest import SEED_ENV_FILE
from tests.unit.test_result import document_of, observed

pytestmark = pytest.mark.usefixtures("host_env")


# --- parse_overrides -----------------------------------------------------------------------------------------


# --- run_env -------------------------------------------------------------------------------------------------


# --- host_notices --------------------------------------------------------------------------------------------


# --- main ----------------------------------------------------------------------------------------------------


def test_main_check_unknown_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["check", "--profile", "nope"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("syslogbench: error: unknown profile 'nope'. Known profiles: ")
    known = out.strip().split("Known profiles: ", 1)[1].split(", ")
    assert "rsyslog8" in known
    assert "syslog-ng" in known
    assert known == sorted(known)


def test_main_check_bad_override(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["check", "hosts=2"]) == 2
    assert capsys.readouterr().out == (
        "syslogbench: error: 'hosts=2' is not KEY=VALUE: write e.g. HOSTS=2 (keys as in .env)\n"
    )


def test_main_check_bad_value(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["check", "HOSTS=-1"]) == 2
    out = capsys.readouterr().out
    assert out == "syslogbench: error: HOSTS=-1 is below 1: use a value of at least 1\n"


@pytest.mark.parametrize("argv", [["--profile", "rsyslog8"], []], ids=["named", "the manifest's default"])
def test_main_check_ok(argv: list[str], capsys: pytest.CaptureFixture[str], small_host: None) -> None:
    assert cli.main(["check", *argv, "HOSTS=2"]) == 0
    assert capsys.readouterr().out == (
        "syslogbench: ok: profile rsyslog-8.2504, scenario seed2014, 2,400,008 messages expected\n"
        "syslogbench: notice: CENTRAL_CPUS=8 but this host has 2 cores: the effective limit is 2\n"
    )


def test_main_profiles_lists_the_aliases(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["profiles"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert "rsyslog8" in names
    assert "syslog-ng" in names
    assert names == sorted(names)


# --- one verdict from check, every problem listed ------------------------------------------------------------


def test_check_of_an_na_combination_exits_4_as_run_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["check", "--profile", "rsyslog8", "SCENARIO=parallelize4"]) == EXIT_CODES["n/a"]
    assert capsys.readouterr().out == (
        "syslogbench: n/a: rsyslog-8.2504 cannot run scenario parallelize4: needs the 'parallelize' feature\n"
    )


def test_check_lists_every_problem_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["check", "--profile", "typo", "SCENARIO=nope", "HOSTS=0"]) == EXIT_CODES["bad-input"]
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "syslogbench: error: 3 problems:"
    assert [line.split(":")[0] for line in lines[1:]] == [
        "  - unknown profile 'typo'. Known profiles",
        "  - unknown scenario 'nope'",
        "  - HOSTS=0 is below 1",
    ]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["run", "--profile", "rsyslog", "8"],
            "profile 'rsyslog 8': a profile name has no space (did you mean rsyslog8?)",
        ),
        (
            ["run", "--profile", "rsyslog 8"],
            "profile 'rsyslog 8': a profile name has no space (did you mean rsyslog8?)",
        ),
        (
            ["check", "--profile", "syslog-ng", "4.8"],
            "profile 'syslog-ng 4.8': a profile name has no space (did you mean syslog-ng-4.8?)",
        ),
        (
            ["stack", "--profile", "rsyslog", "8"],
            "profile 'rsyslog 8': a profile name has no space (did you mean rsyslog8?)",
        ),
    ],
)
def test_a_profile_split_by_a_space_is_said_to_be_the_profile(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`make run PROFILE="rsyslog 8"`: the message speaks of the profile, not of a bad KEY=VALUE."""
    assert cli.main(argv) == EXIT_CODES["bad-input"]
    out = capsys.readouterr().out
    assert out.startswith(f"syslogbench: error: {said}. Known profiles: ") and out.count("\n") == 1


def test_a_key_without_a_value_is_a_bad_pair_not_a_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["check", "--profile", "rsyslog8", "HOSTS", "2"]) == EXIT_CODES["bad-input"]
    assert "profile" not in capsys.readouterr().out


# --- no traceback: a path the user gave, one line and exit 2 ---------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["stack", "--out", "/nonexistent/stack.yaml"],
            "--out /nonexistent/stack.yaml: the directory /nonexistent does not exist: create it first",
        ),
        (["stack", "--out", "{tmp}"], "--out {tmp}: is a directory: name a file, e.g. {tmp}/stack.yaml"),
        (
            ["run", "--results", "{tmp}/file"],
            "--results {tmp}/file: is a file, not a directory: name a directory",
        ),
        (
            ["matrix", "--profiles", "rsyslog8", "--results", "{tmp}/file/x"],
            "--results {tmp}/file/x: cannot be made (Not a directory): choose another",
        ),
        (
            ["calibrate", "--results", "{tmp}/file"],
            "--results {tmp}/file: is a file, not a directory: name a directory",
        ),
        (["calibrate", "--messages", "0"], "--messages 0: use 1 or more"),
        (
            ["matrix", "--profiles", " , "],
            "--profiles ' , ' names no profile: give a comma-separated list of `profiles` names",
        ),
        (["matrix", "--profiles", "rsyslog8", "--replicates", "0"], "--replicates 0: use 1 or more"),
        (["fingerprint", "--times", "0"], "--times 0: use 1 or more"),
        (["faults", "--runs", "0"], "--runs 0: use 1 or more"),
    ],
)
def test_a_bad_path_or_count_is_one_line_and_exit_2(
    argv: list[str],
    said: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(setup, "setup", lambda *a, **k: pytest.fail("set-up started before the check"))
    (tmp_path / "file").write_text("")
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in argv]
    assert cli.main(argv) == EXIT_CODES["bad-input"]
    assert capsys.readouterr().out == f"syslogbench: error: {said.replace('{tmp}', str(tmp_path))}\n"


@pytest.mark.parametrize(
    ("raised", "code", "said"),
    [
        (KeyboardInterrupt, "interrupted", "interrupted (Ctrl-C)"),
        (cli.Terminated, "terminated", "stopped by SIGTERM"),
    ],
)
def test_ctrl_c_and_sigterm_are_one_line_and_their_own_code(
    raised: type[BaseException],
    code: str,
    said: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def stopped(args: object, wiring: object) -> int:
        raise raised

    monkeypatch.setitem(cli.COMMANDS, "profiles", replace(cli.COMMANDS["profiles"], run=stopped))
    assert cli.main(["profiles"]) == EXIT_CODES[code] == {"interrupted": 130, "terminated": 143}[code]
    out = capsys.readouterr().out
    assert out.startswith(f"syslogbench: {said}: ") and out.count("\n") == 1


def test_sigterm_reaches_the_command_as_terminated(monkeypatch: pytest.MonkeyPatch) -> None:
    def killed(args: object, wiring: object) -> int:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        return 0

    monkeypatch.setitem(cli.COMMANDS, "profiles", replace(cli.COMMANDS["profiles"], run=killed))
    previous = signal.getsignal(signal.SIGTERM)
    try:
        assert cli.main(["profiles"]) == EXIT_CODES["terminated"]
    finally:
        signal.signal(signal.SIGTERM, previous)


# --- the dispatch table ----------------------------------------------------------------------------------------


def test_every_command_is_one_entry_of_the_table_with_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    text = capsys.readouterr().out
    assert cli.DESCRIPTION.split()[:4] == text.split("\n\n")[1].split()[:4]
    for name, command in cli.COMMANDS.items():
        assert name in text and command.help
    assert "if args.command" not in Path(cli.__file__).read_text()
    for name, code in EXIT_CODES.items():
        assert f"{code:>3}  {name}: " in text


def test_report_gets_every_argument_after_its_name() -> None:
    seen: list[list[str]] = []
    code = cli.main(["report", "--out", "x", "--scenario", "y"], report=lambda argv: seen.append(argv) or 0)
    assert (code, seen) == (0, [["--out", "x", "--scenario", "y"]])


# --- profiles built on registry images (the seed's 2014 daemons) ---------------------------------------------


# --- exit codes of a run: one meaning each (contract.EXIT_CODES) ---------------------------------------------


@pytest.fixture
def fake_compose(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """A run without Docker: compose 'up' ends as the test says, and may leave a result behind."""
    calls: list[str] = []
    monkeypatch.setattr(setup, "setup", lambda names: None)
    monkeypatch.setattr(compose.Compose, "down", lambda self, env, **kwargs: calls.append("down"))
    monkeypatch.setattr(compose.Compose, "states", lambda self, env: [])
    # No fingerprint container either: a unit test starts none (it ran one for real, named as a run's).
    monkeypatch.setattr(fingerprintcontainer, "take", lambda cfg: (None, "no fingerprint in a unit test"))
    monkeypatch.setattr(events.Recorder, "start", lambda self: self)
    monkeypatch.setattr(events.Recorder, "stop", lambda self: [])
    return calls


def whole_result(given: dict) -> dict:
    """A whole result document, as the watcher writes it, with the given daemon profile and summary."""
    document = document_of(observed())
    document["daemon"]["profile"], document["summary"] = given["daemon"]["profile"], given["summary"]
    document["verdict"] = given.get("verdict", document["verdict"])
    return document


def ends_with(monkeypatch: pytest.MonkeyPatch, up: compose.Up, result: dict | None, results: Path) -> None:
    def fake_up(self: compose.Compose, env: dict, timeout_s: float, **kwargs: object) -> compose.Up:
        assert env["GENERATORS"] == env["HOSTS"] == "2"
        assert timeout_s == 900 + benchmark.STARTUP_ALLOWANCE_S
        if result is not None:  # the watcher writes into the run's own directory, under results/
            assert Path(env["RESULTS_DIR"]).parent == results
            (Path(env["RESULTS_DIR"]) / "r.json").write_text(json.dumps(whole_result(result)))
        return up

    monkeypatch.setattr(compose.Compose, "up", fake_up)


def written(verdict: str, profile: str = "baseline") -> dict:
    """What ends_with makes a whole result of: this verdict, from this profile's image."""
    return {"daemon": {"profile": profile}, "summary": verdict, "verdict": verdict}


@pytest.mark.parametrize(
    ("up", "result", "code"),
    [
        (compose.Up(0), written("pass"), EXIT_CODES["pass"]),
        (compose.Up(1), written("loss"), EXIT_CODES["loss"]),
        (compose.Up(5), written("timeout"), EXIT_CODES["timeout"]),
        # compose gave up while starting the services (its own 1), and the watcher, stopped by it, wrote error
        (compose.Up(1), written("error"), EXIT_CODES["error"]),
        # compose past RUN_TIMEOUT + the start-up allowance: the harness hung, nothing was measured.
        (compose.Up(None, timed_out=True), None, EXIT_CODES["error"]),
        # compose itself failed (it says 1), and no result came: not a loss, an error.
        (compose.Up(1), None, EXIT_CODES["error"]),
        # the image ran another daemon than the profile's
        (compose.Up(0), written("pass", "rsyslog-8.2504"), EXIT_CODES["error"]),
    ],
)
def test_run_exit_code_is_the_verdicts(
    monkeypatch: pytest.MonkeyPatch,
    fake_compose: list[str],
    tmp_path: Path,
    up: compose.Up,
    result: dict | None,
    code: int,
) -> None:
    results = tmp_path / "results"
    ends_with(monkeypatch, up, result, results)
    monkeypatch.setattr(benchmark, "show_path", lambda path: None)
    assert (
        cli.main(["run", "--profile", "baseline", "--results", str(results), "HOSTS=2"], show=lambda p: None)
        == code
    )
    assert fake_compose == ["down"]  # every container is stopped, whatever the outcome


def test_a_failed_docker_command_is_an_error_not_bad_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def failing(names: list[str]) -> None:
        raise subprocess.CalledProcessError(17, ["docker", "compose", "build"])

    monkeypatch.setattr(setup, "setup", failing)
    assert cli.main(["setup", "--profile", "baseline"]) == EXIT_CODES["error"]
    assert capsys.readouterr().out == "syslogbench: error: docker compose build failed with exit code 17\n"


# --- bad files: one line naming the file and the line, exit 2, no traceback ------------------------------------


def test_env_file_lines_compose_accepts_are_accepted(tmp_path: Path) -> None:
    environment.ENV_FILE.write_text(SEED_ENV_FILE + "export HOSTS=3\nSENDERS_PER_HOST=2 # two\n")
    cfg, env = environment.run_env({})
    assert (cfg.hosts, cfg.senders_per_host, env["GENERATORS"]) == (3, 2, "3")


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (
            SEED_ENV_FILE.encode() + b'HOSTS="5\n',
            '{env}:12: unterminated quoted value "5: close the quote (") or remove it',
        ),
        (SEED_ENV_FILE.encode() + b"HOSTS=\xff\n", "{env}:12: not UTF-8 (byte 0xff): save the file as UTF-8"),
        (None, "{env}: not found: restore it (`git checkout .env`) or create it"),
    ],
)
def test_a_bad_env_file_is_one_line(
    capsys: pytest.CaptureFixture[str], content: bytes | None, line: str
) -> None:
    if content is None:
        environment.ENV_FILE.unlink()
    else:
        environment.ENV_FILE.write_bytes(content)
    for command in ("check", "run"):
        assert cli.main([command, "--profile", "baseline"]) == EXIT_CODES["bad-input"]
        assert capsys.readouterr().out == f"syslogbench: error: {line.format(env=environment.ENV_FILE)}\n"


def test_a_bad_scenario_file_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = tmp_path / "scenarios"
    directory.mkdir()
    (directory / "broken.yaml").write_bytes(b"id: broken\ntransport: [tcp\n")
    (directory / "latin1.yaml").write_bytes(b"id: latin1\ndescription: caf\xe9\n")
    monkeypatch.setattr(scenarios, "DIRECTORY", directory)
    assert cli.main(["check", "SCENARIO=broken"]) == EXIT_CODES["bad-input"]
    said = capsys.readouterr().out  # PyYAML's own words between the brackets are not ours to pin
    assert said.startswith(
        f"syslogbench: error: {directory}/broken.yaml:3: not valid YAML ("
    ) and said.endswith("): fix that line (quotes, brackets, indentation with spaces)\n"), said
    assert said.count("\n") == 1, said
    assert cli.main(["check", "SCENARIO=latin1"]) == EXIT_CODES["bad-input"]
    assert capsys.readouterr().out == (
        f"syslogbench: error: {directory}/latin1.yaml:2: not UTF-8 (byte 0xe9): save the file as UTF-8\n"
    )


def test_run_shows_only_the_result_its_own_run_wrote(
    monkeypatch: pytest.MonkeyPatch, fake_compose: list[str], tmp_path: Path
) -> None:
    # Another project's run, started in the same second into the same results directory, finishes first.
    results = tmp_path / "results"
    shown: list[str] = []

    def fake_up(self: compose.Compose, env: dict, timeout_s: float, **kwargs: object) -> compose.Up:
        other = whole_result({"daemon": {"profile": "rsyslog-8.2504"}, "summary": "the other run"})
        (results / "20261124T054846.001Z-rsyslog-8.2504-aaaa.json").write_text(json.dumps(other))
        mine = whole_result({"daemon": {"profile": "baseline"}, "summary": "this run"})
        (Path(env["RESULTS_DIR"]) / "20261124T054846.002Z-baseline-bbbb.json").write_text(json.dumps(mine))
        return compose.Up(0)

    monkeypatch.setattr(compose.Compose, "up", fake_up)
    show = lambda path: shown.append(json.loads(path.read_text())["summary"])  # noqa: E731
    assert cli.main(["run", "--profile", "baseline", "--results", str(results)], show=show) == 0
    assert shown == ["this run"]
    names = sorted(path.name for path in results.iterdir())
    assert names == [
        "20261124T054846.001Z-rsyslog-8.2504-aaaa.json",
        "20261124T054846.002Z-baseline-bbbb.json",
    ]


@pytest.mark.parametrize("command", [["run", "--profile", "baseline"], ["matrix", "--profiles", "baseline"]])
def test_a_second_run_or_matrix_on_a_busy_project_is_refused_with_one_line(
    monkeypatch: pytest.MonkeyPatch,
    fake_compose: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    monkeypatch.setenv("SYSLOGBENCH_PROJECT", "busy")
    monkeypatch.setattr(setup, "setup", lambda names: pytest.fail("built while the project is busy"))
    monkeypatch.setattr(compose.Compose, "up", lambda *args, **kwargs: pytest.fail("compose started"))
    holder = hold_in_another_process(lock.lock_path("busy", tmp_path))
    try:
        code = cli.main([*command, "--results", str(tmp_path / "results")])
    finally:
        holder.kill()
        holder.wait()
    assert code == EXIT_CODES["bad-input"]
    assert fake_compose == []  # nothing started, so nothing to stop
    assert capsys.readouterr().out == (
        f"syslogbench: error: compose project 'busy' is busy with another run (pid {holder.pid}): wait for it, "
        "or run in parallel with another project and image tag, e.g. SYSLOGBENCH_PROJECT=busy-2 "
        "IMAGE_TAG=busy-2\n"
    )


def test_a_matrix_runs_each_cell_under_its_own_lock(
    monkeypatch: pytest.MonkeyPatch, fake_compose: list[str], tmp_path: Path
) -> None:
    # The matrix holds the project's lock, and each run takes it again in the same process: no refusal.
    results = tmp_path / "results"
    ends_with(monkeypatch, compose.Up(0), written("pass"), results)
    args = ["matrix", "--profiles", "baseline", "--replicates", "2", "--results", str(results), "HOSTS=2"]
    assert cli.main(args, show=lambda path: None) == 0
    assert fake_compose == ["down", "down"]
    assert lock.HELD == {}


def hold_in_another_process(path: Path) -> subprocess.Popen[str]:
    """A process that holds the flock on path (and wrote its pid there), until killed."""
    code = (
        "import fcntl,os,sys;fd=os.open(sys.argv[1],os.O_RDWR|os.O_CREAT);fcntl.flock(fd,fcntl.LOCK_EX);"
        "os.write(fd,f'{os.getpid()}\\n'.encode());print('held',flush=True);sys.stdin.read()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def test_key_value_pairs_may_come_before_and_after_the_options() -> None:
    args = cli.parse(
        ["run", "--profile", "syslog-ng", "HOSTS=2", "--config", "x.conf", "EXPECT_DROPPED=*.debug"]
    )
    assert (args.profile, args.config, args.overrides) == (
        "syslog-ng",
        Path("x.conf"),
        ["HOSTS=2", "EXPECT_DROPPED=*.debug"],
    )
    for argv in (["run", "HOSTS=2", "--config", "x.conf", "stray"], ["profiles", "HOSTS=2"]):
        with pytest.raises(SystemExit) as stopped:
            cli.parse(argv)
        assert stopped.value.code == 2


def test_a_command_of_one_host_refuses_a_swarm_in_one_line() -> None:
    """compare, knobs and faults take this machine's compose from the command line's choice: a swarm is one
    line, before anything starts."""
    with pytest.raises(
        settings.SettingsError, match="^faults runs on this machine only .*leave --swarm out$"
    ):
        cli.one_host(argparse.Namespace(swarm=True, registry=None), "faults")
    assert isinstance(cli.one_host(argparse.Namespace(), "faults"), onehost.OneHost)
