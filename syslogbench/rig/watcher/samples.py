"""The time series: the supervisor's samples (CPU, memory, about once a second) with the lines received,
estimated from the output's size (files.OutputSize)."""

from __future__ import annotations

from syslogbench.rig import control
from syslogbench.rig.cgroup import Snapshot
from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher.concern import Concern
from syslogbench.rig.watcher.files import OutputSize, SampleTail


class Samples(Concern):
    def __init__(self, counter: OutputSize, start: Snapshot | None) -> None:
        self.counter = counter
        self.tail = SampleTail(control.CONTROL.samples, start)
        self.rows: list[list[float | None]] = []

    def update(self, now: float) -> None:
        for user, system, memory in self.tail.update():
            self.counter.update(now)
            self.rows.append([round(now, 2), user, system, memory, self.counter.lines])

    def record(self, obs: Observed) -> None:
        obs.samples = self.rows
