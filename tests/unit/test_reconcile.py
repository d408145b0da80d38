"""Reconciliation of hand-made daemon output against sender ledgers, with exact counts: through the compiled
rig (rig-rust/, `syslogbench-rig reconcile`) as the watcher runs it, from syslogbench/rig/reconcile.py."""

from __future__ import annotations

import calendar
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from syslogbench import contract
from syslogbench.model import messages
from syslogbench.model.ledger import Ledger
from syslogbench.model.messages import SenderId
from syslogbench.model.preprocess import Expectation
from syslogbench.model.result import plain
from syslogbench.rig import reconcile

pytestmark = pytest.mark.usefixtures("rig")

SEED = 2014
NOW = calendar.timegm((2026, 11, 22, 10, 0, 0))
COUNT = 60
PER_SENDER = COUNT + 1  # the DONE message counts too
SENDERS = [SenderId(1, 1), SenderId(1, 2), SenderId(2, 1)]

Entry = tuple[int, int, bytes]  # facility, severity, the line as the daemon wrote it


def daemon_line(line: bytes) -> bytes:
    """What a daemon writes for a received line: its own timestamp and the host, tag and message."""
    match = messages.BODY_RE.search(line)
    host, sender = int(match.group(1)), int(match.group(2))
    return b"2026-11-22T10:00:00.123456+00:00 host%d bench[%d]: " % (host, sender) + line[match.start() :]


def fields(line: bytes) -> tuple[int, int, int, int, int]:
    match = messages.BODY_RE.search(line)
    return tuple(int(group) for group in match.group(1, 2, 3, 4, 5))  # type: ignore[return-value]


def output(senders: list[SenderId] = SENDERS) -> tuple[list[Entry], list[bytes]]:
    """Everything delivered once, in the right file; the DONE lines also in done.log."""
    entries: list[Entry] = []
    done: list[bytes] = []
    for sender in senders:
        for line in messages.render_lines(SEED, sender, COUNT, NOW):
            written = daemon_line(line)
            _, _, _, facility, severity = fields(line)
            entries.append((facility, severity, written))
            if line.endswith(b" DONE\n"):
                done.append(written)
    return entries, done


def write(log_dir: Path, entries: list[Entry], done: list[bytes] | None) -> Path:
    files: dict[tuple[int, int], list[bytes]] = defaultdict(list)
    for facility, severity, line in entries:
        files[(facility, severity)].append(line)
    log_dir.mkdir(exist_ok=True)
    for (facility, severity), lines in files.items():
        path = log_dir / f"test.rsyslog.facility.{facility}.severity.{severity}.log"
        path.write_bytes(b"".join(lines))
    if done is not None:
        (log_dir / "done.log").write_bytes(b"".join(done))
    return log_dir


def ledger(sender: SenderId) -> Ledger:
    """A ledger as sender.send_all writes it."""
    size = len(b"".join(messages.render_lines(SEED, sender, COUNT, NOW)))
    return Ledger(
        id=sender.name,
        host=sender.host,
        sender=sender.sender,
        status="ok",
        messages=COUNT + 1,
        first_seq=1,
        last_seq=COUNT + 1,
        done_seq=COUNT + 1,
        bytes=size,
        send_s=0.5,
        cpu_s=0.25,
        finished_at=NOW + 1.0,
        transport="tcp",
        rate_target=0,
        rate_achieved=122.0,
    )


LEDGERS = {sender.name: ledger(sender) for sender in SENDERS}


def run(
    log_dir: Path, ledgers: dict[str, Ledger] | None = None, block_bytes: int = 0
) -> reconcile.Reconciliation:
    ledgers = LEDGERS if ledgers is None else ledgers
    return reconcile.reconcile(log_dir, ledgers, SENDERS, PER_SENDER, block_bytes=block_bytes)


def per_sender(result: reconcile.Reconciliation, name: str) -> list[object]:
    return [getattr(sender, name) for sender in result.senders]


def without(entries: list[Entry], drop: set[tuple[int, int, int]]) -> list[Entry]:
    """entries minus the lines whose (host, sender, seq) is in drop."""
    return [entry for entry in entries if fields(entry[2])[:3] not in drop]


def find(entries: list[Entry], host: int, sender: int, seq: int) -> Entry:
    return next(entry for entry in entries if fields(entry[2])[:3] == (host, sender, seq))


def test_all_delivered(tmp_path: Path) -> None:
    entries, done = output()
    result = run(write(tmp_path / "logs", entries, done))
    assert result.expected == 3 * 61 == 183
    assert per_sender(result, "id") == ["host1-s1", "host1-s2", "host2-s1"]
    assert per_sender(result, "status") == ["ok", "ok", "ok"]
    assert per_sender(result, "sent") == [61, 61, 61]
    assert per_sender(result, "received") == [61, 61, 61]
    assert per_sender(result, "lost") == [0, 0, 0]
    assert per_sender(result, "duplicated") == [0, 0, 0]
    assert per_sender(result, "done_seen") == [True, True, True]
    assert result.total("received") == result.total("sent") == 183
    assert (result.misfiled, result.unknown) == (0, 0)
    assert (result.done_log_lines, result.done_log_extra) == (3, 0)
    assert result.split_files == len({(f, v) for f, v, _ in entries})
    assert result.output_bytes == sum(len(line) for _, _, line in entries)
    assert result.clean is True


def test_each_sender_counts_as_the_result_writes_it(tmp_path: Path) -> None:
    """The reconciliation's senders are the result's (model.Sender), "tls" left out where none was used."""
    entries, done = output()
    result = run(write(tmp_path / "logs", entries, done))
    assert plain(result.senders[0]) == {
        "id": "host1-s1",
        "status": "ok",
        "sent": 61,
        "received": 61,
        "lost": 0,
        "duplicated": 0,
        "done_seen": True,
        "bytes": LEDGERS["host1-s1"].bytes,
        "send_s": 0.5,
        "cpu_s": 0.25,
        "rate_target": 0,
        "rate_achieved": 122.0,
        "expected": 61,
        "filtered": 0,
        "unexpected": 0,
        "truncated": 0,
    }


def test_lost_lines(tmp_path: Path) -> None:
    entries, done = output()
    entries = without(entries, {(1, 2, 5), (1, 2, 6), (1, 2, 7), (2, 1, 10)})
    result = run(write(tmp_path / "logs", entries, done))
    assert per_sender(result, "lost") == [0, 3, 1]
    assert per_sender(result, "received") == [61, 58, 60]
    assert per_sender(result, "duplicated") == [0, 0, 0]
    assert result.total("lost") == 4
    assert (result.misfiled, result.unknown) == (0, 0)
    assert result.clean is False


def test_duplicated_lines(tmp_path: Path) -> None:
    entries, done = output()
    entries += [find(entries, 1, 1, 3), find(entries, 1, 1, 3), find(entries, 2, 1, 8)]
    result = run(write(tmp_path / "logs", entries, done))
    assert per_sender(result, "duplicated") == [2, 0, 1]
    assert per_sender(result, "received") == [61, 61, 61]
    assert per_sender(result, "lost") == [0, 0, 0]
    assert result.total("duplicated") == 3
    assert result.clean is False


def test_duplicated_done_counts_as_duplicate(tmp_path: Path) -> None:
    entries, done = output()
    entries.append(find(entries, 1, 2, PER_SENDER))
    result = run(write(tmp_path / "logs", entries, done))
    assert per_sender(result, "duplicated") == [0, 1, 0]
    assert result.clean is False


def test_misfiled_line(tmp_path: Path) -> None:
    entries, done = output()
    index = entries.index(find(entries, 1, 1, 4))
    facility, severity, line = entries[index]
    entries[index] = (facility, (severity + 1) % 8, line)
    result = run(write(tmp_path / "logs", entries, done))
    assert result.misfiled == 1
    assert per_sender(result, "received") == [61, 61, 61]  # it arrived, just in the wrong file
    assert result.total("lost") == 0
    assert result.clean is False


def test_misfiled_done_line(tmp_path: Path) -> None:
    entries, done = output()
    index = entries.index(find(entries, 2, 1, PER_SENDER))
    facility, severity, line = entries[index]
    entries[index] = ((facility + 1) % 24, severity, line)
    result = run(write(tmp_path / "logs", entries, done))
    assert result.misfiled == 1


def test_unknown_sender(tmp_path: Path) -> None:
    entries, done = output()
    stranger = messages.render_line(SenderId(9, 1), 1, 42, "Nov 22 10:00:00", 7)
    entries.append((5, 2, daemon_line(stranger)))
    result = run(write(tmp_path / "logs", entries, done))
    assert result.unknown == 1
    assert result.misfiled == 0
    assert per_sender(result, "received") == [61, 61, 61]
    assert result.clean is False


def test_sequence_number_beyond_the_done_is_unknown(tmp_path: Path) -> None:
    entries, done = output()
    late = messages.render_line(SenderId(1, 1), PER_SENDER + 1, 42, "Nov 22 10:00:00", 7)
    entries.append((5, 2, daemon_line(late)))
    result = run(write(tmp_path / "logs", entries, done))
    assert result.unknown == 1
    assert per_sender(result, "duplicated") == [0, 0, 0]


def test_done_log_missing_a_done(tmp_path: Path) -> None:
    entries, done = output()
    done = [line for line in done if b" bench[2]: " not in line]
    result = run(write(tmp_path / "logs", entries, done))
    assert per_sender(result, "done_seen") == [True, False, True]
    assert result.done_log_lines == 2
    assert result.total("lost") == 0  # the DONE is still in its split file
    assert result.clean is False


def test_done_log_with_one_done_twice_and_another_missing(tmp_path: Path) -> None:
    entries, done = output()
    result = run(write(tmp_path / "logs", entries, [done[0], done[0], done[2]]))
    assert result.done_log_lines == 3
    assert per_sender(result, "done_seen") == [True, False, True]
    assert result.clean is False


def test_done_log_extra_line(tmp_path: Path) -> None:
    entries, done = output()
    done.append(b"2026-11-22T10:00:01.000000+00:00 central rsyslogd: -- MARK --\n")
    result = run(write(tmp_path / "logs", entries, done))
    assert result.done_log_extra == 1
    assert result.done_log_lines == 3
    assert per_sender(result, "done_seen") == [True, True, True]
    assert result.clean is False


def test_no_done_log(tmp_path: Path) -> None:
    entries, _ = output()
    result = run(write(tmp_path / "logs", entries, None))
    assert (result.done_log_lines, result.done_log_extra) == (0, 0)
    assert per_sender(result, "done_seen") == [False, False, False]
    assert result.clean is False


def test_sender_without_ledger(tmp_path: Path) -> None:
    entries, done = output()
    ledgers = {name: value for name, value in LEDGERS.items() if name != "host2-s1"}
    result = run(write(tmp_path / "logs", entries, done), ledgers)
    missing = result.senders[2]
    assert missing.id == "host2-s1"
    assert missing.status == "no ledger: the sender never reported"
    assert missing.status.startswith("no ledger")
    assert (missing.sent, missing.bytes, missing.send_s, missing.cpu_s) == (0, 0, None, None)
    assert (missing.received, missing.lost, missing.done_seen) == (61, 0, True)
    assert per_sender(result, "sent") == [61, 61, 0]


def test_failed_sender(tmp_path: Path) -> None:
    entries, done = output()
    entries = [entry for entry in entries if b" host2 bench[1]: " not in entry[2]]
    done = [line for line in done if b" host2 bench[1]: " not in line]
    status = "failed: cannot connect to central:514: [Errno 111] Connection refused"
    ledgers = {**LEDGERS, "host2-s1": Ledger(id="host2-s1", host=2, sender=1, status=status)}
    result = run(write(tmp_path / "logs", entries, done), ledgers)
    failed = result.senders[2]
    assert failed.status == status
    assert (failed.sent, failed.received, failed.lost, failed.duplicated) == (0, 0, 61, 0)
    assert failed.done_seen is False
    assert failed.bytes == 0
    assert per_sender(result, "lost") == [0, 0, 61]
    assert result.total("lost") == 61
    assert result.done_log_lines == 2
    assert result.clean is False


def test_missing_log_dir(tmp_path: Path) -> None:
    result = run(tmp_path / "does-not-exist")
    assert per_sender(result, "received") == [0, 0, 0]
    assert per_sender(result, "lost") == [61, 61, 61]
    assert (result.split_files, result.output_bytes, result.done_log_lines) == (0, 0, 0)
    assert result.clean is False


def test_other_files_are_ignored(tmp_path: Path) -> None:
    entries, done = output()
    log_dir = write(tmp_path / "logs", entries, done)
    (log_dir / "messages.log").write_bytes(entries[0][2])
    (log_dir / "test.rsyslog.facility.x.severity.1.log").write_bytes(entries[0][2])
    result = run(log_dir)
    assert per_sender(result, "duplicated") == [0, 0, 0]
    assert result.clean is True


@pytest.mark.parametrize("daemon", ["rsyslog", "syslog-ng"])
def test_split_file_name_pattern(daemon: str) -> None:
    match = contract.SPLIT_RE.match(f"test.{daemon}.facility.23.severity.7.log")
    assert match and match.groups() == ("23", "7")
    assert contract.SPLIT_RE.match(f"test.{daemon}.facility.23.severity.7.log.1") is None


def test_ledger_rates_reach_the_sender_counts(tmp_path: Path) -> None:
    entries, done = output()
    ledgers = {
        name: replace(ledger, rate_target=2500, rate_achieved=2490.5) for name, ledger in LEDGERS.items()
    }
    result = run(write(tmp_path / "logs", entries, done), ledgers)
    assert per_sender(result, "rate_target") == [2500] * 3
    assert per_sender(result, "rate_achieved") == [2490.5] * 3


# --- whole lines only: cut, padded wrong, mangled --------------------------------------------------------------


def replace_line(entries: list[Entry], host: int, sender: int, seq: int, line: bytes) -> list[Entry]:
    """entries with the line of (host, sender, seq) written as `line`, in the same file."""
    facility, severity, _ = find(entries, host, sender, seq)
    return [(facility, severity, line) if fields(e[2])[:3] == (host, sender, seq) else e for e in entries]


def cut(line: bytes, keep: int) -> bytes:
    """The line cut to `keep` bytes of its message (from "syslogbench"), as a daemon with a size limit ends it."""
    return line[: line.index(b"syslogbench") + keep] + b"\n"


def test_a_line_cut_in_its_padding_is_truncated_not_received(tmp_path: Path) -> None:
    entries, done = output()
    line = find(entries, 1, 2, 5)[2]
    entries = replace_line(entries, 1, 2, 5, cut(line, 45))  # the fields are 39 bytes
    result = run(write(tmp_path / "logs", entries, done))
    assert per_sender(result, "truncated") == [0, 1, 0]
    assert per_sender(result, "received") == [61, 60, 61]
    assert per_sender(result, "lost") == [0, 1, 0]
    assert (result.misfiled, result.unknown, result.total("duplicated")) == (0, 0, 0)
    assert result.clean is False


def test_a_line_cut_before_its_facility_is_truncated_not_misfiled(tmp_path: Path) -> None:
    entries, done = output()
    line = find(entries, 2, 1, 9)[2]
    entries = replace_line(entries, 2, 1, 9, cut(line, len(b"syslogbench h=2 s=1 q=0000009 ")))
    result = run(write(tmp_path / "logs", entries, done))
    assert per_sender(result, "truncated") == [0, 0, 1]
    assert per_sender(result, "lost") == [0, 0, 1]
    assert result.misfiled == 0


@pytest.mark.parametrize("extra", [1, -1, 8])
def test_a_line_padded_wrong_is_truncated(tmp_path: Path, extra: int) -> None:
    entries, done = output()
    line = find(entries, 1, 1, 30)[2]
    padded = line[:-1] + b"x" * extra + b"\n" if extra > 0 else line[: extra - 1] + b"\n"
    assert len(padded) - len(line) == extra
    entries = replace_line(entries, 1, 1, 30, padded)
    result = run(write(tmp_path / "logs", entries, done))
    assert per_sender(result, "truncated") == [1, 0, 0]
    assert per_sender(result, "received") == [60, 61, 61]


@pytest.mark.parametrize(
    "mangle",
    [
        lambda line: line[:-5] + b"y" + line[-4:],  # one padding byte changed
        lambda line: line[:-1] + b" \n",  # a space added at the end
        lambda line: line.replace(b" f=", b" F="),  # the facility's name
        lambda line: line[:-1] + b"\r\n",  # a carriage return kept from the wire
    ],
    ids=["padding-byte", "trailing-space", "facility-name", "carriage-return"],
)
def test_a_mangled_line_is_truncated(tmp_path: Path, mangle: Callable[[bytes], bytes]) -> None:
    entries, done = output()
    entries = replace_line(entries, 2, 1, 44, mangle(find(entries, 2, 1, 44)[2]))
    result = run(write(tmp_path / "logs", entries, done))
    assert per_sender(result, "truncated") == [0, 0, 1]
    assert per_sender(result, "received") == [61, 61, 60]
    assert result.clean is False


def test_a_mangled_done_is_truncated(tmp_path: Path) -> None:
    entries, done = output()
    line = find(entries, 1, 2, PER_SENDER)[2]
    entries = replace_line(entries, 1, 2, PER_SENDER, line.replace(b" DONE\n", b" DON\n"))
    result = run(write(tmp_path / "logs", entries, done))
    assert per_sender(result, "truncated") == [0, 1, 0]
    assert per_sender(result, "lost") == [0, 1, 0]


def test_padding_on_the_dones_sequence_number_is_not_whole(tmp_path: Path) -> None:
    """Only DONE ends the last sequence number's line: padding there is not what the sender sent."""
    entries, done = output()
    padded = messages.render_line(SenderId(1, 1), PER_SENDER, 42, "Nov 22 10:00:00", 7)
    entries = replace_line(entries, 1, 1, PER_SENDER, daemon_line(padded))
    result = run(write(tmp_path / "logs", entries, done))
    assert per_sender(result, "truncated") == [1, 0, 0]
    assert per_sender(result, "lost") == [1, 0, 0]


def test_a_cut_copy_beside_a_whole_one_is_truncated_and_not_lost(tmp_path: Path) -> None:
    entries, done = output()
    facility, severity, line = find(entries, 1, 1, 12)
    entries.append((facility, severity, cut(line, 60)))
    result = run(write(tmp_path / "logs", entries, done))
    assert per_sender(result, "truncated") == [1, 0, 0]
    assert per_sender(result, "received") == [61, 61, 61]
    assert per_sender(result, "lost") == [0, 0, 0]
    assert per_sender(result, "duplicated") == [0, 0, 0]
    assert result.clean is False


def test_every_message_cut_by_a_size_limit(tmp_path: Path) -> None:
    """A daemon that cuts every message short: each ordinary message truncated; the short DONEs whole."""
    entries, done = output()
    limited = [(f, v, line if line.endswith(b" DONE\n") else cut(line, 50)) for f, v, line in entries]
    result = run(write(tmp_path / "logs", limited, done))
    assert per_sender(result, "truncated") == [COUNT] * 3
    assert per_sender(result, "received") == [1, 1, 1]
    assert per_sender(result, "lost") == [COUNT] * 3
    assert per_sender(result, "done_seen") == [True] * 3
    assert (result.misfiled, result.unknown) == (0, 0)
    assert result.clean is False


def test_an_unknown_senders_cut_line_is_unknown_only(tmp_path: Path) -> None:
    entries, done = output()
    stranger = daemon_line(messages.render_line(SenderId(9, 1), 1, 42, "Nov 22 10:00:00", 7))
    entries.append((5, 2, cut(stranger, 40)))
    result = run(write(tmp_path / "logs", entries, done))
    assert result.unknown == 1
    assert per_sender(result, "truncated") == [0, 0, 0]


# --- whole lines in every output form ---------------------------------------------------------------------------


def message_of(framed: bytes, fmt: str) -> bytes:
    """The message text of a framed line, as a daemon's %msg% / $MSG holds it."""
    if fmt == "rfc5424":
        return framed.split(b" - - ", 1)[1]
    return framed.split(b"]: ", 1)[1].removesuffix(b"\n")


def rebuilt(message: bytes, payload: str) -> bytes:
    """What the json and kv rows write: "syslogbench h= s= q= f= v= <x>" from the parsed fields."""
    if payload == "json":
        parsed = json.loads(message)
    elif payload == "kv":
        parsed = dict(pair.split("=", 1) for pair in message.decode().split(" "))
    else:
        return message
    h, s, q, f, v, x = (parsed[key] for key in "hsqfvx")
    return f"syslogbench h={h} s={s} q={q} f={f} v={v} {x}".encode()


@pytest.mark.parametrize(
    ("fmt", "payload", "size"),
    [
        ("rfc3164", "text", 100),
        ("rfc3164", "text", 400),
        ("rfc5424", "text", 100),
        ("rfc3164", "json", 100),
        ("rfc3164", "json", 400),
        ("rfc3164", "kv", 100),
        ("rfc5424", "json", 100),
        ("rfc5424", "text", 80),  # too short for more than one x: the padding is the minimum
    ],
)
def test_whole_lines_of_every_form_arrive_whole(tmp_path: Path, fmt: str, payload: str, size: int) -> None:
    """Each scenario's output form, the JSON row's q without its leading zeros included, reconciles clean; the
    same lines judged as if they had been sent at another size are all truncated."""
    preprocess = {"json": "json", "kv": "kv"}.get(payload, "none")
    written = [
        b"2026-11-22T10:00:00+00:00 host%d bench[%d]: %s\n"
        % (s.host, s.sender, rebuilt(message_of(line, fmt), payload))
        for s in SENDERS
        for line in messages.render_lines(SEED, s, COUNT, NOW, size, fmt, payload)
    ]
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    (log_dir / "test.rsyslog.all.log").write_bytes(b"".join(written))
    (log_dir / "done.log").write_bytes(b"".join(line for line in written if line.endswith(b" DONE\n")))
    expect = Expectation(preprocess, format=fmt, message_bytes=size)
    result = reconcile.reconcile(log_dir, LEDGERS, SENDERS, PER_SENDER, expect)
    assert per_sender(result, "received") == [61, 61, 61]
    assert per_sender(result, "truncated") == [0, 0, 0]
    assert result.clean is True
    other = Expectation(preprocess, format=fmt, message_bytes=size + 50)
    result = reconcile.reconcile(log_dir, LEDGERS, SENDERS, PER_SENDER, other)
    assert per_sender(result, "truncated") == [COUNT] * 3
    assert per_sender(result, "received") == [1, 1, 1]  # the DONEs


def test_senders_with_longer_numbers_share_no_padding_with_shorter_ones(tmp_path: Path) -> None:
    """Host 12's and sender 10's messages have less padding than host 1's: each is judged by its own."""
    senders = [SenderId(1, 1), SenderId(12, 3), SenderId(2, 10)]
    entries, done = output(senders)
    entries = replace_line(entries, 12, 3, 7, cut(find(entries, 12, 3, 7)[2], 50))
    ledgers = {s.name: ledger(s) for s in senders}
    result = reconcile.reconcile(write(tmp_path / "logs", entries, done), ledgers, senders, PER_SENDER)
    assert per_sender(result, "received") == [61, 60, 61]
    assert per_sender(result, "truncated") == [0, 1, 0]
    # A line of host 1 padded as host 12's would be is not whole either.
    short = find(entries, 1, 1, 3)[2]
    entries = replace_line(entries, 1, 1, 3, short[:-3] + b"\n")  # two x fewer: one per extra digit
    result = reconcile.reconcile(write(tmp_path / "logs", entries, done), ledgers, senders, PER_SENDER)
    assert per_sender(result, "truncated") == [1, 1, 0]


def test_two_messages_run_together_on_one_line(tmp_path: Path) -> None:
    """A framing error that joins two messages: the first line's rest is not its padding (truncated), and the
    second message has no line of its own (lost)."""
    entries, done = output()
    first, second = find(entries, 2, 1, 20)[2], find(entries, 2, 1, 21)[2]
    joined = first[:-1] + second[second.index(b"syslogbench") :]
    entries = replace_line(without(entries, {(2, 1, 21)}), 2, 1, 20, joined)
    result = run(write(tmp_path / "logs", entries, done))
    assert per_sender(result, "truncated") == [0, 0, 1]
    assert per_sender(result, "lost") == [0, 0, 2]
    assert per_sender(result, "received") == [61, 61, 59]


# --- streaming: the files are read in blocks of whole lines, never whole ----------------------------------


def lossy_output() -> tuple[list[Entry], list[bytes]]:
    """Every kind of count at once: a loss, a duplicate, a misfiled line, a cut line, an unknown sender."""
    entries, done = output()
    entries = without(entries, {(1, 1, 7)})
    entries.append(find(entries, 1, 2, 3))
    facility, severity, line = find(entries, 2, 1, 11)
    entries = [*without(entries, {(2, 1, 11)}), ((facility + 1) % messages.FACILITIES, severity, line)]
    entries = replace_line(entries, 2, 1, 40, cut(find(entries, 2, 1, 40)[2], 45))
    entries.append((0, 0, daemon_line(messages.render_line(SenderId(9, 1), 1, 0, "Nov 22 10:00:00", 7))))
    return entries, done


@pytest.mark.parametrize("size", [1, 2, 7, 64, 101, 4096])
def test_counts_do_not_depend_on_where_the_reads_fall(tmp_path: Path, size: int) -> None:
    """Lines split across reads (a read of 1 byte splits every line) count as if each file were read whole."""
    log_dir = write(tmp_path / "logs", *lossy_output())
    whole = run(log_dir)
    assert per_sender(whole, "lost") == [1, 0, 1] and per_sender(whole, "duplicated") == [0, 1, 0]
    assert (whole.misfiled, whole.unknown, whole.total("truncated")) == (1, 1, 1)
    assert run(log_dir, block_bytes=size) == whole


def test_a_line_split_across_reads_counts_once(tmp_path: Path) -> None:
    """Blocks of whole lines (the rig's own tests: rig-rust/src/reconcile/tests.rs): a line that two reads
    split counts as one whole line, whatever the read size."""
    entries, done = output()
    log_dir = write(tmp_path / "logs", entries, done)
    for size in (6, 99, 100, 101):
        result = run(log_dir, block_bytes=size)
        assert per_sender(result, "received") == [PER_SENDER] * 3, size
        assert result.clean, size


def test_a_file_without_its_last_newline_still_counts_its_last_line(tmp_path: Path) -> None:
    entries, done = output()
    log_dir = write(tmp_path / "logs", entries, done)
    for path in log_dir.glob("test.*.log"):
        path.write_bytes(path.read_bytes().removesuffix(b"\n"))
    (log_dir / "done.log").write_bytes((log_dir / "done.log").read_bytes().removesuffix(b"\n"))
    result = run(log_dir)
    assert per_sender(result, "received") == [PER_SENDER] * 3
    assert result.done_log_lines == 3
    assert result.clean


def test_duplicates_in_two_files_count_once_each(tmp_path: Path) -> None:
    entries, done = output()
    facility, severity, line = find(entries, 1, 1, 20)
    entries += [(facility, severity, line), ((facility + 1) % messages.FACILITIES, severity, line)]
    result = run(write(tmp_path / "logs", entries, done))
    assert per_sender(result, "duplicated") == [2, 0, 0]
    assert per_sender(result, "received") == [PER_SENDER] * 3
    assert result.misfiled == 1


@pytest.mark.parametrize("seq", [0, PER_SENDER + 1, 10**15])
def test_sequence_numbers_beyond_what_was_sent_are_unknown_and_grow_nothing(tmp_path: Path, seq: int) -> None:
    entries, done = output()
    late = messages.render_line(SenderId(1, 1), seq, 42, "Nov 22 10:00:00", 7)
    entries.append((5, 2, daemon_line(late)))
    result = run(write(tmp_path / "logs", entries, done))
    assert result.unknown == 1
    assert per_sender(result, "received") == [PER_SENDER] * 3
    assert per_sender(result, "duplicated") == [0, 0, 0]


def test_an_overlong_line_is_read_cut_and_its_message_truncated(tmp_path: Path) -> None:
    """A line longer than LONGEST_LINE (a lost newline, say) is read as its first 4 MiB; the lines after it
    count as usual."""
    entries, done = output()
    facility, severity, line = find(entries, 1, 2, 8)
    long = line[:-1] + b"x" * (reconcile.LONGEST_LINE + 10) + b"\n"
    entries = replace_line(entries, 1, 2, 8, long)
    result = run(write(tmp_path / "logs", entries, done))
    assert per_sender(result, "truncated") == [0, 1, 0]
    assert per_sender(result, "received") == [PER_SENDER, PER_SENDER - 1, PER_SENDER]
    assert (result.misfiled, result.unknown) == (0, 0)


@pytest.mark.parametrize("size", [0, 1000, 4096 + 1])
def test_an_overlong_line_is_cut_wherever_the_reads_fall(tmp_path: Path, size: int) -> None:
    """A line over LONGEST_LINE without a key, then one with a key inside its first LONGEST_LINE bytes: each is
    cut the same whatever the reads, and the lines after them count."""
    entries, done = output()
    facility, severity, line = find(entries, 2, 1, 30)
    long = b"y" * (reconcile.LONGEST_LINE + 3) + b"\n" + line[:-1] + b"y" * reconcile.LONGEST_LINE + b"\n"
    entries = replace_line(entries, 2, 1, 30, long)
    result = run(write(tmp_path / "logs", entries, done), block_bytes=size)
    assert per_sender(result, "truncated") == [0, 0, 1]
    assert per_sender(result, "received") == [PER_SENDER, PER_SENDER, PER_SENDER - 1]
    assert (result.misfiled, result.unknown) == (0, 0)


def test_dropping_the_page_cache_changes_no_count(tmp_path: Path) -> None:
    log_dir = write(tmp_path / "logs", *lossy_output())
    assert reconcile.reconcile(log_dir, LEDGERS, SENDERS, PER_SENDER, forget=True) == run(log_dir)


def test_memory_does_not_grow_with_the_output(tmp_path: Path) -> None:
    """17 MiB of output read 64 KiB at a time: the rig's peak memory (its own record of it) stays a few MiB,
    the program and one read, far below the output."""
    entries, done = output()
    log_dir = write(tmp_path / "logs", entries * 1000, done)  # 183,000 lines, about 17 MiB
    result = run(log_dir, block_bytes=64 * 1024)
    # 1,000 copies of each message: the tally saturates at 255 occurrences, 254 of them duplicates.
    assert per_sender(result, "duplicated") == [254 * PER_SENDER] * 3
    assert result.output_bytes > 16 * 2**20
    assert 0 < result.rig_peak_rss_bytes < 8 * 2**20, f"peak {result.rig_peak_rss_bytes:,} bytes"
