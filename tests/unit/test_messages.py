"""The test messages: RFC3164 shape, fixed size, PRI matching the body, a single closing DONE."""

from __future__ import annotations

import calendar
import re
from pathlib import Path

import pytest

from syslogbench.model import messages
from syslogbench.model.messages import SenderId

NOW = calendar.timegm((2026, 11, 22, 10, 0, 0))
RFC3164_RE = re.compile(
    rb"<(\d{1,3})>(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([ 1-3]\d) (\d\d):(\d\d):(\d\d) "
    rb"host(\d+) bench\[(\d+)\]: (syslogbench [^\n]*)\n"
)


def lines(seed: int = 1, host: int = 3, sender: int = 2, count: int = 50) -> list[bytes]:
    return list(messages.render_lines(seed, SenderId(host, sender), count, NOW))


def facilities(seed: int) -> list[int]:
    return [int(messages.BODY_RE.search(line).group(4)) for line in lines(seed=seed, count=200)]


def test_sender_name() -> None:
    assert SenderId(3, 2).name == "host3-s2"


def test_line_has_rfc3164_shape() -> None:
    for line in lines(host=3, sender=2):
        match = RFC3164_RE.fullmatch(line)
        assert match, line
        assert match.group(2, 3, 4, 5, 6) == (b"Nov", b"22", b"10", b"00", b"00")
        assert (match.group(7), match.group(8)) == (b"3", b"2")
        assert line.count(b"\n") == 1


def test_first_line_exactly() -> None:
    first = messages.render_line(SenderId(3, 2), 1, 134, "Nov 22 10:00:00", 7)
    head = b"<134>Nov 22 10:00:00 host3 bench[2]: syslogbench h=3 s=2 q=0000001 f=16 v=6 "
    assert first == head + b"x" * (100 - len(head) - 1) + b"\n"


@pytest.mark.parametrize("pri", [0, 7, 8, 99, 100, 191])
@pytest.mark.parametrize(("host", "sender"), [(1, 1), (12, 10)])
def test_ordinary_message_is_100_bytes(pri: int, host: int, sender: int) -> None:
    line = messages.render_line(SenderId(host, sender), 123, pri, "Nov  2 03:04:05", 7)
    assert len(line) == messages.MESSAGE_BYTES == 100
    assert line.startswith(f"<{pri}>".encode())


def test_every_ordinary_rendered_line_is_100_bytes() -> None:
    rendered = lines(count=2000)
    assert {len(line) for line in rendered[:-1]} == {100}
    pri_digits = {len(RFC3164_RE.fullmatch(line).group(1)) for line in rendered}
    assert pri_digits == {1, 2, 3}


def test_pri_is_facility_times_8_plus_severity() -> None:
    for line in lines(count=500):
        pri = int(RFC3164_RE.fullmatch(line).group(1))
        body = messages.BODY_RE.search(line)
        facility, severity = int(body.group(4)), int(body.group(5))
        assert 0 <= facility < 24 and 0 <= severity < 8
        assert pri == facility * 8 + severity


def test_sequence_runs_1_to_count_then_done() -> None:
    rendered = lines(count=50)
    assert len(rendered) == 51
    seqs = [int(messages.BODY_RE.search(line).group(3)) for line in rendered]
    assert seqs == list(range(1, 52))
    last = rendered[-1]
    assert b" q=0000051 " in last
    assert last.endswith(b" DONE\n")
    assert last.count(b"DONE") == 1
    assert messages.BODY_RE.search(last).group(6) == b" DONE"
    assert not any(b"DONE" in line for line in rendered[:-1])


def test_seq_width() -> None:
    assert messages.seq_width(300000) == 7
    assert messages.seq_width(9_999_998) == 7
    assert messages.seq_width(9_999_999) == 8  # the DONE's q=10000000 needs 8 digits


def test_same_seed_same_bytes() -> None:
    assert lines(seed=2014, count=1000) == lines(seed=2014, count=1000)


def test_different_seed_different_facilities() -> None:
    assert facilities(2014) != facilities(2015)


def test_different_senders_differ() -> None:
    first = [line.split(b"f=", 1)[1] for line in lines(host=1, sender=1)]
    second = [line.split(b"f=", 1)[1] for line in lines(host=1, sender=2)]
    assert first != second


def test_all_192_facility_severity_pairs_appear() -> None:
    pairs = {
        (int(body.group(4)), int(body.group(5)))
        for body in (messages.BODY_RE.search(line) for line in lines(count=20000))
    }
    assert pairs == {(f, v) for f in range(24) for v in range(8)}
    assert len(pairs) == 192


def test_render_to_file(tmp_path: Path) -> None:
    path = tmp_path / "host1-s1.msgs"
    count = 25000  # more than one 10,000-line chunk
    written = messages.render_to_file(path, 7, SenderId(1, 1), count, NOW)
    data = path.read_bytes()
    assert written == path.stat().st_size == len(data)
    assert data.count(b"\n") == count + 1
    assert written == count * 100 + len(data.splitlines(keepends=True)[-1])
    assert data == b"".join(messages.render_lines(7, SenderId(1, 1), count, NOW))


def test_body_re_parses_fields() -> None:
    line = b"Nov 22 10:00:00 host3 bench[2]: syslogbench h=3 s=2 q=0000123 f=16 v=6 xxxxxxxx\n"
    match = messages.BODY_RE.search(line)
    assert match.groups() == (b"3", b"2", b"0000123", b"16", b"6", None)
    done = messages.render_line(SenderId(12, 4), 300001, 191, "Nov 22 10:00:00", 7, done=True)
    assert messages.BODY_RE.search(done).groups() == (b"12", b"4", b"0300001", b"23", b"7", b" DONE")


def test_bsd_timestamp_pads_single_digit_day_with_space() -> None:
    assert messages.bsd_timestamp(calendar.timegm((2026, 11, 2, 3, 4, 5))) == "Nov  2 03:04:05"
    assert messages.bsd_timestamp(calendar.timegm((2026, 11, 22, 10, 0, 0))) == "Nov 22 10:00:00"
    assert messages.bsd_timestamp(calendar.timegm((2027, 1, 9, 23, 59, 59))) == "Jan  9 23:59:59"


def test_single_digit_day_line_is_still_100_bytes() -> None:
    stamp = messages.bsd_timestamp(calendar.timegm((2026, 11, 2, 3, 4, 5)))
    line = messages.render_line(SenderId(1, 1), 1, 5, stamp, 7)
    assert line.startswith(b"<5>Nov  2 03:04:05 host1 bench[1]: ")
    assert len(line) == 100
    assert RFC3164_RE.fullmatch(line)


def test_rfc5424_messages_are_octet_counted() -> None:
    frames = list(messages.render_lines(7, messages.SenderId(1, 2), 3, 1_763_805_600.25, fmt="rfc5424"))
    assert len(frames) == 4
    for frame in frames:
        length, _, body = frame.partition(b" ")
        assert int(length) == len(body)
        assert b"\n" not in frame
        assert (
            body.startswith(b"<") and b">1 2025-11-22T10:00:00.250000Z host1 bench 2 - - syslogbench " in body
        )
    assert [len(f.partition(b" ")[2]) for f in frames[:3]] == [99, 99, 99]
    assert frames[-1].endswith(b" DONE")


@pytest.mark.parametrize("fmt", ["rfc3164", "rfc5424"])
@pytest.mark.parametrize("payload", ["text", "json", "kv"])
@pytest.mark.parametrize("size", [80, 100, 400])
def test_padding_is_what_render_line_padded_with(fmt: str, payload: str, size: int) -> None:
    """The reconciler's padding, from the fields alone, is each rendered message's padding at any moment."""
    for host, sender in ((1, 1), (12, 3)):
        for now in (NOW, NOW + 86_400 * 40 + 0.5):  # another month, a two-digit day, another fraction
            rendered = list(messages.render_lines(7, SenderId(host, sender), 30, now, size, fmt, payload))
            for line in rendered[:-1]:
                text = line.decode()
                pad = re.search(r"x+(?=\"\}|$|\n)", text)
                assert pad is not None, text
                pri = int(text[text.index("<") + 1 : text.index(">")])
                q = re.search(r'"?q"?[=:](\d+)', text)
                assert q is not None
                facility, severity = divmod(pri, messages.SEVERITIES)
                fields = (str(host), str(sender), q.group(1), str(facility), str(severity))
                assert messages.padding(fields, size, fmt, payload) == pad.group().encode(), text
