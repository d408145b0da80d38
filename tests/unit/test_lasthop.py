"""The last hop of relay scenarios: its pacing and pause rules, and a real socket run in-process."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pytest

from syslogbench.rig import control, lasthop

LINE = b"<13>Nov 22 10:00:00 host1 bench[1]: syslogbench h=1 s=1 q=%07d f=1 v=5 xxxxxxxx\n"
DONE = b"<13>Nov 22 10:00:00 host1 bench[1]: syslogbench h=1 s=1 q=%07d f=1 v=5 DONE\n"


# --- the rules ---------------------------------------------------------------------------------------------


def test_behaviour_per_relay_target() -> None:
    assert lasthop.behaviour("normal") == lasthop.Behaviour("normal", 0, 0.0)
    assert lasthop.behaviour("slow") == lasthop.Behaviour("slow", lasthop.SLOW_LINES_PER_S, 0.0)
    assert lasthop.behaviour("pause") == lasthop.Behaviour("pause", 0, lasthop.PAUSE_S)
    assert lasthop.behaviour("pause-restart") == lasthop.Behaviour("pause-restart", 0, lasthop.PAUSE_S, True)


def test_behaviour_refuses_an_unknown_target() -> None:
    with pytest.raises(ValueError, match="unknown relay_target 'sleepy'"):
        lasthop.behaviour("sleepy")


def test_pace_delay_holds_the_rate() -> None:
    assert lasthop.pace_delay(1000, 500, 0.2) == pytest.approx(0.3)  # 500 lines are due at 0.5 s
    assert lasthop.pace_delay(1000, 500, 0.5) == 0.0
    assert lasthop.pace_delay(1000, 500, 2.0) == 0.0  # behind the rate: no waiting, and no catching up later


def test_pace_delay_unlimited() -> None:
    assert lasthop.pace_delay(0, 10**9, 0.0) == 0.0


def test_pause_runs_from_the_start_signal() -> None:
    assert lasthop.pause_left(None, 5.0, 100.0) == 0.0  # no start yet: nothing is sent, nothing to hold
    assert lasthop.pause_left(100.0, 5.0, 101.5) == pytest.approx(3.5)
    assert lasthop.pause_left(100.0, 5.0, 105.0) == 0.0
    assert lasthop.pause_left(100.0, 0.0, 100.0) == 0.0


def test_pause_restart_holds_until_the_daemon_was_restarted(control_dir: Path) -> None:
    hop = lasthop.LastHop(lasthop.behaviour("pause-restart"), -1, -1)
    hop.start_wall = time.time() - lasthop.PAUSE_S - 1  # the fixed pause is over
    assert hop.waiting_for_restart()  # but no restart yet: a relay that drained now would end the run first
    control.CONTROL.daemon.restarted.parent.mkdir(parents=True, exist_ok=True)
    control.write_atomic(control.CONTROL.daemon.restarted, "0 3\n")
    assert not hop.waiting_for_restart()
    assert not lasthop.LastHop(lasthop.behaviour("pause"), -1, -1).waiting_for_restart()


def test_pause_restart_stops_waiting_at_its_bound(control_dir: Path) -> None:
    hop = lasthop.LastHop(lasthop.behaviour("pause-restart"), -1, -1)
    hop.start_wall = time.time() - lasthop.PAUSE_S - lasthop.RESTART_HOLD_MAX_S - 1
    assert not hop.waiting_for_restart()
    assert hop.stats.notes == [f"the pause waited {lasthop.RESTART_HOLD_MAX_S:g} s more and no restart came"]


def test_pause_restart_past_its_bound_still_holds_while_the_daemon_stops(control_dir: Path) -> None:
    """A restart begun (daemon/restarting) is waited for past the bound: the supervisor's grace ends it."""
    hop = lasthop.LastHop(lasthop.behaviour("pause-restart"), -1, -1)
    hop.start_wall = time.time() - lasthop.PAUSE_S - lasthop.RESTART_HOLD_MAX_S - 1
    control.CONTROL.daemon.restarting.parent.mkdir(parents=True, exist_ok=True)
    control.write_atomic(control.CONTROL.daemon.restarting, "")
    assert hop.waiting_for_restart() and hop.stats.notes == []
    control.write_atomic(control.CONTROL.daemon.restarted, "0 612\n")
    assert not hop.waiting_for_restart()


def test_split_lines_keeps_the_unterminated_rest() -> None:
    assert lasthop.split_lines(b"a\nb\nc") == (b"a\nb\n", b"c")
    assert lasthop.split_lines(b"abc") == (b"", b"abc")


def test_done_lines_picks_only_done_lines() -> None:
    chunk = LINE % 1 + DONE % 2 + LINE % 3
    assert lasthop.done_lines(chunk) == DONE % 2
    assert lasthop.done_lines(LINE % 1) == b""


# --- a real socket, in-process ---------------------------------------------------------------------------


@pytest.fixture
def hop_env(control_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir()
    monkeypatch.setattr(control, "LOGS", logs)
    monkeypatch.setattr(lasthop, "READY_FILE", tmp_path / "ready")
    return logs


def start_hop(how: lasthop.Behaviour) -> tuple[lasthop.LastHop, threading.Thread]:
    hop = lasthop.LastHop(how, lasthop.open_append(lasthop.OUTPUT), lasthop.open_append("done.log"))
    hop.listen(0)
    thread = threading.Thread(target=hop.serve, daemon=True)
    thread.start()
    return hop, thread


def send(port: int, data: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(data)


def finish_daemon(thread: threading.Thread) -> dict:
    """The central daemon has exited: the last hop reports once its connections are gone."""
    control.write_atomic(control.CONTROL.daemon.exit, "0\n")
    thread.join(timeout=10)
    assert not thread.is_alive()
    return control.read_json(control.CONTROL.drained)


def test_normal_target_writes_every_line_and_the_done_lines(hop_env: Path) -> None:
    hop, thread = start_hop(lasthop.behaviour("normal"))
    data = b"".join(LINE % q for q in range(1, 1001)) + DONE % 1001
    send(hop.stats.port, data[:5000])  # two connections, one line split across the cut
    send(hop.stats.port, data[5000:])
    time.sleep(0.3)
    stats = finish_daemon(thread)
    output = (hop_env / lasthop.OUTPUT).read_bytes()
    # The line cut between the two connections: its head ends the first one, its tail starts the second.
    head, tail = data[:5000].rsplit(b"\n", 1)[1], data[5000:].split(b"\n", 1)[0]
    assert output.count(b"\n") == 1001 - 1 + 1  # every whole line, and the tail as a line of its own
    assert (hop_env / lasthop.FRAGMENTS).read_bytes() == head + b"\n"
    assert (hop_env / "done.log").read_bytes() == DONE % 1001
    assert (stats["lines"], stats["done_lines"], stats["connections"]) == (1001, 1, 2)
    assert (stats["resets"], stats["fragments"]) == (0, 1)
    assert tail + b"\n" in output
    assert stats["drained_s"] is None  # no start signal in this test


def test_pause_target_reads_nothing_until_the_pause_is_over(hop_env: Path) -> None:
    how = lasthop.Behaviour("pause", pause_s=0.6)
    hop, thread = start_hop(how)
    control.write_atomic(control.CONTROL.start, f"{time.time()}\n")
    time.sleep(0.15)
    send(hop.stats.port, b"".join(LINE % q for q in range(1, 101)))
    time.sleep(0.2)
    assert (hop_env / lasthop.OUTPUT).read_bytes() == b""  # held: the kernel keeps the bytes meanwhile
    time.sleep(0.6)
    stats = finish_daemon(thread)
    assert stats["lines"] == 100
    assert stats["paused_from_s"] < 0.6 <= stats["first_line_s"]
    assert stats["paused_until_s"] == pytest.approx(0.6, abs=0.15)


class PaceClock:
    """The last hop's pace in a time of its own: a sleep moves it on, and takes no real time."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_slow_target_keeps_to_its_rate(hop_env: Path) -> None:
    how = lasthop.Behaviour("slow", lines_per_s=5000)
    hop = lasthop.LastHop(how, lasthop.open_append(lasthop.OUTPUT), lasthop.open_append("done.log"))
    clock = PaceClock()
    hop.pace_clock, hop.pace_sleep = clock.monotonic, clock.sleep
    hop.listen(0)
    thread = threading.Thread(target=hop.serve, daemon=True)
    thread.start()
    control.write_atomic(control.CONTROL.start, f"{time.time()}\n")
    began = time.monotonic()
    send(hop.stats.port, b"".join(LINE % q for q in range(1, 2001)))
    while hop.stats.lines < 2000 and time.monotonic() - began < 10:
        time.sleep(0.01)
    stats = finish_daemon(thread)
    assert stats["lines"] == 2000
    # 2000 lines at 5000/s: 0.4 s of the pace's time, from the first read (not paced) on; the last read comes
    # once its lines' time has come. A read is one SLOW_CHUNK: at most this many lines.
    chunk = lasthop.SLOW_CHUNK // len(LINE % 1) + 1
    least, most = (2000 - 2 * chunk) / 5000, 2000 / 5000
    assert least <= clock.now <= most, f"2000 lines read in {clock.now:.3f} s of its pace, not {least}-{most}"


def test_finish_ends_the_last_hop_even_if_the_daemon_never_reported(hop_env: Path) -> None:
    hop, thread = start_hop(lasthop.behaviour("normal"))
    conn = socket.create_connection(("127.0.0.1", hop.stats.port))
    time.sleep(0.2)
    control.write_atomic(control.CONTROL.finish, "")
    thread.join(timeout=5)
    conn.close()
    stats = json.loads((control.CONTROL.drained).read_text())
    assert stats["notes"] == ["finish came before the central daemon's connections ended"]
