"""The watcher's pure parts: version cleaning, the SEC rule, following done.log, ending and timing a run."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from syslogbench.model.settings import Settings, from_env
from syslogbench.rig import watcher
from syslogbench.rig.outcome import DaemonInfo, HostFacts, Observed

ENV = {
    "SCENARIO": "unit",
    "CENTRAL_CPUS": "1",
    "CENTRAL_MEM": "64m",
    "REMOTE_CPUS": "1",
    "REMOTE_MEM": "64m",
    "HOSTS": "1",
    "SENDERS_PER_HOST": "3",
    "MESSAGES_PER_SENDER": "10",
    "DONE_THRESHOLD": "0",
    "DONE_WINDOW": "60",
    "RUN_TIMEOUT": "900",
    "KEEP_LOGS": "0",
    "SEED": "2014",
}
DONE_LINE = b"<13>Nov 22 10:00:00 host1 bench[1]: syslogbench h=1 s=1 q=0000011 f=1 v=5 DONE\n"
PLAIN_LINE = b"<13>Nov 22 10:00:00 host1 bench[1]: syslogbench h=1 s=1 q=0000001 f=1 v=5 xxxx\n"


def settings(**overrides: str) -> Settings:
    return from_env({**ENV, **overrides})


def observed(cfg: Settings) -> Observed:
    moment = datetime(2026, 11, 22, 10, 0, 0, tzinfo=UTC)
    facts = HostFacts("Test CPU", 2, 2**30, "6.1.0", "27.0.0", 2)
    return Observed(cfg=cfg, host=facts, daemon=DaemonInfo(), started=moment, finished=moment)


@pytest.fixture
def sec_fired(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "sec-fired"
    monkeypatch.setattr(watcher, "SEC_FIRED", path)
    return path


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


# --- clean_version, sec_rule ----------------------------------------------------------------------------------


def test_clean_version_rsyslog() -> None:
    assert (
        watcher.clean_version("rsyslogd  8.2504.0 (aka 2025.04) compiled with:")
        == "rsyslogd 8.2504.0 (aka 2025.04)"
    )


def test_clean_version_leaves_a_plain_line_alone() -> None:
    assert watcher.clean_version("syslog-ng 4 (4.8.1)") == "syslog-ng 4 (4.8.1)"


def test_sec_rule_has_threshold_window_and_pattern(sec_fired: Path) -> None:
    rule = watcher.sec_rule(settings(DONE_THRESHOLD="2", DONE_WINDOW="45"))
    lines = rule.splitlines()
    assert "type=SingleWithThreshold" in lines
    assert "thresh=2" in lines
    assert "window=45" in lines
    assert "pattern=DONE" in lines
    assert "ptype=SubStr" in lines
    assert f"action=write {sec_fired} fired" in lines


def test_sec_rule_threshold_zero_means_every_sender(sec_fired: Path) -> None:
    assert "thresh=3" in watcher.sec_rule(settings()).splitlines()


# --- DoneTail -----------------------------------------------------------------------------------------------


def test_done_tail_counts_complete_done_lines_only(tmp_path: Path) -> None:
    log = tmp_path / "done.log"
    tail = watcher.DoneTail(log, time.monotonic())
    assert tail.update() == 0  # no file yet
    log.touch()
    assert tail.update() == 0
    append(log, DONE_LINE + PLAIN_LINE + DONE_LINE)
    assert tail.update() == 2
    append(log, DONE_LINE[:30])  # a DONE line still being written
    assert tail.update() == 2
    assert tail.offset == len(DONE_LINE) * 2 + len(PLAIN_LINE)
    append(log, DONE_LINE[30:])
    assert tail.update() == 3
    assert tail.update() == 3  # nothing new
    append(log, PLAIN_LINE)
    assert tail.update() == 3
    assert tail.offset == log.stat().st_size


def test_done_tail_partial_line_holding_the_word_does_not_count(tmp_path: Path) -> None:
    log = tmp_path / "done.log"
    log.write_bytes(DONE_LINE[:-1])  # "... DONE" without its newline
    tail = watcher.DoneTail(log, time.monotonic())
    assert tail.update() == 0
    assert tail.offset == 0
    append(log, b"\n")
    assert tail.update() == 1


def test_done_tail_times_are_seconds_after_t0(tmp_path: Path) -> None:
    log = tmp_path / "done.log"
    log.write_bytes(DONE_LINE * 2)
    t0 = time.monotonic() - 5.0
    tail = watcher.DoneTail(log, t0)
    before = time.monotonic() - t0
    tail.update()
    after = time.monotonic() - t0
    assert len(tail.seen) == 2
    assert tail.seen[0] == tail.seen[1]
    assert before <= tail.seen[0] <= after


# --- LineCounter ---------------------------------------------------------------------------------------------


def test_line_counter_counts_split_files_only_and_only_new_bytes(tmp_path: Path) -> None:
    first = tmp_path / "test.rsyslog8.facility.1.severity.5.log"
    second = tmp_path / "test.rsyslog8.facility.23.severity.0.log"
    first.write_bytes(PLAIN_LINE * 3)
    (tmp_path / "done.log").write_bytes(DONE_LINE * 4)
    (tmp_path / "messages").write_bytes(b"a\nb\n")
    (tmp_path / "test.rsyslog8.facility.x.severity.0.log").write_bytes(b"a\n")
    counter = watcher.LineCounter(tmp_path)
    assert counter.update() == 3
    assert counter.update() == 3  # nothing new: nothing counted twice
    append(first, PLAIN_LINE + PLAIN_LINE[:10])
    second.write_bytes(PLAIN_LINE * 2)
    assert counter.update() == 6
    append(first, PLAIN_LINE[10:])
    assert counter.update() == 7
    assert counter.offsets == {first.name: first.stat().st_size, second.name: second.stat().st_size}


def test_line_counter_empty_directory(tmp_path: Path) -> None:
    assert watcher.LineCounter(tmp_path).update() == 0


# --- ended ---------------------------------------------------------------------------------------------------


def tail_with(tmp_path: Path, seen: list[float]) -> watcher.DoneTail:
    tail = watcher.DoneTail(tmp_path / "done.log", 0.0)
    tail.seen = list(seen)
    return tail


def test_ended_false_while_fewer_done_than_senders(tmp_path: Path, sec_fired: Path) -> None:
    cfg = settings()
    obs = observed(cfg)
    assert not watcher.ended(cfg, obs, tail_with(tmp_path, [1.0, 2.0]), 100.0)
    assert obs.end_trigger == "not-started"
    assert obs.notes == []


def test_ended_false_within_the_grace_after_the_last_done(tmp_path: Path, sec_fired: Path) -> None:
    cfg = settings()
    obs = observed(cfg)
    tail = tail_with(tmp_path, [1.0, 2.0, 3.0])
    assert not watcher.ended(cfg, obs, tail, 3.0 + watcher.SEC_GRACE_S)  # not more than the grace yet
    assert obs.end_trigger == "not-started"


def test_ended_all_done_without_sec_after_the_grace(tmp_path: Path, sec_fired: Path) -> None:
    cfg = settings(DONE_WINDOW="1")
    obs = observed(cfg)
    tail = tail_with(tmp_path, [1.0, 2.5, 4.0])
    assert watcher.ended(cfg, obs, tail, 4.0 + watcher.SEC_GRACE_S + 0.5)
    assert obs.end_trigger == "all-done-without-sec"
    assert obs.notes == [
        "SEC's SingleWithThreshold (3 DONE in 1 s) did not fire: the 3 DONE messages reached done.log "
        "over 3.0 s. The run ended when the watcher saw every DONE."
    ]


def test_ended_sec_when_the_fired_file_exists(tmp_path: Path, sec_fired: Path) -> None:
    cfg = settings()
    obs = observed(cfg)
    sec_fired.write_text("fired\n")
    assert watcher.ended(cfg, obs, tail_with(tmp_path, []), 0.5)
    assert obs.end_trigger == "sec"
    assert obs.notes == []


# --- problem -------------------------------------------------------------------------------------------------


def test_problem_none_in_an_empty_control_dir(control_dir: Path) -> None:
    cfg = settings(RUN_TIMEOUT="10")
    obs = observed(cfg)
    assert not watcher.problem(cfg, obs, 10.0)  # at, not past, the timeout
    assert (obs.timed_out, obs.end_trigger, obs.errors) == (False, "not-started", [])


def test_problem_timeout(control_dir: Path) -> None:
    cfg = settings(RUN_TIMEOUT="10")
    obs = observed(cfg)
    assert watcher.problem(cfg, obs, 10.5)
    assert obs.timed_out is True
    assert obs.end_trigger == "timeout"
    assert obs.errors == []


def test_problem_daemon_exited(control_dir: Path) -> None:
    (control_dir / "daemon").mkdir()
    (control_dir / "daemon" / "exit").write_text("137\n")
    cfg = settings()
    obs = observed(cfg)
    assert watcher.problem(cfg, obs, 1.0)
    assert obs.end_trigger == "daemon-exited"
    assert obs.errors == ["the daemon exited before the DONE threshold fired"]
    assert obs.timed_out is False


def test_problem_sender_failed(control_dir: Path) -> None:
    ledgers = control_dir / "ledgers"
    ledgers.mkdir()
    (ledgers / "host1-s1.json").write_text(json.dumps({"id": "host1-s1", "status": "ok"}))
    (ledgers / "host1-s2.json").write_text(json.dumps({"id": "host1-s2", "status": "failed: refused"}))
    cfg = settings()
    obs = observed(cfg)
    assert watcher.problem(cfg, obs, 1.0)
    assert obs.end_trigger == "sender-failed"
    assert obs.errors == ["a sender failed: host1-s2: failed: refused"]


# --- record_end ----------------------------------------------------------------------------------------------


def test_record_end_elapsed_is_the_threshold_th_done(tmp_path: Path) -> None:
    cfg = settings(DONE_THRESHOLD="2")
    obs = observed(cfg)
    obs.end_trigger = "sec"
    tail = tail_with(tmp_path, [1.25, 2.5, 4.75])
    watcher.record_end(cfg, obs, tail, 2.61234)
    assert obs.elapsed_s == 2.5
    assert obs.sec_fired_s == 2.612
    assert obs.done_spread_s == 3.5


def test_record_end_all_done_without_sec(tmp_path: Path) -> None:
    cfg = settings()
    obs = observed(cfg)
    obs.end_trigger = "all-done-without-sec"
    watcher.record_end(cfg, obs, tail_with(tmp_path, [1.0, 30.0, 90.125]), 93.0)
    assert obs.elapsed_s == 90.125
    assert obs.sec_fired_s is None
    assert obs.done_spread_s == 89.125


def test_record_end_timeout_has_no_elapsed(tmp_path: Path) -> None:
    cfg = settings()
    obs = observed(cfg)
    obs.end_trigger = "timeout"
    watcher.record_end(cfg, obs, tail_with(tmp_path, [1.0, 2.0]), 901.0)
    assert obs.elapsed_s is None
    assert obs.sec_fired_s is None
    assert obs.done_spread_s == 1.0


def test_record_end_without_any_done(tmp_path: Path) -> None:
    cfg = settings()
    obs = observed(cfg)
    obs.end_trigger = "sec"
    watcher.record_end(cfg, obs, tail_with(tmp_path, []), 5.0)
    assert obs.elapsed_s is None
    assert obs.sec_fired_s == 5.0
    assert obs.done_spread_s is None


def test_record_end_reads_what_is_left_in_done_log(tmp_path: Path) -> None:
    log = tmp_path / "done.log"
    log.write_bytes(DONE_LINE * 3)
    cfg = settings()
    obs = observed(cfg)
    obs.end_trigger = "all-done-without-sec"
    tail = watcher.DoneTail(log, time.monotonic())
    watcher.record_end(cfg, obs, tail, 1.0)
    assert len(tail.seen) == 3
    assert obs.elapsed_s == tail.seen[2]
    assert obs.done_spread_s == 0.0


# --- UDP: ending when a DONE datagram was lost ---------------------------------------------------------------


def write_ledgers(control_dir: Path, count: int) -> None:
    (control_dir / "ledgers").mkdir(exist_ok=True)
    for number in range(1, count + 1):
        (control_dir / "ledgers" / f"host1-s{number}.json").write_text('{"status": "ok"}')


def quiet_in(tmp_path: Path) -> tuple[watcher.UdpQuiet, Path]:
    logs = tmp_path / "logs"
    logs.mkdir()
    out = logs / "test.rsyslog8.facility.1.severity.5.log"
    out.write_bytes(b"")
    return watcher.UdpQuiet(watcher.LineCounter(logs), senders=3), out


def test_udp_quiet_not_over_while_a_ledger_is_missing(tmp_path: Path, control_dir: Path) -> None:
    quiet, out = quiet_in(tmp_path)
    out.write_bytes(PLAIN_LINE)
    write_ledgers(control_dir, 2)
    assert not quiet.over(0.0)
    assert not quiet.over(60.0)  # quiet for a minute, but a sender may still be sending
    assert quiet.last_growth == 0.0


def test_udp_quiet_over_after_the_quiet_time_once_every_ledger_is_in(
    tmp_path: Path, control_dir: Path
) -> None:
    quiet, out = quiet_in(tmp_path)
    write_ledgers(control_dir, 3)
    out.write_bytes(PLAIN_LINE)
    assert not quiet.over(1.0)
    append(out, PLAIN_LINE)
    assert not quiet.over(2.5)  # grew: the quiet time starts again
    assert not quiet.over(4.4)
    assert quiet.over(4.5)
    assert (quiet.lines, quiet.last_growth) == (2, 2.5)


def test_udp_quiet_counts_from_the_last_ledger_when_nothing_arrived(
    tmp_path: Path, control_dir: Path
) -> None:
    quiet, _ = quiet_in(tmp_path)
    assert not quiet.over(0.0)
    write_ledgers(control_dir, 3)
    assert not quiet.over(5.0)  # the ledgers are in from 5.0 on
    assert quiet.over(7.0)
    assert quiet.last_growth is None


def test_udp_quiet_polls_at_most_every_poll_interval(tmp_path: Path, control_dir: Path) -> None:
    quiet, out = quiet_in(tmp_path)
    write_ledgers(control_dir, 3)
    assert not quiet.over(1.0)
    out.write_bytes(PLAIN_LINE)
    assert not quiet.over(1.05)  # not looked at yet
    assert quiet.lines == 0
    assert not quiet.over(1.1)
    assert (quiet.lines, quiet.last_growth) == (1, 1.1)


def test_quiet_end_names_the_trigger_and_the_missing_done(tmp_path: Path) -> None:
    obs = observed(settings())
    watcher.quiet_end(settings(), obs, tail_with(tmp_path, [0.5, 0.6]))
    assert obs.end_trigger == "udp-quiet"
    assert obs.notes[0].startswith("2 of 3 DONE datagrams reached done.log, so SEC could not fire")


def test_scenario_transport() -> None:
    assert watcher.scenario_transport(settings(SCENARIO="udp")) == "udp"
    assert watcher.scenario_transport(settings(SCENARIO="seed2014")) == "tcp"
    assert watcher.scenario_transport(settings(SCENARIO="no-such-scenario")) == "tcp"


def test_scenario_needs() -> None:
    assert watcher.scenario_needs(settings(SCENARIO="udp")) == ["udp"]
    assert watcher.scenario_needs(settings(SCENARIO="seed2014")) == []
    assert watcher.scenario_needs(settings(SCENARIO="no-such-scenario")) == []
