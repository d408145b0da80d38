"""A trial's latency histogram in HdrHistogram's V2 encoding (host/capacity/histogram.py): the same buckets
as the follower's {us: count}, and the one error for what the encoding would change. The percentiles and the
older form are the migration's (test_migrate_histograms.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from syslogbench.host.capacity import histogram
from syslogbench.host.capacity.record import result_text

ROOT = Path(__file__).resolve().parents[2]
# Trial 3 of a committed baseline search (5,477,000 latencies in 302 buckets), as the follower answered it.
SAMPLE = json.loads((ROOT / "tests/unit/samples/capacity-trial-histogram.json").read_text())


def test_every_bucket_round_trips_and_the_encoding_is_small() -> None:
    template = histogram.shape()
    # A bucket's middle at every width from 1 us to the last bucket, whose middle is under an hour.
    values = sorted({1, 2, 2047, 2049, 4098, 1_009_920, histogram.median(template, histogram.HIGHEST_US)}
                    | {histogram.median(template, 3 * 10**k) for k in range(10)})  # fmt: skip
    counts = {str(value): 7 * n + 1 for n, value in enumerate(values)}
    text = histogram.encode(counts)
    assert histogram.decode(text) == counts
    assert histogram.decode(histogram.encode({})) == {}
    assert len(text) < 200, len(text)
    sample = histogram.encode(SAMPLE["latency_histogram_us"])
    assert len(sample) < len(json.dumps(SAMPLE["latency_histogram_us"])) / 4, len(sample)


@pytest.mark.parametrize(
    ("counts", "says"),
    [
        (
            {"3600000001": 1},
            "latency 3,600,000,001 us is outside the follower's histogram (1 to 3,600,000,000 us)",
        ),
        ({"0": 5}, "latency 0 us is outside the follower's histogram (1 to 3,600,000,000 us)"),
        (
            {"1010000": 2},
            "latency 1,010,000 us is not a bucket of the follower's histogram (3 significant "
            "digits): it would read back as 1,009,920 us",
        ),
        ({"2000": 0}, "latency 2000 us has count 0, not a whole number above 0"),
        ({"2.5": 1}, "latency '2.5' is not a whole number of microseconds"),
    ],
)
def test_what_the_encoding_would_change_is_one_error(counts: dict, says: str) -> None:
    with pytest.raises(histogram.HistogramError) as raised:
        histogram.encode(counts)
    assert str(raised.value) == says


def test_a_text_that_is_not_the_followers_histogram_is_the_same_error() -> None:
    with pytest.raises(histogram.HistogramError, match="not an HdrHistogram V2 encoding"):
        histogram.decode("not base64 at all")
    other = histogram.HdrHistogram(1, 1000, 2)
    other.record_value(5)
    with pytest.raises(histogram.HistogramError, match="1 to 1,000 us at 2 significant digits, not the"):
        histogram.decode(other.encode().decode("ascii"))


def test_the_result_file_has_a_trial_a_line_and_reads_back_the_same() -> None:
    document = json.loads((ROOT / SAMPLE["source"]).read_text())
    text = result_text(document)
    assert json.loads(text) == document
    lines = text.splitlines()
    start = lines.index('  "trials": [')
    end = next(n for n in range(start, len(lines)) if lines[n].startswith("  ]"))
    assert end - start - 1 == len(document["trials"]), (start, end)


def test_an_answer_whose_histogram_does_not_fit_is_the_trials_error_not_a_traceback() -> None:
    from syslogbench.host.capacity import session

    fits = session.encoded({"number": 1, "latency_histogram_us": {"1000": 3}})
    assert "latency_histogram_us" not in fits and histogram.decode(fits["latency_histogram"]) == {"1000": 3}
    refused = session.encoded({"number": 1, "latency_histogram_us": {"7200000000": 1}})
    assert list(refused) == ["error"] and "outside the follower's histogram" in refused["error"], refused


def test_the_python_watchers_values_round_trip_at_five_digits_and_one_that_would_not_is_refused() -> None:
    # 3 significant digits, as model.capacity.rounded_us made them: 10,800 us and 1,230,000 us are no middles
    # of the follower's buckets, but each is a bucket's lowest value at 5 digits.
    counts = {"1": 2, "999": 3, "10800": 5, "262000": 1, "1230000": 4, "3000000": 1}
    text = histogram.encode_exact(counts)
    assert histogram.decode(text) == counts
    with pytest.raises(histogram.HistogramError) as raised:
        histogram.encode_exact({"1230000000": 1})  # 1,230 s: its bucket at 5 digits is 4,096 us wide
    assert str(raised.value) == "latency 1,230,000,000 us would read back as 1,229,996,032 us at 5 digits"
