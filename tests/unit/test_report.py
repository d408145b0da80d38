"""The Markdown report and the 2014 reference data."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from syslogbench import report, seed2014

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())
SEED_TEXT = Path("/work/shared/seeds/000_c0a1f4aba303bdb8.txt")
GIB = 2**30
MIB = 2**20


def limit(requested: float, effective: float | None) -> dict[str, Any]:
    return {"requested": requested, "configured": requested, "effective": effective}


def make_result(run_id: str, profile: str, finished: str, **changes: Any) -> dict[str, Any]:
    result: dict[str, Any] = {
        "schema_version": 1,
        "run_id": run_id,
        "started_utc": "2025-01-01T00:00:00Z",
        "finished_utc": finished,
        "verdict": "pass",
        "errors": [],
        "notes": [],
        "scenario": {
            "id": "seed2014",
            "hosts": 5,
            "senders_per_host": 4,
            "messages_per_sender": 300000,
            "transport": "tcp",
            "format": "bsd",
            "port": 514,
            "done_threshold": 20,
            "done_window_s": 60,
            "run_timeout_s": 3600,
            "seed": 1,
        },
        "daemon": {
            "profile": profile,
            "name": profile.split("-")[0],
            "version": f"{profile} 1.2.3",
            "image": f"syslogbench/{profile}:test",
            "base": "debian:bookworm@sha256:abc",
            "settings": {},
            "stopped": True,
            "exit_code": 0,
        },
        "limits": {
            "central_cpus": limit(8, 8),
            "central_memory_bytes": limit(2 * GIB, 2 * GIB),
            "remote_cpus": limit(2, 2),
            "remote_memory_bytes": limit(GIB / 2, GIB / 2),
        },
        "host": {
            "cpu_model": "Test CPU 9000",
            "cores": 16,
            "memory_bytes": 32 * GIB,
            "kernel": "6.1.0-test",
            "docker_version": "24.0.7",
            "cgroup_version": 2,
        },
        "elapsed_s": 42.5,
        "end": {"trigger": "sec", "sec_fired_s": 42.6, "done_spread_s": 1.5},
        "cpu": {"user_s": 30.25, "system_s": 20.75, "percent": 120.0},
        "memory": {"peak_bytes": 300 * MIB, "max_rss_bytes": 12.5 * MIB},
        "io": {"write_bytes": None, "output_bytes": 123456},
        "messages": {
            "expected": 6000020,
            "sent": 6000020,
            "received": 6000020,
            "lost": 0,
            "duplicated": 0,
            "misfiled": 0,
            "done_expected": 20,
            "done_received": 20,
            "done_log_lines": 20,
        },
        "senders": [],
        "throughput": {"msgs_per_s": 141176.9, "mb_per_s": 12.3},
        "summary": "30.25user 20.75system 0:42.50elapsed 120%CPU",
    }
    for dotted, value in changes.items():
        *parents, key = dotted.split("__")
        target = result
        for parent in parents:
            target = target[parent]
        target[key] = value
    jsonschema.validate(result, SCHEMA)
    return result


OLD = make_result("20250101T000000Z-rsyslog8", "rsyslog8", "2025-01-01T00:10:00Z", elapsed_s=99.99)
NEW = make_result(
    "20250102T000000Z-rsyslog8",
    "rsyslog8",
    "2025-01-02T00:10:00+00:00",
    elapsed_s=61.23,
    cpu__user_s=40.5,
    cpu__system_s=35.25,
    cpu__percent=123.4,
    memory__peak_bytes=512 * MIB,
    memory__max_rss_bytes=210.25 * MIB,
    throughput__msgs_per_s=97991.5,
    messages__received=5999000,
    messages__lost=1030,
    messages__duplicated=10,
    verdict="loss",
)
NULLS = make_result(
    "20250101T120000Z-syslog-ng",
    "syslog-ng",
    "2025-01-01T12:00:00Z",
    verdict="timeout",
    elapsed_s=None,
    cpu__user_s=None,
    cpu__system_s=None,
    cpu__percent=None,
    memory__peak_bytes=None,
    memory__max_rss_bytes=None,
    throughput__msgs_per_s=None,
    limits__central_cpus=limit(16, None),
)
OTHER_SCENARIO = make_result(
    "20250103T000000Z-rsyslog8", "rsyslog8", "2025-01-03T00:00:00Z", scenario__id="small", elapsed_s=7.77
)


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    for result in (OLD, NEW, NULLS, OTHER_SCENARIO):
        (tmp_path / f"{result['run_id']}.json").write_text(json.dumps(result))
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "list.json").write_text("[1, 2, 3]")
    (tmp_path / "other.json").write_text(json.dumps({"hello": "world"}))
    (tmp_path / "notes.txt").write_text("not a result")
    return tmp_path


def table_row(markdown: str, first_cell: str) -> list[str]:
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("|") and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no table row for {first_cell!r}")


# -- loading ---------------------------------------------------------------------------------------


def test_load_results_skips_non_results(results_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="syslogbench.report"):
        loaded = report.load_results(results_dir)
    assert sorted(r["run_id"] for r in loaded) == sorted(
        r["run_id"] for r in (OLD, NEW, NULLS, OTHER_SCENARIO)
    )
    warned = caplog.text
    for name in ("broken.json", "list.json", "other.json"):
        assert name in warned
    assert "schema.json" not in warned


def test_latest_per_profile_picks_newest() -> None:
    latest = report.latest_per_profile([NEW, OLD, NULLS, OTHER_SCENARIO])
    assert [r["run_id"] for r in latest] == [NEW["run_id"], NULLS["run_id"]]
    assert [r["run_id"] for r in report.latest_per_profile([OLD, NEW])] == [NEW["run_id"]]


def test_latest_per_profile_other_scenario() -> None:
    latest = report.latest_per_profile([NEW, OLD, NULLS, OTHER_SCENARIO], "small")
    assert [r["run_id"] for r in latest] == [OTHER_SCENARIO["run_id"]]


# -- rendering -------------------------------------------------------------------------------------


def test_runs_table_has_exact_figures(results_dir: Path) -> None:
    markdown = report.render_markdown(results_dir)
    assert markdown.startswith("# ")
    row = table_row(markdown, "rsyslog8")
    assert row == [
        "rsyslog8",
        "rsyslog8 1.2.3",
        "loss",
        "61.23",
        "40.50",
        "35.25",
        "123%",
        "512.0",
        "210.2",
        "97,992",
        "5,999,000 / 6,000,020",
        "1,030",
        "10",
        "8",
        "2.00 GiB",
        "`20250102T000000Z-rsyslog8`",
    ]
    assert "99.99" not in markdown  # the older run is not shown
    assert "7.77" not in markdown  # nor the other scenario


def test_null_figures_are_na(results_dir: Path) -> None:
    row = table_row(report.render_markdown(results_dir), "syslog-ng")
    assert row[2] == "timeout"
    assert row[3:10] == ["n/a"] * 7
    assert row[13] == "n/a"  # effective central CPUs unknown


def test_machine_line(results_dir: Path) -> None:
    markdown = report.render_markdown(results_dir)
    line = "Machine: Test CPU 9000, 16 cores, 32.0 GiB RAM, kernel 6.1.0-test, cgroup v2, Docker 24.0.7."
    assert line in markdown.splitlines()


def test_seed_section(results_dir: Path) -> None:
    markdown = report.render_markdown(results_dir)
    seed_part = markdown[markdown.index("## Published 2014 figures") :]
    assert "Intel E5-2620" in seed_part
    assert table_row(seed_part, "Rsyslog8")[:2] == ["Rsyslog8", "70.52"]
    assert table_row(seed_part, "Syslog-ng 3.5") == [
        "Syslog-ng 3.5",
        "20.56",
        "20.56, 21.86, 19.82",
        "62.21",
        "45.53",
        "529%",
        "29.2",
        "291,830",
    ]
    assert table_row(seed_part, "NXLog")[1] == "367.30"
    assert "derived by us" in seed_part
    assert "cgroup peak" in markdown and "RSS to RSS" in markdown


def test_empty_results_dir(tmp_path: Path) -> None:
    markdown = report.render_markdown(tmp_path)
    assert "No runs of scenario `seed2014`" in markdown
    assert "## Published 2014 figures" in markdown


def test_main_writes_output(results_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out" / "report.md"
    out.parent.mkdir()
    assert report.main(["--results", str(results_dir), "--output", str(out)]) == 0
    assert out.read_text() == report.render_markdown(results_dir)
    assert report.main(["--results", str(results_dir), "--scenario", "small"]) == 0
    assert "7.77" in capsys.readouterr().out


# -- the 2014 data ---------------------------------------------------------------------------------


def test_parse_elapsed() -> None:
    assert seed2014.parse_elapsed("6:07.43") == 367.43
    assert seed2014.parse_elapsed("1:08.24") == 68.24
    assert seed2014.parse_elapsed("0:19.82") == 19.82
    assert seed2014.parse_elapsed("1:00:01.50") == 3601.5


def test_messages_total() -> None:
    assert seed2014.MESSAGES_TOTAL == 6_000_020


# Hand-computed from the seed text: (user, system, elapsed, %CPU, maxresident kB) medians.
HAND_MEDIANS = {
    "NXLog": (832.65, 188.51, 367.30, 278, 239680),
    "Rsyslog5": (41.09, 47.17, 86.94, 101, 25504),
    "Rsyslog7": (37.97, 68.35, 82.71, 128, 207600),
    "Rsyslog8": (29.85, 49.77, 70.52, 112, 210112),
    "Syslog-ng 3.3": (65.48, 47.24, 21.72, 524, 31920),
    "Syslog-ng 3.5": (62.21, 45.53, 20.56, 529, 29872),
}


@pytest.mark.parametrize("daemon", list(HAND_MEDIANS))
def test_seed_medians(daemon: str) -> None:
    user, system, elapsed, cpu, rss_kb = HAND_MEDIANS[daemon]
    m = seed2014.medians()[daemon]
    assert m.user_s == user
    assert m.system_s == system
    assert m.elapsed_s == pytest.approx(elapsed)
    assert m.cpu_percent == cpu
    assert m.max_rss_mib == rss_kb / 1024
    assert m.msgs_per_s == pytest.approx(6_000_020 / elapsed)


def test_seed_known_rates() -> None:
    medians = seed2014.medians()
    assert list(medians) == list(HAND_MEDIANS)
    assert medians["Rsyslog8"].msgs_per_s == pytest.approx(85082.53, abs=0.01)
    assert medians["Syslog-ng 3.5"].msgs_per_s == pytest.approx(291829.77, abs=0.01)
    assert medians["Syslog-ng 3.5"].max_rss_mib == pytest.approx(29.171875)


@pytest.mark.parametrize("daemon", list(seed2014.RUNS))
def test_seed_runs_are_consistent(daemon: str) -> None:
    """%CPU as time prints it, (user + system) / elapsed truncated, catches transcription slips."""
    for run in seed2014.RUNS[daemon]:
        computed = (run.user_s + run.system_s) / run.elapsed_s * 100
        assert abs(computed - run.cpu_percent) < 1.5, run


TIME_LINE = re.compile(
    r"^([\d.]+)user ([\d.]+)system ([\d:.]+)elapsed (\d+)%CPU \(0avgtext\+0avgdata (\d+)maxresident\)k$"
)


@pytest.mark.skipif(not SEED_TEXT.exists(), reason="seed document not available")
def test_seed_matches_document() -> None:
    parsed: dict[str, list[seed2014.Run]] = {}
    daemon = ""
    for line in SEED_TEXT.read_text().splitlines():
        if line.endswith(":") and not line[0].isdigit():
            daemon = line[:-1].strip()
            parsed[daemon] = []
        elif match := TIME_LINE.match(line.strip()):
            user, system, elapsed, cpu, rss = match.groups()
            parsed[daemon].append(seed2014.Run(float(user), float(system), elapsed, int(cpu), int(rss)))
    assert {d: tuple(runs) for d, runs in parsed.items()} == seed2014.RUNS
