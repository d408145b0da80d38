"""A message counts only if it arrived whole: a daemon that cuts messages short is reported as loss."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from syslogbench.contract import EXIT_CODES

from .conftest import ROOT, SMALL

pytestmark = pytest.mark.integration
CONFIGS = ROOT / "tests" / "integration" / "configs"
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())
SENDERS = int(SMALL["HOSTS"]) * int(SMALL["SENDERS_PER_HOST"])
COUNT = int(SMALL["MESSAGES_PER_SENDER"])
LIMIT = 256  # the configs' $MaxMessageSize and log-msg-size(); size400 sends 400-byte messages, DONEs of under 100
KEY_RE = re.compile(rb"syslogbench h=\d+ s=\d+ q=\d+ ")


@pytest.mark.parametrize(
    ("profile", "config"),
    [("rsyslog-8.2504", "rsyslog-truncating.conf"), ("syslog-ng-4.8", "syslog-ng-truncating.conf")],
    ids=["rsyslog", "syslog-ng"],
)
def test_messages_cut_by_a_size_limit_are_truncated_and_loss(bench, profile: str, config: str) -> None:
    run = bench(profile, {"SCENARIO": "size400"}, config=CONFIGS / config)
    result = run.result
    jsonschema.validate(result, SCHEMA)
    assert result["verdict"] == "loss", result["errors"]
    assert run.code == EXIT_CODES["loss"]
    m = result["messages"]
    # Every ordinary message arrived, cut; only the DONEs arrived whole.
    assert m["truncated"] == SENDERS * COUNT
    assert (m["received"], m["lost"]) == (SENDERS, SENDERS * COUNT)
    assert (m["duplicated"], m["misfiled"], m["unknown"]) == (0, 0, 0)
    assert (m["done_received"], m["done_log_lines"], m["done_log_extra"]) == (SENDERS, SENDERS, 0)
    for sender in result["senders"]:
        assert (sender["sent"], sender["received"], sender["truncated"]) == (COUNT + 1, 1, COUNT), sender

    # The files themselves: every line with a key is cut at the limit (its header counts towards it), or a DONE.
    lines = [
        line
        for name, data in run.logs.items()
        if name.startswith("test.") and ".facility." in name
        for line in data.splitlines()
        if KEY_RE.search(line)
    ]
    assert len(lines) == SENDERS * (COUNT + 1)
    cut = [line for line in lines if not line.endswith(b" DONE")]
    assert len(cut) == SENDERS * COUNT
    assert all(line.endswith(b"x") and len(line[line.index(b"syslogbench") :]) < LIMIT for line in cut)
