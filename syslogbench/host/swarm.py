"""One benchmark run on the Docker Swarm the Docker CLI points at (DOCKER_HOST or a docker context):
`python -m syslogbench run --swarm`, and a capacity search's rig there (`capacity --swarm`).

The node labels are checked first (host/swarmnodes.py), then the stack file (host/stack.py) is deployed
and its tasks watched until the watcher's ends (host/swarmdeploy.py); the result, which the watcher prints
on its output, is read as it runs and written to results/ (host/swarmresult.py); and the stack is removed.
docs/swarm.md has the steps on real hosts.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from syslogbench import contract
from syslogbench.host import (
    benchmark,
    configcheck,
    fits,
    images,
    lock,
    ownconfig,
    stack,
    swarmdeploy,
    swarmnodes,
    swarmresult,
)
from syslogbench.host.benchmark import STARTUP_ALLOWANCE_S
from syslogbench.host.compose import Up, project_name
from syslogbench.host.log import log
from syslogbench.host.runplan import Config, Plan, RunOptions, make
from syslogbench.host.swarmnodes import Node, Placement, SwarmError
from syslogbench.model import result, settings

Show = Callable[[Path], None]


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

    def refuse_unfit(self, chosen: Plan, central_here: bool = False) -> None:
        self.nodes, self.placement = checked(chosen, central_here)

    def run(self, chosen: Plan, results_dir: Path, options: RunOptions) -> int:
        """Deploy, follow, collect, remove: the exit code is the verdict's, as on one host."""
        assert self.placement is not None, "Swarm.refuse_unfit first"
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
        self.refuse_unfit(chosen, central_here=True)
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
    nodes = swarmnodes.swarm_nodes()
    placement = swarmnodes.place(nodes, chosen.cfg.hosts)
    central = placement.central
    if central_here and swarmnodes.local_node() != central.id:
        raise SwarmError(
            "capacity --swarm asks the watcher for each trial with docker exec, on the engine the docker CLI "
            f"points at, which is not the central node {central.hostname}: point DOCKER_HOST at "
            f"{central.hostname} (a manager: docker node promote {central.hostname}), or label the node the "
            "CLI points at central"
        )
    unseen = fits.Disk("the nodes' Docker data roots", None, "each node has its own; not checked from here")
    fits.refuse_unfit(
        chosen.cfg, chosen.scenario, chosen.profile, log, disk=lambda: unseen, files=chosen.user_files
    )
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
        raise ownconfig.UserConfigError(
            f"--config is checked by {profile.daemon} in the image {image} on the engine the docker CLI points "
            "at, which does not have it: load it there as on the nodes (docs/swarm.md), or give --registry"
        )
    return configcheck.daemon_and_listener(
        user, image, profile.profile, chosen.scenario.transport, contract.CENTRAL_PORT
    )


def deploy_and_collect(
    name: str, text: str, chosen: Plan, nodes: list[Node], results_dir: Path, pull: bool, show: Show
) -> int:
    profile, cfg = chosen.profile, chosen.cfg
    results_dir.mkdir(parents=True, exist_ok=True)
    began = datetime.now(UTC)
    log(
        f"{profile.profile}: deploying stack {name}: {cfg.hosts} hosts x {cfg.senders_per_host} senders x {cfg.messages_per_sender:,} messages"
    )
    swarmdeploy.deploy(name, text, pull)
    follower = swarmresult.Follower(name)
    try:
        reasons = swarmdeploy.watch(name, cfg.run_timeout + STARTUP_ALLOWANCE_S)
        written = follower.result() or swarmresult.result_of(name)
        final = swarmdeploy.tasks(name)
    finally:
        follower.stop()
        swarmdeploy.remove(name)
    if written is None:
        said = swarmdeploy.watcher_task(name, final)
        reasons.insert(
            0, f"the watcher wrote no result on its output (docker service logs); its task: {said}"
        )
        path = benchmark.written_from_outside(profile, cfg, chosen.scenario, [], reasons, began, results_dir)
        show(path)
        return contract.EXIT_CODES["error"]
    written = swarmresult.amend(written, nodes, reasons)
    show(written.write(results_dir))
    return contract.EXIT_CODES[written.verdict]


def push(registry: str, names: list[str]) -> None:
    """Tag and push the run's images into the registry the nodes pull from."""
    for name in names:
        local = contract.image_name(name)
        remote = stack.image(name, registry, contract.image_tag())
        log(f"pushing {remote}")
        swarmnodes.docker("tag", local, remote)
        swarmnodes.docker("push", remote, timeout=1800)


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
        swarmdeploy.deploy(
            self.project, self.render({key: env[key] for key in keys if key in env}), self.pull
        )
        reasons = swarmdeploy.watch(self.project, timeout_s)
        said = swarmdeploy.watcher_task(self.project, swarmdeploy.tasks(self.project))
        return Up(0 if not reasons else 1, "; ".join([*reasons, f"the watcher's task: {said}"]))

    def container(self, service: str) -> str:
        """The running container of the service's task on this engine ("" if none runs here yet)."""
        label = f"label=com.docker.swarm.service.name={self.project}_{service}"
        listed = swarmnodes.docker("ps", "-q", "--filter", label, "--filter", "status=running", check=False)
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
        swarmdeploy.remove(self.project)
