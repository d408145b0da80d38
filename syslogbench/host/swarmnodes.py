"""The swarm the Docker CLI points at (DOCKER_HOST or a docker context): its nodes as `docker node inspect`
describes them, and where a run's services go by the nodes' syslogbench.role labels (one central node, the
generator nodes), or the one line that says what to label. The docker CLI call every swarm module makes is
here too.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field

from syslogbench import contract
from syslogbench.host import images

DOCKER_TIMEOUT_S = 60


class SwarmError(images.SetupError):
    """The swarm is not ready for a run (the one line says what to change): exit code 2, nothing deployed."""


def docker(*args: str, timeout: float = DOCKER_TIMEOUT_S, check: bool = True) -> str:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, ["docker", *args], done.stdout, done.stderr)
    return done.stdout


@dataclass(frozen=True)
class Node:
    """A swarm node as `docker node inspect` describes it."""

    id: str
    hostname: str
    role: str | None  # the syslogbench.role label
    ready: bool
    cores: int
    memory_bytes: int
    engine: str

    @classmethod
    def of(cls, data: dict) -> Node:
        described = data.get("Description", {})
        resources = described.get("Resources", {})
        return cls(
            id=data["ID"],
            hostname=described.get("Hostname", data["ID"]),
            role=data.get("Spec", {}).get("Labels", {}).get(contract.ROLE_LABEL),
            ready=data.get("Status", {}).get("State") == "ready"
            and data.get("Spec", {}).get("Availability") == "active",
            cores=max(1, int(resources.get("NanoCPUs", 1e9) // 1e9)),
            memory_bytes=int(resources.get("MemoryBytes", 0)),
            engine=described.get("Engine", {}).get("EngineVersion", "unknown"),
        )


def swarm_nodes() -> list[Node]:
    done = subprocess.run(
        ["docker", "node", "ls", "-q"], capture_output=True, text=True, timeout=DOCKER_TIMEOUT_S
    )
    if done.returncode != 0:
        raise SwarmError(
            f"the Docker CLI does not point at a swarm manager ({done.stderr.strip()}): set DOCKER_HOST or "
            "`docker context use` to a manager of the swarm (docs/swarm.md)"
        )
    return [Node.of(entry) for entry in json.loads(docker("node", "inspect", *done.stdout.split()))]


@dataclass
class Placement:
    central: Node
    generators: list[Node]
    notices: list[str] = field(default_factory=list)


def place(nodes: list[Node], hosts: int) -> Placement:
    """The central node and the generator nodes from the labels, or the one line that says what to label."""
    central = [n for n in nodes if n.ready and n.role == contract.CENTRAL_ROLE]
    generators = [n for n in nodes if n.ready and n.role == contract.GENERATOR_ROLE]
    unlabelled = [n.hostname for n in nodes if n.ready and n.role is None]
    add = f"docker node update --label-add {contract.ROLE_LABEL}="
    spare = f" (unlabelled: {', '.join(unlabelled)})" if unlabelled else ""
    if len(central) != 1:
        named = ", ".join(n.hostname for n in central)
        raise SwarmError(
            f"{len(central)} ready nodes carry {contract.ROLE_LABEL}={contract.CENTRAL_ROLE}{f' ({named})' if named else ''}: "
            f"exactly one must, for the watcher, the daemon and the last hop, which share volumes: {add}"
            f"{contract.CENTRAL_ROLE} NODE{spare}"
        )
    if not generators:
        raise SwarmError(
            f"no ready node carries {contract.ROLE_LABEL}={contract.GENERATOR_ROLE}: label the nodes for the "
            f"{hosts} generators: {add}{contract.GENERATOR_ROLE} NODE{spare}"
        )
    notices = []
    if len(generators) < hosts:
        notices.append(
            f"{len(generators)} generator nodes for {hosts} hosts: some nodes run more than one generator"
        )
    return Placement(central[0], generators, notices)


def local_node() -> str:
    """The swarm node id of the engine the docker CLI points at ("" when it is in no swarm)."""
    return docker("info", "--format", "{{.Swarm.NodeID}}", check=False).strip()
