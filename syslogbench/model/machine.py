"""The machine a run ran on, from /proc and uname: the result's `host` block.

Stdlib only. The watcher reads it inside its container, the host side for an n/a result: both see the
same kernel, CPUs and memory, since containers share the host's.
"""

from __future__ import annotations

import os
from pathlib import Path

from syslogbench.model.result import Host, Node

UNKNOWN_DOCKER = "unknown (run without the syslogbench command)"
UNKNOWN_HOSTNAME = "unknown"
# The node's own name: `syslogbench run` sets it on one host; a stack file sets it to Swarm's {{.Node.Hostname}}
# (a container's own hostname is its id).
NODE_HOSTNAME_ENV = "NODE_HOSTNAME"


def cgroup_version() -> int:
    return 2 if Path("/sys/fs/cgroup/cgroup.controllers").exists() else 1


def cpu_model(cpuinfo: str) -> str:
    for line in cpuinfo.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def memory_bytes(meminfo: str) -> int:
    words = meminfo.split()
    return int(words[words.index("MemTotal:") + 1]) * 1024


BOOT_ID = Path("/proc/sys/kernel/random/boot_id")  # the host kernel's: containers see the same


def boot(path: Path = BOOT_ID) -> str | None:
    """The kernel's boot id, its first 8 hex digits; None where the kernel gives none."""
    try:
        digits = path.read_text().strip().replace("-", "")[:8]
    except OSError:
        return None
    return digits if len(digits) == 8 and all(c in "0123456789abcdef" for c in digits) else None


def host_facts(cgroup: int | None = None, docker_version: str | None = None) -> Host:
    """This machine; the Docker version comes from the syslogbench command (DOCKER_VERSION) unless given."""
    return Host(
        cpu_model=cpu_model(Path("/proc/cpuinfo").read_text()),
        cores=os.cpu_count() or 1,
        memory_bytes=memory_bytes(Path("/proc/meminfo").read_text()),
        kernel=os.uname().release,
        docker_version=docker_version or os.environ.get("DOCKER_VERSION") or UNKNOWN_DOCKER,
        cgroup_version=cgroup_version() if cgroup is None else cgroup,
        boot=boot(),
    )


def node(services: list[str], host: Host | None = None) -> Node:
    """This machine as one node of a run's topology, running services."""
    facts = host or host_facts()
    return Node(
        hostname=os.environ.get(NODE_HOSTNAME_ENV) or UNKNOWN_HOSTNAME,
        cpu_model=facts.cpu_model,
        cores=facts.cores,
        memory_bytes=facts.memory_bytes,
        kernel=facts.kernel,
        docker_version=facts.docker_version,
        services=services,
    )


def cpu_list(text: str) -> list[int]:
    """The kernel's CPU list syntax ("0-2,5") as numbers; ValueError when garbled."""
    numbers: list[int] = []
    for part in text.strip().split(","):
        first, _, last = part.partition("-")
        low, high = int(first), int(last or first)
        if low > high:
            raise ValueError(f"not a CPU list: {text!r}")
        numbers += range(low, high + 1)
    return numbers
