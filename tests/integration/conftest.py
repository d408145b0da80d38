"""Real containers: real rsyslog, syslog-ng and SEC, at small scale."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from syslogbench.host import benchmark, images, profiles

ROOT = Path(__file__).resolve().parents[2]
# Separate names let two checkouts run their integration tests on one machine at once.
PROJECT = os.environ.get("TEST_PROJECT", "syslogbench-test")
SMALL = {"HOSTS": "2", "SENDERS_PER_HOST": "2", "MESSAGES_PER_SENDER": "2000", "RUN_TIMEOUT": "120"}
COMPOSE_TIMEOUT_S = 600


@dataclass
class Run:
    code: int
    result: dict
    output: str
    containers: list[dict]
    logs: dict[str, bytes]


def compose_command(profile: str, extra_files: list[Path], *args: str) -> list[str]:
    files = ["-f", str(ROOT / "compose.yaml")]
    for path in extra_files:
        files += ["-f", str(path)]
    return [
        "docker",
        "compose",
        "--project-directory",
        str(ROOT),
        "-p",
        PROJECT,
        *files,
        "--profile",
        profile,
        *args,
    ]


def containers(profile: str, extra_files: list[Path], env: dict[str, str]) -> list[dict]:
    done = subprocess.run(
        compose_command(profile, extra_files, "ps", "-a", "--format", "json"),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    text = done.stdout.strip()
    if text.startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def read_logs_volume() -> dict[str, bytes]:
    """The daemon's output files, read through a throwaway container (the volume is root's)."""
    script = (
        "import os,sys,json,base64;d='/l';"
        "print(json.dumps({n: base64.b64encode(open(os.path.join(d,n),'rb').read()).decode() for n in os.listdir(d)}))"
    )
    done = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            "-v",
            f"{PROJECT}_logs:/l:ro",
            f"syslogbench/watcher:{profiles.image_tag()}",
        ]
        + ["python3", "-c", script],
        capture_output=True,
        text=True,
        check=True,
    )
    import base64

    return {name: base64.b64decode(data) for name, data in json.loads(done.stdout).items()}


def registry_unreachable(profile: profiles.Profile) -> str | None:
    """Why a registry-based profile cannot be built here (the skip reason), or None when it can.

    Asked once per image and session (images caches the answer); a refused pull fails in under a second."""
    ref = profile.registry_image
    if ref is None or images.registry_image_available(ref):
        return None
    return f"registry unreachable: {profile.profile} needs Docker Hub to pull {ref}"


def daemon_params(wanted: Callable[[profiles.Profile], bool] = lambda p: True) -> list:
    """Every profile as a test parameter; registry-based ones skip, saying so, when no registry answers."""
    params = []
    for profile in filter(wanted, profiles.all_profiles()):
        reason = registry_unreachable(profile)
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        params.append(pytest.param(profile.profile, marks=marks, id=profile.profile))
    return params


@pytest.fixture(scope="session")
def built() -> None:
    """Bases and images for every profile that can be built here (registry-based ones need a registry);
    cached builds make this quick after the first time."""
    benchmark.setup([p.profile for p in profiles.all_profiles()], skip_unreachable=True)


@pytest.fixture
def bench(built: None, tmp_path: Path) -> Callable[..., Run]:
    def run(
        profile: str,
        overrides: dict[str, str] | None = None,
        config: Path | None = None,
        abort_on_exit: bool = True,
        extra_compose: str | None = None,
    ) -> Run:
        results = tmp_path / "results"
        results.mkdir(exist_ok=True)
        extra: list[Path] = []
        if config is not None:
            service = profiles.resolve(profile)
            override = tmp_path / "override.yaml"
            # The supervisor links active.conf to the scenario's config, so replace that file.
            target = f"/etc/syslogbench/scenarios/{(overrides or {}).get('SCENARIO', 'seed2014')}.conf"
            override.write_text(
                f"services:\n  {service.profile}:\n    volumes:\n      - {config}:{target}:ro\n"
            )
            extra.append(override)
        if extra_compose is not None:
            # A test's own compose override, e.g. a generator that trusts another CA.
            (tmp_path / "extra.yaml").write_text(extra_compose)
            extra.append(tmp_path / "extra.yaml")
        env = {**os.environ, **SMALL, "KEEP_LOGS": "1", **(overrides or {}), "RESULTS_DIR": str(results)}
        subprocess.run(compose_command(profile, extra, "down", "-v", "-t", "5"), env=env, capture_output=True)
        up = ["up", "--exit-code-from", "watcher"] if abort_on_exit else ["up"]
        try:
            done = subprocess.run(
                compose_command(profile, extra, *up),
                env=env,
                capture_output=True,
                text=True,
                timeout=COMPOSE_TIMEOUT_S,
            )
            listing = containers(profile, extra, env)
            logs = read_logs_volume()
        finally:
            subprocess.run(
                compose_command(profile, extra, "down", "-v", "-t", "5"), env=env, capture_output=True
            )
        files = sorted(results.glob("*.json"))
        assert len(files) == 1, f"expected one result file, got {files}\n{done.stdout[-4000:]}"
        return Run(
            done.returncode, json.loads(files[0].read_text()), done.stdout + done.stderr, listing, logs
        )

    return run
