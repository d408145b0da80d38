"""The orchestrator of a plan without --swarm: compose on this machine (host/compose.py). It runs a plan's run
(host/benchmark.py measures it), places a capacity search's roles on cores, and brings its rig up; host/swarm.py
is the other one, with the same methods (host/plan.py Orchestrator)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from syslogbench.host import benchmark, images, lock, setup
from syslogbench.host import configrun as userconfig
from syslogbench.host import fits as resources
from syslogbench.host.compose import Compose, project_name
from syslogbench.host.log import log
from syslogbench.host.plan import Plan, RunOptions
from syslogbench.model import capacity, result, settings


@dataclass(frozen=True)
class OneHost:
    """Compose on this machine (host/compose.py): the orchestrator of a plan without --swarm."""

    def check(self, chosen: Plan) -> None:
        resources.check(chosen.cfg, chosen.scenario, chosen.profile, log, files=chosen.user_files)

    def run(self, chosen: Plan, results_dir: Path, options: RunOptions) -> int:
        profile = chosen.profile
        if profile.registry_image and (options.build or not images.image_exists(profile.image)):
            setup.registry_ready(
                profile
            )  # before any container: "needs Docker Hub: ..." rather than a failed build
        project = options.project or project_name()
        env = {**chosen.env, **options.extra_env}
        with (
            userconfig.compose_files(
                chosen.user, profile.profile, chosen.cfg.scenario, options.extra_files
            ) as files,
            lock.project(project),  # a second run on this project is refused here, before anything is built
        ):
            return benchmark.measure(
                chosen, env, results_dir, Compose(profile.profile, project, files), options
            )

    def default_daemon_cores(self) -> int:
        return capacity.default_daemon_cores(os.cpu_count() or 1)

    def search_placement(self, chosen: Plan, daemon_cores: int) -> dict[str, str]:
        """Which cores the daemon and the senders have (one that leaves none: one line); what `run` refuses
        of a load that cannot fit, as far as a search has it: more TCP sessions than the config takes, a
        datagram too large. (A trial's messages are made as they are sent, from one template per priority
        (rig/trials.py templates): no rate needs more REMOTE_MEM.)"""
        cores = capacity.placement(daemon_cores, os.cpu_count() or 1)
        found = [
            resources.connections_problem(chosen.cfg, chosen.scenario, chosen.profile, chosen.user_files),
            resources.datagram_problem(chosen.cfg, chosen.scenario),
        ]
        if problems := [problem for problem in found if problem]:
            raise resources.DoesNotFit(settings.listed("the search cannot run", problems))
        return cores

    @contextlib.contextmanager
    def rig(self, chosen: Plan, project: str, build: bool, extra_files: tuple[Path, ...],
            log: Callable[[str], None]) -> Iterator[Compose]:  # fmt: skip
        service = chosen.profile.profile
        benchmark.images_ready(chosen, build, log)
        with userconfig.compose_files(chosen.user, service, chosen.cfg.scenario, extra_files) as files:
            yield Compose(service, project, files)

    def fingerprint(self, chosen: Plan, env: dict[str, str]) -> result.Fingerprint | None:
        return benchmark.measure_fingerprint(chosen.cfg, env)

    def machine(self, facts: dict, central: dict | None) -> tuple[dict, list[dict] | None]:
        return facts, None
