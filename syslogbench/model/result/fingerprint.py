"""What the machine did with fixed work just before the run: the figures two results compare through."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import fmean, stdev
from typing import Any

from syslogbench.model.result.plain import ResultError, load, optional, plain

UNSTEADY_COV = 0.2  # above this, a fingerprint figure's repeats say the machine was busy


def cov(values: Sequence[float]) -> float | None:
    """Coefficient of variation: sample standard deviation / mean. None for n < 2 or a zero mean. The one
    definition the fingerprint's note, `syslogbench fingerprint` and the report all use."""
    if len(values) < 2:
        return None
    centre = fmean(values)
    if centre == 0:
        return None
    return stdev(values) / abs(centre)


@dataclass
class Figure:
    """One figure of the fingerprint: the median rate of its repeats per wall second, in `unit`."""

    value: float
    unit: str
    seconds: float  # all repeats together
    repeats: list[float] = field(default_factory=list)  # each repeat's rate, in order
    # The CPU seconds (user and system) the timed work used, and the rate per CPU second over all repeats:
    # close to `value` on a quiet machine, above it where the work waited for a CPU.
    cpu_s: float | None = optional()
    per_cpu_s: float | None = optional()

    def cov(self) -> float | None:
        """The repeats' coefficient of variation."""
        return cov(self.repeats)


@dataclass
class Fingerprint:
    """What this machine did with fixed work, just before the run (syslogbench/rig/fingerprintprobes.py).

    Machines that report the same CPU model differ, so two results compare through these figures: cpu for
    CPU-bound daemons (syslog-ng), file_churn for rsyslog's seed run (open and close per message), loopback_tcp
    for the senders' path. docs/measurement.md says how to read them.
    """

    version: int  # of the fixed work: figures of different versions do not compare
    # "container": a one-shot container under the daemon's CPU and memory limits, on a fresh volume of the
    # logs volume's kind (`syslogbench run`); "watcher": in the watcher, on the logs volume (plain compose).
    source: str
    cpu: Figure
    file_churn: Figure
    loopback_tcp: Figure
    seconds: float  # the three figures, inside the container
    cpu_limit: float | None = None  # the CPUs and memory the measuring cgroup had; None: unlimited
    memory_limit_bytes: int | None = None
    wall_s: float | None = optional()  # `syslogbench run` only: container and volume included

    def figures(self) -> dict[str, Figure]:
        return {"cpu": self.cpu, "file_churn": self.file_churn, "loopback_tcp": self.loopback_tcp}

    def unsteady(self) -> str | None:
        """A note when a figure's repeats vary by more than UNSTEADY_COV: something else was using the machine.

        On the project's machine, quiet, the repeats varied by 2-10% (CoV); with other benchmarks running on
        its 2 cores, by 40-60%, every figure a third of the quiet one."""
        covs = {name: figure.cov() for name, figure in self.figures().items()}
        high = {name: cov for name, cov in covs.items() if cov is not None and cov > UNSTEADY_COV}
        if not high:
            return None
        listed = ", ".join(f"{name} {cov:.0%}" for name, cov in high.items())
        return (
            f"the fingerprint's repeats varied by more than {UNSTEADY_COV:.0%} (CoV: {listed}): something else "
            "was using the machine, and this run's figures may not compare with others"
        )

    def to_dict(self) -> dict[str, Any]:
        return plain(self)  # type: ignore[return-value]

    @classmethod
    def from_json(cls, text: str | None) -> Fingerprint | None:
        """A fingerprint passed as JSON (the FINGERPRINT variable), None for none; ResultError if bad."""
        if not text:
            return None
        try:
            data = json.loads(text)
        except ValueError as error:
            raise ResultError(f"fingerprint: not JSON ({error})") from error
        return load(cls, data, "fingerprint")
