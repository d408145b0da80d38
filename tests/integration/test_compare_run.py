"""`compare` on real syslog-ng: a side against itself (the A/A control) is not told apart, and the same daemon
throttled to half its rate differs, below 1; every run's counts exact. Both sides are throttled so that their
drain rates are the throttle's, not the machine's mood: CI runs two test workers at once. `compare --capacity`
and `--duet` have files of their own, so that the test workers share the three (each several minutes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import PROJECT, ROOT

pytestmark = pytest.mark.integration
CONFIGS = ROOT / "tests/integration/configs"
FULL, HALF = CONFIGS / "user-syslog-ng-throttle-burst.conf", CONFIGS / "user-syslog-ng-throttle-half.conf"
SENDERS, COUNT = 2, 40_000  # 80,002 messages: 4 s at 20,000 msg/s, 8 s at 10,000


def test_a_side_against_itself_is_not_told_apart_and_a_side_at_half_its_rate_differs_below_one(
    built, tmp_path: Path
) -> None:
    sides = ["--side", f"syslog-ng-4.8={FULL}", "--side", f"syslog-ng-4.8={HALF}"]
    shape = ["HOSTS=1", f"SENDERS_PER_HOST={SENDERS}", f"MESSAGES_PER_SENDER={COUNT}"]
    done = subprocess.run(
        [sys.executable, "-m", "syslogbench", "compare", *sides, "--rounds", "3", "--results", str(tmp_path), *shape],
        cwd=ROOT, env={**os.environ, "SYSLOGBENCH_PROJECT": PROJECT}, capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (path,) = (tmp_path / "compare").glob("*.json")
    data = json.loads(path.read_text())
    assert len(data["runs"]) == 9 and {run["verdict"] for run in data["runs"]} == {"pass"}
    for run in data["runs"]:  # each side's every run counted exactly, against the senders' own record
        written = json.loads(
            (tmp_path / "compare" / data["id"] / "runs" / f"{run['run_id']}.json").read_text()
        )
        m = written["messages"]
        assert (m["sent"], m["received"], m["lost"]) == (SENDERS * (COUNT + 1),) * 2 + (0,), run
    ratios = {side: found["msgs_per_s"] for side, found in data["ratios"].items()}
    half, control = ratios[f"syslog-ng-4.8={HALF}"], ratios[f"syslog-ng-4.8={FULL} (A/A)"]
    assert not data["erratic"]["msgs_per_s"], (data["control_spread"], ratios)
    # Not told apart: its interval holds 1. How narrow it is depends on the machine: beside the other test worker
    # (make test, 2026-12-06) it was 0.861 to 1.101 over 3 rounds; that is a benchmark's figure, not this test's.
    # Not told apart where it is within the 5% floor, even where its interval leaves 1 out: throttled runs are
    # near exact, and make test of 2026-12-06 gave 1.0019 [1.001, 1.0029].
    assert control["verdict"] == "not told apart" and abs(control["value"] - 1.0) < 0.05, control
    assert half["verdict"] == "differs" and 0.4 < half["value"] < 0.6 and half["high"] < 1.0, half
    assert [side["tuning"] for side in data["sides"]] == ["user", "user"]
    assert "differs" in done.stdout and "not told apart" in done.stdout
