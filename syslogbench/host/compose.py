"""The one way the host side drives Docker Compose: command lines, up within a time limit, down, ps, and the
daemon's output in the logs volume.

`syslogbench run` (host/onehost.py), the matrix, the calibration's set-up and the integration tests all
go through here, so a run is started, bounded and cleaned up the same way whoever starts it.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from syslogbench import contract

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "compose.yaml"
# Reads every file of the logs volume (a user's config may write into directories there) and prints them as
# one JSON object of base64 strings, keyed by the path under the volume.
READ_LOGS = (
    "import os,json,base64;d='/l';"
    "print(json.dumps({os.path.relpath(os.path.join(r,n),d): base64.b64encode(open(os.path.join(r,n),'rb')"
    ".read()).decode() for r,_,ns in os.walk(d) for n in ns}))"
)


DOCKER_TIMEOUT_S = 60  # ps and inspect answer in a second; an engine that does not is itself the fault
# RFC 3339 with nanoseconds, as the engine writes State.FinishedAt; Python parses microseconds at most.
ENGINE_TIME = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$")


# Compose labels every image it builds with the building project and service, and a container of that image
# inherits them: a helper `docker run` of the watcher's image would be taken by that project's `compose up`
# for its watcher, and its exit would end that run ("Aborting on container exit"; seen with two test workers,
# where a logs-volume read of one worker's run ended the other's). Every helper container sets its own.
APART = ["--label", "com.docker.compose.project=", "--label", "com.docker.compose.service="]


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
class ContainerState:
    """How one container of the run ended, as the engine tells it (`ps -a`, then `docker inspect`)."""

    name: str
    service: str
    state: str  # running, exited, created, ...
    exit_code: int | None
    oom_killed: bool = False
    finished_at: datetime | None = None  # None while it runs, or never ran

    def describe(self) -> str:
        """e.g. "syslogbench-generator-2 exited with code 137 (SIGKILL) at 05:50:01.123 UTC"."""
        if self.state != "exited":
            return f"{self.name} is {self.state}"
        text = f"{self.name} exited with code {self.exit_code}{signal_of(self.exit_code)}"
        if self.oom_killed:
            text += ", killed for memory (OOMKilled)"
        if self.finished_at is not None:
            text += f" at {self.finished_at:%H:%M:%S.%f}"[:-3] + " UTC"
        return text


def signal_of(code: int | None) -> str:
    """Exit codes above 128 are 128 + the signal that ended the process."""
    if code is None or not 128 < code < 128 + signal.NSIG:
        return ""
    return f" ({signal.Signals(code - 128).name})" if code - 128 in signal.valid_signals() else ""


def engine_time(text: str) -> datetime | None:
    """State.FinishedAt; the zero time ("0001-01-01T00:00:00Z") means it has not finished."""
    match = ENGINE_TIME.match(text or "")
    if match is None or match.group(1).startswith("0001-"):
        return None
    fraction = (match.group(2) or "0")[:6].ljust(6, "0")
    zone = "+00:00" if match.group(3) == "Z" else match.group(3)
    return datetime.fromisoformat(f"{match.group(1)}.{fraction}{zone}")


STOPPED_BY_COMPOSE = 143  # 128 + SIGTERM


def ended_before_the_watcher(states: list[ContainerState]) -> list[ContainerState]:
    """The containers that ended badly (a non-zero code or OOMKilled) before the watcher did, first first:
    the first is the one whose exit made compose stop the others. After the watcher's own end, compose
    stops every container anyway, so what ends then says nothing. Nor does 143: compose's own SIGTERM, which
    can reach a container a moment before the watcher ends (a SIGTERM from elsewhere is in the engine's
    events, host/events.py)."""
    watcher_end = next((c.finished_at for c in states if c.service == "watcher"), None)
    early = [
        c
        for c in states
        if c.service != "watcher"
        and c.finished_at is not None
        and (c.exit_code not in (0, STOPPED_BY_COMPOSE) or c.oom_killed)
        and (watcher_end is None or c.finished_at <= watcher_end)
    ]
    return sorted(early, key=lambda c: c.finished_at or datetime.min)


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
        """Stop and remove the containers (and with volumes, the project's volumes); an engine that does not
        answer within the stop time and DOCKER_TIMEOUT_S is left, so the run still ends."""
        args = ["down", *(["-v"] if volumes else []), "-t", str(stop_s)]
        try:
            subprocess.run(
                self.command(*args),
                env=dict(env),
                cwd=ROOT,
                capture_output=quiet,
                timeout=stop_s + DOCKER_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            print(
                f"syslogbench: docker compose down did not finish in {stop_s + DOCKER_TIMEOUT_S} s",
                flush=True,
            )

    def exec(
        self, env: Mapping[str, str], service: str, args: list[str], timeout_s: float
    ) -> subprocess.CompletedProcess:
        """A command in a running service's container (a capacity search's trials, host/capacity/command.py): its
        output captured; TimeoutExpired past timeout_s."""
        return subprocess.run(
            self.command("exec", "-T", service, *args),
            env=dict(env),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )

    def ps(self, env: Mapping[str, str]) -> list[dict]:
        """Every container of the project, exited ones included, as compose describes them."""
        done = subprocess.run(
            self.command("ps", "-a", "--format", "json"),
            env=dict(env),
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=DOCKER_TIMEOUT_S,
        )
        text = done.stdout.strip()
        if text.startswith("["):  # older compose: one JSON list; newer: one object per line
            return json.loads(text)
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def states(self, env: Mapping[str, str]) -> list[ContainerState]:
        """How each container of the project ended; [] when the engine does not answer (the result then
        says less, but is still written)."""
        try:
            listing = self.ps(env)
            names = [entry["Name"] for entry in listing]
            inspected = inspect(names) if names else []
        except (subprocess.SubprocessError, OSError, ValueError, KeyError):
            return []
        by_name = {entry.get("Name", "").lstrip("/"): entry.get("State", {}) for entry in inspected}
        return [state_of(entry, by_name.get(entry["Name"], {})) for entry in listing]

    def logs_volume(self) -> dict[str, bytes]:
        """The daemon's output files, read through a throwaway watcher container (the volume is root's)."""
        done = subprocess.run(
            [
                "docker",
                "run",
                "--rm",
                *APART,
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


def inspect(names: list[str]) -> list[dict]:
    done = subprocess.run(
        ["docker", "inspect", *names], capture_output=True, text=True, check=True, timeout=DOCKER_TIMEOUT_S
    )
    return json.loads(done.stdout)


def state_of(listed: dict, inspected: dict) -> ContainerState:
    """One container from `ps -a` (name, service, state, exit code) and `docker inspect` (.State)."""
    code = inspected.get("ExitCode", listed.get("ExitCode"))
    return ContainerState(
        name=listed["Name"],
        service=listed.get("Service", ""),
        state=inspected.get("Status", listed.get("State", "unknown")),
        exit_code=code if isinstance(code, int) else None,
        oom_killed=bool(inspected.get("OOMKilled", False)),
        finished_at=engine_time(inspected.get("FinishedAt", "")),
    )


def text_of(output: str | bytes | None) -> str:
    """What a timed-out process printed (bytes, even with text=True, on some Python versions)."""
    if isinstance(output, bytes):
        return output.decode(errors="replace")
    return output or ""
