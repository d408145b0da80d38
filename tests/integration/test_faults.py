"""When something dies mid-run, real containers: the daemon's container killed, a generator's container killed,
and the daemon killed by the kernel for memory. Each run still ends in a result that names what happened,
through `syslogbench run` (host/benchmark.py), which adds how each container ended. The faults are driven
from here with the Docker CLI; no container gets the Docker socket."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from syslogbench.contract import EXIT_CODES
from syslogbench.host import benchmark, profiles
from syslogbench.host.compose import Compose
from syslogbench.model import result as model
from syslogbench.rig.watcher import fault
from tests.integration.conftest import PROJECT

PROFILE = profiles.resolve("rsyslog8")
# tcp-rate paces each sender at 1,000 msg/s: 2 x 2 senders x 20,000 messages keep sending for 20 s, so a
# kill 2 s after the start signal lands mid-run whatever the machine's speed.
PACED = {
    "SCENARIO": "tcp-rate",
    "HOSTS": "2",
    "SENDERS_PER_HOST": "2",
    "MESSAGES_PER_SENDER": "20000",
    "RUN_TIMEOUT": "120",
}
START_WAIT_S = 90  # images are built; rendering and connecting take a few seconds
KILL_AFTER_START_S = 2.0


@pytest.fixture(scope="module")
def rsyslog_built() -> None:
    benchmark.setup([PROFILE.profile])


def container(service: str, index: int = 1) -> str:
    return f"{PROJECT}-{service}-{index}"


def started() -> bool:
    """The watcher has given the start signal (`start` in the control volume, read inside its container)."""
    done = subprocess.run(
        ["docker", "exec", container("watcher"), "test", "-f", "/bench/control/start"], capture_output=True
    )
    return done.returncode == 0


def run_with_fault(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    overrides: dict[str, str],
    inject: Callable[[], None] | None,
) -> tuple[int, model.Result]:
    """`syslogbench run` in a thread; once the start signal is given (plus KILL_AFTER_START_S), inject."""
    monkeypatch.setenv("SYSLOGBENCH_PROJECT", PROJECT)
    results = tmp_path / "results"
    runner = Compose(PROFILE.profile, PROJECT)
    runner.down({}, stop_s=5, volumes=True, quiet=True)
    codes: list[int] = []

    def run() -> None:
        codes.append(benchmark.run(PROFILE.profile, overrides, results, build=False, show=lambda path: None))

    thread = threading.Thread(target=run)
    thread.start()
    try:
        if inject is not None:
            deadline = time.monotonic() + START_WAIT_S
            while not started():
                assert thread.is_alive() and time.monotonic() < deadline, (
                    "the run never gave the start signal"
                )
                time.sleep(0.2)
            time.sleep(KILL_AFTER_START_S)
            inject()
        thread.join(timeout=300)
        assert not thread.is_alive(), "syslogbench run did not end within 300 s"
    finally:
        runner.down({}, stop_s=5, volumes=True, quiet=True)
    files = sorted(results.glob("*.json"))
    assert len(files) == 1, files
    return codes[0], model.read(files[0])


def docker_kill(name: str) -> Callable[[], None]:
    return lambda: subprocess.run(["docker", "kill", name], check=True, capture_output=True)


def assert_named_first(result: model.Result, name: str) -> None:
    """The host's line comes first and names the killed container, with SIGKILL's code."""
    first = result.errors[0]
    assert first.startswith("containers that ended before the watcher (docker inspect): "), result.errors
    assert first.split(": ", 1)[1].startswith(f"{name} exited with code 137 (SIGKILL)"), result.errors


def senders_received(result: model.Result) -> int:
    return sum(sender.received for sender in result.senders)


def test_the_daemon_container_killed_mid_run_leaves_a_result_naming_it(
    rsyslog_built: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon = container(PROFILE.profile)
    code, result = run_with_fault(tmp_path, monkeypatch, PACED, docker_kill(daemon))
    assert code == EXIT_CODES["error"]
    assert result.verdict == "error"
    assert_named_first(result, daemon)
    assert fault.STOPPED in result.errors
    # The kill took the supervisor with it: no exit code from it, so the watcher says so.
    assert any("the daemon's supervisor wrote no exit code" in error for error in result.errors), (
        result.errors
    )
    # What had arrived in 2 s at 4,000 msg/s was reconciled, per sender; nothing near the whole load.
    m = result.messages
    assert m.expected == 4 * 20001
    assert 0 < m.received == senders_received(result) < m.expected, m


def test_a_generator_container_killed_mid_run_leaves_a_result_naming_it(
    rsyslog_built: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    generator = container("generator", 2)
    code, result = run_with_fault(tmp_path, monkeypatch, PACED, docker_kill(generator))
    assert code == EXIT_CODES["error"]
    assert result.verdict == "error"
    assert_named_first(result, generator)
    assert fault.STOPPED in result.errors
    # Its two senders were mid-send when it died: they left no ledger, and the watcher names them.
    missing = [s.id for s in result.senders if s.status.startswith("no ledger")]
    assert len(missing) >= 2, [(s.id, s.status) for s in result.senders]
    assert any(error.startswith("no ledger from ") for error in result.errors), result.errors
    m = result.messages
    assert 0 < m.received == senders_received(result) < m.expected == 4 * 20001, m


def test_the_watcher_killed_leaves_a_result_written_from_outside(
    rsyslog_built: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher = container("watcher")
    code, result = run_with_fault(tmp_path, monkeypatch, PACED, docker_kill(watcher))
    assert code == EXIT_CODES["error"]
    assert result.verdict == "error"
    assert result.errors[0].startswith(
        f"the watcher wrote no result ({watcher} exited with code 137 (SIGKILL)"
    )
    states = result.notes[-1]
    assert states.startswith("containers at the end: ") and f"{container(PROFILE.profile)} exited" in states
    assert (result.daemon.profile, result.messages.received) == (PROFILE.profile, 0)  # nothing measured


def test_the_daemon_killed_for_memory_is_named_with_its_limit(
    rsyslog_built: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Measured on rsyslog 8.2504: 12 MiB cannot hold 2 x 2 x 300,000 messages, the kernel kills it."""
    load = {"HOSTS": "2", "SENDERS_PER_HOST": "2", "MESSAGES_PER_SENDER": "300000", "RUN_TIMEOUT": "120"}
    code, result = run_with_fault(tmp_path, monkeypatch, {**load, "CENTRAL_MEM": "12m"}, None)
    assert code == EXIT_CODES["error"]
    assert result.verdict == "error"
    assert result.errors[0].startswith(
        "the daemon was killed for memory: limit 12 MiB (CENTRAL_MEM=12m), peak 12 MiB"
    ), result.errors
    assert result.daemon.exit_code == 137
    assert result.memory.peak_bytes == 12 * 2**20
