"""`compare` on real syslog-ng: a side against itself (the A/A control) is not told apart, and the same daemon
throttled to half its rate differs, below 1; every run's counts exact. Both sides are throttled so that their
drain rates are the throttle's, not the machine's mood: CI runs two test workers at once."""

from __future__ import annotations

import collections
import json
import math
import os
import statistics
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


# A short TCP search (test_capacity.py's), each side's RATE_MAX from its burst (no RATE_MAX given). CI runs
# another test worker beside it: a daemon held up there for more than LATENCY_BOUND loses a whole trial, so the
# bound is 3 s here (1 s by default).
SEARCH = ["SCENARIO=seed2014", "HOSTS=1", "SENDERS_PER_HOST=4", "RATE_MIN=1000", "SEARCH_WIDTH=0.1",
          "TRIAL_INITIAL=1", "TRIAL_FINAL=2", "TRIAL_PAUSE=0.5", "SEARCH_MAX=150", "TRIAL_SUM=0", "EXCEED_RATIO=0",
          "CONFIRM_S=0", "LATENCY_BOUND=3"]  # fmt: skip
NDR = "ndr_msgs_per_s"


def test_capacity_searches_taking_turns_are_paired_round_by_round_with_every_trial_counted(
    built, tmp_path: Path
) -> None:
    """syslog-ng-4.8 against rsyslog-8.2504 over seed2014, both at their defaults. The searches of a round take
    turns, one trial at a time; every trial's counts are exact; no search's RATE_MAX is its own default; only
    rounds where both searches found a rate are paired, and the ratio is their geometric mean; a verdict follows
    its interval. Which side holds more is a benchmark's answer (docs/findings/compare-capacity.md), not this
    test's: with 2 s trials, a 3 s bound and another test worker beside it, queues decide as much as daemons
    (CI's run of 2026-12-06 paired one round at 1.505, rsyslog above syslog-ng), a search may end unconfirmed
    or at least its RATE_MAX, and the A/A control may spread so far that nothing is judged (0.769 over 2
    rounds). The control is never "differs". Two rounds, the fewest that have an interval: with three it was
    the suite's longest test (700 s in a fresh-clone make test, 2026-12-06)."""
    first, other, control = "syslog-ng-4.8", "rsyslog-8.2504", "syslog-ng-4.8 (A/A)"
    argv = ["compare", "--capacity", "--side", first, "--side", other, "--rounds", "2", "--results", str(tmp_path),
            *SEARCH]  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "syslogbench", *argv], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "SYSLOGBENCH_PROJECT": PROJECT}, timeout=2400)  # fmt: skip
    said = done.stdout[-3000:] + done.stderr[-3000:]
    (path,) = (tmp_path / "compare").glob("*.json")
    data = json.loads(path.read_text())
    assert data["measure"] == "capacity" and len(data["runs"]) == 6, data["runs"]
    verdicts = {run["verdict"] for run in data["runs"]}
    # Never an error or a failed search. "at least": a search held its RATE_MAX, set from a burst the other test
    # worker slowed (make test, 2026-12-06): never paired (tests/unit/test_compare_capacity.py).
    assert verdicts <= {"pass", "unconfirmed", "at least"}, data["runs"]
    assert done.returncode == (0 if verdicts == {"pass"} else 3), said
    for turns in data["turns"]:  # every search's trials among the others', not one search after another:
        # until the first search ends, each time round is each search once
        least = min(collections.Counter(turns).values())
        assert least >= 3 and set(turns) == {first, other, control}, turns
        assert all(set(turns[3 * i : 3 * i + 3]) == {first, other, control} for i in range(least)), turns
    searches = list((tmp_path / "compare" / data["id"] / "searches").glob("round-*/*/capacity/*.json"))
    assert len(searches) == 6
    for found in searches:
        search = json.loads(found.read_text())
        assert search["outcome"] in {"found", "unconfirmed"}, search["outcome"]
        assert "interleaved" in " ".join(search["notes"]), search["notes"]
        assert search["ceiling"]["source"] == "burst", search["ceiling"]  # never the search's own default
        for trial in search["trials"]:  # every message counted, against each sender's own record
            for sender in trial["senders"]:
                assert sender["sent"] == sender["received"] + sender["lost"], sender
    ndr = {
        (run["side"], run["round"]): run["ndr_msgs_per_s"] for run in data["runs"] if run["verdict"] == "pass"
    }
    mine = [ndr[other, r] / ndr[first, r] for r in (1, 2) if (other, r) in ndr and (first, r) in ndr]
    ratios = {side: found[NDR] for side, found in data["ratios"].items()}
    assert ratios[other]["pairs"] == len(mine), (ratios[other], ndr)  # only rounds both found below RATE_MAX
    ratio = ratios[other]
    if mine:  # the ratio is the paired rounds' geometric mean, whichever way it points
        mean = math.exp(statistics.fmean(math.log(r) for r in mine))
        assert ratio["value"] == pytest.approx(mean, abs=1e-4), (ratio, mine)
    else:
        assert ratio["value"] is None and ratio["verdict"] == "no ratio", ratio
    if len(mine) < 2:  # one pair has no interval, and so no verdict that it differs
        assert ratio["low"] is None and ratio["high"] is None and ratio["verdict"] != "differs", ratio
    elif data["erratic"][NDR]:
        assert ratio["verdict"] == "erratic", ratio
    else:  # "differs" only where the interval leaves 1 out and the ratio is past the control's floor
        apart = (ratio["high"] < 1.0 or ratio["low"] > 1.0) and abs(ratio["value"] - 1) >= data["floor"][NDR]
        assert ratio["verdict"] == ("differs" if apart else "not told apart"), (ratio, data["floor"])
        assert ratio["low"] <= ratio["value"] <= ratio["high"], ratio
    assert ratios[control]["verdict"] in {"not told apart", "erratic", "no ratio"}, ratios[control]
    assert "(capacity searches)" in done.stdout and "NDR ratio" in done.stdout


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
            for sender in trial["senders"]:
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
    assert data["ratios"][control][CPU]["verdict"] in {"not told apart", "erratic", "no ratio"}, data[
        "ratios"
    ]
    assert "duet" in done.stdout and "CPU per message ratio" in done.stdout


def trial_window(trials: list[dict], trial: dict) -> int:
    """A window's number: its trial's place among its side's windows (the warm-up is not kept)."""
    return trials.index(trial) + 1
