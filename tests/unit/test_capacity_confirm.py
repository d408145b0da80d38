"""Confirmation before publishing (host/capacity/confirm.py, issue 27): after the search the NDR and the PDR are each
held for CONFIRM_S; a rate that breaks its goal there, or in a latency trial at or below it, steps down and
is confirmed again, or the bound says it is unconfirmed and why. Against a simulated daemon whose queue
lets a short trial pass more than a long one holds, as syslog-ng's throttle() does."""

from __future__ import annotations

import time
from dataclasses import replace

from syslogbench.host.capacity import confirm, search
from syslogbench.host.capacity import measurer as measuring
from syslogbench.model import capacity
from tests.unit.test_capacity_search import simulated

HELD = 2000.0  # msg/s the simulated daemon writes
QUEUE_S = 1.0  # its queue holds this many seconds of HELD before a message is late


def queued(rate: float, duration: float, sender_limit: float = 1e9) -> dict:
    """A trial of `duration` s passes up to HELD * (1 + QUEUE_S / duration): a short one more than a long
    one. Above that the excess is late, in proportion."""
    holds = HELD * (1 + QUEUE_S / duration)
    record = simulated(rate, duration, sender_limit)
    intended = record["intended"]
    late = 0 if rate <= holds else round(intended * (1 - holds / rate))
    record.update(late=late, loss_ratio=late / intended)
    record["senders"][0]["late"] = late
    return record


CAP = capacity.CapacitySettings(
    rate_min=100, rate_max=20_000, initial_trial_s=1, final_trial_s=2, pause_s=0, relative_width=0.05,
    trial_sum_s=2, exceed_ratio=0, confirm_s=10,
)  # fmt: skip


def confirmed(cap: capacity.CapacitySettings, answer=queued, budget_s: float = 3600.0):  # noqa: ANN001, ANN201
    measurer = measuring.Measurer(answer, cap, sleep=lambda s: None)
    found = search.search(measurer, cap, print)
    assert not found.errors, found.errors
    latency = confirm.confirm(measurer, found, cap, time.monotonic() + budget_s, print)
    return measurer, found, latency


def test_a_rate_a_short_trial_passed_but_a_long_one_cannot_steps_down_until_it_holds() -> None:
    measurer, found, latency = confirmed(CAP)
    holds_long = HELD * (1 + QUEUE_S / CAP.confirm_s)  # 2,200 msg/s for 10 s
    ndr = found.ndr
    assert (
        ndr.lower_msgs_per_s is not None and ndr.lower_msgs_per_s > holds_long
    )  # the 2 s trials passed more
    assert ndr.confirmed is True and ndr.unconfirmed is None
    assert ndr.confirmed_msgs_per_s is not None and ndr.confirmed_msgs_per_s <= holds_long, ndr
    assert ndr.published() == ndr.confirmed_msgs_per_s
    confirms = [t for t in measurer.trials if t.purpose == "confirm"]
    assert confirms[0].offered_msgs_per_s == ndr.lower_msgs_per_s and confirms[0].loss_ratio > 0
    assert all(t.duration_s == CAP.confirm_s for t in confirms)
    # Each step is at least BACKOFF down (about 2,900 msg/s to 2,100 in four confirmations), and the PDR took
    # the NDR's passed confirmation as its own: no trial more.
    rates = [t.offered_msgs_per_s for t in confirms]
    assert all(b <= measuring.BACKOFF * a + 0.1 for a, b in zip(rates, rates[1:], strict=False)), rates
    assert found.pdr.confirmed_msgs_per_s == ndr.confirmed_msgs_per_s and rates.count(rates[-1]) == 1
    assert set(latency) == {"10%", "50%", "90%"}
    # No published rate is contradicted by a later trial at or below it.
    for goal in (found.ndr, found.pdr):
        rate = goal.published()
        assert rate is not None
        later = [
            t for t in measurer.trials if t.purpose in ("confirm", "latency") and t.offered_msgs_per_s <= rate
        ]
        assert all(t.loss_ratio <= goal.loss_ratio for t in later), (goal, later)


def counted(rate: float, duration: float, sender_limit: float = 1e9) -> dict:
    """queued(), with the follower's arrivals per second: HELD a second once the daemon is behind."""
    record = queued(rate, duration, sender_limit)
    record["arrived_per_s"] = [round(min(rate, HELD))] * int(duration)
    return record


def test_a_confirmation_that_fell_behind_steps_down_to_what_the_daemon_wrote() -> None:
    measurer, found, _ = confirmed(CAP, counted)
    rates = [t.offered_msgs_per_s for t in measurer.trials if t.purpose == "confirm"]
    # One step, not four: from the search's lower bound straight to the 2,000 msg/s it wrote once behind.
    assert len(rates) == 2 and rates[1] <= HELD < measuring.BACKOFF * rates[0], rates
    assert found.ndr.confirmed is True and found.ndr.confirmed_msgs_per_s == rates[1]


def per_second_trial(counts: list[int], rate: float = 1000.0, duration: float = 5.0) -> capacity.Trial:
    return capacity.trial_from_dict(
        {"number": 1, "offered_msgs_per_s": rate, "duration_s": duration, "intended": 0, "sent": 0,
         "received": 0, "lost": 0, "late": 0, "unsent": 0, "duplicated": 0, "loss_ratio": 0.0,
         "achieved_msgs_per_s": None, "sender_bound": False, "latency_ms": {}, "latency_histogram_us": {},
         "sample_s": None, "stale_lines": 0, "daemon_cpu_s": None, "watcher_cpu_s": None,
         "udp_rcvbuf_errors": None, "udp_in_errors": None, "arrived_per_s": counts}
    )  # fmt: skip


def test_a_trial_says_from_when_its_daemon_stayed_behind_from_its_arrivals_per_second() -> None:
    # A backlog of 0, 0, 400, 900, 1,400 and 1,900 messages: past 1 s of the rate after 4 s.
    assert confirm.fell_behind(per_second_trial([1000, 1000, 600, 500, 500, 500], duration=6.0), 1.0) == (
        "it was more than 1 s behind from 4 s of 6 on, and wrote 683 msg/s over the whole trial (68% of the rate)"
    )
    assert confirm.fell_behind(per_second_trial([300, 300, 300, 300, 300]), 0.5) == (
        "it was more than 0.5 s behind from 0 s of 5 on, and wrote 300 msg/s over the whole trial (30% of the rate)"
    )
    # Slow seconds it caught up on, and a backlog under the bound at the end: not behind.
    assert confirm.fell_behind(per_second_trial([1000, 600, 1400, 700, 1200]), 1.0) is None
    assert confirm.fell_behind(per_second_trial([1000, 1000, 1000, 100, 100]), 1.0) == (
        "it was more than 1 s behind from 4 s of 5 on, and wrote 640 msg/s over the whole trial (64% of the rate)"
    )
    assert confirm.fell_behind(per_second_trial([1000] * 4), 1.0) is None  # nothing in the 5th: 1 s behind
    # Its last second alone at 0.70 of the rate, in seconds of 0.68-1.28: the whole trial gives the step.
    jittery = per_second_trial([1280, 680, 1000, 1200, 1000, 1000, 1140, 700], rate=1000.0, duration=8.0)
    since, wrote = confirm.behind(jittery, 0.1) or (None, None)
    assert (since, wrote) == (7, 1000.0), (since, wrote)  # behind in its last second only, at 700 there
    assert (
        confirm.step_down([], capacity.Bound(0.0, 1000.0, None), 1000.0, CAP, wrote) == 900.0
    )  # BACKOFF, not 700
    assert confirm.fell_behind(per_second_trial([]), 1.0) is None  # a result from before the record


def test_a_stalled_confirmation_steps_down_at_most_by_half() -> None:
    goal = capacity.Bound(0.0, 3000.0, None)
    assert confirm.step_down([], goal, 3000.0, CAP, wrote=10.0) == 1500.0  # wrote 10 msg/s once behind
    assert confirm.step_down([], goal, 3000.0, CAP, wrote=2000.0) == 2000.0
    assert confirm.step_down([], goal, 3000.0, CAP) == 2700.0  # no arrivals recorded: BACKOFF
    passed = [capacity.trial_from_dict(counted(1000.0, 10.0))]  # a full-length search trial that held
    assert confirm.step_down(passed, goal, 3000.0, CAP, wrote=10.0) == 1000.0


def test_without_time_left_the_bound_says_unconfirmed_and_why() -> None:
    _, found, _ = confirmed(CAP, budget_s=5.0)  # less than one 10 s confirmation
    assert found.ndr.confirmed is False and found.ndr.published() is None
    assert found.ndr.unconfirmed is not None and "no time left within SEARCH_MAX" in found.ndr.unconfirmed
    assert found.ndr.lower_msgs_per_s is not None  # the search's own bounds stay in the result


def test_confirm_s_0_publishes_the_search_s_bounds_without_confirmation_trials() -> None:
    cap = replace(CAP, confirm_s=0)
    measurer, found, _ = confirmed(cap, answer=simulated)
    assert found.ndr.confirmed is None and found.ndr.published() == found.ndr.lower_msgs_per_s
    assert not [t for t in measurer.trials if t.purpose == "confirm"]


def test_a_latency_trial_that_breaks_the_pdr_steps_it_down() -> None:
    """Rates in a band below the PDR lose: the latency trial at 90% of it finds that, and the PDR, which a
    trial at or below it contradicted, steps down below the band."""
    band = (1500.0, 1900.0)

    def lossy_band(rate: float, duration: float) -> dict:
        record = simulated(rate, duration)
        if band[0] <= rate <= band[1] and duration >= CAP.final_trial_s:
            lost = record["intended"] // 10
            record.update(late=lost, loss_ratio=lost / record["intended"])
            record["senders"][0]["late"] = lost
        return record

    cap = replace(CAP, trial_sum_s=0, initial_trial_s=2)  # only full-length trials: the band is not searched
    measurer, found, _ = confirmed(cap, answer=lossy_band)
    pdr = found.pdr
    assert pdr.lower_msgs_per_s is not None and pdr.lower_msgs_per_s * 0.9 >= band[0]
    assert pdr.published() is None or pdr.published() < band[0], pdr
    assert any(t.purpose == "latency" and t.loss_ratio > 0 for t in measurer.trials)


def test_a_sender_bound_latency_trial_is_noted_not_used() -> None:
    cap = replace(CAP, confirm_s=0)
    measurer = measuring.Measurer(lambda r, d: simulated(r, d, sender_limit=1000), cap, sleep=lambda s: None)
    found = search.Found(capacity.Bound(0.0, 1500.0, 1600.0), capacity.Bound(cap.pdr_target, 1500.0, 1600.0))
    latency = confirm.confirm(measurer, found, cap, time.monotonic() + 3600, print)
    assert set(latency) == {"10%", "50%"}  # 90% of 1,500 is beyond the senders' 1,000
    assert any("no latency at 90% of the PDR: the senders reached only" in note for note in found.notes)


def test_without_confirmation_a_latency_trial_that_breaks_the_ndr_unpublishes_it() -> None:
    """CONFIRM_S=0: nothing steps down, but a rate contradicted by a later trial at or below it is not
    published: the bound says unconfirmed, and why."""

    def loses_at_half(rate: float, duration: float) -> dict:
        record = simulated(rate, duration)
        if 900 <= rate <= 1100 and duration >= CAP.final_trial_s:  # 50% of a PDR near 2,000
            record.update(late=1, loss_ratio=1 / record["intended"])
            record["senders"][0]["late"] = 1
        return record

    cap = replace(CAP, confirm_s=0, trial_sum_s=0, initial_trial_s=2)
    measurer = measuring.Measurer(loses_at_half, cap, sleep=lambda s: None)
    found = search.Found(capacity.Bound(0.0, 2000.0, 2100.0), capacity.Bound(cap.pdr_target, 2000.0, 2100.0))
    confirm.confirm(measurer, found, cap, time.monotonic() + 3600, print)
    assert found.ndr.confirmed is False and found.ndr.published() is None
    assert (
        found.ndr.unconfirmed
        == "NDR unconfirmed: the latency trial at 1,000 msg/s, at or below it, lost 0.0500%"
    )
    assert found.pdr.confirmed is None and found.pdr.published() == 2000.0  # 0.05% is within the PDR's 0.5%
