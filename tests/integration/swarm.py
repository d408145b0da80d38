"""A three-node Docker Swarm of Docker-in-Docker nodes on this machine, for the Swarm integration test.

Each node is a container of the project's own bookworm base with Debian's docker.io (tests/integration/swarm/
Dockerfile), running its own dockerd with the storage driver it picks (overlay2 on the node's volume; vfs
where the machine's volumes cannot hold overlayfs). node1 is the manager, labelled
syslogbench.role=central; node2 and node3 are workers labelled generator. Nothing is pulled: the project's
images are moved in with `docker save | docker load`. Every container, network and volume carries the test
project's name (TEST_PROJECT) and is removed at the end, also after a failure.

A plain fixture rather than pytest-docker: the nodes are not compose services of a file (each one's dockerd
socket, swarm join and labels come after it starts), and the shared virtualenv is not changed for one test.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from syslogbench.contract import image_name

HERE = Path(__file__).parent / "swarm"
NODE_IMAGE = image_name("swarm-node")
READY_S = 90  # a node's dockerd starts in a few seconds; a busy machine stretches that
# The node's capabilities. --privileged is refused on these machines: the host's bounding set lacks
# CAP_SYS_RESOURCE, and Docker's privileged mode asks for every capability. What dockerd inside needs:
#   --cap-add ALL --cap-drop SYS_RESOURCE: the inner dockerd and runc mount (SYS_ADMIN), set up networks,
#     iptables and VXLAN for the overlay (NET_ADMIN, NET_RAW), change owners and modes of layer files (CHOWN,
#     FOWNER, DAC_OVERRIDE, MKNOD), and hand capabilities to the inner containers (SETPCAP, SETUID/SETGID);
#     every one the host can give, less the one it cannot.
#   seccomp=unconfined: Docker's default profile refuses mount, unshare and setns, which create the inner
#     containers.
#   apparmor=unconfined: docker-default forbids mounts and writes to /proc/sys, which dockerd makes.
#   /sys/fs/cgroup read-write: the inner dockerd creates its containers' cgroups there ("mkdir
#     /sys/fs/cgroup/cpuset/docker: read-only file system" without it); they become siblings of this
#     machine's containers, so the limits of the stack file apply to the inner tasks as on a real host.
NODE_FLAGS = [
    "--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE",
    "--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
    "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw",
]  # fmt: skip


class Unavailable(RuntimeError):
    """This machine cannot run Docker-in-Docker nodes (the reason): the test skips."""


def docker(*args: str, check: bool = True, timeout: float = 120, **kwargs: object) -> str:
    done = subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=timeout, check=False, **kwargs
    )
    if check and done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, ["docker", *args], done.stdout, done.stderr)
    return done.stdout.strip()


@dataclass
class Swarm:
    prefix: str  # the test project: every name starts with it
    nodes: list[str] = field(default_factory=list)
    sockets: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="syslogbench-swarm-")))

    @property
    def network(self) -> str:
        return f"{self.prefix}-nodes"

    def volume(self, node: str) -> str:
        return f"{node}-docker"

    def manager_host(self) -> str:
        """DOCKER_HOST for the manager's dockerd, through a socket in a directory of this machine (no TCP port)."""
        return f"unix://{self.sockets / 'node1' / 'docker.sock'}"

    def node_cli(self, node: str, *args: str, timeout: float = 120) -> str:
        return docker("exec", node, "docker", *args, timeout=timeout)

    def build_node_image(self) -> None:
        docker("build", "-q", "-t", NODE_IMAGE, str(HERE), timeout=600)

    def start(self, count: int = 3) -> None:
        docker("network", "create", "--label", f"syslogbench.test={self.prefix}", self.network)
        for number in range(1, count + 1):
            self.start_node(f"{self.prefix}-node{number}", number)
        for node in self.nodes:
            self.wait_ready(node)

    def start_node(self, node: str, number: int) -> None:
        sockets = self.sockets / f"node{number}"
        sockets.mkdir(parents=True)
        self.nodes.append(node)
        try:
            docker(
                "run", "-d", "--name", node, "--hostname", f"node{number}", "--network", self.network,
                *NODE_FLAGS, "-v", f"{self.volume(node)}:/var/lib/docker", "-v", f"{sockets}:/run/node",
                # No --storage-driver: dockerd's own choice, overlay2 on the node's volume here, loaded
                # three images in 28 s where vfs took 72 s, and stored them in 0.9 GB where vfs copied
                # every layer into 6.9 GB (52 s to delete). vfs only where overlayfs cannot be had.
                NODE_IMAGE, "dockerd",
                "--host=unix:///var/run/docker.sock", "--host=unix:///run/node/docker.sock",
            )  # fmt: skip
        except subprocess.CalledProcessError as error:
            raise Unavailable(f"cannot start a Docker-in-Docker node: {error.stderr.strip()}") from error

    def wait_ready(self, node: str) -> None:
        deadline = time.monotonic() + READY_S
        while docker("exec", node, "docker", "info", check=False, timeout=30) == "":
            if time.monotonic() > deadline:
                tail = docker("logs", "--tail", "5", node, check=False, stderr=subprocess.STDOUT)
                raise Unavailable(f"the dockerd in {node} did not start within {READY_S} s: {tail}")
            time.sleep(1)

    def address(self, node: str) -> str:
        template = f"{{{{(index .NetworkSettings.Networks {self.network!r}).IPAddress}}}}".replace("'", '"')
        return docker("inspect", "-f", template, node)

    def form(self) -> None:
        """swarm init on node1, join the others, label them."""
        manager = self.nodes[0]
        ip = self.address(manager)
        self.node_cli(manager, "swarm", "init", "--advertise-addr", ip)
        token = self.node_cli(manager, "swarm", "join-token", "-q", "worker")
        for node in self.nodes[1:]:
            self.node_cli(node, "swarm", "join", "--token", token, f"{ip}:2377")
        roles = {"node1": "central", **{f"node{n}": "generator" for n in range(2, len(self.nodes) + 1)}}
        for hostname, role in roles.items():
            self.node_cli(manager, "node", "update", "--label-add", f"syslogbench.role={role}", hostname)

    def load(self, node: str, images: list[str]) -> None:
        """docker save here | docker load in the node: no registry."""
        save = subprocess.Popen(["docker", "save", *images], stdout=subprocess.PIPE)
        try:
            docker("exec", "-i", node, "docker", "load", "-q", stdin=save.stdout, timeout=900)
        finally:
            assert save.stdout is not None
            save.stdout.close()
            save.wait()

    def remove_node(self, node: str) -> None:
        docker("rm", "-f", "-v", node, check=False, timeout=300)
        docker("volume", "rm", "-f", self.volume(node), check=False)

    def remove(self, count: int = 3) -> None:
        """Everything this swarm made, whatever state it is in (or an earlier session's of the same names)."""
        nodes = [f"{self.prefix}-node{number}" for number in range(1, count + 1)]
        with ThreadPoolExecutor(len(nodes)) as pool:  # each node's store is deleted file by file: at once
            list(pool.map(self.remove_node, nodes))
        docker("network", "rm", self.network, check=False)
        with contextlib.suppress(OSError):
            shutil.rmtree(self.sockets)
