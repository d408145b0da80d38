"""Fixed-rate sending without a daemon: what is due when, the batches, the sleeps, and the rendered datagrams."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from syslogbench.model import messages, scenarios
from syslogbench.model.messages import SenderId
from syslogbench.model.settings import from_env
from syslogbench.rig import sender
from tests.unit.conftest import env

ENV = env(small=True, SCENARIO="udp", MESSAGES_PER_SENDER=50)


class FakeClock:
    """time.monotonic and time.sleep for paced(): sleeping moves the clock; each send costs `send_cost` s."""

    def __init__(self, send_cost: float = 0.0) -> None:
        self.now = 100.0
        self.send_cost = send_cost
        self.sleeps: list[float] = []
        self.batches: list[tuple[float, int, int]] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def send(self, first: int, last: int) -> None:
        self.batches.append((self.now - 100.0, first, last))
        self.now += self.send_cost


def run_paced(total: int, rate: int, send_cost: float = 0.0, tick: float = 0.005) -> FakeClock:
    fake = FakeClock(send_cost)
    batches = sender.paced(total, rate, fake.send, clock=fake.clock, sleep=fake.sleep, tick=tick)
    assert batches == len(fake.batches)
    return fake


# --- due -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rate", "elapsed", "total", "expected"),
    [
        (1000, 0.0, 100, 1),  # the first message goes at once
        (1000, 0.0099, 100, 10),
        (1000, 0.010, 100, 11),
        (1000, 5.0, 100, 100),  # never more than there is
        (0, 0.0, 100, 100),  # all-out: everything is due
    ],
)
def test_due(rate: int, elapsed: float, total: int, expected: int) -> None:
    assert sender.due(rate, elapsed, total) == expected


# --- paced ---------------------------------------------------------------------------------------------------


def test_paced_sends_every_message_once_in_order() -> None:
    fake = run_paced(2001, 2500)
    assert fake.batches[0][1] == 0 and fake.batches[-1][2] == 2001
    assert all(a[2] == b[1] for a, b in zip(fake.batches, fake.batches[1:], strict=False))
    assert all(first < last for _, first, last in fake.batches)


def test_paced_holds_the_rate_in_batches_of_a_tick() -> None:
    fake = run_paced(2001, 2500)
    send_s = fake.now - 100.0
    assert 2001 / send_s == pytest.approx(2500, rel=0.01)
    # 2,500 msg/s in 5 ms ticks: about 12 messages a batch, about 160 batches, never a busy loop.
    assert 150 <= len(fake.batches) <= 170
    assert min(fake.sleeps) >= 0.005
    assert max(last - first for _, first, last in fake.batches) <= 14


def test_paced_never_runs_ahead_of_the_schedule() -> None:
    fake = run_paced(500, 1000)
    for at, _, last in fake.batches:
        assert last <= sender.due(1000, at, 500)


def test_paced_slow_rate_sleeps_until_the_next_message() -> None:
    fake = run_paced(5, 10)  # one message every 100 ms: one per batch, sleeps of 100 ms, not 5 ms
    assert [(first, last) for _, first, last in fake.batches] == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]
    assert fake.sleeps == pytest.approx([0.1] * 4)


def test_paced_catches_up_after_slow_sends() -> None:
    fake = run_paced(1000, 1000, send_cost=0.02)  # every send takes 20 ms: batches grow, the average holds
    assert fake.batches[-1][2] == 1000
    assert 1000 / (fake.now - 100.0) == pytest.approx(1000, rel=0.05)


def test_paced_all_out_is_one_batch_without_sleeping() -> None:
    fake = run_paced(300, 0)
    assert [(first, last) for _, first, last in fake.batches] == [(0, 300)]
    assert fake.sleeps == []


# --- datagrams and the rendered index ------------------------------------------------------------------------


def test_datagram_drops_the_framing() -> None:
    line = messages.render_line(SenderId(1, 2), 7, 13, "Nov 22 10:00:00", 7)
    assert line.endswith(b"\n") and messages.datagram(line, "rfc3164") == line[:-1]
    framed = messages.render_line(SenderId(1, 2), 7, 13, "2026-11-22T10:00:00.000000Z", 7, fmt="rfc5424")
    body = messages.datagram(framed, "rfc5424")
    assert body.startswith(b"<13>1 ") and framed == b"%d %s" % (len(body), body)


def test_render_indexed_udp_gives_one_datagram_per_message(tmp_path: Path) -> None:
    cfg = from_env(ENV)
    who = SenderId(1, 1)
    ends = sender.render_indexed(tmp_path / "msgs", cfg, who, scenarios.load("udp"))
    data = (tmp_path / "msgs").read_bytes()
    assert len(ends) == 51 and ends[-1] == len(data)
    starts = [0, *ends[:-1]]
    grams = [data[a:b] for a, b in zip(starts, ends, strict=True)]
    assert all(b"\n" not in gram for gram in grams)
    assert [messages.BODY_RE.search(g).group(3) for g in grams] == [b"%07d" % q for q in range(1, 52)]
    assert grams[-1].endswith(b" DONE") and all(
        len(g) == 99 for g in grams[:-1]
    )  # 100 bytes less the newline


def test_render_indexed_tcp_keeps_the_newlines(tmp_path: Path) -> None:
    cfg = from_env(ENV | {"SCENARIO": "tcp-rate"})
    ends = sender.render_indexed(tmp_path / "msgs", cfg, SenderId(1, 1), scenarios.load("tcp-rate"))
    data = (tmp_path / "msgs").read_bytes()
    assert data.count(b"\n") == 51 and all(data[end - 1 : end] == b"\n" for end in ends)


def test_send_udp_sends_each_message_as_one_datagram(tmp_path: Path) -> None:
    cfg = from_env(ENV)
    path = tmp_path / "msgs"
    ends = sender.render_indexed(path, cfg, SenderId(1, 1), scenarios.load("udp"))
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    receiver.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    out.connect(receiver.getsockname())
    sent = sender.send_udp(out, path, ends, rate=0)
    assert sent == path.stat().st_size
    receiver.settimeout(1)
    grams = [receiver.recv(2048) for _ in range(len(ends))]
    assert b"".join(grams) == path.read_bytes()
    out.close()
    receiver.close()
