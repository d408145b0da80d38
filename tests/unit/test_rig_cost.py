"""What a trial records of the rig's own cost (model.capacity.rig_cost), and when it says the figures are the
rig's."""

from __future__ import annotations

from syslogbench.model import capacity
from syslogbench.model.rigrecord import LatencyMs, SenderTally, TallyRecord


def tally(gap_max_s: float = 0.0005, poll_gap_max_s: float = 0.0, sampled: int = 0,
          received: int = 0) -> TallyRecord:  # fmt: skip
    counted = [SenderTally("host1-s1", received, 0, 0, 0)] if received else []
    return TallyRecord("tally", 2, counted, 0, 0, {}, LatencyMs(None, None, None, None, None), 100, gap_max_s,
                       gap_max_s / 2, poll_gap_max_s, sampled, [], 0.05, 0.02, "all-arrived")  # fmt: skip


def senders(*cpu_s: float | None) -> list[capacity.SenderTrial]:
    return [capacity.SenderTrial(f"host1-s{n}", 100, cpu_s=cpu) for n, cpu in enumerate(cpu_s, 1)]


def test_the_share_is_every_sender_the_watcher_and_a_relays_last_hop_over_the_daemon() -> None:
    plain = capacity.rig_cost(senders(0.01, 0.01), 0.02, 10.0, tally(), 1.0)
    assert (plain.senders_cpu_s, plain.share, plain.flags) == (0.02, 0.004, [])
    relay = capacity.rig_cost(senders(0.01, 0.01), 0.02, 10.0, tally(), 1.0, last_hop_cpu_s=0.96)
    assert (relay.last_hop_cpu_s, relay.share) == (0.96, 0.1)
    assert relay.flags == ["the rig took 10.0% of the daemon's CPU (over 5%)"]


def test_the_kernel_s_part_of_the_senders_and_the_follower_is_kept_apart() -> None:
    parts = [capacity.SenderTrial(f"host1-s{n}", 100, cpu_s=0.03, cpu_system_s=0.02) for n in (1, 2)]
    cost = capacity.rig_cost(parts, 0.1, 10.0, tally(), 1.0)
    assert (cost.senders_cpu_s, cost.senders_system_s) == (0.06, 0.04)
    assert (cost.follower_cpu_s, cost.follower_system_s) == (0.05, 0.02)
    older = capacity.rig_cost(senders(0.01, 0.01), 0.02, 10.0, tally(), 1.0)  # records without it
    assert older.senders_system_s is None


def test_an_unknown_part_leaves_the_share_unknown_rather_than_low() -> None:
    assert capacity.rig_cost(senders(0.01, None), 0.02, 10.0, tally(), 1.0).share is None
    assert capacity.rig_cost(senders(0.01), None, 10.0, tally(), 1.0).share is None


def test_a_look_gap_over_a_tenth_of_the_bound_is_flagged() -> None:
    cost = capacity.rig_cost(senders(0.0), 0.0, 10.0, tally(gap_max_s=0.15), 1.0)
    assert cost.flags == [
        "a line could wait 150.0 ms before it was read (over a tenth of LATENCY_BOUND, 100 ms)"
    ]


def test_a_poll_gap_over_a_tenth_of_the_bound_is_flagged_as_a_look_gap_is() -> None:
    cost = capacity.rig_cost(senders(0.0), 0.0, 10.0, tally(poll_gap_max_s=0.12), 1.0)
    assert cost.poll_gap_max_s == 0.12
    assert cost.flags == [
        "a line could wait 120.0 ms before it was read (over a tenth of LATENCY_BOUND, 100 ms)"
    ]
    assert capacity.rig_cost(senders(0.0), 0.0, 10.0, tally(poll_gap_max_s=0.011), 1.0).flags == []


def test_the_latency_share_is_the_sampled_part_of_what_was_received() -> None:
    assert (
        capacity.rig_cost(senders(0.0), 0.0, 10.0, tally(sampled=25, received=100), 1.0).latency_share == 0.25
    )
    assert capacity.rig_cost(senders(0.0), 0.0, 10.0, tally(), 1.0).latency_share is None
