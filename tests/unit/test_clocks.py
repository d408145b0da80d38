"""Clocks on a swarm (issue 27): each sender measures its node's clock against the watcher's over the control
channel before each trial (NTP's way: the shortest of several round trips), the watcher moves the trial's
start onto the sender's clock by that offset, and the result records each node's offset and uncertainty and
says when the latencies cannot be trusted."""

from __future__ import annotations

import random
import threading
from datetime import UTC, datetime

import pytest

from syslogbench.host import environment as host_environment
from syslogbench.host import onehost
from syslogbench.host.capacity import record as capacity_record
from syslogbench.host.capacity import search, searchplan
from syslogbench.model import capacity
from syslogbench.rig import channel, trialserver


def test_one_round_trip_gives_the_remote_offset_from_the_midpoint_and_the_round_trip() -> None:
    # Sent at 100.0 and back at 100.2 by the local clock; the remote read 50.3 on its own.
    offset, rtt = capacity.clock_offset(100.0, 50.3, 100.2)
    assert offset == pytest.approx(50.3 - 100.1) and rtt == pytest.approx(0.2)


def round_trip(true_offset: float, t: float, there: float, back: float) -> tuple[float, float, float]:
    """A generator whose clock is true_offset ahead of the watcher's: (t_send, t_watcher, t_receive) for a
    request sent at watcher time t that took `there` to arrive and `back` to return."""
    return t + true_offset, t + there, t + there + back + true_offset


def test_the_shortest_round_trip_is_kept_and_the_offset_is_the_generator_clock_minus_the_watcher_s() -> None:
    samples = [round_trip(2.0, 10.0, 0.050, 0.001), round_trip(2.0, 11.0, 0.0004, 0.0006),
               round_trip(2.0, 12.0, 0.002, 0.030)]  # fmt: skip
    check = capacity.best_round_trip(samples)
    assert check.round_trips == 3
    assert check.uncertainty_s == pytest.approx(0.0005)  # half of the 1 ms round trip
    assert check.offset_s == pytest.approx(2.0, abs=check.uncertainty_s)
    with pytest.raises(ValueError):
        capacity.best_round_trip([])


@pytest.mark.parametrize("true_offset", [-3.0, -0.25, 0.0, 0.004, 7.5])
def test_the_true_offset_is_within_the_uncertainty_whatever_the_two_ways_took(true_offset: float) -> None:
    """rtt/2 bounds the error: the watcher read its clock somewhere between the send and the receipt."""
    rng = random.Random(27)
    for _ in range(200):
        samples = [round_trip(true_offset, rng.uniform(0, 100), rng.expovariate(2000), rng.expovariate(2000))
                   for _ in range(capacity.CLOCK_ROUNDS)]  # fmt: skip
        check = capacity.best_round_trip(samples)
        assert abs(check.offset_s - true_offset) <= check.uncertainty_s + 1e-9


def test_the_watcher_s_start_on_the_sender_s_clock_puts_the_schedule_on_the_watcher_s_clock() -> None:
    """A generator 2 s ahead sends message i when its clock reads start' + i/rate; on the watcher's clock
    that is start + i/rate, the intended time the follower times arrivals from."""
    start, rate, offset = 1_000.0, 500.0, 2.0
    on_sender = capacity.watcher_to_sender(start, offset)
    for index in (0, 1, 499):
        sent_by_sender_clock = capacity.intended_time(on_sender, index, rate)
        assert sent_by_sender_clock - offset == pytest.approx(capacity.intended_time(start, index, rate))


def test_trial_ready_answers_each_sender_with_the_start_on_its_own_clock() -> None:
    served = trialserver.Trials(None, ["host1-s1", "host2-s1"], 1.0)  # type: ignore[arg-type]
    served.number = 1
    served.spec = {
        "trial": 1,
        "rate": 10.0,
        "messages": 10,
        "duration": 1.0,
        "bound": 1.0,
        "ready_wait_s": 5.0,
    }
    ahead = {"clock_offset_s": -2.0, "clock_uncertainty_s": 0.0004, "node": "node2"}
    answers: dict[str, dict] = {}
    first = threading.Thread(target=lambda: answers.setdefault(
        "a", served.sender_ready({"sender": "host1-s1", "trial": 1, **ahead})))  # fmt: skip
    first.start()
    answers["b"] = served.sender_ready({"sender": "host2-s1", "trial": 1})  # an old sender: no check
    first.join(5)
    start = served.spec["start"]
    assert answers["a"]["start"] == pytest.approx(start - 2.0) and answers["b"]["start"] == start
    assert answers["a"]["give_up"] - answers["a"]["start"] == pytest.approx(served.spec["give_up"] - start)
    assert served.clocks == {"host1-s1": (-2.0, 0.0004, "node2")}


def test_a_clock_check_that_is_not_one_is_refused() -> None:
    with pytest.raises(ValueError, match="not a clock check"):
        trialserver.sender_clock({"clock_offset_s": float("nan"), "clock_uncertainty_s": 0.1})
    assert trialserver.sender_clock({}) is None


def test_a_link_measures_the_watcher_s_clock_over_the_channel(watcher_channel: channel.Server) -> None:
    check = channel.Link().clock_check(capacity.CLOCK_ROUNDS)
    assert check.round_trips == capacity.CLOCK_ROUNDS
    assert 0 <= check.uncertainty_s < 0.05 and abs(check.offset_s) <= check.uncertainty_s + 1e-3


def sender(
    name: str, offset: float | None, uncertainty: float | None, node: str | None = None
) -> capacity.SenderTrial:
    return capacity.SenderTrial(
        name, 10, 10, 10, clock_offset_s=offset, clock_uncertainty_s=uncertainty, node=node
    )


def trial(number: int, *senders: capacity.SenderTrial) -> capacity.Trial:
    return capacity.Trial(number, 10.0, 1.0, 10, 10, 10, 0, 0, 0, 0, 0.0, 10.0, False, capacity.Latency(),
                          0.02, 0, 1.0, 0.1, None, None, senders=list(senders))  # fmt: skip


def test_each_node_s_clock_is_summed_up_over_the_search_and_trusted_within_a_tenth_of_the_bound() -> None:
    searched = [
        trial(1, sender("host1-s1", -2.0003, 0.0004, "node2"), sender("host2-s1", 0.0001, 0.0003, "node3")),
        trial(2, sender("host1-s1", -1.9998, 0.0009, "node2"), sender("host2-s1", 0.0, 0.0002, "node3")),
    ]
    clocks = capacity.clocks_of(searched, 0.5)
    assert clocks is not None and clocks.trusted and clocks.why is None and clocks.limit_s == 0.05
    host1 = clocks.nodes[0]
    assert (host1.host, host1.node, host1.offset_s, host1.uncertainty_s) == (
        "host1",
        "node2",
        -2.0003,
        0.0009,
    )
    assert (host1.offset_min_s, host1.offset_max_s, host1.checks) == (-2.0003, -1.9998, 2)
    assert capacity.clocks_of([trial(1, sender("host1-s1", None, None))], 0.5) is None  # an older rig


def test_a_clock_known_too_loosely_makes_the_latencies_untrusted_and_says_why() -> None:
    searched = [trial(1, sender("host1-s1", 0.3, 0.08, "node2"), sender("host2-s1", 0.0, 0.001, "node3"))]
    clocks = capacity.clocks_of(searched, 0.5)
    assert clocks is not None and not clocks.trusted
    assert clocks.why == ("host1 (node node2)'s clock was known to +/- 80.0 ms only, over a tenth of "
                          "LATENCY_BOUND (50 ms)")  # fmt: skip
    cost = capacity.rig_cost(searched[0].senders, None, None, object(), 0.5)
    assert any("clocks were known to +/- 80.0 ms" in flag for flag in cost.flags)


def test_a_capacity_result_records_the_clocks_and_a_refusal_in_its_notes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(host_environment, "docker_version", lambda: "test")
    chosen = searchplan.plan("syslog-ng-4.8", {"SCENARIO": "plain", "HOSTS": "1", "SENDERS_PER_HOST": "1",
                                           "REMOTE_MEM": "1g", "LATENCY_BOUND": "0.5"}, onehost.OneHost())  # fmt: skip
    found = search.Found(capacity.Bound(0.0, 1000.0, 1100.0), capacity.Bound(0.005, 1000.0, 1100.0))
    loose = [trial(1, sender("host1-s1", 0.3, 0.08))]
    data = capacity_record.build(chosen, loose, found, {}, datetime.now(UTC), None, {})
    assert data.clocks is not None and not data.clocks.trusted
    assert data.notes[-1].startswith("latency is not trusted: host1's clock was known to +/- 80.0 ms")
    again = capacity.result_from_dict(data.to_dict())  # the strict reader knows the new keys
    assert again.clocks == data.clocks and again.trials[0].senders[0].clock_offset_s == 0.3


def test_the_report_s_machine_line_gives_each_node_s_clock_and_a_refusal() -> None:
    from syslogbench.report.capacity import clocks_text

    node = {"host": "host1", "node": "node2", "offset_s": -2.0003, "uncertainty_s": 0.0004,
            "offset_min_s": -2.0003, "offset_max_s": -2.0, "checks": 4}  # fmt: skip
    trusted = {"nodes": [node], "limit_s": 0.05, "trusted": True, "why": None, "how": ""}
    assert clocks_text(trusted, True) == "; clocks against the watcher's: node2 -2000.3 +/- 0.4 ms"
    assert clocks_text({**trusted, "trusted": False, "why": "W"}, True).endswith("; latency not trusted: W")
    assert clocks_text(trusted, False) == ""  # one host: one clock
    assert clocks_text({**trusted, "trusted": False, "why": "W"}, False) == "; latency not trusted: W"
    assert clocks_text(None, True) == ""


def test_a_message_is_due_at_its_senders_next_batch_and_the_phases_spread_over_a_tick() -> None:
    """Message i's own time is i/rate; on a 5 ms grid from start + phase it is due at the first grid point at
    or after that (rig-rust/src/schedule.rs keeps the same schedule)."""
    assert [capacity.phase_s(k, 4, 0.005) for k in range(4)] == [0.0, 0.00125, 0.0025, 0.00375]
    start, rate, tick, phase = 100.0, 1000.0, 0.005, 0.002
    due = [capacity.intended_time(start, i, rate, tick, phase) - start for i in range(9)]
    assert due == pytest.approx([0.002, 0.002, 0.002, 0.007, 0.007, 0.007, 0.007, 0.007, 0.012])
    # Without a grid, its own time.
    assert capacity.intended_time(start, 3, rate) == pytest.approx(100.003)
