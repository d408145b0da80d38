"""The report's capacity section, from results/capacity/*.json."""

from __future__ import annotations

import json
from pathlib import Path

from syslogbench.report import capacity, markdown, sections


def a_result(run_id: str = "20261125T000000.000Z-syslog-ng-4.8-abcd-udp") -> dict:
    trial = {
        "number": 1, "offered_msgs_per_s": 4000.0, "duration_s": 10.0, "sent": 40000, "received": 39990,
        "lost": 10, "late": 5, "unsent": 0, "loss_ratio": 0.000375, "sender_bound": False, "daemon_exit": None,
        "latency_ms": {"p50": 2.0, "p90": 3.0, "p99": 7.5, "p999": 9.0, "max": 12.0}, "daemon_cpu_s": 1.25,
    }  # fmt: skip
    return {
        "run_id": run_id, "profile": "syslog-ng-4.8", "daemon_version": "4.8.1", "scenario": "udp",
        "transport": "udp", "outcome": "found", "machine": {"cpu_model": "AMD EPYC", "cores": 2},
        "ndr": {"loss_ratio": 0.0, "lower_msgs_per_s": 3800.0, "upper_msgs_per_s": 4000.0},
        "pdr": {"loss_ratio": 0.005, "lower_msgs_per_s": 4000.0, "upper_msgs_per_s": 4200.0},
        "latency_at_pdr": {"50%": {"p99": 4.5}}, "trials": [trial], "cpu_placement": {"daemon": "any"},
        "errors": [], "notes": [],
    }  # fmt: skip


def render(results: Path) -> str:
    return markdown.document(sections.document([], results, None))


def test_the_capacity_section_gives_ndr_pdr_and_each_trial(tmp_path: Path) -> None:
    (tmp_path / "capacity").mkdir()
    (tmp_path / "capacity" / "a.json").write_text(json.dumps(a_result()))
    text = render(tmp_path)
    assert capacity.TITLE in text
    assert (
        "| syslog-ng-4.8 | 4.8.1 | udp | udp | 3,800 | 3,800 .. 4,000 | 4,000 | 0.50% | 4.5 | found |" in text
    )
    assert "| 1 | 4,000 | 10 | 40,000 | 10 | 5 | 0 | 0.0375% | 2.0 | 7.5 | 12.0 | 1.2 |" in text


def test_no_capacity_results_no_section_and_a_damaged_one_is_named(tmp_path: Path) -> None:
    assert capacity.TITLE not in render(tmp_path)
    (tmp_path / "capacity").mkdir()
    (tmp_path / "capacity" / "bad.json").write_text(json.dumps({"run_id": "x"}))
    text = render(tmp_path)
    assert capacity.TITLE in text and "not read: bad.json: no profile" in text


def test_a_search_of_a_users_config_is_named_by_its_hash(tmp_path: Path) -> None:
    (tmp_path / "capacity").mkdir()
    (tmp_path / "capacity" / "a.json").write_text(json.dumps(a_result() | {"config": {"sha256": "ab" * 32}}))
    text = render(tmp_path)
    assert "| syslog-ng-4.8 (config abababababab) | 4.8.1 | udp |" in text
    assert "### syslog-ng-4.8 (config abababababab), udp (udp)" in text
