"""The report's statistics: known inputs, known outputs."""

from __future__ import annotations

import math
import random

import pytest

from syslogbench.model import student
from syslogbench.report import stats


def test_median() -> None:
    assert stats.median([1, 2, 3, 4]) == 2.5
    assert stats.median([3, 1, 2]) == 2
    assert stats.median([7]) == 7
    with pytest.raises(ValueError):
        stats.median([])


def test_mad() -> None:
    # median 2; deviations 1 1 0 0 2 4 7 -> sorted 0 0 1 1 2 4 7 -> 1
    assert stats.mad([1, 1, 2, 2, 4, 6, 9]) == 1
    assert stats.mad([5, 5, 5]) == 0
    assert stats.mad([10, 12, 14]) == 2


def test_mad_scaled() -> None:
    assert stats.mad_scaled([1, 1, 2, 2, 4, 6, 9]) == pytest.approx(1.4826)
    assert stats.mad_scaled([10, 12, 14]) == pytest.approx(2 * 1.4826)


def test_cov() -> None:
    # mean 12, sample stdev sqrt(((-2)^2 + 0 + 2^2) / 2) = 2
    assert stats.cov([10, 12, 14]) == pytest.approx(2 / 12)
    assert stats.cov([100, 150, 200]) == pytest.approx(50 / 150)
    assert stats.cov([5, 5, 5]) == 0
    assert stats.cov([5]) is None
    assert stats.cov([]) is None
    assert stats.cov([-1, 1]) is None  # zero mean


def test_erratic_boundary() -> None:
    assert stats.ERRATIC_COV == 0.10
    assert not stats.is_erratic(0.10)
    assert stats.is_erratic(0.1000001)
    assert not stats.is_erratic(0.05)
    assert not stats.is_erratic(None)


def test_quantile() -> None:
    assert stats.quantile([1, 2, 3, 4], 0.5) == 2.5
    assert stats.quantile([1, 2, 3, 4], 0) == 1
    assert stats.quantile([1, 2, 3, 4], 1) == 4
    assert stats.quantile([10, 20], 0.25) == 12.5
    with pytest.raises(ValueError):
        stats.quantile([1], 1.5)


def test_t_critical() -> None:
    assert stats.t_critical(1) == 12.706
    assert stats.t_critical(2) == 4.303
    assert stats.t_critical(30) == 2.042
    assert stats.t_critical(31) == 1.96
    assert stats.t_critical(1000) == 1.96
    assert all(student.T95[df] > student.T95[df + 1] for df in range(1, 30))
    with pytest.raises(ValueError):
        stats.t_critical(0)


def test_t_ci_mean() -> None:
    low, high = stats.t_ci_mean([10, 12, 14]) or (0, 0)
    half = 4.303 * 2 / math.sqrt(3)
    assert low == pytest.approx(12 - half)
    assert high == pytest.approx(12 + half)
    assert stats.t_ci_mean([3]) is None


def test_bootstrap_ci_of_three_is_their_range() -> None:
    # With 3 values the resampled median is the smallest with probability 7/27, far above 2.5%.
    assert stats.bootstrap_median_ci([10, 12, 14]) == (10, 14)
    assert stats.bootstrap_median_ci([14, 10, 12]) == (10, 14)


def test_bootstrap_ci_is_deterministic_and_contains_the_median() -> None:
    values = [float(v) for v in random.Random(7).sample(range(1000, 2000), 12)]
    first = stats.bootstrap_median_ci(values)
    assert first is not None
    assert stats.bootstrap_median_ci(values) == first
    assert stats.bootstrap_median_ci(list(reversed(values))) == first  # order does not matter
    low, high = first
    assert min(values) <= low <= stats.median(values) <= high <= max(values)
    assert low < high


def test_bootstrap_ci_needs_two_values() -> None:
    assert stats.bootstrap_median_ci([5.0]) is None
    assert stats.bootstrap_median_ci([5.0, 5.0]) == (5.0, 5.0)


def test_percentile_interval() -> None:
    estimates = list(range(1, 1002))  # 1..1001: the 2.5% and 97.5% quantiles are 26 and 976
    assert stats.percentile_interval(estimates) == (pytest.approx(26), pytest.approx(976))


def test_ratio_of_identical_samples_is_one() -> None:
    values = [100.0, 110.0, 95.0, 102.0, 99.0]
    ratio = stats.ratio_of_medians(values, values)
    assert ratio is not None
    assert ratio.value == 1
    assert ratio.low is not None and ratio.high is not None
    assert ratio.low <= 1 <= ratio.high
    assert stats.ratio_of_medians(values, values) == ratio  # fixed seed


def test_ratio_of_medians_known() -> None:
    ratio = stats.ratio_of_medians([90, 100, 110], [190, 200, 210])
    assert ratio is not None
    assert ratio.value == 0.5
    # Each side's resampled median is its smallest or largest with probability 7/27, so both
    # extreme ratios have probability (7/27)^2 = 6.7% > 2.5%: the interval is exactly their span.
    assert ratio.low == pytest.approx(90 / 210)
    assert ratio.high == pytest.approx(110 / 190)


def test_ratio_of_medians_edges() -> None:
    assert stats.ratio_of_medians([4.0], [2.0]) == stats.Ratio(2.0, None, None)
    assert stats.ratio_of_medians([1.0, 2.0], [0.0, 0.0]) is None
    with pytest.raises(ValueError):
        stats.ratio_of_medians([], [1.0])


def test_summarize() -> None:
    summary = stats.summarize([10, 12, 14])
    assert summary == stats.Summary(
        n=3, median=12, mad=2, ci_low=10, ci_high=14, cov=pytest.approx(1 / 6), erratic=True
    )
    steady = stats.summarize([100, 101, 99])
    assert steady is not None and not steady.erratic
    assert steady.cov == pytest.approx(0.01)
    single = stats.summarize([42])
    assert single == stats.Summary(n=1, median=42, mad=0, ci_low=None, ci_high=None, cov=None, erratic=False)
    assert stats.summarize([]) is None
