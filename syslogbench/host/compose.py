"""The one way the host side drives Docker Compose: command lines, up within a time limit, down, ps, and the
daemon's output in the logs volume.

`syslogbench run` (host/benchmark.py), the matrix, the calibration's set-up and the integration tests all
go through here, so a run is started, bounded and cleaned up the same way whoever starts it.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from syslogbench import contract

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "compose.yaml"
# Reads every file of the logs volume and prints them as one JSON object of base64 strings.
READ_LOGS = (
    "import os,json,base64;d='/l';"
    "print(json.dumps({n: base64.b64encode(open(os.path.join(d,n),'rb').read()).decode() for n in os.listdir(d)}))"
)


def project_name() -> str:
    """The compose project; a second checkout on the same machine sets its own (with its own IMAGE_TAG)."""
    return os.environ.get("SYSLOGBENCH_PROJECT", "syslogbench")


@dataclass(frozen=True)
class Up:
    """How `compose up` ended: its exit code, or timed_out when it ran past its limit and was stopped."""

    code: int | None
    output: str = ""  # stdout and stderr, when captured
    timed_out: bool = False


@dataclass(frozen=True)
class Compose:
    """One daemon profile of one compose project, with optional extra compose files (a test's overrides)."""

    profile: str
    project: str = field(default_factory=project_name)
    files: tuple[Path, ...] = ()

    def command(self, *args: str) -> list[str]:
        # With any -f, compose reads only the files named: compose.yaml must then come first.
        files = (COMPOSE_FILE, *self.files) if self.files else ()
        named = [arg for path in files for arg in ("-f", str(path))]
        return [
            "docker", "compose", "--project-directory", str(ROOT), "-p", self.project,
            *named, "--profile", self.profile, *args,
        ]  # fmt: skip

    def up(
        self, env: Mapping[str, str], timeout_s: float, exit_from_watcher: bool = True, capture: bool = False
    ) -> Up:
        """Run until the watcher exits (its exit code is compose's), or at most timeout_s."""
        args = ["up", "--exit-code-from", "watcher"] if exit_from_watcher else ["up"]
        try:
            done = subprocess.run(
                self.command(*args),
                env=dict(env),
                cwd=ROOT,
                timeout=timeout_s,
                capture_output=capture,
                text=True,
            )
        except subprocess.TimeoutExpired as expired:
            return Up(None, text_of(expired.stdout) + text_of(expired.stderr), timed_out=True)
        return Up(done.returncode, (done.stdout or "") + (done.stderr or ""))

    def down(
        self, env: Mapping[str, str], stop_s: int = 30, volumes: bool = False, quiet: bool = False
    ) -> None:
        """Stop and remove the containers (and with volumes, the project's volumes)."""
        args = ["down", *(["-v"] if volumes else []), "-t", str(stop_s)]
        subprocess.run(self.command(*args), env=dict(env), cwd=ROOT, capture_output=quiet)

    def ps(self, env: Mapping[str, str]) -> list[dict]:
        """Every container of the project, exited ones included, as compose describes them."""
        done = subprocess.run(
            self.command("ps", "-a", "--format", "json"),
            env=dict(env),
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        text = done.stdout.strip()
        if text.startswith("["):  # older compose: one JSON list; newer: one object per line
            return json.loads(text)
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def logs_volume(self) -> dict[str, bytes]:
        """The daemon's output files, read through a throwaway watcher container (the volume is root's)."""
        done = subprocess.run(
            [
                "docker",
                "run",
                "--rm",
                "--network",
                "none",
                "-v",
                f"{self.project}_logs:/l:ro",
                contract.image_name("watcher"),
                "python3",
                "-c",
                READ_LOGS,
            ],  # fmt: skip
            capture_output=True,
            text=True,
            check=True,
        )
        return {name: base64.b64decode(data) for name, data in json.loads(done.stdout).items()}


def text_of(output: str | bytes | None) -> str:
    """What a timed-out process printed (bytes, even with text=True, on some Python versions)."""
    if isinstance(output, bytes):
        return output.decode(errors="replace")
    return output or ""
