"""The capacity search's settings, its trials' accounting and its result (docs/capacity.md).

A search offers the daemon one rate after another in trials against a daemon that stays up, and finds the
highest rate it holds with no message lost or late (NDR) and with at most PDR_TARGET of them (PDR). A message
counts against a trial if it never arrived, or arrived more than LATENCY_BOUND after its intended send time.
Stdlib only: the watcher, the generators and the host all import it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from syslogbench import contract
from syslogbench.model import codec, settings

# The trial number goes into each message's sequence number, above TRIAL_SEQ_SPAN: each trial has sequence
# numbers of its own, so a message from an earlier trial that arrives late is never counted for a later one.
TRIAL_SEQ_SPAN = 10_000_000
# Latencies are kept in microseconds, rounded to 3 significant digits (HdrHistogram's precision below):
# the watcher sends {rounded value: count}, the host records it into an HdrHistogram.
LATENCY_DIGITS = 3
PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p999": 99.9}


# The daemon's supervisor stops it this long after it starts (daemons/_common/supervise.sh).
MAX_LIFETIME_S = int(contract.SUPERVISOR_ENV["MAX_LIFETIME"] or 0)
# After the search, a trial at each of these fractions of the PDR measures its latency, as CSIT reports it.
PDR_FRACTIONS = (0.1, 0.5, 0.9)
LATENCY_TRIALS = len(PDR_FRACTIONS)


class CapacityError(ValueError):
    """A capacity setting that cannot be used: the message says what to change."""


@dataclass(frozen=True)
class CapacitySettings:
    """The search's own settings, given as KEY=VALUE beside the run's (docs/capacity.md). Rates are msg/s
    summed over every sender."""

    latency_bound_s: float = contract.DEFAULT_LATENCY_BOUND_S  # LATENCY_BOUND (contract.CapacityEnv)
    pdr_target: float = 0.005  # PDR_TARGET: the loss ratio the PDR may have (CSIT's 0.5%)
    rate_min: float = 100.0  # RATE_MIN
    rate_max: float = 100_000.0  # RATE_MAX
    relative_width: float = 0.05  # SEARCH_WIDTH: the search stops when upper/lower bound is within this
    initial_trial_s: float = 1.0  # TRIAL_INITIAL
    final_trial_s: float = 10.0  # TRIAL_FINAL
    search_max_s: float = 600.0  # SEARCH_MAX: a whole search, trials and pauses
    pause_s: float = 2.0  # TRIAL_PAUSE: between trials, so queues drain
    # DAEMON_CORES: 0 runs every role on any core; N >= 1 gives the daemon the host's last N cores and the
    # senders, the watcher and the last hop the others (cpusets), as the 2014 remote hosts were apart.
    daemon_cores: float = 0.0
    # Repeated final trials, as CSIT runs them on noisy systems: a rate is decided once its final trials add
    # up to TRIAL_SUM seconds (0: one trial of TRIAL_FINAL), and it holds if the trials that lost more than
    # the goal allows make up at most EXCEED_RATIO of that time (0: none may; CSIT uses 0.5).
    trial_sum_s: float = 0.0  # TRIAL_SUM
    exceed_ratio: float = 0.0  # EXCEED_RATIO

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


# KEY=VALUE name -> field; each a number of its own unit (seconds, msg/s, or a ratio).
KEYS = {
    "LATENCY_BOUND": "latency_bound_s",
    "PDR_TARGET": "pdr_target",
    "RATE_MIN": "rate_min",
    "RATE_MAX": "rate_max",
    "SEARCH_WIDTH": "relative_width",
    "TRIAL_INITIAL": "initial_trial_s",
    "TRIAL_FINAL": "final_trial_s",
    "SEARCH_MAX": "search_max_s",
    "TRIAL_PAUSE": "pause_s",
    "DAEMON_CORES": "daemon_cores",
    "TRIAL_SUM": "trial_sum_s",
    "EXCEED_RATIO": "exceed_ratio",
}


def split(overrides: Mapping[str, str]) -> tuple[CapacitySettings, dict[str, str]]:
    """The capacity settings among the overrides (validated), and the rest (the run's own settings)."""
    values: dict[str, float] = {}
    for key in sorted(set(overrides) & set(KEYS)):
        try:
            values[KEYS[key]] = settings.decimal(key, overrides[key])
        except settings.SettingsError as error:
            raise CapacityError(str(error)) from None
    cap = CapacitySettings(**values)
    check(cap)
    return cap, {k: v for k, v in overrides.items() if k not in KEYS}


def check(cap: CapacitySettings) -> None:
    """Every rule at once would hide which one to fix first: the first broken one, with the fix."""
    if not 0 <= cap.pdr_target < 1:
        raise CapacityError(f"PDR_TARGET={cap.pdr_target:g} is outside [0, 1): 0.005 is CSIT's 0.5%")
    if cap.latency_bound_s <= 0:
        raise CapacityError(
            f"LATENCY_BOUND={cap.latency_bound_s:g}: every message would be late; give seconds above 0 (default 1)"
        )
    if cap.rate_min <= 0:
        raise CapacityError(f"RATE_MIN={cap.rate_min:g}: give a rate above 0 msg/s")
    if cap.rate_max <= cap.rate_min:
        raise CapacityError(
            f"the rate range RATE_MIN={cap.rate_min:g} to RATE_MAX={cap.rate_max:g} is empty: make RATE_MAX larger"
        )
    if not 0 < cap.relative_width < 1:
        raise CapacityError(f"SEARCH_WIDTH={cap.relative_width:g}: give a ratio in (0, 1), e.g. 0.05")
    if not 0 < cap.initial_trial_s <= cap.final_trial_s:
        raise CapacityError(
            f"TRIAL_INITIAL={cap.initial_trial_s:g} s, TRIAL_FINAL={cap.final_trial_s:g} s: "
            "both above 0, the first no longer than the second"
        )
    if cap.daemon_cores < 0 or cap.daemon_cores != int(cap.daemon_cores):
        raise CapacityError(
            f"DAEMON_CORES={cap.daemon_cores:g}: give a whole number of cores (0: every role on any core)"
        )
    if not 0 <= cap.exceed_ratio < 1:
        raise CapacityError(
            f"EXCEED_RATIO={cap.exceed_ratio:g} is outside [0, 1): the share of a rate's final trials that may "
            "lose more than the goal (0: none; CSIT's 0.5)"
        )
    if cap.trial_sum_s and cap.trial_sum_s < cap.final_trial_s:
        raise CapacityError(
            f"TRIAL_SUM={cap.trial_sum_s:g} s is shorter than one final trial (TRIAL_FINAL={cap.final_trial_s:g} "
            "s): give 0 for one trial per rate, or a multiple of TRIAL_FINAL"
        )
    if cap.search_max_s < cap.final_trial_s or cap.pause_s < 0:
        raise CapacityError(
            f"SEARCH_MAX={cap.search_max_s:g} s must hold one final trial ({cap.final_trial_s:g} s), "
            f"and TRIAL_PAUSE={cap.pause_s:g} s cannot be negative"
        )
    check_lifetime(cap)


def lifetime_s(cap: CapacitySettings) -> float:
    """How long the rig serves a search: SEARCH_MAX, the latency trials at fractions of the PDR after it
    (each a final trial and its pause), and a minute for the end (host/search.py)."""
    return cap.search_max_s + LATENCY_TRIALS * (cap.final_trial_s + cap.pause_s) + 60


def check_lifetime(cap: CapacitySettings) -> None:
    """The daemon's supervisor stops it MAX_LIFETIME after it starts, whatever runs: a search must end
    before, with the rig's start (settings.START_ALLOWANCE_S) on top. A pause or a latency bound longer than
    the whole search could never be waited for."""
    if cap.pause_s > cap.search_max_s or cap.latency_bound_s > cap.search_max_s:
        raise CapacityError(
            f"TRIAL_PAUSE={cap.pause_s:g} s and LATENCY_BOUND={cap.latency_bound_s:g} s must each be at most "
            f"SEARCH_MAX={cap.search_max_s:g} s: a wait longer than the whole search never ends in it"
        )
    room = MAX_LIFETIME_S - settings.START_ALLOWANCE_S
    if lifetime_s(cap) > room:
        most = room - LATENCY_TRIALS * (cap.final_trial_s + cap.pause_s) - 60
        raise CapacityError(
            f"SEARCH_MAX={cap.search_max_s:g} s with its {LATENCY_TRIALS} latency trials (TRIAL_FINAL="
            f"{cap.final_trial_s:g} s, TRIAL_PAUSE={cap.pause_s:g} s each) runs {lifetime_s(cap):,.0f} s, but the "
            f"daemon's supervisor stops it MAX_LIFETIME={MAX_LIFETIME_S} s after it starts, {settings.START_ALLOWANCE_S} s "
            f"of which may go to starting: use SEARCH_MAX={max(most, 0):.0f} or less"
        )


def placement(daemon_cores: int, host_cores: int) -> dict[str, str]:
    """The cpuset of each role (Docker's syntax, e.g. "1" or "2-3"; "any": no cpuset): the daemon on the
    host's last daemon_cores cores, the rest of the rig on the others. CapacityError when no core is left."""
    if daemon_cores == 0:
        return {"daemon": "any", "senders": "any", "watcher": "any"}
    if daemon_cores >= host_cores:
        raise CapacityError(
            f"DAEMON_CORES={daemon_cores} leaves no core for the senders and the watcher on this "
            f"{host_cores}-core host: give at most {host_cores - 1}, or 0 for any core"
        )
    daemon = _cores(host_cores - daemon_cores, host_cores - 1)
    rig = _cores(0, host_cores - daemon_cores - 1)
    return {"daemon": daemon, "senders": rig, "watcher": rig}


def _cores(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"


# -- one trial ------------------------------------------------------------------------------------------------


def trial_seq(trial: int, index: int) -> int:
    """The sequence number of a trial's message `index` (0-based)."""
    return trial * TRIAL_SEQ_SPAN + index + 1


def trial_of(seq: int) -> tuple[int, int]:
    """(trial, index) of a sequence number trial_seq made."""
    trial, rest = divmod(seq, TRIAL_SEQ_SPAN)
    return trial, rest - 1


def intended_time(start: float, index: int, rate: float) -> float:
    """When message `index` of a sender is due: the first at the start, then one every 1/rate s."""
    return start + index / rate


def rounded_us(latency_s: float) -> int:
    """A latency in microseconds, to LATENCY_DIGITS significant digits (at least 1 us: HdrHistogram's
    lowest value). Below zero cannot be: arrivals are seen after the send."""
    us = max(1, round(latency_s * 1e6))
    digits = len(str(us))
    if digits <= LATENCY_DIGITS:
        return us
    step = 10 ** (digits - LATENCY_DIGITS)
    return round(us / step) * step


@dataclass
class SenderTrial:
    """One sender's part of one trial. intended = sent + unsent; sent = received + lost; late <= received."""

    id: str
    intended: int
    sent: int = 0
    received: int = 0
    lost: int = 0
    late: int = 0
    duplicated: int = 0
    # A user config's (--config) further sightings of a received message: the copies it writes on purpose to
    # other files, with any duplicates (a trial does not tell them apart; `run --config` does).
    copies: int = 0
    rate_target: float = 0.0  # msg/s this sender was asked for
    rate_achieved: float | None = None  # what it handed to the kernel over its own sending time
    sender_bound: bool = False  # it fell behind with its own CPU, not from the daemon's backpressure
    status: str = "ok"

    @property
    def unsent(self) -> int:
        return self.intended - self.sent

    def consistent(self) -> str | None:
        """What breaks the accounting, or None."""
        if self.sent != self.received + self.lost:
            return f"{self.id}: sent {self.sent} != received {self.received} + lost {self.lost}"
        if self.lost < 0:
            return f"{self.id}: {self.received} received but {self.sent} sent: its report is missing or wrong"
        if not 0 <= self.late <= self.received:
            return f"{self.id}: late {self.late} is not within received {self.received}"
        if not 0 <= self.sent <= self.intended:
            return f"{self.id}: sent {self.sent} outside 0..intended {self.intended}"
        return None


@dataclass
class Latency:
    """Milliseconds from each received message's intended send time to the sample where it was first seen."""

    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    p999: float | None = None
    max: float | None = None


@dataclass
class Trial:
    """One trial, as the result holds it. loss_ratio = (lost + late + unsent) / intended: what the search
    counts against the rate. A sender-bound trial is recorded but the search does not rely on it."""

    number: int
    offered_msgs_per_s: float  # the rate asked for, all senders together
    duration_s: float
    intended: int
    sent: int
    received: int
    lost: int
    late: int
    unsent: int
    duplicated: int
    loss_ratio: float
    achieved_msgs_per_s: float | None  # what the senders really offered, all together
    sender_bound: bool
    latency_ms: Latency
    latency_histogram_us: dict[str, int]  # {rounded us: count}, for merging trials (HdrHistogram on the host)
    sample_s: float | None  # how often the output was looked at: the latency's resolution
    stale_lines: int  # lines of earlier trials seen during this one (they count in their own trial as lost)
    daemon_cpu_s: float | None
    watcher_cpu_s: float | None
    udp_rcvbuf_errors: int | None
    udp_in_errors: int | None
    senders: list[SenderTrial] = field(default_factory=list)
    # Before the trial: how long the earlier trials' lines took to stop arriving, and how many there were.
    drain_s: float | None = None
    # The longest gap between two looks at the output. Past half of LATENCY_BOUND the watcher itself was held
    # up (a busy machine) and made latencies up: the search repeats such a trial (host/search.py).
    sample_max_s: float | None = None
    drained_lines: int = 0
    daemon_exit: int | None = None  # the daemon died during this trial
    errors: list[str] = field(default_factory=list)
    # "warmup" (before the search, waits for the rig: not given to the search), "search", or "latency" (at a
    # fraction of the PDR, after the search).
    purpose: str = "search"
    copies: int = 0  # a user config's (SenderTrial.copies)

    def consistent(self) -> str | None:
        for sender in self.senders:
            if problem := sender.consistent():
                return problem
        sums = {
            name: sum(getattr(s, name) for s in self.senders) for name in ("intended", "sent", "received")
        }
        sums |= {"lost": sum(s.lost for s in self.senders), "late": sum(s.late for s in self.senders)}
        for name, total in sums.items():
            if getattr(self, name) != total:
                return f"trial {self.number}: {name} {getattr(self, name)} != the senders' sum {total}"
        return None


def trial_totals(senders: list[SenderTrial]) -> dict[str, int | float]:
    """The trial's counts from its senders' (the only place they are summed)."""
    intended = sum(s.intended for s in senders)
    totals: dict[str, int | float] = {
        name: sum(getattr(s, name) for s in senders)
        for name in ("intended", "sent", "received", "lost", "late", "duplicated", "copies")
    }
    totals["unsent"] = sum(s.unsent for s in senders)
    bad = totals["lost"] + totals["late"] + totals["unsent"]
    totals["loss_ratio"] = round(bad / intended, 9) if intended else 0.0
    return totals


def trial_from_dict(data: Mapping) -> Trial:
    known = {f.name for f in fields(Trial)}
    values = {k: v for k, v in data.items() if k in known}
    values["latency_ms"] = Latency(**data.get("latency_ms") or {})
    values["senders"] = [SenderTrial(**s) for s in data.get("senders") or []]
    return Trial(**values)


# -- the search's result ----------------------------------------------------------------------------------


@dataclass
class Bound:
    """A goal's answer: the relevant lower bound (the rate held) and upper bound (the rate not held)."""

    loss_ratio: float  # the goal: 0 for NDR, PDR_TARGET for PDR
    lower_msgs_per_s: float | None
    upper_msgs_per_s: float | None


@dataclass
class CapacityResult:
    """results/capacity/<run_id>.json."""

    run_id: str
    kind: str  # "capacity"
    profile: str
    daemon_version: str
    scenario: str
    transport: str
    destination: str
    senders: int
    settings: dict[str, float]
    started_utc: str
    finished_utc: str
    outcome: str  # "found", "daemon-died", "error", "interrupted" (Ctrl-C or SIGTERM: the trials so far)
    ndr_msgs_per_s: float | None
    pdr_msgs_per_s: float | None
    pdr_loss_ratio: float
    ndr: Bound
    pdr: Bound
    trials: list[Trial]
    latency_at_pdr: dict[str, Latency]  # "10%", "50%", "90%" of the PDR: measured there after the search
    cpu_placement: dict[str, str]  # which cpuset each role ran on ("" = any core)
    rig_limit_msgs_per_s: float | None  # the senders could not offer more than this (sender-bound)
    died_at_msgs_per_s: float | None  # the rate of the trial during which the daemon died
    machine: dict[str, object]
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # A user config's (--config): its sha256, file names and sizes, and text unless private
    # (model.userconfig.identity); None: the profile's own rendered config.
    config: dict[str, object] | None = None
    # `matrix --capacity`: the matrix's id and the replicate (model.result.Matrix's fields), which let a
    # matrix resume; None: a search of its own.
    matrix: dict[str, object] | None = None
    # capacity --swarm: every node of the swarm as `docker node inspect` described it (host/swarm.py's
    # Node); machine is then the central node's. None: one host.
    nodes: list[dict[str, object]] | None = None

    def to_dict(self) -> dict:
        return asdict(self)


class CapacityResultError(ValueError):
    """A file that is not a capacity result this model can read: the message says what is wrong."""


def result_from_dict(data: Mapping) -> CapacityResult:
    """The writer's own model, read back strictly (model/codec.py, as a run's result is): an unknown or
    missing key, or a value not of its field's type, is one line."""
    try:
        return codec.load(CapacityResult, data, "capacity result")
    except codec.CodecError as error:
        raise CapacityResultError(str(error)) from None


def read(path: Path) -> CapacityResult:
    """results/capacity/<run id>.json; CapacityResultError (one line) for a file that is not one."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as error:
        raise CapacityResultError(f"cannot be read ({error})") from None
    except ValueError as error:
        raise CapacityResultError(f"not JSON ({error})") from None
    return result_from_dict(data)


def table(result: Mapping) -> str:
    """The short table `syslogbench capacity` prints, from a result's dict."""
    rows = [f"{'trial':>5} {'offered':>10} {'dur s':>6} {'sent':>9} {'recv':>9} {'lost':>7} {'late':>7} "
            f"{'unsent':>7} {'loss':>8} {'p99 ms':>8} {'max ms':>8}  note"]  # fmt: skip
    for t in result["trials"]:
        lat = t["latency_ms"]
        note = (
            "sender-bound" if t["sender_bound"] else ("daemon died" if t["daemon_exit"] is not None else "")
        )
        rows.append(
            f"{t['number']:>5} {t['offered_msgs_per_s']:>10,.0f} {t['duration_s']:>6.1f} {t['sent']:>9,} "
            f"{t['received']:>9,} {t['lost']:>7,} {t['late']:>7,} {t['unsent']:>7,} {t['loss_ratio']:>8.4%} "
            f"{_ms(lat['p99']):>8} {_ms(lat['max']):>8}  {note}"
        )
    for name in ("ndr", "pdr"):
        bound = result[name]
        rows.append(
            f"{name.upper()} (loss <= {bound['loss_ratio']:g}): {rate_text(result[f'{name}_msgs_per_s'])} msg/s; "
            f"bounds {rate_text(bound['lower_msgs_per_s'])} .. {rate_text(bound['upper_msgs_per_s'])}"
        )
    return "\n".join(rows)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def rate_text(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"
