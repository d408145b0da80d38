"""`compare`: sides interleaved in rounds, paired by round into ratios over the first side, judged against an
A/A control (model/compare.py, host/compare.py), without containers."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest

from syslogbench.host import compare, environment
from syslogbench.model import compare as model
from syslogbench.report import compare as section
from syslogbench.report import markdown, sections


def runs(side: str, rates: list[float], cpu: float = 5.0, per_msg: float | None = None) -> list[model.Run]:
    """A side's runs, one per round: CPU per message per_msg, or (None) that of a daemon whose CPU over the
    burst is the same whatever its rate, cpu * 100,000 / rate."""
    return [model.Run(side, n, "pass", f"{side}-{n}", rate, per_msg or cpu * 100_000 / rate)
            for n, rate in enumerate(rates, start=1)]  # fmt: skip


# The machine drifts by a third over the rounds; B is 1.5 times A in every round, the control A again.
DRIFT = [100_000.0, 120_000.0, 90_000.0, 133_000.0, 110_000.0]


def drifted(factor: float, wobble: tuple[float, ...] = (1.0, 1.01, 0.99, 1.0, 1.005)) -> list[float]:
    return [rate * factor * w for rate, w in zip(DRIFT, wobble, strict=True)]


def test_the_ratio_holds_where_the_machine_drifts_under_both_sides() -> None:
    b_rates = drifted(1.5, (1.0, 0.99, 1.01, 1.005, 0.995))
    found = [*runs("A", DRIFT), *runs("A (A/A)", drifted(1.0)), *runs("B", b_rates)]
    judged = model.judge(found, ["A", "B"])
    ratios, floor, spread = judged.ratios, judged.floor["msgs_per_s"], judged.control_spread["msgs_per_s"]
    erratic = judged.erratic["msgs_per_s"]
    b = ratios["B"]["msgs_per_s"]
    assert b.value == pytest.approx(1.5, abs=0.02) and b.low is not None and b.high is not None
    assert 1.4 < b.low < 1.5 < b.high < 1.6 and b.verdict == "differs" and b.pairs == 5
    # The absolute rates spread by a third; their ratios by under 1%.
    assert max(DRIFT) / min(DRIFT) > 1.4 and spread is not None and spread < 0.01 and not erratic
    control = ratios["A (A/A)"]["msgs_per_s"]
    assert control.verdict == "not told apart" and control.low < 1.0 < control.high  # type: ignore[operator]
    assert floor == model.MIN_EFFECT  # the control is within 5% of 1
    assert ratios["B"]["cpu_us_per_msg"].value == pytest.approx(1 / 1.5, abs=0.02)


def test_a_side_within_the_floor_or_whose_interval_holds_one_is_not_told_apart() -> None:
    near = [*runs("A", DRIFT), *runs("A (A/A)", drifted(1.0)), *runs("B", drifted(1.03, (1.0,) * 5))]
    assert model.judge(near, ["A", "B"]).ratios["B"]["msgs_per_s"].verdict == "not told apart"  # 3%: under 5%
    wide = [*runs("A", DRIFT), *runs("A (A/A)", drifted(1.0)),
            *runs("B", drifted(1.2, (0.7, 1.4, 0.8, 1.3, 0.9)))]  # fmt: skip
    ratio = model.judge(wide, ["A", "B"]).ratios["B"]["msgs_per_s"]
    assert ratio.low < 1.0 < ratio.high and ratio.verdict == "not told apart"  # type: ignore[operator]


def test_a_control_that_spreads_past_ten_percent_makes_the_comparison_erratic() -> None:
    found = [*runs("A", DRIFT, per_msg=5.0), *runs("A (A/A)", drifted(1.0, (0.8, 1.2, 0.85, 1.25, 1.0)), per_msg=5.02),
             *runs("B", drifted(2.0, (1.0,) * 5), per_msg=8.0)]  # fmt: skip
    judged = model.judge(found, ["A", "B"])
    spread = judged.control_spread["msgs_per_s"]
    assert judged.erratic["msgs_per_s"] and spread is not None and spread > 0.10
    assert judged.ratios["B"]["msgs_per_s"].verdict == "erratic"
    # CPU per message is judged by its own control: its runs here spend the same per message every round.
    assert not judged.erratic["cpu_us_per_msg"] and judged.ratios["B"]["cpu_us_per_msg"].verdict == "differs"


def test_a_round_where_either_side_failed_is_no_pair() -> None:
    found = [*runs("A", DRIFT), *runs("B", drifted(1.5, (1.0,) * 5))]
    found[1] = model.Run("A", 2, "loss", "A-2", 5.0)  # a run with loss drained nothing comparable
    found[7] = model.Run("B", 3, "error", exit_code=3)
    assert len(model.paired(found, "B", "A", "msgs_per_s")) == 3
    one = [model.Run("A", 1, "pass", "a", 100.0), model.Run("B", 1, "pass", "b", 150.0)]
    assert model.interval(model.paired(one, "B", "A", "msgs_per_s")) == (pytest.approx(1.5), None, None)
    assert model.judge(one, ["A", "B"]).ratios["B"]["msgs_per_s"].verdict == "not told apart"  # no interval


def test_every_round_runs_each_side_once_and_the_first_twice_in_a_fresh_order() -> None:
    seed = compare.fresh_seed()
    order = compare.schedule(["A", "B", "C"], 4, seed)
    assert len(order) == 16
    rounds = [[name for number, name in order if number == r] for r in range(1, 5)]
    assert all(sorted(names) == ["A", "A (A/A)", "B", "C"] for names in rounds)
    assert len({tuple(names) for names in rounds}) > 1  # not the same order every round
    assert compare.schedule(["A", "B", "C"], 4, seed) == order  # the seed, recorded, repeats it
    assert len({compare.fresh_seed() for _ in range(8)}) > 1  # each comparison its own


def fake_sides(
    monkeypatch: pytest.MonkeyPatch, tuning: str, profile: Callable[[str], str]
) -> list[compare.Side]:
    """Sides A and B over seed2014, without plans: what write() needs of them."""
    monkeypatch.setattr(environment, "docker_version", lambda: "27.0.0")

    class Plan:
        scenario = type("S", (), {"id": "seed2014"})()

    record = property(lambda self: model.Side(self.name, profile(self.name), tuning))
    monkeypatch.setattr(compare.Side, "record", record)
    return [compare.Side("A", Plan()), compare.Side("B", Plan())]  # type: ignore[arg-type]


def test_the_comparison_is_written_as_the_model_reads_it_and_its_table_says_the_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sides = fake_sides(monkeypatch, "default", lambda name: name)
    found = [*runs("A", DRIFT), *runs("A (A/A)", drifted(1.0)), *runs("B", drifted(1.5, (1.0,) * 5))]
    path = compare.write(sides, "cid", compare.datetime.now(compare.UTC), 5, found, tmp_path, seed=7)  # type: ignore[arg-type]
    read = model.read(path)
    assert read.ratios["B"]["msgs_per_s"].verdict == "differs" and read.machine["docker_version"] == "27.0.0"
    text = compare.table(read)
    assert "B " in text and "differs" in text and "msgs/s: floor 5.0%" in text
    broken = json.loads(path.read_text()) | {"kind": "knobs"}
    with pytest.raises(model.CompareResultError, match="compare result: kind is \"knobs\", not 'compare'"):
        model.result_from_dict(broken)
    mixed = json.loads(path.read_text()) | {"measure": "capacity"}  # a burst's ratios read as NDRs
    with pytest.raises(
        model.CompareResultError, match=r"the ratios of 'A \(A/A\)' are of .*msgs_per_s.*, not capacity's"
    ):
        model.result_from_dict(mixed)


def test_the_interval_is_of_the_geometric_mean() -> None:
    value, low, high = model.interval([1.0, 4.0])
    assert value == pytest.approx(2.0) and low is not None and high is not None
    assert math.isclose(low * high, 4.0)  # symmetric on the log scale


def test_the_report_shows_each_comparison_with_its_ratios_and_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sides = fake_sides(monkeypatch, "tuned", lambda name: "p-" + name)
    found = [
        *runs("A", DRIFT),
        *runs("A (A/A)", drifted(1.0)),
        *runs("B", drifted(1.5, (1.0, 0.99, 1.01, 1.0, 1.0))),
    ]
    compare.write(sides, "cid", compare.datetime.now(compare.UTC), 5, found, tmp_path, seed=7)  # type: ignore[arg-type]
    doc = sections.document([], tmp_path, None)
    (part,) = [part for part in doc.sections if part.anchor == section.ANCHOR]
    text = markdown.blocks(part.blocks)
    assert "Comparison `cid` (bursts), scenario `seed2014`, 5 rounds, over `A`" in text
    row = next(line for line in text.splitlines() if line.startswith("| `B` "))
    assert (
        "| p-B | tuned | 1.500 [" in row and "| differs | 0.667 [" in row and row.endswith("| differs | 5 |")
    ), row
    assert any(line.startswith("| `A (A/A)` | p-A |") for line in text.splitlines())
    (tmp_path / "compare" / "bad.json").write_text("{}")
    assert "not read: bad.json" in markdown.blocks(
        next(p for p in sections.document([], tmp_path, None).sections if p.anchor == section.ANCHOR).blocks
    )
