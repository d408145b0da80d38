"""The fault campaign's logic (host/faults.py) without Docker: the draw, and the invariants checked against
the campaign's own record of what it did. The real faults run in tests/integration/test_faults.py."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from syslogbench.host import benchmark, faults, profiles
from syslogbench.model import machine, result, scenarios, settings

ROOT = Path(__file__).resolve().parents[2]
TARGET = faults.Target("p-faults", "rsyslog-8.2504", 2)


def test_nine_runs_cover_every_kind_once_and_the_seed_decides() -> None:
    drawn = faults.plan(9, 7, ["rsyslog8", "syslog-ng"])
    assert sorted(kind.name for _, kind in drawn) == sorted(faults.KINDS)
    assert {profile for profile, _ in drawn} == {"rsyslog8", "syslog-ng"}
    assert faults.plan(9, 7, ["rsyslog8", "syslog-ng"]) == drawn
    assert faults.plan(9, 8, ["rsyslog8", "syslog-ng"]) != drawn


def test_a_kind_the_profile_cannot_run_is_drawn_again() -> None:
    """The baseline has no relay: the last hop's kill is never drawn for it."""
    drawn = faults.plan(30, 1, ["baseline"])
    assert len(drawn) == 30
    assert "lasthop-kill" not in {kind.name for _, kind in drawn}


def test_injections_name_compose_containers() -> None:
    rng = random.Random(1)
    assert faults.KINDS["daemon-kill"].inject(TARGET, rng) == (
        ["docker", "kill", "p-faults-rsyslog-8.2504-1"],
        "p-faults-rsyslog-8.2504-1",
    )
    command, hit = faults.KINDS["generator-disconnect"].inject(TARGET, rng)
    assert hit in ("p-faults-generator-1", "p-faults-generator-2")
    assert command == ["docker", "network", "disconnect", "p-faults_bench", hit]
    assert faults.KINDS["watcher-sigterm"].inject(TARGET, rng)[0] == [
        "docker", "kill", "-s", "TERM", "p-faults-watcher-1",
    ]  # fmt: skip
    assert faults.KINDS["daemon-sigkill"].inject(TARGET, rng)[0][:3] == [
        "docker",
        "exec",
        "p-faults-rsyslog-8.2504-1",
    ]


def written(tmp_path: Path, verdict: str, errors: list[str], lost: int = 0) -> Path:
    """A result file as a run writes it, through the one result model."""
    cfg = settings.from_env({**settings.read_env_file(ROOT / ".env"), **faults.PACED, "RUN_TIMEOUT": "45"})
    scenario = scenarios.load(cfg.scenario)
    daemon = benchmark.daemon_of(profiles.resolve("rsyslog8"))
    empty = result.not_applicable(cfg, scenario, daemon, machine.host_facts(), "", datetime.now(UTC))
    messages = replace(empty.messages, expected=40004, received=40004 - lost, lost=lost)
    data = replace(empty, verdict=verdict, errors=errors, messages=messages).to_dict()
    run_dir = tmp_path / "run001"
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / f"{data['run_id']}.json"
    path.write_text(json.dumps(data))
    return run_dir


@pytest.fixture
def nothing_left(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    left: list[str] = []
    monkeypatch.setattr(faults, "leftovers", lambda project: left)
    return left


def checked(run_dir: Path, kind: str, injected: str = "docker kill x", hung: bool = False) -> faults.Outcome:
    hit = "p-faults-rsyslog-8.2504-1"
    return faults.check(
        1, "rsyslog-8.2504", faults.KINDS[kind], TARGET, run_dir, 2.0, injected, hit, 30.0, 885, [3], hung
    )


def test_a_result_that_names_the_fault_keeps_every_invariant(tmp_path: Path, nothing_left: list[str]) -> None:
    line = "containers that ended before the watcher (docker inspect): p-faults-rsyslog-8.2504-1 exited with code 137 (SIGKILL)"
    outcome = checked(written(tmp_path, "error", [line], lost=100), "daemon-kill")
    assert outcome.problems == []
    assert (outcome.verdict, outcome.lost, outcome.said) == ("error", 100, [line])
    assert faults.tally([outcome]) == {"runs": 1, "missed": 0, **dict.fromkeys(faults.COUNTED, 0)}


def test_a_pass_after_a_fault_is_false_and_unnamed(tmp_path: Path, nothing_left: list[str]) -> None:
    outcome = checked(written(tmp_path, "pass", []), "daemon-kill")
    assert [p.split(":")[0] for p in outcome.problems] == ["unnamed", "false_pass"]
    counts = faults.tally([outcome])
    assert (counts["unnamed"], counts["false_pass"], counts["no_result"]) == (1, 1, 0)


def test_a_pass_with_messages_lost_is_false_even_when_nothing_landed(
    tmp_path: Path, nothing_left: list[str]
) -> None:
    outcome = checked(
        written(tmp_path, "pass", [], lost=1), "daemon-kill", injected="not injected: the run had ended"
    )
    assert [p.split(":")[0] for p in outcome.problems] == ["false_pass"]


def test_a_fault_that_never_landed_is_missed_not_unnamed(tmp_path: Path, nothing_left: list[str]) -> None:
    """The run had ended before the moment came: a clean pass, counted as missed (the kind not exercised)."""
    outcome = checked(
        written(tmp_path, "pass", []), "lasthop-kill", injected="not injected: docker kill x failed"
    )
    assert outcome.problems == []
    assert faults.tally([outcome])["missed"] == 1


def test_the_last_hop_is_killed_within_its_pause() -> None:
    assert faults.KINDS["lasthop-kill"].window == (0.5, 4.5)
    assert faults.KINDS["lasthop-kill"].load["SCENARIO"] == "relay-pause"
    assert scenarios.load("relay-pause").relay_target == "pause"


def test_no_result_a_hang_and_leftovers_are_each_counted(
    tmp_path: Path, nothing_left: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    nothing_left.append("p-faults-watcher-1")
    monkeypatch.setattr(faults.Compose, "down", lambda self, *args, **kwargs: None)
    (tmp_path / "run001").mkdir()
    outcome = checked(tmp_path / "run001", "daemon-kill", hung=True)
    assert faults.tally([outcome]) == {
        "runs": 1, "missed": 0, "hangs": 1, "no_result": 1, "unnamed": 0, "false_pass": 0, "leftover_containers": 1,
    }  # fmt: skip


def test_an_unreadable_result_is_no_result(tmp_path: Path, nothing_left: list[str]) -> None:
    (tmp_path / "run001").mkdir()
    (tmp_path / "run001" / "x.json").write_text('{"schema_version": 2}')
    outcome = checked(tmp_path / "run001", "daemon-kill")
    assert [p.split(":")[0] for p in outcome.problems] == ["no_result"]


def test_zero_runs_is_refused_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(settings.SettingsError, match="--runs 0: give at least 1"):
        faults.campaign(0, 1, ["rsyslog8"], tmp_path)
    with pytest.raises(profiles.ProfileError):
        faults.campaign(1, 1, ["nosuch"], tmp_path)
    assert not (tmp_path / "faults").exists()


def test_the_summary_of_a_campaign_file(tmp_path: Path) -> None:
    entry = {"fault": "daemon-kill", "verdict": "error", "moment_s": 2.5, "injected": "docker kill x",
             "problems": [], "elapsed_s": 26.0, "bound_s": 885}  # fmt: skip
    missed = {
        **entry,
        "verdict": "pass",
        "injected": "not injected: the run had ended",
        "problems": ["unnamed: x"],
    }
    data = {
        "profiles": ["rsyslog-8.2504"],
        "seed": 3,
        "runs": 2,
        "missed": 1,
        **dict.fromkeys(faults.COUNTED, 0),
    }
    path = tmp_path / "c.json"
    path.write_text(json.dumps({**data, "unnamed": 1, "entries": [entry, missed]}))
    lines = faults.summary(path).splitlines()
    assert lines[2] == "| `daemon-kill` | 2 | error 1, pass 1 | 1 of 2 | 1 | 26.0 s (885 s) |"
    assert lines[-1] == (
        "c.json: runs 2, hangs 0, no_result 0, unnamed 1, false_pass 0, leftover_containers 0, missed 1; "
        "profiles rsyslog-8.2504, seed 3."
    )
