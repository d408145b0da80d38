"""The seed's 2014 daemons (rsyslog 5 and 7, syslog-ng 3.3 and 3.5, NXLog CE) build FROM registry images.

Where a registry answers, their images are built and checked here like the others (test_runs.py runs the
full small benchmark and the daemon's own syntax check on every rendered config). Where none answers, those
tests skip and say so, and the tests below check the refusal a user gets instead.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from syslogbench.host import profiles
from syslogbench.host.compose import APART

from .conftest import ROOT, registry_unreachable

pytestmark = pytest.mark.integration
REGISTRY_PROFILES = [p for p in profiles.all_profiles() if p.registry_image]


def ids(profile: profiles.Profile) -> str:
    return profile.profile


@pytest.mark.parametrize("profile", REGISTRY_PROFILES, ids=ids)
def test_unreachable_registry_is_refused_before_any_container(profile: profiles.Profile) -> None:
    if registry_unreachable(profile) is None:
        pytest.skip(f"a registry answers here: {profile.profile} is built and run by test_runs.py instead")
    done = subprocess.run(
        [sys.executable, "-m", "syslogbench", "run", "--profile", profile.profile, "--results", "/tmp/none"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"error: needs Docker Hub: profile {profile.profile} builds FROM" in done.stdout
    assert "Container" not in done.stdout + done.stderr


@pytest.mark.parametrize("profile", REGISTRY_PROFILES, ids=ids)
def test_supervisor_runs_on_the_old_shell(request: pytest.FixtureRequest, profile: profiles.Profile) -> None:
    """supervise.sh is POSIX sh: it must parse with the image's own /bin/sh (wheezy's and trusty's dash) and
    answer --health with 1 (nothing listens) rather than a shell error."""
    if reason := registry_unreachable(profile):
        pytest.skip(reason)
    request.getfixturevalue("built")
    base = ["docker", "run", "--rm", *APART, "--network", "none", "--entrypoint", "/bin/sh", profile.image]
    parsed = subprocess.run([*base, "-n", "/usr/local/bin/supervise"], capture_output=True, text=True)
    assert parsed.returncode == 0, parsed.stderr
    health = subprocess.run([*base, "/usr/local/bin/supervise", "--health"], capture_output=True, text=True)
    assert health.returncode == 1, health.stderr
    version = subprocess.run([*base, "-c", profile.version_cmd], capture_output=True, text=True)
    assert profile.version in version.stdout + version.stderr
