"""Seed 004's pre-processing rows and seed 003's raw receive, on one daemon per family, at small scale.

Exact counts: every message a row must let through arrives once, none that it must drop arrives, and every
line shows the processing (rewritten host, rebuilt from parsed fields, stored raw).
"""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from syslogbench.host import profiles
from syslogbench.model import messages, preprocess
from syslogbench.model.messages import SenderId

from .conftest import ROOT, SMALL

pytestmark = pytest.mark.integration
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())
SEED = 2014
COUNT = int(SMALL["MESSAGES_PER_SENDER"])
PER_SENDER = COUNT + 1
SENDERS = [
    SenderId(h, s)
    for h in range(1, int(SMALL["HOSTS"]) + 1)
    for s in range(1, int(SMALL["SENDERS_PER_HOST"]) + 1)
]
# pre-none is not run here: its config is byte for byte plain's (bar the header comment), which
# test_scenarios_run.test_plain_file_destination runs on rsyslog 8.2302 and syslog-ng 3.28, and its 400-byte
# messages are test_200_connections's on these two profiles; every row below asserts its "nothing filtered,
# nothing unprocessed" accounting for the messages it keeps.
ROWS = ["pre-regexp", "pre-facility", "pre-hostname", "pre-json", "pre-kv", "raw"]
PREPROCESS = {
    "pre-none": "none",
    "pre-regexp": "regexp",
    "pre-facility": "facility-filter",
    "pre-hostname": "hostname-rewrite",
    "pre-json": "json",
    "pre-kv": "kv",
    "raw": "none",
}
KEY_RE = re.compile(rb"syslogbench h=(\d+) s=(\d+) q=(\d+) f=(\d+) v=(\d+) ")


def passes(row: str, line: bytes) -> bool:
    """The row's filter applied to a rendered line, independently of preprocess.expected_mask."""
    body = messages.BODY_RE.search(line)
    if body.group(6):  # every DONE passes
        return True
    if row == "pre-regexp":
        return int(body.group(3)) % 2 == 0
    if row == "pre-facility":
        return int(body.group(4)) <= 11
    return True


def expected_keys(row: str) -> set[tuple[int, int, int]]:
    """(host, sender, seq) of every message the row must let through."""
    keys = set()
    for sender in SENDERS:
        for line in messages.render_lines(SEED, sender, COUNT, 0):
            if passes(row, line):
                keys.add(tuple(int(g) for g in messages.BODY_RE.search(line).group(1, 2, 3)))
    return keys


def check_output(row: str, logs: dict[str, bytes], daemon: str) -> None:
    name = f"test.{daemon}.all.log"
    assert set(logs) == {name, "done.log"}
    lines = logs[name].splitlines()
    keys = [tuple(int(g) for g in KEY_RE.search(line).group(1, 2, 3)) for line in lines]
    assert len(keys) == len(set(keys)) == len(expected_keys(row))
    assert set(keys) == expected_keys(row)
    if row == "pre-hostname":
        assert all(re.search(rb" relay-host(\d+) .*syslogbench h=\1 ", line) for line in lines)
    if row == "raw":  # byte for byte what the senders rendered, bar the timestamp they stamped at run time
        assert all(
            re.fullmatch(rb"<\d{1,3}>\w{3} [ \d]\d \d\d:\d\d:\d\d host\d+ bench\[\d+\]: .*", x) for x in lines
        )
    if row in ("pre-json", "pre-kv"):  # rebuilt from the parsed fields: no trace of the payload's own form
        assert not any(b'{"h"' in line or b" x=" in line for line in lines)
        sizes = {len(line) for line in lines if not line.endswith(b" DONE")}
        assert min(sizes) > 300  # the 400-byte payload's padding came through the parser
    done = logs["done.log"].splitlines()
    assert len(done) == len(SENDERS) and all(line.endswith(b" DONE") for line in done)


def run_row(bench, profile: str, row: str) -> None:
    run = bench(profile, {"SCENARIO": row})
    result = run.result
    jsonschema.validate(result, SCHEMA)
    assert run.code == 0 and result["verdict"] == "pass", (result["errors"], run.output[-3000:])
    m = result["messages"]
    expected = len(expected_keys(row))
    sent = len(SENDERS) * PER_SENDER
    assert (m["sent"], m["expected"], m["received"]) == (sent, expected, expected)
    assert (m["filtered"], m["unexpected"], m["unprocessed"]) == (sent - expected, 0, 0)
    assert (m["lost"], m["duplicated"], m["unknown"], m["done_received"]) == (0, 0, 0, len(SENDERS))
    if row in ("pre-regexp", "pre-facility"):
        assert 0.4 * sent < expected < 0.6 * sent  # a filter that passed all or nothing would prove little
    assert result["scenario"]["id"] == row
    assert result["scenario"]["preprocess"] == PREPROCESS[row]
    assert result["scenario"]["receive"] == ("raw" if row == "raw" else "parsed")
    check_output(row, run.logs, profiles.resolve(profile).daemon)


@pytest.mark.parametrize("row", ROWS)
def test_rsyslog_rows(bench, row: str) -> None:
    run_row(bench, "rsyslog-8.2504", row)


@pytest.mark.parametrize("row", ROWS)
def test_syslog_ng_rows(bench, row: str) -> None:
    run_row(bench, "syslog-ng-4.8", row)


def test_messages_module_matches_this_files_key() -> None:
    line = next(messages.render_lines(SEED, SENDERS[0], 1, 0))
    assert KEY_RE.search(line)


def broken_config(tmp_path, profile: str, row: str, old: str, new: str):
    """The row's rendered config with one step undone, as a daemon that skipped it would behave."""
    text = (ROOT / "daemons" / profile / "scenarios" / f"{row}.conf").read_text()
    assert old in text
    path = tmp_path / f"{row}-broken.conf"
    path.write_text(text.replace(old, new))
    path.chmod(0o644)
    return path


def test_a_filter_that_lets_everything_through_is_loss(bench, tmp_path) -> None:
    config = broken_config(
        tmp_path,
        "rsyslog-8.2504",
        "pre-regexp",
        f'if re_match($msg, "{preprocess.FILTER_REGEXP}")',
        "if 1 == 1",
    )
    run = bench("rsyslog-8.2504", {"SCENARIO": "pre-regexp"}, config=config)
    m = run.result["messages"]
    dropped = len(SENDERS) * PER_SENDER - len(expected_keys("pre-regexp"))
    assert (run.code, run.result["verdict"]) == (1, "loss")
    assert (m["unexpected"], m["lost"], m["received"]) == (dropped, 0, m["expected"])


def test_a_host_name_left_alone_is_loss(bench, tmp_path) -> None:
    config = broken_config(tmp_path, "syslog-ng-4.8", "pre-hostname", " rewrite(r_pre);", "")
    run = bench("syslog-ng-4.8", {"SCENARIO": "pre-hostname"}, config=config)
    m = run.result["messages"]
    assert (run.code, run.result["verdict"]) == (1, "loss")
    assert (m["unprocessed"], m["lost"], m["unexpected"]) == (len(SENDERS) * PER_SENDER, 0, 0)
