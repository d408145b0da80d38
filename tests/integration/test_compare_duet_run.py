"""`compare --duet` on real syslog-ng and rsyslog: every side's daemon at once on one core, each window's CPU per
message paired, every window counted exactly."""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from syslogbench.model.codec import rows

from .conftest import PROJECT, ROOT, assert_control_judged

pytestmark = pytest.mark.integration

# Each side at a rate far below saturation on a shared core, beside the other test worker.
DUET = ["SCENARIO=seed2014", "HOSTS=1", "SENDERS_PER_HOST=2", "RATE_MIN=500", "TRIAL_INITIAL=1", "TRIAL_FINAL=3",
        "TRIAL_PAUSE=0.5", "SEARCH_MAX=120", "CONFIRM_S=0", "LATENCY_BOUND=3"]  # fmt: skip
CPU = "cpu_us_per_msg"


def test_a_duet_runs_every_sides_daemon_at_once_and_pairs_each_windows_cpu_per_message(
    built, tmp_path: Path
) -> None:
    """syslog-ng-4.8 and rsyslog-8.2504 at their defaults, each under its own senders at 2,000 msg/s, with the
    first side's A/A control beside them: three stacks up at once, their daemons on one core. Every window of
    every side is a trial whose counts are exact per sender; a window passes where all arrived in time; each
    ratio is the geometric mean of the windows' CPU-per-message ratios. Which daemon spends less is the
    benchmark's answer (docs/findings/compare-duet.md), not this test's."""
    first, other, control = "syslog-ng-4.8", "rsyslog-8.2504", "syslog-ng-4.8 (A/A)"
    argv = ["compare", "--duet", "2000", "--side", first, "--side", other, "--rounds", "3", "--results",
            str(tmp_path), *DUET]  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "syslogbench", *argv], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "SYSLOGBENCH_PROJECT": PROJECT}, timeout=900)  # fmt: skip
    said = done.stdout[-3000:] + done.stderr[-3000:]
    (path,) = (tmp_path / "compare").glob("*.json")
    data = json.loads(path.read_text())
    assert (data["measure"], data["rate_msgs_per_s"], data["window_s"]) == ("duet", 2000.0, 3.0), said
    runs = {(run["side"], run["round"]): run for run in data["runs"]}
    assert sorted(runs) == sorted((s, r) for s in (first, other, control) for r in (1, 2, 3)), said
    assert done.returncode == (0 if all(r["verdict"] == "pass" for r in runs.values()) else 3), said
    assert {r["verdict"] for r in runs.values()} <= {"pass", "loss", "core full"}, said
    kept = list((tmp_path / "compare" / data["id"] / "windows").glob("*.json"))
    assert len(kept) == 3, kept
    for found in kept:  # every window a trial at the duet's rate, every message counted against its sender
        lane = json.loads(found.read_text())
        assert len(lane["trials"]) == 3 and lane["why"] == "", lane["why"]
        for trial in lane["trials"]:
            assert (trial["purpose"], trial["offered_msgs_per_s"], trial["intended"]) == (
                "duet",
                2000.0,
                6000,
            )
            for sender in rows(trial["senders"], "senders"):  # written as columns
                assert sender["sent"] == sender["received"] + sender["lost"], sender
            run = runs[lane["side"], trial_window(lane["trials"], trial)]
            assert run["cpu_us_per_msg"] == pytest.approx(
                trial["daemon_cpu_s"] / trial["received"] * 1e6, abs=1e-3
            )
            busy = trial["daemon_cores_busy_s"] / (
                trial["daemon_cores_busy_s"] + trial["daemon_cores_idle_s"]
            )
            delivered = trial["received"] == 6000 and trial["late"] == 0
            # A core the other test worker's daemon filled too is "core full": never paired.
            assert run["verdict"] == ("loss" if not delivered else "core full" if busy >= 0.9 else "pass"), (
                run
            )
    mine = [runs[other, r][CPU] / runs[first, r][CPU] for r in (1, 2, 3)
            if runs[other, r]["verdict"] == runs[first, r]["verdict"] == "pass"]  # fmt: skip
    ratio = data["ratios"][other][CPU]
    assert ratio["pairs"] == len(mine), (ratio, said)  # only windows both passed
    if mine:  # the geometric mean of the windows' ratios
        mean = math.exp(statistics.fmean(math.log(r) for r in mine))
        assert ratio["value"] == pytest.approx(mean, abs=2e-4), (ratio, mine)
    else:
        assert ratio["verdict"] == "no ratio", ratio
    assert_control_judged(data["ratios"][control][CPU], data["erratic"][CPU])
    assert "duet" in done.stdout and "CPU per message ratio" in done.stdout


def trial_window(trials: list[dict], trial: dict) -> int:
    """A window's number: its trial's place among its side's windows (the warm-up is not kept)."""
    return trials.index(trial) + 1
