"""Every fault kind of the campaign (host/faults.py) once, with real containers: each run still ends in a
result that names what happened, within its bound, with nothing left running. The faults are driven from
here with the Docker CLI; no container gets the Docker socket."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from syslogbench.contract import EXIT_CODES
from syslogbench.host import faultkinds, faults, onehost, profiles, setup
from syslogbench.model import result as model
from syslogbench.rig.watcher import fault
from tests.integration.conftest import PROJECT

PROFILE = profiles.resolve("rsyslog8")
SEED = 7  # the moments (0.5-8 s after the start) and the generator hit are drawn from it
# Not a campaign kind: the watcher itself SIGKILLed, so only the host can say what happened.
WATCHER_KILL = faultkinds.Kind(
    "watcher-kill",
    "`docker kill` of the watcher",
    faultkinds.PACED,
    faultkinds.injector("kill", "watcher"),
    lambda target, hit: f"the watcher wrote no result ({hit} exited with code 137 (SIGKILL)",
    faultkinds.KILLED,
)
# For the faults that end the run in a timeout (nothing more arrives, or a cut generator's senders never
# report): the campaign's RUN_TIMEOUT of 45 s is for any fault on a loaded machine; here the paced load's other
# senders end by 10 s (within 0.5-8 s of the start for the fault). LEDGER_WAIT: what the watcher then waits for
# the ledgers of senders that never report, 60 s by default.
ENDS_IN_TIMEOUT = {"RUN_TIMEOUT": "30", "LEDGER_WAIT": "10"}


@pytest.fixture(scope="module")
def rsyslog_built(fingerprint_once: None) -> None:
    """Its images, and the session's fingerprint for every run (conftest.py)."""
    setup.setup([PROFILE.profile])


def fault_run(
    kind: faultkinds.Kind, tmp_path: Path, waits: dict[str, str] | None = None
) -> tuple[faults.Outcome, model.Result]:
    """One run of the campaign with this fault; it landed, every invariant held, and its one result."""
    outcome = faults.one_run(
        1, PROFILE.profile, kind, random.Random(SEED), tmp_path, PROJECT, onehost.OneHost(), waits
    )
    assert outcome.problems == [], outcome
    assert outcome.landed, outcome
    assert outcome.elapsed_s <= outcome.bound_s
    files = sorted((tmp_path / "run001").glob("*.json"))
    assert len(files) == 1, files
    return outcome, model.read(files[0])


def received(result: model.Result) -> int:
    assert result.messages.received == sum(sender.received for sender in result.senders)
    return result.messages.received


def engine_line(result: model.Result) -> str:
    return next(error for error in result.errors if error.startswith("docker events before any container"))


def test_the_daemon_container_killed_mid_run_leaves_a_result_naming_it(
    rsyslog_built: None, tmp_path: Path
) -> None:
    outcome, result = fault_run(faultkinds.KINDS["daemon-kill"], tmp_path)
    daemon = f"{PROJECT}-{PROFILE.profile}-1"
    assert (outcome.hit, outcome.exit_code, result.verdict) == (daemon, EXIT_CODES["error"], "error")
    # The host's line comes first and names the killed container, with SIGKILL's code.
    assert result.errors[0].startswith(
        f"containers that ended before the watcher (docker inspect): {daemon} exited with code 137 (SIGKILL)"
    ), result.errors
    assert f"{daemon} was sent SIGKILL at +" in engine_line(result)
    assert fault.STOPPED in result.errors
    assert any("the daemon's supervisor wrote no exit code" in error for error in result.errors)
    # What had arrived was reconciled, per sender; nothing near the whole load.
    assert result.messages.expected == 4 * 10001
    assert 0 < received(result) < result.messages.expected


def test_a_generator_container_killed_mid_run_leaves_a_result_naming_it(
    rsyslog_built: None, tmp_path: Path
) -> None:
    outcome, result = fault_run(faultkinds.KINDS["generator-kill"], tmp_path)
    assert outcome.hit.startswith(f"{PROJECT}-generator-")
    assert (outcome.exit_code, result.verdict) == (EXIT_CODES["error"], "error")
    assert result.errors[0].split(": ", 1)[1].startswith(f"{outcome.hit} exited with code 137 (SIGKILL)")
    # Its two senders were mid-send when it died: they left no ledger, and the watcher names them. (The other
    # generator's may or may not have reported before compose stopped the run.)
    missing = [s.id for s in result.senders if s.status.startswith("no ledger")]
    assert len(missing) >= 2, [(s.id, s.status) for s in result.senders]
    assert any(error.startswith("no ledger from ") for error in result.errors), result.errors
    assert 0 < received(result) < result.messages.expected == 4 * 10001


def test_the_watcher_killed_leaves_a_result_written_from_outside(rsyslog_built: None, tmp_path: Path) -> None:
    outcome, result = fault_run(WATCHER_KILL, tmp_path)
    assert (outcome.exit_code, result.verdict) == (EXIT_CODES["error"], "error")
    states = result.notes[-1]
    assert states.startswith("containers at the end: ") and f"{PROJECT}-{PROFILE.profile}-1 exited" in states
    assert (result.daemon.profile, result.messages.received) == (PROFILE.profile, 0)  # nothing measured


def test_the_daemon_killed_for_memory_is_named_with_its_limit(rsyslog_built: None, tmp_path: Path) -> None:
    """The manifest's oom_memory cannot hold the campaign's OOM load (docs/faults.md): the kernel kills it."""
    outcome, result = fault_run(faultkinds.KINDS["daemon-oom"], tmp_path)
    assert (outcome.exit_code, result.verdict) == (EXIT_CODES["error"], "error")
    assert outcome.landed.startswith(f"docker events: {PROJECT}-{PROFILE.profile}-1: the kernel's OOM killer")
    # The engine's OOM event (the host's line, first) and the watcher's line with the limit and the peak.
    assert " the kernel's OOM killer acted at +" in engine_line(result)
    mib = int(PROFILE.oom_memory.removesuffix("m"))
    assert any(
        error.startswith(
            f"the daemon was killed for memory: limit {mib} MiB (CENTRAL_MEM={PROFILE.oom_memory}), peak {mib} MiB"
        )
        for error in result.errors
    ), result.errors
    assert result.daemon.exit_code == 137
    # At the limit: cgroup v1's max_usage_in_bytes is seen a few pages above it (12,599,296 bytes at 12m).
    assert result.memory.peak_bytes is not None and result.memory.peak_bytes // 2**20 == mib


def test_the_daemon_process_sigkilled_in_its_container(rsyslog_built: None, tmp_path: Path) -> None:
    """The supervisor lives on and reports the code; no container ended, so the engine saw nothing."""
    outcome, result = fault_run(faultkinds.KINDS["daemon-sigkill"], tmp_path)
    assert (outcome.exit_code, result.verdict) == (EXIT_CODES["error"], "error")
    assert result.errors[0].startswith("the daemon exited with code 137 (SIGKILL)"), result.errors
    assert result.daemon.exit_code == 137
    assert 0 < received(result) < result.messages.expected


def test_the_daemon_paused_and_never_resumed(rsyslog_built: None, tmp_path: Path) -> None:
    """Nothing arrives after the pause: the watcher's timeout, and the engine's events name the pause."""
    outcome, result = fault_run(faultkinds.KINDS["daemon-pause"], tmp_path, ENDS_IN_TIMEOUT)
    assert (outcome.exit_code, result.verdict) == (EXIT_CODES["error"], "error")
    assert engine_line(result).endswith(f"{outcome.hit} was still paused when the run ended")
    assert result.end.trigger == "timeout"
    assert any(
        error.startswith("the daemon's supervisor had written no sample for ") for error in result.errors
    )
    assert result.messages.lost > 0 and received(result) + result.messages.lost == result.messages.expected


def test_a_generator_cut_from_the_network(rsyslog_built: None, tmp_path: Path) -> None:
    outcome, result = fault_run(faultkinds.KINDS["generator-disconnect"], tmp_path, ENDS_IN_TIMEOUT)
    assert (outcome.exit_code, result.verdict) == (EXIT_CODES["error"], "error")
    assert f"{outcome.hit} was disconnected from network {PROJECT}_bench" in engine_line(result)
    cut = [s.id for s in result.senders if not s.done_seen]
    assert cut in (["host1-s1", "host1-s2"], ["host2-s1", "host2-s2"]), [
        (s.id, s.status) for s in result.senders
    ]
    assert result.messages.lost > 0


def test_the_last_hop_killed_in_a_relay_run(rsyslog_built: None, tmp_path: Path) -> None:
    outcome, result = fault_run(faultkinds.KINDS["lasthop-kill"], tmp_path)
    assert (outcome.hit, outcome.exit_code, result.verdict) == (
        f"{PROJECT}-lasthop-1",
        EXIT_CODES["error"],
        "error",
    )
    assert result.errors[0].split(": ", 1)[1].startswith(f"{outcome.hit} exited with code 137 (SIGKILL)")
    assert result.scenario.id == "relay-pause"
    assert received(result) < result.messages.expected


def test_the_logs_volume_full(rsyslog_built: None, tmp_path: Path) -> None:
    """A 1 MiB tmpfs cannot hold 40,000 lines: the watcher names the full volume before what it caused."""
    outcome, result = fault_run(faultkinds.KINDS["logs-full"], tmp_path)
    assert result.verdict != "pass" and outcome.exit_code != EXIT_CODES["pass"]
    assert result.errors[0].startswith("the logs volume is full: "), result.errors
    assert result.messages.lost > 0 and received(result) + result.messages.lost == result.messages.expected


def test_the_watcher_sent_sigterm(rsyslog_built: None, tmp_path: Path) -> None:
    outcome, result = fault_run(faultkinds.KINDS["watcher-sigterm"], tmp_path)
    assert (outcome.exit_code, result.verdict) == (EXIT_CODES["error"], "error")
    assert f"{outcome.hit} was sent SIGTERM" in engine_line(result)
    assert fault.STOPPED in result.errors
    assert 0 < received(result) < result.messages.expected
