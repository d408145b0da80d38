"""Scenario files: typed, validated, errors that name the file and the key."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import yaml

from syslogbench.model import preprocess, result, scenarios

SEED = {
    "id": "x",
    "description": "d",
    "transport": "tcp",
    "format": "rfc3164",
    "message_bytes": 100,
    "destination": "split",
    "parallelize": 0,
    "hosts": 5,
    "senders_per_host": 4,
    "messages_per_sender": 300_000,
    "done_threshold": 0,
    "done_window": 60,
    "seed": 2014,
}


def write(directory: Path, name: str, data: dict) -> None:
    (directory / f"{name}.yaml").write_text(yaml.safe_dump(data))


def test_committed_scenarios_load_and_seed2014_is_the_2014_setup() -> None:
    ids = [s.id for s in scenarios.all_scenarios()]
    assert "seed2014" in ids and len(ids) == len(set(ids))
    seed = scenarios.load("seed2014")
    assert (seed.transport, seed.format, seed.message_bytes, seed.destination, seed.parallelize) == (
        "tcp",
        "rfc3164",
        100,
        "split",
        0,
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"colour": "red"}, "x.yaml: unknown key 'colour'"),
        (
            {"transport": "carrier-pigeon"},
            "x.yaml: transport='carrier-pigeon' is not one of ['tcp', 'udp', 'tls']",
        ),
        ({"message_bytes": "big"}, "x.yaml: message_bytes must be a int, got 'big'"),
        ({"message_bytes": 20}, "x.yaml: message_bytes=20 is below 80"),
        ({"parallelize": -1}, "x.yaml: parallelize=-1 is below 0"),
        ({"parallelize": True}, "x.yaml: parallelize must be a int, got True"),
        ({"destination": "kafka"}, "x.yaml: destination='kafka' is not one of ['split', 'plain', 'relay']"),
        ({"id": "y"}, "x.yaml: id 'y' must equal the file name 'x'"),
        ({"rate": -5}, "x.yaml: rate=-5 is below 0"),
        ({"preprocess": "magic"}, "x.yaml: preprocess='magic' is not one of"),
        ({"buffer": "disk-reliable"}, "x.yaml: buffer='disk-reliable' needs destination: relay"),
        ({"relay_target": "slow"}, "x.yaml: relay_target='slow' needs destination: relay"),
        ({"receive": "raw"}, "x.yaml: receive: raw cannot split by facility"),
        ({"hosts": 0}, "x.yaml: hosts=0 is below 1"),
        ({"messages_per_sender": "many"}, "x.yaml: messages_per_sender must be a int, got 'many'"),
        (
            {"connections": 50},
            "x.yaml: connections: 50 but hosts x senders_per_host = 5 x 4 = 20: make them agree",
        ),
        ({"done_threshold": 21}, "x.yaml: done_threshold: 21 exceeds the 20 senders"),
    ],
)
def test_bad_values_name_the_file_and_key(tmp_path: Path, change: dict, message: str) -> None:
    write(tmp_path, "x", {**SEED, **change})
    with pytest.raises(scenarios.ScenarioError) as error:
        scenarios.load("x", tmp_path)
    assert message in str(error.value)


def test_missing_key_and_unknown_id(tmp_path: Path) -> None:
    data = dict(SEED)
    del data["destination"]
    write(tmp_path, "x", data)
    with pytest.raises(scenarios.ScenarioError, match="missing key 'destination'"):
        scenarios.load("x", tmp_path)
    with pytest.raises(scenarios.ScenarioError, match=r"unknown scenario 'nope': set SCENARIO to one of x"):
        scenarios.load("nope", tmp_path)


def test_unsupported_names_the_missing_feature() -> None:
    parallel = scenarios.load("parallelize4")
    assert scenarios.unsupported(parallel, ["plain-file"]) == ["needs the 'parallelize' feature"]
    assert scenarios.unsupported(parallel, ["plain-file", "parallelize"]) == []
    assert scenarios.unsupported(scenarios.load("seed2014"), []) == []
    assert scenarios.unsupported(scenarios.load("plain"), []) == ["needs the 'plain-file' feature"]


def test_keys_added_later_take_their_defaults(tmp_path: Path) -> None:
    write(tmp_path, "x", SEED)
    loaded = scenarios.load("x", tmp_path)
    assert (loaded.rate, loaded.connections, loaded.preprocess, loaded.receive) == (0, 0, "none", "parsed")
    assert (loaded.buffer, loaded.relay_target) == ("none", "normal")
    assert loaded.needs() == []


def test_needs_maps_each_value_to_its_feature(tmp_path: Path) -> None:
    write(tmp_path, "x", {**SEED, "transport": "udp", "destination": "relay", "buffer": "disk-assisted"})
    assert scenarios.load("x", tmp_path).needs() == ["udp", "relay", "disk-assisted"]
    write(tmp_path, "x", {**SEED, "transport": "tls", "preprocess": "json", "parallelize": 2})
    assert scenarios.load("x", tmp_path).needs() == ["tls", "parallelize", "pre-json"]


def test_every_scenario_but_the_connection_counts_keeps_the_seed_load() -> None:
    """Frozen ids: adding the load to the files must not change what any of them ran at the seed's shape."""
    for scenario in scenarios.all_scenarios():
        load = tuple(getattr(scenario, key) for key in scenarios.LOAD)
        if not scenario.connections:
            assert load == (5, 4, 300_000, 0, 60, 2014), scenario.id


def test_connection_scenarios_move_the_seed_total_over_their_connections() -> None:
    shapes = {s.id: s.shape for s in scenarios.all_scenarios() if s.connections}
    assert shapes == {
        "conn1": (1, 1, 6_000_000),
        "conn10": (5, 2, 600_000),
        "conn50": (5, 10, 120_000),
        "conn100": (5, 20, 60_000),
        "conn200": (5, 40, 30_000),
    }
    for scenario in scenarios.all_scenarios():
        if scenario.connections:
            assert scenario.hosts * scenario.senders_per_host == scenario.connections, scenario.id


def test_as_dict_holds_the_axes_and_leaves_the_load_to_the_settings() -> None:
    axes = scenarios.load("conn50").as_dict()
    assert axes["connections"] == 50 and axes["message_bytes"] == 400
    assert not set(axes) & set(scenarios.LOAD)


# --- files that cannot be read: one line naming the file (and the line), never a traceback ---------------------
# PyYAML's own words stand where PYYAML is: the line is compared by what it tells the user (the file, the
# line, what to change), not by a third party's wording.
PYYAML = "<PyYAML's words>"


def said_as(line: str, expected: str) -> bool:
    """line is expected, with any one-line text where PYYAML stands."""
    pattern = re.escape(expected).replace(re.escape(PYYAML), r"[^\n]+")
    return re.fullmatch(pattern, line) is not None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b'id: x\ndescription: "unclosed\n',
            f"x.yaml:3: not valid YAML ({PYYAML}): fix that line (quotes, brackets, indentation with spaces)",
        ),
        (
            b"id: x\n  transport: [tcp\n",
            f"x.yaml:2: not valid YAML ({PYYAML}): fix that line (quotes, brackets, indentation with spaces)",
        ),
        (
            b"id: x\n\ttransport: tcp\n",
            f"x.yaml:2: not valid YAML ({PYYAML}): fix that line (quotes, brackets, indentation with spaces)",
        ),
        (b"id: x\ndescription: caf\xe9\n", "x.yaml:2: not UTF-8 (byte 0xe9): save the file as UTF-8"),
        (
            b"- id: x\n- transport: tcp\n",
            "x.yaml: expected a mapping of keys, got list: write `key: value` lines, as in seed2014.yaml",
        ),
        (
            b"just words\n",
            "x.yaml: expected a mapping of keys, got str: write `key: value` lines, as in seed2014.yaml",
        ),
        (
            b"",
            "x.yaml: expected a mapping of keys, got NoneType: write `key: value` lines, as in seed2014.yaml",
        ),
    ],
)
def test_a_file_that_is_not_a_scenario_is_one_line(tmp_path: Path, content: bytes, message: str) -> None:
    (tmp_path / "x.yaml").write_bytes(content)
    with pytest.raises(scenarios.ScenarioError) as error:
        scenarios.load("x", tmp_path)
    assert said_as(str(error.value), f"{tmp_path}/{message}"), error.value


def test_one_bad_value_is_one_line_and_several_are_listed(tmp_path: Path) -> None:
    write(tmp_path, "x", {**SEED, "rate": -5})
    with pytest.raises(scenarios.ScenarioError) as error:
        scenarios.load("x", tmp_path)
    assert str(error.value) == "x.yaml: rate=-5 is below 0"
    write(tmp_path, "x", {**SEED, "rate": -5, "hosts": 0})
    with pytest.raises(scenarios.ScenarioError) as error:
        scenarios.load("x", tmp_path)
    assert (
        str(error.value)
        == "invalid scenario:\n  - x.yaml: rate=-5 is below 0\n  - x.yaml: hosts=0 is below 1"
    )


def test_the_result_records_every_axis_the_file_declares() -> None:
    """One record per key: the result's scenario (model/result/scenario.py) takes each axis of FIELDS."""
    recorded = {f.name for f in dataclasses.fields(result.Scenario)}
    assert {field.name for field in scenarios.FIELDS if not field.load} <= recorded
    assert scenarios.KEYS["preprocess"].allowed == tuple(preprocess.KINDS)
