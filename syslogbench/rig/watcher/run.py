"""The run sequence (docs/DESIGN.md): reset, decide n/a, wait for everyone, start, watch, stop, reconcile
(accounting.py), write the result.

It needs no Docker socket: the daemon's supervisor answers its requests through the control volume.
Stdlib (and Debian's python3-yaml) only: runs in the watcher container with Debian's python3 and sec.
"""

from __future__ import annotations

import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

from syslogbench import contract
from syslogbench.model import scenarios, settings, userconfig
from syslogbench.model.ledger import failures
from syslogbench.model.machine import host_facts
from syslogbench.model.result import Daemon, HarnessContainer, Matrix
from syslogbench.rig import cgroup, channel, control, fanout, fingerprintprobes, tlscerts
from syslogbench.rig.cgroup import Snapshot, read_snapshot
from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher import accounting, concerns, fault, harness, relay, resultfile, topology
from syslogbench.rig.watcher.done import TRIGGERS, start_sec, stop_sec
from syslogbench.rig.watcher.files import clear, read_ledgers
from syslogbench.rig.watcher.progress import say

HEALTH_FILE = Path("/tmp/watcher-ready")
READY_TIMEOUT = contract.READY_TIMEOUT
STOP_TIMEOUT = 120.0
# After a SIGTERM the watcher has compose.yaml's stop_grace_period (120 s) in all: these waits stay well inside
# it, leaving the rest to reconcile what arrived and write the result.
STOPPING_STOP_TIMEOUT = 5.0
STOPPING_LEDGER_WAIT = 1.0
# After any other failure the senders still running see the daemon stop and report within seconds; a sender
# whose generator vanished never will.
FAILED_LEDGER_WAIT = 10.0
TAIL_POLL_S = 0.05


# The generators' side of the control directory, over TCP (rig/channel.py): open from run.json to finish.
gateway: channel.Server | None = None


class Unsupported(RuntimeError):
    """The daemon cannot run this scenario (the reason)."""


def read_text(path: Path, default: str = "unknown") -> str:
    try:
        return path.read_text().strip() or default
    except OSError:
        return default


def clean_version(line: str) -> str:
    """rsyslog prints 'rsyslogd  8.2504.0 (aka 2025.04) compiled with:'; keep the words that name it."""
    return " ".join(line.replace("compiled with:", "").split())


def read_manifest() -> dict:
    import yaml  # Debian's python3-yaml, in the watcher image only

    path = control.CONTROL.daemon.manifest
    return (yaml.safe_load(path.read_text()) or {}) if path.exists() else {}


def tuning_info() -> tuple[str, dict]:
    """The tuning of the config that runs: a user's own (run --config), or what the supervisor copied beside a
    tuned config (its knobs), or the package's defaults."""
    if userconfig.from_env(os.environ):
        return "user", {}
    path = control.CONTROL.daemon.tuning
    if os.environ.get("TUNING", settings.DEFAULT_TUNING) == settings.DEFAULT_TUNING or not path.exists():
        return settings.DEFAULT_TUNING, {}
    import yaml  # Debian's python3-yaml, in the watcher image only

    record = yaml.safe_load(path.read_text()) or {}
    return str(record.get("tuning", "unknown")), dict(record.get("knobs") or {})


def daemon_info() -> Daemon:
    files, manifest = control.CONTROL.daemon, read_manifest()
    profile = manifest.get("profile", "unknown")
    chosen, knobs = tuning_info()
    return Daemon(
        profile=profile,
        name=manifest.get("daemon", "unknown"),
        version=clean_version(read_text(files.version)),
        package=manifest.get("package", "unknown"),
        image=contract.image_name(profile),
        base=read_text(files.base),
        settings=manifest.get("settings") or {},
        tuning=chosen,
        knobs=knobs,
    )


def decide(scenario: scenarios.Scenario) -> None:
    """n/a is decided here, once, by the model's rule: the supervisor has copied the daemon's manifest, and
    starts the daemon only when it finds `go`; `unsupported` (with the reason) makes it idle until finish."""
    control.wait_for(control.CONTROL.daemon.manifest, READY_TIMEOUT, "the daemon's manifest", poll=0.05)
    manifest = read_manifest()
    if reasons := scenarios.unsupported(scenario, list(manifest.get("features") or [])):
        reason = (
            f"{manifest.get('profile', 'unknown')} cannot run scenario {scenario.id}: {'; '.join(reasons)}"
        )
        control.write_atomic(control.CONTROL.unsupported, f"{reason}\n")
        raise Unsupported(reason)
    control.write_atomic(control.CONTROL.go, "")


def wait_until_ready(cfg: settings.Settings) -> None:
    """Wait for the daemon and every sender; a sender that fails while rendering ends the wait at once."""
    files = control.CONTROL.daemon
    deadline = time.monotonic() + READY_TIMEOUT
    while not files.ready.exists():
        if files.exit.exists():
            raise RuntimeError(
                f"the daemon exited with code {read_text(files.exit)} before it listened on "
                f"{contract.CENTRAL_PORT}; its container's log says why"
            )
        if time.monotonic() > deadline:
            raise control.WaitTimeout(
                f"gave up after {READY_TIMEOUT:.0f} s waiting for the daemon to listen on {contract.CENTRAL_PORT}"
            )
        time.sleep(0.05)
    deadline = time.monotonic() + READY_TIMEOUT
    ready_dir = control.CONTROL.ready_dir
    while len(list(ready_dir.glob("host*"))) < cfg.senders:
        if failed := failures(read_ledgers()):
            raise RuntimeError("a sender failed before the start: " + "; ".join(failed))
        if time.monotonic() > deadline:
            count = len(list(ready_dir.glob("host*")))
            raise control.WaitTimeout(
                f"only {count} of {cfg.senders} senders were ready after {READY_TIMEOUT:.0f} s: "
                f"{cfg.hosts} hosts need {cfg.hosts} generator containers (plain compose: set GENERATORS={cfg.hosts})"
            )
        time.sleep(0.05)


def take_snapshot(name: str) -> Snapshot:
    control.write_atomic(control.CONTROL.snapshot_request(name), "")
    snapshot = control.CONTROL.snapshot(name)
    control.wait_for(snapshot / "time", 30, f"the daemon's cgroup snapshot {name!r}")
    return read_snapshot(snapshot)


def watch(cfg: settings.Settings, obs: Observed, t0: float, wall0: float | None = None) -> None:
    """Until SEC fires (or every DONE is in), the daemon dies, a sender fails, or RUN_TIMEOUT passes; then,
    in relay scenarios ended by the DONEs, until the last hop has every line. Each concern records its part."""
    plan = concerns.for_scenario(cfg, obs.scenario, obs.start, t0, wall0)
    while True:
        now = time.monotonic() - t0
        if any(poll(concern, now) for concern in plan.during):  # the first that ends the run ends this poll
            break
        time.sleep(plan.poll_s)
    if plan.done.trigger in TRIGGERS:
        hold(plan.during, cfg.run_timeout, t0, plan.poll_s)
    stopped = time.monotonic() - t0
    for concern in plan.during:
        concern.stop(stopped)
    if plan.tail is not None and plan.done.trigger in TRIGGERS:
        plan.tail.begin(time.monotonic() - t0)
        while not plan.tail.ended:
            time.sleep(TAIL_POLL_S)
            plan.tail.update(time.monotonic() - t0)
    for concern in plan.every:
        concern.record(obs)


def hold(during: list[concerns.Concern], run_timeout: float, t0: float, poll_s: float) -> None:
    """After the DONEs, until no concern holds the run (a restart asked and not yet answered) or RUN_TIMEOUT."""
    while True:
        now = time.monotonic() - t0
        held = [concern for concern in during if concern.holds(now)]
        if not held or now > run_timeout:
            return
        for concern in held:
            poll(concern, now)
        time.sleep(poll_s)


def poll(concern: concerns.Concern, now: float) -> bool:
    if concern.due(now):
        concern.update(now)
    return concern.ended


def stop_daemon(obs: Observed, timeout: float = STOP_TIMEOUT) -> None:
    if silent := fault.supervisor_silent(control.CONTROL.samples):
        obs.errors.append(silent)
        timeout = min(timeout, STOPPING_STOP_TIMEOUT)  # a frozen supervisor will not answer the stop
    control.write_atomic(control.CONTROL.stop, "")
    exit_file = control.CONTROL.daemon.exit
    try:
        control.wait_for(exit_file, timeout, "the daemon to stop", poll=0.05)
    except control.WaitTimeout as error:
        obs.errors.append(str(error))
        return
    obs.daemon_exit = int(read_text(exit_file, "-1"))
    try:
        obs.end = read_snapshot(control.CONTROL.snapshot("end"))
    except ValueError as error:
        obs.errors.append(f"no cgroup figures from the daemon: {error}")
        return
    if reason := fault.memory_kill(obs, os.environ.get("CENTRAL_MEM", "")):
        obs.errors.insert(0, reason)  # the cause, before what the senders saw of it
    elif reason := fault.killed_by_signal(obs.daemon_exit):
        obs.errors.insert(0, reason)


def prepare_tls(cfg: settings.Settings) -> str | None:
    """A TLS scenario's throwaway CA and server certificate, written before run.json (which daemons and
    senders wait for). Returns what went wrong, if anything; a bad scenario is reported with the run."""
    try:
        scenario = scenarios.load(cfg.scenario)
    except scenarios.ScenarioError:
        return None
    if scenario.transport != "tls":
        return None
    try:
        tlscerts.generate(control.CONTROL.tls)
    except tlscerts.CertError as error:
        return f"cannot make the TLS certificates: {error}"
    return None


def run(cfg: settings.Settings, obs: Observed) -> None:
    if obs.scenario is not None:
        decide(obs.scenario)
    wait_until_ready(cfg)
    obs.daemon = daemon_info()
    obs.start = take_snapshot("start")
    obs.host.cgroup_version = obs.start.version
    sec = start_sec(cfg)
    try:
        time.sleep(0.5)  # let SEC load its rules before any DONE can arrive
        t0, cpu0 = time.monotonic(), harness.own_cpu()  # SEC has loaded: its start-up is not in the window
        wall0 = time.time()
        control.write_atomic(control.CONTROL.start, f"{wall0}\n")
        if gateway is not None:
            gateway.start()
        say(f"start: {cfg.senders} senders x {cfg.messages_per_sender:,} messages to {obs.daemon.profile}")
        watch(cfg, obs, t0, wall0)
    finally:
        stop_sec(sec)
    stop_daemon(obs)
    if obs.end is not None:  # the window's end, as for the daemon's CPU
        obs.watcher_cpu_s = harness.since(cpu0)
    relay.after_stop(obs)
    accounting.conclude(cfg, obs, cfg.ledger_wait)


def own_memory() -> HarnessContainer:
    """The watcher's own memory peak so far (the reconciliation is its largest part) and its limit."""
    own = cgroup.own().memory()
    return HarnessContainer(own.peak_bytes, own.peak_source, own.limit_bytes)


def scenario_transport(cfg: settings.Settings) -> str:
    """tcp, udp or tls; tcp when the scenario does not load (the run then ends with that error anyway)."""
    try:
        return scenarios.load(cfg.scenario).transport
    except scenarios.ScenarioError:
        return "tcp"


def matrix_cell() -> Matrix | None:
    """Set by `python -m syslogbench matrix`, so a resumed matrix knows which cells are done."""
    cell, replicate = os.environ.get("MATRIX_ID"), os.environ.get("MATRIX_REPLICATE", "")
    return Matrix(id=cell, replicate=int(replicate)) if cell and replicate.isdigit() else None


def reset() -> None:
    """Clear the volumes, so nothing stale from an earlier run is ever read."""
    clear(control.CONTROL.root)
    clear(control.LOGS)
    if contract.QUEUE_DIR.exists():  # a disk queue left by an earlier run would replay its messages here
        clear(contract.QUEUE_DIR)
    (control.LOGS / contract.DONE_LOG).touch()


def prepare(cfg: settings.Settings, obs: Observed, handlers: dict | None = None) -> str | None:
    """Reset the volumes and tell the others the run (run.json); returns a TLS problem, if any."""
    reset()
    obs.host.fingerprint = fingerprintprobes.for_run(control.LOGS, obs.notes)  # before the others start
    tls_problem = prepare_tls(cfg)
    # Before run.json: the supervisor reads it once run.json exists, to know where readiness shows.
    control.write_atomic(control.CONTROL.transport, f"{scenario_transport(cfg)}\n")
    capacity = contract.CapacityEnv.on(os.environ)  # trials until the host ends them (rig/trials.py)
    control.write_json(
        control.CONTROL.run_json, {"settings": cfg.as_dict(), "pid": os.getpid(), "capacity": capacity}
    )
    open_gateway(handlers or {})
    HEALTH_FILE.touch()
    obs.started = obs.finished = datetime.now(UTC)
    return tls_problem


def open_gateway(handlers: dict) -> None:
    """The generators may connect from now on: the volumes are reset and run.json (and tls/) written.
    handlers: ops of a capacity run's trials (rig/watcher/trialrun.py), there before the first request."""
    global gateway
    gateway = channel.Server(control.CONTROL)
    gateway.handlers.update(handlers)
    gateway.open()


def close_gateway() -> None:
    """After finish: the answers owed (start, finish) go out before the watcher exits."""
    global gateway
    if gateway is not None:
        gateway.close()
        gateway = None


def attempt(cfg: settings.Settings, obs: Observed) -> None:
    """The run; whatever ends it early becomes an error in obs, with what arrived reconciled."""
    try:
        tls_problem = prepare(cfg, obs)
        obs.scenario = scenarios.load(cfg.scenario)
        if tls_problem:
            raise RuntimeError(tls_problem)
        run(cfg, obs)
    except Unsupported as reason:
        obs.unsupported = str(reason)
        obs.errors.append(f"n/a: {reason}")
        obs.daemon = daemon_info()
    except fault.Terminated as stopped:
        obs.errors.append(str(stopped))
        obs.errors.append(first_gone())
        salvage(cfg, obs, stopping=True)
    except (control.WaitTimeout, RuntimeError, OSError, ValueError, scenarios.ScenarioError) as error:
        obs.errors.append(str(error))
        salvage(cfg, obs, stopping=False)
    except Exception as error:  # noqa: BLE001 - a defect in the watcher is still a run that needs a result
        obs.errors.append(f"the watcher failed: {type(error).__name__}: {error}")
        salvage(cfg, obs, stopping=False)


def first_gone() -> str:
    """Plain compose names no container when it stops the run; what the watcher saw end first does: the daemon
    (its exit code, or its supervisor gone silent) or a generator (its control connection closed)."""
    exit_file = control.CONTROL.daemon.exit
    if exit_file.exists():
        return f"the first to end was the daemon: it exited with code {read_text(exit_file)}"
    if silent := fault.supervisor_silent(control.CONTROL.samples):
        return f"the first to end was the daemon's container: {silent}"
    if gateway is not None and (generator := gateway.first_closed()):
        return f"the first to end was {generator}"
    return (
        "the watcher saw no container end before its SIGTERM (no daemon exit, no silent supervisor, no generator's "
        "connection closed): compose itself may have stopped the run, e.g. a service it was starting failed; its "
        "output says which"
    )


def salvage(cfg: settings.Settings, obs: Observed, stopping: bool) -> None:
    """After a failure: the daemon's facts, its stop and end snapshot where its supervisor still answers,
    what is known of the others, and the reconciliation of what arrived once the start was given. Every
    wait is short when stopping (SIGTERM: compose's grace is running)."""
    steps = [
        lambda: setattr(obs, "daemon", daemon_info()),
        lambda: stop_if_started(obs, STOPPING_STOP_TIMEOUT if stopping else STOP_TIMEOUT),
        lambda: note_the_missing(cfg, obs),
        lambda: reconcile_what_arrived(cfg, obs, STOPPING_LEDGER_WAIT if stopping else FAILED_LEDGER_WAIT),
    ]
    for step in steps:
        try:
            step()
        except accounting.ReconcileFailed as error:
            obs.errors.append(str(error))
        except Exception as error:  # noqa: BLE001 - one failing step must not cost the others, nor the result
            obs.errors.append(f"the watcher failed while ending the run: {type(error).__name__}: {error}")


def stop_if_started(obs: Observed, timeout: float) -> None:
    if obs.daemon_exit is None and control.CONTROL.daemon.ready.exists():
        stop_daemon(obs, timeout)


def note_the_missing(cfg: settings.Settings, obs: Observed) -> None:
    for text in (fault.daemon_gone(obs), fault.missing_senders(accounting.expected_senders(cfg))):
        if text and text not in obs.errors:  # salvage may run twice: a SIGTERM during the first
            obs.errors.append(text)


def reconcile_what_arrived(cfg: settings.Settings, obs: Observed, ledger_wait: float) -> None:
    failed = any(error.startswith(accounting.RECONCILE_FAILED) for error in obs.errors)
    if obs.counts is None and control.CONTROL.start.exists() and not failed:
        accounting.conclude(cfg, obs, ledger_wait)


def main() -> int:
    try:
        cfg = settings.from_env(os.environ)
    except settings.SettingsError as error:
        say(str(error))
        control.write_atomic(control.CONTROL.finish, "")
        return contract.EXIT_CODES["error"]
    started = datetime.now(UTC)
    obs = Observed(
        cfg=cfg,
        host=host_facts(2 if Path("/sys/fs/cgroup/cgroup.controllers").exists() else 1),
        daemon=Daemon(),
        started=started,
        finished=started,
    )
    obs.matrix = matrix_cell()
    if user := userconfig.from_env(os.environ):
        obs.config = fanout.config_block(user)
    fault.arm()
    try:
        attempt(cfg, obs)
    except fault.Terminated as stopped:  # the SIGTERM came while an earlier failure was being handled
        obs.errors.append(str(stopped))
        salvage(cfg, obs, stopping=True)
    fault.disarm()
    # The key is throwaway, but it need not outlive the run in the volume either.
    shutil.rmtree(control.CONTROL.tls, ignore_errors=True)
    obs.finished = datetime.now(UTC)
    obs.topology = topology.gather(obs.host, obs.daemon.profile)
    obs.harness.watcher = own_memory()
    written = resultfile.write(obs)
    resultfile.report(written)
    try:
        control.write_atomic(control.CONTROL.finish, "")
    except OSError as error:  # the others then end at their own time limits
        say(f"error: cannot write finish: {error}")
    close_gateway()
    return contract.EXIT_CODES[written.verdict]
