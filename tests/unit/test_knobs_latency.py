"""`knobs --latency-rate`: each step's p99 latency from one capacity trial at one fixed rate for all steps,
kept in the study and shown in its knob table."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from syslogbench.host import knobs as command
from syslogbench.host.tuning import TuningError
from syslogbench.model import capacity
from syslogbench.model import knobs as model
from tests.unit.test_report_knobs import STUDY, knob_section, results, write  # noqa: F401


@pytest.mark.parametrize("word", ["fast", "50", "-1", "inf", "nan", ""])
def test_a_latency_rate_that_is_no_rate_is_one_line(word: str) -> None:
    with pytest.raises(TuningError, match=r"^--latency-rate .*: give msg/s in all senders, at least 100"):
        command.latency_option(word)


@pytest.mark.parametrize(("word", "taken"), [("auto", "auto"), ("off", "off"), ("2500", 2500.0)])
def test_a_latency_rate_is_a_rate_or_auto_or_off(word: str, taken: float | str) -> None:
    assert command.latency_option(word) == taken


def job(latency: float | str) -> command.Knobs:
    return command.Knobs(None, (), {}, 1, False, {}, latency)  # type: ignore[arg-type]


def test_auto_is_half_the_default_steps_median_drain_rate_to_three_figures() -> None:
    rates = {"default": [101_234.0, 98_000.0, 99_000.0], "file-cache": [300_000.0]}
    assert command.fixed_rate(job("auto"), rates) == 49_500.0
    assert command.fixed_rate(job(2500.0), rates) == 2500.0
    assert command.fixed_rate(job("off"), rates) is None
    assert command.fixed_rate(job("auto"), {"default": []}) is None  # no rate: no fixed one from it


def trial(**given: object) -> capacity.Trial:
    values: dict[str, object] = dict(
        number=3, offered_msgs_per_s=50_000.0, duration_s=10.0, intended=500_000, sent=500_000,
        received=500_000, lost=0, late=0, unsent=0, duplicated=0, loss_ratio=0.0, achieved_msgs_per_s=49_990.0,
        sender_bound=False, latency_ms=capacity.Latency(p50=0.3, p99=4.5, max=9.0), latency_histogram_us={},
        sample_s=0.1, stale_lines=0, daemon_cpu_s=2.5, watcher_cpu_s=1.0, udp_rcvbuf_errors=None,
        udp_in_errors=None,
    )  # fmt: skip
    return capacity.trial_from_dict({**values, **given, "latency_ms": {"p50": 0.3, "p99": 4.5, "max": 9.0}})


def test_a_steps_latency_keeps_the_trials_percentiles_counts_and_cpu_per_message() -> None:
    kept = command.latency_of(trial(), 50_000.0)
    assert kept == {
        "rate_msgs_per_s": 50_000.0, "p50_ms": 0.3, "p99_ms": 4.5, "max_ms": 9.0, "intended": 500_000,
        "received": 500_000, "lost": 0, "late": 0, "cpu_us_per_msg": 5.0, "error": None,
    }  # fmt: skip
    assert model.FixedRate(**kept).p99_ms == 4.5  # the model reads what the command keeps
    said = command.latency_of("the trial at 50,000 msg/s: the daemon died (exit code 1)", 50_000.0)
    assert said == {
        "rate_msgs_per_s": 50_000.0,
        "error": "the trial at 50,000 msg/s: the daemon died (exit code 1)",
    }


def test_the_knob_table_shows_each_steps_p99_at_the_fixed_rate(tmp_path: Path) -> None:
    study = copy.deepcopy(STUDY)
    study["latency_rate"] = 50_000.0
    for found in study["steps"]:
        if found["phase"] != "control":
            found["latency"] = {"rate_msgs_per_s": 50_000.0, "p99_ms": 4.5 if found["name"] != "io-buffer" else None,
                                "error": "the trial at 50,000 msg/s: the daemon died" if found["name"] == "io-buffer" else None}  # fmt: skip
    write(tmp_path, study)
    text = knob_section(tmp_path)
    assert "p99 ms at the fixed rate" in text and "50,000 msg/s in all senders" in text
    row = next(line for line in text.splitlines() if line.startswith("| `file-cache=192` "))
    assert row.rstrip(" |").endswith("4.50"), row
    broken = next(line for line in text.splitlines() if line.startswith("| `io-buffer` "))
    assert "none: the trial at 50,000 msg/s: the daemon died" in broken, broken


def test_a_study_without_a_fixed_rate_has_no_latency_column(results: Path) -> None:  # noqa: F811
    header = next(line for line in knob_section(results).splitlines() if line.startswith("| step "))
    assert "p99" not in header and "fixed rate of its latency" not in knob_section(results)
