"""The capacity search's result (results/capacity/<run id>.json): each goal's bounds, the rig and the
ceiling it ran with, its strict reader, and the table `syslogbench capacity` prints."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syslogbench.model import codec
from syslogbench.model.capacity.clocks import Clocks
from syslogbench.model.capacity.interval import Interval, interval_text
from syslogbench.model.capacity.trial import Latency, Trial
from syslogbench.model.result import UdpBuffers


@dataclass
class Bound:
    """A goal's answer: the relevant lower bound (the rate held) and upper bound (the rate not held), and
    the confirmation after the search (host/capacity/search.py): the rate that held a CONFIRM_S trial, with no later
    trial at or below it breaking the goal."""

    loss_ratio: float  # the goal: 0 for NDR, PDR_TARGET for PDR
    lower_msgs_per_s: float | None
    upper_msgs_per_s: float | None
    # True: confirmed_msgs_per_s held its confirmation (the lower bound, or a rate below it after steps
    # down); False: no rate could be confirmed, `unconfirmed` says why; None: not asked (CONFIRM_S=0, or a
    # result older than confirmation).
    confirmed: bool | None = None
    confirmed_msgs_per_s: float | None = None
    unconfirmed: str | None = None

    def published(self) -> float | None:
        """The rate the result gives as the NDR or PDR: the confirmed one; the search's lower bound when
        confirmation was not asked; none when it failed."""
        if self.confirmed is None:
            return self.lower_msgs_per_s
        return self.confirmed_msgs_per_s if self.confirmed else None


@dataclass
class Load:
    """The rig that offered the load: it changes what a daemon holds, so the result keeps it."""

    hosts: int
    senders_per_host: int
    remote_mem_bytes: int  # REMOTE_MEM: each generator's memory limit
    remote_cpus: int  # REMOTE_CPUS


@dataclass
class Ceiling:
    """Where the search's RATE_MAX came from: "given" (RATE_MAX=), "burst" (factor times the drain rate of
    a burst run of the same daemon and config just before the search, on its placement: host/capacity/ceiling.py;
    for a paced scenario, a burst of its all-out twin, never below the default, and why) or "default" (that
    burst run gave no rate, or a paced scenario has no twin: RATE_MAX's default, and why)."""

    source: str
    rate_max: float
    burst_run_id: str | None = None  # its result: results/capacity/bursts/<id>.json
    burst_msgs_per_s: float | None = None
    factor: float | None = None
    why: str | None = None


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
    # "found", "unconfirmed" (a bound's confirmation failed: its `unconfirmed` says why), "daemon-died",
    # "error", "interrupted" (Ctrl-C or SIGTERM: the trials so far)
    outcome: str
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
    # A search of the capacity matrix before it was a comparison (until 2026-12-06): the matrix's id and the
    # replicate (model.result.Matrix's fields); None: a search of its own, as every search since.
    matrix: dict[str, object] | None = None
    # capacity --swarm: every node of the swarm as `docker node inspect` described it (host/swarmnodes.py's
    # Node); machine is then the central node's. None: one host.
    nodes: list[dict[str, object]] | None = None
    # What made the figures, beside `settings` (the search's): the rig's shape and memory, the UDP buffers
    # (UDP only), and the project's commit (`git rev-parse HEAD` at the command's start, or "unknown (why)").
    # None in results older than these.
    load: Load | None = None
    udp_buffers: UdpBuffers | None = None
    commit: str | None = None
    # Each generator's clock against the watcher's, and whether the latencies are trusted (Clocks); None in
    # results older than the check.
    clocks: Clocks | None = None
    # TUNING: "default", "tuned", "custom" (a step of `knobs`) or "user" (--config), and each knob the config
    # set (as a run's result has them, model/result/scenario.py Daemon). None in results older than the tuning axis.
    tuning: str | None = None
    knobs: dict[str, Any] | None = None
    # Where RATE_MAX came from (given, or a burst run's drain rate); None in results older than it.
    ceiling: Ceiling | None = None
    # The NDR's 95% interval for the next search, from NDR_REPEATS trials at it (model/capacity/interval.py);
    # None: no repeats were asked (NDR_REPEATS=0, a comparison's search, a result older than them), or no NDR.
    ndr_interval: Interval | None = None

    @property
    def at_ceiling(self) -> bool:
        """The published NDR is the search's ceiling: RATE_MAX, or the lower one it started again with when
        the rig could send no faster (rig_limit_msgs_per_s). The daemon held every rate tried, its
        confirmation too, so its NDR is "at least". A confirmation that broke at RATE_MAX found a limit below
        it: the rate then published is the daemon's."""
        published = self.ndr_msgs_per_s
        if published is None or self.ndr.upper_msgs_per_s is not None:
            return False
        return self.rig_limit_msgs_per_s is not None or published >= self.settings["rate_max"]

    def to_dict(self) -> dict:
        return codec.plain(self)  # type: ignore[return-value]


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
        data = codec.read_json(path)
    except codec.CodecError as error:
        raise CapacityResultError(str(error)) from None
    return result_from_dict(data)


def table(result: CapacityResult) -> str:
    """The short table `syslogbench capacity` prints."""
    rows = [f"{'trial':>5} {'offered':>10} {'dur s':>6} {'sent':>9} {'recv':>9} {'lost':>7} {'late':>7} "
            f"{'unsent':>7} {'loss':>8} {'p99 ms':>8} {'max ms':>8}  note"]  # fmt: skip
    for t in result.trials:
        lat = t.latency_ms
        note = "sender-bound" if t.sender_bound else ("daemon died" if t.daemon_exit is not None else "")
        note = " ".join(n for n in (note, t.purpose if t.purpose != "search" else "") if n)
        rows.append(
            f"{t.number:>5} {t.offered_msgs_per_s:>10,.0f} {t.duration_s:>6.1f} {t.sent:>9,} "
            f"{t.received:>9,} {t.lost:>7,} {t.late:>7,} {t.unsent:>7,} {t.loss_ratio:>8.4%} "
            f"{_ms(lat.p99):>8} {_ms(lat.max):>8}  {note}"
        )
    for name, bound, rate in (
        ("NDR", result.ndr, result.ndr_msgs_per_s),
        ("PDR", result.pdr, result.pdr_msgs_per_s),
    ):
        rows.append(
            f"{name} (loss <= {bound.loss_ratio:g}): {rate_text(rate)} msg/s; "
            f"bounds {rate_text(bound.lower_msgs_per_s)} .. {rate_text(bound.upper_msgs_per_s)}"
            f"{confirmation_text(bound)}"
        )
    if result.ndr_interval is not None:
        rows.append(interval_text(result.ndr_interval))
    if result.at_ceiling:
        rows.append(at_least_text(result))
    if (ceiling := result.ceiling) is not None:
        rows.append(ceiling_text(ceiling))
    return "\n".join(rows)


def at_least_text(result: CapacityResult) -> str:
    if result.rig_limit_msgs_per_s is not None:  # the daemon held all the rig could send
        return (f"NDR at least {rate_text(result.ndr_msgs_per_s)} msg/s: the rig could send no more than "
                f"{rate_text(result.rig_limit_msgs_per_s)} msg/s and the daemon held every rate below it, so "
                "its own limit is above; send from more cores (a swarm: docs/swarm.md)")  # fmt: skip
    return (f"NDR at least {rate_text(result.ndr_msgs_per_s)} msg/s: the search's RATE_MAX held, so the daemon's "
            "own limit is above it; give a higher RATE_MAX")  # fmt: skip


def ceiling_text(ceiling: Ceiling) -> str:
    """Where RATE_MAX came from, in one line."""
    if ceiling.source == "burst":
        return (f"RATE_MAX {rate_text(ceiling.rate_max)} msg/s: {ceiling.factor:g} times the burst drain rate "
                f"{rate_text(ceiling.burst_msgs_per_s)} msg/s (run {ceiling.burst_run_id})")  # fmt: skip
    if ceiling.source == "default":
        return f"RATE_MAX {rate_text(ceiling.rate_max)} msg/s: {ceiling.why}"
    return f"RATE_MAX {rate_text(ceiling.rate_max)} msg/s, as given"


def confirmation_text(bound: Bound) -> str:
    if bound.confirmed is None:
        return ""
    if bound.confirmed:
        return f"; confirmed at {rate_text(bound.confirmed_msgs_per_s)}"
    return f"; {bound.unconfirmed or 'unconfirmed'}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def rate_text(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"
