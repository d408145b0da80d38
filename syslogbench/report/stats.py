"""Small-sample statistics for the report: medians, spread, intervals. Standard library only, and the result model's `cov`.

The report shows, per profile and scenario, the median of the replicates and a 95% confidence
interval *of the median* by bootstrap (percentile method, BOOTSTRAP_RESAMPLES resamples, fixed seed
BOOTSTRAP_SEED, so the same inputs always give the same interval). With few replicates this
interval is coarse: with three runs it is simply [min, max]. The t-based interval of the mean
(t_ci_mean) is here too, for comparison; the report does not show it.

Every function takes the replicates in any order and gives the same answer for any order.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from syslogbench.model.result import cov  # one definition for the model, the host and the report
from syslogbench.model.student import t95

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 2014
CONFIDENCE = 0.95
ERRATIC_COV = 0.10  # a coefficient of variation above this marks a profile/scenario as erratic
MAD_TO_SIGMA = 1.4826  # MAD x this estimates the standard deviation of normal data

Interval = tuple[float, float]


def median(values: Sequence[float]) -> float:
    """The median; the mean of the middle two for an even count. ValueError when empty."""
    if not values:
        raise ValueError("median of no values")
    return float(statistics.median(values))


def mad(values: Sequence[float]) -> float:
    """Raw median absolute deviation: median(|x - median(x)|)."""
    centre = median(values)
    return median([abs(x - centre) for x in values])


def mad_scaled(values: Sequence[float]) -> float:
    """MAD x 1.4826: a robust estimate of the standard deviation for normal data."""
    return mad(values) * MAD_TO_SIGMA


def is_erratic(cv: float | None, threshold: float = ERRATIC_COV) -> bool:
    """True when the coefficient of variation is strictly above the threshold (10%)."""
    return cv is not None and cv > threshold


def quantile(ordered: Sequence[float], q: float) -> float:
    """The q-quantile of already sorted values, interpolating linearly between neighbours."""
    if not ordered:
        raise ValueError("quantile of no values")
    if not 0 <= q <= 1:
        raise ValueError(f"quantile {q} is not in [0, 1]")
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    fraction = position - below
    return ordered[below] + (ordered[above] - ordered[below]) * fraction


def percentile_interval(estimates: Sequence[float], confidence: float = CONFIDENCE) -> Interval:
    """The central `confidence` share of bootstrap estimates: the percentile method."""
    ordered = sorted(estimates)
    tail = (1 - confidence) / 2
    return quantile(ordered, tail), quantile(ordered, 1 - tail)


def bootstrap(
    values: Sequence[float],
    estimator: Callable[[Sequence[float]], float] = median,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> list[float]:
    """The estimator over `resamples` resamples with replacement, from a fixed seed."""
    ordered = sorted(values)  # the same answer whatever order the runs were read in
    rng = random.Random(seed)
    return [estimator(rng.choices(ordered, k=len(ordered))) for _ in range(resamples)]


def bootstrap_median_ci(
    values: Sequence[float],
    confidence: float = CONFIDENCE,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Interval | None:
    """Percentile bootstrap interval of the median. None for n < 2: one run has no spread."""
    if len(values) < 2:
        return None
    return percentile_interval(bootstrap(values, median, resamples, seed), confidence)


def t_critical(df: int) -> float:
    """Student's t for a two-sided 95% interval; 1.96 beyond 30 degrees of freedom (model/student.py)."""
    return t95(df)


def t_ci_mean(values: Sequence[float]) -> Interval | None:
    """95% interval of the mean: mean +- t(n-1) x s / sqrt(n). None for n < 2."""
    n = len(values)
    if n < 2:
        return None
    mean = statistics.fmean(values)
    half = t_critical(n - 1) * statistics.stdev(values) / math.sqrt(n)
    return mean - half, mean + half


@dataclass(frozen=True)
class Ratio:
    """median(a) / median(b), with its bootstrap interval (None when either side has n < 2)."""

    value: float
    low: float | None
    high: float | None


def ratio_of_medians(
    a: Sequence[float],
    b: Sequence[float],
    confidence: float = CONFIDENCE,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Ratio | None:
    """median(a) / median(b), both resampled independently for the interval. None if b's median is 0."""
    if not a or not b:
        raise ValueError("ratio of medians needs values on both sides")
    denominator = median(b)
    if denominator == 0:
        return None
    value = median(a) / denominator
    if len(a) < 2 or len(b) < 2:
        return Ratio(value, None, None)
    rng = random.Random(seed)
    left, right = sorted(a), sorted(b)
    ratios = []
    for _ in range(resamples):
        top = median(rng.choices(left, k=len(left)))
        bottom = median(rng.choices(right, k=len(right)))
        if bottom != 0:
            ratios.append(top / bottom)
    if not ratios:
        return Ratio(value, None, None)
    low, high = percentile_interval(ratios, confidence)
    return Ratio(value, low, high)


@dataclass(frozen=True)
class Summary:
    """One metric over the counted replicates of one profile in one scenario."""

    n: int
    median: float
    mad: float
    ci_low: float | None  # bootstrap 95% interval of the median
    ci_high: float | None
    cov: float | None
    erratic: bool


def summarize(values: Sequence[float]) -> Summary | None:
    """n, median, MAD, the median's 95% bootstrap interval, CoV and the erratic flag; None if empty."""
    if not values:
        return None
    interval = bootstrap_median_ci(values)
    cv = cov(values)
    return Summary(
        n=len(values),
        median=median(values),
        mad=mad(values),
        ci_low=interval[0] if interval else None,
        ci_high=interval[1] if interval else None,
        cov=cv,
        erratic=is_erratic(cv),
    )
