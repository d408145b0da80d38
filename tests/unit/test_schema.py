"""results/schema.json is a valid schema, and every committed result follows it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
SCHEMA = json.loads((RESULTS / "schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
RESULT_FILES = sorted(path for path in RESULTS.glob("*.json") if path.name != "schema.json")
GIB = 2**30


def limit(requested: float, effective: float | None) -> dict[str, Any]:
    return {"requested": requested, "configured": requested, "effective": effective}


MINIMAL: dict[str, Any] = {
    "schema_version": 1,
    "run_id": "20261122T100000Z-rsyslog-8.2504",
    "started_utc": "2026-11-22T10:00:00Z",
    "finished_utc": "2026-11-22T10:01:00Z",
    "verdict": "pass",
    "errors": [],
    "notes": [],
    "scenario": {
        "id": "seed2014",
        "hosts": 5,
        "senders_per_host": 4,
        "messages_per_sender": 300000,
        "transport": "tcp",
        "format": "rfc3164",
        "port": 514,
        "done_threshold": 20,
        "done_window_s": 60,
        "run_timeout_s": 900,
        "seed": 2014,
    },
    "daemon": {
        "profile": "rsyslog-8.2504",
        "name": "rsyslog",
        "version": "rsyslogd  8.2504.0 (aka 2025.04) compiled with:",
        "image": "syslogbench/rsyslog-8.2504:local",
        "base": "pull debian:trixie-slim@sha256:3a39",
        "settings": {},
        "stopped": True,
        "exit_code": 0,
    },
    "limits": {
        "central_cpus": limit(8, 8),
        "central_memory_bytes": limit(2 * GIB, 2 * GIB),
        "remote_cpus": limit(2, 2),
        "remote_memory_bytes": limit(GIB / 2, GIB / 2),
    },
    "host": {
        "cpu_model": "Test CPU",
        "cores": 8,
        "memory_bytes": 16 * GIB,
        "kernel": "6.1.0",
        "docker_version": "27.0.0",
        "cgroup_version": 2,
    },
    "elapsed_s": 42.5,
    "end": {"trigger": "sec", "sec_fired_s": 42.6, "done_spread_s": 1.5},
    "cpu": {"user_s": 30.25, "system_s": 20.75, "percent": 120.0},
    "memory": {"peak_bytes": None, "max_rss_bytes": None},
    "io": {"write_bytes": None, "output_bytes": 600002000},
    "messages": {
        "expected": 6000020,
        "sent": 6000020,
        "received": 6000020,
        "lost": 0,
        "duplicated": 0,
        "misfiled": 0,
        "done_expected": 20,
        "done_received": 20,
        "done_log_lines": 20,
    },
    "senders": [
        {
            "id": "host1-s1",
            "status": "ok",
            "sent": 300001,
            "received": 300001,
            "lost": 0,
            "duplicated": 0,
            "done_seen": True,
        }
    ],
    "throughput": {"msgs_per_s": 141176.9, "mb_per_s": 14.1},
    "summary": "30.25user 20.75system 0:42.50elapsed 120%CPU",
}


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
        ("schema_version", 2),
        ("run_id", "yesterday"),
        ("senders.0.duplicated", -3),
        ("host.cgroup_version", 3),
        ("limits.central_cpus", {"requested": 8}),
        ("messages.received", KeyError),
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
    if path is None:
        assert RESULT_FILES == []
        return
    result = json.loads(path.read_text())
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(result)]
    assert errors == [], f"{path.name} does not follow results/schema.json"


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
