"""The NDR's interval for the next search (model/capacity/interval.py, host/capacity/repeats.py, issue 47):
NDR_REPEATS trials of TRIAL_FINAL at the published NDR after the confirmation; their messages per daemon CPU
second give the drift's part, the lowest rate above the NDR that broke gives the search's resolution."""

from __future__ import annotations

import math
import statistics
import time

import pytest

from syslogbench.host.capacity import confirm, repeats, search
from syslogbench.host.capacity import measurer as measuring
from syslogbench.model import capacity
from syslogbench.model.capacity import CapacityError, split
from tests.unit.test_capacity_search import HELD, simulated

CAP = capacity.CapacitySettings(rate_min=100, rate_max=20_000, initial_trial_s=1, final_trial_s=2, pause_s=0,
                                relative_width=0.05, trial_sum_s=2, exceed_ratio=0, confirm_s=10,
                                ndr_repeats=5)  # fmt: skip


def trial(rate: float, cpu_s: float | None, lost: int = 0, purpose: str = capacity.REPEAT,
          duration: float = 2.0) -> capacity.Trial:  # fmt: skip
    record = simulated(rate, duration)
    record.update(daemon_cpu_s=cpu_s, late=lost, loss_ratio=lost / record["intended"])
    made = capacity.trial_from_dict(record)
    made.purpose = purpose
    return made


def test_the_interval_is_the_bracket_widened_by_the_repeats_drift() -> None:
    ndr, upper = 1000.0, 1100.0
    cpu = [1.6, 1.7, 1.8, 1.65]  # CPU seconds for 2,000 messages each
    found = capacity.interval(ndr, [trial(ndr, c) for c in cpu], upper, cores=1)
    draws = [2000 / c for c in cpu]
    logs = [math.log(d) for d in draws]
    h = 3.182 * statistics.stdev(logs) * math.sqrt(1 + 1 / 4)  # t95(3)
    assert found.msgs_per_cpu_s == [round(d, 1) for d in draws]
    assert found.low_msgs_per_s == pytest.approx(ndr * ndr / upper * math.exp(-h), abs=0.1)
    assert found.high_msgs_per_s == pytest.approx(upper * math.exp(h), abs=0.1)
    assert found.low_msgs_per_s < ndr * ndr / upper and found.high_msgs_per_s > upper
    assert found.repeats == 4 and found.held == 4 and found.why is None
    assert found.core_share == pytest.approx(sum(cpu) / 8, abs=1e-3)
    text = capacity.interval_text(found)
    assert (
        text.startswith(f"NDR interval for the next search {found.low_msgs_per_s:,.0f} .. ")
        and "4 held" in text
    )


def test_steady_repeats_leave_the_search_resolution_alone() -> None:
    found = capacity.interval(1000.0, [trial(1000.0, 1.5)] * 3, 1050.0, cores=2)
    assert (found.low_msgs_per_s, found.high_msgs_per_s) == (pytest.approx(952.4, abs=0.1), 1050.0)
    assert found.core_share == pytest.approx(0.375)


def test_no_interval_without_a_rate_that_broke_or_two_usable_repeats() -> None:
    at_ceiling = capacity.interval(1000.0, [trial(1000.0, 1.5)] * 2, None, cores=1)
    assert at_ceiling.low_msgs_per_s is None and "at least" in (at_ceiling.why or "")
    one = capacity.interval(1000.0, [trial(1000.0, 1.5), trial(1000.0, None)], 1100.0, cores=1)
    assert one.low_msgs_per_s is None and one.why is not None and one.why.startswith("1 of 2 repeats")
    assert capacity.interval_text(one).startswith("NDR interval: none: 1 of 2 repeats")
    lossy = capacity.interval(1000.0, [trial(1000.0, 1.5, lost=3), trial(1000.0, 1.6)], 1100.0, cores=1)
    assert lossy.held == 1 and lossy.low_msgs_per_s is not None


def test_the_lowest_rate_that_broke_is_above_the_ndr_and_from_full_length_trials() -> None:
    trials = [trial(1200.0, 1.0, lost=5, purpose="search"), trial(1100.0, 1.0, lost=5, purpose="confirm", duration=10),
              trial(1050.0, 1.0, lost=5, purpose="search", duration=1.0),  # shorter than TRIAL_FINAL
              trial(900.0, 1.0, lost=5, purpose="latency"), trial(1020.0, 1.0, lost=5)]  # fmt: skip
    assert capacity.lowest_broken(trials, 1000.0, 2.0) == 1100.0
    assert capacity.lowest_broken(trials, 1200.0, 2.0) is None


def test_a_search_repeats_its_published_ndr_and_states_the_interval() -> None:
    measurer = measuring.Measurer(simulated, CAP, sleep=lambda s: None)
    found = search.search(measurer, CAP, print)
    deadline = time.monotonic() + 3600
    confirm.confirm(measurer, found, CAP, deadline, print)
    ndr = found.ndr.published()
    assert ndr is not None and ndr <= HELD
    interval = repeats.repeat(measurer, found, CAP, deadline, 1, print)
    assert interval is not None
    ran = [t for t in measurer.trials if t.purpose == capacity.REPEAT]
    assert len(ran) == 5 and {t.offered_msgs_per_s for t in ran} == {ndr}
    assert all(t.duration_s == CAP.final_trial_s for t in ran) and measurer.trials[-5:] == ran
    assert interval.repeats == 5 and interval.held == 5
    # The simulated daemon's CPU is not read: no draws, so no interval, and it says why.
    assert interval.low_msgs_per_s is None and interval.why is not None and interval.why.startswith("0 of 5")
    assert interval.upper_msgs_per_s is not None and interval.upper_msgs_per_s > ndr


def test_repeats_stop_at_the_deadline_with_a_note_and_none_are_asked_at_zero() -> None:
    measurer = measuring.Measurer(simulated, CAP, sleep=lambda s: None)
    found = search.search(measurer, CAP, print)
    confirm.confirm(measurer, found, CAP, time.monotonic() + 3600, print)
    late = repeats.repeat(measurer, found, CAP, time.monotonic(), 1, print)
    assert late is not None and late.repeats == 0
    assert found.notes[-1].startswith("0 of NDR_REPEATS=5 repeats at the NDR ran: no time left")
    none = capacity.CapacitySettings(**{**CAP.as_dict(), "ndr_repeats": 0.0})
    assert repeats.repeat(measurer, found, none, time.monotonic() + 3600, 1, print) is None


@pytest.mark.parametrize("value", ["1", "2.5", "-2"])
def test_ndr_repeats_is_zero_or_a_whole_number_from_two(value: str) -> None:
    with pytest.raises(
        CapacityError, match=f"NDR_REPEATS={value}: give 0 for none, or a whole number from 2"
    ):
        split({"NDR_REPEATS": value})
    assert split({"NDR_REPEATS": "3"})[0].ndr_repeats == 3


@pytest.mark.parametrize(("placement", "cores"), [("1", 1), ("0-3", 4), ("1,3", 2), ("2-3,5", 3), ("", 6),
                                                  ("node central", 6)])  # fmt: skip
def test_the_daemons_cores_come_from_its_cpuset_or_its_machine(placement: str, cores: int) -> None:
    assert repeats.daemon_cores(placement, {"cores": 6}) == cores
