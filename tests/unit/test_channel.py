"""The control channel between the generators and the watcher, over loopback: each request and its answer,
and what the watcher's side writes into its control directory."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from syslogbench import contract
from syslogbench.model.ledger import Ledger
from syslogbench.rig import channel, control


def run_json(control_dir: Path, **settings: object) -> None:
    control.write_json(control_dir / "run.json", {"settings": {"hosts": 2, **settings}, "pid": 1})


def test_hello_gives_the_settings_a_host_number_each_and_no_ca(
    control_dir: Path, watcher_channel: channel.Server
) -> None:
    run_json(control_dir, scenario="seed2014")
    first, second = channel.Link(), channel.Link()
    assert first.hello(5) == {
        "settings": {"hosts": 2, "scenario": "seed2014"},
        "capacity": False,
        "host": 1,
        "ca": None,
    }
    assert second.hello(5)["host"] == 2
    assert sorted(p.name for p in (control_dir / "hosts").iterdir()) == ["1", "2"]


def test_hello_carries_the_ca_of_a_tls_run(
    control_dir: Path, watcher_channel: channel.Server, tmp_path: Path
) -> None:
    run_json(control_dir)
    control.write_atomic(control_dir / "tls" / "ca.pem", "-----BEGIN CERTIFICATE-----\n")
    pem = channel.Link().hello(5)["ca"]
    assert pem == "-----BEGIN CERTIFICATE-----\n"
    kept = channel.ca_file(pem, tmp_path)
    assert kept == tmp_path / "ca.pem"
    assert kept.read_text() == pem
    assert channel.ca_file(None, tmp_path) is None


def test_ready_then_start_answers_with_the_start_time(
    control_dir: Path, watcher_channel: channel.Server
) -> None:
    link = channel.link()
    link.ready("host1-s2")
    assert (control_dir / "ready" / "host1-s2").exists()
    waiting_when_written: list[int] = []

    def start_once_waited_for() -> None:
        """The watcher's start, written only once the link waits for it at the watcher."""
        deadline = time.monotonic() + 5
        while not watcher_channel.waiting and time.monotonic() < deadline:
            time.sleep(0.01)
        waiting_when_written.append(watcher_channel.waiting)
        control.write_atomic(control_dir / "start", "1700000000.5\n")

    writer = threading.Thread(target=start_once_waited_for, daemon=True)
    writer.start()
    assert link.wait_start(5) == 1700000000.5
    writer.join(5)
    # The link was waiting at the watcher when the start was written, and answered with it: it waited.
    assert waiting_when_written == [1], f"waiting at the watcher when the start came: {waiting_when_written}"


def test_finish_before_the_start_ends_the_wait(control_dir: Path, watcher_channel: channel.Server) -> None:
    control.write_atomic(control_dir / "finish", "")
    with pytest.raises(control.WaitTimeout, match="finished the run before giving the start signal"):
        channel.link().wait_start(5)


def test_ledgers_and_the_generator_report_land_in_the_control_directory(
    control_dir: Path, watcher_channel: channel.Server
) -> None:
    link = channel.link()
    link.ledger("host2-s1", Ledger(id="host2-s1", status="ok", messages=2001))
    link.ledger("host2-s1", Ledger(id="host2-s1", status="died: exit code 1"), only_if_absent=True)
    link.generator(2, {"host": 2, "cpu_user_s": 0.5, "cpu_system_s": 0.25})
    assert json.loads((control_dir / "ledgers" / "host2-s1.json").read_text())["status"] == "ok"
    assert control.read_json(control_dir / "generators" / "host2.json")["cpu_system_s"] == 0.25


def test_a_sender_id_that_is_not_one_is_refused(control_dir: Path, watcher_channel: channel.Server) -> None:
    with pytest.raises(channel.ChannelError, match="not a sender id: '../run'"):
        channel.link().ledger("../run", Ledger(id="../run", status="ok"))
    with pytest.raises(channel.ChannelError, match="unknown op 'remove'"):
        channel.link().call("remove")
    assert sorted(p.name for p in control_dir.iterdir()) == []


def test_finish_answers_every_waiting_generator_and_a_closed_watcher_is_finished(
    control_dir: Path, watcher_channel: channel.Server
) -> None:
    waiting = [channel.Link() for _ in range(3)]
    threads = [threading.Thread(target=link.wait_finish, args=(5,)) for link in waiting]
    for thread in threads:
        thread.start()
    time.sleep(0.2)
    assert watcher_channel.waiting == 3
    control.write_atomic(control_dir / "finish", "")
    watcher_channel.close()
    for thread in threads:
        thread.join(2)
        assert not thread.is_alive()
    late = channel.Link(port=watcher_channel.port)
    with pytest.raises(control.WaitTimeout, match="cannot reach the watcher"):
        late.connect(0.3)


def test_the_ops_are_the_contract_ones_in_the_design_table() -> None:
    design = (Path(__file__).resolve().parents[2] / "docs" / "DESIGN.md").read_text()
    section = design.split("## The control channel", 1)[1].split("\n## ", 1)[0]
    listed = [line.split("`")[1] for line in section.splitlines() if line.startswith("| `")]
    assert listed == list(contract.CHANNEL_OPS)


def hang_up(link: channel.Link) -> None:
    """As a generator's end does: its socket and the file over it closed."""
    assert link.sock is not None and link.reader is not None
    link.reader.close()
    link.sock.close()


def wait_until(done: Callable[[], bool], timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_the_first_generator_to_end_is_named_by_its_closed_connection(
    control_dir: Path, watcher_channel: channel.Server
) -> None:
    """Plain compose stops every container once one exits, naming none: the watcher names the generator whose
    control connection closed first (host 2 here), and forgets connections closed after finish."""
    run_json(control_dir)
    first, second = channel.Link(), channel.Link()
    assert (first.hello(5)["host"], second.hello(5)["host"]) == (1, 2)
    assert watcher_channel.first_closed() is None
    hang_up(second)
    wait_until(lambda: 2 in watcher_channel.closed)
    time.sleep(0.05)
    hang_up(first)
    wait_until(lambda: 1 in watcher_channel.closed)
    assert sorted(watcher_channel.closed) == [1, 2] and watcher_channel.closed[2] < watcher_channel.closed[1]
    assert (watcher_channel.first_closed() or "").startswith(
        "generator host 2 (its control connection closed at "
    )


def test_a_connection_closed_after_finish_is_no_early_end(
    control_dir: Path, watcher_channel: channel.Server
) -> None:
    run_json(control_dir)
    link = channel.Link()
    link.hello(5)
    watcher_channel.finish()
    hang_up(link)
    time.sleep(0.2)
    assert watcher_channel.closed == {} and watcher_channel.first_closed() is None


def test_listening_answers_once_the_daemon_is_ready_and_finish_ends_it_too(
    control_dir: Path, watcher_channel: channel.Server
) -> None:
    """A sender asks before it connects to the daemon: no lookup of the daemon's name before it runs."""
    answers: list[object] = []

    def ask() -> None:
        try:
            channel.Link(port=watcher_channel.port).wait_listening(5)
            answers.append("listening")
        except control.WaitTimeout as stopped:
            answers.append(str(stopped))

    first = threading.Thread(target=ask)
    first.start()
    time.sleep(0.3)
    assert answers == []
    (control_dir / "daemon").mkdir(parents=True, exist_ok=True)
    control.write_atomic(control_dir / "daemon" / "ready", "")
    first.join(3)
    assert answers == ["listening"]
    (control_dir / "daemon" / "ready").unlink()
    watcher_channel.listening.clear()
    second = threading.Thread(target=ask)
    second.start()
    time.sleep(0.3)
    control.write_atomic(control_dir / "finish", "")
    second.join(3)
    assert answers == ["listening", "the watcher finished the run before the daemon listened"]
