"""A capacity search's latency figures: one final-length trial at 10%, 50% and 90% of the published PDR, as
CSIT reports it. Each trial's percentiles are the watcher's own, from its histogram (rig-rust follow.rs)."""

from __future__ import annotations

import time

from syslogbench.host.measurer import Measurer, RigBound
from syslogbench.model import capacity
from syslogbench.model.capacity import CapacitySettings, Latency

PDR_FRACTIONS = capacity.PDR_FRACTIONS  # latency at these fractions of the PDR


def latency_trials(
    measurer: Measurer, pdr: float | None, notes: list[str], cap: CapacitySettings, deadline: float
) -> dict[str, Latency]:
    """One final-length trial at 10%, 50% and 90% of the published PDR, while the time allows."""
    out: dict[str, Latency] = {}
    if pdr is None:
        notes.append("no latency at fractions of the PDR: no PDR is published")
        return out
    for fraction in PDR_FRACTIONS:
        if time.monotonic() + cap.final_trial_s + cap.pause_s + capacity.TRIAL_OVERHEAD_S > deadline:
            notes.append(f"no time left for the latency at {fraction:.0%} of the PDR")
            break
        try:
            trial = measurer.checked(max(cap.rate_min, pdr * fraction), cap.final_trial_s, "latency")
        except RigBound as bound:
            notes.append(f"no latency at {fraction:.0%} of the PDR: {bound}")
            continue
        out[f"{fraction:.0%}"] = trial.latency_ms
    return out
