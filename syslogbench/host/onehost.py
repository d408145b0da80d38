"""The orchestrator of a plan without --swarm: compose on this machine (host/compose.py). It runs a plan's run
(images built, compose up through lifecycle.staged, the result shown), places a capacity search's roles on
cores, and brings its stack up; host/swarm.py is the other one, with the same methods (host/runplan.py
Orchestrator)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from syslogbench import contract
from syslogbench.contract import EXIT_CODES
from syslogbench.host import benchmark, configcheck, configrun, environment, events, fits, images, lock, setup
from syslogbench.host.benchmark import STARTUP_ALLOWANCE_S
from syslogbench.host.compose import Compose, ContainerState, ended_before_the_watcher, project_name
from syslogbench.host.lifecycle import RunOptions, staged
from syslogbench.host.log import log
from syslogbench.host.runplan import Config, Plan, make
from syslogbench.model import capacity, result, settings

INTERRUPTED = 130  # compose's own code when Ctrl-C reached it (128 + SIGINT), not a run's outcome


@dataclass(frozen=True)
class OneHost:
    """Compose on this machine (host/compose.py): the orchestrator of a plan without --swarm."""

    def make_plan(self, profile_name: str, overrides: dict[str, str], config: Config | None = None) -> Plan:
        return make(profile_name, overrides, self, config)

    def refuse_unfit(self, chosen: Plan) -> None:
        fits.refuse_unfit(chosen.cfg, chosen.scenario, chosen.profile, log, files=chosen.user_files)

    def run(self, chosen: Plan, results_dir: Path, options: RunOptions) -> int:
        profile = chosen.profile
        if profile.registry_image and (options.build or not images.image_exists(profile.image)):
            # before any container: "needs Docker Hub: ..." rather than a failed build
            setup.registry_ready(profile)
        project = options.project or project_name()
        env = {**chosen.env, **options.extra_env}
        with (
            configrun.compose_files(
                chosen.user, profile.profile, chosen.cfg.scenario, options.extra_files
            ) as files,
            lock.project(project),  # a second run on this project is refused here, before anything is built
        ):
            return compose_run(chosen, env, results_dir, Compose(profile.profile, project, files), options)

    def images_ready(self, chosen: Plan, build: bool, log: Callable[[str], None]) -> None:
        images_ready(chosen, build, log)

    def default_daemon_cores(self) -> int:
        return capacity.default_daemon_cores(os.cpu_count() or 1)

    def search_placement(self, chosen: Plan, daemon_cores: int) -> dict[str, str]:
        """Which cores the daemon and the senders have (one that leaves none: one line); what `run` refuses
        of a load that cannot fit, as far as a search has it: more TCP sessions than the config takes, a
        datagram too large. (A trial's messages are made as they are sent, from one template per priority
        (rig/trials.py templates): no rate needs more REMOTE_MEM.)"""
        cores = capacity.placement(daemon_cores, os.cpu_count() or 1)
        found = [
            fits.connections_problem(chosen.cfg, chosen.scenario, chosen.profile, chosen.user_files),
            fits.datagram_problem(chosen.cfg, chosen.scenario),
        ]
        if problems := [problem for problem in found if problem]:
            raise fits.DoesNotFit(settings.listed("the search cannot run", problems))
        return cores

    @contextlib.contextmanager
    def running_stack(self, chosen: Plan, project: str, build: bool, extra_files: tuple[Path, ...],
                      log: Callable[[str], None]) -> Iterator[Compose]:  # fmt: skip
        service = chosen.profile.profile
        self.images_ready(chosen, build, log)
        with configrun.compose_files(chosen.user, service, chosen.cfg.scenario, extra_files) as files:
            yield Compose(service, project, files)

    def fingerprint(self, chosen: Plan, env: dict[str, str]) -> result.Fingerprint | None:
        return benchmark.measure_fingerprint(chosen.cfg, env)

    def machine(self, facts: dict, central: dict | None) -> tuple[dict, list[dict] | None]:
        return facts, None


def compose_run(
    chosen: Plan, env: dict[str, str], results_dir: Path, runner: Compose, options: RunOptions
) -> int:
    """Build, compose up, and show the result this run wrote (the project's lock is held)."""
    profile, cfg, user = chosen.profile, chosen.cfg, chosen.user
    results_dir.mkdir(parents=True, exist_ok=True)
    for notice in environment.host_notices(cfg):
        log(f"notice: {notice}")
    images_ready(chosen, options.build, log)
    log(
        f"{profile.profile}: scenario {cfg.scenario} ({cfg.variant}), {cfg.hosts} hosts x "
        f"{cfg.senders_per_host} senders x {cfg.messages_per_sender:,} messages"
    )
    containers: list[ContainerState] = []
    seen: list[events.Event] = []
    outside: list[str] = []  # --config: files the daemon wrote outside /var/log
    # Whatever ends compose, even Ctrl-C, the result it left goes where results are (staged's clean-up).
    with staged(runner, env, results_dir, "run", partial(chosen.on.fingerprint, chosen)) as stage:
        recorder = events.Recorder(runner.project).start()
        try:
            up = stage.up(cfg.run_timeout + STARTUP_ALLOWANCE_S)
            seen = recorder.stop()
            containers = runner.states(env)  # how each ended, before down removes them
            outside = configrun.daemon_writes(user, containers, profile.profile) if user else []
        finally:
            recorder.stop()
    new, found, began = stage.kept, stage.fingerprint, stage.began
    if up.code == INTERRUPTED:  # Ctrl-C reached compose first: stop here too
        raise KeyboardInterrupt
    reasons = container_reasons(containers) + events.reasons(seen, recorder.began)
    if up.timed_out:
        # The watcher ends a run at RUN_TIMEOUT with a "timeout" result of its own; compose still running
        # long after that means the harness itself hung, so nothing was measured: "error", not "timeout".
        log("compose did not finish in time: every container was stopped")
        reasons.insert(0, f"compose did not finish within {cfg.run_timeout + STARTUP_ALLOWANCE_S} s")
    show = options.show
    if not new:
        path = benchmark.written_from_outside(
            profile, cfg, chosen.scenario, containers, reasons, began, results_dir, found
        )
        log(f"the watcher wrote no result: this one, written from outside, says why: {path}")
        show(path)
        return EXIT_CODES["error"]
    path = new[-1]
    if user is not None:
        configrun.amend(path, outside)
    if reasons:  # a container ended badly before the watcher did: the run could not be measured
        add_reasons(path, reasons)
    show(path)
    written = result.read(path)
    if written.daemon.profile not in ("unknown", profile.profile):
        log(
            f"error: the image for {profile.profile} ran {written.daemon.profile}: rebuild it with `python -m syslogbench setup`"
        )
        return EXIT_CODES["error"]
    # The result's verdict decides, never compose's code: compose gives 1 of its own when it gives up while
    # starting the services (a dependency that stopped), whatever the watcher wrote.
    if up.code != EXIT_CODES[written.verdict]:
        log(
            f"notice: compose exited with {up.code}; the result's verdict {written.verdict} gives the exit code"
        )
    return EXIT_CODES[written.verdict]


def images_ready(chosen: Plan, build: bool, log: Callable[[str], None]) -> None:
    """The profile's image built (cached builds take seconds, and a stale image would measure old code), and
    a user's config checked by the daemon in it, before any container of the run."""
    if build:
        setup.setup([chosen.profile.profile])
    if chosen.user is not None:
        port, transport = contract.CENTRAL_PORT, chosen.scenario.transport
        log(
            configcheck.daemon_and_listener(
                chosen.user, chosen.profile.image, chosen.profile.profile, transport, port
            )
        )


def container_reasons(containers: list[ContainerState]) -> list[str]:
    """What the engine says ended the run: the containers that ended badly before the watcher, first first
    (compose then stopped the others)."""
    early = ended_before_the_watcher(containers)
    if not early:
        return []
    return [
        "containers that ended before the watcher (docker inspect): " + "; ".join(c.describe() for c in early)
    ]


def add_reasons(path: Path, reasons: list[str]) -> None:
    """The watcher's result, with the host's reasons first and verdict error."""
    written = result.read(path)
    replace(written, verdict="error", errors=[*reasons, *written.errors]).write(path.parent)
