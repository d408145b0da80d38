"""The fault campaign's logic (host/faults.py, host/faultkinds.py) without Docker: the draw, and the invariants
checked against the campaign's own record of what it did. The real faults run in tests/integration/test_faults.py."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from syslogbench import contract
from syslogbench.host import benchmark, cli, events, faultkinds, faults, onehost, profiles
from syslogbench.model import machine, result, scenarios, settings

ROOT = Path(__file__).resolve().parents[2]
TARGET = faultkinds.Target("p-faults", "rsyslog-8.2504", 2)


def test_nine_runs_cover_every_kind_once_and_the_seed_decides() -> None:
    drawn = faultkinds.draw(9, 7, ["rsyslog8", "syslog-ng"])
    assert sorted(kind.name for _, kind in drawn) == sorted(faultkinds.KINDS)
    assert {profile for profile, _ in drawn} == {"rsyslog8", "syslog-ng"}
    assert faultkinds.draw(9, 7, ["rsyslog8", "syslog-ng"]) == drawn
    assert faultkinds.draw(9, 8, ["rsyslog8", "syslog-ng"]) != drawn


def test_a_kind_the_profile_cannot_run_is_drawn_again() -> None:
    """The baseline has no relay: the last hop's kill is never drawn for it."""
    drawn = faultkinds.draw(30, 1, ["baseline"])
    assert len(drawn) == 30
    assert "lasthop-kill" not in {kind.name for _, kind in drawn}


def test_injections_name_compose_containers() -> None:
    rng = random.Random(1)
    assert faultkinds.KINDS["daemon-kill"].inject(TARGET, rng) == (
        ["docker", "kill", "p-faults-rsyslog-8.2504-1"],
        "p-faults-rsyslog-8.2504-1",
    )
    command, hit = faultkinds.KINDS["generator-disconnect"].inject(TARGET, rng)
    assert hit in ("p-faults-generator-1", "p-faults-generator-2")
    assert command == ["docker", "network", "disconnect", "p-faults_bench", hit]
    assert faultkinds.KINDS["watcher-sigterm"].inject(TARGET, rng)[0] == [
        "docker", "kill", "-s", "TERM", "p-faults-watcher-1",
    ]  # fmt: skip
    assert faultkinds.KINDS["daemon-sigkill"].inject(TARGET, rng)[0][:3] == [
        "docker",
        "exec",
        "p-faults-rsyslog-8.2504-1",
    ]


def written(tmp_path: Path, verdict: str, errors: list[str], lost: int = 0) -> Path:
    """A result file as a run writes it, through the one result model."""
    cfg = settings.from_env(
        {**settings.read_env_file(ROOT / ".env"), **faultkinds.PACED, "RUN_TIMEOUT": "45"}
    )
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


DAEMON = "p-faults-rsyslog-8.2504-1"
BEGAN = 1_700_000_000.0


def event(action: str, name: str = DAEMON, detail: str = "", at: float = 3.0) -> events.Event:
    return events.Event("container", action, BEGAN + at, "id-" + name, name, detail)


# The engine saw the daemon's container SIGKILLed, and then it ended: what a landed daemon-kill leaves.
KILLED = faultkinds.Seen(BEGAN, [event("kill", detail="9"), event("die", detail="137", at=3.1)])


def checked(
    run_dir: Path,
    kind: str,
    injected: str = "docker kill x",
    hung: bool = False,
    seen: faultkinds.Seen = KILLED,
    hit: str = DAEMON,
) -> faults.Outcome:
    return faults.judge(
        1,
        "rsyslog-8.2504",
        faultkinds.KINDS[kind],
        TARGET,
        run_dir,
        2.0,
        injected,
        hit,
        30.0,
        885,
        [3],
        hung,
        seen,
    )


def test_a_result_that_names_the_fault_keeps_every_invariant(tmp_path: Path, nothing_left: list[str]) -> None:
    line = "containers that ended before the watcher (docker inspect): p-faults-rsyslog-8.2504-1 exited with code 137 (SIGKILL)"
    outcome = checked(written(tmp_path, "error", [line], lost=100), "daemon-kill")
    assert outcome.problems == []
    assert (outcome.verdict, outcome.lost, outcome.said) == ("error", 100, [line])
    assert outcome.landed == f"docker events: {DAEMON} was sent SIGKILL at +3.0 s"
    assert faults.tally([outcome]) == {"runs": 1, **dict.fromkeys(faults.COUNTED, 0)}


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
    assert [p.split(":")[0] for p in outcome.problems] == ["missed", "false_pass"]


def test_a_fault_that_never_landed_is_missed_not_unnamed(tmp_path: Path, nothing_left: list[str]) -> None:
    """The run had ended before the moment came: a clean pass, counted as missed (the kind not exercised)."""
    outcome = checked(
        written(tmp_path, "pass", []), "lasthop-kill", injected="not injected: docker kill x failed"
    )
    assert outcome.problems == ["missed: not injected: docker kill x failed"]
    assert outcome.landed == ""
    assert faults.tally([outcome])["missed"] == 1


def test_an_oom_the_kernel_never_made_is_missed_not_a_false_pass(
    tmp_path: Path, nothing_left: list[str]
) -> None:
    """The daemon kept within its limit (syslog-ng 3.38 ran 1,200,004 messages within 6 MiB): no OOM event,
    so the run's pass says nothing about the fault, and the campaign counts it as missed."""
    outcome = checked(
        written(tmp_path, "pass", []), "daemon-oom", injected="from the start (settings or volume)",
        seen=faultkinds.Seen(BEGAN, [event("die", detail="0", at=40.0)]),
    )  # fmt: skip
    assert outcome.problems == [
        "missed: no sign that it landed: the engine's oom event for the container hit"
    ]
    assert (faults.tally([outcome])["missed"], faults.tally([outcome])["false_pass"]) == (1, 0)


def test_the_engine_oom_event_in_the_daemon_container_is_the_landing(
    tmp_path: Path, nothing_left: list[str]
) -> None:
    line = "the daemon was killed for memory: limit 12 MiB (CENTRAL_MEM=12m), peak 12 MiB (x)"
    seen = faultkinds.Seen(BEGAN, [event("oom", at=4.2), event("die", detail="143", at=6.0)])
    outcome = checked(written(tmp_path, "error", [line]), "daemon-oom", injected="from the start", seen=seen)
    assert outcome.problems == []
    assert outcome.landed == f"docker events: {DAEMON}: the kernel's OOM killer acted at +4.2 s"


def test_an_event_after_the_run_ended_or_on_another_container_did_not_land(
    tmp_path: Path, nothing_left: list[str]
) -> None:
    """A kill that came after the first container ended (compose already stopping the run), a SIGTERM where a
    SIGKILL was sent, or the other generator: none is the fault landing."""
    late = faultkinds.Seen(
        BEGAN, [event("die", "p-faults-generator-1", "0", at=2.0), event("kill", detail="9")]
    )
    term = faultkinds.Seen(BEGAN, [event("kill", detail="15")])
    other = faultkinds.Seen(BEGAN, [event("kill", "p-faults-generator-2", "9")])
    for seen, kind, hit in ((late, "daemon-kill", DAEMON), (term, "daemon-kill", DAEMON),
                            (other, "generator-kill", "p-faults-generator-1")):  # fmt: skip
        assert faultkinds.KINDS[kind].landed.find(TARGET, hit, seen) is None, (kind, seen)


def test_each_kind_lands_by_its_own_sign() -> None:
    gen = "p-faults-generator-2"
    network = events.Event("network", "disconnect", BEGAN + 1.5, "id", gen, "p-faults_bench")
    cases = {
        "daemon-pause": (DAEMON, faultkinds.Seen(BEGAN, [event("pause", at=2.0)])),
        "generator-disconnect": (gen, faultkinds.Seen(BEGAN, [network])),
        "watcher-sigterm": (
            "p-faults-watcher-1",
            faultkinds.Seen(BEGAN, [event("kill", "p-faults-watcher-1", "15")]),
        ),
        "daemon-sigkill": (DAEMON, faultkinds.Seen(BEGAN, printed="17 (rsyslogd)\n")),
        "logs-full": (DAEMON, faultkinds.Seen(BEGAN, logs_free=4096)),
    }
    landed = {
        name: faultkinds.KINDS[name].landed.find(TARGET, hit, seen) for name, (hit, seen) in cases.items()
    }
    assert landed == {
        "daemon-pause": f"docker events: {DAEMON} was paused at +2.0 s",
        "generator-disconnect": f"docker events: {gen} was disconnected from network p-faults_bench at +1.5 s",
        "watcher-sigterm": "docker events: p-faults-watcher-1 was sent SIGTERM at +3.0 s",
        "daemon-sigkill": f"killed in {DAEMON}: 17 (rsyslogd)",
        "logs-full": "the logs volume had 4,096 bytes free (stat -f in p-faults-watcher-1)",
    }
    # Nothing printed by the kill, or room left on the volume: not landed.
    assert (
        faultkinds.KINDS["daemon-sigkill"].landed.find(TARGET, DAEMON, faultkinds.Seen(BEGAN, printed=""))
        is None
    )
    roomy = faultkinds.Seen(BEGAN, logs_free=contract.LOGS_FULL_BELOW_BYTES)
    assert faultkinds.KINDS["logs-full"].landed.find(TARGET, DAEMON, roomy) is None


def test_the_oom_memory_comes_from_each_manifest_and_a_profile_without_it_gets_no_oom_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    debian = [p for p in profiles.all_profiles() if p.suite]
    assert all(p.oom_memory for p in debian if p.daemon in ("rsyslog", "syslog-ng")), [
        (p.profile, p.oom_memory) for p in debian
    ]
    bare = replace(profiles.resolve("rsyslog8"), oom_memory="")
    monkeypatch.setattr(profiles, "resolve", lambda name: bare)
    assert not faultkinds.supports("rsyslog8", faultkinds.KINDS["daemon-oom"])
    assert faultkinds.supports("rsyslog8", faultkinds.KINDS["daemon-kill"])


def test_the_last_hop_is_killed_within_its_pause() -> None:
    assert faultkinds.KINDS["lasthop-kill"].window == (0.5, 4.5)
    assert faultkinds.KINDS["lasthop-kill"].load["SCENARIO"] == "relay-pause"
    assert scenarios.load("relay-pause").relay_target == "pause"


def test_no_result_a_hang_and_leftovers_are_each_counted(
    tmp_path: Path, nothing_left: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    nothing_left.append("p-faults-watcher-1")
    monkeypatch.setattr(faults.Compose, "down", lambda self, *args, **kwargs: None)
    (tmp_path / "run001").mkdir()
    outcome = checked(tmp_path / "run001", "daemon-kill", hung=True)
    assert faults.tally([outcome]) == {
        "runs": 1, "hangs": 1, "no_result": 1, "unnamed": 0, "false_pass": 0, "leftover_containers": 1, "missed": 0,
    }  # fmt: skip


def test_an_unreadable_result_is_no_result(tmp_path: Path, nothing_left: list[str]) -> None:
    (tmp_path / "run001").mkdir()
    (tmp_path / "run001" / "x.json").write_text('{"schema_version": 2}')
    outcome = checked(tmp_path / "run001", "daemon-kill")
    assert [p.split(":")[0] for p in outcome.problems] == ["no_result"]


def test_zero_runs_is_refused_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(settings.SettingsError, match="--runs 0: give at least 1"):
        faults.campaign(0, 1, ["rsyslog8"], tmp_path, onehost.OneHost())
    with pytest.raises(profiles.ProfileError):
        faults.campaign(1, 1, ["nosuch"], tmp_path, onehost.OneHost())
    assert not (tmp_path / "faults").exists()


def campaign_file(tmp_path: Path, entries: list[dict], **counts: int) -> Path:
    data = {
        "profiles": ["rsyslog-8.2504"],
        "seed": 3,
        "runs": len(entries),
        **dict.fromkeys(faults.COUNTED, 0),
    }
    path = tmp_path / "c.json"
    path.write_text(json.dumps({**data, **counts, "entries": entries}))
    return path


ENTRY = {"fault": "daemon-kill", "verdict": "error", "moment_s": 2.5, "injected": "docker kill x",
         "problems": [], "elapsed_s": 26.0, "bound_s": 885, "landed": "docker events: x was sent SIGKILL"}  # fmt: skip


def test_the_summary_of_a_campaign_file(tmp_path: Path) -> None:
    missed = {
        **ENTRY,
        "verdict": "pass",
        "injected": "not injected: the run had ended",
        "problems": ["missed: not injected: the run had ended"],
        "landed": "",
    }
    lines = faults.summary(campaign_file(tmp_path, [ENTRY, missed], missed=1)).splitlines()
    assert lines[0] == "| fault | runs | verdicts | landed | named | longest run (bound) |"
    assert lines[2] == "| `daemon-kill` | 2 | error 1, pass 1 | 1 of 2 | 2 | 26.0 s (885 s) |"
    assert lines[-1] == (
        "c.json: runs 2, hangs 0, no_result 0, unnamed 0, false_pass 0, leftover_containers 0, missed 1; "
        "profiles rsyslog-8.2504, seed 3."
    )


def test_the_summary_of_a_campaign_from_before_landing_was_checked(tmp_path: Path) -> None:
    """The committed campaigns of 2026-11-24 have no `landed`: their table says so rather than guess."""
    old = {key: value for key, value in ENTRY.items() if key != "landed"}
    oom = {**old, "fault": "daemon-oom", "moment_s": None, "injected": "from the start (settings or volume)"}
    lines = faults.summary(campaign_file(tmp_path, [old, oom])).splitlines()
    assert lines[2] == "| `daemon-kill` | 1 | error 1 | injected 1 of 1 (not checked) | 1 | 26.0 s (885 s) |"
    assert lines[3] == "| `daemon-oom` | 1 | error 1 | from the start (not checked) | 1 | 26.0 s (885 s) |"
    for committed in sorted((ROOT / "results" / "faults").glob("*.json")):
        assert faults.summary(committed).splitlines()[-1].startswith(f"{committed.name}: runs ")


def summary_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The exit code and all the command printed."""
    code = cli.main(["faults", "--summary", *argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_summary_of_a_missing_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = summary_error([str(tmp_path / "nope.json")], capsys)
    assert (code, said) == (
        2,
        f"syslogbench: error: faults --summary {tmp_path}/nope.json: no such file; give a campaign file, "
        "results/faults/<id>.json\n",
    )


def test_the_summary_of_a_run_result_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = next(written(tmp_path, "pass", []).glob("*.json"))
    run_id = json.loads(path.read_text())["run_id"]
    code, said = summary_error([str(path)], capsys)
    assert (code, said) == (
        2,
        f"syslogbench: error: faults --summary {path}: this is the result of one run ({run_id}), not a "
        "campaign file: give results/faults/<id>.json (the runs' own results are in results/faults/<id>/)\n",
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "not JSON; give a campaign file"),
        (
            '{"entries": [{"fault": "daemon-kill"}], "profiles": [], "seed": 1}',
            "not a campaign file (no runs'",
        ),
        ("[1, 2]", "not a campaign file (no runs'"),
    ],
)
def test_the_summary_of_anything_else_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    code, said = summary_error([str(path)], capsys)
    assert code == 2 and said.count("\n") == 1 and says in said, said
    code, said = summary_error([str(tmp_path)], capsys)  # a directory
    assert code == 2 and said.count("\n") == 1 and "cannot be read" in said, said
