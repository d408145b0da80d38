"""Progress: every PROGRESS_EVERY seconds, the lines received so far (estimated from the output's size,
files.OutputSize), printed and kept for the result."""

from __future__ import annotations

import math
import os

from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher.concern import Concern
from syslogbench.rig.watcher.files import OutputSize

PROGRESS_EVERY = float(os.environ.get("PROGRESS_EVERY", "2"))


def say(text: str) -> None:
    print(f"watcher: {text}", flush=True)


class Progress(Concern):
    def __init__(self, counter: OutputSize, expected: int, every: float = PROGRESS_EVERY) -> None:
        self.counter, self.expected, self.every = counter, expected, every
        # The first report after `every` seconds; none at all for every <= 0 (PROGRESS_EVERY=0).
        self.next_look = every if every > 0 else math.inf
        self.last_lines, self.last_time = 0, 0.0
        self.rows: list[list[float]] = []

    def update(self, now: float) -> None:
        self.counter.update(now, max_age=self.every / 2)  # the samples' look of up to a second ago will do
        lines, at = self.counter.lines, self.counter.at if self.counter.at is not None else now
        if at <= self.last_time:
            return
        rate = (lines - self.last_lines) / (at - self.last_time)
        self.rows.append([round(at, 2), lines])
        share = 100 * lines / self.expected
        say(f"~{lines:,} / {self.expected:,} received ({share:.1f}%), {rate:,.0f} msg/s")
        self.last_lines, self.last_time = lines, at

    def record(self, obs: Observed) -> None:
        obs.progress = self.rows
