"""The search's defaults against recorded trials: the real MLRsearch is fed the trials of a committed search
(rsyslog 8.2504 over UDP, `...-c834-udp`, where one 1 s trial at 11,408 msg/s that lost 128 datagrams set
both bounds), and under the defaults no short trial alone may make a rate a published bound (issue 27).

The replay answers each trial the search asks for with what the recording says of the nearest rate:
- `as_recorded`: every trial, short or long, loses what the nearest recorded trial lost;
- `bursts_in_short_trials`: short trials as recorded, while full-length ones lose nothing up to 31,550 msg/s
  (the PDR the repeat search, `...-d4db-udp`, found): the case where a drop burst in one short trial
  decided the figure.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from MLRsearch import AbstractMeasurer, Config, MeasurementResult, MultipleLossRatioSearch

from syslogbench.host.capacity import search
from syslogbench.model import capacity

RESULTS = Path(__file__).resolve().parents[2] / "results" / "capacity"
RECORDED = RESULTS / "20261125T212319.148Z-rsyslog-8.2504-c834-udp.json"
REPEAT_PDR = 31_550.0  # 20261125T214250.082Z-rsyslog-8.2504-d4db-udp
Loss = Callable[[float, float], float]  # (seconds, msg/s) -> loss ratio


def recorded_losses() -> dict[float, float]:
    """{offered msg/s: loss ratio} of the recorded search's trials the search used."""
    data = json.loads(RECORDED.read_text())
    trials = [t for t in data["trials"] if t["purpose"] == "search" and not t["sender_bound"]]
    return {t["offered_msgs_per_s"]: t["loss_ratio"] for t in trials}


def nearest(losses: dict[float, float], rate: float) -> float:
    return losses[min(losses, key=lambda r: abs(math.log(r / rate)))]


def as_recorded(losses: dict[float, float]) -> Loss:
    return lambda seconds, rate: nearest(losses, rate)


def bursts_in_short_trials(losses: dict[float, float], final_s: float) -> Loss:
    def loss(seconds: float, rate: float) -> float:
        if seconds >= final_s:
            return 0.0 if rate <= REPEAT_PDR else nearest(losses, rate)
        return nearest(losses, rate)

    return loss


class Replay(AbstractMeasurer):
    """Answers at once from a loss function; keeps (seconds, msg/s, loss ratio) of every trial."""

    def __init__(self, loss: Loss) -> None:
        self.loss = loss
        self.trials: list[tuple[float, float, float]] = []

    def measure(self, intended_duration: float, intended_load: float) -> MeasurementResult:
        ratio = self.loss(intended_duration, intended_load)
        intended = max(1, round(intended_duration * intended_load))
        self.trials.append((intended_duration, intended_load, ratio))
        return MeasurementResult(
            intended_duration=intended_duration,
            intended_load=intended_load,
            intended_count=intended,
            offered_count=intended,
            forwarding_count=intended - round(intended * ratio),
        )


def searched(
    cap: capacity.CapacitySettings, measurer: Replay
) -> dict[float, tuple[float | None, float | None]]:
    """{goal loss ratio: (relevant lower bound, relevant upper bound)} of the real MLRsearch."""
    config = Config()
    config.goals = search.goals(cap)
    config.min_load, config.max_load = cap.rate_min, 200_000.0  # the recorded search's RATE_MAX
    config.search_duration_max = 1e9  # the replay takes no time; the search ends by its widths
    config.warmup_duration = None
    answers = MultipleLossRatioSearch(config=config).search(measurer=measurer, debug=lambda text: None)
    return {
        goal.loss_ratio: (
            None if a.relevant_lower_bound is None else float(a.relevant_lower_bound),
            None if a.relevant_upper_bound is None else float(a.relevant_upper_bound),
        )
        for goal, a in answers.items()
    }


def at(trials: list[tuple[float, float, float]], rate: float) -> list[tuple[float, float, float]]:
    return [t for t in trials if math.isclose(t[1], rate, rel_tol=1e-9)]


def short_only_bounds(cap: capacity.CapacitySettings, loss: Loss) -> list[str]:
    """Each published bound (a goal's relevant lower or upper bound) whose evidence is short trials alone."""
    measurer = Replay(loss)
    problems = []
    for ratio, (lower, upper) in searched(cap, measurer).items():
        if upper is not None:
            broke_long = [t for t in at(measurer.trials, upper) if t[0] >= cap.final_trial_s and t[2] > ratio]
            if not broke_long:
                problems.append(
                    f"goal {ratio}: upper bound {upper:,.0f} has no full-length trial that broke it"
                )
        if lower is not None:
            held_long = [t for t in at(measurer.trials, lower) if t[0] >= cap.final_trial_s and t[2] <= ratio]
            if not held_long:
                problems.append(
                    f"goal {ratio}: lower bound {lower:,.0f} has no full-length trial that held it"
                )
    return problems


@pytest.mark.parametrize("world", ["as_recorded", "bursts_in_short_trials"])
def test_under_the_defaults_no_short_trial_alone_sets_a_published_bound(world: str) -> None:
    cap = capacity.CapacitySettings()
    losses = recorded_losses()
    assert nearest(losses, 11_408) > 0.01  # the short trial that set both bounds in the recorded search
    loss = (
        as_recorded(losses) if world == "as_recorded" else bursts_in_short_trials(losses, cap.final_trial_s)
    )
    assert short_only_bounds(cap, loss) == []


def test_the_old_defaults_let_one_short_trial_set_a_bound() -> None:
    """The check above can fail: with one 10 s trial per rate and EXCEED_RATIO=0 (the defaults before issue
    27), a short trial alone is an upper bound: the 1 s trial near 11,408 msg/s that lost 1.1%."""
    old = capacity.CapacitySettings(trial_sum_s=0.0, exceed_ratio=0.0)
    problems = short_only_bounds(old, bursts_in_short_trials(recorded_losses(), old.final_trial_s))
    assert any("upper bound" in p for p in problems), problems


def test_the_defaults_are_csit_s_exceed_ratio_over_three_full_length_trials() -> None:
    cap = capacity.CapacitySettings()
    assert (cap.final_trial_s, cap.trial_sum_s, cap.exceed_ratio, cap.confirm_s) == (10.0, 30.0, 0.5, 60.0)
    # A short trial is shorter than TRIAL_FINAL, and more than trial_sum * exceed_ratio of excess makes an
    # upper bound: no single short trial, nor the 1 s and 3.16 s ones together, reaches it.
    assert cap.trial_sum_s * cap.exceed_ratio > cap.final_trial_s


def test_a_default_search_with_its_confirmation_fits_in_ten_minutes() -> None:
    """SEARCH_MAX (600 s) holds the search, the two confirmations and the three latency trials: MLRsearch gets
    what they leave, each with its pause and an allowance for the drain, the common start and compose exec."""
    cap = capacity.CapacitySettings()
    reserve = capacity.reserve_s(cap)
    assert reserve == 2 * (60 + 2 + capacity.TRIAL_OVERHEAD_S) + 3 * (10 + 2 + capacity.TRIAL_OVERHEAD_S)
    assert cap.search_max_s == 600 and cap.search_max_s - reserve >= 300
