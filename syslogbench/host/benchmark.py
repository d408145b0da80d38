"""One benchmark run of a plan, on its orchestrator (host/onehost.py, host/swarm.py): n/a where the daemon
cannot run the scenario, else the load checked before any container, and the run; and what both orchestrators
write of a run from outside it (the fingerprint taken before it, a result when the watcher wrote none).
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from syslogbench.contract import EXIT_CODES, FINGERPRINT_ENV
from syslogbench.host import environment, fingerprintcontainer
from syslogbench.host.lifecycle import RunOptions, kept
from syslogbench.host.log import log
from syslogbench.model import machine, result, scenarios, settings

if TYPE_CHECKING:
    from syslogbench.host.compose import ContainerState
    from syslogbench.host.profiles import Profile
    from syslogbench.host.runplan import Plan

STARTUP_ALLOWANCE_S = settings.START_ALLOWANCE_S  # rendering messages, connecting: on top of RUN_TIMEOUT
END_ALLOWANCE_S = settings.END_ALLOWANCE_S  # after compose: events, docker inspect, down (see worst_case_s)


def worst_case_s(cfg: settings.Settings) -> int:
    """The longest a run can take, from its fingerprint until `syslogbench run` returns (docs/running.md):
    the fingerprint's container is given up after fingerprintcontainer.TIMEOUT_S; compose is stopped RUN_TIMEOUT +
    START_ALLOWANCE_S after it starts, whatever hangs; then the engine's events drain (11 s at most), `docker
    ps` and `docker inspect` answer (60 s each at most), and `down` stops what is left (30 s) and removes it
    (60 s at most)."""
    return fingerprintcontainer.TIMEOUT_S + cfg.run_timeout + STARTUP_ALLOWANCE_S + END_ALLOWANCE_S


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
    chosen.on.refuse_unfit(chosen)
    return chosen.on.run(chosen, results_dir, options)


def run_kept(chosen: Plan, folder: Path, options: RunOptions) -> tuple[int, Path | None]:
    """One run of a command that keeps runs of its own (knobs, compare): its result moved into folder from a
    staging folder of its own (lifecycle.kept). Its exit code, and the result's path (None: it wrote none)."""
    with kept(folder) as (staging, written):
        code = run(chosen, staging, options)
    return code, written[-1] if written else None


def measure_fingerprint(cfg: settings.Settings, env: dict[str, str]) -> result.Fingerprint | None:
    """The machine's fingerprint under the daemon's limits, handed to the watcher in env."""
    found, why = fingerprintcontainer.take(cfg)
    if found is None:
        env.pop(FINGERPRINT_ENV, None)
        log(f"notice: {why}; the watcher measures the fingerprint in its own container")
        return None
    env[FINGERPRINT_ENV] = json.dumps(found.to_dict(), sort_keys=True)
    log(f"fingerprint: {fingerprintcontainer.summary(found)}")
    if note := found.unsteady():
        log(f"notice: {note}")
    return found


def written_from_outside(
    profile: Profile,
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


def daemon_of(profile: Profile, tuning: str | None = None) -> result.Daemon:
    """The daemon as its profile describes it (the watcher reads the same from the running image)."""
    return result.Daemon(profile=profile.profile, name=profile.daemon, version=profile.version,
                         package=profile.package, image=profile.image, settings=profile.settings,
                         tuning=tuning)  # fmt: skip


def not_applicable(
    profile: Profile,
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
