"""The contract between the containers, written once: ports, volumes, control names, env names.

docs/DESIGN.md's protocol table maps onto this module one to one. Stdlib only: it is imported in every
Python image, by the host side, and its env names reach supervise.sh through compose.yaml.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# -- the network ---------------------------------------------------------------------------------------
CENTRAL_HOST = "central"  # the network alias every daemon profile's service answers to
CENTRAL_PORT = 514  # syslog, TCP, UDP and TLS alike
LASTHOP_HOST = "lasthop"  # the relay target's compose service
LASTHOP_PORT = 1514

# -- the volumes, as each container mounts them -------------------------------------------------------------
CONTROL_DIR = Path(os.environ.get("CONTROL_DIR", "/bench/control"))
LOG_DIR = Path(os.environ.get("LOG_DIR", "/var/log/bench"))
QUEUE_DIR = Path(os.environ.get("QUEUE_DIR", "/var/spool/bench-queue"))
RESULTS_DIR_IN_WATCHER = Path("/results")
QUEUE_CAPACITY_BYTES = 1024**3  # syslog-ng disk-buffer size; rsyslog queue.maxDiskSpace
TLS_SUBDIR = "tls"  # under CONTROL_DIR: a TLS scenario's CA, server certificate and key

# -- images -------------------------------------------------------------------------------------------------
IMAGE_PREFIX = "syslogbench"
DEFAULT_IMAGE_TAG = "local"


def image_name(role: str, tag: str | None = None) -> str:
    """syslogbench/<profile or role>:<tag>; IMAGE_TAG lets two checkouts keep their own images apart."""
    return f"{IMAGE_PREFIX}/{role}:{tag or os.environ.get('IMAGE_TAG') or DEFAULT_IMAGE_TAG}"


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


# -- exit codes: one meaning each, from the watcher, `syslogbench run`, `syslogbench matrix` and the CLI ------
EXIT_CODES = {
    "pass": 0,  # every message arrived exactly once
    "loss": 1,  # the run ended, and some message was lost, duplicated, misfiled or cut
    "bad-input": 2,  # refused before any container started: a setting, scenario or profile to change
    "error": 3,  # the run could not be measured: a container died, a wait ran out, a tool failed
    "n/a": 4,  # the daemon cannot run this scenario (a result says why)
    "timeout": 5,  # the DONE threshold did not fire within RUN_TIMEOUT
}
