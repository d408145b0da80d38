"""Where a trial's time goes beyond its length: the watcher's setup and wrap-up, and the host's whole wait with
its `docker compose exec`, each recorded in the trial (model.capacity.Trial setup_s, wrapup_s, asked_s)."""

from __future__ import annotations

import json
import subprocess
import threading

import pytest

from syslogbench.host.capacity import session
from syslogbench.model import capacity
from syslogbench.rig import trialserver


def test_the_watcher_records_its_time_before_the_start_and_after_the_schedule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trialserver.time, "time", lambda: 1013.5)
    # Asked at 1000.0, started at 1001.2, 10 s long, answered at 1013.5: 1.2 s before, 2.3 s after.
    record = trialserver.timed({"number": 3}, asked=1000.0, start=1001.2, duration=10.0)
    assert (record["setup_s"], record["wrapup_s"]) == (1.2, 2.3)
    trial = capacity.trial_from_dict(record | {"offered_msgs_per_s": 1.0, "duration_s": 10.0} | ZERO)
    assert (trial.setup_s, trial.wrapup_s, trial.asked_s) == (1.2, 2.3, None)


def test_an_answer_without_a_trial_gets_no_times() -> None:
    assert trialserver.timed({"error": "no"}, asked=1000.0, start=1001.0, duration=1.0) == {"error": "no"}
    assert trialserver.timed({"number": 1}, asked=1000.0, start=None, duration=1.0) == {"number": 1}


class Runner:
    def __init__(self, answer: dict) -> None:
        self.answer = answer

    def exec(self, env: dict, service: str, args: list[str], timeout_s: float) -> subprocess.CompletedProcess:
        return subprocess.CompletedProcess(args, 0, json.dumps(self.answer) + "\n", "")


def test_the_host_records_its_whole_wait_for_a_trial_s_answer() -> None:
    alive = threading.Thread(target=lambda: None)
    alive.is_alive = lambda: True  # type: ignore[method-assign]
    cap = capacity.CapacitySettings()
    answer = session.ask(Runner({"number": 1}), {}, 100.0, 1.0, cap, alive, [])  # type: ignore[arg-type]
    assert answer["number"] == 1 and 0.0 <= answer["asked_s"] < 60.0, answer
    refused = session.ask(Runner({"error": "the daemon stopped"}), {}, 100.0, 1.0, cap, alive, [])  # type: ignore[arg-type]
    assert "asked_s" not in refused, refused


ZERO = {name: 0 for name in ("intended", "sent", "received", "lost", "late", "unsent", "duplicated")} | {
    "loss_ratio": 0.0,
    "achieved_msgs_per_s": None,
    "sender_bound": False,
    "sample_s": None,
    "stale_lines": 0,
    "daemon_cpu_s": None,
    "watcher_cpu_s": None,
    "udp_rcvbuf_errors": None,
    "udp_in_errors": None,
}
