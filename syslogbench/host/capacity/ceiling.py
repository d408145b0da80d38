"""A capacity search's upper bound when RATE_MAX is not given: the daemon's burst drain rate, from one short
burst run (as `run`, on the search's own placement) just before the search, times BURST_FACTOR. The default
RATE_MAX of 100,000 msg/s was the answer the default search of syslog-ng 4.8 published, where the same
search with a higher one confirmed 238,306 (issue 47): a bound of the search's own must never be its answer.
A search whose lower bound still reaches its RATE_MAX is "at least" in its result and the report. A paced
scenario (udp: a fixed rate per sender) has no burst of its own to tell: its burst runs the scenario's all-out
twin (udp-allout), or, with none, its search keeps the default."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from syslogbench.host.capacity.cores import cores_env
from syslogbench.host.lifecycle import RunOptions, kept
from syslogbench.model import result
from syslogbench.model.capacity import Ceiling

if TYPE_CHECKING:
    from syslogbench.host.capacity.searchplan import Search

# A burst of BURST_MESSAGES drains slower than the daemon's NDR: syslog-ng-4.8's default burst of 2,000,000
# messages drained 148,391 msg/s, and its 10 s trials then held 297,000 (twice that), whose 60 s confirmation
# broke; over the seed's 6,000,020 messages the drain rates were 0.8-1.0 times the NDRs (docs/tuning.md).
# Three times the drain rate leaves room for both; a higher ceiling costs the search a trial or two.
BURST_FACTOR = 3.0


def figure_step(rate: float) -> float:
    """The third significant figure's unit of a rate above 0: 1,000 for 412,319."""
    return 10 ** (math.floor(math.log10(rate)) - 2)


def rounded_up(rate: float) -> float:
    """Up to three significant figures, so that a RATE_MAX reads as one a user would give."""
    if rate <= 0:
        return rate
    step = figure_step(rate)
    return math.ceil(rate / step) * step


def rounded_down(rate: float) -> float:
    """Down to three significant figures: a rate that stays below the one it came from (compare's fixed rate
    for CPU per message, host/compare.py)."""
    if rate <= 0:
        return rate
    step = figure_step(rate)
    return float(math.floor(rate / step) * step)


def ceiling(chosen: Search, results_dir: Path, build: bool, extra_files: tuple[Path, ...],
            log: Callable[[str], None]) -> tuple[Search, Ceiling]:  # fmt: skip
    """The search with its RATE_MAX, and where it came from: as given, or from the burst run (its result
    kept in results/capacity/bursts/), or the default when the burst gave no drain rate or the scenario is
    paced (no burst then)."""
    cap = chosen.cap
    if chosen.paced is not None:
        log(f"notice: {chosen.paced}")
        return chosen, Ceiling("default", cap.rate_max, why=chosen.paced)
    if chosen.burst is None:
        return chosen, Ceiling("given", cap.rate_max)
    found, run_id = burst_rate(chosen, results_dir, build, extra_files, log)
    if isinstance(found, str):
        why = f"the burst run gave no drain rate ({found}): RATE_MAX stays at its default"
        log(f"notice: {why}")
        return chosen, Ceiling("default", cap.rate_max, run_id, None, None, why)
    top = max(rounded_up(BURST_FACTOR * found), 2 * cap.rate_min)
    said = f"{BURST_FACTOR:g} times that"
    why = twin_words(chosen, cap.rate_max)
    if why is not None:  # a paced scenario, its ceiling from its all-out twin: never below the default
        top, said = max(top, cap.rate_max), f"{said}, at least the default"
    log(f"capacity: the burst drained {found:,.0f} msg/s: RATE_MAX {top:,.0f} ({said})")
    ceiling = Ceiling("burst", top, run_id, found, BURST_FACTOR, why)
    return replace(chosen, cap=replace(cap, rate_max=top)), ceiling


def twin_words(chosen: Search, default: float) -> str | None:
    """Where the burst ran the paced scenario's all-out twin: what it says, or None."""
    assert chosen.burst is not None
    paced, twin = chosen.plan.scenario, chosen.burst.scenario
    if twin.id == paced.id:
        return None
    return (f"scenario {paced.id} paces its senders, so its burst ran {twin.id} (the same all-out): over UDP "
            f"all-out a daemon may keep less than it holds at a lower rate, so RATE_MAX is at least its default "
            f"({default:,.0f})")  # fmt: skip


def burst_rate(chosen: Search, results_dir: Path, build: bool, extra_files: tuple[Path, ...],
               log: Callable[[str], None]) -> tuple[float | str, str | None]:  # fmt: skip
    """The burst run's drain rate (msg/s) and its run id; or why there is none, in one line."""
    assert chosen.burst is not None
    env = cores_env(chosen.cpu_placement)
    options = RunOptions(lambda path: None, extra_env=env, build=build, extra_files=extra_files)
    burst = chosen.burst  # a run as `run` makes it; n/a it cannot be: the search's plan refused that
    with kept(results_dir / "capacity" / "bursts") as (staging, written):
        burst.on.refuse_unfit(burst)
        code = burst.on.run(burst, staging, options)
    if not written:
        return f"it wrote no result, exit code {code}", None
    found = result.read(written[-1])
    rate = found.throughput.msgs_per_s
    if found.verdict == "error" or not rate:
        return f"verdict {found.verdict}", found.run_id
    return float(rate), found.run_id
