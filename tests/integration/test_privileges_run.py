"""The privileges each service really gets from the compose files: user, capabilities, no-new-privileges.

The runs themselves (test_runs, test_relay_run, test_tls_run) pass with these users and capabilities; this
reads what the kernel gives each service's process, through `compose run` with the service's own settings.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from syslogbench.host.compose import Compose

from .conftest import PROJECT, ROOT, SMALL

# /proc/self/status's capability mask, as the kernel prints it: bit 1 DAC_OVERRIDE, bit 10 NET_BIND_SERVICE.
NONE, DAC_OVERRIDE, NET_BIND_SERVICE = f"{0:016x}", f"{1 << 1:016x}", f"{1 << 10:016x}"
READ = "id -u; id -G; grep -E '^(CapEff|CapBnd|NoNewPrivs):' /proc/self/status"


def status_of(profile: str, service: str) -> list[str]:
    env = {**os.environ, **SMALL, "GENERATORS": SMALL["HOSTS"]}
    runner = Compose(profile, PROJECT)
    command = runner.command("run", "--rm", "--no-deps", "--entrypoint", "sh", service, "-c", READ)
    try:
        done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    finally:
        runner.down(env, stop_s=5, volumes=True, quiet=True)
    assert done.returncode == 0, done.stderr
    return [" ".join(line.split()) for line in done.stdout.splitlines()]


@pytest.mark.parametrize(
    ("service", "uid", "groups", "caps"),
    [
        ("watcher", "0", "0 10001", DAC_OVERRIDE),
        ("generator", "10001", "10001", NONE),
        ("lasthop", "10001", "10001", NONE),
        ("rsyslog-8.2504", "0", "0", NET_BIND_SERVICE),
    ],
)
def test_each_service_runs_with_only_its_own_privileges(
    built: None, service: str, uid: str, groups: str, caps: str
) -> None:
    profile = service if service.startswith("rsyslog") else "rsyslog-8.2504"
    assert status_of(profile, service) == [
        uid,
        groups,
        f"CapEff: {caps}",
        f"CapBnd: {caps}",
        "NoNewPrivs: 1",
    ]
