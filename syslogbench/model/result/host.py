"""The machine the run had: its host, the nodes and network of its topology, and the limits it could give."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from syslogbench.model.result.fingerprint import Fingerprint
from syslogbench.model.result.plain import optional, plain

if TYPE_CHECKING:
    from syslogbench.model.settings import Settings


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
    # The kernel's boot id, its first 8 hex digits: two VMs of one CPU model and kernel build are told apart by
    # it (their cores' speeds differ by 2x: docs/findings/fingerprint-machines.md); a reboot gets a new one.
    # Older results lack it.
    boot: str | None = optional()

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
