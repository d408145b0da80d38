"""One run's result, typed: what the watcher writes to results/<run_id>.json and what the report reads.

results/schema.json describes the same document; tests/unit/test_schema.py checks that the two agree. Every
result already in results/ loads through `Result.from_dict`, older ones upgraded in `upgrade()`: the one
place that knows what an older document lacked. Stdlib only: the watcher imports this in its container.

    python -m syslogbench.model.result FILE...   checks that each file loads into the model
"""

from __future__ import annotations

import json
import secrets
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, make_dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from statistics import fmean, median, stdev
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from syslogbench.contract import CENTRAL_PORT, Trigger, read_json, write_atomic
from syslogbench.model import codec, scenarios
from syslogbench.model.settings import DEFAULT_VARIANT, variant_name

if TYPE_CHECKING:
    from syslogbench.model.scenarios import Scenario as ScenarioFile
    from syslogbench.model.settings import Settings

# 2 added scenario.variant; a version 1 document gets it in upgrade().
SCHEMA_VERSION = 2
SAMPLE_COLUMNS = ["t_s", "cpu_user_s", "cpu_system_s", "memory_bytes", "received"]
VERDICTS = ("pass", "loss", "timeout", "error", "n/a")
# hosts, senders per host, messages per sender: the load every scenario had before a scenario held its own.
SEED_SHAPE = (5, 4, 300_000)


class ResultError(ValueError):
    """A document that is not a result this model reads; the message names the key."""


# -- the load shape's name ----------------------------------------------------------------------------------


class Shape(Protocol):
    hosts: int
    senders_per_host: int
    messages_per_sender: int


def shape_variant(hosts: int, senders_per_host: int, messages_per_sender: int) -> str:
    """ "default" for the seed's shape, else "<hosts>x<senders_per_host>x<messages_per_sender>"."""
    if (hosts, senders_per_host, messages_per_sender) == SEED_SHAPE:
        return DEFAULT_VARIANT
    return variant_name(hosts, senders_per_host, messages_per_sender)


def variant_of(cfg: Shape) -> str:
    """The run's variant: the one its settings name, else the one its shape gives."""
    named = getattr(cfg, "variant", None)
    return (
        named
        if isinstance(named, str) and named
        else shape_variant(cfg.hosts, cfg.senders_per_host, cfg.messages_per_sender)
    )


# -- plain data <-> dataclasses -----------------------------------------------------------------------------

# A field with this metadata is left out of the document when it is None: older results lack it, or a run
# that measured nothing never had it. Every other field is always written, null where not measured.
OMIT_IF_NONE = {"omit_if_none": True}


def optional() -> Any:
    return field(default=None, metadata=OMIT_IF_NONE)


T = TypeVar("T")


def plain(value: object) -> object:
    """A dataclass tree as JSON-ready dicts and lists."""
    if is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in fields(value):
            item = getattr(value, f.name)
            if item is None and f.metadata.get("omit_if_none"):
                continue
            out[f.name] = plain(item)
        return out
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def load(kind: type[T], data: object, where: str = "result") -> T:
    """A dataclass from a dict: every key must be a field, every field without a default must be there
    (codec.build, the one strict reader of both result kinds)."""
    try:
        return codec.build(kind, data, where)
    except codec.CodecError as error:
        raise ResultError(str(error)) from None


# -- the blocks ---------------------------------------------------------------------------------------------


@dataclass
class RunShape:
    """The scenario's id and the load's shape as they were in force; the scenario file's axes follow it."""

    id: str
    variant: str
    hosts: int
    senders_per_host: int
    messages_per_sender: int
    done_threshold: int
    done_window_s: int
    run_timeout_s: int
    seed: int
    framing: str | None = optional()
    port: int | None = optional()
    connections: int | None = optional()

    @classmethod
    def of(cls, cfg: Settings, scenario: ScenarioFile | None) -> Scenario:
        """The scenario's axes (from its file) and the load's shape, as they were in force."""
        axes = scenario.as_dict() if scenario else {"id": cfg.scenario}
        shape = dict(
            variant=variant_of(cfg),
            framing=scenario.framing if scenario else "unknown",
            port=CENTRAL_PORT,
            hosts=cfg.hosts,
            senders_per_host=cfg.senders_per_host,
            # The senders really connected: the axis in the file is 0 where the shape decides.
            connections=cfg.senders,
            messages_per_sender=cfg.messages_per_sender,
            done_threshold=cfg.done_threshold,
            done_window_s=cfg.done_window,
            run_timeout_s=cfg.run_timeout,
            seed=cfg.seed,
        )
        return Scenario(**(axes | shape))

    @property
    def messages_total(self) -> int:
        return self.hosts * self.senders_per_host * self.messages_per_sender


# The result's scenario: the run's shape, then each axis of the scenario file (model/scenarios.py FIELDS) that
# the shape does not record itself, in the file's order. A result written before an axis existed lacks it.
RESULT_AXES = tuple(
    axis for axis in scenarios.FIELDS if not axis.load and axis.name not in RunShape.__dataclass_fields__
)
Scenario = make_dataclass(
    "Scenario",
    [(axis.name, axis.kind | None, optional()) for axis in RESULT_AXES],
    bases=(RunShape,),
    namespace={"__module__": __name__},
)


@dataclass
class Daemon:
    profile: str = "unknown"
    name: str = "unknown"
    version: str = "unknown"
    package: str = "unknown"
    image: str = "unknown"
    base: str = "unknown"
    settings: dict[str, Any] = field(default_factory=dict)  # what departs from the daemon's defaults
    stopped: bool = False
    exit_code: int | None = None
    # TUNING: "default" (the package's defaults), "tuned" (its maintainers' recommended settings), "custom"
    # (a step of `knobs`) or "user" (run --config); and each knob the config set, with its parameter, value,
    # the daemon's own default and the documentation that recommends it. None in results older than these.
    tuning: str | None = optional()
    knobs: dict[str, Any] | None = optional()


@dataclass
class Limit:
    requested: float
    configured: float | None
    effective: float | None

    @classmethod
    def of(cls, requested: float, configured: float | None, host: float) -> Limit:
        """What the host can really give: the cgroup's limit where known, else the request, within the host."""
        given = requested if configured is None else configured
        return cls(requested, configured, min(given, host))

    def shortfall(self) -> bool:
        wanted = self.configured if self.configured is not None else self.requested
        return self.effective is not None and wanted is not None and self.effective < wanted


def readable(name: str, value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value / 2**30:.2f} GiB" if name.endswith("bytes") else f"{value:g}"


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
    """What this machine did with fixed work, just before the run (syslogbench/rig/fingerprint.py).

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


@dataclass
class Host:
    cpu_model: str
    cores: int
    memory_bytes: int
    kernel: str
    docker_version: str
    cgroup_version: int
    # Older results lack it, and so do n/a results decided on the host, where nothing ran (see Fingerprint).
    fingerprint: Fingerprint | None = optional()

    def as_dict(self) -> dict[str, object]:
        return plain(self)  # type: ignore[return-value]


@dataclass
class Node:
    """One machine of the run, and the services it ran (docs/swarm.md)."""

    hostname: str
    cpu_model: str
    cores: int
    memory_bytes: int
    kernel: str
    docker_version: str
    services: list[str] = field(default_factory=list)


@dataclass
class Topology:
    """Where each service ran, and the network the messages crossed from the generators to the daemon."""

    network: str  # "bridge" (one host, compose) or "overlay" (Swarm)
    nodes: list[Node] = field(default_factory=list)


@dataclass
class Limits:
    central_cpus: Limit
    central_memory_bytes: Limit
    remote_cpus: Limit
    remote_memory_bytes: Limit

    @classmethod
    def of(
        cls, cfg: Settings, host: Host, cpu_limit: float | None = None, memory_limit: int | None = None
    ) -> Limits:
        return cls(
            central_cpus=Limit.of(cfg.central_cpus, cpu_limit, host.cores),
            central_memory_bytes=Limit.of(cfg.central_mem, memory_limit, host.memory_bytes),
            # The generators do not report their cgroup; "configured" stays unknown for them.
            remote_cpus=Limit.of(cfg.remote_cpus, None, host.cores),
            remote_memory_bytes=Limit.of(cfg.remote_mem, None, host.memory_bytes),
        )

    def notes(self) -> list[str]:
        """A notice for every limit the host could not give."""
        return [
            f"{f.name}: {readable(f.name, limit.requested)} requested, but the host can give only "
            f"{readable(f.name, limit.effective)}; the effective value is recorded"
            for f in fields(self)
            if (limit := getattr(self, f.name)).shortfall()
        ]


@dataclass
class End:
    trigger: str = Trigger.NOT_STARTED
    sec_fired_s: float | None = None
    done_spread_s: float | None = None


@dataclass
class Cpu:
    user_s: float | None = None
    system_s: float | None = None
    total_s: float | None = None  # at the cgroup's finest resolution; older results lack it
    percent: float | None = None

    @property
    def used_s(self) -> float | None:
        return None if self.user_s is None or self.system_s is None else self.user_s + self.system_s


@dataclass
class Memory:
    peak_bytes: float | None = None
    peak_source: str = "none"
    max_rss_bytes: float | None = None


@dataclass
class Io:
    write_bytes: float | None = None
    output_bytes: float | None = None


@dataclass
class Messages:
    expected: int
    sent: int = 0
    received: int = 0
    lost: int = 0
    duplicated: int = 0
    misfiled: int = 0
    unknown: int = 0
    done_expected: int = 0
    done_received: int = 0
    done_log_lines: int = 0
    done_log_extra: int = 0
    # Reconciled runs only (older results lack them too).
    filtered: int | None = optional()
    unexpected: int | None = optional()
    unprocessed: int | None = optional()
    # Lines with a sender's key that did not arrive whole (cut or mangled); older results lack it.
    truncated: int | None = optional()


@dataclass
class Tls:
    version: str | None = None
    cipher: str | None = None
    peer_closed: bool | None = None


@dataclass
class Sender:
    id: str
    status: str
    sent: int
    received: int
    lost: int
    duplicated: int
    done_seen: bool
    bytes: int = 0
    send_s: float | None = None
    cpu_s: float | None = None
    tls: Tls | None = optional()  # TLS scenarios only
    rate_target: int | None = None
    rate_achieved: float | None = None
    # Older results lack these three.
    expected: int | None = optional()
    filtered: int | None = optional()
    unexpected: int | None = optional()
    truncated: int | None = optional()  # older results lack it too


@dataclass
class Generators:
    send_s_max: float | None = None
    cpu_s_total: float | None = None
    cpu_share_of_send: float | None = None
    container_cpu_s: float | None = None
    tcp_congestion: str | None = optional()  # the senders' TCP congestion control; older results lack it


@dataclass
class SenderBound:
    value: bool | None = None
    reason: str = "not measured"


@dataclass
class Throughput:
    msgs_per_s: float | None = None
    mb_per_s: float | None = None


@dataclass
class Spread:
    min: float | None = None
    median: float | None = None
    max: float | None = None


@dataclass
class Rate:
    target_per_sender: int
    target_total: int
    achieved_per_sender: Spread = field(default_factory=Spread)
    achieved_total: float | None = None


@dataclass
class UdpKernel:
    in_datagrams: int
    in_errors: int
    rcvbuf_errors: int
    no_ports: int
    drop_rate: float | None


@dataclass
class UdpBuffers:
    """The daemon's UDP receive buffer (UDP runs and searches only), read in its network namespace."""

    requested_bytes: int | None  # UDP_RCVBUF; None: not set, the kernel's default
    rmem_default: int | None  # /proc/sys/net/core/rmem_default: a socket's buffer unless the daemon asks
    rmem_max: int | None  # /proc/sys/net/core/rmem_max: the most SO_RCVBUF can ask (it gets twice that)
    socket_bytes: int | None  # the listening socket's buffer in force, by the kernel's rule (how)
    how: str  # where socket_bytes comes from
    # The same buffer read from the socket itself: `ss -m`'s rb (sk_rcvbuf, what getsockopt(SO_RCVBUF)
    # gives) as the supervisor read it once the daemon listened. None: not read (older results, an image
    # without ss); it differs from socket_bytes when the daemon did not ask what the rule assumes.
    socket_read_bytes: int | None = optional()


def udp_buffers(requested: int | None, seen: Mapping) -> UdpBuffers:
    """The buffers from what the daemon's supervisor read in its namespace (contract.UDP_BUFFERS_KEY's
    dict: rmem_default, rmem_max, socket_rcvbuf). socket_bytes is the kernel's rule for SO_RCVBUF applied to
    the sysctls: twice the request, capped at twice rmem_max (without CAP_NET_ADMIN, which the daemons lack,
    SO_RCVBUFFORCE fails and rsyslog falls back to SO_RCVBUF), else rmem_default; socket_read_bytes is what
    the socket holds (ss -m), the figure to believe when the two differ."""
    default, most = _int(seen.get("rmem_default")), _int(seen.get("rmem_max"))
    read = _int(seen.get("socket_rcvbuf"))
    if requested is None:
        how = "the kernel's default (rmem_default): UDP_RCVBUF not set"
        return UdpBuffers(None, default, most, default, how, read)
    socket = None if most is None else 2 * min(requested, most)
    how = "the kernel's rule: 2 x min(UDP_RCVBUF, rmem_max); SO_RCVBUFFORCE needs CAP_NET_ADMIN"
    return UdpBuffers(requested, default, most, socket, how, read)


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, int | str) and str(value).isdigit() else None


@dataclass
class Udp:
    sent: int
    received: int
    lost: int
    drop_rate: float | None
    kernel: UdpKernel | None = None
    buffers: UdpBuffers | None = optional()  # older results lack it

    @classmethod
    def of(cls, messages: Messages, kernel: UdpKernel | None) -> Udp:
        """The drop rate from the sequence numbers (lost / sent), beside the kernel's counters."""
        sent, lost = messages.sent, messages.lost
        return cls(sent, messages.received, lost, round(lost / sent, 6) if sent else None, kernel)


@dataclass
class LastHop:
    """The relay target as it reported itself (rig/lasthop.py); times are seconds after the start signal."""

    target: str
    lines_per_s: int
    pause_s: float
    host: str
    port: int
    connections: int
    lines: int
    done_lines: int
    receive_buffer_bytes: int = 0
    # Connections the central daemon ended with a reset (RST) instead of a close (FIN): the kernel then drops
    # whatever this side had not read yet, so messages in flight are lost whatever queue the daemon had.
    resets: int = 0
    # Connections that ended inside a line; the pieces go to lasthop.fragments.log. A daemon that resends the
    # message whole loses nothing.
    fragments: int = 0
    bytes: int = 0
    paused_from_s: float | None = None
    paused_until_s: float | None = None
    first_line_s: float | None = None
    last_line_s: float | None = None
    drained_s: float | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Queue:
    buffer: str
    where: str
    capacity_bytes: int | None
    peak_bytes: int | None
    bytes_after_stop: int | None
    samples: list[list[float]] = field(default_factory=list)


@dataclass
class Tail:
    lines_at_done: int
    lines_at_stop: int
    waited_s: float
    last_line_s: float


@dataclass
class Restart:
    senders_done_s: float | None
    requested_s: float | None
    exit_code: int | None
    stop_s: float | None = optional()


@dataclass
class Relay:
    queue: Queue
    last_hop: LastHop | None = None
    tail: Tail | None = optional()
    restart: Restart | None = optional()


@dataclass
class Matrix:
    id: str
    replicate: int


@dataclass
class HarnessContainer:
    """One harness container's own cost, from its own cgroup; None where not measured."""

    # The cgroup's peak (v1 memory.max_usage_in_bytes, v2 memory.peak), page cache included, over the
    # container's life: its reconciliation too.
    peak_memory_bytes: int | None = None
    peak_memory_source: str | None = None  # which file it came from, as memory.peak_source
    memory_limit_bytes: int | None = None  # None: unlimited (or unknown)


@dataclass
class Samples:
    columns: list[str] = field(default_factory=lambda: list(SAMPLE_COLUMNS))
    rows: list[list[float | None]] = field(default_factory=list)

    def series(self) -> list[dict[str, float | None]]:
        """Each row by column name."""
        return [dict(zip(self.columns, row, strict=False)) for row in self.rows]


@dataclass
class GeneratorReport:
    """What one generator container reports of its own cgroup (control: generators/host<i>.json). The fields,
    not the way they travel, are the contract: any transport carries this same object."""

    host: int
    # While its senders sent: the start signal to the last sender's end (10 ms ticks on cgroup v1).
    cpu_user_s: float | None = None
    cpu_system_s: float | None = None
    # The start signal to the end of the run (the daemon's exit), at the cgroup's finest resolution; older
    # generators did not report it.
    run_cpu_s: float | None = None
    tcp_congestion: str | None = None  # its senders' TCP congestion control
    node: Node | None = optional()  # the node it ran on, for the result's topology; older generators lack it


@dataclass
class LastHopCpu:
    """What the last hop reports of its own cgroup (control: lasthop/cpu.json), in every scenario."""

    run_cpu_s: float | None = None  # the start signal to the end of the run


@dataclass
class LastHopCpuAt:
    """The last hop's cgroup CPU total when it saw a capacity trial's request (control: lasthop/cpu-<name>.json)."""

    cpu_total_s: float | None = None


@dataclass
class HarnessCpu:
    """CPU seconds of each harness container from the start signal to the end of the run (the daemon's end
    snapshot, after its stop), each read by the container from its own cgroup. SEC runs in the watcher's."""

    watcher_s: float | None = None
    last_hop_s: float | None = None
    generators_s: dict[str, float | None] = field(default_factory=dict)  # host<i>: seconds
    total_s: float | None = None  # None when any part is unknown
    daemon_s: float | None = None  # the daemon's in the same window (cpu.total_s)


@dataclass
class Harness:
    """What the harness itself cost the run. Results from before it lack the block (all None when read)."""

    watcher: HarnessContainer = field(default_factory=HarnessContainer)
    # Wall time of the reconciliation of the output against the ledgers, after the daemon stopped, and the
    # watcher's CPU time in it: on a shared machine the wall time also counts waiting for a core.
    reconcile_s: float | None = None
    reconcile_cpu_s: float | None = None
    # Every harness container's CPU while it measured (the run's window), and their sum over the daemon's:
    # the harness shares the machine's cores with the daemon it measures.
    cpu: HarnessCpu = field(default_factory=HarnessCpu)
    cpu_share_of_daemon: float | None = None

    def with_cpu(
        self,
        watcher_s: float | None,
        last_hop_s: float | None,
        generators_s: dict[str, float | None],
        daemon_s: float | None,
    ) -> Harness:
        """This block with the containers' CPU in the window, their sum and its share of the daemon's."""
        parts = [watcher_s, last_hop_s, *generators_s.values()]
        total = None if not generators_s or None in parts else sum(p for p in parts if p is not None)
        cpu = HarnessCpu(
            watcher_s=_rounded(watcher_s),
            last_hop_s=_rounded(last_hop_s),
            generators_s={name: _rounded(value) for name, value in sorted(generators_s.items())},
            total_s=_rounded(total),
            daemon_s=_rounded(daemon_s),
        )
        # From the figures as written, so that a reader of the result gets the same share from them.
        return replace(self, cpu=cpu, cpu_share_of_daemon=cpu_share(cpu.total_s, cpu.daemon_s))


def cpu_share(harness_s: float | None, daemon_s: float | None) -> float | None:
    """The harness's CPU over the daemon's in the same window; None where either is unknown or the daemon
    used none."""
    if harness_s is None or daemon_s is None or daemon_s <= 0:
        return None
    return round(harness_s / daemon_s, 6)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


# -- the document -------------------------------------------------------------------------------------------


@dataclass
class ConfigFile:
    name: str  # relative to the directory given, or the file's own name
    bytes: int


@dataclass
class OutputFile:
    """One file a user's config wrote under /var/log: its lines, and the messages of ours in it."""

    file: str  # relative to /var/log
    lines: int  # every line, ours or not (the daemon's own messages too)
    messages: int  # our messages that arrived whole in it, copies within it included
    duplicated: int = 0  # lines beyond the first of a message in this file
    truncated: int = 0
    facilities: list[str] = field(default_factory=list)  # of our messages in it
    severities: list[str] = field(default_factory=list)


@dataclass
class UserConfig:
    """`run --config`: the config (its text unless --config-private) and where its output went."""

    sha256: str  # over every file's name, size and bytes: the report never pools two configs
    main: str
    files: list[ConfigFile]
    text: dict[str, str] | None = None  # file name -> text; None with --config-private
    expect_dropped: str = ""
    output_files: list[OutputFile] = field(default_factory=list)
    copied: int = 0  # messages written to more than one file
    copies: int = 0  # lines beyond each message's first file
    fanout: dict[str, int] = field(default_factory=dict)  # files per message -> messages
    lost_by_priority: dict[str, int] = field(default_factory=dict)  # e.g. "local7.info" -> lost
    not_counted: list[str] = field(default_factory=list)  # files written outside /var/log (docker diff)


@dataclass
class Result:
    run_id: str
    started_utc: str
    finished_utc: str
    verdict: str
    scenario: Scenario
    daemon: Daemon
    limits: Limits
    host: Host
    messages: Messages
    summary: str
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    elapsed_s: float | None = None
    end: End = field(default_factory=End)
    cpu: Cpu = field(default_factory=Cpu)
    memory: Memory = field(default_factory=Memory)
    io: Io = field(default_factory=Io)
    senders: list[Sender] = field(default_factory=list)
    generators: Generators = field(default_factory=Generators)
    sender_bound: SenderBound = field(default_factory=SenderBound)
    throughput: Throughput = field(default_factory=Throughput)
    rate: Rate | None = optional()  # older results lack it
    udp: Udp | None = None  # UDP runs only
    progress: list[list[float]] = field(default_factory=list)
    samples: Samples = field(default_factory=Samples)
    harness: Harness = field(default_factory=Harness)
    matrix: Matrix | None = optional()  # one cell of `python -m syslogbench matrix`
    relay: Relay | None = optional()  # relay scenarios only
    topology: Topology | None = optional()  # older results lack it
    config: UserConfig | None = optional()  # `run --config`: a config of the user's own
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return plain(self)  # type: ignore[return-value]

    def to_json(self, indent: int | None = None) -> str:
        """The document as written: keys sorted, on one line unless indent is given."""
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        return load(cls, upgrade(data))

    def write(self, directory: Path, indent: int | None = 2) -> Path:
        """results/<run_id>.json, written then renamed so that a reader never sees half of it; on failure
        (a full disk) nothing is left behind and OSError says why. The one writer of results, beside read()."""
        path = directory / f"{self.run_id}.json"
        try:
            write_atomic(path, self.to_json(indent) + "\n")
        except OSError:
            for partial in directory.glob(f".{path.name}.tmp*"):  # what write_atomic left behind
                partial.unlink(missing_ok=True)
            raise
        return path

    @property
    def finished(self) -> datetime:
        return datetime.fromisoformat(self.finished_utc)

    @property
    def label(self) -> str:
        """The scenario id, and the variant when the run's load shape was not the scenario's own."""
        variant = self.scenario.variant
        return self.scenario.id if variant == DEFAULT_VARIANT else f"{self.scenario.id}@{variant}"


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """A document of any schema version as the current version has it; the input is left as it was."""
    version = data.get("schema_version") if isinstance(data, dict) else None
    if not isinstance(version, int) or not 1 <= version <= SCHEMA_VERSION:
        raise ResultError(f"result: schema_version {version!r} is not one of 1..{SCHEMA_VERSION}")
    if version == 1:
        scenario = data.get("scenario")
        if not isinstance(scenario, dict):
            raise ResultError("result: missing key 'scenario'")
        shape = (scenario.get("hosts"), scenario.get("senders_per_host"), scenario.get("messages_per_sender"))
        # Version 1 took every load's shape from .env, the seed's unless overridden.
        variant = shape_variant(*shape)  # type: ignore[arg-type]
        data = data | {"schema_version": 2, "scenario": scenario | {"variant": variant}}
    return data


def read(path: Path) -> Result:
    """The result in path; ResultError (naming the file) when it is not one. Result.write() writes it."""
    try:
        return Result.from_dict(read_json(path))
    except ValueError as error:  # json.JSONDecodeError and ResultError alike
        raise ResultError(f"{path.name}: {error}") from error


# -- what a run that measured nothing records ---------------------------------------------------------------


def utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_id(started: datetime, profile: str, suffix: str | None = None) -> str:
    """e.g. 20261124T054846.123Z-rsyslog-8.2504-3f9a: sorts by time, readable, unique below the second.

    Milliseconds and a random suffix, because two runs on one machine (two compose projects writing into one
    results directory) can start in the same second; the ids of one second were 20261124T054846Z-<profile>,
    and such old results still load (the id is a name, never parsed).
    """
    stamp = started.astimezone(UTC)
    tail = secrets.token_hex(2) if suffix is None else suffix
    return f"{stamp.strftime('%Y%m%dT%H%M%S')}.{stamp.microsecond // 1000:03d}Z-{profile}-{tail}"


def nothing_received(cfg: Settings) -> Messages:
    return Messages(expected=cfg.expected_messages, done_expected=cfg.senders)


def rate_of(target: int, senders: int, achieved: list[float]) -> Rate:
    """Target and achieved send rates (msg/s), each sender's achieved rate as its ledger gives it."""
    return Rate(
        target_per_sender=target,
        target_total=target * senders,
        achieved_per_sender=Spread(
            min=min(achieved) if achieved else None,
            median=round(median(achieved), 1) if achieved else None,
            max=max(achieved) if achieved else None,
        ),
        # The senders send side by side: their rates add up to the load the daemon was offered.
        achieved_total=round(sum(achieved), 1) if achieved else None,
    )


def time_line(cpu: Cpu, elapsed: float | None, rss: float | None, rate: float | None) -> str:
    """Shaped like GNU time's default output, which the 2014 figures were, plus msg/s."""

    def num(value: float | None, fmt: str) -> str:
        return "?" if value is None else format(value, fmt)

    # GNU time truncates to hundredths (and whole percent), so 59.999 s is 0:59.99, never 0:60.00.
    hundredths = None if elapsed is None else int(elapsed * 100 + 1e-6)  # 68.24 * 100 is 6823.99...
    clock = "?" if hundredths is None else f"{hundredths // 6000}:{hundredths % 6000 / 100:05.2f}"
    percent = None if cpu.percent is None else int(cpu.percent)
    rss_kb = None if rss is None else rss / 1024
    return (
        f"{num(cpu.user_s, '.2f')}user {num(cpu.system_s, '.2f')}system {clock}elapsed "
        f"{num(percent, 'd')}%CPU (0avgtext+0avgdata {num(rss_kb, '.0f')}maxresident)k "
        f"{num(rate, ',.0f')} msg/s"
    )


def not_applicable(
    cfg: Settings, scenario: ScenarioFile, daemon: Daemon, host: Host, reason: str, when: datetime
) -> Result:
    """A combination the daemon cannot run is a result too: verdict n/a, nothing measured, the reason."""
    limits = Limits.of(cfg, host)
    messages = nothing_received(cfg)
    cpu = Cpu()
    return Result(
        run_id=run_id(when, daemon.profile),
        started_utc=utc(when),
        finished_utc=utc(when),
        verdict="n/a",
        errors=[f"n/a: {reason}"],
        notes=limits.notes(),
        scenario=Scenario.of(cfg, scenario),
        daemon=daemon,
        limits=limits,
        host=host,
        messages=messages,
        rate=rate_of(scenario.rate, cfg.senders, []),
        udp=Udp.of(messages, None) if scenario.transport == "udp" else None,
        summary=time_line(cpu, None, None, None),
    )


def main(argv: list[str]) -> int:
    bad = 0
    for name in argv:
        try:
            read(Path(name))
        except (OSError, ResultError) as error:
            print(f"{name}: {error}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
