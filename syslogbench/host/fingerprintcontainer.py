"""The machine's fingerprint, measured just before `compose up` (the figures: syslogbench/rig/fingerprintprobes.py).

A one-shot container of the watcher image gets the daemon's own limits, as compose gives them to the daemon
service (cpu_period 100000, cpu_quota CENTRAL_CPUS x 100000, mem_limit and memswap_limit CENTRAL_MEM), and a
fresh anonymous volume of Docker's default driver, the one compose's `logs` volume uses; `--rm` removes both.
No network but loopback, no capability: it only times work in its own files and processes. It is named after
the compose project (<project>-fingerprint), like the run's other containers.
"""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from syslogbench import contract
from syslogbench.host.compose import APART, project_name
from syslogbench.model import result, settings
from syslogbench.model.result import Fingerprint, ResultError

MOUNT = str(contract.LOG_DIR)  # where the daemon's container mounts the logs volume
# About 3 s on a quiet 2-core machine, up to 40 s with load 20 on it (the container's start, mostly); past
# this the engine is stuck, the container is removed, and the watcher measures its own.
TIMEOUT_S = 120


def command(cfg: settings.Settings, image: str, name: str) -> list[str]:
    """docker run for the fingerprint, with the daemon service's limits."""
    return [
        "docker", "run", "--rm", *APART, "--name", name, "--network", "none",
        "--cpu-period", "100000", "--cpu-quota", f"{cfg.central_cpus}00000",
        "--memory", str(cfg.central_mem), "--memory-swap", str(cfg.central_mem),
        "--mount", f"type=volume,dst={MOUNT}",
        "--cap-drop", "ALL", "--security-opt", "no-new-privileges:true", "--pids-limit", "64",
        "--user", "0:0", "--entrypoint", "python3", image,
        "-m", "syslogbench.rig.fingerprintprobes", f"{MOUNT}/fingerprint",
    ]  # fmt: skip


def take(cfg: settings.Settings, image: str | None = None) -> tuple[Fingerprint | None, str]:
    """The fingerprint (its wall time included), or None and why not."""
    began, name = time.monotonic(), f"{project_name()}-fingerprint"
    try:
        done = subprocess.run(
            command(cfg, image or contract.image_name("watcher"), name),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
    except (OSError, subprocess.SubprocessError) as error:
        remove(name)  # the client is gone, the container may not be
        return None, f"the fingerprint container failed: {error}"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"the fingerprint container exited with code {done.returncode}: {last}"
    try:
        found = Fingerprint.from_json(done.stdout.strip())
    except ResultError as error:
        return None, f"the fingerprint container printed no fingerprint: {error}"
    if found is None:
        return None, "the fingerprint container printed nothing"
    return replace(found, wall_s=round(time.monotonic() - began, 3)), ""


def remove(name: str) -> None:
    # If even this fails there is nothing more to do from here; the name says whose container it is.
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, timeout=TIMEOUT_S)


def summary(found: Fingerprint) -> str:
    """One line, e.g. "cpu 21.9M loops/s, file_churn 755k ops/s, loopback_tcp 2,971 MB/s (2.8 s)"."""
    parts = [f"{name} {short(figure.value)} {figure.unit}" for name, figure in found.figures().items()]
    took = found.wall_s if found.wall_s is not None else found.seconds
    return f"{', '.join(parts)} ({took:.1f} s)"


def short(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.1f}M"
    if value >= 1e5:
        return f"{value / 1e3:.0f}k"
    return f"{value:,.0f}"


def cov(values: Sequence[float]) -> float:
    return result.cov(values) or 0.0  # one fingerprint, or the machine gave 0: no spread to show


def spread_lines(found: Sequence[Fingerprint]) -> list[str]:
    """Per figure over several fingerprints: the median and CoV per wall second and per CPU second."""
    lines = []
    for name in found[0].figures():
        figures = [f.figures()[name] for f in found]
        wall = [f.value for f in figures]
        per_cpu = [f.per_cpu_s for f in figures if f.per_cpu_s is not None]
        line = f"{name}: {statistics.median(wall):,.0f} {figures[0].unit} (CoV {cov(wall):.1%})"
        if per_cpu:
            line += f", {statistics.median(per_cpu):,.0f} per CPU s (CoV {cov(per_cpu):.1%})"
        lines.append(line + f", {statistics.median(f.seconds for f in figures):.2f} s each")
    walls = [f.wall_s for f in found if f.wall_s is not None]
    if walls:
        lines.append(
            f"took {statistics.median(walls):.1f} s each (median; {min(walls):.1f}-{max(walls):.1f} s)"
        )
    return lines


def main(cfg: settings.Settings, times: int, log: Callable[[str], None]) -> int:
    """`syslogbench fingerprint`: this machine's fingerprint, `times` times, and its spread."""
    found = []
    for _ in range(times):
        one, why = take(cfg)
        if one is None:
            log(f"error: {why}: build the watcher image first (python -m syslogbench setup --profile P)")
            return contract.EXIT_CODES["error"]
        log(f"fingerprint: {summary(one)}")
        found.append(one)
    for line in spread_lines(found) if times > 1 else []:
        log(line)
    return contract.EXIT_CODES["pass"]
