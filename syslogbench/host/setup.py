"""`syslogbench setup`, and the build before every run: Compose v2, the base images, the images of the profiles."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from syslogbench import contract
from syslogbench.host import dockerrun, images, lock, prerequisites, profiles
from syslogbench.host.compose import ROOT, Compose, project_name
from syslogbench.host.log import log

HARNESS_SUITE = "bookworm"  # the watcher and generator images
# One set-up at a time per checkout; a first one on a bare machine took about 10 minutes.
TURN_WAIT_S = 1800.0


HARNESS_SERVICES = ["watcher", "generator"]


def setup(profile_names: list[str], skip_unreachable: bool = False) -> None:
    """Bases and images for these profiles. A registry-based profile whose image cannot be had is refused
    ("needs Docker Hub: ..."), or with skip_unreachable (set-up of every profile) left out with a notice."""
    with lock.taking_turns(f"setup-{ROOT}", TURN_WAIT_S) as held:
        if not held:
            log(f"setup: another set-up of {ROOT} has run for over {TURN_WAIT_S:.0f} s; building beside it")
        build(profile_names, skip_unreachable)


def build(profile_names: list[str], skip_unreachable: bool) -> None:
    prerequisites.ensure_compose(log)
    chosen = [profiles.resolve(name) for name in profile_names]
    chosen = [p for p in chosen if registry_ready(p, skip_unreachable)]
    suites = sorted({HARNESS_SUITE, images.RIG_SUITE, *(p.suite for p in chosen if p.suite)})
    images.ensure_bases(suites, log)
    images.build_rig(contract.image_tag(), log)
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
        dockerrun.offline_run(profile.image, ["cat", "/etc/syslogbench/manifest.yaml"]),
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
