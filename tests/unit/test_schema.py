"""results/schema.json is a valid schema, agrees with the result model, and every committed result follows it."""

from __future__ import annotations

import copy
import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from syslogbench.host import render
from syslogbench.model import result as model
from tests.unit.conftest import result_document

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
SCHEMA = json.loads((RESULTS / "schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
# results/ holds the report's runs; results/reshaping/ the before/after runs of the package reshaping and
# results/fingerprint/ the small runs docs/findings/fingerprint-machines.md cites, results/scale/ the largest
# runs (docs/findings/largest-run.md) and results/harness/ those of the harness's own CPU
# (docs/findings/harness-cpu.md), results/swarm/ the
# runs of docs/swarm.md (a three-node swarm on one machine beside one host), results/noise/ and results/cov/ the
# replicates of docs/findings/run-noise.md, and results/warmup/ a matrix's warm-up runs, kept apart so that the
# report does not pool them with the committed matrix.
RESULT_FILES = sorted(
    path
    for path in [
        *RESULTS.glob("*.json"),
        *RESULTS.glob("reshaping/*.json"),
        *RESULTS.glob("fingerprint/*.json"),
        *RESULTS.glob("scale/*.json"),
        *RESULTS.glob("harness/**/*.json"),
        *RESULTS.glob("swarm/*.json"),
        *RESULTS.glob("noise/*.json"),
        *RESULTS.glob("cov/*.json"),
        *RESULTS.glob("warmup/*.json"),
    ]
    if path.name != "schema.json"
)
# The smallest whole result the schema accepts (tests/unit/conftest.py).
MINIMAL = result_document()


def changed(dotted: str, value: Any) -> dict[str, Any]:
    """MINIMAL with one value replaced; a path like "messages.lost" or "senders.0.lost"."""
    result = copy.deepcopy(MINIMAL)
    *parents, key = dotted.split(".")
    target: Any = result
    for parent in parents:
        target = target[int(parent)] if isinstance(target, list) else target[parent]
    if value is KeyError:
        del target[key]
    else:
        target[key] = value
    return result


def test_schema_is_valid_draft_2020_12() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_minimal_example_is_valid() -> None:
    assert list(VALIDATOR.iter_errors(MINIMAL)) == []


@pytest.mark.parametrize(
    ("dotted", "value"),
    [
        ("messages.lost", -1),
        ("verdict", "great"),
        ("schema_version", 1),
        ("scenario.variant", KeyError),
        ("scenario.variant", "5 hosts"),
        ("run_id", "yesterday"),
        ("senders.0.duplicated", -3),
        ("host.cgroup_version", 3),
        ("limits.central_cpus", {"requested": 8}),
        ("messages.received", KeyError),
        ("messages.truncated", -1),
        ("senders.0.truncated", "some"),
        ("colour", "blue"),
    ],
)
def test_invalid_examples_fail(dotted: str, value: Any) -> None:
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(changed(dotted, value))


@pytest.mark.parametrize(
    "path",
    RESULT_FILES or [pytest.param(None, id="no-results-yet")],
    ids=lambda path: path.name if isinstance(path, Path) else str(path),
)
def test_committed_result_validates(path: Path | None) -> None:
    """Each file loads into the model, whatever its version, and comes out as the schema says, losing nothing."""
    if path is None:
        assert RESULT_FILES == []
        return
    raw = json.loads(path.read_text())
    document = model.Result.from_dict(raw).to_dict()
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(document)]
    assert errors == [], f"{path.name} does not follow results/schema.json"
    assert lost_or_changed(raw, model.upgrade(raw)) == []
    assert lost_or_changed(model.upgrade(raw), document) == [], f"{path.name}: the model dropped a figure"


def lost_or_changed(before: Any, after: Any, where: str = "") -> list[str]:
    """Every value of before that after lacks or holds differently (keys after adds are fine)."""
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        for key, value in before.items():
            if key == "schema_version":
                continue
            if key not in after:
                found.append(f"{where}/{key}: missing")
            else:
                found += lost_or_changed(value, after[key], f"{where}/{key}")
        return found
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            diff
            for i, (b, a) in enumerate(zip(before, after, strict=True))
            for diff in lost_or_changed(b, a, f"{where}/{i}")
        ]
    return (
        [] if before == after and type(before) is type(after) else [f"{where}: {before!r} became {after!r}"]
    )


def test_version_1_gets_its_variant_from_the_load_shape() -> None:
    old = changed("schema_version", 1)
    del old["scenario"]["variant"]
    assert model.Result.from_dict(old).scenario.variant == "default"
    old["scenario"]["senders_per_host"] = 10
    old["scenario"]["messages_per_sender"] = 20000
    assert model.Result.from_dict(old).scenario.variant == "5x10x20000"
    assert "variant" not in old["scenario"]  # the upgrade leaves what it read as it was


def test_a_version_2_result_without_its_variant_is_refused() -> None:
    with pytest.raises(model.ResultError, match="scenario: missing key 'variant'"):
        model.Result.from_dict(changed("scenario.variant", KeyError))


def test_an_unknown_key_is_refused_with_its_place() -> None:
    with pytest.raises(model.ResultError, match="result.cpu: unknown key 'colour'"):
        model.Result.from_dict(changed("cpu.colour", "blue"))


def test_minimal_example_round_trips_through_the_model() -> None:
    assert lost_or_changed(MINIMAL, model.Result.from_dict(MINIMAL).to_dict()) == []


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    return SCHEMA["$defs"][ref.rsplit("/", 1)[1]] if ref else node


def object_schemas(node: dict[str, Any], kind: type, where: str) -> list[tuple[str, dict[str, Any], type]]:
    """Each (place, schema object, dataclass) pair under node, found by walking the dataclass's fields."""
    pairs = [(where, node, kind)]
    hints = typing.get_type_hints(kind)
    for f in dataclasses.fields(kind):
        hint = hints[f.name]
        args = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
        for arg in args:
            inner, sub = arg, resolve(node["properties"][f.name])
            if typing.get_origin(arg) is list:
                inner, sub = typing.get_args(arg)[0], sub.get("items", {})
            if isinstance(inner, type) and dataclasses.is_dataclass(inner):
                pairs += object_schemas(sub, inner, f"{where}.{f.name}")
    return pairs


def test_schema_and_model_name_the_same_keys() -> None:
    """Every object of the document: the schema's properties are the dataclass's fields, and what the schema
    requires, the model always writes."""
    for where, node, kind in object_schemas(SCHEMA, model.Result, "result"):
        names = {f.name for f in dataclasses.fields(kind)}
        assert set(node["properties"]) == names, where
        omitted = {f.name for f in dataclasses.fields(kind) if f.metadata.get("omit_if_none")}
        assert set(node.get("required", [])) & omitted == set(), where


UDP_BLOCK: dict[str, Any] = {
    "sent": 8004,
    "received": 7900,
    "lost": 104,
    "drop_rate": 0.012994,
    "kernel": {
        "in_datagrams": 7900,
        "in_errors": 104,
        "rcvbuf_errors": 104,
        "no_ports": 0,
        "drop_rate": 0.012994,
    },
}


def test_udp_run_example_is_valid() -> None:
    document = changed("end.trigger", "udp-quiet")
    document["udp"] = copy.deepcopy(UDP_BLOCK)
    document["rate"] = {
        "target_per_sender": 2500,
        "target_total": 10000,
        "achieved_per_sender": {"min": 2479.3, "median": 2480.8, "max": 2488.1},
        "achieved_total": 9917.1,
    }
    assert list(VALIDATOR.iter_errors(document)) == []
    document["udp"]["kernel"] = None
    assert list(VALIDATOR.iter_errors(document)) == []


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("drop_rate", 1.5),
        ("lost", -1),
        ("kernel", {"in_datagrams": 1}),
        ("colour", "blue"),
    ],
)
def test_invalid_udp_blocks_fail(key: str, value: Any) -> None:
    document = copy.deepcopy(MINIMAL)
    document["udp"] = copy.deepcopy(UDP_BLOCK) | {key: value}
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(document)


def test_a_result_without_truncated_loads_and_stays_without() -> None:
    """Results from before the whole-line check lack the count: they load, and are written back without it."""
    assert "truncated" not in MINIMAL["messages"] and "truncated" not in MINIMAL["senders"][0]
    loaded = model.Result.from_dict(MINIMAL)
    assert loaded.messages.truncated is None and loaded.senders[0].truncated is None
    document = loaded.to_dict()
    assert "truncated" not in document["messages"] and "truncated" not in document["senders"][0]
    with_count = changed("messages.truncated", 3)
    assert list(VALIDATOR.iter_errors(with_count)) == []
    assert model.Result.from_dict(with_count).messages.truncated == 3


def test_the_scenario_part_is_what_the_field_records_render() -> None:
    """The scenario's axes are declared once (model/scenarios.py FIELDS): `make render` writes their schema."""
    text = (RESULTS / "schema.json").read_text()
    assert render.result_schema(text) == text, (
        "results/schema.json is stale: run `python -m syslogbench render`"
    )
    axes = SCHEMA["properties"]["scenario"]["properties"]
    assert axes["message_bytes"] == {"type": "integer", "minimum": 80}
    assert axes["transport"] == {"enum": ["tcp", "udp", "tls"]}


def test_the_end_triggers_are_the_contracts_enum() -> None:
    import json
    from pathlib import Path

    from syslogbench.contract import Trigger

    schema = json.loads((Path(__file__).resolve().parents[2] / "results" / "schema.json").read_text())
    listed = schema["properties"]["end"]["properties"]["trigger"]["enum"]
    assert listed == [trigger.value for trigger in Trigger]
