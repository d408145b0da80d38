"""syslog-ng Premium Edition 7.0's published performance tables, for comparison beside our scenarios.

Transcribed by hand from the seed document (shared/seeds/004_048e7e19535efd3d.txt). These are the
vendor's figures on hardware the source does not describe; every one used 400-byte messages over TCP.
Each row says which of our scenario axes it corresponds to; a scenario's report section shows every
published table with a row that matches it, the whole table, so the vendor's own reference row is there too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

SOURCE = "syslog-ng PE 7.0 documentation (seed 004), published on hardware the source does not describe"
MESSAGE_BYTES = 400

LEGACY_FILES = {"transport": "tcp", "format": "rfc3164", "destination": "split", "preprocess": "none"}


@dataclass(frozen=True)
class Row:
    label: str
    msgs_per_s: int
    mb_per_s: float | None
    # Our scenario axes this row corresponds to; None: shown only as the table's reference.
    axes: Mapping[str, object] | None


@dataclass(frozen=True)
class Table:
    title: str
    connections: int
    config: str
    rows: tuple[Row, ...]


def _connections_row(count: int, rate: int, mb: float) -> Row:
    return Row(f"{count} connections", rate, mb, {**LEGACY_FILES, "connections": count})


def _tls_table(connections: int, rates: tuple[int, int, int, int], mbs: tuple[int, int, int, int]) -> Table:
    labels_axes = (
        ("legacy syslog, not encrypted", {**LEGACY_FILES, "receive": "parsed"}),
        ("legacy syslog, TLS", {"transport": "tls", "format": "rfc3164"}),
        ("IETF syslog, not encrypted", {"transport": "tcp", "format": "rfc5424"}),
        ("IETF syslog, TLS", {"transport": "tls", "format": "rfc5424"}),
    )
    rows = tuple(
        Row(label, rate, mb, axes) for (label, axes), rate, mb in zip(labels_axes, rates, mbs, strict=True)
    )
    return Table(
        "Encrypted log transfer",
        connections,
        f"TCP, multithreaded, {connections} connections, multiple files (macros)",
        rows,
    )


def _storage_table(connections: int, rates: tuple[int, int, int], mbs: tuple[int, int, int]) -> Table:
    labels_axes = (
        ("plain text file", {"transport": "tcp", "destination": "plain", "preprocess": "none"}),
        ("multiple plain text files, divided by hostname", None),
        ("network destination, legacy syslog", {"destination": "relay", "buffer": "none"}),
    )
    rows = tuple(
        Row(label, rate, mb, axes) for (label, axes), rate, mb in zip(labels_axes, rates, mbs, strict=True)
    )
    return Table("Type of storage", connections, f"TCP, multithreaded, {connections} connections", rows)


def _preprocess_table(connections: int, rates: tuple[int, ...], mbs: tuple[int, ...]) -> Table:
    labels_axes = (
        ("no pre-processing", None),
        ("simple regexp", {"preprocess": "regexp"}),
        ("facility filter", {"preprocess": "facility-filter"}),
        ("tag filter", None),
        ("PatternDB, 10% of messages matched", None),
        ("simple rewrite (hostname)", {"preprocess": "hostname-rewrite"}),
        ("Python parser", None),
        ("JSON parser", {"preprocess": "json"}),
        ("kv parser", {"preprocess": "kv"}),
        ("XML parser", None),
    )
    rows = tuple(
        Row(label, rate, mb, axes) for (label, axes), rate, mb in zip(labels_axes, rates, mbs, strict=True)
    )
    return Table("Log pre-processing", connections, f"TCP, multithreaded, {connections} connections", rows)


TABLES: tuple[Table, ...] = (
    Table(
        "Number of network connections",
        0,
        "TCP, multiple files (macros)",
        (
            _connections_row(10, 640_000, 240),
            _connections_row(50, 550_000, 205),
            _connections_row(100, 530_000, 200),
            _connections_row(200, 545_000, 205),
        ),
    ),
    _tls_table(10, (640_000, 620_000, 65_000, 65_000), (240, 230, 35, 35)),
    _tls_table(100, (565_000, 565_000, 60_000, 60_000), (210, 210, 30, 30)),
    _storage_table(10, (270_000, 640_000, 250_000), (100, 240, 95)),
    _storage_table(100, (410_000, 505_000, 245_000), (155, 190, 90)),
    Table(
        "Disk buffer (1000 MB)",
        100,
        "TCP, multithreaded, 100 connections, disk buffer 1000 MB",
        (
            Row("without disk buffer", 345_000, 130, {"destination": "relay", "buffer": "none"}),
            Row("reliable disk buffer", 40_000, 15, {"buffer": "disk-reliable"}),
            Row("normal disk buffer", 60_000, 20, {"buffer": "disk-normal"}),
        ),
    ),
    _preprocess_table(
        10,
        (680_000, 570_000, 670_000, 650_000, 40_000, 245_000, 35_000, 40_000, 190_000, 15_000),
        (255, 210, 250, 245, 15, 90, 15, 25, 70, 20),
    ),
    _preprocess_table(
        100,
        (515_000, 510_000, 500_000, 530_000, 35_000, 360_000, 35_000, 35_000, 140_000, 15_000),
        (195, 190, 185, 200, 15, 135, 15, 25, 50, 15),
    ),
)

# Our scenario axes as a result records them; results written before an axis existed had its default.
DEFAULT_AXES: dict[str, object] = {
    "transport": "tcp",
    "format": "rfc3164",
    "destination": "split",
    "preprocess": "none",
    "receive": "parsed",
    "buffer": "none",
}


def matches(row: Row, scenario: Mapping[str, object]) -> bool:
    if row.axes is None:
        return False
    axes = {**DEFAULT_AXES, **scenario}
    return all(axes.get(key) == value for key, value in row.axes.items())


def tables_for(scenario: Mapping[str, object]) -> list[tuple[Table, list[bool]]]:
    """Every published table with a row matching the scenario, and which of its rows match."""
    found = []
    for table in TABLES:
        marks = [matches(row, scenario) for row in table.rows]
        if any(marks):
            found.append((table, marks))
    return found
