"""A trial's latency histogram as the result file keeps it: HdrHistogram's compressed V2 encoding, base64.

The follower (rig-rust/src/follow/tally.rs) records each sampled latency into an HdrHistogram of 1 us to
HIGHEST_US at LATENCY_DIGITS significant digits and answers {bucket's median value in us: count}; a long
trial's answer held ~10,000 buckets, 130 KB of JSON, and the capacity results 191 MB of them. The same
buckets encoded take a few KB. The containers have no HdrHistogram package (Debian's packages only) and the
model is stdlib-only, so the answer is encoded here, where it reaches the host (measurer.py), and decoded
here. Result files from before keep the dict (Trial.latency_histogram_us), which the strict reader reads;
migrate/capacity_histograms.py converts them.
"""

from __future__ import annotations

from collections.abc import Mapping

from hdrh.histogram import HdrHistogram

from syslogbench.model.capacity import LATENCY_DIGITS

# The follower's bounds (rig-rust/src/follow/tally.rs HIGHEST_US, DIGITS): a latency under 1 us is recorded
# as 1, one over an hour as an hour.
LOWEST_US = 1
HIGHEST_US = 3_600_000_000


class HistogramError(ValueError):
    """A histogram that does not fit the follower's buckets, or a text that is not one: one line."""


def shape() -> HdrHistogram:
    """An empty histogram of the follower's shape."""
    return HdrHistogram(LOWEST_US, HIGHEST_US, LATENCY_DIGITS)


def median(template: HdrHistogram, value: int) -> int:
    """The middle of value's bucket: what the follower writes for every latency in it (median_equivalent)."""
    lowest = template.get_lowest_equivalent_value(value)
    return lowest + (template.get_highest_equivalent_value(value) - lowest + 1) // 2


def checked(key: str, count: object, template: HdrHistogram) -> int:
    """The latency of one {us: count} entry, if the encoding gives the entry back as it is."""
    value = int(key) if key.isdigit() else None
    if value is None or str(value) != key:
        raise HistogramError(f"latency {key!r} is not a whole number of microseconds")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise HistogramError(f"latency {key} us has count {count!r}, not a whole number above 0")
    if not LOWEST_US <= value <= HIGHEST_US:
        raise HistogramError(f"latency {value:,} us is outside the follower's histogram "
                             f"({LOWEST_US} to {HIGHEST_US:,} us)")  # fmt: skip
    if (middle := median(template, value)) != value:
        # The Python watcher before the compiled follower rounded to 3 decimal digits (model.capacity's
        # rounded_us): its values are not buckets' middles, and would come back changed.
        raise HistogramError(f"latency {value:,} us is not a bucket of the follower's histogram "
                             f"({LATENCY_DIGITS} significant digits): it would read back as {middle:,} us")  # fmt: skip
    return value


def encode(counts: Mapping[str, int]) -> str:
    """{us: count}, as the follower answers it, in HdrHistogram's compressed V2 encoding (base64).
    HistogramError for an entry the encoding would not give back exactly."""
    histogram = shape()
    for key, count in counts.items():
        histogram.record_value(checked(key, count, histogram), count)
    return histogram.encode().decode("ascii")


def decode(text: str) -> dict[str, int]:
    """The {us: count} that encode() was given, in rising order of latency."""
    try:
        histogram = HdrHistogram.decode(text)
    except Exception as error:  # noqa: BLE001 - hdrh raises TypeError, zlib.error and its own cookie errors
        raise HistogramError(f"not an HdrHistogram V2 encoding ({type(error).__name__}: {error})") from None
    found = (
        histogram.lowest_trackable_value,
        histogram.highest_trackable_value,
        histogram.significant_figures,
    )
    if found != (LOWEST_US, HIGHEST_US, LATENCY_DIGITS):
        raise HistogramError(f"a histogram of {found[0]} to {found[1]:,} us at {found[2]} significant digits, "
                             f"not the follower's ({LOWEST_US} to {HIGHEST_US:,} us at {LATENCY_DIGITS})")  # fmt: skip
    counts = histogram.counts[: histogram.encoder.payload.counts_len]
    return {
        str(median(histogram, histogram.get_value_from_index(index))): count
        for index, count in enumerate(counts)
        if count
    }
