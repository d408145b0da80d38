"""The reconcile role's records between Python and the compiled rig (model/rigrecord.py, rig-rust/src/reconcile/records.rs):
each passes through both sides, and both refuse an unknown or a missing key; the rig's failures reach the watcher
as one line."""

from __future__ import annotations

import json
import subprocess
from dataclasses import fields
from pathlib import Path

import pytest

from syslogbench.model import rigrecord
from syslogbench.model.messages import SenderId
from syslogbench.model.preprocess import KINDS, RAW_PROOF, Expectation
from syslogbench.rig import compiled, reconcile

pytestmark = pytest.mark.usefixtures("rig")

SENDERS = [SenderId(1, 1), SenderId(12, 3)]


def rig_json(rig: Path, *options: str, request: object = None) -> object:
    stdin = None if request is None else json.dumps(request).encode()
    done = subprocess.run([rig, "reconcile", *options], input=stdin, capture_output=True, check=True)
    return json.loads(done.stdout)


def a_request(tmp_path: Path) -> rigrecord.Request:
    expect = Expectation("hostname-rewrite", format="rfc5424", message_bytes=400)
    masks = tmp_path / "masks"
    return reconcile.request("split", tmp_path, SENDERS, 61, expect, masks, True, 4096, tmp_path / "arrived")


def test_the_rigs_example_answer_reads_strictly(rig: Path) -> None:
    example = rig_json(rig, "--example")
    answer = rigrecord.read(rigrecord.Reconciled, example)
    assert rigrecord.write(answer) == example
    assert answer.senders[0] == rigrecord.SenderCounts(61, 60, 0, 1, 1, True)
    assert answer.files[0].facilities == [0, 23]
    # Every field of each record is in the example: nothing the rig writes goes unread here.
    assert set(example) == {f.name for f in fields(rigrecord.Reconciled)}
    assert set(example["senders"][0]) == {f.name for f in fields(rigrecord.SenderCounts)}
    assert set(example["files"][0]) == {f.name for f in fields(rigrecord.FileCounts)}


@pytest.mark.parametrize("where", ["top", "sender", "file"])
def test_python_refuses_an_unknown_or_a_missing_key(rig: Path, where: str) -> None:
    example = rig_json(rig, "--example")
    part = {"top": example, "sender": example["senders"][0], "file": example["files"][0]}[where]
    part["surplus"] = 1
    with pytest.raises(rigrecord.RecordError, match="unknown key 'surplus'"):
        rigrecord.read(rigrecord.Reconciled, example)
    del part["surplus"]
    removed = sorted(part)[0]
    del part[removed]
    with pytest.raises(rigrecord.RecordError, match=f"missing key '{removed}'"):
        rigrecord.read(rigrecord.Reconciled, example)


def test_python_refuses_a_value_of_the_wrong_type(rig: Path) -> None:
    example = rig_json(rig, "--example")
    example["unknown"] = "2"
    with pytest.raises(rigrecord.RecordError, match=r"record.unknown is \"2\", not a whole number"):
        rigrecord.read(rigrecord.Reconciled, example)
    example["unknown"], example["senders"][0]["done_seen"] = 2, 1
    with pytest.raises(rigrecord.RecordError, match="done_seen is 1, not true or false"):
        rigrecord.read(rigrecord.Reconciled, example)


def test_the_rig_reads_pythons_request_strictly(rig: Path, tmp_path: Path) -> None:
    written = rigrecord.write(a_request(tmp_path))
    assert rig_json(rig, "--check-request", request=written) == written
    assert rigrecord.read(rigrecord.Request, written) == a_request(tmp_path)
    for surplus in ({**written, "surplus": 1}, {**written, "proof": {**written["proof"], "flags": 0}}):
        done = subprocess.run([rig, "reconcile", "--check-request"], input=json.dumps(surplus).encode(),
                              capture_output=True, check=False)  # fmt: skip
        assert done.returncode == 3
        assert b"unknown field" in done.stderr
    missing = {key: value for key, value in written.items() if key != "masks"}
    done = subprocess.run([rig, "reconcile", "--check-request"], input=json.dumps(missing).encode(),
                          capture_output=True, check=False)  # fmt: skip
    assert done.returncode == 3 and b"missing field `masks`" in done.stderr


@pytest.mark.parametrize("proof", [RAW_PROOF, *(kind.proof for kind in KINDS.values() if kind.proof)])
def test_every_proof_pattern_compiles_in_the_rig(rig: Path, tmp_path: Path, proof: object) -> None:
    request = rigrecord.write(a_request(tmp_path))
    request["proof"] = rigrecord.write(reconcile.rig_proof(proof))  # type: ignore[arg-type]
    assert rig_json(rig, "--check-request", request=request) == request


def test_the_tails_table_holds_every_whole_tail_once(tmp_path: Path) -> None:
    """One table per lengths of host and sender number; 192 facility/severity pairs x lengths of q 1..7."""
    tables = reconcile.tail_tables(SENDERS, 61, Expectation())
    assert [(t.host_digits, t.sender_digits) for t in tables] == [(1, 1), (2, 1)]
    first = tables[0].whole
    assert sum(len(lengths) for lengths in first.values()) == 192 * 7
    # rfc3164, 100 bytes: "<0>Nov 22 10:00:00 host1 bench[1]: " (35) and "syslogbench h=1 s=1 q=0000001 f=0 v=0 "
    # (38): 26 x's with the newline; a q one digit shorter, one x more.
    assert first["f=0 v=0 " + "x" * 26] == [7]
    assert first["f=0 v=0 " + "x" * 27] == [6]
    assert first["f=23 v=7 " + "x" * 23] == [7]  # <191> and f=23 v=7: three bytes more, so three x fewer
    assert tables[1].whole["f=0 v=0 " + "x" * 24] == [7]  # host12 and h=12: two bytes more


def test_a_missing_rig_is_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(compiled.RIG_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(compiled.RigError) as caught:
        reconcile.reconcile(tmp_path, {}, SENDERS, 61)
    assert str(caught.value) == (
        f"syslogbench-rig not found at {tmp_path / 'nowhere'} ($SYSLOGBENCH_RIG); build it with: {compiled.BUILD}"
    )


def test_a_failing_rig_says_why_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "masks").write_bytes(b"\x00\x01")  # not per_sender + 1 bytes per sender
    asked = reconcile.request("split", tmp_path, SENDERS, 61, Expectation(), tmp_path / "masks", False)
    with pytest.raises(compiled.RigError, match=r"^syslogbench-rig reconcile failed: "
                       r"the masks file .*masks: 2 bytes, not 62 per sender$"):  # fmt: skip
        reconcile.ask(asked)


def test_a_rig_that_hangs_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hang = tmp_path / "hang"
    hang.write_text("#!/bin/sh\nexec sleep 30\n")
    hang.chmod(0o755)
    monkeypatch.setenv(compiled.RIG_ENV, str(hang))
    with pytest.raises(compiled.RigError, match=r"gave no answer within 0.5 s \(stopped\)"):
        compiled.call("reconcile", {}, timeout=0.5)
