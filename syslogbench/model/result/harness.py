"""What the harness itself cost the run: each container's memory and CPU, and their share of the daemon's."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from syslogbench.model.result.host import Node
from syslogbench.model.result.plain import optional


@dataclass
class HarnessContainer:
    """One harness container's own cost, from its own cgroup; None where not measured."""

    # The cgroup's peak (v1 memory.max_usage_in_bytes, v2 memory.peak), page cache included, over the
    # container's life: its reconciliation too.
    peak_memory_bytes: int | None = None
    peak_memory_source: str | None = None  # which file it came from, as memory.peak_source
    memory_limit_bytes: int | None = None  # None: unlimited (or unknown)


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
