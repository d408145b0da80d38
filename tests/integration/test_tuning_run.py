"""TUNING=tuned and `knobs`, on real rsyslog and syslog-ng at small scale: every message counted, per sender."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from syslogbench.host import families, profiles, render
from syslogbench.model import scenarios

from .conftest import PROJECT, ROOT, SMALL, daemon_params
from .test_runs import check_done_log, check_every_message_counted, check_split_files

pytestmark = pytest.mark.integration
# One profile per family with knobs: the one its alias names (rsyslog8, syslog-ng).
FAMILY_PROFILES = {profiles.resolve(alias).profile for alias in ("rsyslog8", "syslog-ng")}


@pytest.mark.parametrize("profile", daemon_params(lambda p: p.profile in FAMILY_PROFILES))
def test_tuned_passes_with_every_message_counted_and_records_its_knobs(bench, profile: str) -> None:
    run = bench(profile, {"TUNING": "tuned"})
    result = run.result
    check_every_message_counted(run)
    daemon = profiles.resolve(profile)
    check_split_files(run.logs, daemon.daemon)
    check_done_log(run.logs)
    # The knobs the result names are those the profile's tuned config was rendered with, by value.
    wanted = render.applied_for(daemon, scenarios.load("seed2014"), "tuned").values
    assert result["daemon"]["tuning"] == "tuned"
    assert {name: knob["value"] for name, knob in result["daemon"]["knobs"].items()} == wanted
    assert wanted, f"{profile} has no tuned knob for seed2014"


def test_the_default_run_says_default_with_no_knobs(bench) -> None:
    run = bench("syslog-ng-3.38", {"HOSTS": "1", "SENDERS_PER_HOST": "1"})
    assert run.result["verdict"] == "pass", run.result["errors"]
    assert (run.result["daemon"]["tuning"], run.result["daemon"]["knobs"]) == ("default", {})


def knobs_run(args: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], dict]:
    """`knobs` at small scale, one round, into tmp_path: the command's output and its study, once it passed."""
    small = ["HOSTS=1", "SENDERS_PER_HOST=2", f"MESSAGES_PER_SENDER={SMALL['MESSAGES_PER_SENDER']}"]
    done = subprocess.run(
        [sys.executable, "-m", "syslogbench", "knobs", *args, "--replicates", "1", "--results", str(tmp_path), *small],
        cwd=ROOT, env={**os.environ, "SYSLOGBENCH_PROJECT": PROJECT}, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (path,) = (tmp_path / "knobs").glob("*.json")
    return done, json.loads(path.read_text())


def test_knobs_gives_one_row_per_step_each_with_exact_counts(built, tmp_path: Path) -> None:
    args = [
        "--profile",
        "rsyslog-8.2504",
        "--knob",
        "file-cache=10,64",
        "--knob",
        "io-buffer",
        "--latency-rate",
        "off",
    ]
    done, data = knobs_run(args, tmp_path)
    names = [step["name"] for step in data["steps"]]
    alone = ["default", "default-as-run", "file-cache=10", "file-cache=64", "io-buffer"]
    assert names[:5] == alone and len(names) == 6, names  # then the best file cache with io-buffer
    # The knob that bought most alone comes first: at this scale either may.
    assert set(names[5].split("+")) in ({"file-cache=10", "io-buffer"}, {"file-cache=64", "io-buffer"}), names
    expected = 2 * (int(SMALL["MESSAGES_PER_SENDER"]) + 1)
    for step in data["steps"]:
        (run,) = step["runs"]
        assert run["verdict"] == "pass" and run["lost"] == 0, step
        written = json.loads((tmp_path / "knobs" / data["id"] / "runs" / f"{run['run_id']}.json").read_text())
        m = written["messages"]
        assert (m["sent"], m["received"], m["duplicated"], m["misfiled"]) == (expected, expected, 0, 0), step
        assert written["daemon"]["tuning"] == (
            "default" if step["phase"] in ("default", "control") else "custom"
        )
        values = {name: knob["value"] for name, knob in written["daemon"]["knobs"].items()}
        assert values == step["knobs"], step
    assert data["chain"][0] == "default" and data["chain"][-1] == names[5]
    knobs = families.get("rsyslog").knobs
    assert set(data["knobs"]) == {k.knob for k in knobs}
    assert all(line in done.stdout for line in alone)


def test_knobs_measures_each_steps_latency_at_one_fixed_rate_with_exact_counts(built, tmp_path: Path) -> None:
    done, data = knobs_run(
        ["--profile", "syslog-ng-4.8", "--knob", "no-dns", "--latency-rate", "2000", "TRIAL_FINAL=2"],
        tmp_path,
    )
    assert data["latency_rate"] == 2000.0
    by_name = {step["name"]: step for step in data["steps"]}
    assert by_name["default-as-run"]["latency"] is None  # the control's config is the default step's
    for name in ("default", "no-dns"):
        found = by_name[name]["latency"]
        assert found["error"] is None, found
        # Two senders at 1,000 msg/s each for 2 s: every message of the trial in, none late.
        assert (found["intended"], found["received"], found["lost"], found["late"]) == (4000, 4000, 0, 0), (
            found
        )
        assert 0 < found["p50_ms"] <= found["p99_ms"] <= found["max_ms"] < 1000, found
    assert "p99 ms" in done.stdout
