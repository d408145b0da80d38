"""Relay scenarios: what each daemon's rendered config does, and what the watcher records about the last hop."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest

from syslogbench import contract
from syslogbench.host import profiles, render
from syslogbench.model import result, scenarios
from syslogbench.rig import control, lasthop, outcome
from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher import files, relay, restart
from syslogbench.rig.watcher.run import hold, poll

from .test_schema import SCHEMA
from .test_watcher import settings

RELAY_IDS = [s.id for s in scenarios.all_scenarios() if s.destination == "relay"]


def config(profile: str, scenario_id: str) -> str:
    return render.render(profiles.resolve(profile), scenarios.load(scenario_id))


def test_every_buffer_runs_under_a_slow_a_paused_and_a_restarted_relay() -> None:
    loaded = [scenarios.load(i) for i in RELAY_IDS]
    for buffer in ("disk-reliable", "disk-normal", "disk-assisted"):
        assert {s.relay_target for s in loaded if s.buffer == buffer} == {"slow", "pause", "pause-restart"}, (
            buffer
        )


@pytest.mark.parametrize("profile", ["rsyslog-8.2102", "rsyslog-8.2302", "rsyslog-8.2504", "rsyslog-8.2610"])
def test_rsyslog_forwards_everything_and_writes_nothing_locally(profile: str) -> None:
    text = config(profile, "relay")
    assert 'type="omfwd" target="lasthop" port="1514" protocol="tcp"' in text
    assert 'action.resumeRetryCount="-1"' in text
    assert "omfile" not in text and "queue." not in text


def test_rsyslog_disk_assisted_queue_on_the_queue_volume() -> None:
    text = config("rsyslog-8.2504", "relay-pause-disk-assisted")
    for setting in (
        'queue.type="LinkedList"',
        'queue.filename="relay"',
        f'queue.spoolDirectory="{contract.QUEUE_DIR}"',
        f'queue.maxDiskSpace="{contract.QUEUE_CAPACITY_BYTES}"',
        'queue.saveOnShutdown="on"',
    ):
        assert setting in text


@pytest.mark.parametrize(
    ("profile", "size_option"),
    [
        ("syslog-ng-3.28", "disk-buf-size"),
        ("syslog-ng-3.38", "disk-buf-size"),
        ("syslog-ng-4.8", "capacity-bytes"),
        ("syslog-ng-4.12", "capacity-bytes"),
    ],
)
def test_syslog_ng_disk_buffer_per_version(profile: str, size_option: str) -> None:
    reliable = config(profile, "relay-pause-disk-reliable")
    normal = config(profile, "relay-slow-disk-normal")
    expected = f'{size_option}({contract.QUEUE_CAPACITY_BYTES}) dir("{contract.QUEUE_DIR}")'
    assert f"disk-buffer(reliable(yes) {expected})" in reliable
    assert f"disk-buffer(reliable(no) {expected})" in normal
    for text in (reliable, normal, config(profile, "relay")):
        assert 'tcp("lasthop" port(1514)' in text
        assert "flags(flow-control)" in text
        assert "file(" not in text
    assert "disk-buffer" not in config(profile, "relay")


def test_each_family_declares_only_its_own_buffer() -> None:
    rsyslog, syslog_ng = profiles.resolve("rsyslog-8.2504"), profiles.resolve("syslog-ng-4.8")
    assert scenarios.unsupported(scenarios.load("relay-pause-disk-reliable"), rsyslog.features) == [
        "needs the 'disk-reliable' feature"
    ]
    assert scenarios.unsupported(scenarios.load("relay-pause-disk-assisted"), syslog_ng.features) == [
        "needs the 'disk-assisted' feature"
    ]


@pytest.mark.parametrize("scenario_id", RELAY_IDS)
def test_baseline_cannot_relay(scenario_id: str) -> None:
    reasons = scenarios.unsupported(scenarios.load(scenario_id), profiles.resolve("baseline").features)
    assert "needs the 'relay' feature" in reasons


# --- the watcher's side -------------------------------------------------------------------------------------


def test_directory_bytes_sums_every_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a").write_bytes(b"x" * 10)
    (tmp_path / "sub" / "b").write_bytes(b"x" * 5)
    assert files.directory_bytes(tmp_path) == 15
    assert files.directory_bytes(tmp_path / "missing") == 0


def test_queue_watch_samples_at_most_every_half_second_and_keeps_the_peak(tmp_path: Path) -> None:
    queue = relay.RelayQueue(scenarios.load("relay-slow-disk-normal"))
    queue.directory = tmp_path
    (tmp_path / "q").write_bytes(b"x" * 100)
    poll(queue, 0.0)
    (tmp_path / "q").write_bytes(b"x" * 300)
    poll(queue, 0.2)  # too soon: not sampled
    poll(queue, 0.6)
    (tmp_path / "q").write_bytes(b"x" * 50)
    poll(queue, 1.2)
    assert queue.samples == [[0.0, 100], [0.6, 300], [1.2, 50]]
    assert queue.peak == 300


def drained_report() -> dict:
    stats = result.LastHop("pause", 0, 5.0, lasthop.HOST, lasthop.PORT, connections=1, lines=31, done_lines=3)
    return dict(stats.__dict__)


def test_wait_for_last_hop_records_its_report(control_dir: Path, tmp_path: Path, monkeypatch) -> None:
    queue = tmp_path / "queue"
    queue.mkdir()
    monkeypatch.setattr(contract, "QUEUE_DIR", queue)
    (queue / "relay.00000001").write_bytes(b"x" * 7)
    obs = observed("relay-pause-disk-assisted")
    relay.RelayQueue(obs.scenario).record(obs)
    control.write_json(control_dir / "lasthop" / "drained.json", drained_report())
    relay.after_stop(obs)
    assert obs.relay is not None and obs.relay.last_hop is not None
    assert obs.relay.last_hop.lines == 31
    assert obs.relay.queue.bytes_after_stop == 7
    assert obs.relay.queue.capacity_bytes == contract.QUEUE_CAPACITY_BYTES
    assert obs.relay.queue.where.startswith("named volume 'queue'")


def test_wait_for_last_hop_says_when_it_never_reported(control_dir: Path, monkeypatch) -> None:
    monkeypatch.setattr(relay, "DRAIN_TIMEOUT", 0.1)
    obs = observed("relay")
    relay.RelayQueue(obs.scenario).record(obs)
    relay.after_stop(obs)
    assert obs.relay is not None and obs.relay.last_hop is None
    assert "the last hop to read what the daemon had sent" in obs.errors[0]


def observed(scenario_id: str) -> Observed:
    moment = datetime(2026, 11, 22, 10, 0, 0, tzinfo=UTC)
    facts = result.Host("Test CPU", 2, 2**30, "6.1.0", "27.0.0", 2)
    obs = Observed(cfg=settings(), host=facts, daemon=result.Daemon(), started=moment, finished=moment)
    obs.scenario = scenarios.load(scenario_id)
    return obs


def test_result_carries_the_relay_section_and_follows_the_schema() -> None:
    obs = observed("relay-slow-disk-normal")
    relay.RelayQueue(obs.scenario).record(obs)
    assert obs.relay is not None
    obs.relay.last_hop = result.load(result.LastHop, drained_report())
    document = outcome.result(obs).to_dict()
    jsonschema.validate(document, SCHEMA)
    assert document["relay"]["queue"]["buffer"] == "disk-normal"
    assert document["relay"]["last_hop"]["lines"] == 31
    assert "relay" not in outcome.result(observed("seed2014")).to_dict()


# --- pause-restart ------------------------------------------------------------------------------------------


def test_restart_is_asked_once_a_second_after_every_sender_is_done(control_dir: Path) -> None:
    asker = restart.Restart(senders=2)
    poll(asker, 0.0)
    control.write_json(control_dir / "ledgers" / "host1-s1.json", {})
    poll(asker, 0.5)
    assert asker.senders_done_s is None  # one of two
    control.write_json(control_dir / "ledgers" / "host1-s2.json", {})
    poll(asker, 0.55)  # too soon after the last look (every 0.1 s)
    assert asker.senders_done_s is None
    poll(asker, 1.0)
    assert asker.senders_done_s == 1.0 and not (control_dir / "restart").exists()
    poll(asker, 1.5)
    assert not (control_dir / "restart").exists()
    poll(asker, 2.0)
    assert (control_dir / "restart").exists() and asker.requested_s == 2.0
    (control_dir / "restart").unlink()
    poll(asker, 3.0)
    assert not (control_dir / "restart").exists()  # once only


def supervisor(control_dir: Path) -> None:
    """The supervisor's part: restart once asked, and say so."""
    control.wait_for(control_dir / "restart", 30, "the restart request", poll=0.01)
    control.write_atomic(control_dir / "daemon" / "restarted", "0 7\n")


def test_a_run_the_dones_ended_waits_for_the_restart_it_asked(control_dir: Path) -> None:
    """The DONEs came before the restart was asked (seen beside another test run): the run still has it."""
    asker = restart.Restart(senders=1)
    control.write_json(control_dir / "ledgers" / "host1-s1.json", {})
    answer = threading.Thread(target=supervisor, args=(control_dir,))
    answer.start()
    hold([asker], run_timeout=30, t0=time.monotonic(), poll_s=0.01)
    answer.join()
    assert asker.requested_s is not None and asker.requested_s >= restart.RESTART_AFTER_SENDERS_S
    assert not asker.holds(0.0)


def test_the_wait_for_a_restart_ends_at_run_timeout(control_dir: Path) -> None:
    asker = restart.Restart(senders=1)
    assert asker.holds(0.0)
    hold([asker], run_timeout=50, t0=time.monotonic() - 100, poll_s=0.01)  # already past it: no wait
    assert asker.requested_s is None


def restart_record(asker: restart.Restart, scenario_id: str) -> Observed:
    obs = observed(scenario_id)
    relay.RelayQueue(obs.scenario).record(obs)  # makes the relay section the restart writes into
    asker.record(obs)
    return obs


def test_restart_record_reads_the_supervisors_answer(control_dir: Path) -> None:
    asker = restart.Restart(senders=1)
    asker.senders_done_s, asker.requested_s = 1.2, 2.2
    control.write_atomic(control_dir / "daemon" / "restarted", "0 7\n")
    obs = restart_record(asker, "relay-restart-disk-reliable")
    assert obs.relay is not None
    assert result.plain(obs.relay.restart) == {
        "senders_done_s": 1.2,
        "requested_s": 2.2,
        "exit_code": 0,
        "stop_s": 0.7,
    }
    assert obs.errors == []


def test_a_restart_that_never_happened_is_an_error(control_dir: Path) -> None:
    obs = restart_record(restart.Restart(senders=1), "relay-restart-disk-normal")
    assert obs.relay is not None
    assert result.plain(obs.relay.restart) == {"senders_done_s": None, "requested_s": None, "exit_code": None}
    assert obs.errors == [
        "relay_target pause-restart: the daemon was not restarted before the run ended "
        "(senders done at None s, restart asked at None s)"
    ]


# --- the tail after the DONEs ---------------------------------------------------------------------------------


def tail_in(tmp_path: Path, expected: str = "10") -> tuple[relay.RelayTail, Path]:
    out = tmp_path / "test.lasthop.all.log"
    out.write_bytes(b"")
    cfg = settings(HOSTS="1", SENDERS_PER_HOST="1", MESSAGES_PER_SENDER=expected, RUN_TIMEOUT="100")
    return relay.RelayTail(cfg, files.LineCounter(tmp_path)), out


LINE = b"<13>Nov 22 10:00:00 host1 bench[1]: syslogbench h=1 s=1 q=0000001 f=1 v=5 x\n"


def test_relay_tail_waits_until_nothing_came_for_the_quiet_time(tmp_path: Path) -> None:
    tail, out = tail_in(tmp_path)
    out.write_bytes(LINE * 3)
    tail.begin(10.0)
    assert not tail.ended
    out.write_bytes(LINE * 5)
    tail.update(11.0)
    tail.update(11.0 + relay.RELAY_QUIET_S)  # not more than the quiet time yet
    assert not tail.ended
    tail.update(11.1 + relay.RELAY_QUIET_S)
    assert tail.ended
    obs = observed("relay")
    relay.RelayQueue(obs.scenario).record(obs)
    tail.record(obs)
    assert obs.relay is not None
    assert obs.relay.tail == result.Tail(lines_at_done=3, lines_at_stop=5, waited_s=6.1, last_line_s=11.0)


def test_relay_tail_ends_once_every_line_is_in(tmp_path: Path) -> None:
    tail, out = tail_in(tmp_path, expected="2")  # 2 messages and the DONE: 3 lines
    out.write_bytes(LINE * 2)
    tail.begin(4.0)
    assert not tail.ended
    out.write_bytes(LINE * 3)
    tail.update(4.05)
    assert tail.ended


def test_relay_tail_records_nothing_when_it_did_not_run(tmp_path: Path) -> None:
    tail, _ = tail_in(tmp_path)
    obs = observed("relay")
    relay.RelayQueue(obs.scenario).record(obs)
    tail.record(obs)
    assert obs.relay is not None and obs.relay.tail is None
