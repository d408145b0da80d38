"""Scenarios beyond the seed, on one daemon per family, at small scale: exact counts again."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from syslogbench.host import profiles

from .conftest import ROOT
from .test_runs import check_done_log, check_plain_file, check_split_files

pytestmark = pytest.mark.integration
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())


@pytest.mark.parametrize("profile", ["rsyslog-8.2302", "syslog-ng-3.28"])
def test_plain_file_destination(bench, profile: str) -> None:
    run = bench(profile, {"SCENARIO": "plain"})
    jsonschema.validate(run.result, SCHEMA)
    assert run.code == 0 and run.result["verdict"] == "pass", run.result["errors"]
    assert run.result["scenario"]["destination"] == "plain"
    check_plain_file(run.logs, profiles.resolve(profile).daemon)
    check_done_log(run.logs)


# 4.12 spells it parallelize(workers(4)), 4.8 parallelize(partitions(4)) (the manifests' parallelize_option).
@pytest.mark.parametrize("profile", ["syslog-ng-4.8", "syslog-ng-4.12"])
def test_parallelize_on_one_connection(bench, profile: str) -> None:
    run = bench(profile, {"SCENARIO": "parallelize4", "HOSTS": "1", "SENDERS_PER_HOST": "1"})
    assert run.code == 0 and run.result["verdict"] == "pass", run.result["errors"]
    assert run.result["scenario"]["parallelize"] == 4 and run.result["scenario"]["connections"] == 1


def test_unsupported_combination_is_na_with_its_reason(bench) -> None:
    """Plain compose (no CLI check first): the watcher decides n/a from the manifest, the daemon never starts."""
    run = bench("rsyslog-8.2504", {"SCENARIO": "parallelize4"})
    jsonschema.validate(run.result, SCHEMA)
    assert run.result["verdict"] == "n/a"
    assert run.code == 4
    assert run.result["errors"] == [
        "n/a: rsyslog-8.2504 cannot run scenario parallelize4: needs the 'parallelize' feature"
    ]
    assert run.result["daemon"]["stopped"] is False
    assert all(c["State"] == "exited" for c in run.containers)


@pytest.mark.parametrize("profile", ["rsyslog-8.2102", "syslog-ng-3.38"])
def test_rfc5424_octet_counted(bench, profile: str) -> None:
    run = bench(profile, {"SCENARIO": "rfc5424"})
    jsonschema.validate(run.result, SCHEMA)
    assert run.code == 0 and run.result["verdict"] == "pass", run.result["errors"]
    assert (run.result["scenario"]["format"], run.result["scenario"]["framing"]) == (
        "rfc5424",
        "octet-counting",
    )
    check_split_files(run.logs, profiles.resolve(profile).daemon)
    check_done_log(run.logs)


def exact_counts(result: dict, senders: int, per_sender: int) -> None:
    messages = result["messages"]
    expected = senders * (per_sender + 1)
    assert (messages["sent"], messages["received"], messages["expected"]) == (expected, expected, expected)
    assert (messages["lost"], messages["duplicated"], messages["misfiled"], messages["unknown"]) == (
        0,
        0,
        0,
        0,
    )
    assert messages["done_log_lines"] == messages["done_received"] == senders


@pytest.mark.parametrize("profile", ["rsyslog-8.2504", "syslog-ng-4.8", "rsyslog-8.2610", "syslog-ng-4.12"])
def test_200_connections(bench, profile: str) -> None:
    """Seed 004's largest connection count; syslog-ng's max-connections is raised to fit it."""
    shape = {"HOSTS": "5", "SENDERS_PER_HOST": "40", "MESSAGES_PER_SENDER": "30"}
    run = bench(profile, {"SCENARIO": "conn200", **shape})
    jsonschema.validate(run.result, SCHEMA)
    assert run.code == 0 and run.result["verdict"] == "pass", run.result["errors"]
    assert run.result["scenario"]["connections"] == 200
    exact_counts(run.result, 200, 30)
    # 400-byte messages into the split files (this also stands for size400, whose only difference is the shape)
    assert run.result["scenario"]["message_bytes"] == 400
    daemon = profiles.resolve(profile).daemon
    split = re.compile(rf"test\.{re.escape(daemon)}\.facility\.\d+\.severity\.\d+\.log")
    assert [name for name in run.logs if name != "done.log" and not split.fullmatch(name)] == []
    sizes = {len(line) for data in run.logs.values() for line in data.splitlines() if b" DONE" not in line}
    assert min(sizes) > 380  # the daemon adds its own timestamp and host; our part is 400 bytes on the wire


def test_plain_compose_runs_a_connection_scenario_and_idles_the_generators_it_does_not_need(bench) -> None:
    """Plain compose starts 5 generators (GENERATORS' default); a variant of conn10 with 2 hosts uses two,
    and the other three idle until the run ends, then exit 0."""
    shape = {"HOSTS": "2", "SENDERS_PER_HOST": "5", "MESSAGES_PER_SENDER": "30"}
    run = bench("syslog-ng-4.8", {"SCENARIO": "conn10", **shape, "GENERATORS": "5"})
    assert run.code == 0 and run.result["verdict"] == "pass", run.result["errors"]
    assert run.result["scenario"]["connections"] == 10
    exact_counts(run.result, 10, 30)
    generators = [c for c in run.containers if c["Service"] == "generator"]
    # 0: it saw the run end; 143: compose's SIGTERM reached it first (`--exit-code-from` stops the rest once the
    # watcher exits). Neither is a failure; a SIGKILL (137) or an error (1) would be.
    assert [c["State"] for c in generators] == ["exited"] * 5
    assert {c["ExitCode"] for c in generators} <= {0, 143}, generators
    assert run.output.count("not needed, the run has 2 hosts") == 3
