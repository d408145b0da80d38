"""The watcher's concerns and sequence: the SEC rule, following done.log, each way a run ends and what it records."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from syslogbench import contract
from syslogbench.model import scenarios
from syslogbench.model.ledger import Ledger
from syslogbench.model.messages import SenderId
from syslogbench.model.result import Daemon, Host
from syslogbench.model.result import document as result_document
from syslogbench.model.settings import Settings, from_env
from syslogbench.rig import cgroup, channel, compiled, control
from syslogbench.rig.cgroup import read_snapshot
from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher import (
    accounting,
    concerns,
    done,
    fault,
    files,
    guard,
    progress,
    resultfile,
    run,
    samples,
    udp,
)
from tests.unit.conftest import env

ENV = env(small=True, SCENARIO="unit", SENDERS_PER_HOST=3)
DONE_LINE = b"<13>Nov 22 10:00:00 host1 bench[1]: syslogbench h=1 s=1 q=0000011 f=1 v=5 DONE\n"
PLAIN_LINE = b"<13>Nov 22 10:00:00 host1 bench[1]: syslogbench h=1 s=1 q=0000001 f=1 v=5 xxxx\n"


def settings(**overrides: str) -> Settings:
    return from_env({**ENV, **overrides})


def observed(cfg: Settings) -> Observed:
    moment = datetime(2026, 11, 22, 10, 0, 0, tzinfo=UTC)
    facts = Host("Test CPU", 2, 2**30, "6.1.0", "27.0.0", 2)
    return Observed(cfg=cfg, host=facts, daemon=Daemon(), started=moment, finished=moment)


@pytest.fixture
def sec_fired(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "sec-fired"
    monkeypatch.setattr(done, "SEC_FIRED", path)
    return path


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


# --- clean_version, sec_rule ----------------------------------------------------------------------------------


def test_clean_version_rsyslog() -> None:
    assert (
        run.clean_version("rsyslogd  8.2504.0 (aka 2025.04) compiled with:")
        == "rsyslogd 8.2504.0 (aka 2025.04)"
    )


def test_clean_version_leaves_a_plain_line_alone() -> None:
    assert run.clean_version("syslog-ng 4 (4.8.1)") == "syslog-ng 4 (4.8.1)"


def test_sec_rule_has_threshold_window_and_pattern(sec_fired: Path) -> None:
    rule = done.sec_rule(settings(DONE_THRESHOLD="2", DONE_WINDOW="45"))
    lines = rule.splitlines()
    assert "type=SingleWithThreshold" in lines
    assert "thresh=2" in lines
    assert "window=45" in lines
    assert "pattern=DONE" in lines
    assert "ptype=SubStr" in lines
    assert f"action=write {sec_fired} fired" in lines


def test_sec_rule_threshold_zero_means_every_sender(sec_fired: Path) -> None:
    assert "thresh=3" in done.sec_rule(settings()).splitlines()


# --- DoneTail -----------------------------------------------------------------------------------------------


def test_done_tail_counts_complete_done_lines_only(tmp_path: Path) -> None:
    log = tmp_path / "done.log"
    tail = files.DoneTail(log, time.monotonic())
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
    tail = files.DoneTail(log, time.monotonic())
    assert tail.update() == 0
    assert tail.offset == 0
    append(log, b"\n")
    assert tail.update() == 1


def test_done_tail_times_are_seconds_after_t0(tmp_path: Path) -> None:
    log = tmp_path / "done.log"
    log.write_bytes(DONE_LINE * 2)
    t0 = time.monotonic() - 5.0
    tail = files.DoneTail(log, t0)
    before = time.monotonic() - t0
    tail.update()
    after = time.monotonic() - t0
    assert len(tail.seen) == 2
    assert tail.seen[0] == tail.seen[1]
    assert before <= tail.seen[0] <= after


def test_done_tail_times_are_done_logs_mtime_within_the_looks(tmp_path: Path) -> None:
    log = tmp_path / "done.log"
    log.touch()
    t0, wall0 = time.monotonic() - 10.0, time.time() - 10.0  # the start was 10 s ago
    tail = files.DoneTail(log, t0, wall0)
    tail.update()
    tail.looked = 2.0  # the previous look was at 2.0 s
    append(log, DONE_LINE * 2)
    written = wall0 + 3.25
    os.utime(log, ns=(int(written * 1e9), int(written * 1e9)))  # the daemon wrote them at 3.25 s
    assert tail.update() == 2
    assert tail.seen == [pytest.approx(3.25, abs=1e-6)] * 2
    append(log, DONE_LINE)
    os.utime(log, ns=(int((wall0 - 5) * 1e9),) * 2)  # before the previous look: a clock step
    previous = tail.looked
    tail.update()
    assert tail.seen[2] == previous  # kept within the looks


# --- LineCounter ---------------------------------------------------------------------------------------------


def test_line_counter_counts_split_files_only_and_only_new_bytes(tmp_path: Path) -> None:
    first = tmp_path / "test.rsyslog8.facility.1.severity.5.log"
    second = tmp_path / "test.rsyslog8.facility.23.severity.0.log"
    first.write_bytes(PLAIN_LINE * 3)
    (tmp_path / "done.log").write_bytes(DONE_LINE * 4)
    (tmp_path / "messages").write_bytes(b"a\nb\n")
    (tmp_path / "test.rsyslog8.facility.x.severity.0.log").write_bytes(b"a\n")
    counter = files.LineCounter(tmp_path)
    assert counter.update() == 3
    assert counter.update() == 3  # nothing new: nothing counted twice
    append(first, PLAIN_LINE + PLAIN_LINE[:10])
    second.write_bytes(PLAIN_LINE * 2)
    assert counter.update() == 6
    append(first, PLAIN_LINE[10:])
    assert counter.update() == 7
    assert counter.offsets == {first.name: first.stat().st_size, second.name: second.stat().st_size}


def test_line_counter_reads_a_block_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What arrived since the last look is counted in reads of BLOCK_BYTES, with the same count."""
    monkeypatch.setattr(files, "BLOCK_BYTES", 7)
    path = tmp_path / "test.baseline.all.log"
    path.write_bytes(PLAIN_LINE * 5 + PLAIN_LINE[:3])
    counter = files.LineCounter(tmp_path)
    assert counter.update() == 5
    append(path, PLAIN_LINE[3:] + PLAIN_LINE)
    assert counter.update() == 7
    assert counter.offsets == {path.name: path.stat().st_size}


def test_line_counter_empty_directory(tmp_path: Path) -> None:
    assert files.LineCounter(tmp_path).update() == 0


# --- OutputSize, Ledgers -------------------------------------------------------------------------------------


def test_output_size_sums_split_files_only_and_estimates_lines_from_a_sample(tmp_path: Path) -> None:
    short, long = b"<13>a f=1 v=5 x\n", b"<13>a f=12 v=5 xxx\n"  # 16 and 19 bytes
    first = tmp_path / "test.rsyslog8.facility.1.severity.5.log"
    first.write_bytes(short)
    (tmp_path / "done.log").write_bytes(DONE_LINE * 4)
    (tmp_path / "test.rsyslog8.facility.x.severity.0.log").write_bytes(b"a\n" * 100)
    size = files.OutputSize(tmp_path, line_sample=69)
    assert (size.update(), size.lines, size.line_bytes) == (16, 0, None)  # too little to measure a line yet
    append(first, (long + short) * 2)  # 86 bytes; the first 69 hold 3 whole lines, 51 bytes
    (tmp_path / "test.rsyslog8.facility.2.severity.0.log").write_bytes(long * 2)
    assert size.update() == 86 + 38
    assert size.line_bytes == 17.0
    assert size.lines == round(124 / 17)  # 7: the files hold 7 lines


def test_output_size_reads_the_sample_once(tmp_path: Path) -> None:
    out = tmp_path / "test.rsyslog8.facility.1.severity.5.log"
    out.write_bytes(PLAIN_LINE * 3)
    size = files.OutputSize(tmp_path, line_sample=len(PLAIN_LINE))
    size.update()
    out.write_bytes(b"x" * 7 + b"\n")  # a later read would measure 8 bytes a line
    append(out, PLAIN_LINE * 5)
    size.update()
    assert (size.line_bytes, size.lines) == (
        len(PLAIN_LINE),
        round((8 + 5 * len(PLAIN_LINE)) / len(PLAIN_LINE)),
    )


def test_output_size_serves_a_recent_look_to_whoever_accepts_its_age(tmp_path: Path) -> None:
    out = tmp_path / "test.rsyslog8.facility.1.severity.5.log"
    out.write_bytes(PLAIN_LINE * 3)
    size = files.OutputSize(tmp_path, line_sample=len(PLAIN_LINE))
    assert size.update(1.0) == 3 * len(PLAIN_LINE)
    append(out, PLAIN_LINE)
    assert (size.update(1.8, max_age=1.0), size.at) == (3 * len(PLAIN_LINE), 1.0)  # the look of 1.0 s
    assert (size.update(2.0, max_age=1.0), size.at) == (4 * len(PLAIN_LINE), 2.0)  # too old: a new look
    assert (size.update(2.1), size.at) == (4 * len(PLAIN_LINE), 2.1)  # no age given: always a new look


def test_ledgers_read_each_file_once_and_name_the_failed(control_dir: Path) -> None:
    ledgers = files.Ledgers()
    assert ledgers.update() == {}
    write_ledgers(control_dir, 2)
    (control_dir / "ledgers" / ".host9-s1.json.tmp12").write_text("{half")  # being written: not a ledger
    assert sorted(ledgers.update()) == ["host1-s1", "host1-s2"]
    control.write_json(
        control_dir / "ledgers" / "host1-s1.json", Ledger("host1-s1", "failed: changed").to_json()
    )
    control.write_json(
        control_dir / "ledgers" / "host2-s1.json", Ledger("host2-s1", "failed: boom").to_json()
    )
    assert ledgers.failed() == ["host2-s1: failed: boom"]  # host1-s1 was read once, before


# --- the DONE/SEC end ---------------------------------------------------------------------------------------


def tail_with(tmp_path: Path, seen: list[float]) -> files.DoneTail:
    tail = files.DoneTail(tmp_path / "done.log", 0.0)
    tail.seen = list(seen)
    return tail


def done_end(cfg: Settings, tmp_path: Path, seen: list[float]) -> done.DoneEnd:
    end = done.DoneEnd(cfg, tail_with(tmp_path, seen))
    return end


def test_done_end_not_while_fewer_done_than_senders(tmp_path: Path, sec_fired: Path) -> None:
    cfg = settings()
    end = done_end(cfg, tmp_path, [1.0, 2.0])
    end.update(100.0)
    assert not end.ended
    obs = observed(cfg)
    end.record(obs)
    assert (obs.end_trigger, obs.notes, obs.elapsed_s, obs.sec_fired_s) == ("not-started", [], None, None)
    assert obs.done_spread_s == 1.0


def test_done_end_not_within_the_grace_after_the_last_done(tmp_path: Path, sec_fired: Path) -> None:
    end = done_end(settings(), tmp_path, [1.0, 2.0, 3.0])
    end.update(3.0 + done.SEC_GRACE_S)  # not more than the grace yet
    assert not end.ended


def test_done_end_all_done_without_sec_after_the_grace(tmp_path: Path, sec_fired: Path) -> None:
    cfg = settings(DONE_WINDOW="1")
    end = done_end(cfg, tmp_path, [1.0, 2.5, 4.0])
    end.update(4.0 + done.SEC_GRACE_S + 0.5)
    assert end.ended
    end.stop(7.0)
    obs = observed(cfg)
    end.record(obs)
    assert obs.end_trigger == "all-done-without-sec"
    assert obs.notes == [
        "SEC's SingleWithThreshold (3 DONE in 1 s) did not fire: the 3 DONE messages reached done.log "
        "over 3.0 s. The run ended when the watcher saw every DONE."
    ]
    assert (obs.elapsed_s, obs.sec_fired_s, obs.done_spread_s) == (4.0, None, 3.0)


def test_done_end_sec_when_the_fired_file_exists(tmp_path: Path, sec_fired: Path) -> None:
    cfg = settings(DONE_THRESHOLD="2")
    sec_fired.write_text("fired\n")
    end = done_end(cfg, tmp_path, [1.25, 2.5, 4.75])
    end.update(0.5)
    assert end.ended
    end.stop(2.61234)
    obs = observed(cfg)
    end.record(obs)
    assert obs.end_trigger == "sec"
    assert obs.notes == []
    assert (obs.elapsed_s, obs.sec_fired_s, obs.done_spread_s) == (2.5, 2.612, 3.5)


def test_done_end_sec_without_any_done(tmp_path: Path, sec_fired: Path) -> None:
    cfg = settings()
    sec_fired.write_text("fired\n")
    end = done_end(cfg, tmp_path, [])
    end.update(5.0)
    end.stop(5.0)
    obs = observed(cfg)
    end.record(obs)
    assert (obs.end_trigger, obs.elapsed_s, obs.sec_fired_s, obs.done_spread_s) == ("sec", None, 5.0, None)


def test_done_end_stop_reads_what_is_left_in_done_log(tmp_path: Path, sec_fired: Path) -> None:
    log = tmp_path / "done.log"
    cfg = settings()
    end = done.DoneEnd(cfg, files.DoneTail(log, time.monotonic()))
    end.update(0.1)
    log.write_bytes(DONE_LINE * 3)
    end.trigger = "all-done-without-sec"  # as if it had ended on the poll before these lines
    end.stop(1.0)
    obs = observed(cfg)
    end.record(obs)
    assert len(end.tail.seen) == 3
    assert obs.elapsed_s == end.tail.seen[2]
    assert obs.done_spread_s == 0.0


# --- the guard ----------------------------------------------------------------------------------------------


def guarded(cfg: Settings, now: float) -> tuple[bool, Observed]:
    watch = guard.Guard(cfg)
    watch.update(now)
    obs = observed(cfg)
    watch.record(obs)
    return watch.ended, obs


def test_guard_quiet_in_an_empty_control_dir(control_dir: Path) -> None:
    ended, obs = guarded(settings(RUN_TIMEOUT="10"), 10.0)  # at, not past, the timeout
    assert not ended
    assert (obs.timed_out, obs.end_trigger, obs.errors) == (False, "not-started", [])


def test_guard_timeout(control_dir: Path) -> None:
    ended, obs = guarded(settings(RUN_TIMEOUT="10"), 10.5)
    assert ended
    assert (obs.timed_out, obs.end_trigger, obs.errors) == (True, "timeout", [])


def test_guard_daemon_exited(control_dir: Path) -> None:
    (control_dir / "daemon").mkdir()
    (control_dir / "daemon" / "exit").write_text("137\n")
    ended, obs = guarded(settings(), 1.0)
    assert ended
    assert obs.end_trigger == "daemon-exited"
    assert obs.errors == ["the daemon exited before the DONE threshold fired"]
    assert obs.timed_out is False


def test_guard_sender_failed(control_dir: Path) -> None:
    ledgers = control_dir / "ledgers"
    ledgers.mkdir()
    control.write_json(ledgers / "host1-s1.json", Ledger("host1-s1", "ok").to_json())
    control.write_json(ledgers / "host1-s2.json", Ledger("host1-s2", "failed: refused").to_json())
    ended, obs = guarded(settings(), 1.0)
    assert ended
    assert obs.end_trigger == "sender-failed"
    assert obs.errors == ["a sender failed: host1-s2: failed: refused"]


# --- UDP: ending when a DONE datagram was lost ---------------------------------------------------------------


def write_ledgers(control_dir: Path, count: int) -> None:
    (control_dir / "ledgers").mkdir(exist_ok=True)
    for number in range(1, count + 1):
        name = f"host1-s{number}"
        control.write_json(control_dir / "ledgers" / f"{name}.json", Ledger(name, "ok").to_json())


def quiet_in(tmp_path: Path, seen: list[float] | None = None) -> tuple[udp.UdpQuiet, Path]:
    logs = tmp_path / "logs"
    logs.mkdir()
    out = logs / "test.rsyslog8.facility.1.severity.5.log"
    out.write_bytes(b"")
    return udp.UdpQuiet(files.OutputSize(logs), tail_with(tmp_path, seen or []), senders=3), out


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
    assert (quiet.bytes, quiet.last_growth) == (2 * len(PLAIN_LINE), 2.5)


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
    assert not run.poll(quiet, 1.0)
    out.write_bytes(PLAIN_LINE)
    assert not run.poll(quiet, 1.05)  # not looked at yet
    assert quiet.bytes == 0
    assert not run.poll(quiet, 1.1)
    assert (quiet.bytes, quiet.last_growth) == (len(PLAIN_LINE), 1.1)


def test_udp_quiet_ends_the_run_and_records_the_last_growth(tmp_path: Path, control_dir: Path) -> None:
    quiet, out = quiet_in(tmp_path, seen=[0.5, 0.6])
    write_ledgers(control_dir, 3)
    out.write_bytes(PLAIN_LINE)
    quiet.update(1.0)
    quiet.update(3.0)
    assert quiet.ended
    obs = observed(settings())
    quiet.record(obs)
    assert obs.end_trigger == "udp-quiet"
    assert obs.elapsed_s == 1.0
    assert obs.notes[0].startswith("2 of 3 DONE datagrams reached done.log, so SEC could not fire")


def test_udp_quiet_stays_out_once_every_done_is_in(tmp_path: Path, control_dir: Path) -> None:
    quiet, _ = quiet_in(tmp_path, seen=[0.5, 0.6, 0.7])
    write_ledgers(control_dir, 3)
    quiet.update(1.0)
    quiet.update(10.0)
    assert not quiet.ended  # SEC, or all-done-without-sec, ends this run
    obs = observed(settings())
    quiet.record(obs)
    assert (obs.end_trigger, obs.elapsed_s, obs.notes) == ("not-started", None, [])


# --- samples and progress -----------------------------------------------------------------------------------


def test_samples_rows_carry_the_time_the_cpu_since_the_start_the_memory_and_the_lines(
    tmp_path: Path, control_dir: Path
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "test.x.facility.1.severity.5.log").write_bytes(PLAIN_LINE * 4)
    series = samples.Samples(files.OutputSize(logs, line_sample=len(PLAIN_LINE)), None)
    series.update(0.5)  # no samples.log yet
    block = "sample 1\ncpu.stat user_usec 1500000\ncpu.stat system_usec 250000\nmemory.current 2048\nend 1\n"
    (control_dir / "samples.log").write_text(block + "sample 2\n")  # the second block is not complete
    series.update(1.234)
    obs = observed(settings())
    series.record(obs)
    assert obs.samples == [[1.23, None, None, 2048, 4]]  # no start snapshot: no CPU relative to it


def test_progress_every_interval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "test.x.facility.1.severity.5.log").write_bytes(PLAIN_LINE * 10)
    report = progress.Progress(
        files.OutputSize(tmp_path, line_sample=len(PLAIN_LINE)), expected=40, every=2.0
    )
    run.poll(report, 0.0)  # the first report is due after one interval
    run.poll(report, 1.0)
    run.poll(report, 2.0)
    (tmp_path / "test.x.facility.1.severity.5.log").write_bytes(PLAIN_LINE * 30)
    run.poll(report, 3.9)  # not due
    run.poll(report, 4.5)
    obs = observed(settings())
    report.record(obs)
    assert obs.progress == [[2.0, 10], [4.5, 30]]
    assert "watcher: ~30 / 40 received (75.0%), 8 msg/s" in capsys.readouterr().out


# --- which concerns run --------------------------------------------------------------------------------------


def kinds(scenario_id: str) -> tuple[list[str], str | None]:
    plan = concerns.for_scenario(settings(), scenarios.load(scenario_id), None, 0.0)
    return [type(c).__name__ for c in plan.during], type(plan.tail).__name__ if plan.tail else None


def test_the_scenario_picks_the_concerns() -> None:
    assert kinds("seed2014") == (["DoneEnd", "Guard", "Samples", "Progress"], None)
    assert kinds("udp") == (["DoneEnd", "Guard", "UdpQuiet", "Samples", "Progress"], None)
    assert kinds("relay") == (["RelayQueue", "DoneEnd", "Guard", "Samples", "Progress"], "RelayTail")
    assert kinds("relay-restart-disk-reliable") == (
        ["RelayQueue", "Restart", "DoneEnd", "Guard", "Samples", "Progress"],
        "RelayTail",
    )


def test_the_watch_looks_four_times_a_second_and_ten_where_a_udp_run_may_end_on_quiet() -> None:
    looks = {
        scenario: concerns.for_scenario(settings(), scenarios.load(scenario), None, 0.0).poll_s
        for scenario in ("seed2014", "relay", "udp", "tcp-rate")
    }
    assert looks == {"seed2014": 0.25, "relay": 0.25, "udp": 0.1, "tcp-rate": 0.25}


def test_every_concern_records_after_the_ends_and_the_queue_before_the_tail_and_restart() -> None:
    plan = concerns.for_scenario(settings(), scenarios.load("relay-restart-disk-reliable"), None, 0.0)
    assert [type(c).__name__ for c in plan.every] == [
        "DoneEnd",
        "Guard",
        "Samples",
        "Progress",
        "RelayQueue",
        "RelayTail",
        "Restart",
    ]


# --- n/a, decided once ---------------------------------------------------------------------------------------


def write_manifest(control_dir: Path, features: list[str]) -> None:
    control.write_atomic(
        control_dir / "daemon" / "manifest.yaml", f"profile: baseline\nfeatures: [{', '.join(features)}]\n"
    )


def test_decide_go_when_the_manifest_has_every_feature(control_dir: Path) -> None:
    write_manifest(control_dir, ["plain-file", "raw-receive"])
    run.decide(scenarios.load("plain"))
    assert (control_dir / "go").exists() and not (control_dir / "unsupported").exists()


def test_decide_unsupported_writes_the_models_reason(control_dir: Path) -> None:
    write_manifest(control_dir, ["plain-file", "raw-receive"])
    with pytest.raises(run.Unsupported) as caught:
        run.decide(scenarios.load("relay"))
    reason = "baseline cannot run scenario relay: needs the 'relay' feature"
    assert str(caught.value) == reason
    assert (control_dir / "unsupported").read_text() == reason + "\n"
    assert not (control_dir / "go").exists()
    assert scenarios.unsupported(scenarios.load("relay"), ["plain-file", "raw-receive"]) == [
        "needs the 'relay' feature"
    ]


def test_ready_wait_ends_when_the_daemon_exits_before_it_listens(control_dir: Path) -> None:
    control.write_atomic(control_dir / "daemon" / "exit", "1\n")
    with pytest.raises(RuntimeError, match="the daemon exited with code 1 before it listened on 514"):
        run.wait_until_ready(settings())


def test_scenario_transport() -> None:
    assert run.scenario_transport(settings(SCENARIO="udp")) == "udp"
    assert run.scenario_transport(settings(SCENARIO="seed2014")) == "tcp"
    assert run.scenario_transport(settings(SCENARIO="no-such-scenario")) == "tcp"


def test_the_watcher_exits_with_the_contracts_codes() -> None:
    source = Path(run.__file__).read_text()
    assert "contract.EXIT_CODES[written.verdict]" in source
    assert contract.EXIT_CODES["timeout"] == 5
    assert "EXIT_CODES = " not in "".join(p.read_text() for p in Path(run.__file__).parent.glob("*.py"))


# --- when something dies: SIGTERM, any exception, a full disk, the OOM killer (docs/DESIGN.md) ---------------

SAMPLES = Path(__file__).resolve().parent / "samples"


@pytest.fixture
def volumes(control_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The watcher's volumes in temporary directories, the environment of a 1 x 2 x 60 run, short waits,
    and the SIGTERM disposition put back afterwards. Returns the results directory."""
    for name in ("logs", "queue", "results"):
        (tmp_path / name).mkdir()
    monkeypatch.setattr(control, "LOGS", tmp_path / "logs")
    monkeypatch.setattr(contract, "QUEUE_DIR", tmp_path / "queue")
    monkeypatch.setattr(resultfile, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(run, "HEALTH_FILE", tmp_path / "watcher-ready")
    monkeypatch.setattr(channel, "PORT", 0)  # any free port: the control channel is not what is tested here
    monkeypatch.setattr(run, "STOPPING_STOP_TIMEOUT", 0.1)
    monkeypatch.setattr(run, "STOPPING_LEDGER_WAIT", 0.1)
    monkeypatch.setattr(run, "FAILED_LEDGER_WAIT", 0.1)
    env = {**ENV, "SCENARIO": "seed2014", "SENDERS_PER_HOST": "2", "MESSAGES_PER_SENDER": "60"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("CENTRAL_MEM", "12m")
    # As `syslogbench run` passes it: the watcher then measures none of its own (about 3 s).
    monkeypatch.setenv(contract.FINGERPRINT_ENV, (SAMPLES / "fingerprint.json").read_text())
    before = signal.getsignal(signal.SIGTERM)
    yield tmp_path / "results"
    signal.signal(signal.SIGTERM, before)


def one_result(results: Path) -> dict:
    files = sorted(results.glob("*.json"))
    assert len(files) == 1, files
    return json.loads(files[0].read_text())


def started_with_one_ledger(cfg: Settings, obs: object) -> None:
    """The daemon ready and the start given; host1-s1 sent everything and all of it arrived, host1-s2 never
    reported (its generator vanished)."""
    from tests.unit.test_reconcile import ledger, output, write

    sender = SenderId(1, 1)
    for name in ("go", "daemon/ready", "start"):
        control.write_atomic(control.CONTROL.root / name, "")
    control.write_json(control.CONTROL.ledger(sender.name), ledger(sender).to_json())
    write(control.LOGS, *output([sender]))


def test_sigterm_mid_run_writes_an_error_result_that_reconciles_what_arrived(
    volumes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run_until_sigterm(cfg: Settings, obs: object) -> None:
        started_with_one_ledger(cfg, obs)
        os.kill(os.getpid(), signal.SIGTERM)  # as compose sends it
        time.sleep(5)  # the handler raises here, at once
        raise AssertionError("SIGTERM did not end the run")

    monkeypatch.setattr(run, "run", run_until_sigterm)
    assert run.main() == contract.EXIT_CODES["error"]
    result = one_result(volumes)
    assert result["verdict"] == "error"
    assert result["errors"] == [
        fault.STOPPED,
        "the watcher saw no container end before its SIGTERM (no daemon exit, no silent supervisor, no "
        "generator's connection closed): compose itself may have stopped the run, e.g. a service it was starting "
        "failed; its output says which",
        f"gave up after 0 s waiting for the daemon to stop ({control.CONTROL.daemon.exit})",
        "the daemon's supervisor wrote no exit code: the daemon's container ended (killed or stopped) with it",
        "no ledger from 1 of 2 senders (host1-s2): they had not finished when their generator stopped",
    ]
    m = result["messages"]
    assert (m["expected"], m["sent"], m["received"], m["lost"], m["duplicated"]) == (122, 61, 61, 61, 0)
    assert [s["status"] for s in result["senders"]] == ["ok", "no ledger: the sender never reported"]
    assert result["host"]["fingerprint"] == json.loads((SAMPLES / "fingerprint.json").read_text())
    assert control.CONTROL.finish.exists()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN  # a second SIGTERM cannot cut the result


def test_any_exception_still_writes_a_result(volumes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(cfg: Settings, obs: object) -> None:
        started_with_one_ledger(cfg, obs)
        control.write_atomic(control.CONTROL.daemon.exit, "0\n")  # the supervisor answers the stop
        raise KeyError("rate")

    monkeypatch.setattr(run, "run", broken)
    assert run.main() == contract.EXIT_CODES["error"]
    result = one_result(volumes)
    assert result["errors"][0] == "the watcher failed: KeyError: 'rate'"
    assert result["messages"]["received"] == 61
    assert result["daemon"]["exit_code"] == 0


def test_the_result_records_the_watchers_own_memory_and_the_reconcile_time(
    volumes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def reconciled(cfg: Settings, obs: object) -> None:
        started_with_one_ledger(cfg, obs)
        control.write_atomic(control.CONTROL.daemon.exit, "0\n")
        raise KeyError("rate")  # the quickest way through conclude: the salvage reconciles what arrived

    monkeypatch.setattr(run, "run", reconciled)
    own = {"memory.peak": f"{41 * 2**20}\n", "memory.max": f"{384 * 2**20}\n"}
    monkeypatch.setattr(cgroup, "own", lambda: cgroup.V2(own.get))
    run.main()
    harness = one_result(volumes)["harness"]
    assert harness["watcher"] == {
        "peak_memory_bytes": 41 * 2**20,
        "peak_memory_source": "memory.peak",
        "memory_limit_bytes": 384 * 2**20,
    }
    assert isinstance(harness["reconcile_s"], float) and 0 <= harness["reconcile_s"] < 5
    assert isinstance(harness["reconcile_cpu_s"], float) and 0 <= harness["reconcile_cpu_s"] < 5


@pytest.mark.parametrize("how", ["conclude", "salvage"])
def test_a_missing_rig_is_an_error_result_with_its_reason_once(
    volumes: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, how: str
) -> None:
    """The compiled rig reads the output: without it the run's verdict is error, and the result says why in one
    line, once (the salvage after the failure does not try again), with no traceback."""
    monkeypatch.setenv(compiled.RIG_ENV, str(tmp_path / "nowhere"))

    def finished(cfg: Settings, obs: object) -> None:
        started_with_one_ledger(cfg, obs)
        control.write_atomic(control.CONTROL.daemon.exit, "0\n")
        if how == "conclude":
            accounting.conclude(cfg, obs, 0)  # type: ignore[arg-type]
        raise KeyError("rate")  # salvage: the failure's salvage reconciles what arrived

    monkeypatch.setattr(run, "run", finished)
    assert run.main() == contract.EXIT_CODES["error"]
    result = one_result(volumes)
    reason = (
        f"the reconciliation failed: syslogbench-rig not found at {tmp_path / 'nowhere'} ($SYSLOGBENCH_RIG); "
        f"build it with: {compiled.BUILD}"
    )
    assert [error for error in result["errors"] if "syslogbench-rig" in error] == [reason]
    assert result["verdict"] == "error"
    assert not any("Traceback" in error for error in result["errors"])


def test_a_sigterm_before_the_start_names_the_senders_not_ready(
    volumes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def waiting(cfg: Settings, obs: object) -> None:
        control.write_atomic(control.CONTROL.ready("host1-s2"), "")
        raise fault.Terminated(fault.STOPPED)

    monkeypatch.setattr(run, "run", waiting)
    assert run.main() == contract.EXIT_CODES["error"]
    result = one_result(volumes)
    assert result["errors"] == [
        fault.STOPPED,
        "the watcher saw no container end before its SIGTERM (no daemon exit, no silent supervisor, no "
        "generator's connection closed): compose itself may have stopped the run, e.g. a service it was starting "
        "failed; its output says which",
        "1 of 2 senders were not ready (host1-s1)",
    ]
    assert result["messages"]["received"] == 0


def test_a_sigterm_while_handling_a_failure_cuts_the_long_waits_short(
    volumes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sender failed, the watcher asks the daemon to stop (up to 120 s): compose's SIGTERM must end that
    wait, not be taken for one more failure."""
    monkeypatch.setattr(run, "STOP_TIMEOUT", 30)

    def sender_failed(cfg: Settings, obs: object) -> None:
        started_with_one_ledger(cfg, obs)
        raise RuntimeError("a sender failed: host1-s2: failed: [Errno 104] Connection reset by peer")

    def stopped_by_compose(obs: Observed, timeout: float = run.STOP_TIMEOUT) -> None:
        if timeout == 30:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        obs.errors.append(f"stop waited {timeout} s")

    monkeypatch.setattr(run, "run", sender_failed)
    monkeypatch.setattr(run, "stop_daemon", stopped_by_compose)
    began = time.monotonic()
    assert run.main() == contract.EXIT_CODES["error"]
    took = time.monotonic() - began  # the stop's 5 s sleep is not waited for
    assert took < 4.5, f"the watcher ended after {took:.2f} s"
    assert one_result(volumes)["errors"] == [
        "a sender failed: host1-s2: failed: [Errno 104] Connection reset by peer",
        fault.STOPPED,
        "stop waited 0.1 s",
        "the daemon's supervisor wrote no exit code: the daemon's container ended (killed or stopped) with it",
        "no ledger from 1 of 2 senders (host1-s2): they had not finished when their generator stopped",
    ]


def full_disk(limit: int, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Results larger than limit bytes do not fit: a partial file stays behind, as on a real full disk."""
    real, tried = result_document.write_atomic, []

    def write_atomic(path: Path, text: str) -> None:
        if path.parent == resultfile.RESULTS:
            tried.append(path)
            if len(text) > limit:
                (path.parent / f".{path.name}.tmp1").write_text(text[:limit])
                raise OSError(28, "No space left on device")
        real(path, text)

    monkeypatch.setattr(result_document, "write_atomic", write_atomic)  # Result.write's
    return tried


def test_a_full_disk_leaves_a_reduced_result(volumes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def with_samples(cfg: Settings, obs: Observed) -> None:
        started_with_one_ledger(cfg, obs)
        control.write_atomic(control.CONTROL.daemon.exit, "0\n")
        obs.samples = [[float(i), 0.0, 0.0, 0.0, 0.0] for i in range(2000)]
        obs.progress = [[float(i), 0.0] for i in range(2000)]
        accounting.conclude(cfg, obs, ledger_wait=0)

    monkeypatch.setattr(run, "run", with_samples)
    tried = full_disk(20_000, monkeypatch)
    assert run.main() == contract.EXIT_CODES["error"]
    assert len(tried) == 2
    result = one_result(volumes)
    assert [path.name for path in volumes.iterdir()] == [tried[0].name]  # no partial file left
    assert result["verdict"] == "error"
    assert result["errors"] == [
        "the full result could not be written ([Errno 28] No space left on device): this one leaves out "
        "the time series (samples, progress)"
    ]
    assert (result["samples"]["rows"], result["progress"]) == ([], [])
    assert result["messages"]["received"] == 61


def test_no_room_at_all_prints_the_result(
    volumes: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(run, "run", started_with_one_ledger)
    full_disk(0, monkeypatch)
    assert run.main() == contract.EXIT_CODES["error"]
    assert list(volumes.iterdir()) == []
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert len(printed) == 1
    assert json.loads(printed[0])["verdict"] == "error"


def test_sec_that_ignores_sigterm_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(done, "SEC_STOP_S", 0.2)
    stubborn = subprocess.Popen(["sh", "-c", "trap '' TERM; sleep 30"])
    time.sleep(0.1)  # let sh set its trap
    began = time.monotonic()
    done.stop_sec(stubborn)
    assert stubborn.returncode == -signal.SIGKILL
    took = time.monotonic() - began  # killed after SEC_STOP_S, long before sh's 30 s
    assert took < 15, f"SEC was stopped after {took:.2f} s"


def test_the_oom_killed_daemon_is_named_with_its_memory_limit(control_dir: Path) -> None:
    """The supervisor's end snapshot counts one OOM kill: the cause goes first, before what the senders saw."""
    shutil.copytree(SAMPLES / "cgroup_v1" / "oom", control.CONTROL.snapshot("end"))
    control.write_atomic(control.CONTROL.daemon.exit, "137\n")
    obs = observed(settings())
    obs.start = read_snapshot(SAMPLES / "cgroup_v1" / "start")
    obs.errors.append("a sender failed: host1-s1: failed: [Errno 104] Connection reset by peer")
    os.environ["CENTRAL_MEM"] = "12m"
    try:
        run.stop_daemon(obs, timeout=1)
    finally:
        del os.environ["CENTRAL_MEM"]
    assert obs.daemon_exit == 137
    assert obs.errors == [
        "the daemon was killed for memory: limit 12 MiB (CENTRAL_MEM=12m), peak 12 MiB "
        "(memory.max_usage_in_bytes); the kernel's OOM killer killed 1 process(es) in its cgroup",
        "a sender failed: host1-s1: failed: [Errno 104] Connection reset by peer",
    ]


def test_an_oom_kill_that_spared_the_daemon_is_not_called_its_kill(control_dir: Path) -> None:
    """The kernel killed something else in the cgroup (a health check's exec) and the daemon lived on to
    the watcher's stop: its cgroup ran out of memory, but the daemon was not killed."""
    obs = observed(settings())
    obs.start = read_snapshot(SAMPLES / "cgroup_v1" / "start")
    obs.end = read_snapshot(SAMPLES / "cgroup_v1" / "oom")
    obs.daemon_exit = 143
    assert fault.memory_kill(obs, "6m") == (
        "the daemon's cgroup ran out of memory: limit 12 MiB (CENTRAL_MEM=6m), peak 12 MiB "
        "(memory.max_usage_in_bytes); the kernel's OOM killer killed 1 process(es) in its cgroup, but not the "
        "daemon (it exited with code 143)"
    )


def test_no_oom_kill_no_memory_reason(control_dir: Path) -> None:
    obs = observed(settings())
    obs.start = read_snapshot(SAMPLES / "cgroup_v2" / "oom")
    obs.end = read_snapshot(SAMPLES / "cgroup_v2" / "oom")  # the same count: no kill during the run
    assert fault.memory_kill(obs, "12m") is None
    obs.start = None
    assert fault.memory_kill(obs, "") == (
        "the daemon was killed for memory: limit 12 MiB, peak 12 MiB (memory.peak); "
        "the kernel's OOM killer killed 1 process(es) in its cgroup"
    )


def test_a_full_logs_volume_is_named_with_what_is_left(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    class Full:
        f_bavail, f_frsize, f_blocks = 3, 4096, 256  # 12 KiB free of 1 MiB

    monkeypatch.setattr(fault.os, "statvfs", lambda path: Full)
    said = fault.logs_full(tmp_path)
    assert said is not None and said.startswith("the logs volume is full: 12,288 bytes free of 1 MiB; ")
    Full.f_bavail = 16  # 64 KiB: room for hundreds of messages
    assert fault.logs_full(tmp_path) is None


def test_a_full_logs_volume_is_the_results_first_error(
    volumes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cause before the loss it led to: the watcher's conclusion names the full logs volume first."""

    class Full:
        f_bavail, f_frsize, f_blocks = 3, 4096, 256  # 12 KiB free of 1 MiB

    real = os.statvfs
    monkeypatch.setattr(fault.os, "statvfs", lambda path: Full if Path(path) == control.LOGS else real(path))

    def concluded(cfg: Settings, obs: Observed) -> None:
        started_with_one_ledger(cfg, obs)
        control.write_atomic(control.CONTROL.daemon.exit, "0\n")
        accounting.conclude(cfg, obs, ledger_wait=0)

    monkeypatch.setattr(run, "run", concluded)
    run.main()
    result = one_result(volumes)
    assert result["errors"][0].startswith("the logs volume is full: 12,288 bytes free of 1 MiB; ")
    assert result["messages"]["received"] == 61
    assert fault.logs_full(volumes / "no-such-dir") is None  # a volume it cannot look at is not called full


def test_a_daemon_dead_of_a_signal_is_named_and_a_clean_stop_is_not() -> None:
    assert fault.killed_by_signal(137) == (
        "the daemon exited with code 137 (SIGKILL): it did not end by the watcher's stop"
    )
    assert fault.killed_by_signal(139).startswith("the daemon exited with code 139 (SIGSEGV)")
    assert [fault.killed_by_signal(code) for code in (0, 143, 1, None)] == [None] * 4


def test_a_supervisor_silent_for_long_is_named(tmp_path: Path) -> None:
    samples = tmp_path / "samples.log"
    assert fault.supervisor_silent(samples) is None  # no samples yet
    samples.write_text("sample 1\n")
    assert fault.supervisor_silent(samples) is None  # fresh
    old = time.time() - 30
    os.utime(samples, (old, old))
    said = fault.supervisor_silent(samples)
    assert said is not None and said.startswith("the daemon's supervisor had written no sample for 30 s")


@pytest.mark.parametrize("keep", ["0", "1"])
def test_the_output_and_queue_are_discarded_once_counted_unless_kept(volumes: Path, keep: str) -> None:
    """A capacity search's last trial left several GB in its project's volumes, which outlive its containers."""
    output = control.LOGS / "test.seed.facility.1.severity.5.log"
    mine = control.LOGS / "daemon-notes.txt"  # not the test's: a profile's own file stays
    queued = contract.QUEUE_DIR / "q.00000001"
    for path in (output, mine, queued):
        path.write_text("x\n")
    accounting.discard_logs(settings(KEEP_LOGS=keep))
    assert (output.exists(), mine.exists(), queued.exists()) == (
        (True, True, True) if keep == "1" else (False, True, False)
    )
