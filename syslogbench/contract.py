"""The contract between the containers, written once: ports, volumes, control names, env names.

docs/DESIGN.md's protocol table maps onto this module one to one. Stdlib only: it is imported in every
Python image, by the host side, and its env names reach supervise.sh through compose.yaml.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

# -- the network ---------------------------------------------------------------------------------------
CENTRAL_HOST = "central"  # the network alias every daemon profile's service answers to
CENTRAL_PORT = 514  # syslog, TCP, UDP and TLS alike
LASTHOP_HOST = "lasthop"  # the relay target's compose service
LASTHOP_PORT = 1514
# The network every service of a stack joins (a swarm names it <stack>_bench).
NETWORK = "bench"
# On a swarm, the node label that places a service: the daemon on the central node, senders on the others.
ROLE_LABEL = "syslogbench.role"
CENTRAL_ROLE = "central"
GENERATOR_ROLE = "generator"
# The control channel (syslogbench/rig/channel.py): the generators reach the watcher here, over the network.
WATCHER_HOST = "watcher"
CONTROL_PORT = 5140
# Its requests, one JSON line each, in the order of docs/DESIGN.md's channel table (a unit test holds the two
# equal): each is answered by one line.
CHANNEL_OPS = ("hello", "listening", "ready", "start", "ledger", "end", "generator", "finish", "clock")
# A capacity run's trials (syslogbench/rig/trials.py, docs/capacity.md), served on the same channel.
TRIAL_OPS = ("trial", "trial_ready", "trial_ledger", "trial_run", "trial_end")
# On Swarm no directory of the user's is mounted on the central node: the watcher prints the result on its
# output as `<prefix> <i>/<n> <base64 of gzip'd JSON>` lines, which `syslogbench run --swarm` reads back with
# `docker service logs` (short lines: Docker's log drivers cut lines at 16 KiB).
RESULT_LINE_PREFIX = "syslogbench-result"
RESULT_LINE_CHARS = 4000

# -- where each container mounts the volumes (compose.yaml; the host writes them into overrides and stack files)
CONTROL_MOUNT = "/bench/control"
LOG_MOUNT = "/var/log/bench"
QUEUE_MOUNT = "/var/spool/bench-queue"
VOLUME_MOUNTS = {"control": CONTROL_MOUNT, "logs": LOG_MOUNT, "queue": QUEUE_MOUNT}
# In the logs volume: the DONE lines alone, which SEC follows (a daemon's config writes them there).
DONE_LOG = "done.log"


def volume(name: str) -> str:
    """A named volume at its mount point, as compose and stack files write it: `control:/bench/control`."""
    return f"{name}:{VOLUME_MOUNTS[name]}"


# -- the environment supervise.sh reads (POSIX sh: it cannot import this module) ------------------------------
# Name -> the default supervise.sh falls back to (None: no default). A unit test reads supervise.sh and checks
# that it uses exactly these names, with these defaults.
SUPERVISOR_ENV: dict[str, str | None] = {
    "CONTROL_DIR": CONTROL_MOUNT,  # where the control volume is mounted
    "CENTRAL_PORT": str(CENTRAL_PORT),  # where readiness is looked for
    "STOP_GRACE": "60",  # seconds from SIGTERM to SIGKILL
    "MAX_LIFETIME": "7200",  # seconds: if the watcher vanishes, do not run forever
    "SCENARIO": "seed2014",  # picks the rendered config linked to active.conf
    "TUNING": "default",  # and the folder it is in (TUNING_FOLDERS)
    "VERSION_CMD": None,  # set by the daemon's Dockerfile: prints the daemon's version
}

# -- waits before the start: the watcher ends a run that starts too slowly, and says what was slow ---------------
# The watcher waits READY_TIMEOUT for each in turn: the daemon's manifest, the daemon listening, every sender
# ready. A sender or generator waits for the daemon's port and for the start at least that whole budget (and
# is answered at once when the watcher finishes instead): one that gave up first would exit, compose would stop
# every container, and the run would end as "senders not ready" with nothing saying why.
READY_TIMEOUT = float(os.environ.get("READY_TIMEOUT", "300"))
START_WAIT = 3 * READY_TIMEOUT + 60  # and the start snapshot (30 s) and SEC's start, with room to spare

# -- what ended a run: the result's end.trigger (results/schema.json's enum; a unit test holds the two equal) -----


class Trigger(StrEnum):
    SEC = "sec"  # SEC's SingleWithThreshold fired
    ALL_DONE_WITHOUT_SEC = "all-done-without-sec"  # every DONE arrived, but not within DONE_WINDOW
    UDP_QUIET = "udp-quiet"  # over UDP a DONE was lost; every ledger was in and the output went quiet
    TIMEOUT = "timeout"  # RUN_TIMEOUT passed
    DAEMON_EXITED = "daemon-exited"
    SENDER_FAILED = "sender-failed"
    NOT_STARTED = "not-started"  # the run never reached its start
    DONE_IN_OUTPUT = "done-in-output"  # --config: every DONE seen in some output file
    OUTPUT_QUIET = "output-quiet"  # --config: the output stopped growing for OUTPUT_QUIET s
    NO_OUTPUT = "no-output"  # --config: nothing written under /var/log


# -- a capacity search (docs/capacity.md): the host sets this on the watcher and the generators -----------------
DEFAULT_LATENCY_BOUND_S = 1.0  # LATENCY_BOUND: a message later than this after its intended time is lost


@dataclass(frozen=True)
class CapacityEnv:
    """The environment of a capacity search: CAPACITY=1 serves trials until the host ends them,
    LATENCY_BOUND is the search's bound, CAPACITY_MAX_S how long the watcher serves at most. compose.yaml
    passes these names on (a unit test holds it to NAMES); the host writes them, the rig reads them."""

    latency_bound_s: float = DEFAULT_LATENCY_BOUND_S
    max_s: float = 0.0

    NAMES = ("CAPACITY", "LATENCY_BOUND", "CAPACITY_MAX_S")

    def to_env(self) -> dict[str, str]:
        return {
            "CAPACITY": "1",
            "LATENCY_BOUND": str(self.latency_bound_s),
            "CAPACITY_MAX_S": str(self.max_s),
        }

    @staticmethod
    def on(env: Mapping[str, str]) -> bool:
        """Is this a capacity search's container?"""
        return bool(env.get("CAPACITY"))

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> CapacityEnv:
        """The search's environment; ValueError saying which name is missing or not a number."""
        try:
            bound = float(env.get("LATENCY_BOUND") or DEFAULT_LATENCY_BOUND_S)
            return cls(bound, float(env["CAPACITY_MAX_S"]))
        except KeyError:
            raise ValueError("CAPACITY_MAX_S is not set: the host sets it for a capacity search") from None


# The machine's fingerprint (syslogbench/rig/fingerprintprobes.py) as JSON: `syslogbench run` measures it just before
# `compose up` and hands it to the watcher in this variable; without it the watcher measures one itself.
FINGERPRINT_ENV = "FINGERPRINT"

# -- the volumes, as each container mounts them -------------------------------------------------------------
CONTROL_DIR = Path(os.environ.get("CONTROL_DIR", SUPERVISOR_ENV["CONTROL_DIR"] or ""))
LOG_DIR = Path(os.environ.get("LOG_DIR", LOG_MOUNT))
QUEUE_DIR = Path(os.environ.get("QUEUE_DIR", QUEUE_MOUNT))
RESULTS_DIR_IN_WATCHER = Path("/results")
# The key under which the watcher sends the daemon's UDP buffer sysctls with the first trial's machine.
UDP_BUFFERS_KEY = "udp_buffers"
QUEUE_CAPACITY_BYTES = 1024**3  # syslog-ng disk-buffer size; rsyslog queue.maxDiskSpace
# The logs volume is full below this much free space: one message is about 100 bytes, but a file system hands
# out whole blocks, and a volume full to the last block shows a few KiB free at most.
LOGS_FULL_BELOW_BYTES = 64 * 1024
# The watcher's memory limit (compose.yaml, mem_limit) and what it needs beside its tally of one byte per
# sequence number of every sender (rig/reconcile.py): Python, SEC, one 4 MiB read and its list of keys.
WATCHER_MEM = 384 * 1024**2
WATCHER_OWN_BYTES = 96 * 1024**2
TLS_SUBDIR = "tls"  # under CONTROL_DIR: a TLS scenario's CA, server certificate and key

# -- the daemon's image (daemons/Dockerfile, daemons/_common/supervise.sh) ---------------------------------------
DAEMON_CONFIG_DIR = "/etc/syslogbench"  # the version's folder: manifest, scenarios/<id>.conf
# The rendered config of a scenario, and the link the supervisor points at it: each family's stage in
# daemons/Dockerfile starts the daemon on this link.
SCENARIO_CONFIG = DAEMON_CONFIG_DIR + "/scenarios/{scenario}.conf"
# The folder of each TUNING's rendered configs in a version's folder (and so under DAEMON_CONFIG_DIR). Beside
# each tuned config, <scenario>.yaml names its knobs; the supervisor copies it to the control volume
# (DaemonFiles.tuning) for the watcher's result.
TUNING_FOLDERS = {"default": "scenarios", "tuned": "tuned"}
ACTIVE_CONFIG = DAEMON_CONFIG_DIR + "/active.conf"

# -- the output files in the logs volume, as our daemon configs name them --------------------------------------
# One file per facility and severity (rsyslog, syslog-ng): where each line is filed is checked (misfiled).
SPLIT_RE = re.compile(r"^test\.[A-Za-z0-9_-]+\.facility\.(\d+)\.severity\.(\d+)\.log$")
# One unsplit file (the baseline receiver; the "one plain file" destination): no filing to check.
PLAIN_RE = re.compile(r"^test\.[A-Za-z0-9_-]+\.all\.log$")
OUTPUT_RE = re.compile(f"{SPLIT_RE.pattern}|{PLAIN_RE.pattern}")
DONE_LOG = "done.log"  # every DONE message, written by the SEC rule's input (docs/DESIGN.md)
# The watcher's read size over the output. 4 MiB holds about 40,000 seed lines: the per-read cost vanishes
# beside the per-line work. The compiled rig's reconciliation reads the same (rig-rust/src/reconcile/blocks.rs
# BLOCK_BYTES), and cuts a longer line there (LONGEST_LINE).
BLOCK_BYTES = 4 * 2**20

# -- the control directory: every name the containers exchange, relative to its root (docs/DESIGN.md) ---------


@dataclass(frozen=True)
class DaemonFiles:
    """`daemon/`: what the supervisor says about the daemon under test."""

    dir: Path

    @property
    def version(self) -> Path:
        return self.dir / "version"  # the daemon's version as it prints it

    @property
    def base(self) -> Path:
        return self.dir / "base"  # the base image marker

    @property
    def tuning(self) -> Path:
        # TUNING=tuned: the knobs of the config that runs (written before the manifest)
        return self.dir / "tuning.yaml"

    @property
    def manifest(self) -> Path:
        return self.dir / "manifest.yaml"  # written last: the watcher decides n/a from it

    @property
    def ready(self) -> Path:
        return self.dir / "ready"

    @property
    def buffers(self) -> Path:
        # "rmem_default N" and "rmem_max N" lines: the daemon's network namespace's socket buffer sysctls
        return self.dir / "buffers"

    @property
    def restarting(self) -> Path:
        # the supervisor began the restart: the daemon is stopping (up to STOP_GRACE), then starts again
        return self.dir / "restarting"

    @property
    def restarted(self) -> Path:
        return self.dir / "restarted"

    @property
    def exit(self) -> Path:
        return self.dir / "exit"


@dataclass(frozen=True)
class Control:
    """The control volume's names, built from its root; nothing else spells a control path."""

    root: Path

    @property
    def transport(self) -> Path:
        return self.root / "transport"

    @property
    def run_json(self) -> Path:
        return self.root / "run.json"

    @property
    def tls(self) -> Path:
        return self.root / TLS_SUBDIR

    def tls_file(self, name: str) -> Path:
        return self.tls / name

    @property
    def daemon(self) -> DaemonFiles:
        return DaemonFiles(self.root / "daemon")

    @property
    def go(self) -> Path:
        return self.root / "go"  # the watcher's answer: the daemon can run this scenario

    @property
    def unsupported(self) -> Path:
        return self.root / "unsupported"  # the watcher's answer: it cannot (the reason)

    @property
    def samples(self) -> Path:
        return self.root / "samples.log"

    @property
    def generators(self) -> Path:
        return self.root / "generators"

    def generator(self, host: int | str) -> Path:
        return self.generators / f"host{host}.json"

    @property
    def hosts(self) -> Path:
        return self.root / "hosts"

    @property
    def ready_dir(self) -> Path:
        return self.root / "ready"

    def ready(self, sender: str) -> Path:
        return self.ready_dir / sender

    @property
    def start(self) -> Path:
        return self.root / "start"

    @property
    def ledgers(self) -> Path:
        return self.root / "ledgers"

    def ledger(self, sender: str) -> Path:
        return self.ledgers / f"{sender}.json"

    @property
    def snapshots(self) -> Path:
        return self.root / "snapshots"

    def snapshot_request(self, name: str) -> Path:
        return self.snapshots / f"{name}.request"

    def snapshot(self, name: str) -> Path:
        return self.snapshots / name

    @property
    def stop(self) -> Path:
        return self.root / "stop"

    @property
    def restart(self) -> Path:
        return self.root / "restart"

    @property
    def lasthop_cpu(self) -> Path:
        return self.root / "lasthop" / "cpu.json"

    def lasthop_cpu_request(self, name: str) -> Path:
        return self.root / "lasthop" / f"{name}.request"

    def lasthop_cpu_at(self, name: str) -> Path:
        return self.root / "lasthop" / f"cpu-{name}.json"

    @property
    def drained(self) -> Path:
        return self.root / "lasthop" / "drained.json"

    @property
    def finish(self) -> Path:
        return self.root / "finish"


def protocol_names() -> list[str]:
    """Every control name relative to the root, `<placeholders>` for the variable parts, in the order of
    docs/DESIGN.md's protocol table (a unit test holds the two equal)."""
    c = Control(Path())
    names = [c.transport, c.run_json, *(c.tls_file(n) for n in ("ca.pem", "server.pem", "server.key"))]
    names += [c.daemon.version, c.daemon.tuning, c.daemon.manifest, c.daemon.base, c.go, c.unsupported]
    names += [c.samples]
    names += [
        c.generator("<i>"),
        c.daemon.ready,
        c.daemon.buffers,
        c.hosts / "<i>",
        c.ready("host<i>-s<j>"),
        c.start,
    ]
    names += [c.ledger("host<i>-s<j>"), c.snapshot_request("<name>"), c.snapshot("<name>"), c.stop]
    names += [c.restart, c.daemon.restarting, c.daemon.restarted, c.daemon.exit, c.lasthop_cpu]
    names += [c.lasthop_cpu_request("<name>"), c.lasthop_cpu_at("<name>"), c.drained, c.finish]
    return [str(name) for name in names]


# -- images -------------------------------------------------------------------------------------------------
IMAGE_PREFIX = "syslogbench"
DEFAULT_IMAGE_TAG = "local"


def image_tag() -> str:
    """IMAGE_TAG lets two checkouts on one machine build and run their own images side by side."""
    return os.environ.get("IMAGE_TAG") or DEFAULT_IMAGE_TAG


def image_name(role: str, tag: str | None = None) -> str:
    """syslogbench/<profile or role>:<tag>."""
    return f"{IMAGE_PREFIX}/{role}:{tag or image_tag()}"


# -- writing to the control volume --------------------------------------------------------------------------


def write_atomic(path: Path, text: str) -> None:
    """Write then rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text)
    tmp.replace(path)


def write_json(path: Path, data: object) -> None:
    write_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def read_json(path: Path) -> dict:
    return json.loads(path.read_text())


# -- verdicts and exit codes: one meaning each, written here only -------------------------------------------
# The README's exit-code table is this table (tests/unit/test_docs.py holds the two equal). The watcher, `syslogbench
# run`, `matrix`, plain compose and the CLI all exit with these codes; a result's verdict is one of the names.
MEANINGS = {
    # The same over every transport: over UDP, where the drop rate is the figure (the result's `udp` block),
    # a run that lost any datagram is `loss` too, so a reader of `pass` never misses a loss.
    "pass": "every message arrived exactly once, in its file: none lost, duplicated, misfiled or cut",
    "loss": "the run ended, and some message was lost, duplicated, misfiled or cut (over UDP: any drop)",
    "bad-input": "refused before any container started: the one line printed says what to change",
    "error": "the run could not be measured: a container died, a wait ran out, a tool failed",
    "n/a": "the daemon cannot run this scenario; the result says why",
    "timeout": "the DONE threshold did not fire within RUN_TIMEOUT",
    # Not verdicts: how the command itself was ended. Whatever it had started is stopped and removed.
    "interrupted": "Ctrl-C (SIGINT) ended the command (128 + SIGINT, as a shell reports it)",
    "terminated": "SIGTERM ended the command (kill, a CI job cancelled; 128 + SIGTERM)",
}
EXIT_CODES = {
    "pass": 0,
    "loss": 1,
    "bad-input": 2,
    "error": 3,
    "n/a": 4,
    "timeout": 5,
    "interrupted": 130,
    "terminated": 143,
}
