"""Fixed-rate and UDP sending without a daemon: the rendered datagrams and their offsets, and the compiled
sender (rig-rust `send`) over loopback. The schedule's own arithmetic (what is due when, a sender that falls
behind, oversleeps) is tested where it is written: rig-rust/src/send/run.rs (`cargo test`)."""

from __future__ import annotations

import socket
import threading
import time
from array import array
from pathlib import Path

import pytest

from syslogbench.model import capacity, messages, preprocess, scenarios
from syslogbench.model.messages import SenderId
from syslogbench.model.rigrecord import ClosedRecord, CloseRequest, SendRecord, SendRequest
from syslogbench.model.settings import from_env
from syslogbench.rig import sender, trialsender
from tests.unit.conftest import env

ENV = env(small=True, SCENARIO="udp", MESSAGES_PER_SENDER=50)


def test_datagram_drops_the_framing() -> None:
    line = messages.render_line(SenderId(1, 2), 7, 13, "Nov 22 10:00:00", 7)
    assert line.endswith(b"\n") and messages.datagram(line, "rfc3164") == line[:-1]
    framed = messages.render_line(SenderId(1, 2), 7, 13, "2026-11-22T10:00:00.000000Z", 7, fmt="rfc5424")
    body = messages.datagram(framed, "rfc5424")
    assert body.startswith(b"<13>1 ") and framed == b"%d %s" % (len(body), body)


def offsets(path: Path | None) -> list[int]:
    assert path is not None, "a UDP or paced sender has each message's offset"
    return list(array("Q", path.read_bytes()))


def test_render_for_udp_gives_one_datagram_per_message(tmp_path: Path) -> None:
    cfg = from_env(ENV)
    ends = offsets(sender.render(tmp_path / "msgs", cfg, SenderId(1, 1), scenarios.load("udp")))
    data = (tmp_path / "msgs").read_bytes()
    assert len(ends) == 51 and ends[-1] == len(data)
    starts = [0, *ends[:-1]]
    grams = [data[a:b] for a, b in zip(starts, ends, strict=True)]
    assert all(b"\n" not in gram for gram in grams)
    assert [messages.BODY_RE.search(g).group(3) for g in grams] == [b"%07d" % q for q in range(1, 52)]
    assert grams[-1].endswith(b" DONE") and all(
        len(g) == 99 for g in grams[:-1]
    )  # 100 bytes less the newline


def test_render_for_a_paced_tcp_sender_keeps_the_newlines(tmp_path: Path) -> None:
    cfg = from_env(ENV | {"SCENARIO": "tcp-rate"})
    ends = offsets(sender.render(tmp_path / "msgs", cfg, SenderId(1, 1), scenarios.load("tcp-rate")))
    data = (tmp_path / "msgs").read_bytes()
    assert data.count(b"\n") == 51 and all(data[end - 1 : end] == b"\n" for end in ends)


def test_a_burst_over_tcp_has_no_offsets(tmp_path: Path) -> None:
    cfg = from_env(ENV | {"SCENARIO": "seed2014"})
    assert sender.render(tmp_path / "msgs", cfg, SenderId(1, 1), scenarios.load("seed2014")) is None


def test_the_compiled_sender_sends_each_message_as_one_datagram(tmp_path: Path) -> None:
    cfg = from_env(ENV)
    path = tmp_path / "msgs"
    ends = sender.render(path, cfg, SenderId(1, 1), scenarios.load("udp"))
    count = len(offsets(ends))
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    receiver.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    out.connect(receiver.getsockname())
    rig, connected = sender.start_rig(out, "udp")
    out.close()
    assert connected.transport == "udp" and connected.tls_version is None
    rig.ask(SendRequest(str(path), str(ends), count, 0.0, time.time(), None, 0.005))
    record = rig.answer(SendRecord, 10)
    assert (record.sent, record.bytes) == (count, path.stat().st_size)
    rig.ask(CloseRequest(1.0))
    rig.answer(ClosedRecord, 10)
    rig.close()
    receiver.settimeout(1)
    grams = [receiver.recv(2048) for _ in range(count)]
    assert b"".join(grams) == path.read_bytes()
    receiver.close()


def read_all(server: socket.socket, into: bytearray) -> None:
    """What the one connection to a listening server brings, until it closes."""
    conn, _ = server.accept()
    with conn:
        while chunk := conn.recv(65536):
            into.extend(chunk)


def test_the_compiled_sender_holds_its_rate_in_batches_and_records_its_lag(tmp_path: Path) -> None:
    """500 messages at 2,000 msg/s: about 0.25 s, in batches (one every tick or so), none far behind."""
    cfg = from_env(ENV | {"SCENARIO": "tcp-rate", "MESSAGES_PER_SENDER": "499"})
    path = tmp_path / "msgs"
    ends = sender.render(path, cfg, SenderId(1, 1), scenarios.load("tcp-rate"))
    server = socket.create_server(("127.0.0.1", 0))
    received = bytearray()
    reader = threading.Thread(target=read_all, args=(server, received), daemon=True)
    reader.start()
    with socket.create_connection(server.getsockname(), timeout=5) as sock:
        rig, _ = sender.start_rig(sock, "tcp")
    start = time.time() + 0.05
    rig.ask(SendRequest(str(path), str(ends), 500, 2000.0, start, None, 0.005))
    record = rig.answer(SendRecord, 10)
    rig.ask(CloseRequest(5.0))
    assert rig.answer(ClosedRecord, 15).left_bytes == 0
    rig.close()
    reader.join(5)
    server.close()
    assert (record.sent, record.status) == (500, "ok")
    assert 0.2 <= record.pace_s < 5.0, record  # message 499 is due at 0.2495 s; a busy machine is slower
    assert record.batches >= 20, record  # batches of what is due, not one burst
    assert record.behind_max_s < 2.0, record  # generous: a loaded 2-core machine wakes it late
    assert record.last_at >= start + 0.2495
    assert bytes(received) == path.read_bytes()


# -- a trial's messages, made by the compiled sender from one template per priority ----------------------


def made_on_the_wire(
    scenario: scenarios.Scenario, count: int, trial: int = 3
) -> tuple[list[bytes], SendRecord]:
    """A trial's `count` messages of host1-s2, as the compiled sender makes and sends them at 20,000 msg/s
    over loopback UDP or TCP, split into messages; and its record."""
    cfg = from_env(ENV | {"SCENARIO": scenario.id})
    made = trialsender.templates(SenderId(1, 2), cfg, scenario, {"trial": trial, "messages": count})
    udp = scenario.transport == "udp"
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM if udp else socket.SOCK_STREAM)
    if udp:  # room for every datagram (832 bytes each in the kernel's count): a test of content, not of loss
        server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 23)
    server.bind(("127.0.0.1", 0))
    if not udp:
        server.listen()
    grams: list[bytes] = []
    stream = bytearray()

    def read() -> None:
        if udp:
            server.settimeout(2)
            while len(grams) < count:
                grams.append(server.recv(4096))
            return
        read_all(server, stream)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    with socket.socket(server.family, server.type) as out:
        out.connect(server.getsockname())
        rig, _ = sender.start_rig(out, scenario.transport)
    rig.ask(SendRequest("", None, count, 20_000.0, time.time() + 0.05, None, 0.005, 0.0, made))
    record = rig.answer(SendRecord, 10)
    rig.ask(CloseRequest(5.0))
    rig.answer(ClosedRecord, 15)
    rig.close()
    reader.join(5)
    server.close()
    if udp:
        return grams, record
    if scenario.format == "rfc5424":  # octet counted: "LEN SP MSG"
        split, rest = [], bytes(stream)
        while rest:
            length, rest = rest.split(b" ", 1)
            split.append(b"%s %s" % (length, rest[: int(length)]))
            rest = rest[int(length) :]
        return split, record
    return bytes(stream).splitlines(keepends=True), record


def stamp_of(message: bytes, fmt: str) -> str:
    """The timestamp a message carries (every message of a trial carries its templates' one)."""
    after = message.split(b">", 1)[1].removeprefix(b"1 " if fmt == "rfc5424" else b"")
    return after[: len(messages.SAMPLE_STAMP[fmt])].decode()


@pytest.mark.parametrize("scenario_id", ["seed2014", "udp", "rfc5424", "pre-json", "pre-kv", "size400"])
def test_the_compiled_sender_makes_each_message_as_python_renders_it(scenario_id: str) -> None:
    """Message i is the template of some priority with its own sequence number: byte for byte what
    messages.render_line gives for that priority and number (the message text is written in Python only)."""
    scenario = scenarios.load(scenario_id)
    count, trial = 3000, 3
    got, record = made_on_the_wire(scenario, count, trial)
    assert (record.sent, record.status, len(got)) == (count, "ok", count)
    assert record.bytes == sum(len(message) for message in got)
    payload, fmt = preprocess.payload(scenario.preprocess), scenario.format
    width, stamp = len(str(capacity.trial_seq(trial, count))), stamp_of(got[0], fmt)
    pris = [int(message.split(b"<", 1)[1].split(b">", 1)[0]) for message in got]
    for index, (message, pri) in enumerate(zip(got, pris, strict=True)):
        want = messages.render_line(SenderId(1, 2), capacity.trial_seq(trial, index), pri, stamp, width,
                                    size=scenario.message_bytes, fmt=fmt, payload=payload)  # fmt: skip
        if scenario.transport == "udp":
            want = messages.datagram(want, fmt)
        assert message == want, index
    assert len(set(pris)) == messages.FACILITIES * messages.SEVERITIES  # 3,000 draws reach every pair


def test_a_trials_templates_are_one_per_priority_with_the_index_digits_found() -> None:
    cfg = from_env(ENV | {"SCENARIO": "seed2014"})
    made = trialsender.templates(
        SenderId(1, 2), cfg, scenarios.load("seed2014"), {"trial": 12, "messages": 10}
    )
    assert len(made.lines) == len(made.index_at) == 192
    first = made.lines[13]
    assert first[made.index_at[13] - 4 : made.index_at[13] + 9] == "q=12000000001"
    again = trialsender.templates(
        SenderId(1, 2), cfg, scenarios.load("seed2014"), {"trial": 12, "messages": 10}
    )
    other = trialsender.templates(
        SenderId(1, 3), cfg, scenarios.load("seed2014"), {"trial": 12, "messages": 10}
    )
    assert made.stream_seed == again.stream_seed != other.stream_seed
