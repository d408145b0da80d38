"""A trial's latency histogram as the result file keeps it: HdrHistogram's compressed V2 encoding, base64.

The follower (rig-rust/src/follow/tally.rs) records each sampled latency into an HdrHistogram of 1 us to
HIGHEST_US at LATENCY_DIGITS significant digits and answers {bucket's median value in us: count}; a long
trial's answer held ~10,000 buckets, 130 KB of JSON, and the capacity results 191 MB of them. The same
buckets encoded take a few KB. The containers have no HdrHistogram package (Debian's packages only) and the
model is stdlib-only, so the answer is encoded here, where it reaches the host (measurer.py), and decoded
here. Result files from before keep the dict (Trial.latency_histogram_us), which the strict reader reads;
migrate/capacity_histograms.py converts them.

The Python watcher before the follower rounded each latency to 3 significant digits (10,800 us, 1,230,000
us), which are not the follower's buckets' middles. Its histograms are kept at EXACT_DIGITS instead, where such
a value is a bucket's lowest value and so comes back as it was (encode_exact; one that would not is refused,
and that trial keeps its object). decode() tells the two apart by the encoding's significant digits.
"""

from __future__ import annotations

from collections.abc import Mapping

from hdrh.histogram import HdrHistogram

from syslogbench.model.capacity import LATENCY_DIGITS

# The follower's bounds (rig-rust/src/follow/tally.rs HIGHEST_US, DIGITS): a latency under 1 us is recorded
# as 1, one over an hour as an hour.
LOWEST_US = 1
HIGHEST_US = 3_600_000_000
# The Python watcher's values: every whole microsecond below 262,144 us is a bucket of its own at 5 digits.
EXACT_DIGITS = 5


class HistogramError(ValueError):
    """A histogram that does not fit the follower's buckets, or a text that is not one: one line."""


def shape(digits: int = LATENCY_DIGITS) -> HdrHistogram:
    """An empty histogram of the follower's shape (or, at EXACT_DIGITS, the Python watcher's)."""
    return HdrHistogram(LOWEST_US, HIGHEST_US, digits)


def median(template: HdrHistogram, value: int) -> int:
    """The middle of value's bucket: what the follower writes for every latency in it (median_equivalent)."""
    lowest = template.get_lowest_equivalent_value(value)
    return lowest + (template.get_highest_equivalent_value(value) - lowest + 1) // 2


def entry(key: str, count: object) -> int:
    """The latency of one {us: count} entry, a whole number of microseconds in the follower's range."""
    value = int(key) if key.isdigit() else None
    if value is None or str(value) != key:
        raise HistogramError(f"latency {key!r} is not a whole number of microseconds")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise HistogramError(f"latency {key} us has count {count!r}, not a whole number above 0")
    if not LOWEST_US <= value <= HIGHEST_US:
        raise HistogramError(f"latency {value:,} us is outside the follower's histogram "
                             f"({LOWEST_US} to {HIGHEST_US:,} us)")  # fmt: skip
    return value


def checked(key: str, count: object, template: HdrHistogram) -> int:
    """The latency of one {us: count} entry, if the encoding gives the entry back as it is."""
    value = entry(key, count)
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


def encode_exact(counts: Mapping[str, int]) -> str:
    """The Python watcher's {us: count} at EXACT_DIGITS, each value its bucket's lowest (decode gives it back
    as it was); HistogramError for a value that is not."""
    histogram = shape(EXACT_DIGITS)
    for key, count in counts.items():
        value = entry(key, count)
        if (lowest := histogram.get_lowest_equivalent_value(value)) != value:
            raise HistogramError(
                f"latency {value:,} us would read back as {lowest:,} us at {EXACT_DIGITS} digits"
            )
        histogram.record_value(value, count)
    return histogram.encode().decode("ascii")


def decode(text: str) -> dict[str, int]:
    """The {us: count} that encode() or encode_exact() was given, in rising order of latency."""
    try:
        histogram = HdrHistogram.decode(text)
    except Exception as error:  # noqa: BLE001 - hdrh raises TypeError, zlib.error and its own cookie errors
        raise HistogramError(f"not an HdrHistogram V2 encoding ({type(error).__name__}: {error})") from None
    found = (
        histogram.lowest_trackable_value,
        histogram.highest_trackable_value,
        histogram.significant_figures,
    )
    if found not in {(LOWEST_US, HIGHEST_US, LATENCY_DIGITS), (LOWEST_US, HIGHEST_US, EXACT_DIGITS)}:
        raise HistogramError(f"a histogram of {found[0]} to {found[1]:,} us at {found[2]} significant digits, "
                             f"not the follower's ({LOWEST_US} to {HIGHEST_US:,} us at {LATENCY_DIGITS}) nor "
                             f"the Python watcher's (at {EXACT_DIGITS})")  # fmt: skip
    counts = histogram.counts[: histogram.encoder.payload.counts_len]
    exact = found[2] == EXACT_DIGITS
    values = (histogram.get_value_from_index(index) for index in range(len(counts)))
    return {
        str(value if exact else median(histogram, value)): count
        for value, count in zip(values, counts, strict=True)
        if count
    }
