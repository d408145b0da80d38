"""syslog-ng PE 7's published tables: transcription and which rows a scenario is set beside."""

from __future__ import annotations

from syslogbench.model.result import Result
from syslogbench.report import cells, load, published_sections
from syslogbench.report.published import pe7

from .test_report import make_result


def titles(scenario: dict) -> list[tuple[str, int, list[str]]]:
    return [
        (
            table.title,
            table.connections,
            [row.label for row, mark in zip(table.rows, marks, strict=True) if mark],
        )
        for table, marks in pe7.tables_for(scenario)
    ]


def test_transcription_spot_checks() -> None:
    """A few figures read again from seed 004, so a slip in the tables shows."""
    by_title = {(t.title, t.connections): {r.label: r.msgs_per_s for r in t.rows} for t in pe7.TABLES}
    assert by_title[("Number of network connections", 0)]["200 connections"] == 545_000
    assert by_title[("Encrypted log transfer", 100)]["IETF syslog, TLS"] == 60_000
    assert by_title[("Disk buffer (1000 MB)", 100)]["reliable disk buffer"] == 40_000
    assert by_title[("Log pre-processing", 10)]["kv parser"] == 190_000
    assert by_title[("Log pre-processing", 100)]["simple rewrite (hostname)"] == 360_000
    assert by_title[("Type of storage", 100)]["plain text file"] == 410_000


def test_the_seed_scenario_is_set_beside_the_legacy_unencrypted_rows() -> None:
    seed = {
        "id": "seed2014",
        "transport": "tcp",
        "format": "rfc3164",
        "destination": "split",
        "connections": 20,
    }
    assert titles(seed) == [
        ("Encrypted log transfer", 10, ["legacy syslog, not encrypted"]),
        ("Encrypted log transfer", 100, ["legacy syslog, not encrypted"]),
    ]


def test_old_results_without_the_newer_axes_match_as_their_defaults() -> None:
    assert titles({"transport": "tcp", "format": "rfc3164", "destination": "split"}) == titles(
        {"transport": "tcp", "format": "rfc3164", "destination": "split", "preprocess": "none"}
    )


def test_each_axis_finds_its_table() -> None:
    conn50 = {"transport": "tcp", "format": "rfc3164", "destination": "split", "connections": 50}
    assert ("Number of network connections", 0, ["50 connections"]) in titles(conn50)
    tls5424 = {"transport": "tls", "format": "rfc5424", "destination": "split"}
    assert [t[2] for t in titles(tls5424)] == [["IETF syslog, TLS"], ["IETF syslog, TLS"]]
    assert [t[2] for t in titles({"preprocess": "json"})] == [["JSON parser"], ["JSON parser"]]
    relay = {"destination": "relay", "buffer": "disk-reliable"}
    assert titles(relay) == [("Disk buffer (1000 MB)", 100, ["reliable disk buffer"])]
    assert titles({"transport": "udp", "destination": "split"}) == []


def test_the_report_sets_the_published_rows_beside_the_scenario() -> None:
    blocks = published_sections.published_tables(
        {"transport": "tcp", "destination": "plain", "format": "rfc3164"}
    )
    assert [title for title, _ in blocks] == [
        "Type of storage: TCP, multithreaded, 10 connections",
        "Type of storage: TCP, multithreaded, 100 connections",
    ]
    assert blocks[0][1][0] == ["plain text file ◀", "270,000", "100"]
    assert blocks[0][1][1] == ["multiple plain text files, divided by hostname", "640,000", "240"]


def test_overview_has_one_row_per_scenario_and_a_column_per_profile() -> None:
    seed = [
        make_result("20250101T000100Z-a", "rsyslog-8.2504", "2025-01-01T00:01:00Z"),
        make_result("20250101T000200Z-b", "baseline", "2025-01-01T00:02:00Z"),
    ]
    plain = make_result("20250101T000300Z-c", "rsyslog-8.2504", "2025-01-01T00:03:00Z")
    plain["scenario"]["id"] = "plain"
    na = make_result("20250101T000400Z-d", "baseline", "2025-01-01T00:04:00Z", verdict="n/a")
    na["scenario"]["id"] = "plain"
    typed = [Result.from_dict(document) for document in (*seed, plain, na)]
    header, rows, notes = cells.overview(load.group_results(typed))
    assert header == ["scenario", "baseline msgs/s (n)", "rsyslog-8.2504 msgs/s (n)"]
    rate = f"{seed[0]['throughput']['msgs_per_s']:,.0f}"
    assert rows[0][0] == "`seed2014`" and rows[0][2] == f"{rate} (1)"
    assert rows[1] == ["`plain`", "n/a x1", f"{rate} (1)"]
    assert notes == []  # every profile ran every scenario, and each scenario has a passing run
