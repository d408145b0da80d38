"""A search's RATE_MAX, when not given, from a burst run's drain rate just before it (host/capacity/ceiling.py),
and a search whose NDR reaches its RATE_MAX read as "at least"."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from syslogbench.host import onehost
from syslogbench.host.capacity import ceiling as capacity_ceiling
from syslogbench.host.capacity import searchplan
from syslogbench.model import capacity, scenarios
from tests.unit.test_report import replicate

SHAPE = {"SCENARIO": "seed2014", "HOSTS": "1", "SENDERS_PER_HOST": "4"}


def test_without_rate_max_the_plan_holds_a_burst_run_of_the_same_shape() -> None:
    chosen = searchplan.plan("rsyslog8", dict(SHAPE), onehost.OneHost())
    assert chosen.burst is not None
    assert (chosen.burst.cfg.senders, chosen.burst.cfg.messages_per_sender) == (4, 500_000)
    assert chosen.burst.scenario.id == "seed2014" and chosen.burst.profile == chosen.plan.profile
    given = searchplan.plan("rsyslog8", {**SHAPE, "RATE_MAX": "4000"}, onehost.OneHost())
    assert given.burst is None and given.cap.rate_max == 4000.0


@pytest.mark.parametrize(
    ("rate", "up"), [(123_456.0, 124_000.0), (1_000.0, 1_000.0), (999_001.0, 1_000_000.0), (87.31, 87.4)]
)
def test_a_rate_max_is_rounded_up_to_three_figures(rate: float, up: float) -> None:
    assert capacity_ceiling.rounded_up(rate) == pytest.approx(up)


def fake_burst(monkeypatch: pytest.MonkeyPatch, msgs_per_s: float, verdict: str = "pass") -> list[dict]:
    seen: list[dict] = []

    def run(self: object, chosen: object, staging: Path, options: object) -> int:
        seen.append({"env": options.extra_env, "messages": chosen.cfg.messages_per_sender})  # type: ignore[attr-defined]
        found = replicate("rsyslog-8.2504", 1, msgs_per_s, verdict=verdict)
        (staging / f"{found['run_id']}.json").write_text(json.dumps(found))
        return 0

    monkeypatch.setattr(onehost.OneHost, "refuse_unfit", lambda self, chosen: None)
    monkeypatch.setattr(onehost.OneHost, "run", run)
    return seen


def test_the_burst_sets_rate_max_at_three_times_its_drain_rate_on_the_searchs_cores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = fake_burst(monkeypatch, 188_574.0)
    chosen = searchplan.plan("rsyslog8", dict(SHAPE, DAEMON_CORES="1"), onehost.OneHost())
    searched, ceiling = capacity_ceiling.ceiling(chosen, tmp_path, False, (), lambda line: None)
    assert searched.cap.rate_max == 566_000.0  # 3 x 188,574 = 565,722, up to three figures
    assert (ceiling.source, ceiling.rate_max, ceiling.burst_msgs_per_s, ceiling.factor) == (
        "burst", 566_000.0, 188_574.0, 3.0,
    )  # fmt: skip
    cores = chosen.cpu_placement
    assert seen[0]["env"] == {"DAEMON_CPUSET": cores["daemon"], "RIG_CPUSET": cores["senders"]}
    assert (tmp_path / "capacity" / "bursts" / f"{ceiling.burst_run_id}.json").is_file()  # kept beside
    assert not list((tmp_path / "capacity").glob("*.json"))  # not read as a search


def test_a_burst_that_gives_no_rate_leaves_the_default_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_burst(monkeypatch, 100_000.0, verdict="error")
    chosen = searchplan.plan("rsyslog8", dict(SHAPE), onehost.OneHost())
    said: list[str] = []
    searched, ceiling = capacity_ceiling.ceiling(chosen, tmp_path, False, (), said.append)
    assert searched.cap.rate_max == capacity.CapacitySettings().rate_max
    assert ceiling.source == "default" and ceiling.why is not None and "verdict error" in ceiling.why
    assert said == [f"notice: {ceiling.why}"]


def test_a_paced_scenario_bursts_its_all_out_twin_and_keeps_at_least_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """udp sends 1,000 msg/s a sender: its own burst drains at that pace, whatever the daemon can take, so the
    burst runs udp-allout; over UDP all-out a daemon may keep less than at a lower rate: never below the
    default."""
    seen = fake_burst(monkeypatch, 20_000.0)
    chosen = searchplan.plan("rsyslog8", {**SHAPE, "SCENARIO": "udp"}, onehost.OneHost())
    assert chosen.burst is not None and chosen.paced is None
    assert (chosen.plan.scenario.id, chosen.burst.scenario.id) == ("udp", "udp-allout")
    assert chosen.burst.cfg.senders == chosen.plan.cfg.senders == 4
    said: list[str] = []
    searched, ceiling = capacity_ceiling.ceiling(chosen, tmp_path, False, (), said.append)
    default = capacity.CapacitySettings().rate_max
    assert len(seen) == 1 and searched.cap.rate_max == default  # 3 x 20,000 is below it
    assert (ceiling.source, ceiling.burst_msgs_per_s) == ("burst", 20_000.0)
    assert ceiling.why is not None and "udp-allout" in ceiling.why and "at least its default" in ceiling.why
    assert said == [
        f"capacity: the burst drained 20,000 msg/s: RATE_MAX {default:,.0f} (3 times that, at least the default)"
    ]
    faster = fake_burst(monkeypatch, 118_000.0)
    searched, ceiling = capacity_ceiling.ceiling(chosen, tmp_path, False, (), lambda line: None)
    assert len(faster) == 1 and searched.cap.rate_max == ceiling.rate_max == 354_000.0


def test_a_paced_scenario_without_a_twin_runs_no_burst_and_keeps_the_default_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = fake_burst(monkeypatch, 20_000.0)
    monkeypatch.setattr(searchplan.scenarios, "all_out_twin", lambda scenario: None)
    chosen = searchplan.plan("rsyslog8", {**SHAPE, "SCENARIO": "udp"}, onehost.OneHost())
    assert chosen.burst is None and chosen.paced is not None
    said: list[str] = []
    searched, ceiling = capacity_ceiling.ceiling(chosen, tmp_path, False, (), said.append)
    assert not seen and searched.cap.rate_max == capacity.CapacitySettings().rate_max
    assert (ceiling.source, ceiling.burst_run_id) == ("default", None)
    assert (
        ceiling.why == chosen.paced and "fixed 4,000 msg/s" in ceiling.why and "give RATE_MAX" in ceiling.why
    )
    assert said == [f"notice: {ceiling.why}"]
    given = searchplan.plan("rsyslog8", {**SHAPE, "SCENARIO": "udp", "RATE_MAX": "50000"}, onehost.OneHost())
    assert given.burst is None and given.paced is None


def test_the_all_out_twin_is_the_same_scenario_but_its_rate() -> None:
    twins = {s.id: (t.id if (t := scenarios.all_out_twin(s)) else None) for s in scenarios.all_scenarios()}
    assert twins["udp"] == "udp-allout" and twins["tcp-rate"] == "seed2014"
    assert all(twin is None for name, twin in twins.items() if not scenarios.load(name).rate)
    paced = dataclasses.replace(scenarios.load("udp"), message_bytes=400)
    assert scenarios.all_out_twin(paced) is None  # no all-out scenario of 400-byte datagrams


def test_a_given_rate_max_is_recorded_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_burst(monkeypatch, 1.0)
    chosen = searchplan.plan("rsyslog8", {**SHAPE, "RATE_MAX": "4000"}, onehost.OneHost())
    searched, ceiling = capacity_ceiling.ceiling(chosen, tmp_path, False, (), lambda line: None)
    assert searched is chosen and (ceiling.source, ceiling.rate_max, ceiling.burst_run_id) == (
        "given",
        4000.0,
        None,
    )


def test_a_search_whose_ndr_held_its_rate_max_reads_at_least() -> None:
    results = Path(__file__).resolve().parents[2] / "results" / "capacity"
    capped = capacity.read(results / "20261127T174542.580Z-syslog-ng-4.8-b0ef-seed2014.json")
    assert capped.at_ceiling and capped.ndr.upper_msgs_per_s is None
    assert "NDR at least 200,000 msg/s: the search's RATE_MAX held" in capacity.table(capped)
    study = results.parent / "knobs" / "20261201T211242.285Z-rsyslog-8.2504-ce46-seed2014" / "capacity"
    found = capacity.read(study / "20261201T212939.524Z-rsyslog-8.2504-2f27-seed2014.json")
    assert not found.at_ceiling and "NDR at least" not in capacity.table(found)


def test_a_search_that_held_every_rate_the_rig_could_send_reads_at_least() -> None:
    """A sender-bound trial starts the search again below what the senders reached; where the daemon then held
    every rate up to that new top, its NDR is the rig's limit, not its own (udp, 2026-12-06: rsyslog-8.2504 at
    `tuned` held 112,404 msg/s, the senders' 124,894 less the back-off, with RATE_MAX 200,000 given)."""
    results = Path(__file__).resolve().parents[2] / "results" / "capacity"
    held = capacity.read(results / "20261127T041625.458Z-rsyslog-8.2504-f205-udp.json")
    assert held.rig_limit_msgs_per_s is not None and held.ndr.upper_msgs_per_s is None
    assert held.ndr_msgs_per_s is not None and held.ndr_msgs_per_s < held.settings["rate_max"]
    assert held.at_ceiling
    said = capacity.table(held)
    assert f"the rig could send no more than {capacity.rate_text(held.rig_limit_msgs_per_s)} msg/s" in said
    limited = dataclasses.replace(held, rig_limit_msgs_per_s=None)
    assert not limited.at_ceiling  # below RATE_MAX with no rig limit: the daemon's own NDR
