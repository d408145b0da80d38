"""One benchmark run on this machine: settings checked, images built, compose up, the result shown.

Everything a run needs is checked here, before any container starts.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from syslogbench import contract
from syslogbench.contract import EXIT_CODES, FINGERPRINT_ENV
from syslogbench.host import (
    configcheck,
    configrun,
    environment,
    events,
    fingerprint,
    profiles,
    setup,
)
from syslogbench.host.compose import Compose, ContainerState, ended_before_the_watcher
from syslogbench.host.log import log
from syslogbench.host.plan import Plan, RunOptions
from syslogbench.model import machine, result, scenarios, settings

STARTUP_ALLOWANCE_S = settings.START_ALLOWANCE_S  # rendering messages, connecting: on top of RUN_TIMEOUT
END_ALLOWANCE_S = settings.END_ALLOWANCE_S  # after compose: events, docker inspect, down (see worst_case_s)
INTERRUPTED = 130  # compose's own code when Ctrl-C reached it (128 + SIGINT), not a run's outcome


def worst_case_s(cfg: settings.Settings) -> int:
    """The longest a run can take, from its fingerprint until `syslogbench run` returns (docs/running.md):
    the fingerprint's container is given up after fingerprint.TIMEOUT_S; compose is stopped RUN_TIMEOUT +
    START_ALLOWANCE_S after it starts, whatever hangs; then the engine's events drain (11 s at most), `docker
    ps` and `docker inspect` answer (60 s each at most), and `down` stops what is left (30 s) and removes it
    (60 s at most)."""
    return fingerprint.TIMEOUT_S + cfg.run_timeout + STARTUP_ALLOWANCE_S + END_ALLOWANCE_S


def show_path(path: Path) -> None:
    """Without the report: the result's own summary line."""
    print(result.read(path).summary)
    print(f"\nResult file: {path}")


def run(chosen: Plan, results_dir: Path, options: RunOptions | None = None) -> int:
    """One run of the plan, on its orchestrator; n/a (a result too) when the daemon cannot run the scenario.
    The load is checked before any container."""
    options = options or RunOptions(show_path)
    if reasons := chosen.unsupported:
        return not_applicable(chosen.profile, chosen.cfg, chosen.scenario, reasons, results_dir)
    chosen.on.check(chosen)
    return chosen.on.run(chosen, results_dir, options)


def run_kept(chosen: Plan, folder: Path, options: RunOptions) -> tuple[int, Path | None]:
    """One run of a command that keeps runs of its own (knobs, compare, a search's burst): its result moved
    into folder from a staging folder of its own, so that no other file is taken for it. Its exit code, and
    the result's path (None: it wrote none)."""
    folder.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".run-", dir=folder))
    try:
        code = run(chosen, staging, options)
        written = sorted(staging.glob("*.json"))
        for path in written:
            path.replace(folder / path.name)
        return code, (folder / written[-1].name) if written else None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def images_ready(chosen: Plan, build: bool, log: Callable[[str], None]) -> None:
    """The profile's image built (cached builds take seconds, and a stale image would measure old code), and
    a user's config checked by the daemon in it, before any container of the run."""
    if build:
        setup.setup([chosen.profile.profile])
    if chosen.user is not None:
        port, transport = contract.CENTRAL_PORT, chosen.scenario.transport
        log(configcheck.check(chosen.user, chosen.profile.image, chosen.profile.profile, transport, port))


def measure(
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
    # The watcher writes into a directory of this run's own, so a run started at the same time from another
    # project (or checkout) into the same results directory is never taken for this one.
    staging = Path(tempfile.mkdtemp(prefix=f".run-{runner.project}-", dir=results_dir))
    env["RESULTS_DIR"] = str(staging.resolve())
    found = measure_fingerprint(cfg, env)
    began = datetime.now(UTC)
    containers: list[ContainerState] = []
    seen: list[events.Event] = []
    outside: list[str] = []  # --config: files the daemon wrote outside /var/log
    recorder = events.Recorder(runner.project).start()
    try:
        up = runner.up(env, cfg.run_timeout + STARTUP_ALLOWANCE_S)
        seen = recorder.stop()
        containers = runner.states(env)  # how each ended, before down removes them
        outside = configrun.daemon_writes(user, containers, profile.profile) if user else []
    finally:  # whatever ended compose, even Ctrl-C, the result it left goes where results are
        recorder.stop()
        runner.down(env)
        new = collect(staging, results_dir)
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
        path = written_from_outside(
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


def measure_fingerprint(cfg: settings.Settings, env: dict[str, str]) -> result.Fingerprint | None:
    """The machine's fingerprint under the daemon's limits, handed to the watcher in env."""
    found, why = fingerprint.measure(cfg)
    if found is None:
        env.pop(FINGERPRINT_ENV, None)
        log(f"notice: {why}; the watcher measures the fingerprint in its own container")
        return None
    env[FINGERPRINT_ENV] = json.dumps(found.to_dict(), sort_keys=True)
    log(f"fingerprint: {fingerprint.summary(found)}")
    if note := found.unsteady():
        log(f"notice: {note}")
    return found


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


def written_from_outside(
    profile: profiles.Profile,
    cfg: settings.Settings,
    scenario: scenarios.Scenario,
    containers: list[ContainerState],
    reasons: list[str],
    began: datetime,
    results_dir: Path,
    found: result.Fingerprint | None = None,
) -> Path:
    """The watcher itself was killed (or never ran): a result from the host, verdict error, nothing measured
    but the fingerprint taken before compose up, with the containers' states. Built the way an n/a result is."""
    watcher = next((c for c in containers if c.service == "watcher"), None)
    said = watcher.describe() if watcher else "no watcher container was found"
    errors = [f"the watcher wrote no result ({said}); this result was written by `syslogbench run`", *reasons]
    states = "; ".join(c.describe() for c in containers) or "none (the engine did not answer)"
    host = replace(machine.host_facts(docker_version=environment.docker_version()), fingerprint=found)
    empty = result.not_applicable(cfg, scenario, daemon_of(profile, cfg.tuning), host, "", began)
    return replace(
        empty,
        verdict="error",
        errors=errors,
        notes=[*empty.notes, f"containers at the end: {states}"],
        finished_utc=result.utc(datetime.now(UTC)),
    ).write(results_dir)


def daemon_of(profile: profiles.Profile, tuning: str | None = None) -> result.Daemon:
    """The daemon as its profile describes it (the watcher reads the same from the running image)."""
    return result.Daemon(profile=profile.profile, name=profile.daemon, version=profile.version,
                         package=profile.package, image=profile.image, settings=profile.settings,
                         tuning=tuning)  # fmt: skip


def collect(staging: Path, results_dir: Path) -> list[Path]:
    """Move the run's result(s) from its own directory into results_dir; the moved paths, by name."""
    moved = []
    for path in sorted(staging.glob("*.json")):
        target = results_dir / path.name
        path.replace(target)
        moved.append(target)
    shutil.rmtree(staging, ignore_errors=True)  # and a temporary file a killed watcher may have left
    return moved


def not_applicable(
    profile: profiles.Profile,
    cfg: settings.Settings,
    scenario: scenarios.Scenario,
    reasons: list[str],
    results_dir: Path,
) -> int:
    """A combination the daemon cannot do is a result too: verdict n/a, with the reason."""
    reason = f"{profile.profile} cannot run scenario {scenario.id}: {'; '.join(reasons)}"
    daemon = daemon_of(profile, cfg.tuning)
    # The watcher reads the same facts from /proc in its container, which shares this machine's kernel. No
    # fingerprint: nothing runs, so there is nothing for it to explain.
    host = machine.host_facts(docker_version=environment.docker_version())
    path = result.not_applicable(cfg, scenario, daemon, host, reason, datetime.now(UTC)).write(results_dir)
    log(f"n/a: {reason}; recorded in {path}")
    return EXIT_CODES["n/a"]
