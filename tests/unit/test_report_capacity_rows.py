"""The capacity summary's rows and flags, over searches recorded in results/capacity/ (read, never written)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from syslogbench.model import capacity as model
from syslogbench.model import machine
from syslogbench.report import capacity_flags, capacity_rows, load

EARLIER = "other settings (CONFIRM_S=0, DAEMON_CORES=0, EXCEED_RATIO=0, TRIAL_SUM=0)"  # searched before today's defaults
RECORDED = Path(__file__).resolve().parents[2] / "results" / "capacity"


def recorded(stem: str) -> dict:
    path = RECORDED / f"{stem}.json"
    if not path.is_file():
        pytest.skip(f"{path.name} is not in results/capacity/")
    return model.read(path).to_dict()


def test_the_baseline_that_outran_the_watcher_is_a_floor() -> None:
    # The watcher fell behind at 200,000 and 180,000 msg/s; 106,288 msg/s held and nothing above it failed.
    search = recorded("20261125T215218.148Z-baseline-af85-seed2014")
    assert capacity_flags.flags(search) == [capacity_flags.RIG_LIMITED, EARLIER]


def test_a_relay_search_the_rig_limited_is_a_floor() -> None:
    search = recorded("20261126T091203.037Z-syslog-ng-4.8-0c01-relay")
    assert capacity_flags.flags(search) == [capacity_flags.RIG_LIMITED, EARLIER]


def test_a_later_trial_below_the_ndr_that_lost_contradicts_it() -> None:
    # NDR 93,049 msg/s; trial 17, at 90% of the PDR (83,744 msg/s), lost 0.56%.
    search = recorded("20261125T203543.483Z-syslog-ng-3.38-f7b8-seed2014")
    assert capacity_flags.contradictions(search) == [
        "NDR: trial 17 lost 0.56% at 83,744 msg/s",
        "PDR: trial 17 lost 0.56% at 83,744 msg/s",
    ]
    assert capacity_flags.flags(search) == [capacity_flags.CONTRADICTED, EARLIER]


def test_a_search_whose_later_trials_held_is_not_contradicted() -> None:
    search = recorded("20261125T203132.539Z-syslog-ng-3.28-7850-seed2014")
    assert capacity_flags.contradictions(search) == []
    assert capacity_flags.flags(search) == [EARLIER]


def test_steps_down_above_a_confirmed_rate_do_not_contradict_it() -> None:
    # Search bounds 163,084 .. 171,619; 60 s confirmations lost 88%, 35%, 3.5% and 66% at 163,084 down to
    # 118,888 msg/s, then 106,999.5 held: the published rate.
    search = recorded("20261127T002610.984Z-syslog-ng-4.8-80e5-seed2014")
    assert search["ndr"]["confirmed_msgs_per_s"] == 106999.5
    assert capacity_flags.contradictions(search) == []
    late = {**search, "trials": [*search["trials"], {**search["trials"][-1], "number": 99, "loss_ratio": 0.5,
                                                      "offered_msgs_per_s": 50000.0}]}  # fmt: skip
    assert capacity_flags.contradictions(late) == [
        "NDR: trial 99 lost 50.00% at 50,000 msg/s",
        "PDR: trial 99 lost 50.00% at 50,000 msg/s",
    ]


def test_a_users_config_is_a_test_config_with_its_other_settings() -> None:
    # rsyslog-8.2504 with a deliberate 1 s delay, LATENCY_BOUND=3, RATE_MAX=2,000 (reached: a floor).
    search = recorded("20261125T213020.379Z-rsyslog-8.2504-dde3-seed2014")
    assert capacity_flags.flags(search) == [
        capacity_flags.AT_RATE_MAX,
        capacity_flags.TEST_CONFIG,
        "other settings (CONFIRM_S=0, DAEMON_CORES=0, EXCEED_RATIO=0, LATENCY_BOUND=3, TRIAL_SUM=0)",
    ]
    assert capacity_rows.profile_of(search) == "rsyslog-8.2504 (config c4a69c79e3d5)"


def test_other_settings_name_what_changes_the_measure_not_the_search_range() -> None:
    pinned = recorded("20261125T213145.622Z-rsyslog-8.2504-f7a4-seed2014")
    # RATE_MAX=200,000 is not named; a key the result lacks is what its search ran with (BEFORE_THE_KEY);
    # DAEMON_CORES=1 is a 2-core machine's default (half its cores).
    assert pinned["machine"]["cores"] == 2 and pinned["settings"]["daemon_cores"] == 1
    assert capacity_flags.other_settings(pinned) == ["CONFIRM_S=0", "EXCEED_RATIO=0", "TRIAL_SUM=0"]
    any_core = {**pinned, "settings": {**pinned["settings"], "daemon_cores": 0.0}}
    assert "DAEMON_CORES=0" in capacity_flags.other_settings(any_core)
    on_eight = {**pinned, "machine": {**pinned["machine"], "cores": 8}}
    assert "DAEMON_CORES=1" in capacity_flags.other_settings(on_eight)  # 4 is that machine's default
    on_a_swarm = {**any_core, "nodes": [{"node": "n2"}]}
    assert "DAEMON_CORES=0" not in capacity_flags.other_settings(on_a_swarm)  # the daemon had a node
    repeated = recorded("20261126T092751.295Z-rsyslog-8.2504-a3f6-seed2014")  # TRIAL_SUM=30 EXCEED_RATIO=0.5
    assert capacity_flags.other_settings(repeated) == ["CONFIRM_S=0", "DAEMON_CORES=0"]


def test_a_confirmation_verdict_is_read_where_a_result_has_one() -> None:
    search = recorded("20261125T203132.539Z-syslog-ng-3.28-7850-seed2014")
    assert capacity_flags.confirmation(search) is None  # today's results carry none: no flag
    failed = {**search["pdr"], "confirmed": False, "unconfirmed": "the 60 s trial lost 3%"}
    assert capacity_flags.UNCONFIRMED in capacity_flags.flags(search | {"pdr": failed})
    held = {**search["ndr"], "confirmed": True, "confirmed_msgs_per_s": search["ndr"]["lower_msgs_per_s"]}
    assert capacity_flags.UNCONFIRMED not in capacity_flags.flags(search | {"ndr": held})


def test_rows_pool_repeats_per_settings_and_sort_by_transport_tuning_then_ndr() -> None:
    searches = [model.read(path).to_dict() for path in sorted(RECORDED.glob("*.json"))]
    if len(searches) < 20:
        pytest.skip("fewer recorded searches than this test was written for")
    rows = capacity_rows.rows(searches)
    transports = [row.transport for row in rows]
    assert transports == sorted(transports, key=capacity_rows.transport_rank)
    for transport in set(transports):
        tunings = [row.tuning for row in rows if row.transport == transport]
        assert tunings == sorted(tunings, key=load.tuning_rank), transport
        for tuning in set(tunings):
            ndrs = [row.ndr or 0 for row in rows if (row.transport, row.tuning) == (transport, tuning)]
            assert ndrs == sorted(ndrs, reverse=True), (transport, tuning)  # none published: last
    # syslog-ng-4.8 over TCP at the earlier defaults: two searches, 84,024 and 97,919 msg/s, pooled into one
    # row (the TRIAL_SUM=30 pair is a row of its own).
    earlier = ("CONFIRM_S=0", "DAEMON_CORES=0", "EXCEED_RATIO=0", "TRIAL_SUM=0")
    pooled = [
        row
        for row in rows
        if row.profile == "syslog-ng-4.8" and row.scenario == "seed2014" and row.settings == earlier
    ]
    assert [(row.n, sorted(row.ndrs)) for row in pooled] == [(2, [84023.8, 97918.8])]
    assert pooled[0].ndr == pytest.approx(90971.3)
    assert pooled[0].flags == ["contradicted (1 of 2)", EARLIER]
    assert not pooled[0].plain and pooled[0].earlier_procedure and pooled[0].own_config


def test_a_trial_whose_rig_was_heavy_flags_its_search() -> None:
    search = recorded("20261125T203132.539Z-syslog-ng-3.28-7850-seed2014")
    assert capacity_flags.RIG_HEAVY not in capacity_flags.flags(search)  # no rig cost recorded then
    trials = [dict(t) for t in search["trials"]]
    last = next(t for t in reversed(trials) if t.get("purpose", "search") == "search")
    last["rig"] = {"flags": ["the rig took 6.1% of the daemon's CPU (over 5%)"]}
    heavy = search | {"trials": trials}
    assert capacity_flags.RIG_HEAVY in capacity_flags.flags(heavy)
    assert capacity_flags.rig_heavy(heavy) == [
        f"trial {last['number']}: the rig took 6.1% of the daemon's CPU (over 5%)"
    ]


@pytest.mark.parametrize(
    ("busy", "steal", "daemon_cores", "flagged"),
    [
        (9.0, 0.0, 1.0, False),
        (9.0, 0.5, 1.0, False),  # 0.5 s of 10 s stolen: 5.0%, not over
        (9.0, 0.6, 1.0, True),  # 6.0%
        (9.9, 0.0, 1.0, False),  # 0.9 s busy beyond the daemon's 9.0: not flagged (tick-sampled)
        (9.0, 0.6, 0.0, False),  # the daemon had no cores of its own: the rig ran there too
    ],
)
def test_a_trial_whose_daemon_core_was_stolen_flags_its_search(
    busy: float, steal: float, daemon_cores: float, flagged: bool
) -> None:
    search = recorded("20261125T203132.539Z-syslog-ng-3.28-7850-seed2014")
    assert capacity_flags.STOLEN not in capacity_flags.flags(search)  # no cores recorded then
    trials = [dict(t) for t in search["trials"]]
    last = next(t for t in reversed(trials) if t.get("purpose", "search") == "search")
    idle = 10.0 - busy - steal
    last |= {
        "daemon_cpu_s": 9.0,
        "daemon_cores": "1",
        "daemon_cores_busy_s": busy,
        "daemon_cores_idle_s": idle,
    }
    last |= {"daemon_cores_steal_s": steal, "host_steal_s": steal}
    shared = search | {"trials": trials, "settings": search["settings"] | {"daemon_cores": daemon_cores}}
    assert (capacity_flags.STOLEN in capacity_flags.flags(shared)) is flagged
    if flagged:
        assert capacity_flags.stolen(shared) == [
            f"trial {last['number']}: {steal / 10:.1%} of core 1's time stolen"
        ]


def with_cpu(search: dict, per_cpu_s: float | None) -> dict:
    fingerprint = {} if per_cpu_s is None else {"cpu": {"value": per_cpu_s, "per_cpu_s": per_cpu_s}}
    return search | {"machine": (search.get("machine") or {}) | {"fingerprint": fingerprint}}


def test_a_row_whose_machines_did_different_work_per_cpu_second_says_so() -> None:
    """Two searches on machines the Machines table names alike, whose cpu fingerprints differ by 71%: the row
    says so, with the range; within FINGERPRINT_SPREAD_MAX, or with one fingerprint, it does not."""
    fast = recorded("20261127T005659.228Z-rsyslog-8.2504-7c71-seed2014")
    slow = recorded("20261127T033110.620Z-rsyslog-8.2504-75a0-seed2014")
    assert capacity_rows.machine_of(fast) == capacity_rows.machine_of(slow)
    [row] = capacity_rows.rows([fast, slow])
    assert row.flags[-1] == "fingerprints differ (cpu 8.4M-14.3M loops per CPU s)"
    near = capacity_rows.rows([with_cpu(fast, 10e6), with_cpu(slow, 12.5e6)])[0]
    assert not [flag for flag in near.flags if flag.startswith(capacity_flags.FINGERPRINTS_DIFFER)]
    apart = capacity_rows.rows([with_cpu(fast, 10e6), with_cpu(slow, 12.6e6)])[0]
    assert apart.flags[-1] == "fingerprints differ (cpu 10.0M-12.6M loops per CPU s)"
    alone = capacity_rows.rows([with_cpu(fast, 10e6), with_cpu(slow, None)])[0]
    assert not [flag for flag in alone.flags if flag.startswith(capacity_flags.FINGERPRINTS_DIFFER)]


def test_two_boots_of_one_cpu_model_and_kernel_are_two_machines_and_older_results_keep_their_label(
    tmp_path: Path,
) -> None:
    """The two searches above differ in their fingerprints alone; given each its boot, they never pool."""
    fast = recorded("20261127T005659.228Z-rsyslog-8.2504-7c71-seed2014")
    slow = recorded("20261127T033110.620Z-rsyslog-8.2504-75a0-seed2014")
    assert "boot" not in fast["machine"] and "boot" not in capacity_rows.machine_of(fast)
    one, two = (search | {"machine": search["machine"] | {"boot": b}} for search, b in ((fast, "a1b2c3d4"),
                                                                                        (slow, "0f0e0d0c")))  # fmt: skip
    assert capacity_rows.machine_of(one) == capacity_rows.machine_of(fast) + ", boot a1b2c3d4"
    assert [row.n for row in capacity_rows.rows([one, two])] == [1, 1]
    boot_id = tmp_path / "boot_id"
    boot_id.write_text("cee10cdb-09fa-4a6a-97a2-47978ba73af7\n")
    assert machine.boot(boot_id) == "cee10cdb"
    boot_id.write_text("not a boot id\n")
    assert machine.boot(boot_id) is None and machine.boot(tmp_path / "none") is None


UDP_SEARCHES = {  # syslog-ng 4.8 over UDP on one machine: the kernel's default buffer, then 4m and 32m
    "default": "20261127T145610.241Z-syslog-ng-4.8-31bb-udp",
    "4m": "20261127T150624.720Z-syslog-ng-4.8-6abe-udp",
    "32m": "20261127T151312.975Z-syslog-ng-4.8-f019-udp",
}


def test_searches_at_different_udp_buffers_are_never_pooled() -> None:
    searches = [recorded(stem) for stem in UDP_SEARCHES.values()]
    found = {row.settings: row.n for row in capacity_rows.rows(searches)}
    anywhere = "DAEMON_CORES=0"  # they ran before the daemon had cores of its own by default
    assert found == {(anywhere,): 1, (anywhere, "UDP_RCVBUF=4m"): 1, (anywhere, "UDP_RCVBUF=32m"): 1}
    assert capacity_flags.other_settings(recorded(UDP_SEARCHES["4m"])) == [anywhere, "UDP_RCVBUF=4m"]


def test_a_search_unconfirmed_only_at_its_pdr_keeps_its_confirmed_ndr() -> None:
    search = recorded(UDP_SEARCHES["default"])
    assert (search["outcome"], search["ndr"]["confirmed"], search["pdr"]["confirmed"]) == (
        "unconfirmed", True, False,
    )  # fmt: skip
    assert capacity_flags.at_least(search) is None
    (row,) = capacity_rows.rows([search])
    assert (row.ndr, row.pdr, row.own_config) == (search["ndr"]["confirmed_msgs_per_s"], None, True)
    unconfirmed_ndr = {**search, "ndr": {**search["ndr"], "confirmed": False}}
    assert capacity_flags.at_least(unconfirmed_ndr) == "at least (unconfirmed)"


def test_a_search_capped_at_rate_max_is_not_pooled_with_searches_that_found_a_rate() -> None:
    capped = recorded("20261127T174542.580Z-syslog-ng-4.8-b0ef-seed2014")  # held RATE_MAX=200000 for 60 s
    found = recorded("20261127T183405.994Z-syslog-ng-4.8-b32c-seed2014")  # RATE_MAX=400000: 159,159
    rows = capacity_rows.rows([capped, found])
    assert sorted((row.n, row.ndr, row.own_config) for row in rows) == [
        (1, 159159.0, True), (1, 200000.0, False),
    ]  # fmt: skip


def test_a_search_whose_confirmation_broke_at_rate_max_found_the_daemons_limit_below_it() -> None:
    capped = recorded("20261127T174542.580Z-syslog-ng-4.8-b0ef-seed2014")  # held RATE_MAX=200000 for 60 s
    assert capacity_flags.at_least(capped) == capacity_flags.AT_RATE_MAX
    # The same search had its 60 s trial at 200,000 broken and confirmed 180,000: a limit, not a floor.
    broken = {**capped, "ndr": {**capped["ndr"], "confirmed_msgs_per_s": 180_000.0}}
    assert capacity_flags.at_least(broken) is None
    made = model.result_from_dict(broken)
    assert (
        not dataclasses.replace(made, ndr_msgs_per_s=180_000.0).at_ceiling
        and model.result_from_dict(capped).at_ceiling
    )
