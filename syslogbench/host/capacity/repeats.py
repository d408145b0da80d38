"""The NDR's repeats: after the confirmation and the latency trials, NDR_REPEATS trials of TRIAL_FINAL at the
published NDR, while SEARCH_MAX allows, whose spread gives its interval for the next search
(model/capacity/interval.py). They measure; they do not judge: one that loses messages is counted in the
interval's `held`, and does not step the NDR down, as a confirmation trial would."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from syslogbench.host.capacity.measurer import Measurer, RigBound
from syslogbench.host.capacity.search import Found, stopping
from syslogbench.model import capacity
from syslogbench.model.capacity import CapacitySettings, Interval
from syslogbench.model.machine import cpu_list


def repeat(measurer: Measurer, found: Found, cap: CapacitySettings, deadline: float, cores: int,
           log: Callable[[str], None]) -> Interval | None:  # fmt: skip
    """The NDR's interval from its repeats; None where none were asked, or no NDR is published."""
    ndr = found.ndr.published()
    if not cap.ndr_repeats or ndr is None or found.errors or found.interrupted:
        return None
    ran: list[capacity.Trial] = []
    why = None
    for _ in range(int(cap.ndr_repeats)):
        if time.monotonic() + capacity.trial_cost_s(cap, cap.final_trial_s) > deadline:
            why = f"no time left within SEARCH_MAX={cap.search_max_s:g} s"
            break
        try:
            trial = stopping(found, "a repeat at the NDR",
                             lambda: measurer.checked(ndr, cap.final_trial_s, capacity.REPEAT))  # fmt: skip
        except RigBound as bound:
            why = f"the rig limited a repeat: {bound}"
            break
        if trial is None:  # the daemon died: found says so
            return None
        ran.append(trial)
    upper = capacity.lowest_broken(measurer.trials, ndr, cap.final_trial_s)
    found_interval = capacity.interval(ndr, ran, upper, cores)
    if why is not None:
        found.notes.append(f"{len(ran)} of NDR_REPEATS={cap.ndr_repeats:g} repeats at the NDR ran: {why}")
    log(capacity.interval_text(found_interval))
    return found_interval


def daemon_cores(placement: str, machine: dict | None) -> int:
    """How many cores the daemon's placement holds: a cpuset ("1", "0-3", "1,3"), or all of its machine's
    ("" for any core on one host; "node ..." on a swarm, where the daemon has the central node)."""
    if not placement or not placement[0].isdigit():
        return int((machine or {}).get("cores") or os.cpu_count() or 1)
    return len(cpu_list(placement))
