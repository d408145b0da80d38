"""Student's t for two-sided 95% intervals, one table for the model, the host and the report. Stdlib only."""

from __future__ import annotations

Z95 = 1.96  # beyond 30 degrees of freedom
# The 0.975 quantile of Student's t, by degrees of freedom.
T95: dict[int, float] = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
    11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
    20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048,
    29: 2.045, 30: 2.042,
}  # fmt: skip


def t95(df: int) -> float:
    """Student's t for a two-sided 95% interval with df degrees of freedom; 1.96 beyond 30."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, not {df}")
    return T95.get(df, Z95)
