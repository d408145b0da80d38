"""The one typed boundary between the Python rig and the compiled one (rig-rust): every record and request
passes through both sides, each refusing a key the other does not know, or lacking one it needs."""

from __future__ import annotations

import json
import subprocess
from dataclasses import fields

import pytest

from syslogbench.model import rigrecord
from syslogbench.model.rigrecord import RecordError
from syslogbench.rig import compiled

REQUEST_KINDS = {op: kind for kind, op in rigrecord.REQUESTS.items()}
# What is read without its op: the requests, and the reconcile role's answer, which carries no op of its own
# (the rig writes it alone); its line in `syslogbench-rig examples` names it "reconciled".
BODY_KINDS = REQUEST_KINDS | {"reconciled": rigrecord.Reconciled}


def rig(*argv: str, stdin: str = "") -> list[str]:
    done = subprocess.run(
        [str(compiled.binary()), *argv], input=stdin, capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout.splitlines()


@pytest.fixture(scope="module")
def examples() -> list[dict]:
    return [json.loads(line) for line in rig("examples")]


def python_side(data: dict) -> object:
    """The example as Python reads it: a record by its op, a request (or reconcile's answer) by its op less
    the op itself."""
    op = data["op"]
    if op in rigrecord.RECORDS:
        return rigrecord.record_of(json.dumps(data))
    body = {key: value for key, value in data.items() if key != "op"}
    return rigrecord.read(BODY_KINDS[op], body)


def test_every_kind_of_every_role_has_an_example_from_the_compiled_rig(examples: list[dict]) -> None:
    ops = [example["op"] for example in examples]
    send = {"send", "close", "sent", "closed", "connected", "failed"}
    follow = {"trial", "expect", "drain", "tally", "drained", "forgot"}
    reconcile = {"reconciled"}
    assert sorted(ops) == sorted(send | follow | reconcile), ops  # each once
    wanted = set(rigrecord.REQUESTS.values()) | set(rigrecord.RECORDS) - {"following"} | {"reconciled"}
    assert set(ops) == wanted


def test_the_reconcile_example_is_the_roles_own_answer_with_its_op(examples: list[dict]) -> None:
    """`examples` carries reconcile's answer as `reconcile --example` writes it, with the op added."""
    (reconciled,) = (example for example in examples if example["op"] == "reconciled")
    (answer,) = rig("reconcile", "--example")
    assert reconciled == json.loads(answer) | {"op": "reconciled"}


def test_python_reads_every_example_and_writes_it_back_the_same(examples: list[dict]) -> None:
    for example in examples:
        read = python_side(example)
        again = json.loads(rigrecord.request_line(read, example["op"]))
        assert again == example, example["op"]


def test_the_compiled_rig_reads_what_python_writes(examples: list[dict]) -> None:
    lines = [rigrecord.request_line(python_side(example), example["op"]) for example in examples]
    assert rig("check", stdin="\n".join(lines) + "\n") == ["ok"] * len(lines)


def test_both_sides_refuse_an_unknown_key_and_a_missing_one(examples: list[dict]) -> None:
    for example in examples:
        extra = example | {"surplus": 1}
        first = next(key for key in example if key != "op")
        short = {key: value for key, value in example.items() if key != first}
        said = rig("check", stdin=json.dumps(extra) + "\n" + json.dumps(short) + "\n")
        assert "unknown field `surplus`" in said[0], (example["op"], said)
        assert f"missing field `{first}`" in said[1], (example["op"], said)
        for bad, why in ((extra, "unknown key 'surplus'"), (short, f"missing key '{first}'")):
            with pytest.raises(RecordError, match=why):
                python_side(bad)


def test_every_python_field_is_in_the_rust_example(examples: list[dict]) -> None:
    """The field lists are the same on both sides (a field with a default in Python could hide otherwise)."""
    by_op = {example["op"]: example for example in examples}
    for op, example in by_op.items():
        kind = rigrecord.RECORDS.get(op) or BODY_KINDS[op]
        names = {f.name for f in fields(kind)} - {"op"}
        assert names == set(example) - {"op"}, op


def test_both_sides_number_a_trials_messages_alike() -> None:
    """The trial's number sits above the same span in Python's sequence numbers and the follower's."""
    from pathlib import Path

    from syslogbench.model import capacity

    key = Path(__file__).resolve().parents[2] / "rig-rust" / "src" / "key.rs"
    line = next(line for line in key.read_text().splitlines() if "const TRIAL_SEQ_SPAN" in line)
    assert int(line.split("=")[1].strip(" ;").replace("_", "")) == capacity.TRIAL_SEQ_SPAN
