"""A run's settings and compose environment: .env, then the shell, then the command line's pairs."""

from __future__ import annotations

import os
import socket
import subprocess

from syslogbench.host.compose import ROOT
from syslogbench.model import settings

ENV_FILE = ROOT / ".env"


def run_env(overrides: dict[str, str]) -> tuple[settings.Settings, dict[str, str]]:
    """The validated settings and the environment for compose (shell, then overrides, over .env).

    Besides .env's keys, the shape of the load (HOSTS, SENDERS_PER_HOST, MESSAGES_PER_SENDER) may be set:
    the run is then a variant of the scenario. GENERATORS starts as many generator containers as it has hosts.
    Every problem is listed at once: keys the scenario fixes, unknown keys, and each bad value.
    """
    env_values = settings.read_env_file(ENV_FILE, os.environ)
    known = {*env_values, *settings.SHAPE}
    problems = settings.env_file_problems(env_values, ENV_FILE.name)
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
        # In bytes: the daemons' configs take a number (syslog-ng's so-rcvbuf() has no "4m").
        "UDP_RCVBUF": "" if cfg.udp_rcvbuf is None else str(cfg.udp_rcvbuf),
        "DOCKER_VERSION": docker_version(),
        "NODE_HOSTNAME": socket.gethostname(),
    }
    return cfg, env


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
