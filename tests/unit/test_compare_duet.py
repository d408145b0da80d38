"""compare --duet: each window of every side's daemon at once becomes a run; CPU per message and p99 are
paired by window, so a drift of the machine under both sides leaves the ratio where it was; bad input is one
line before any container."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from syslogbench.host import cli
from syslogbench.host.capacity import duet
from syslogbench.model import capacity
from syslogbench.model import compare as model


def trial(**given: object) -> capacity.Trial:
    values: dict[str, object] = dict(
        number=2, offered_msgs_per_s=20_000.0, duration_s=10.0, intended=200_000, sent=200_000,
        received=200_000, lost=0, late=0, unsent=0, duplicated=0, loss_ratio=0.0, achieved_msgs_per_s=19_990.0,
        sender_bound=False, latency_ms={"p50": 0.3, "p99": 4.5, "max": 9.0}, sample_s=0.1, stale_lines=0,
        daemon_cpu_s=1.0, watcher_cpu_s=0.5, udp_rcvbuf_errors=None, udp_in_errors=None,
        daemon_cores_busy_s=4.0, daemon_cores_idle_s=6.0,
    )  # fmt: skip
    return capacity.trial_from_dict({**values, **given})


def test_a_window_where_every_message_arrived_in_time_passes_with_its_cpu_per_message_and_p99() -> None:
    run = duet.window_run("rsyslog-8.2504", 3, trial())
    assert (run.verdict, run.round, run.cpu_us_per_msg, run.p99_ms, run.core_busy) == (
        "pass",
        3,
        5.0,
        4.5,
        0.4,
    )
    assert run.msgs_per_s == 20_000.0 and run.why is None


def test_a_window_with_lost_or_late_messages_is_not_paired_and_says_the_rate_is_too_high() -> None:
    run = duet.window_run("a", 1, trial(received=199_000, lost=400, late=600))
    assert run.verdict == "loss" and "400 lost and 600 late of 200,000" in (run.why or "")
    unsent = duet.window_run("a", 1, trial(sent=150_000))
    assert unsent.verdict == "loss" and "the senders sent 150,000 of 200,000" in (unsent.why or "")
    no_cpu = duet.window_run("a", 1, trial(daemon_cpu_s=None))
    assert no_cpu.verdict == "loss" and no_cpu.cpu_us_per_msg is None


def test_a_window_on_a_full_core_is_not_paired_since_each_daemons_cpu_was_its_share() -> None:
    run = duet.window_run("a", 1, trial(daemon_cores_busy_s=9.5, daemon_cores_idle_s=0.5))
    assert run.verdict == "core full" and run.core_busy == 0.95 and "95% busy" in (run.why or "")
    late = duet.window_run("a", 1, trial(daemon_cores_busy_s=9.5, daemon_cores_idle_s=0.5, late=10))
    assert late.verdict == "loss" and "give a lower rate" in (late.why or "")
    assert duet.window_run("a", 1, trial(daemon_cores_busy_s=8.9, daemon_cores_idle_s=1.1)).verdict == "pass"


def test_cpu_per_message_holds_its_ratio_where_the_core_drifts_under_both_sides() -> None:
    drift = [
        1.0,
        0.7,
        1.3,
        0.85,
        1.15,
        0.6,
    ]  # the core's speed, window by window: CPU per message moves inversely
    runs = []
    for number, speed in enumerate(drift, 1):
        for side, cpu in (("A", 1.0), ("A (A/A)", 1.0), ("B", 2.0)):
            runs.append(duet.window_run(side, number, trial(daemon_cpu_s=cpu / speed)))
    judged = model.judge(runs, ["A", "B"], model.MEASURES["duet"])
    b, control = judged.ratios["B"]["cpu_us_per_msg"], judged.ratios["A (A/A)"]["cpu_us_per_msg"]
    assert (b.pairs, b.verdict) == (6, "differs")  # CPU per message is kept to 1 ns: the ratio to 1e-4
    assert [b.value, b.low, b.high] == pytest.approx([2.0, 2.0, 2.0], abs=2e-4)
    assert (control.value, control.verdict) == (1.0, "not told apart")
    absolute = [r.cpu_us_per_msg for r in runs if r.side == "B"]
    assert max(absolute) / min(absolute) > 2  # while the absolute figure moved more than twofold
    assert judged.ratios["B"]["p99_ms"].value == 1.0


def test_a_side_that_stopped_early_has_its_missing_windows_as_errors_with_why() -> None:
    lanes = {"A": duet.Lane([trial(), trial()]), "B": duet.Lane([trial()], "TrialFailed: a sender failed")}
    runs = duet.runs_of(lanes, 2)
    assert [(r.side, r.round, r.verdict) for r in runs] == [("A", 1, "pass"), ("A", 2, "pass"), ("B", 1, "pass"),
                                                             ("B", 2, "error")]  # fmt: skip
    assert runs[-1].why == "TrialFailed: a sender failed"


def test_each_sides_window_trials_are_kept_whole_beside_the_comparison(tmp_path: Path) -> None:
    duet.keep({"rsyslog-8.2504@tuned (A/A)": duet.Lane([trial()])}, tmp_path)
    kept = json.loads((tmp_path / "windows" / "rsyslog-8-2504-tuned-aa.json").read_text())
    assert kept["side"] == "rsyslog-8.2504@tuned (A/A)" and kept["trials"][0]["received"] == 200_000


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--duet", "50"], "--duet 50: give each side's fixed rate in msg/s, at least RATE_MIN=100"),
        (["--duet", "nan"], "--duet nan: give each side's fixed rate in msg/s, at least RATE_MIN=100"),
        (["--duet", "5000", "RATE_MAX=1000"], "--duet 5000 is above RATE_MAX=1000: raise RATE_MAX"),
        (
            ["--duet", "500", "--rounds", "60"],
            "--rounds 60 windows of TRIAL_FINAL=10 s take about 1,028 s, beyond SEARCH_MAX=600 s",
        ),  # fmt: skip
        (["--duet", "500", "--capacity"], "give --capacity or --duet RATE, not both"),
    ],
)
def test_bad_duet_input_is_one_line_before_any_container(
    given: list[str], said: str, capsys: pytest.CaptureFixture[str], small_host: None
) -> None:
    argv = ["compare", "--side", "syslog-ng-4.8", "--side", "rsyslog-8.2504", "--rounds", "3", *given]
    assert cli.main(argv) == 2
    out = capsys.readouterr().out
    assert out.startswith(f"syslogbench: error: {said}") and out.count("\n") == 1, out


def test_every_side_runs_in_a_thread_of_its_own_and_the_windows_meet_at_a_barrier(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Docker faked: each side's stack is a function that takes its windows at the shared barrier."""
    met: list[tuple[str, int, int]] = []
    cpu = {"A": 1.0, "B": 2.0, "A (A/A)": 1.0}
    stack = SimpleNamespace(cap=capacity.CapacitySettings())

    def fake(name, chosen, where, rate, windows, barrier, lane, log):  # noqa: ANN001, ANN202
        for window in range(1, windows + 1):
            barrier.wait(5)
            met.append((name, where[1], window))
            lane.trials.append(trial(offered_msgs_per_s=rate, daemon_cpu_s=cpu[name]))
        if name == "B":
            lane.why = "not reached"

    monkeypatch.setattr(duet, "one", fake)
    runs: list[model.Run] = []
    duet.run(dict.fromkeys(cpu, stack), tmp_path, 20_000.0, 3, print, runs)  # type: ignore[arg-type]
    assert sorted(met) == sorted(
        (name, n, w) for n, name in enumerate(["A", "B", "A (A/A)"], 1) for w in (1, 2, 3)
    )
    assert [w for _, _, w in met] == sorted(
        w for _, _, w in met
    )  # no side starts a window before all ended one
    assert len(runs) == 9 and {r.verdict for r in runs} == {"pass"}
    assert [r.cpu_us_per_msg for r in runs if r.side == "B"] == [10.0] * 3
    assert sorted(p.name for p in (tmp_path / "windows").iterdir()) == ["a-aa.json", "a.json", "b.json"]
