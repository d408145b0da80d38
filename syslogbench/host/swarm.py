"""One benchmark run on the Docker Swarm the Docker CLI points at (DOCKER_HOST or a docker context):
`python -m syslogbench run --swarm`.

The node labels are checked first, then the stack file (host/stack.py) is deployed, the watcher's output is
followed, and the result, which the watcher prints on its output (no volume of the user's is mounted on a
remote node), is written to results/. The stack is removed, and the command waits until its network is gone,
so that the next deploy does not fail with "network not found". docs/swarm.md has the steps on real hosts.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from syslogbench import contract
from syslogbench.host import benchmark, images, lock, resources, stack, userconfig
from syslogbench.host.benchmark import STARTUP_ALLOWANCE_S
from syslogbench.host.compose import Up, project_name
from syslogbench.host.log import log
from syslogbench.host.plan import Config, Plan, RunOptions, make
from syslogbench.model import result, settings

Show = Callable[[Path], None]

DOCKER_TIMEOUT_S = 60
NETWORK_GONE_S = 120  # `docker stack rm` returns at once; its network goes once every task has ended
POLL_S = 1.0
RESULT_WAIT_S = 15.0  # for the result's last lines to come through the log stream after the task ended
WATCHER_SETTLE_S = 3.0  # from its task's start until the watcher handles SIGTERM (Python's start-up)
WATCHER_GRACE_S = 150  # the watcher's stop_grace_period (120 s) and a little more
# Task states that end a task for good (restart_policy none): a daemon or generator in one of these before
# the watcher's own end stops the run, as compose's --abort-on-container-exit does on one host.
ENDED = {"complete", "failed", "rejected", "shutdown", "orphaned"}
BAD = {"failed", "rejected", "orphaned"}


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
            role=data.get("Spec", {}).get("Labels", {}).get(stack.ROLE_LABEL),
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
    central = [n for n in nodes if n.ready and n.role == stack.CENTRAL_ROLE]
    generators = [n for n in nodes if n.ready and n.role == stack.GENERATOR_ROLE]
    unlabelled = [n.hostname for n in nodes if n.ready and n.role is None]
    add = f"docker node update --label-add {stack.ROLE_LABEL}="
    spare = f" (unlabelled: {', '.join(unlabelled)})" if unlabelled else ""
    if len(central) != 1:
        named = ", ".join(n.hostname for n in central)
        raise SwarmError(
            f"{len(central)} ready nodes carry {stack.ROLE_LABEL}={stack.CENTRAL_ROLE}{f' ({named})' if named else ''}: "
            f"exactly one must, for the watcher, the daemon and the last hop, which share volumes: {add}"
            f"{stack.CENTRAL_ROLE} NODE{spare}"
        )
    if not generators:
        raise SwarmError(
            f"no ready node carries {stack.ROLE_LABEL}={stack.GENERATOR_ROLE}: label the nodes for the "
            f"{hosts} generators: {add}{stack.GENERATOR_ROLE} NODE{spare}"
        )
    notices = []
    if len(generators) < hosts:
        notices.append(
            f"{len(generators)} generator nodes for {hosts} hosts: some nodes run more than one generator"
        )
    return Placement(central[0], generators, notices)


def push(registry: str, names: list[str]) -> None:
    """Tag and push the run's images into the registry the nodes pull from."""
    for name in names:
        local = contract.image_name(name)
        remote = stack.image(name, registry, contract.image_tag())
        log(f"pushing {remote}")
        docker("tag", local, remote)
        docker("push", remote, timeout=1800)


def stack_network(name: str) -> str:
    return f"{name}_{stack.NETWORK}"


def wait_gone(name: str, timeout: float = NETWORK_GONE_S) -> None:
    """Until the stack's network is gone: a deploy right after `docker stack rm` fails while it is there."""
    deadline = time.monotonic() + timeout
    while docker("network", "ls", "-q", "--filter", f"name=^{stack_network(name)}$", check=False).strip():
        if time.monotonic() > deadline:
            raise SwarmError(
                f"the network {stack_network(name)} was still there {timeout:.0f} s after docker stack rm"
            )
        time.sleep(POLL_S)


def remove(name: str) -> None:
    docker("stack", "rm", name, check=False)
    wait_gone(name)


def tasks(name: str) -> list[dict]:
    """Every task of the stack: its service, node, current state and error."""
    text = docker("stack", "ps", name, "--no-trunc", "--format", "{{json .}}", check=False)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def state_of(task: dict) -> str:
    return (task.get("CurrentState") or "").split(" ")[0].lower()


def task_problems(name: str, entries: list[dict]) -> list[str]:
    """Tasks other than the watcher's that ended badly, as `docker stack ps` tells it."""
    problems = []
    for task in entries:
        service = task.get("Name", "").removeprefix(f"{name}_")
        if service.startswith("watcher") or state_of(task) not in BAD:
            continue
        problems.append(f"{service} on {task.get('Node')}: {task.get('CurrentState')}: {task.get('Error')}")
    return problems


def watcher_task(name: str, entries: list[dict]) -> str:
    """How the watcher's task ended, e.g. "Rejected 5 seconds ago on node1: No such image: ..."."""
    for task in entries:
        if task.get("Name", "").startswith(f"{name}_watcher"):
            error = f": {task['Error']}" if task.get("Error") else ""
            return f"{task.get('CurrentState')} on {task.get('Node') or 'no node'}{error}"
    return "none was found"


def watcher_listed(name: str, entries: list[dict]) -> bool:
    return any(t.get("Name", "").startswith(f"{name}_watcher") for t in entries)


def watcher_running(name: str, entries: list[dict]) -> bool:
    return any(t.get("Name", "").startswith(f"{name}_watcher") and state_of(t) == "running" for t in entries)


def watcher_ended(name: str, entries: list[dict]) -> bool:
    return any(t.get("Name", "").startswith(f"{name}_watcher") and state_of(t) in ENDED for t in entries)


class Follower:
    """The watcher's output as it runs: its progress lines shown, every line kept, for the result's lines.

    The result is read from here rather than from `docker service logs` afterwards, because a watcher
    stopped by scaling its service to 0 leaves no task, and so no logs, behind."""

    def __init__(self, name: str) -> None:
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            ["docker", "service", "logs", "--follow", "--raw", f"{name}_watcher"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self.read, daemon=True).start()

    def read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            if not line.startswith(contract.RESULT_LINE_PREFIX):
                print(line, end="", flush=True)

    def result(self, wait: float = RESULT_WAIT_S) -> result.Result | None:
        """The result once all its lines are in (they may trail the task's end a little)."""
        deadline = time.monotonic() + wait
        while (data := decode_result(list(self.lines))) is None and time.monotonic() < deadline:
            time.sleep(0.2)
        return data

    def stop(self) -> None:
        self.process.terminate()


def result_of(name: str) -> result.Result | None:
    """The result the watcher printed: gzip'd JSON in base64, cut into numbered lines."""
    text = docker("service", "logs", "--raw", f"{name}_watcher", check=False, timeout=300)
    return decode_result(text.splitlines())


def decode_result(lines: list[str]) -> result.Result | None:
    """The result from the watcher's numbered lines; None until all are in, ResultError if it is not one."""
    parts: dict[int, str] = {}
    total = 0
    for line in lines:
        words = line.split()
        if len(words) == 3 and words[0] == contract.RESULT_LINE_PREFIX:
            index, _, count = words[1].partition("/")
            parts[int(index)], total = words[2], int(count)
    if not total or len(parts) != total:
        return None
    packed = "".join(parts[i] for i in range(1, total + 1))
    return result.Result.from_dict(json.loads(gzip.decompress(base64.b64decode(packed))))


def amend(written: result.Result, nodes: list[Node], reasons: list[str]) -> result.Result:
    """The host's part: each node's Docker version (the engine's own), and what ended the run early."""
    engines = {node.hostname: node.engine for node in nodes}
    for node in written.topology.nodes if written.topology else []:
        node.docker_version = engines.get(node.hostname, node.docker_version)
    if reasons:
        written = replace(written, verdict="error", errors=[*reasons, *written.errors])
    return written


@dataclass
class Swarm:
    """The swarm the Docker CLI points at: the orchestrator of a plan with --swarm. registry: where the
    images are pushed for the nodes to pull (None: they are on the nodes already). check finds the nodes
    and where the services go, once."""

    registry: str | None = None
    nodes: list[Node] = field(default_factory=list)
    placement: Placement | None = None

    def make_plan(self, profile_name: str, overrides: dict[str, str], config: Config | None = None) -> Plan:
        return make(profile_name, overrides, self, config)

    def check(self, chosen: Plan, central_here: bool = False) -> None:
        self.nodes, self.placement = checked(chosen, central_here)

    def run(self, chosen: Plan, results_dir: Path, options: RunOptions) -> int:
        """Deploy, follow, collect, remove: the exit code is the verdict's, as on one host."""
        assert self.placement is not None, "Swarm.check first"
        name = options.project or project_name()
        with lock.project(name):
            self.images(chosen, log)
            text = rendered(chosen, self.placement, self.registry)
            return deploy_and_collect(name, text, chosen, self.nodes, results_dir, bool(self.registry),
                                      options.show)  # fmt: skip

    def images(self, chosen: Plan, log: Callable[[str], None]) -> None:
        """The run's images pushed where a registry is given, and a user's config checked by the daemon."""
        if self.registry:
            push(self.registry, ["watcher", "generator", chosen.profile.profile])
        else:
            log(
                f"no --registry: the images {contract.image_name('...')} must be on the nodes already "
                "(docs/swarm.md: docker save | docker load)"
            )
        if chosen.user is not None:
            log(config_checked(chosen, self.registry))

    def default_daemon_cores(self) -> int:
        return 0  # the daemon has a node of its own

    def search_placement(self, chosen: Plan, daemon_cores: int) -> dict[str, str]:
        if daemon_cores:
            raise settings.SettingsError(
                f"DAEMON_CORES={daemon_cores} is for one host: on a swarm the daemon has the central node and "
                "the senders their own nodes; leave it out"
            )
        self.check(chosen, central_here=True)
        assert self.placement is not None
        return {"daemon": f"node {self.placement.central.hostname}",
                "senders": "nodes " + ", ".join(n.hostname for n in self.placement.generators)}  # fmt: skip

    @contextlib.contextmanager
    def running_stack(self, chosen: Plan, project: str, build: bool, extra_files: tuple[Path, ...],
                      log: Callable[[str], None]) -> Iterator[Stack]:  # fmt: skip
        """The rig as a stack, as run --swarm deploys it (build and extra_files are one host's)."""
        placement = self.placement
        assert placement is not None, "Swarm.search_placement first"
        self.images(chosen, log)

        def render(capacity_env: dict[str, str]) -> str:
            return rendered(chosen, placement, self.registry, capacity_env)

        yield Stack(project, render, bool(self.registry))

    def fingerprint(self, chosen: Plan, env: dict[str, str]) -> result.Fingerprint | None:
        return None  # the watcher measures the central node itself and sends it with the first trial

    def machine(self, facts: dict, central: dict | None) -> tuple[dict, list[dict] | None]:
        """The central node's facts, not this machine's."""
        assert self.placement is not None
        found = {**(central or {}), "docker_version": self.placement.central.engine}
        found.pop(contract.UDP_BUFFERS_KEY, None)  # udp_buffers holds them
        return found, [asdict(node) for node in self.nodes]


def checked(chosen: Plan, central_here: bool = False) -> tuple[list[Node], Placement]:
    """The nodes and where the services go, and the load's own limits as on one host (one line each, before
    anything is deployed); disk space is each node's, which this machine cannot see. central_here: the
    engine the docker CLI points at must be the central node's (a capacity search's trials go by docker exec)."""
    nodes = swarm_nodes()
    placement = place(nodes, chosen.cfg.hosts)
    central = placement.central
    if central_here and local_node() != central.id:
        raise SwarmError(
            "capacity --swarm asks the watcher for each trial with docker exec, on the engine the docker CLI "
            f"points at, which is not the central node {central.hostname}: point DOCKER_HOST at "
            f"{central.hostname} (a manager: docker node promote {central.hostname}), or label the node the "
            "CLI points at central"
        )
    unseen = resources.Disk(
        "the nodes' Docker data roots", None, "each node has its own; not checked from here"
    )
    resources.check(chosen.cfg, chosen.scenario, chosen.profile, log, disk=lambda: unseen,
                    files=chosen.user_files)  # fmt: skip
    for notice in placement.notices:
        log(f"notice: {notice}")
    return nodes, placement


def rendered(
    chosen: Plan, placement: Placement, registry: str | None, capacity_env: dict[str, str] | None = None
) -> str:
    """The stack file for these nodes; capacity_env: more of the watcher's environment (a capacity search's)."""
    return stack.plan_text(
        chosen,
        registry=registry,
        docker_version=placement.central.engine,
        generator_nodes=len(placement.generators),
        central_cores=placement.central.cores,
        capacity_env=capacity_env,
    )


def config_checked(chosen: Plan, registry: str | None) -> str:
    """The daemon's own check of a --config, in the profile's image on the engine the docker CLI points at
    (the files go over standard input, so that engine may be a node of the swarm)."""
    profile, user = chosen.profile, chosen.user
    assert user is not None
    image = stack.image(profile.profile, registry, contract.image_tag())
    if not registry and not images.image_exists(image):
        raise userconfig.UserConfigError(
            f"--config is checked by {profile.daemon} in the image {image} on the engine the docker CLI points "
            "at, which does not have it: load it there as on the nodes (docs/swarm.md), or give --registry"
        )
    return userconfig.check(user, image, profile.profile, chosen.scenario.transport, contract.CENTRAL_PORT)


def deploy_and_collect(
    name: str, text: str, chosen: Plan, nodes: list[Node], results_dir: Path, pull: bool, show: Show
) -> int:
    profile, cfg = chosen.profile, chosen.cfg
    results_dir.mkdir(parents=True, exist_ok=True)
    began = datetime.now(UTC)
    log(
        f"{profile.profile}: deploying stack {name}: {cfg.hosts} hosts x {cfg.senders_per_host} senders x {cfg.messages_per_sender:,} messages"
    )
    deploy(name, text, pull)
    follower = Follower(name)
    try:
        reasons = watch(name, cfg.run_timeout + STARTUP_ALLOWANCE_S)
        written = follower.result() or result_of(name)
        final = tasks(name)
    finally:
        follower.stop()
        remove(name)
    if written is None:
        said = watcher_task(name, final)
        reasons.insert(
            0, f"the watcher wrote no result on its output (docker service logs); its task: {said}"
        )
        path = benchmark.written_from_outside(profile, cfg, chosen.scenario, [], reasons, began, results_dir)
        show(path)
        return contract.EXIT_CODES["error"]
    written = amend(written, nodes, reasons)
    show(written.write(results_dir))
    return contract.EXIT_CODES[written.verdict]


def deploy(name: str, text: str, pull: bool) -> None:
    """`docker stack deploy` of the stack file text, after removing what an interrupted run of this name
    left. pull: the nodes pull the images from a registry; without one they have them already."""
    remove(name)
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix=f"{name}-") as file:
        file.write(text)
        file.flush()
        resolve = "always" if pull else "never"
        command = ["docker", "stack", "deploy", "--resolve-image", resolve, "-c", file.name, name]
        said = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if said.returncode != 0:
        raise subprocess.CalledProcessError(said.returncode, command, said.stdout, said.stderr)
    for line in (said.stdout + said.stderr).splitlines():
        if "ignor" in line.lower() or "unsupported" in line.lower():  # the stack file is meant to have none
            log(f"notice: docker stack deploy: {line}")


def watch(name: str, timeout: float) -> list[str]:
    """Until the watcher's task ends. A daemon or generator task that fails first stops the watcher (scaled
    to 0: SIGTERM, and its stop grace to write an error result, after which its task is gone), as compose
    stops the rest on one host."""
    reasons: list[str] = []
    deadline, stopped_at, running_since = time.monotonic() + timeout, None, None
    while True:
        entries = tasks(name)
        if watcher_ended(name, entries) or (stopped_at is not None and not watcher_listed(name, entries)):
            return reasons
        if running_since is None and watcher_running(name, entries):
            running_since = time.monotonic()
        # A watcher stopped before it runs (and arms its SIGTERM handler) would leave no result at all.
        settled = running_since is not None and time.monotonic() - running_since > WATCHER_SETTLE_S
        if stopped_at is None and settled and (problems := task_problems(name, entries)):
            reasons.append("tasks that ended before the watcher (docker stack ps): " + "; ".join(problems))
            stopped_at = stop_watcher(name, reasons[-1])
        elif stopped_at is None and time.monotonic() > deadline:
            reasons.insert(0, f"the stack did not finish within {timeout:.0f} s")
            stopped_at = stop_watcher(name, reasons[0])
        elif stopped_at is not None and time.monotonic() > stopped_at + WATCHER_GRACE_S:
            reasons.append(f"the watcher did not end within {WATCHER_GRACE_S} s of its stop")
            return reasons
        time.sleep(POLL_S)


def stop_watcher(name: str, reason: str) -> float:
    """SIGTERM to the watcher, the way Swarm has: its service scaled to 0. Returns when."""
    log(f"{reason}: stopping the watcher, which writes what it has")
    docker("service", "scale", "--detach", f"{name}_watcher=0", check=False)
    return time.monotonic()


def local_node() -> str:
    """The swarm node id of the engine the docker CLI points at ("" when it is in no swarm)."""
    return docker("info", "--format", "{{.Swarm.NodeID}}", check=False).strip()


@dataclass
class Stack:
    """A capacity search's rig on the swarm, driven as host/capacity/command.py drives compose's (host/compose.py):
    up deploys the stack and returns once the watcher's task has ended, exec runs a command in a service's
    container, down removes the stack. The trials go to the watcher by `docker exec` on the engine the docker
    CLI points at, which must be the central node's (Swarm.search_placement checks it before anything is deployed)."""

    project: str
    render: Callable[[dict[str, str]], str]  # the watcher's capacity environment -> the stack file
    pull: bool

    def up(self, env: Mapping[str, str], timeout_s: float) -> Up:
        keys = contract.CapacityEnv.NAMES
        deploy(self.project, self.render({key: env[key] for key in keys if key in env}), self.pull)
        reasons = watch(self.project, timeout_s)
        said = watcher_task(self.project, tasks(self.project))
        return Up(0 if not reasons else 1, "; ".join([*reasons, f"the watcher's task: {said}"]))

    def container(self, service: str) -> str:
        """The running container of the service's task on this engine ("" if none runs here yet)."""
        label = f"label=com.docker.swarm.service.name={self.project}_{service}"
        listed = docker("ps", "-q", "--filter", label, "--filter", "status=running", check=False)
        return listed.split()[0] if listed.split() else ""

    def exec(
        self, env: Mapping[str, str], service: str, args: list[str], timeout_s: float
    ) -> subprocess.CompletedProcess:
        found = self.container(service)
        if not found:  # not started yet: no answer, which the search asks again for
            return subprocess.CompletedProcess(args, 1, "", f"no running {service} container here yet")
        command = ["docker", "exec", found, *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)

    def down(self, env: Mapping[str, str]) -> None:
        remove(self.project)
