"""A knob study, typed: what `syslogbench knobs` writes to results/knobs/<id>.json and what the report reads.

One profile and scenario, from the daemon's defaults to tuned one knob at a time (host/knobs.py): each step's
knobs and runs, each step's gain over the default step, the chain of steps from the default to the last, each
chain step's share of the whole gain, and the capacity searches of the first and last steps. Read strictly
through model/codec.py, as a capacity result is: an unknown or missing key, or a value not of its field's
type, is one line. Stdlib only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from statistics import median

from syslogbench.model import codec
from syslogbench.model.machine import UNKNOWN_DOCKER

KIND = "knobs"
DEFAULT_STEP = "default"  # the step that runs the profile's own default config: every gain is over its rate
DONE = "done"
PASS = "pass"


class KnobsResultError(ValueError):
    """A file that is not a knob study this model reads: the message says what is wrong, in one line."""


@dataclass
class Run:
    """One run of a step, as the study keeps it; an error run that wrote no result has its exit code only."""

    verdict: str
    replicate: int
    run_id: str | None = None
    msgs_per_s: float | None = None
    cpu_us_per_msg: float | None = None
    elapsed_s: float | None = None
    lost: int | None = None
    exit_code: int | None = None
    received: int | None = None  # None in studies from before it
    # Whether its rate counts: a run that passed, or over UDP one that lost datagrams (host/knobs.py figures);
    # None in studies from before it, where only a run that passed counted.
    counts: bool | None = None

    @property
    def passed(self) -> bool:
        if self.counts is not None:
            return self.counts
        return self.verdict == PASS and bool(self.msgs_per_s)


@dataclass
class FixedRate:
    """One trial of a step's config at the study's fixed rate (a capacity trial, TRIAL_FINAL long): its
    latency from each message's intended send time, its counts, the daemon's CPU per message; or the one line
    that says why there is none."""

    rate_msgs_per_s: float
    p50_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    intended: int | None = None
    received: int | None = None
    lost: int | None = None
    late: int | None = None
    cpu_us_per_msg: float | None = None
    error: str | None = None


@dataclass
class Step:
    """One config of the study: the knobs it set (name -> value), its runs, its gain over the default step."""

    name: str
    # "default" (the package's defaults, rendered and mounted as every other step's config is); "control" (the
    # image's own default config, as `run` runs it: what the way a step runs costs); "alone" (one knob at one
    # value, or knobs asked together, A+B); "together" (the knobs that bought most alone, one more a step)
    phase: str
    knobs: dict[str, str]
    runs: list[Run] = field(default_factory=list)
    gain: float | None = None  # median rate of the passing runs over the default step's; None: no rate
    latency: FixedRate | None = None  # at the study's fixed rate; None: not measured (the control, or off)

    @property
    def passed(self) -> list[Run]:
        """The runs that count: a run with loss drained nothing comparable (host/knobs.py, passed)."""
        return [run for run in self.runs if run.passed]

    @property
    def median_rate(self) -> float | None:
        rates = [float(run.msgs_per_s) for run in self.passed if run.msgs_per_s]
        return median(rates) if rates else None

    @property
    def median_cpu_us(self) -> float | None:
        """The daemon's CPU µs per message, median over the passing runs."""
        found = [run.cpu_us_per_msg for run in self.passed if run.cpu_us_per_msg is not None]
        return median(found) if found else None


@dataclass
class Knob:
    """A knob of the family as the study ran it: its parameter, the daemon's default, whether `tuned` sets
    it, the documentation that recommends it and what it trades away (daemons/_families/<family>.yaml)."""

    param: str
    default: str
    tuned: bool
    source: str
    trades: str


@dataclass
class KnobsResult:
    """results/knobs/<id>.json."""

    kind: str  # "knobs"
    id: str
    profile: str
    daemon_version: str
    scenario: str
    started_utc: str
    finished_utc: str
    replicates: int
    machine: dict[str, object]  # model.result.Host's fields, as a capacity result keeps them
    knobs: dict[str, Knob]
    steps: list[Step]
    chain: list[str]  # the step names from the default to the last
    shares: dict[str, float | None]  # each chain step's share of the whole gain; None where there is none
    capacity: dict[str, str | None]  # step name -> its capacity result's id (results/knobs/<id>/capacity/)
    # "done", or "interrupted" (Ctrl-C or SIGTERM: the steps with the runs made so far); the first studies,
    # before the key, all ran to their end.
    outcome: str = DONE
    daemon: str | None = None  # the family (rsyslog, syslog-ng); None in the first studies
    # The total rate of every step's latency trial (--latency-rate); None: none measured (off, or a study
    # from before it).
    latency_rate: float | None = None

    @property
    def docker_known(self) -> bool:
        """Whether the study recorded its machine's Docker version: the first ones did not (UNKNOWN_DOCKER)."""
        return self.machine.get("docker_version") != UNKNOWN_DOCKER

    def step(self, name: str) -> Step | None:
        return next((step for step in self.steps if step.name == name), None)

    def to_dict(self) -> dict:
        return codec.plain(self)  # type: ignore[return-value]


def result_from_dict(data: object) -> KnobsResult:
    """The document as a KnobsResult; KnobsResultError (one line) where it does not fit."""
    try:
        return codec.load_kind(KnobsResult, data, "knobs result", KIND)
    except codec.CodecError as error:
        raise KnobsResultError(str(error)) from None


def read(path: Path) -> KnobsResult:
    """results/knobs/<id>.json; KnobsResultError (one line) for a file that is not one."""
    try:
        return result_from_dict(codec.read_json(path))
    except codec.CodecError as error:
        raise KnobsResultError(str(error)) from None
