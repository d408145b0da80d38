"""The capacity search without Docker: its settings, one trial's accounting on the real control channel with
a fake daemon writing the output, the open-loop sender, and MLRsearch against a simulated daemon."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from syslogbench import contract
from syslogbench.host import benchmark, cli, environment, onehost, setup, swarm, swarmdeploy, swarmnodes
from syslogbench.host.capacity import command as capacity_command
from syslogbench.host.capacity import cores, search, searchplan, session
from syslogbench.host.capacity import measurer as measuring
from syslogbench.host.capacity import record as capacity_record
from syslogbench.host.compose import Compose
from syslogbench.model import capacity
from syslogbench.model.capacity import Bound
from syslogbench.model.messages import SenderId, render_line
from syslogbench.model.rigrecord import FailedRecord, SendRecord
from syslogbench.rig import channel, control, trialserver

ROOT = Path(__file__).resolve().parents[2]

# -- bad input: one line, exit 2, before any container ----------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ({"PDR_TARGET": "1"}, "outside [0, 1)"),
        ({"PDR_TARGET": "-0.1"}, "outside [0, 1)"),
        ({"RATE_MIN": "5000", "RATE_MAX": "100"}, "is empty"),
        ({"RATE_MIN": "100", "RATE_MAX": "100"}, "is empty"),
        ({"LATENCY_BOUND": "0"}, "LATENCY_BOUND=0"),
        ({"LATENCY_BOUND": "soon"}, "not a number"),
        ({"DAEMON_CORES": "1.5"}, "give a whole number of cores"),
        ({"DAEMON_CORES": "-1"}, "give a whole number of cores"),
    ],
)
def test_a_capacity_setting_that_cannot_work_is_refused(setting: dict[str, str], says: str) -> None:
    with pytest.raises(capacity.CapacityError, match=None) as refused:
        capacity.split(setting)
    assert says in str(refused.value)


def test_a_refusal_writes_a_large_number_as_it_was_given() -> None:
    """Python's short float format wrote RATE_MIN=1234567 as 1.23457e+06: a value no one typed."""
    with pytest.raises(capacity.CapacityError) as refused:
        capacity.split({"RATE_MIN": "1234567", "RATE_MAX": "1234566"})
    assert "RATE_MIN=1234567 to RATE_MAX=1234566 is empty" in str(refused.value)


def test_the_capacity_settings_leave_the_run_settings_alone() -> None:
    cap, rest = capacity.split({"PDR_TARGET": "0.01", "HOSTS": "1", "LATENCY_BOUND": "0.5"})
    assert (cap.pdr_target, cap.latency_bound_s, rest) == (0.01, 0.5, {"HOSTS": "1"})


@pytest.mark.parametrize(("host_cores", "daemon"), [(1, 0), (2, 1), (3, 1), (8, 4)])
def test_by_default_one_host_gives_the_daemon_half_its_cores_and_records_the_number(
    host_cores: int, daemon: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: host_cores)
    search = searchplan.plan("syslog-ng", {}, onehost.OneHost())
    assert search.cap.daemon_cores == daemon  # the number in force, as the result records it
    assert search.cpu_placement == capacity.placement(daemon, host_cores)
    asked = searchplan.plan("syslog-ng", {"DAEMON_CORES": "0"}, onehost.OneHost())
    assert asked.cap.daemon_cores == 0 and asked.cpu_placement["daemon"] == "any"


@pytest.mark.parametrize(
    ("daemon_cores", "host_cores", "expected"),
    [
        (0, 2, {"daemon": "any", "senders": "any", "watcher": "any"}),
        (1, 2, {"daemon": "1", "senders": "0", "watcher": "0"}),
        (2, 8, {"daemon": "6-7", "senders": "0-5", "watcher": "0-5"}),
        (7, 8, {"daemon": "1-7", "senders": "0", "watcher": "0"}),
    ],
)
def test_daemon_cores_keep_the_rig_off_the_daemons_cores(
    daemon_cores: int, host_cores: int, expected: dict[str, str]
) -> None:
    assert capacity.placement(daemon_cores, host_cores) == expected
    with pytest.raises(capacity.CapacityError, match=f"give at most {host_cores - 1}, or 0 for any core"):
        capacity.placement(host_cores, host_cores)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--profile", "syslog-ng-4.8", "PDR_TARGET=1"], "PDR_TARGET=1 is outside [0, 1)"),
        (["--profile", "syslog-ng-4.8", "RATE_MIN=900", "RATE_MAX=800"], "is empty"),
        (["--profile", "syslog-ng-4.8", "LATENCY_BOUND=0"], "LATENCY_BOUND=0"),
        (["--profile", "rsyslog", "8"], "did you mean rsyslog8?"),
        (["--profile", "rsylog8"], "did you mean rsyslog8?"),
        (["--scenario", "udp", "SCENARIO=tls"], "--scenario udp and SCENARIO=tls name two scenarios"),
        (["MESSAGES_PER_SENDER=5"], "MESSAGES_PER_SENDER: capacity does not use it"),
        (["RUN_TIMEOUT=5"], "RUN_TIMEOUT: capacity does not use it"),
        (["OUTPUT_QUIET=5"], "OUTPUT_QUIET: capacity does not use it"),
        (["--profile", "syslog-ng", "--scenario", "seed2014", "SENDERS_PER_HOST=6"], "takes at most 25"),
        (["RATE_MAX=1e5"], "RATE_MAX='1e5' is not a number in ASCII digits"),
        (["RATE_MAX=1_000"], "RATE_MAX='1_000' is not a number in ASCII digits"),
        (["RATE_MAX=\uff11\uff10\uff10\uff10"], "is not a number in ASCII digits"),
        (["SEARCH_MAX=100000"], "use SEARCH_MAX=6340 or less"),
        (["TRIAL_PAUSE=700"], "must each be at most SEARCH_MAX=600 s"),
        (["LATENCY_BOUND=1000"], "must each be at most SEARCH_MAX=600 s"),
        (["--config", "/dev/null"], "--config /dev/null: neither a regular file nor a directory"),
        (["--profile", "syslog-ng", "--scenario", "relay-pause"], "a search of many trials has not got"),
        (["--profile", "rsyslog8", "--scenario", "relay-restart-disk-assisted"], "pick a relay scenario"),
        (
            ["--profile", "rsyslog8", "--config", "examples/syslog-ng-debian-trixie.conf"],
            "--profile syslog-ng",
        ),
        (
            [
                "--profile",
                "syslog-ng",
                "--config",
                "examples/syslog-ng-debian-trixie.conf",
                "EXPECT_DROPPED=*.debug",
            ],
            "cannot be searched yet: use run --config for it",
        ),
        (
            ["--profile", "rsyslog8", "EXPECT_DROPPED=*.debug"],
            "EXPECT_DROPPED: only for a run with --config PATH",
        ),
        (["--profile", "rsyslog8", "--config-private"], "--config-private is for --config PATH"),
        (["--profile", "rsyslog8", "DAEMON_CORES=4096"], "DAEMON_CORES=4096 leaves no core for the senders"),
    ],
)
def test_bad_capacity_input_is_one_line_and_exit_2_before_any_container(
    args: list[str], says: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_docker(*a: object, **k: object) -> None:
        raise AssertionError("a container was started")

    monkeypatch.setattr(Compose, "up", no_docker)
    monkeypatch.setattr(setup, "setup", no_docker)
    monkeypatch.setattr(environment, "docker_version", lambda: "test")
    assert cli.main(["capacity", *args]) == 2
    said = capsys.readouterr().out.strip().splitlines()
    assert len(said) == 1 and says in said[0], said


def test_a_scenario_the_daemon_cannot_run_is_n_a_as_for_run_and_check(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(environment, "docker_version", lambda: "test")
    assert cli.main(["capacity", "--profile", "baseline", "--scenario", "udp"]) == 4
    said = capsys.readouterr().out.strip().splitlines()
    assert len(said) == 1 and "n/a: baseline cannot run scenario udp" in said[0], said


@pytest.mark.parametrize("scenario", ["tls", "relay", "relay-slow-disk-assisted", "udp", "seed2014"])
def test_every_transport_and_a_relay_whose_last_hop_reads_on_can_be_searched(scenario: str) -> None:
    chosen = searchplan.plan(
        "rsyslog8", {"SCENARIO": scenario, "HOSTS": "1", "SENDERS_PER_HOST": "2"}, onehost.OneHost()
    )
    assert chosen.plan.scenario.id == scenario


# -- one trial on the real channel, a fake daemon writing the output ---------------------------------------


def line(sender: SenderId, seq: int) -> bytes:
    return render_line(sender, seq, 13, "Nov 25 12:00:00", 9)


class FakeDaemon:
    """Writes what it is told into the plain output file, when it is told."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, lines: list[bytes], half: bytes = b"") -> None:
        with self.path.open("ab") as out:
            out.write(b"".join(lines) + half)


def fake_sender(
    sender: SenderId, daemon: FakeDaemon, plan: dict[int, float | None], sent: int, done: list[str]
) -> None:
    """Asks for the trial as a sender does; the daemon then writes index i after plan[i] s (None: never)."""
    link = channel.Link()
    spec = link.call("trial", timeout=10, sender=sender.name, after=0)
    answer = link.call("trial_ready", timeout=10, sender=sender.name, trial=spec["trial"])
    start = answer["start"]
    order = sorted((delay, index) for index, delay in plan.items() if delay is not None)
    for delay, index in order:
        due = (
            capacity.intended_time(start, index, spec["rate"], capacity.SEND_TICK_S, answer["phase_s"])
            + delay
        )
        time.sleep(max(0.0, due - time.time()))
        daemon.write([line(sender, capacity.trial_seq(spec["trial"], index))])
    record = SendRecord("sent", spec["messages"], sent, 0, spec["messages"] / spec["rate"], 0.0, 0.0, 1, 0.0, 0.0,
                        0.0, time.time(), "ok")  # fmt: skip
    link.call("trial_ledger", sender=sender.name, trial=spec["trial"], ledger=asdict(record))
    done.append(sender.name)


def test_a_trial_counts_every_message_exactly_lost_late_and_duplicated(
    control_dir: Path, watcher_channel: channel.Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    monkeypatch.setattr(control, "LOGS", logs)
    monkeypatch.setattr(trialserver, "LATE_WATCH_S", 0.3)
    daemon = FakeDaemon(logs / "test.fake.all.log")
    served = served_trials(watcher_channel, ["host1-s1", "host1-s2"], logs)
    # A line of an earlier trial, still arriving: drained before the trial, never counted in it.
    daemon.write([line(SenderId(1, 1), capacity.trial_seq(0, 3))])
    # 10 msg/s each for 1 s: 10 messages per sender.
    one, two = SenderId(1, 1), SenderId(1, 2)
    plans = {
        one: {i: 0.0 for i in range(10)} | {7: None, 8: 0.6},  # 7 never arrives, 8 is 0.6 s late
        two: {i: 0.001 for i in range(9)} | {9: None},  # sent only 9: index 9 is unsent
    }
    sent = {one: 10, two: 9}
    done: list[str] = []
    threads = [
        threading.Thread(target=fake_sender, args=(s, daemon, plans[s], sent[s], done)) for s in (one, two)
    ]
    for thread in threads:
        thread.start()
    # The duplicate: sender 1's index 2 written twice (once more, late, after its trial's start).
    record = {}
    runner = threading.Thread(
        target=lambda: record.update(channel.Link().call("trial_run", rate=20, duration=1))
    )
    runner.start()
    time.sleep(1.0)
    daemon.write([line(one, capacity.trial_seq(1, 2))], half=line(two, capacity.trial_seq(1, 9))[:20])
    for thread in [*threads, runner]:
        thread.join(20)
    served.end({})
    assert sorted(done) == ["host1-s1", "host1-s2"]
    trial = capacity.trial_from_dict(record)
    assert trial.consistent() is None
    first, second = trial.senders
    assert (first.intended, first.sent, first.received, first.lost, first.late, first.duplicated) == (
        10, 10, 9, 1, 1, 1,
    ), first  # fmt: skip
    # Index 9 of sender 2: unsent, and its half line (cut) is never a received message.
    assert (second.intended, second.sent, second.received, second.lost, second.late, second.unsent) == (
        10, 9, 9, 0, 0, 1,
    ), second  # fmt: skip
    assert (trial.intended, trial.sent, trial.received, trial.lost, trial.late, trial.unsent) == (
        20,
        19,
        18,
        1,
        1,
        1,
    )
    assert trial.loss_ratio == pytest.approx(3 / 20)  # lost + late + unsent, of intended
    assert trial.drained_lines == 1
    # Written 1 ms after their due times on each sender's grid (sender 2's grid 2.5 ms after its own times):
    # the compiled follower keeps the same schedule, so it saw none before it was due.
    assert trial.early == 0
    assert sum(trial.latency_histogram_us.values()) == trial.received
    assert trial.latency_ms.max is not None and trial.latency_ms.max >= 600


def served_trials(watcher_channel: channel.Server, names: list[str], logs: Path) -> trialserver.Trials:
    """The watcher's trials on the real channel, with the compiled follower on logs."""
    served = trialserver.Trials(None, names, bound_s=0.2)  # type: ignore[arg-type]
    watcher_channel.handlers.update(served.handlers())
    served.transport = "tcp"
    served.start_following(logs)
    served.ready_to_run.set()
    return served


def died(code: int = 137) -> None:
    control.CONTROL.daemon.exit.parent.mkdir(parents=True, exist_ok=True)
    control.CONTROL.daemon.exit.write_text(f"{code}\n")


def failing_sender(after_s: float | None) -> None:
    """A sender whose connection broke: it reports failed; the daemon's exit shows after_s s (None: never)."""
    link = channel.Link()
    spec = link.call("trial", timeout=10, sender="host1-s1", after=0)
    link.call("trial_ready", timeout=10, sender="host1-s1", trial=spec["trial"])
    failed = FailedRecord("failed", "send: Connection reset by peer (os error 104)")
    link.call("trial_ledger", sender="host1-s1", trial=spec["trial"], ledger=asdict(failed))
    if after_s is not None:
        time.sleep(after_s)
        died()


def test_a_daemon_dead_before_a_trial_reaches_the_host_as_its_death(
    control_dir: Path, watcher_channel: channel.Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the real channel: an answer with "error" becomes a refusal there, which would lose the code."""
    monkeypatch.setattr(control, "LOGS", tmp_path)
    served_trials(watcher_channel, ["host1-s1"], tmp_path).end({})
    died()
    answer = channel.Link().call("trial_run", rate=20, duration=1)
    assert answer == {"daemon_exit": 137}
    with pytest.raises(measuring.DaemonDied, match=r"exit code 137\) during the trial at 20 msg/s"):
        measuring.Measurer(lambda rate, seconds: dict(answer), capacity.CapacitySettings()).trial(20, 1)


@pytest.mark.parametrize("exit_after_s", [0.3, None])
def test_a_sender_whose_connection_broke_ends_the_search_naming_why(
    exit_after_s: float | None, control_dir: Path, watcher_channel: channel.Server, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The daemon died mid-trial: its senders' connections break a few ms before its supervisor writes the
    exit. The trial waits for it (the search then names the daemon's death at this rate); where no exit comes,
    the trial says which sender failed and the search stops, since that sender's process has ended."""
    monkeypatch.setattr(control, "LOGS", tmp_path)
    monkeypatch.setattr(trialserver, "EXIT_SHOWS_S", 1.0)
    monkeypatch.setattr(trialserver, "LATE_WATCH_S", 0.1)
    served = served_trials(watcher_channel, ["host1-s1"], tmp_path)
    sender = threading.Thread(target=failing_sender, args=(exit_after_s,))
    sender.start()
    record = channel.Link().call("trial_run", rate=20, duration=0.2)
    sender.join(10)
    served.end({})
    measurer = measuring.Measurer(lambda rate, seconds: dict(record), capacity.CapacitySettings())
    if exit_after_s is not None:
        assert record["daemon_exit"] == 137 and record["errors"] == [
            "the daemon exited with code 137 during this trial"
        ]
        with pytest.raises(measuring.DaemonDied, match="during the trial at 20 msg/s"):
            measurer.trial(20, 0.2)
    else:
        assert record["daemon_exit"] is None
        assert record["errors"] == ["host1-s1: failed: send: Connection reset by peer (os error 104)"]
        with pytest.raises(measuring.TrialFailed, match="1 sender.s. failed at 20 msg/s: failed: send: Conn"):
            measurer.trial(20, 0.2)
    assert len(measurer.trials) == 1  # kept in the result either way


# The follower's own rules (whole lines, a user config's copies in nested files, the time of a read) and the
# open-loop sender's (the schedule never stretches, a late wake says so, the give-up time) are tested where
# they are written: rig-rust/src/follow/ and send/ (`cargo test`).


def test_a_sender_with_more_received_than_sent_breaks_the_accounting() -> None:
    """A sender whose report is missing (its process died) has 0 sent; what arrived of it is not lost < 0."""
    sender = capacity.SenderTrial("host1-s3", intended=100, sent=0, received=80, lost=-80)
    assert sender.consistent() == "host1-s3: 80 received but 0 sent: its report is missing or wrong"


# -- the search, against a simulated daemon that holds HELD msg/s -------------------------------------------

HELD = 2000.0


def simulated(rate: float, duration: float, sender_limit: float = 1e9, die_above: float = 1e9) -> dict:
    """What the watcher would answer: above HELD the backlog makes messages late, in proportion."""
    if rate > die_above:
        return {"daemon_exit": 137, "error": "the daemon had exited with code 137"}
    intended = round(rate * duration)
    sent = min(intended, round(sender_limit * duration))  # a sender short of CPU leaves some unsent
    late = 0 if rate <= HELD else round(sent * (1 - HELD / rate))
    senders = [
        {
            "id": "host1-s1",
            "intended": intended,
            "sent": sent,
            "received": sent,
            "lost": 0,
            "late": late,
        }
    ]
    return {
        "number": 0, "offered_msgs_per_s": rate, "duration_s": duration, "intended": intended, "sent": sent,
        "received": sent, "lost": 0, "late": late, "unsent": intended - sent, "duplicated": 0,
        "loss_ratio": (late + intended - sent) / intended, "achieved_msgs_per_s": min(rate, sender_limit),
        "sender_bound": rate > sender_limit, "latency_ms": {}, "latency_histogram_us": {"1000": intended},
        "sample_s": 0.02, "stale_lines": 0, "daemon_cpu_s": None, "watcher_cpu_s": None,
        "udp_rcvbuf_errors": None, "udp_in_errors": None, "senders": senders,
    }  # fmt: skip


SHORT = capacity.CapacitySettings(
    rate_min=100, rate_max=20_000, final_trial_s=2, initial_trial_s=1, pause_s=0, relative_width=0.05
)


def test_the_search_finds_the_rate_a_simulated_daemon_holds() -> None:
    measurer = measuring.Measurer(simulated, SHORT, sleep=lambda s: None)
    found = search.search(measurer, SHORT, print)
    assert not found.errors
    low, high = found.ndr.lower_msgs_per_s, found.ndr.upper_msgs_per_s
    assert low is not None and high is not None
    assert low <= HELD < high and high / low <= 1 + SHORT.relative_width + 0.01, (low, high)
    assert found.pdr.lower_msgs_per_s is not None and found.pdr.lower_msgs_per_s >= low
    # The warm-up (RATE_MIN, before the search) is kept, and marked: the search never had it.
    first, *rest = measurer.trials
    assert (first.purpose, first.offered_msgs_per_s) == ("warmup", SHORT.rate_min)
    assert {t.purpose for t in rest} == {"search"}


def test_a_comparison_s_fixed_rate_is_the_trial_after_the_warm_up_and_not_the_search_s() -> None:
    """compare --capacity pairs each daemon's CPU per message at one rate: that trial comes right after the
    warm-up (the sides' within a turn or two of each other), and the search finds what it found without it."""
    measurer = measuring.Measurer(simulated, SHORT, sleep=lambda s: None)
    found = search.search(measurer, SHORT, print, cpu_rate=900.0)
    warm, fixed, *rest = measurer.trials
    assert (warm.purpose, fixed.purpose, fixed.offered_msgs_per_s) == ("warmup", search.AT_RATE, 900.0)
    assert fixed.duration_s == SHORT.final_trial_s and {t.purpose for t in rest} == {"search"}
    alone = search.search(measuring.Measurer(simulated, SHORT, sleep=lambda s: None), SHORT, print)
    assert (found.ndr, found.pdr) == (alone.ndr, alone.pdr)


def test_each_trial_says_one_line_as_it_ends() -> None:
    """A search runs for minutes: each trial, as it ends, logs what was asked and what went wrong."""
    said: list[str] = []
    measurer = measuring.Measurer(simulated, SHORT, sleep=lambda s: None, log=said.append)
    search.search(measurer, SHORT, print)
    assert len(said) == len(measurer.trials) > 2
    for line, trial in zip(said, measurer.trials, strict=True):
        assert f"at {trial.offered_msgs_per_s:,.0f} msg/s" in line, line
        assert f"late {trial.late:,}," in line and f"({trial.loss_ratio:.2%})" in line, line
    failed = [line for line, trial in zip(said, measurer.trials, strict=True) if trial.late]
    assert failed and all(" late 0," not in line for line in failed), said


def test_a_search_that_ignored_late_messages_would_find_far_more() -> None:
    """The known answer is a test that can fail: count late as received and the search runs to RATE_MAX."""

    def lenient(rate: float, duration: float) -> dict:
        return simulated(rate, duration) | {"late": 0}

    found = search.search(measuring.Measurer(lenient, SHORT, sleep=lambda s: None), SHORT, print)
    assert found.ndr.lower_msgs_per_s is not None and found.ndr.lower_msgs_per_s > 5 * HELD


def test_a_sender_bound_trial_is_not_believed_the_search_starts_again_below_it() -> None:
    def weak_senders(rate: float, duration: float) -> dict:
        return simulated(rate, duration, sender_limit=1500)

    found = search.search(measuring.Measurer(weak_senders, SHORT, sleep=lambda s: None), SHORT, print)
    assert found.rig_limit == 1500
    assert found.ndr.lower_msgs_per_s is not None and found.ndr.lower_msgs_per_s <= 1500 * 0.9


def test_a_sender_that_lagged_but_offered_everything_in_time_leaves_the_trial_to_the_daemon() -> None:
    """Woken late once on a busy machine (sender_bound from its oversleep), it still sent every message, and
    none was lost or late: the trial is believed. With one message late it is not (SenderBound)."""

    def lagged(late: int) -> Callable[[float, float], dict]:
        return lambda rate, duration: simulated(rate, duration) | {"sender_bound": True, "late": late}

    measurer = measuring.Measurer(lagged(0), SHORT, sleep=lambda s: None)
    assert measurer.measure(1.0, 1000.0).forwarding_count == 1000
    assert measurer.trials[-1].sender_bound  # the rig's evidence is kept
    with pytest.raises(measuring.SenderBound):
        measuring.Measurer(lagged(1), SHORT, sleep=lambda s: None).measure(1.0, 1000.0)


def test_a_trial_a_sender_lagged_in_once_is_repeated_and_not_used() -> None:
    """A sender woken late once, with messages late (a moment of a busy machine, not the rig's limit): the
    trial is run again, and the repeat decides; RATE_MAX stays."""
    lags = iter([True, False])

    def lagged_once(rate: float, duration: float) -> dict:
        return simulated(rate, duration) | {"sender_bound": next(lags, False), "late": 3}

    measurer = measuring.Measurer(lagged_once, SHORT, sleep=lambda s: None)
    assert measurer.measure(1.0, 1000.0).forwarding_count == 997
    assert [(t.purpose, t.sender_bound) for t in measurer.trials] == [("repeated", True), ("search", False)]


def test_a_trial_whose_watcher_was_held_up_is_repeated_and_not_used() -> None:
    answers = iter([0.9, 0.02])  # the first look gap: past half the 1 s bound

    def held_up_once(rate: float, duration: float) -> dict:
        return simulated(rate, duration) | {"sample_max_s": next(answers, 0.02)}

    measurer = measuring.Measurer(held_up_once, SHORT, sleep=lambda s: None)
    measurer.measure(1.0, 1000.0)
    assert [(t.purpose, t.sample_max_s) for t in measurer.trials] == [("repeated", 0.9), ("search", 0.02)]


def test_a_rate_the_watcher_cannot_follow_is_not_believed_the_search_starts_again_below_it() -> None:
    """Held up in every attempt above 12,000 msg/s (the baseline's case: the watcher, not the receiver, is the
    limit): those trials are not given to the search, which starts again below until the watcher follows."""

    def watcher_limited(rate: float, duration: float) -> dict:
        return simulated(rate, duration) | {"sample_max_s": 2.0 if rate > 12_000 else 0.02}

    measurer = measuring.Measurer(watcher_limited, SHORT, sleep=lambda s: None)
    found = search.search(measurer, SHORT, print)
    assert found.rig_limit is not None and found.rig_limit > 12_000
    assert any("the watcher was held up" in note for note in found.notes), found.notes
    stalled = [t for t in measurer.trials if t.sample_max_s == 2.0]
    assert stalled and {t.purpose for t in stalled} == {"repeated"}
    assert found.ndr.lower_msgs_per_s is not None and found.ndr.lower_msgs_per_s <= HELD


def test_a_daemon_that_dies_ends_the_search_with_the_rate_it_died_at() -> None:
    measurer = measuring.Measurer(lambda r, d: simulated(r, d, die_above=5000), SHORT, sleep=lambda s: None)
    found = search.search(measurer, SHORT, print)
    assert found.died_at is not None and found.died_at > 5000
    assert any("the daemon died" in error for error in found.errors)


def test_the_table_shows_each_trial_and_both_rates() -> None:
    trial = simulated(1000, 1) | {"number": 1, "latency_ms": {"p99": 3.0, "max": 4.0}, "daemon_exit": None}
    recorded = capacity.read(next((ROOT / "results" / "capacity").glob("*-c834-udp.json")))  # any result
    text = capacity.table(
        replace(recorded, trials=[capacity.trial_from_dict(trial)], ndr=Bound(0.0, 950.0, 1000.0),
                pdr=Bound(0.005, 950.0, 1000.0), ndr_msgs_per_s=950.0, pdr_msgs_per_s=950.0)
    )  # fmt: skip
    assert "NDR (loss <= 0): 950 msg/s; bounds 950 .. 1,000" in text
    assert "    1      1,000" in text


def test_the_trial_ops_are_the_ones_docs_capacity_lists() -> None:
    doc = (ROOT / "docs" / "DESIGN.md").read_text()  # its "Capacity trials" table
    listed = [row.split("`")[1] for row in doc.splitlines() if row.startswith("| `trial")]
    assert listed == list(contract.TRIAL_OPS)
    assert set(trialserver.Trials(None, [], 1.0).handlers()) == set(contract.TRIAL_OPS)  # type: ignore[arg-type]


class StoppedRig:
    """A rig that comes up and goes down at once: what Ctrl-C or SIGTERM leaves a search to clean up."""

    project = "syslogbench-test-stopped"

    def __init__(self) -> None:
        self.downs = 0

    def up(self, env: dict, timeout: float) -> None:
        return None

    def exec(self, env: dict, service: str, args: list[str], timeout: float) -> None:
        return None

    def down(self, env: dict) -> None:
        self.downs += 1


@pytest.mark.parametrize("signal, says", [(KeyboardInterrupt(), "Ctrl-C"), (cli.Terminated(), "SIGTERM")])
def test_a_search_stopped_by_a_signal_still_writes_its_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signal: KeyboardInterrupt, says: str
) -> None:
    chosen = searchplan.plan(
        "rsyslog8", {"SCENARIO": "udp", "HOSTS": "1", "SENDERS_PER_HOST": "1"}, onehost.OneHost()
    )
    monkeypatch.setattr(benchmark, "measure_fingerprint", lambda cfg, env: None)
    monkeypatch.setattr(environment, "docker_version", lambda: "test")

    def stopped_after_one_trial(measurer: measuring.Measurer, *args: object) -> search.Found:
        measurer.trials.append(capacity.trial_from_dict(simulated(100.0, 1.0)))
        raise signal

    monkeypatch.setattr(capacity_command, "search", stopped_after_one_trial)
    rig = StoppedRig()
    with pytest.raises(type(signal)):
        capacity_command.search_stack(chosen, rig, tmp_path, lambda line: None)  # type: ignore[arg-type]
    [path] = (tmp_path / "capacity").glob("*.json")
    written = capacity.read(path)
    assert (written.outcome, len(written.trials), rig.downs) == ("interrupted", 1, 1)
    assert written.errors[0] == f"the search was stopped ({says}) after 1 trial: no NDR or PDR"
    assert written.ndr_msgs_per_s is None


# -- capacity --swarm, without a swarm ------------------------------------------------------------------------


def fake_swarm(monkeypatch: pytest.MonkeyPatch, local: str) -> None:
    from tests.unit.test_swarm import node, nodes

    found = nodes(node("n1", "central"), node("n2", "generator"), node("n3", "generator"))
    monkeypatch.setattr(swarmnodes, "swarm_nodes", lambda: found)
    monkeypatch.setattr(swarmnodes, "local_node", lambda: local)


def test_a_swarm_search_places_the_daemon_and_the_senders_by_node(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_swarm(monkeypatch, "id-n1")
    chosen = searchplan.plan("syslog-ng", {"SCENARIO": "udp", "HOSTS": "2"}, swarm.Swarm())
    assert chosen.cpu_placement == {"daemon": "node n1", "senders": "nodes n2, n3"}
    assert chosen.cap.daemon_cores == 0  # the default on a swarm: no cpuset, a node of its own
    assert cores.cpuset(chosen.cpu_placement["daemon"]) == ""  # no cpuset on a node of its own
    assert (
        cores.cpuset(
            searchplan.plan("syslog-ng", {"DAEMON_CORES": "1"}, onehost.OneHost()).cpu_placement["daemon"]
        )
        != ""
    )


@pytest.mark.parametrize(
    ("local", "settings", "says"),
    [
        ("id-n2", {}, "not the central node n1: point DOCKER_HOST at n1"),
        ("", {}, "not the central node n1"),
        ("id-n1", {"DAEMON_CORES": "1"}, "DAEMON_CORES=1 is for one host"),
    ],
)
def test_a_swarm_search_it_cannot_drive_is_one_line_and_exit_2(
    local: str, settings: dict[str, str], says: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    fake_swarm(monkeypatch, local)
    monkeypatch.setattr(swarmdeploy, "deploy", lambda *a: pytest.fail("deployed"))
    pairs = [f"{k}={v}" for k, v in settings.items()]
    assert cli.main(["capacity", "--swarm", "--profile", "syslog-ng", "HOSTS=2", *pairs]) == 2
    said = capsys.readouterr().out.strip().splitlines()
    assert len(said) == 1 and says in said[0], said


def test_a_registry_without_swarm_is_refused_for_capacity(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["capacity", "--profile", "syslog-ng", "--registry", "lab:5000"]) == 2
    assert "--registry is for --swarm" in capsys.readouterr().out


def test_the_stack_of_a_search_runs_the_watcher_for_trials(monkeypatch: pytest.MonkeyPatch) -> None:
    """up deploys the stack with the search's environment for the watcher; exec finds no container until the
    watcher runs on this engine, which the search asks again for."""
    fake_swarm(monkeypatch, "id-n1")
    chosen = searchplan.plan("syslog-ng", {"SCENARIO": "udp", "HOSTS": "2"}, swarm.Swarm())
    deployed: list[str] = []
    monkeypatch.setattr(swarmdeploy, "deploy", lambda name, text, pull: deployed.append(text))
    monkeypatch.setattr(swarmdeploy, "watch", lambda name, timeout: [])
    monkeypatch.setattr(swarmdeploy, "tasks", lambda name: [])
    monkeypatch.setattr(swarmnodes, "docker", lambda *args, **kw: "")
    with chosen.plan.on.running_stack(chosen.plan, "sbtest", False, (), print) as stack:
        pass
    up = stack.up({"CAPACITY": "1", "LATENCY_BOUND": "1.0", "CAPACITY_MAX_S": "700", "HOSTS": "9"}, 60)
    assert up.code == 0
    watcher = yaml.safe_load(deployed[0])["services"]["watcher"]["environment"]
    assert (watcher["CAPACITY"], watcher["LATENCY_BOUND"], watcher["CAPACITY_MAX_S"]) == ("1", "1.0", "700")
    assert watcher["HOSTS"] == "2"  # the settings come from the plan, not from the compose environment
    done = stack.exec({}, "watcher", ["python3", "-m", "syslogbench.rig.trials", "end"], 5)
    assert done.returncode == 1 and done.stdout == ""
    assert session.last_json(done.stdout) is None


def test_a_swarm_result_names_the_central_node_and_every_node(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_swarm(monkeypatch, "id-n1")
    monkeypatch.setattr(environment, "docker_version", lambda: "client")
    chosen = searchplan.plan("syslog-ng", {"SCENARIO": "udp", "HOSTS": "2"}, swarm.Swarm())
    found = search.Found(Bound(0.0, 100.0, 110.0), Bound(0.005, 120.0, 130.0))
    central = {"cpu_model": "central CPU", "cores": 8, "fingerprint": {"cpu_loops_per_s": 1.0}}
    data = capacity_record.build(chosen, [], found, {}, datetime.now(UTC), None, central)
    assert data.machine["cpu_model"] == "central CPU" and data.machine["docker_version"] == "27.3.1"
    assert [n["hostname"] for n in data.nodes] == ["n1", "n2", "n3"]
    assert capacity.result_from_dict(json.loads(json.dumps(data.to_dict()))).nodes == data.nodes
    one_host = capacity_record.build(
        searchplan.plan("syslog-ng", {}, onehost.OneHost()), [], found, {}, datetime.now(UTC)
    )
    assert one_host.nodes is None and one_host.machine["cpu_model"] != "central CPU"


def test_repeated_final_trials_are_mlrsearchs_duration_sum_and_exceed_ratio() -> None:
    cap, _ = capacity.split({"TRIAL_FINAL": "10", "TRIAL_SUM": "30", "EXCEED_RATIO": "0.5"})
    assert {(g.duration_sum, g.exceed_ratio, g.final_trial_duration) for g in search.goals(cap)} == {
        (30, 0.5, 10)
    }
    one, _ = capacity.split({"TRIAL_FINAL": "8", "TRIAL_SUM": "0", "EXCEED_RATIO": "0"})
    assert {(g.duration_sum, g.exceed_ratio) for g in search.goals(one)} == {(8, 0.0)}


@pytest.mark.parametrize(
    ("pairs", "says"),
    [
        ({"EXCEED_RATIO": "1"}, "EXCEED_RATIO=1 is outside [0, 1)"),
        ({"TRIAL_FINAL": "10", "TRIAL_SUM": "5"}, "TRIAL_SUM=5 s is shorter than one final trial"),
    ],
)
def test_repeated_trials_that_cannot_work_are_refused(pairs: dict[str, str], says: str) -> None:
    with pytest.raises(capacity.CapacityError, match=re.escape(says)):
        capacity.split(pairs)


def test_mlrsearch_out_of_time_says_what_to_change_and_nothing_else_does() -> None:
    cap = capacity.CapacitySettings()
    hint = search.out_of_time_hint("Optimized search takes too long.", 415.2, cap)
    assert hint == (" (MLRsearch had 415 s of SEARCH_MAX=600, the rest kept for the confirmations and latency "
                    "trials: raise SEARCH_MAX, or widen SEARCH_WIDTH, e.g. to 0.1 from 0.05)")  # fmt: skip
    assert search.out_of_time_hint("min load already fails", 415.2, cap) == ""
