"""Relay scenarios at small scale: the central daemon forwards to the last hop, which writes what is counted.

Exact counts at the last hop against the senders' ledgers. The buffer runs use 4 x 25,000 messages (about
10 MB on the wire), more than the kernel's socket buffers hold, so the daemon's queue has to take the backlog.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from syslogbench.model import messages
from syslogbench.rig import lasthop

from .conftest import ROOT
from .test_runs import SEED, SENDERS, bodies, check_done_log, check_plain_file

pytestmark = pytest.mark.integration
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())
BUFFER_LOAD = {"MESSAGES_PER_SENDER": "25000"}
OUTPUT_FILES = {lasthop.OUTPUT, "done.log"}  # the central daemon writes nothing of its own


def expected_bodies(count: int) -> set[bytes]:
    found = set()
    for sender in SENDERS:
        for line in messages.render_lines(SEED, sender, count, 0):
            found.add(messages.BODY_RE.search(line).group(0))
    return found


def check_counts(result: dict, per_sender: int) -> None:
    """Every message exactly once at the last hop, and the last hop's own report agrees."""
    expected = len(SENDERS) * (per_sender + 1)
    m = result["messages"]
    assert (m["sent"], m["received"], m["lost"], m["duplicated"], m["unknown"]) == (
        expected,
        expected,
        0,
        0,
        0,
    )
    assert m["done_received"] == m["done_log_lines"] == len(SENDERS)
    hop = result["relay"]["last_hop"]
    assert (hop["lines"], hop["done_lines"], hop["resets"]) == (expected, len(SENDERS), 0)


@pytest.mark.parametrize("profile", ["rsyslog-8.2504", "syslog-ng-4.8", "rsyslog-8.2610", "syslog-ng-4.12"])
def test_relay_delivers_every_message_to_the_last_hop(bench, profile: str) -> None:
    run = bench(profile, {"SCENARIO": "relay"})
    jsonschema.validate(run.result, SCHEMA)
    assert run.code == 0 and run.result["verdict"] == "pass", run.result["errors"]
    check_counts(run.result, 2000)
    check_plain_file(run.logs, "lasthop")  # every body, once, and no file from the central daemon
    check_done_log(run.logs)
    hop = run.result["relay"]["last_hop"]
    assert (hop["host"], hop["port"], hop["target"]) == ("lasthop", 1514, "normal")
    assert run.result["relay"]["queue"]["buffer"] == "none"


@pytest.mark.parametrize(
    ("profile", "scenario"),
    [
        ("syslog-ng-4.8", "relay-pause-disk-reliable"),
        ("syslog-ng-4.8", "relay-slow-disk-normal"),
        ("syslog-ng-4.12", "relay-pause-disk-reliable"),  # sid's: capacity-bytes() as in 4.8
    ],
)
def test_disk_buffer_loses_nothing_while_the_last_hop_is_paused_or_slow(
    bench, profile: str, scenario: str
) -> None:
    run = bench(profile, {"SCENARIO": scenario, **BUFFER_LOAD})
    jsonschema.validate(run.result, SCHEMA)
    assert run.code == 0 and run.result["verdict"] == "pass", run.result["errors"]
    check_counts(run.result, 25000)
    assert set(run.logs) == OUTPUT_FILES
    assert set(bodies(run.logs[lasthop.OUTPUT])) == expected_bodies(25000)
    relay, hop = run.result["relay"], run.result["relay"]["last_hop"]
    # The backlog went to the disk buffer on the queue volume, not only into socket buffers.
    assert relay["queue"]["peak_bytes"] > 5_000_000, relay["queue"]["samples"]
    if hop["target"] == "pause":
        assert hop["first_line_s"] >= lasthop.PAUSE_S - 0.05  # nothing was read during the pause
        assert run.result["elapsed_s"] > lasthop.PAUSE_S
    else:
        read_s = hop["last_line_s"] - hop["first_line_s"]
        assert read_s >= 0.9 * hop["lines"] / lasthop.SLOW_LINES_PER_S, read_s


def test_rsyslog_disk_assisted_queue_while_the_last_hop_is_paused(bench) -> None:
    """Every message accounted for; zero loss is what the mode promises, and a loss is reported, not hidden.

    On this machine rsyslog 8.2102-8.2504 lost a few messages (4 in most runs, a few hundred in some) in this
    scenario, with its queue files empty after the stop and no reset connection; see docs/DESIGN.md. In one
    run of the full suite it had not resumed sending when the watcher stopped it (no line at the last hop for
    5 s) and saved the rest to its queue files: undelivered in the run, so counted as lost.
    """
    run = bench("rsyslog-8.2504", {"SCENARIO": "relay-pause-disk-assisted", **BUFFER_LOAD})
    jsonschema.validate(run.result, SCHEMA)
    m, relay = run.result["messages"], run.result["relay"]
    expected = len(SENDERS) * 25001
    assert m["sent"] == expected and m["received"] + m["lost"] == expected
    assert (m["duplicated"], m["unknown"], m["done_received"]) == (0, 0, len(SENDERS))
    assert set(bodies(run.logs[lasthop.OUTPUT])) <= expected_bodies(25000)
    assert relay["last_hop"]["lines"] == m["received"]
    assert relay["queue"]["peak_bytes"] > 0, "the disk-assisted queue never went to disk"
    # Bytes left in the queue files after the stop are messages saved for a later start (saveOnShutdown),
    # not delivered in this run: they must show as lost here.
    queued = relay["queue"]["bytes_after_stop"]
    assert m["lost"] > 0 or queued == 0, f"{queued} bytes left in the queue files, yet every message arrived"
    assert run.result["verdict"] == ("pass" if m["lost"] == 0 else "loss")
    assert run.code == (0 if m["lost"] == 0 else 1)
    if m["lost"]:
        pytest.xfail(
            f"rsyslog's disk-assisted queue did not deliver {m['lost']} of {expected} messages while the last hop "
            f"paused ({relay['last_hop']['connections']} connections to it, {relay['last_hop']['resets']} reset, "
            f"{queued} bytes still in its queue files after the stop)"
        )


# reliable(yes) only: the restart path is the same for both, and the normal disk-buffer config is run by
# test_disk_buffer_loses_nothing_while_the_last_hop_is_paused_or_slow (relay-slow-disk-normal).
@pytest.mark.parametrize("scenario", ["relay-restart-disk-reliable"])
def test_syslog_ng_disk_buffer_keeps_every_message_over_a_restart(bench, scenario: str) -> None:
    """Every message queued when syslog-ng is restarted (SIGTERM) arrives once the last hop reads again.

    Nothing lost is the promise of both modes over a clean restart. The normal buffer may send a message twice
    (seen: 1 of 200,004 once); the reliable one did not in any run here, and is held to exactly once.
    """
    run = bench("syslog-ng-4.8", {"SCENARIO": scenario, **BUFFER_LOAD})
    jsonschema.validate(run.result, SCHEMA)
    relay, hop, m = run.result["relay"], run.result["relay"]["last_hop"], run.result["messages"]
    restart = relay["restart"]
    # Restarted with every message accepted and the last hop still paused: the queue held them all.
    assert restart["exit_code"] == 0, run.result["errors"]
    assert restart["senders_done_s"] < restart["requested_s"] < hop["paused_until_s"]
    assert hop["connections"] == 2  # one before the restart, one after
    assert relay["queue"]["peak_bytes"] > 5_000_000
    assert (m["sent"], m["received"], m["lost"], m["unknown"]) == (100004, 100004, 0, 0)
    assert m["done_received"] == m["done_log_lines"] == len(SENDERS)
    # A message cut by the stop goes to the fragments file and is resent whole.
    assert hop["lines"] == m["received"] + m["duplicated"]
    assert set(bodies(run.logs[lasthop.OUTPUT])) == expected_bodies(25000)
    if scenario == "relay-restart-disk-reliable" or m["duplicated"] == 0:
        assert m["duplicated"] == 0 and run.code == 0 and run.result["verdict"] == "pass"
    else:
        assert run.result["verdict"] == "loss" and run.code == 1  # a duplicate is reported, never smoothed


def test_rsyslog_disk_assisted_queue_over_a_restart(bench) -> None:
    """Exact accounting; a loss is reported with its figures (rsyslog keeps its in-memory main queue apart).

    On this machine rsyslog 8.2504 lost about 84,000 of 100,004 messages here, the DONEs among them, so the run
    ends at RUN_TIMEOUT: the messages still in its main queue (memory) were discarded at the stop; only the
    action queue is disk-assisted. See docs/DESIGN.md. RUN_TIMEOUT leaves room for the restart, which comes
    once every sender is done: suite runs on busy machines saw 15 s, 30 s and 45 s (load about 15) end the run before it.
    """
    run = bench(
        "rsyslog-8.2504", {"SCENARIO": "relay-restart-disk-assisted", **BUFFER_LOAD, "RUN_TIMEOUT": "90"}
    )
    jsonschema.validate(run.result, SCHEMA)
    m, relay = run.result["messages"], run.result["relay"]
    # What ended the run and what the relay saw, should the restart not have come.
    assert relay["restart"]["exit_code"] == 0, (run.result["errors"], run.result["end"], relay)
    assert m["sent"] == 100004 and m["received"] + m["lost"] == m["sent"]
    assert (m["duplicated"], m["unknown"]) == (0, 0)
    assert (
        relay["last_hop"]["lines"] == m["received"]
    )  # a message cut by the stop is a fragment, not received
    if m["lost"]:
        assert run.result["verdict"] in ("loss", "timeout")
        pytest.xfail(
            f"rsyslog lost {m['lost']} of {m['sent']} messages over a restart with a disk-assisted action queue "
            f"(verdict {run.result['verdict']}, {m['done_received']} of 4 DONE arrived)"
        )
    assert run.result["verdict"] == "pass"
