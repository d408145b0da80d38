"""Sender calibration: our generator and syslog-ng's loggen, each into a sink that discards, side by side.

    python -m syslogbench calibrate [--messages N] [--connections C]

The sink is the baseline receiver with --discard, so the figure is what the senders can deliver, not what a
daemon can take. Both senders run under the REMOTE_CPUS / REMOTE_MEM limits of one remote host.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import yaml

from syslogbench import contract
from syslogbench.contract import EXIT_CODES
from syslogbench.host import environment, setup
from syslogbench.host.compose import APART, ROOT
from syslogbench.host.log import log
from syslogbench.model import codec, settings
from syslogbench.model.ledger import Ledger, failures
from syslogbench.model.result import GeneratorReport, load

GENERATOR_IMAGE = contract.image_name("generator")
WAIT_S = 300
CALIBRATION_FILE = ROOT / "daemons" / "_calibration.yaml"


@dataclass(frozen=True)
class Sink:
    profile: str
    command: list[str]


@dataclass(frozen=True)
class Loggen:
    profile: str
    name: str
    command: str  # a bash command line: {messages}, {connections}, {host}, {port}
    rate: str  # its summary line: rate, count, seconds


@dataclass(frozen=True)
class Calibration:
    """daemons/_calibration.yaml: the sink and the other sender."""

    sink: Sink
    loggen: Loggen


def calibration(path: Path = CALIBRATION_FILE) -> Calibration:
    """The file, read strictly: a key that is not known, or one missing, is one line."""
    try:
        return codec.load(Calibration, yaml.safe_load(path.read_text()), path.name)
    except codec.CodecError as error:
        raise settings.SettingsError(f"{path}: {error}") from None


def docker(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=check)


def limits(cfg: settings.Settings) -> list[str]:
    return [
        "--cpu-period=100000",
        f"--cpu-quota={cfg.remote_cpus * 100000}",
        f"--memory={cfg.remote_mem}",
        f"--memory-swap={cfg.remote_mem}",
    ]


def start_sink(sink: Sink, network: str, name: str) -> None:
    entrypoint, *args = sink.command
    docker(
        "run", "-d", "--name", name, "--network", network, "--network-alias", contract.CENTRAL_HOST,
        "--entrypoint", entrypoint, contract.image_name(sink.profile), *args,
    )  # fmt: skip


def wait_files(directory: Path, pattern: str, count: int, container: str = "") -> None:
    deadline = time.monotonic() + WAIT_S
    while len(list(directory.glob(pattern))) < count:
        if container and docker("inspect", "-f", "{{.State.Running}}", container).stdout.strip() != "true":
            logs = docker("logs", container, check=False)
            raise RuntimeError(f"calibration: {container} stopped:\n{(logs.stdout + logs.stderr)[-2000:]}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"calibration: waited {WAIT_S} s for {count} x {directory / pattern}")
        time.sleep(0.05)


def run_ours(cfg: settings.Settings, network: str, connections: int, messages: int) -> dict[str, object]:
    """One generator container with `connections` senders, through the same control protocol as a run."""
    with tempfile.TemporaryDirectory(prefix="syslogbench-cal-") as tmp:
        ctl = Path(tmp)
        shape = {
            "hosts": 1,
            "senders_per_host": connections,
            "messages_per_sender": messages,
            "keep_logs": False,
        }
        run = replace(cfg, **shape, done_threshold=connections)
        contract.write_json(ctl / "run.json", {"settings": run.as_dict(), "calibration": True})
        # The sink, started before, stands in for the daemon: its supervisor would write daemon/ready once it
        # listens, which the senders wait for (channel op listening); each still retries until it connects.
        daemon = contract.Control(ctl).daemon
        daemon.ready.parent.mkdir(parents=True, exist_ok=True)
        daemon.ready.write_text("")
        suffix = uuid.uuid4().hex[:6]
        gateway, name = f"sbcal-ctl-{suffix}", f"sbcal-gen-{suffix}"
        # No watcher here: the control channel alone answers the generator from ctl, as this user (the
        # directory is this user's temporary one), and this side writes start and finish into ctl.
        docker("run", "-d", *APART, "--name", gateway, "--network", network, "--network-alias", contract.WATCHER_HOST,
               "--user", f"{os.getuid()}:{os.getgid()}", "-v", f"{ctl}:{contract.CONTROL_MOUNT}", GENERATOR_IMAGE,
               "python3", "-m", "syslogbench.rig.channel")  # fmt: skip
        docker("run", "-d", *APART, "--name", name, "--network", network, *limits(cfg), GENERATOR_IMAGE)
        try:
            wait_files(ctl / "ready", "host*", connections, name)
            (ctl / "start").write_text(f"{time.time()}\n")
            wait_files(ctl / "ledgers", "*.json", connections)
            # The end of the measured window, as the daemon's supervisor marks it in a run (there is no daemon
            # here): the generator then reports its CPU.
            daemon.exit.write_text("0\n")
            wait_files(ctl / "generators", "*.json", 1)
            ledgers = {
                path.stem: Ledger.from_json(contract.read_json(path), path.name)
                for path in (ctl / "ledgers").glob("*.json")
            }
            report = next((ctl / "generators").glob("*.json"))
            container = load(GeneratorReport, contract.read_json(report), report.name)
            (ctl / "finish").write_text("")
            docker("wait", name, check=False)
        finally:
            docker("rm", "-f", name, gateway, check=False)
            shutil.rmtree(ctl, ignore_errors=True)
    if bad := failures(ledgers):
        raise RuntimeError(f"calibration sender failed: {'; '.join(bad)}")
    total = sum(ledger.sent for ledger in ledgers.values())
    wall = max(ledger.send_s or 0.0 for ledger in ledgers.values())
    if container.cpu_user_s is None or container.cpu_system_s is None:
        raise RuntimeError("calibration: the generator did not report its CPU")
    cpu = container.cpu_user_s + container.cpu_system_s
    row = figures("syslogbench sender (sendfile)", total, wall, cpu)
    # Rendering happens before the start signal, outside the measured window; say what it costs too.
    render_cpu = sum(ledger.render_cpu_s or 0.0 for ledger in ledgers.values())
    row["render_cpu_s"] = round(render_cpu, 3)
    row["cpu_s_per_million_with_render"] = round((cpu + render_cpu) / total * 1e6, 3)
    return row


def run_loggen(
    loggen: Loggen, cfg: settings.Settings, network: str, connections: int, messages: int
) -> dict[str, object]:
    """loggen, all out, its CPU from the shell's `times` after it (daemons/_calibration.yaml)."""
    script = loggen.command.format(
        messages=messages, connections=connections, host=contract.CENTRAL_HOST, port=contract.CENTRAL_PORT
    )
    done = docker("run", "--rm", *APART, "--network", network, *limits(cfg), "--entrypoint", "bash",
                  contract.image_name(loggen.profile), "-c", script)  # fmt: skip
    return parse_loggen(done.stdout, loggen)


def parse_loggen(output: str, loggen: Loggen | None = None) -> dict[str, object]:
    """The summary line, and the children's user/system time from `times`."""
    loggen = loggen or calibration().loggen
    rate = re.search(loggen.rate, output)
    clock = re.findall(r"(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s", output)  # bash's `times`
    if rate is None or len(clock) < 2:
        raise RuntimeError(f"could not read loggen's output:\n{output[-2000:]}")
    user_m, user_s, system_m, system_s = clock[1]
    cpu = int(user_m) * 60 + float(user_s) + int(system_m) * 60 + float(system_s)
    return figures(loggen.name, int(rate.group(2)), float(rate.group(3)), cpu)


def figures(name: str, messages: int, seconds: float, cpu_s: float) -> dict[str, object]:
    return {
        "sender": name,
        "messages": messages,
        "seconds": round(seconds, 3),
        "msgs_per_s": round(messages / seconds, 1) if seconds else None,
        "cpu_s": round(cpu_s, 3),
        "cpu_s_per_million": round(cpu_s / messages * 1e6, 3) if messages else None,
    }


def calibrate(messages: int, connections: int, results_dir: Path) -> Path:
    cfg, _ = environment.run_env({})
    chosen = calibration()
    setup.setup([chosen.sink.profile, chosen.loggen.profile])
    network, sink = f"sbcal-{uuid.uuid4().hex[:6]}", f"sbcal-sink-{uuid.uuid4().hex[:6]}"
    docker("network", "create", "--internal", network)
    try:
        start_sink(chosen.sink, network, sink)
        rows = [
            run_ours(cfg, network, connections, messages),
            run_loggen(chosen.loggen, cfg, network, connections, messages),
        ]
    finally:
        docker("rm", "-f", sink, check=False)
        docker("network", "rm", network, check=False)
    out = results_dir / "calibration" / f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
    contract.write_json(out, {"connections": connections, "messages_per_connection": messages,
                             "remote_cpus": cfg.remote_cpus, "rows": rows})  # fmt: skip
    for row in rows:
        log(
            f"{row['sender']}: {row['messages']:,} messages in {row['seconds']} s = {row['msgs_per_s']:,.0f} msg/s, "
            f"{row['cpu_s']} CPU s ({row['cpu_s_per_million']} CPU s per million"
            + (f"; {row['cpu_s_per_million_with_render']} with rendering)" if "render_cpu_s" in row else ")")
        )
    log(f"written {out}")
    return out


def main(messages: int, connections: int, results_dir: Path) -> int:
    try:
        calibrate(messages, connections, results_dir)
    except (RuntimeError, TimeoutError, subprocess.CalledProcessError) as error:
        # A sender or loggen failed, or a wait ran out: nothing was measured.
        log(f"error: {error}")
        return EXIT_CODES["error"]
    return EXIT_CODES["pass"]
