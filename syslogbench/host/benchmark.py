"""One benchmark run on this machine: settings checked, images built, compose up, the result shown.

Everything a run needs is checked here, before any container starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from syslogbench.host import images, profiles
from syslogbench.host import tools as hostsetup
from syslogbench.model import machine, result, scenarios, settings

ROOT = Path(__file__).resolve().parents[2]
ENV_FILE = ROOT / ".env"
DEFAULT_PROFILE = "rsyslog8"
HARNESS_SUITE = "bookworm"  # the watcher and generator images
HARNESS_SERVICES = ["watcher", "generator"]
STARTUP_ALLOWANCE_S = 600
EXIT_BAD_INPUT = 2  # building, rendering messages, connecting: on top of RUN_TIMEOUT


def log(text: str) -> None:
    print(f"syslogbench: {text}", flush=True)


def project_name() -> str:
    """The compose project; a second checkout on the same machine sets its own (with its own IMAGE_TAG)."""
    return os.environ.get("SYSLOGBENCH_PROJECT", "syslogbench")


def compose(profile: str, *args: str, project: str | None = None) -> list[str]:
    project = project or project_name()
    return ["docker", "compose", "--project-directory", str(ROOT), "-p", project, "--profile", profile, *args]


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    overrides = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isupper():
            raise settings.SettingsError(f"{pair!r} is not KEY=VALUE: write e.g. HOSTS=2 (keys as in .env)")
        overrides[key] = value
    return overrides


def run_env(overrides: dict[str, str]) -> tuple[settings.Settings, dict[str, str]]:
    """The validated settings and the environment for compose (shell, then overrides, over .env)."""
    env_values = settings.read_env_file(ENV_FILE)
    unknown = sorted(set(overrides) - set(env_values))
    if unknown:
        raise settings.SettingsError(f"unknown setting(s) {unknown}: the keys are those in {ENV_FILE.name}")
    merged = {**env_values, **{k: v for k, v in os.environ.items() if k in env_values}, **overrides}
    cfg = settings.from_env(merged)
    merged.update(connection_shape(cfg))
    cfg = settings.from_env(merged)
    env = {**os.environ, **merged, "DOCKER_VERSION": docker_version()}
    return cfg, env


def connection_shape(cfg: settings.Settings) -> dict[str, str]:
    """The load's shape a connection-count scenario asks for (nothing for the others)."""
    scenario = scenarios.load(cfg.scenario)
    shape = scenarios.load_shape(scenario, cfg.hosts, cfg.senders_per_host, cfg.messages_per_sender)
    if shape == (cfg.hosts, cfg.senders_per_host, cfg.messages_per_sender):
        return {}
    hosts, senders, messages = shape
    log(
        f"scenario {scenario.id}: {hosts} hosts x {senders} senders x {messages:,} messages "
        f"(the configured {cfg.senders * cfg.messages_per_sender:,} messages over {scenario.connections} connections)"
    )
    return {"HOSTS": str(hosts), "SENDERS_PER_HOST": str(senders), "MESSAGES_PER_SENDER": str(messages)}


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
        command = compose(profile.profile, "build", "-q", *HARNESS_SERVICES, profile.profile)
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
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            "--entrypoint",
            "cat",
            profile.image,
            "/etc/syslogbench/manifest.yaml",
        ],
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
    print(json.loads(path.read_text()).get("summary", ""))
    print(f"\nResult file: {path}")


def run(
    profile_name: str,
    overrides: dict[str, str],
    results_dir: Path,
    extra_env: dict[str, str] | None = None,
    build: bool = True,
    show: Callable[[Path], None] = show_path,
) -> int:
    project = project_name()
    profile = profiles.resolve(profile_name)
    cfg, env = run_env(overrides)
    scenario = scenarios.load(cfg.scenario)
    if reasons := scenarios.unsupported(scenario, profile.features):
        return not_applicable(profile, cfg, scenario, reasons, results_dir)
    if profile.registry_image and (build or not images.image_exists(profile.image)):
        registry_ready(profile)  # before any container: "needs Docker Hub: ..." rather than a failed build
    env.update(extra_env or {}, RESULTS_DIR=str(results_dir.resolve()))
    results_dir.mkdir(parents=True, exist_ok=True)
    for notice in host_notices(cfg):
        log(f"notice: {notice}")
    if build:  # cached builds take seconds, and a stale image would measure old code
        setup([profile.profile])
    before = set(results_dir.glob("*.json"))
    log(
        f"{profile.profile}: {cfg.senders} senders x {cfg.messages_per_sender:,} messages, scenario {cfg.scenario}"
    )
    up = compose(profile.profile, "up", "--exit-code-from", "watcher", project=project)
    try:
        code = subprocess.run(up, env=env, cwd=ROOT, timeout=cfg.run_timeout + STARTUP_ALLOWANCE_S).returncode
    except subprocess.TimeoutExpired:
        log("compose did not finish in time: stopping every container")
        code = 124
    finally:
        subprocess.run(compose(profile.profile, "down", "-t", "30", project=project), env=env, cwd=ROOT)
    if code == 130:  # compose was interrupted (Ctrl-C reached it first): stop here too
        raise KeyboardInterrupt
    new = sorted(set(results_dir.glob("*.json")) - before)
    if not new:
        log("no result was written: see the watcher's output above")
        return code or 1
    show(new[-1])
    ran = json.loads(new[-1].read_text())["daemon"]["profile"]
    if ran not in ("unknown", profile.profile):
        log(
            f"error: the image for {profile.profile} ran {ran}: rebuild it with `python -m syslogbench setup`"
        )
        return code or 3
    return code


def not_applicable(
    profile: profiles.Profile,
    cfg: settings.Settings,
    scenario: scenarios.Scenario,
    reasons: list[str],
    results_dir: Path,
) -> int:
    """A combination the daemon cannot do is a result too: verdict n/a, with the reason."""
    reason = f"{profile.profile} cannot run scenario {scenario.id}: {'; '.join(reasons)}"
    daemon = result.Daemon(profile=profile.profile, name=profile.daemon, version=profile.version,
                           package=profile.package, image=profile.image, settings=profile.settings)  # fmt: skip
    # The watcher reads the same facts from /proc in its container, which shares this machine's kernel.
    host = machine.host_facts(docker_version=docker_version())
    data = result.not_applicable(cfg, scenario, daemon, host, reason, datetime.now(UTC)).to_dict()
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"{data['run_id']}.json"
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    log(f"n/a: {reason}; recorded in {path}")
    return 4


def check(profile_name: str, overrides: dict[str, str]) -> None:
    profile = profiles.resolve(profile_name)
    cfg, _ = run_env(overrides)
    scenario = scenarios.load(cfg.scenario)
    if reasons := scenarios.unsupported(scenario, profile.features):
        log(f"n/a: {profile.profile} cannot run scenario {scenario.id}: {'; '.join(reasons)}")
    log(f"ok: profile {profile.profile}, scenario {scenario.id}, {cfg.expected_messages:,} messages expected")
    if profile.registry_image:
        log(
            f"notice: {profile.profile} builds FROM the registry image {profile.registry_image}: needs Docker Hub"
        )
    for notice in host_notices(cfg):
        log(f"notice: {notice}")
