"""`compare --duet RATE`: every side's daemon under load at the same time, on the same core(s), each under its
own senders at one fixed rate below saturation (duet benchmarking: Bulej et al., ICPE 2020). A window is one
trial of TRIAL_FINAL seconds that every side runs at once; the next window starts when every side's has
ended. Each window gives each daemon's CPU per message (its own cgroup's CPU over the messages it wrote) and
p99 latency, and host/compare.py pairs them by window, as a burst comparison pairs its rounds: a core that
runs slower for a while slows every daemon on it in the same seconds, so the ratio keeps what the absolute
figures lose. The first side runs twice (its A/A control), as in every comparison.

Each side is a stack of its own (capacity/session.py), started at once and warmed up at RATE_MIN; the
daemons share the search's daemon cores (DAEMON_CORES), the senders and watchers the rest.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from syslogbench.host import lock
from syslogbench.host.capacity.search import Found, warm_up
from syslogbench.host.capacity.session import FIRST_TRIAL_ALLOWANCE_S, UP_ALLOWANCE_S, trial_env, trials
from syslogbench.host.compose import project_name
from syslogbench.host.lifecycle import staged
from syslogbench.model import capacity, codec
from syslogbench.model import compare as model
from syslogbench.model.capacity import Bound, Trial

if TYPE_CHECKING:
    from syslogbench.host.capacity.searchplan import Search


def slug(name: str) -> str:
    """A side's part of its duet stack's compose project and of its window files: letters, digits and
    dashes; of a config, its file's name."""
    base = name.removesuffix(model.CONTROL_SUFFIX)
    profile, _, config = base.partition("=")
    name = (f"{profile}-{Path(config).name}" if config else profile) + ("-aa" if base != name else "")
    kept = "".join(c if c.isalnum() else "-" for c in name.lower())
    return "-".join(part for part in kept.split("-") if part)[:40] or "side"


PURPOSE = "duet"  # the windows' trials, as their records say
# A window whose shared core(s) were this busy (busy over busy and idle time) is not paired: there the
# scheduler shares the core out, and each daemon's CPU is its share, not its work. In a duet of three daemons
# on one core at 20,000 msg/s each (98-100% busy), syslog-ng 4.8 and its control each used 16.2 us per message,
# a third of a core over 20,000 msg/s being 16.7 (20261206T072815.818Z-compare-e57c-seed2014-duet).
CORE_FULL = 0.9
# A side waits for the others at each window's start at most this long: the first wait holds every stack's
# start and warm-up.
START_WAIT_S = UP_ALLOWANCE_S + FIRST_TRIAL_ALLOWANCE_S


class DuetError(ValueError):
    """A duet that cannot run as asked: one line that says what to change."""


@dataclass
class Lane:
    """One side's stack through the windows: its trials, and why it stopped early (empty where it did not)."""

    trials: list[Trial] = field(default_factory=list)
    why: str = ""


def window_s(chosen: Search) -> float:
    return chosen.cap.final_trial_s


def check(sides: dict[str, Search], rate: float, windows: int) -> None:
    """Before any container: a rate each side can be offered, and windows that end within the stacks' life."""
    first = next(iter(sides.values()))
    cap = first.cap
    if not rate >= cap.rate_min:
        raise DuetError(
            f"--duet {rate:g}: give each side's fixed rate in msg/s, at least RATE_MIN={cap.rate_min:g}"
        )
    if rate > cap.rate_max:
        raise DuetError(
            f"--duet {rate:g} is above RATE_MAX={cap.rate_max:g}: raise RATE_MAX, or give a lower rate"
        )
    took = windows * capacity.trial_cost_s(cap, window_s(first)) + capacity.trial_cost_s(
        cap, cap.initial_trial_s
    )
    if took > cap.search_max_s:
        raise DuetError(
            f"--rounds {windows} windows of TRIAL_FINAL={window_s(first):g} s take about {took:,.0f} s, beyond "
            f"SEARCH_MAX={cap.search_max_s:g} s (the stacks' lifetime): raise SEARCH_MAX, or give fewer rounds"
        )


def core_full_words(busy: float) -> str:
    """Why a window on a full core is not paired, in one line (the run's why)."""
    return f"its core(s) {busy:.0%} busy: each daemon's CPU was the scheduler's share, not its work; give a lower rate"


def core_busy(trial: Trial) -> float | None:
    """How busy the daemons' shared core(s) were over the window: busy over busy and idle time."""
    busy, idle = trial.daemon_cores_busy_s, trial.daemon_cores_idle_s
    if busy is None or idle is None or busy + idle <= 0:
        return None
    return round(busy / (busy + idle), 4)


def window_run(side: str, number: int, trial: Trial) -> model.Run:
    """One window of one side as the comparison keeps it: "pass" where every message it meant to send arrived
    within LATENCY_BOUND, the daemon's CPU was read and its core(s) were not full ("core full": its CPU was the
    scheduler's share); its CPU per message and p99 either way."""
    cpu = trial.daemon_cpu_s
    per_msg = round(cpu / trial.received * 1e6, 3) if cpu is not None and trial.received else None
    problems = list(trial.errors)
    if trial.sent != trial.intended:
        problems.append(f"the senders sent {trial.sent:,} of {trial.intended:,}")
    if trial.lost or trial.late:
        problems.append(f"{trial.lost:,} lost and {trial.late:,} late of {trial.intended:,}: the rate is not "
                        "below saturation")  # fmt: skip
    if per_msg is None:
        problems.append("the daemon's CPU could not be read")
    verdict = "loss" if problems else model.PASS
    busy = core_busy(trial)
    if busy is not None and busy >= CORE_FULL:
        problems.append(core_full_words(busy))
        verdict = "core full" if verdict == model.PASS else verdict
    return model.Run(side, number, verdict, msgs_per_s=round(trial.received / trial.duration_s, 1),
                     cpu_us_per_msg=per_msg, p99_ms=trial.latency_ms.p99, core_busy=busy,
                     why="; ".join(problems) or None)  # fmt: skip


def runs_of(lanes: dict[str, Lane], windows: int) -> list[model.Run]:
    """Every side's windows as runs; a window a side did not reach is its "error", with why."""
    out = []
    for name, lane in lanes.items():
        out += [window_run(name, n, trial) for n, trial in enumerate(lane.trials, 1)]
        out += [
            model.Run(name, n, "error", why=lane.why or "the window did not run")
            for n in range(len(lane.trials) + 1, windows + 1)
        ]
    return out


def one(name: str, chosen: Search, where: tuple[Path, int], rate: float, windows: int, barrier: threading.Barrier,
        lane: Lane, log: Callable[[str], None]) -> None:  # fmt: skip
    """A side's stack up (its compose project numbered by its place), warmed up, then a window at a time when
    every side is ready for it."""
    folder, number = where
    project = f"{project_name()}-duet{number}-{slug(name)}"
    on, cap = chosen.plan.on, chosen.cap
    said = lambda line: log(f"[{name}] {line}")  # noqa: E731
    try:
        with (
            lock.project(project),
            on.running_stack(chosen.plan, project, False, (), said) as runner,
            staged(runner, trial_env(chosen), folder, "capacity", keep=False) as stage,
            trials(stage, cap) as measurer,
        ):
            found = Found(Bound(0.0, None, None), Bound(cap.pdr_target, None, None))
            if not warm_up(measurer, cap, found):
                lane.why = "; ".join(found.errors) or "the warm-up trial could not run"
                barrier.abort()
                return
            for number in range(1, windows + 1):
                barrier.wait(START_WAIT_S)
                trial = measurer.trial(rate, window_s(chosen), PURPOSE)
                lane.trials.append(trial)
                said(
                    f"duet window {number}: {trial.received:,} of {trial.intended:,}, daemon CPU {trial.daemon_cpu_s} s"
                )
    except threading.BrokenBarrierError:
        lane.why = lane.why or "another side stopped, or waited past its time: the windows ended with it"
    except Exception as error:  # noqa: BLE001 - one side's failure ends the duet for all, with its reason
        lane.why = f"{type(error).__name__}: {error}"
        barrier.abort()


def run(sides: dict[str, Search], folder: Path, rate: float, windows: int, log: Callable[[str], None],
        into: list[model.Run]) -> None:  # fmt: skip
    """Every side's stack at once, windows of TRIAL_FINAL at `rate` each; every side's trials kept in
    folder/windows/<side>.json; the runs, a window each, into `into`. Ctrl-C ends the windows where they
    are: the windows so far still go into `into` before KeyboardInterrupt."""
    lanes = {name: Lane() for name in sides}
    barrier = threading.Barrier(len(sides))
    threads = [
        threading.Thread(
            target=one, args=(name, chosen, (folder, n), rate, windows, barrier, lanes[name], log)
        )
        for n, (name, chosen) in enumerate(sides.items(), 1)
    ]
    for thread in threads:
        thread.start()
    longest = START_WAIT_S + windows * (START_WAIT_S + capacity.lifetime_s(next(iter(sides.values())).cap))
    try:
        for thread in threads:
            thread.join(longest)
    except KeyboardInterrupt:
        barrier.abort()
        for thread in threads:
            thread.join(longest)
        for lane in lanes.values():
            lane.why = lane.why or "stopped (Ctrl-C or SIGTERM)"
        keep(lanes, folder)
        into.extend(runs_of(lanes, windows))
        raise
    for name, thread in zip(sides, threads, strict=True):
        if thread.is_alive():
            lanes[name].why = lanes[name].why or "the side did not end in its lifetime"
    keep(lanes, folder)
    into.extend(runs_of(lanes, windows))


def keep(lanes: dict[str, Lane], folder: Path) -> None:
    """Each side's window trials, whole (counts per sender, histogram), beside the comparison."""
    where = folder / "windows"
    where.mkdir(parents=True, exist_ok=True)
    for name, lane in lanes.items():
        text = json.dumps({"side": name, "why": lane.why, "trials": codec.plain(lane.trials)}, sort_keys=True)
        (where / f"{slug(name)}.json").write_text(text + "\n")
