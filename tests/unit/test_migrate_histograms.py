"""migrate/capacity_histograms.py: a committed trial in either form gives its counts and the follower's
percentiles, a search from before the follower reads back the counts its object had, and a check that fails is one line and an
exit code, with the file left as it was."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from migrate import capacity_histograms as migration
from syslogbench.contract import EXIT_CODES
from syslogbench.host.capacity import histogram
from syslogbench.model import capacity

ROOT = Path(__file__).resolve().parents[2]
# Trial 3 of a committed baseline search (5,477,000 latencies in 302 buckets), as the follower answered it.
SAMPLE = json.loads((ROOT / "tests/unit/samples/capacity-trial-histogram.json").read_text())
# A search from the Python watcher, before the compiled follower: its values are rounded to 3 decimal digits.
BEFORE_THE_FOLLOWER = ROOT / "results/capacity/20261125T213020.379Z-rsyslog-8.2504-dde3-seed2014.json"
# Its first trial's histogram as committed before migrate/capacity_histograms.py encoded it (2026-12-06).
BEFORE = json.loads((ROOT / "tests/unit/samples/python-watcher-histogram.json").read_text())


def committed_document(form: str) -> dict:
    """SAMPLE's committed search (every trial's histogram in the older form but SAMPLE's), SAMPLE's trial's
    histogram in `form`."""
    document = json.loads((ROOT / SAMPLE["source"]).read_text())
    for trial in document["trials"]:
        if trial["number"] == SAMPLE["trial"]:
            trial.pop("latency_histogram_us", None)
            trial.pop("latency_histogram", None)
            counts = SAMPLE["latency_histogram_us"]
            trial[form] = histogram.encode(counts) if form == "latency_histogram" else counts
    return document


def committed_trial(form: str) -> capacity.Trial:
    """SAMPLE's trial, read by the strict reader from its committed file with its histogram in `form`."""
    found = capacity.result_from_dict(committed_document(form)).trials
    return next(trial for trial in found if trial.number == SAMPLE["trial"])


def test_both_forms_of_a_committed_trial_give_its_counts_and_the_followers_percentiles() -> None:
    encoded, plain = committed_trial("latency_histogram"), committed_trial("latency_histogram_us")
    assert encoded.latency_histogram is not None and encoded.latency_histogram_us is None
    assert plain.latency_histogram is None and plain.latency_histogram_us == SAMPLE["latency_histogram_us"]
    counts = migration.counts_of(encoded)
    assert counts == migration.counts_of(plain) == SAMPLE["latency_histogram_us"]
    assert sum(counts.values()) == 5_477_000, sum(counts.values())
    assert len(counts) == 302, len(counts)
    # p50/p90/p99/p99.9/max, as the follower computed them when it ran (tally.rs latency_ms).
    expected = {"p50": 0.344, "p90": 0.424, "p99": 0.627, "p999": 2.497, "max": 5.575}
    assert asdict(migration.latency_ms(counts)) == expected
    assert asdict(migration.latency_ms(SAMPLE["latency_histogram_us"])) == expected
    assert asdict(encoded.latency_ms) == asdict(plain.latency_ms) == expected


def test_the_committed_file_reads_with_the_same_figures() -> None:
    trial = next(t for t in capacity.read(ROOT / SAMPLE["source"]).trials if t.number == SAMPLE["trial"])
    assert migration.counts_of(trial) == SAMPLE["latency_histogram_us"]
    assert asdict(migration.latency_ms(migration.counts_of(trial))) == asdict(trial.latency_ms)


def test_a_search_from_before_the_follower_reads_back_its_objects_counts_and_keeps_its_percentiles() -> None:
    """Its first trial's object, as committed before the migration (tests/unit/samples), against the file now:
    encoded at 5 digits, the same counts, and the Python watcher's own percentiles unchanged."""
    trial = next(t for t in capacity.read(BEFORE_THE_FOLLOWER).trials if t.number == BEFORE["trial"])
    assert trial.latency_histogram is not None and trial.latency_histogram_us is None
    assert migration.counts_of(trial) == BEFORE["latency_histogram_us"]
    assert asdict(trial.latency_ms) == BEFORE["latency_ms"]
    with pytest.raises(histogram.HistogramError, match="is not a bucket of the follower's histogram"):
        histogram.encode(BEFORE["latency_histogram_us"])  # not the follower's buckets: hence the 5 digits


def test_a_file_in_the_older_form_is_encoded_and_reads_the_same(tmp_path: Path) -> None:
    path = tmp_path / "search.json"
    path.write_text(json.dumps(committed_document("latency_histogram_us")))
    assert migration.main([str(path)]) == EXIT_CODES["pass"]
    trial = next(t for t in capacity.read(path).trials if t.number == SAMPLE["trial"])
    assert trial.latency_histogram is not None and trial.latency_histogram_us is None
    assert migration.counts_of(trial) == SAMPLE["latency_histogram_us"]


def test_an_encoding_that_reads_back_otherwise_is_one_line_and_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "search.json"
    document = committed_document("latency_histogram_us")
    path.write_text(before := json.dumps(document))
    monkeypatch.setattr(histogram, "decode", lambda text: {"1000": 1})
    assert migration.main([str(path)]) == EXIT_CODES["error"]
    said = capsys.readouterr().err
    # The file's first trial in the older form stops it (the committed file's others may be converted).
    first = next(t for t in document["trials"] if t.get("latency_histogram_us"))
    buckets = len(first["latency_histogram_us"])
    assert (
        said
        == f"capacity_histograms: {path}: trial {first['number']}: 1 buckets read back, {buckets} written\n"
    )
    assert path.read_text() == before


def test_a_file_the_strict_reader_refuses_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "search.json"
    document = committed_document("latency_histogram_us") | {"unknown_key": 1}
    path.write_text(before := json.dumps(document))
    assert migration.main([str(path)]) == EXIT_CODES["bad-input"]
    said = capsys.readouterr().err
    assert said.startswith(f"capacity_histograms: {path}: ") and said.count("\n") == 1, said
    assert path.read_text() == before
