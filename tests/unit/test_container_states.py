"""When the watcher cannot say it all: `syslogbench run` reads how each container ended (compose ps, docker
inspect) and names it in the result, or writes the result itself when the watcher wrote none. Docker is faked."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from syslogbench.contract import EXIT_CODES
from syslogbench.host import cli, compose, environment
from syslogbench.host.compose import ContainerState, ended_before_the_watcher, engine_time
from syslogbench.model import machine, result, scenarios
from tests.unit.test_cli import fake_compose  # noqa: F401 - a fixture, used below

# .env read from a temporary seed file and the docker version faked (test_cli); the runs below also fake
# set-up and compose down there.
pytestmark = pytest.mark.usefixtures("host_env")

T = "2026-11-24T05:50:0{}.{}Z"


def at(second: int, fraction: str = "5") -> datetime | None:
    return engine_time(T.format(second, fraction))


def state(name: str, service: str, code: int, second: int, oom: bool = False) -> ContainerState:
    return ContainerState(name, service, "exited", code, oom, at(second))


def test_engine_time_keeps_microseconds_of_the_engines_nanoseconds() -> None:
    assert engine_time("2026-11-24T05:50:01.123456789Z") == datetime(2026, 11, 24, 5, 50, 1, 123456, UTC)
    assert engine_time("2026-11-24T05:50:01Z") == datetime(2026, 11, 24, 5, 50, 1, tzinfo=UTC)
    assert engine_time("0001-01-01T00:00:00Z") is None  # never finished
    assert engine_time("") is None


def test_describe_names_the_signal_and_the_oom_kill() -> None:
    assert state("p-generator-2", "generator", 137, 1, oom=False).describe() == (
        "p-generator-2 exited with code 137 (SIGKILL) at 05:50:01.500 UTC"
    )
    assert state("p-rsyslog8-1", "rsyslog8", 137, 2, oom=True).describe() == (
        "p-rsyslog8-1 exited with code 137 (SIGKILL), killed for memory (OOMKilled) at 05:50:02.500 UTC"
    )
    assert (
        state("p-lasthop-1", "lasthop", 1, 3).describe()
        == "p-lasthop-1 exited with code 1 at 05:50:03.500 UTC"
    )
    assert ContainerState("p-watcher-1", "watcher", "running", 0).describe() == "p-watcher-1 is running"


def test_the_first_to_end_badly_before_the_watcher_comes_first() -> None:
    states = [
        state("p-generator-1", "generator", 137, 4),  # SIGKILLed by compose after its grace
        state("p-rsyslog8-1", "rsyslog8", 143, 3),  # stopped by compose: says nothing
        state("p-generator-2", "generator", 137, 1),  # killed: the cause
        state("p-lasthop-1", "lasthop", 0, 2),  # ended cleanly
        state("p-watcher-1", "watcher", 3, 6),
        state("p-generator-3", "generator", 137, 7),  # after the watcher: compose stopping the rest
    ]
    assert [c.name for c in ended_before_the_watcher(states)] == ["p-generator-2", "p-generator-1"]


def test_a_clean_run_has_nothing_to_say() -> None:
    states = [state("p-watcher-1", "watcher", 0, 1), state("p-generator-1", "generator", 0, 1)]
    assert ended_before_the_watcher(states) == []


def test_states_from_compose_ps_and_docker_inspect(monkeypatch: pytest.MonkeyPatch) -> None:
    listing = [
        {"Name": "p-watcher-1", "Service": "watcher", "State": "exited", "ExitCode": 3},
        {"Name": "p-rsyslog8-1", "Service": "rsyslog8", "State": "exited", "ExitCode": 137},
    ]
    inspected = [
        {"Name": "/p-watcher-1", "State": {"Status": "exited", "ExitCode": 3, "OOMKilled": False,
                                            "FinishedAt": T.format(5, "25")}},
        {"Name": "/p-rsyslog8-1", "State": {"Status": "exited", "ExitCode": 137, "OOMKilled": True,
                                             "FinishedAt": T.format(2, "123456789")}},
    ]  # fmt: skip

    def fake_run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess:
        if command[:2] == ["docker", "inspect"]:
            assert command[2:] == ["p-watcher-1", "p-rsyslog8-1"]
            return subprocess.CompletedProcess(command, 0, json.dumps(inspected), "")
        assert command[-4:] == ["ps", "-a", "--format", "json"]
        return subprocess.CompletedProcess(command, 0, "\n".join(json.dumps(c) for c in listing), "")

    monkeypatch.setattr(compose.subprocess, "run", fake_run)
    assert compose.Compose("rsyslog8", "p").states({}) == [
        ContainerState("p-watcher-1", "watcher", "exited", 3, False, at(5, "25")),
        ContainerState("p-rsyslog8-1", "rsyslog8", "exited", 137, True, at(2, "123456")),
    ]


def test_states_are_empty_when_the_engine_does_not_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_engine(command: list[str], **kwargs: object) -> subprocess.CompletedProcess:
        raise subprocess.CalledProcessError(1, command)

    monkeypatch.setattr(compose.subprocess, "run", no_engine)
    assert compose.Compose("rsyslog8", "p").states({}) == []


def run_ending(
    monkeypatch: pytest.MonkeyPatch, results: Path, states: list[ContainerState], written: dict | None
) -> int:
    """`syslogbench run` on baseline where compose up ends with the watcher's code, the containers in these
    states, and the watcher's result (or none)."""

    def up(self: compose.Compose, env: dict, timeout_s: float, **kwargs: object) -> compose.Up:
        if written is not None:
            # the watcher writes into the run's own directory; the run then moves it into results/
            (Path(env["RESULTS_DIR"]) / f"{written['run_id']}.json").write_text(json.dumps(written))
        return compose.Up(137 if written is None else 0)

    monkeypatch.setattr(compose.Compose, "up", up)
    monkeypatch.setattr(compose.Compose, "states", lambda self, env: states)
    return cli.main(["run", "--profile", "baseline", "--results", str(results)])


@pytest.mark.usefixtures("fake_compose")
def test_the_watcher_killed_leaves_a_result_written_from_outside(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    states = [state("p-watcher-1", "watcher", 137, 2), state("p-baseline-1", "baseline", 143, 3)]
    results = tmp_path / "results"
    assert run_ending(monkeypatch, results, states, None) == EXIT_CODES["error"]
    [path] = results.glob("*.json")
    written = result.read(path)  # the typed model's own document
    assert written.verdict == "error"
    assert written.errors == [
        "the watcher wrote no result (p-watcher-1 exited with code 137 (SIGKILL) at 05:50:02.500 UTC); "
        "this result was written by `syslogbench run`"
    ]
    assert written.notes[-1] == (
        "containers at the end: p-watcher-1 exited with code 137 (SIGKILL) at 05:50:02.500 UTC; "
        "p-baseline-1 exited with code 143 (SIGTERM) at 05:50:03.500 UTC"
    )
    assert (written.daemon.profile, written.messages.received) == ("baseline", 0)


def watcher_result(verdict: str) -> dict:
    cfg, _ = environment.run_env({})
    scenario = scenarios.load(cfg.scenario)
    host = machine.host_facts(docker_version="test")
    daemon = result.Daemon(profile="baseline")
    moment = datetime(2026, 11, 24, 5, 50, tzinfo=UTC)
    data = result.not_applicable(cfg, scenario, daemon, host, "", moment)
    return replace(data, verdict=verdict, errors=["a sender failed: host2-s1: connection reset"]).to_dict()


@pytest.mark.usefixtures("fake_compose")
def test_a_container_that_died_first_is_named_in_the_watchers_result(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    states = [
        state("p-generator-2", "generator", 137, 1),
        state("p-watcher-1", "watcher", 3, 4),
        state("p-generator-1", "generator", 0, 5),
    ]
    results = tmp_path / "results"
    assert run_ending(monkeypatch, results, states, watcher_result("loss")) == EXIT_CODES["error"]
    [path] = results.glob("*.json")
    written = result.read(path)
    assert written.verdict == "error"
    assert written.errors == [
        "containers that ended before the watcher (docker inspect): p-generator-2 exited with code 137 "
        "(SIGKILL) at 05:50:01.500 UTC",
        "a sender failed: host2-s1: connection reset",
    ]


@pytest.mark.usefixtures("fake_compose")
def test_a_clean_run_keeps_the_watchers_result_as_it_is(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    states = [state("p-watcher-1", "watcher", 0, 4), state("p-generator-1", "generator", 0, 5)]
    results = tmp_path / "results"
    data = watcher_result("pass")
    assert run_ending(monkeypatch, results, states, data) == EXIT_CODES["pass"]
    [path] = results.glob("*.json")
    assert json.loads(path.read_text()) == data
