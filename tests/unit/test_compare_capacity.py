"""`compare --capacity`: searches that take turns one trial at a time (host/capacity/interleave.py), each
search's result as the comparison keeps it, and NDR/PDR ratios that hold where the machine drifts under
every side (model/compare.py), without containers."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from syslogbench.host import cli, compare
from syslogbench.host.capacity import duet, interleave
from syslogbench.host.capacity.measurer import TrialFailed
from syslogbench.host.capacity.turns import Interleaved, Turns
from syslogbench.model import capacity, compare_pairs
from syslogbench.model import compare as model
from syslogbench.model.capacity import Ceiling

Terminated = cli.Terminated  # what SIGTERM raises in the main thread

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "results/capacity/20261204T234253.494Z-syslog-ng-4.8-8605-tls.json"


def take_turns(turns: Turns, name: str, times: int, holding: list[int], most: list[int]) -> None:
    for _ in range(times):
        with turns.turn(name):
            holding.append(1)
            most[0] = max(most[0], len(holding))
            time.sleep(0.002)
            holding.pop()
    turns.leave(name)


def test_the_searches_take_one_trial_at_a_time_each_once_a_time_round_in_a_fresh_order() -> None:
    turns = Turns(["A", "B", "C"], seed=47, wait_s=30)
    holding: list[int] = []
    most = [0]
    times = {"A": 6, "B": 6, "C": 3}  # C's search ends first: the turns go round without it
    threads = [
        threading.Thread(target=take_turns, args=(turns, n, k, holding, most)) for n, k in times.items()
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert most == [1] and len(turns.taken) == 15
    rounds = [turns.taken[i : i + 3] for i in range(0, 9, 3)]
    assert all(sorted(names) == ["A", "B", "C"] for names in rounds), turns.taken
    assert len({tuple(names) for names in rounds}) > 1  # not the same order every time round
    assert sorted(turns.taken[9:11]) == ["A", "B"] and "C" not in turns.taken[9:]


def test_a_turn_that_never_comes_is_an_error_and_a_stop_ends_the_next_turn_as_ctrl_c() -> None:
    turns = Turns(["A", "B"], seed=1, wait_s=0.05)
    first = turns._next()  # noqa: SLF001 - whose turn it is, to wait as the other
    other = "B" if first == "A" else "A"
    hung = f"^{other} waited 0 s for its turn: another search hung$"
    with pytest.raises(TrialFailed, match=hung), turns.turn(other):
        pass
    turns.stop()
    with pytest.raises(KeyboardInterrupt), turns.turn(first):
        pass
    turns.stop(Terminated)  # SIGTERM's kind: each search's result says SIGTERM, not Ctrl-C
    with pytest.raises(Terminated), turns.turn(first):
        pass


def runs(side: str, field: str, rates: list[float]) -> list[model.Run]:
    return [model.Run(side, n, "pass", f"{side}-{n}", **{field: rate}) for n, rate in enumerate(rates, 1)]


# The core's speed wanders by a third over the rounds, under every side at once (issue 47's spreads).
DRIFT = [100_000.0, 133_000.0, 88_000.0, 120_000.0]


def test_ndr_and_pdr_ratios_hold_where_the_machine_drifts_under_both_sides() -> None:
    wobble = (1.0, 1.01, 0.99, 1.005)
    found = []
    for field, over in (("ndr_msgs_per_s", 1.0), ("pdr_msgs_per_s", 1.1)):
        found += runs("A", field, [r * over for r in DRIFT])
        found += runs("A (A/A)", field, [r * over * w for r, w in zip(DRIFT, wobble, strict=True)])
        found += runs("B", field, [r * over * 2.2 * w for r, w in zip(DRIFT, reversed(wobble), strict=True)])
    merged: dict[tuple[str, int], model.Run] = {}
    for run in found:  # one run per side and round, carrying both figures
        kept = merged.setdefault((run.side, run.round), run)
        kept.ndr_msgs_per_s = kept.ndr_msgs_per_s or run.ndr_msgs_per_s
        kept.pdr_msgs_per_s = kept.pdr_msgs_per_s or run.pdr_msgs_per_s
    judged = model.judge(list(merged.values()), ["A", "B"], model.MEASURES["capacity"])
    assert max(DRIFT) / min(DRIFT) > 1.5  # the absolute NDRs spread by half
    for field in model.MEASURES["capacity"]:
        ratio = judged.ratios["B"][field]
        assert ratio.value == pytest.approx(2.2, rel=0.01) and ratio.verdict == "differs" and ratio.pairs == 4
        assert ratio.low is not None and ratio.high is not None and 2.1 < ratio.low < ratio.high < 2.3
        assert judged.ratios["A (A/A)"][field].verdict == "not told apart" and not judged.erratic[field]


def test_a_search_is_paired_where_it_found_an_ndr_and_never_where_its_ceiling_held(tmp_path: Path) -> None:
    document = json.loads(COMMITTED.read_text())
    found = tmp_path / "found.json"
    found.write_text(json.dumps(document))
    run = compare.search_run("A", 1, interleave.Ended(found, 0))
    assert (run.verdict, run.run_id, run.ndr_msgs_per_s) == (
        "pass",
        document["run_id"],
        document["ndr_msgs_per_s"],
    )
    held = tmp_path / "held.json"
    top = document["ndr_msgs_per_s"]
    document["settings"]["rate_max"] = top
    document["ndr"]["upper_msgs_per_s"] = None
    held.write_text(json.dumps(document))
    run = compare.search_run("A", 1, interleave.Ended(held, 0))
    assert run.verdict == "at least" and run.why is not None and run.why.startswith("NDR at least 81,473")
    assert capacity.read(held).at_ceiling
    none = compare.search_run("B", 2, interleave.Ended(None, 3, "the search wrote no result (exit code 3)"))
    assert (none.verdict, none.exit_code, none.why) == (
        "error",
        3,
        "the search wrote no result (exit code 3)",
    )
    judged = model.judge([run, compare.search_run("B", 1, interleave.Ended(found, 0))], ["A", "B"],
                         model.MEASURES["capacity"])  # fmt: skip
    assert judged.ratios["B"]["ndr_msgs_per_s"].pairs == 0  # "at least" is never a pair


def test_each_search_is_widened_to_the_wall_time_it_shares_and_one_too_long_is_one_line(
    capsys: pytest.CaptureFixture[str], small_host: None
) -> None:
    argv = ["compare", "--capacity", "--side", "syslog-ng-4.8", "--side", "rsyslog-8.2504", "RATE_MAX=1000"]
    assert cli.main([*argv, "SEARCH_MAX=3000", "--rounds", "2"]) == 2
    out = capsys.readouterr().out
    assert (
        out.startswith("syslogbench: error: SEARCH_MAX=9000 s with what follows its trials")
        and out.count("\n") == 1
    ), out


def test_the_project_of_a_side_is_a_compose_name() -> None:
    assert duet.slug("syslog-ng-4.8=/tmp/My Conf.conf") == "syslog-ng-4-8-my-conf-conf"
    assert duet.slug("syslog-ng-4.8=/tmp/My Conf.conf (A/A)") == "syslog-ng-4-8-my-conf-conf-aa"
    assert duet.slug("rsyslog-8.2504@tuned (A/A)") == "rsyslog-8-2504-tuned-aa"
    assert duet.slug("@@") == "side"


def test_a_config_of_ones_own_is_refused_as_a_side_of_capacity_in_one_line(
    capsys: pytest.CaptureFixture[str], small_host: None, tmp_path: Path
) -> None:
    config = tmp_path / "my.conf"
    config.write_text("@version: 4.8\n")
    argv = [
        "compare",
        "--capacity",
        "--side",
        "syslog-ng-4.8",
        "--side",
        f"syslog-ng-4.8={config}",
        "RATE_MAX=1000",
    ]
    assert cli.main(argv) == 2
    out = capsys.readouterr().out
    assert out.startswith(
        f"syslogbench: error: --side syslog-ng-4.8={config}: compare --capacity and --duet take profiles"
    )
    assert out.endswith("search it alone with capacity --config\n") and out.count("\n") == 1, out


def test_searches_that_land_on_the_same_rates_are_not_judged_finer_than_their_width() -> None:
    """MLRsearch's rates fall on a grid: A and its control found 319,239 in every round, and so did B's
    tuned searches 351,163. Their ratios have no spread, so the t-interval is a point; each search's upper
    bound (the lowest rate that failed) widens it to what the searches could tell apart."""
    found = []
    for number in (1, 2, 3):
        found += [model.Run("A", number, "pass", ndr_msgs_per_s=319_239.0, ndr_upper_msgs_per_s=351_163.0),
                  model.Run("A (A/A)", number, "pass", ndr_msgs_per_s=319_239.0, ndr_upper_msgs_per_s=351_163.0),
                  model.Run("B", number, "pass", ndr_msgs_per_s=351_163.0, ndr_upper_msgs_per_s=386_279.0)]  # fmt: skip
    judged = model.judge(found, ["A", "B"], model.MEASURES["capacity"])
    control, b = judged.ratios["A (A/A)"]["ndr_msgs_per_s"], judged.ratios["B"]["ndr_msgs_per_s"]
    assert (control.value, control.low, control.high) == (1.0, 0.9091, 1.1)  # 319,239 / 351,163 and back
    assert control.verdict == "not told apart"
    assert (
        b.value == 1.1 and b.low == 1.0 and b.verdict == "not told apart"
    )  # a grid step: not 10% told apart
    assert model.resolution(found, "B", "A", "cpu_us_per_msg") is None  # a burst's figure has no width


def test_a_search_result_that_cannot_be_read_is_that_runs_error_in_one_line(tmp_path: Path) -> None:
    document = json.loads(COMMITTED.read_text())
    del document["ndr"]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(document))
    run = compare.search_run("A", 1, interleave.Ended(broken, 0))
    assert run.verdict == "error" and run.why is not None and "ndr" in run.why and "\n" not in run.why, run
    assert run.ndr_msgs_per_s is None


@pytest.mark.parametrize("by", [KeyboardInterrupt, Terminated])
def test_a_round_that_ctrl_c_ends_still_says_how_each_of_its_searches_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by: type[KeyboardInterrupt]
) -> None:
    """The caller's `ended` holds every search's end after the KeyboardInterrupt: the compare's result then
    keeps that round's runs (an interrupted UDP compare of 2026-12-06 kept none of its round's five). Ctrl-C
    comes as KeyboardInterrupt from the main thread's first wait for a search (no signal: a test worker may
    ignore SIGINT)."""
    real_join = threading.Thread.join
    interrupted: list[bool] = []

    def join(self: threading.Thread, timeout: float | None = None) -> None:
        if getattr(self, "_target", None) is interleave.one and not interrupted:
            interrupted.append(True)
            raise by
        real_join(self, timeout)

    def searching(chosen: object, folder: Path, build: bool, log: object, project: str,
                  interleaved: Interleaved) -> int:  # fmt: skip
        try:
            while True:  # every search under way until the stop turns its next turn into Ctrl-C
                with interleaved.turn():
                    time.sleep(0.01)
        except KeyboardInterrupt as stopped:
            assert type(stopped) is by  # the searches stop as the command did (their results say which)
            (folder / "capacity").mkdir(parents=True)
            (folder / "capacity" / f"{folder.name}.json").write_text("{}")
            raise

    monkeypatch.setattr(threading.Thread, "join", join)
    search = (SimpleNamespace(cap=capacity.CapacitySettings()), Ceiling("given", 1000.0))
    ended: dict[str, interleave.Ended] = {}
    with pytest.raises(by):
        interleave.run({"A": search, "B": search}, tmp_path, 7, lambda line: None, searching, [], ended)  # type: ignore[dict-item]
    assert interrupted and sorted(ended) == ["A", "B"]
    assert sorted(ended[name].place for name in ended) == [1, 2]  # type: ignore[type-var]
    for name in ["A", "B"]:
        found = tmp_path / str(ended[name].place) / "capacity" / f"{ended[name].place}.json"
        assert (ended[name].why, ended[name].path) == ("stopped", found), ended[name]


def test_each_round_draws_every_search_s_place_afresh_so_the_first_side_takes_each_of_them() -> None:
    """A place is a search's folder and compose project in its round. With the first side always at 1, its
    copies came out below it (541e): drawn afresh each round, the first side takes every place, and a
    round's places are 1 to n, one each."""
    names = ["A", "B", "A (A/A)"]
    drawn = [interleave.places(names, seed) for seed in range(60)]
    assert all(sorted(where.values()) == [1, 2, 3] for where in drawn)
    assert {where["A"] for where in drawn} == {1, 2, 3}
    assert len({tuple(where.values()) for where in drawn}) == 6  # every order of three
    # Apart from the turns: the search with a round's first turn takes every place (drawn from the turns'
    # own seed, a place followed from the turn order: b9d2, 91d3).
    first = [(Turns(names, seed, 1.0)._next(), seed) for seed in range(200)]
    assert len({(name, interleave.places(names, seed)[name]) for name, seed in first}) == 9, first


def test_a_round_that_cannot_pair_still_bounds_the_ratio_by_what_each_search_held_and_failed() -> None:
    """A search that held every rate the rig could send ("at least 112,404") over one that failed at 79,391
    (unconfirmed: its upper bound alone): the round's ratio is at least 112,404 / 79,391, never paired, never
    judged. The inverse bounds it from above; a paired round and an error bound nothing."""
    found = [model.Run("A", 1, "unconfirmed", ndr_upper_msgs_per_s=79_390.9),
             model.Run("B", 1, "at least", ndr_msgs_per_s=112_404.2),
             model.Run("A", 2, "pass", ndr_msgs_per_s=50_000.0, ndr_upper_msgs_per_s=55_000.0),
             model.Run("B", 2, "unconfirmed", ndr_upper_msgs_per_s=60_000.0),
             model.Run("A", 3, "pass", ndr_msgs_per_s=50_000.0, ndr_upper_msgs_per_s=55_000.0),
             model.Run("B", 3, "pass", ndr_msgs_per_s=60_000.0, ndr_upper_msgs_per_s=66_000.0),
             model.Run("A", 4, "error", ndr_upper_msgs_per_s=1.0),
             model.Run("B", 4, "at least", ndr_msgs_per_s=1.0)]  # fmt: skip
    ratio = model.judge(found, ["A", "B"], model.MEASURES["capacity"]).ratios["B"]["ndr_msgs_per_s"]
    assert [(b.round, b.low, b.high) for b in ratio.bounds] == [(1, 1.4158, None), (2, None, 1.2)]
    assert (ratio.pairs, ratio.value, ratio.verdict) == (1, 1.2, "not told apart")
    assert ratio.text(pairs=True) == "1.200 (n=1); round 1 ≥ 1.416; round 2 ≤ 1.200"
    assert model.bounds(found, "B", "A", "cpu_us_per_msg") == []  # a burst's figure is not a search's


def test_the_committed_udp_comparison_that_paired_nothing_says_what_its_round_bounds() -> None:
    """02d6: rsyslog-8.2504@tuned held all one core of senders sent (at least 112,404 msg/s) where its
    defaults failed at 79,391 and syslog-ng-4.8's at 56,297: at least 1.416 and 1.997 times them."""
    found = model.read(ROOT / "results/compare/20261206T172726.427Z-compare-02d6-udp-capacity.json")
    model.judge_again(found)
    ndr = found.ratios["rsyslog-8.2504@tuned"]["ndr_msgs_per_s"]
    assert (ndr.pairs, ndr.verdict, ndr.text()) == (0, "no ratio", "-; round 1 ≥ 1.997")
    tuning = next(p for p in compare_pairs.pairs(found) if p.base == "rsyslog-8.2504")
    assert tuning.ratios["ndr_msgs_per_s"].text() == "-; round 1 ≥ 1.416"


def test_the_cpu_rate_is_half_the_lowest_burst_drain_rate_and_none_without_every_burst() -> None:
    """Below every side's saturation: half the slowest side's drain rate, to three figures; a side whose
    RATE_MAX was given (no burst) leaves no rate known to be below its saturation."""
    ceilings = {
        "A": Ceiling("burst", 347_000, "a", 115_426, 3.0),
        "B": Ceiling("burst", 237_000, "b", 78_861, 3.0),
    }
    assert compare.cpu_rate_of(ceilings) == 39_400.0  # 0.5 x 78,861 = 39,430.5
    assert compare.cpu_rate_of(ceilings | {"C": Ceiling("given", 500_000)}) is None
    assert compare.cpu_rate_of({}) is None


def test_a_search_s_cpu_per_message_comes_from_its_trial_at_the_fixed_rate_and_only_where_it_lost_nothing(
    tmp_path: Path,
) -> None:
    document = json.loads(COMMITTED.read_text())
    held = next(t for t in document["trials"] if t["purpose"] == "search" and t["loss_ratio"] == 0)
    document["trials"].insert(1, held | {"purpose": "at rate", "daemon_cpu_s": 0.5})
    path = tmp_path / "at-rate.json"
    path.write_text(json.dumps(document))
    run = compare.search_run("A", 1, interleave.Ended(path, 0))
    assert run.cpu_us_per_msg == round(0.5 / held["received"] * 1e6, 3) and run.why is None
    lost = held | {"purpose": "at rate", "daemon_cpu_s": 0.5, "loss_ratio": 0.01, "late": 10}
    document["trials"][1] = lost
    path.write_text(json.dumps(document))
    found = capacity.read(path)
    assert compare.cpu_at_rate(found)[0] is None
    assert "no CPU per message there" in (compare.cpu_at_rate(found)[1] or "")
    without = json.loads(COMMITTED.read_text())  # a search of no comparison: no such trial, no figure
    path.write_text(json.dumps(without))
    assert compare.cpu_at_rate(capacity.read(path)) == (None, None)
