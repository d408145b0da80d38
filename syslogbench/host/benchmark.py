"""One benchmark run on this machine: settings checked, images built, compose up, the result shown.

Everything a run needs is checked here, before any container starts.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from syslogbench import contract
from syslogbench.contract import EXIT_CODES, FINGERPRINT_ENV
from syslogbench.host import events, fingerprint, images, lock, profiles, resources, userconfig
from syslogbench.host import tools as hostsetup
from syslogbench.host.compose import ROOT, Compose, ContainerState, ended_before_the_watcher, project_name
from syslogbench.model import machine, result, scenarios, settings

ENV_FILE = ROOT / ".env"
DEFAULT_PROFILE = "rsyslog8"
HARNESS_SUITE = "bookworm"  # the watcher and generator images
HARNESS_SERVICES = ["watcher", "generator"]
STARTUP_ALLOWANCE_S = settings.START_ALLOWANCE_S  # rendering messages, connecting: on top of RUN_TIMEOUT
END_ALLOWANCE_S = settings.END_ALLOWANCE_S  # after compose: events, docker inspect, down (see worst_case_s)
INTERRUPTED = 130  # compose's own code when Ctrl-C reached it (128 + SIGINT), not a run's outcome


def log(text: str) -> None:
    print(f"syslogbench: {text}", flush=True)


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    """KEY=VALUE pairs; every malformed pair and every key given twice listed at once."""
    overrides, bad = read_pairs(pairs)
    if bad:
        raise settings.SettingsError(settings.listed("invalid arguments", bad))
    return overrides


def read_pairs(pairs: list[str]) -> tuple[dict[str, str], list[str]]:
    """The well-formed pairs, and a problem for each other one (`check` goes on with the former)."""
    overrides: dict[str, str] = {}
    bad = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isupper():
            bad.append(f"{pair!r} is not KEY=VALUE: write e.g. HOSTS=2 (keys as in .env)")
        elif key in overrides and overrides[key] != value:
            bad.append(f"{key} is given twice ({key}={overrides[key]}, then {pair}): give it once")
        else:
            overrides[key] = value
    return overrides, bad


def run_env(overrides: dict[str, str]) -> tuple[settings.Settings, dict[str, str]]:
    """The validated settings and the environment for compose (shell, then overrides, over .env).

    Besides .env's keys, the shape of the load (HOSTS, SENDERS_PER_HOST, MESSAGES_PER_SENDER) may be set:
    the run is then a variant of the scenario. GENERATORS starts as many generator containers as it has hosts.
    Every problem is listed at once: keys the scenario fixes, unknown keys, and each bad value.
    """
    env_values = settings.read_env_file(ENV_FILE, os.environ)
    known = {*env_values, *settings.SHAPE}
    problems = []
    if fixed := sorted(set(overrides) & set(settings.RULES)):
        problems.append(
            f"{', '.join(fixed)}: set by the scenario (scenarios/<SCENARIO>.yaml), not here; another value is "
            "another experiment: copy the scenario to a new id and change it there"
        )
    if unknown := sorted(set(overrides) - known - set(settings.RULES)):
        problems.append(
            f"unknown setting(s) {unknown}: the keys are those in {ENV_FILE.name} and {', '.join(settings.SHAPE)}"
        )
    usable = {key: value for key, value in overrides.items() if key in known}
    merged = {**env_values, **{k: v for k, v in os.environ.items() if k in known}, **usable}
    try:
        cfg = settings.from_env(merged)
    except settings.SettingsError as error:
        problems.extend(settings.items(error))
    if problems:
        raise settings.SettingsError(settings.listed("invalid settings", problems))
    shape = {
        "HOSTS": cfg.hosts,
        "SENDERS_PER_HOST": cfg.senders_per_host,
        "MESSAGES_PER_SENDER": cfg.messages_per_sender,
    }
    env = {
        **os.environ,
        **merged,
        **{key: str(value) for key, value in shape.items()},
        "GENERATORS": str(cfg.hosts),
        "DOCKER_VERSION": docker_version(),
        "NODE_HOSTNAME": socket.gethostname(),
    }
    return cfg, env


def worst_case_s(cfg: settings.Settings) -> int:
    """The longest a run can take, from its fingerprint until `syslogbench run` returns (docs/running.md):
    the fingerprint's container is given up after fingerprint.TIMEOUT_S; compose is stopped RUN_TIMEOUT +
    START_ALLOWANCE_S after it starts, whatever hangs; then the engine's events drain (11 s at most), `docker
    ps` and `docker inspect` answer (60 s each at most), and `down` stops what is left (30 s) and removes it
    (60 s at most)."""
    return fingerprint.TIMEOUT_S + cfg.run_timeout + STARTUP_ALLOWANCE_S + END_ALLOWANCE_S


def check_capacity(
    profile_names: list[str], overrides: dict[str, str], files: list[Path] | None = None
) -> None:
    """Every profile's load checked before a matrix starts any container (n/a ones become results); files:
    a user's own config (--config), read in place of each profile's."""
    cfg, _ = run_env(overrides)
    scenario = scenarios.load(cfg.scenario)
    for profile in map(profiles.resolve, profile_names):
        if not scenarios.unsupported(scenario, profile.features):
            resources.check(cfg, scenario, profile, log, files=files)


def docker_version() -> str:
    done = subprocess.run(
        ["docker", "version", "--format", "{{.Server.Version}}"], capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


def host_notices(cfg: settings.Settings) -> list[str]:
    """Limits the host cannot give: the run goes on with the effective value, and says so."""
    cores = os.cpu_count() or 1
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    notices = []
    for name, cpus in (("CENTRAL_CPUS", cfg.central_cpus), ("REMOTE_CPUS", cfg.remote_cpus)):
        if cpus > cores:
            notices.append(f"{name}={cpus} but this host has {cores} cores: the effective limit is {cores}")
    for name, size in (("CENTRAL_MEM", cfg.central_mem), ("REMOTE_MEM", cfg.remote_mem)):
        if size > memory:
            notices.append(
                f"{name} exceeds this host's {memory / 2**30:.1f} GiB: the effective limit is that"
            )
    return notices


def setup(profile_names: list[str], skip_unreachable: bool = False) -> None:
    """Bases and images for these profiles. A registry-based profile whose image cannot be had is refused
    ("needs Docker Hub: ..."), or with skip_unreachable (set-up of every profile) left out with a notice."""
    hostsetup.ensure_compose(log)
    chosen = [profiles.resolve(name) for name in profile_names]
    chosen = [p for p in chosen if registry_ready(p, skip_unreachable)]
    suites = sorted({HARNESS_SUITE, *(p.suite for p in chosen if p.suite)})
    images.ensure_bases(suites, log)
    for profile in chosen:
        log(f"building images for {profile.profile}")
        fresh_mtime(profile.dockerfile)
        command = Compose(profile.profile, project_name()).command(
            "build", "-q", *HARNESS_SERVICES, profile.profile
        )
        subprocess.run(command, check=True, cwd=ROOT)
        check_image(profile)


def fresh_mtime(dockerfile: Path) -> None:
    """Give the Dockerfile a modification time no other one has.

    BuildKit sends a Dockerfile incrementally and takes it as unchanged when size and mtime match the one it
    saw last. When each version had its own Dockerfile, two differed only in version digits (same size) and
    git wrote them in the same clock tick, so rsyslog-8.2302 was built from rsyslog-8.2102's Dockerfile.
    The registry-based versions still have their own; the others share daemons/Dockerfile, where it is harmless.
    """
    now = time.time_ns()
    os.utime(dockerfile, ns=(now, now))


def check_image(profile: profiles.Profile) -> None:
    """The built image must carry this profile's manifest, or a run would measure another daemon (see
    fresh_mtime for how that happened)."""
    done = subprocess.run(
        hostsetup.offline_run(profile.image, ["cat", "/etc/syslogbench/manifest.yaml"]),
        capture_output=True,
        text=True,
    )
    carried = next(
        (line.split(":", 1)[1].strip() for line in done.stdout.splitlines() if line.startswith("profile:")),
        None,
    )
    if carried != profile.profile:
        raise images.SetupError(
            f"image {profile.image} carries the manifest of {carried or 'nothing'}, not {profile.profile}: "
            f"remove it (docker rmi {profile.image}) and run `python -m syslogbench setup` again, one build at a time"
        )


def registry_ready(profile: profiles.Profile, skip_unreachable: bool = False) -> bool:
    """False (with a notice) or a SetupError when the profile's registry image cannot be had."""
    if profile.registry_image is None or images.registry_image_available(profile.registry_image):
        return True
    message = images.needs_registry_message(profile.profile, profile.registry_image)
    if not skip_unreachable:
        raise images.SetupError(message)
    log(f"notice: skipping {profile.profile}: {message.split('. ')[0]}")
    return False


def show_path(path: Path) -> None:
    """Without the report: the result's own summary line."""
    print(result.read(path).summary)
    print(f"\nResult file: {path}")


def run(
    profile_name: str,
    overrides: dict[str, str],
    results_dir: Path,
    extra_env: dict[str, str] | None = None,
    build: bool = True,
    show: Callable[[Path], None] = show_path,
    extra_files: tuple[Path, ...] = (),
    project: str | None = None,
    config: tuple[Path, bool] | None = None,
) -> int:
    """One run; extra_files are compose files over compose.yaml (the fault campaign's small logs volume);
    config is a config of the user's own (its path, and whether its text stays private)."""
    project = project or project_name()
    profile = profiles.resolve(profile_name)
    overrides, options = userconfig.split_settings(overrides)
    user = userconfig.given(config, profile.daemon, options)
    cfg, env = run_env(overrides)
    scenario = scenarios.load(cfg.scenario)
    if reasons := scenarios.unsupported(scenario, profile.features):
        return not_applicable(profile, cfg, scenario, reasons, results_dir)
    if profile.registry_image and (build or not images.image_exists(profile.image)):
        registry_ready(profile)  # before any container: "needs Docker Hub: ..." rather than a failed build
    files = user.files if user else None
    resources.check(cfg, scenario, profile, log, files=files)  # a load that cannot fit: before any container
    env.update(extra_env or {})
    with (
        userconfig.compose_files(user, profile.profile, cfg.scenario, extra_files) as files_over,
        lock.project(project),  # a second run on this project is refused here, before anything is built
    ):
        return measure(
            profile,
            cfg,
            scenario,
            env,
            results_dir,
            Compose(profile.profile, project, files_over),
            build,
            show,
            user,
        )


def measure(
    profile: profiles.Profile,
    cfg: settings.Settings,
    scenario: scenarios.Scenario,
    env: dict[str, str],
    results_dir: Path,
    runner: Compose,
    build: bool,
    show: Callable[[Path], None],
    user: userconfig.UserConfig | None = None,
) -> int:
    """Build, compose up, and show the result this run wrote (the project's lock is held)."""
    results_dir.mkdir(parents=True, exist_ok=True)
    for notice in host_notices(cfg):
        log(f"notice: {notice}")
    if build:  # cached builds take seconds, and a stale image would measure old code
        setup([profile.profile])
    if user is not None:  # the daemon's own check, before any container of the run
        log(userconfig.check(user, profile.image, profile.profile, scenario.transport, contract.CENTRAL_PORT))
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
        outside = userconfig.daemon_writes(user, containers, profile.profile) if user else []
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
    if not new:
        path = written_from_outside(profile, cfg, scenario, containers, reasons, began, results_dir, found)
        log(f"the watcher wrote no result: this one, written from outside, says why: {path}")
        show(path)
        return EXIT_CODES["error"]
    path = new[-1]
    if user is not None:
        userconfig.amend(path, outside)
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
    host = replace(machine.host_facts(docker_version=docker_version()), fingerprint=found)
    empty = result.not_applicable(cfg, scenario, daemon_of(profile), host, "", began)
    return replace(
        empty,
        verdict="error",
        errors=errors,
        notes=[*empty.notes, f"containers at the end: {states}"],
        finished_utc=result.utc(datetime.now(UTC)),
    ).write(results_dir)


def daemon_of(profile: profiles.Profile) -> result.Daemon:
    """The daemon as its profile describes it (the watcher reads the same from the running image)."""
    return result.Daemon(profile=profile.profile, name=profile.daemon, version=profile.version,
                         package=profile.package, image=profile.image, settings=profile.settings)  # fmt: skip


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
    daemon = daemon_of(profile)
    # The watcher reads the same facts from /proc in its container, which shares this machine's kernel. No
    # fingerprint: nothing runs, so there is nothing for it to explain.
    host = machine.host_facts(docker_version=docker_version())
    path = result.not_applicable(cfg, scenario, daemon, host, reason, datetime.now(UTC)).write(results_dir)
    log(f"n/a: {reason}; recorded in {path}")
    return EXIT_CODES["n/a"]
