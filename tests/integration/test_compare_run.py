"""`compare` on real syslog-ng: a side against itself is not told apart, and a side throttled to a rate
below the daemon's drain rate differs, below 1; every run's counts exact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import PROJECT, ROOT

pytestmark = pytest.mark.integration
THROTTLED = ROOT / "tests/integration/configs/user-syslog-ng-throttle-burst.conf"
SENDERS, COUNT = 2, 40_000  # 80,002 messages: 4 s at the throttle's 20,000 msg/s


def test_a_side_against_itself_is_not_told_apart_and_a_throttled_side_differs_below_one(
    built, tmp_path: Path
) -> None:
    sides = [
        "--side",
        "syslog-ng-4.8",
        "--side",
        "syslog-ng-4.8@default",
        "--side",
        f"syslog-ng-4.8={THROTTLED}",
    ]
    shape = ["HOSTS=1", f"SENDERS_PER_HOST={SENDERS}", f"MESSAGES_PER_SENDER={COUNT}"]
    done = subprocess.run(
        [sys.executable, "-m", "syslogbench", "compare", *sides, "--rounds", "3", "--results", str(tmp_path), *shape],
        cwd=ROOT, env={**os.environ, "SYSLOGBENCH_PROJECT": PROJECT}, capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (path,) = (tmp_path / "compare").glob("*.json")
    data = json.loads(path.read_text())
    assert len(data["runs"]) == 12 and {run["verdict"] for run in data["runs"]} == {"pass"}
    for run in data["runs"]:  # each side's every run counted exactly, against the senders' own record
        written = json.loads(
            (tmp_path / "compare" / data["id"] / "runs" / f"{run['run_id']}.json").read_text()
        )
        m = written["messages"]
        assert (m["sent"], m["received"], m["lost"]) == (SENDERS * (COUNT + 1),) * 2 + (0,), run
    ratios = {side: found["msgs_per_s"] for side, found in data["ratios"].items()}
    throttled = ratios[f"syslog-ng-4.8={THROTTLED}"]
    assert not data["erratic"], (data["control_spread"], done.stdout[-2000:])
    assert throttled["verdict"] == "differs" and throttled["high"] < 1.0, throttled
    assert ratios["syslog-ng-4.8@default"]["verdict"] == "not told apart", ratios
    assert ratios["syslog-ng-4.8 (A/A)"]["verdict"] == "not told apart", ratios
    assert [side["tuning"] for side in data["sides"]] == ["default", "default", "user"]
    assert "differs" in done.stdout and "not told apart" in done.stdout
