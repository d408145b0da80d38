"""Fixtures and factories shared by the unit tests: the settings' environment and a result document."""

from __future__ import annotations

import copy
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from syslogbench import contract
from syslogbench.host import environment, fits
from syslogbench.rig import channel, compiled, control

# The compiled rig as a checkout builds it (make unit builds it first; compiled.BUILD says how by hand).
RIG = Path(__file__).resolve().parents[2] / "rig-rust" / "target" / "release" / "syslogbench-rig"


@pytest.fixture(autouse=True)
def rig_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test that reconciles (the watcher's included) runs the checkout's build of the compiled rig; where
    it is missing, the reconciliation fails saying how to build it."""
    monkeypatch.setenv(compiled.RIG_ENV, str(RIG))


@pytest.fixture
def rig(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The compiled rig (rig-rust/) for the tests that reconcile through it: $SYSLOGBENCH_RIG points at the
    checkout's release build."""
    if not RIG.exists():
        pytest.fail(
            f"the compiled rig is not built ({RIG} is missing): run `{compiled.BUILD}` (or `make unit`)"
        )
    monkeypatch.setenv(compiled.RIG_ENV, str(RIG))
    return RIG


@pytest.fixture
def control_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty control directory in place of the shared volume."""
    directory = tmp_path / "control"
    directory.mkdir()
    monkeypatch.setattr(control, "CONTROL", contract.Control(directory))
    return directory


@pytest.fixture
def watcher_channel(control_dir: Path, monkeypatch: pytest.MonkeyPatch) -> channel.Server:
    """The watcher's side of the control channel on a free loopback port, over control_dir; this process's
    links reach it."""
    server = channel.Server(contract.Control(control_dir), port=0)
    server.open()
    monkeypatch.setattr(channel, "WATCHER", "127.0.0.1")
    monkeypatch.setattr(channel, "PORT", server.port)
    monkeypatch.setattr(channel, "_links", {})
    yield server
    server.close(grace=0)


# --- the settings' environment ------------------------------------------------------------------------------

# Every key the settings read (model/settings.py), with .env's machine and the seed scenario's load.
SEED_ENV = {
    "SCENARIO": "seed2014",
    "CENTRAL_CPUS": "8",
    "CENTRAL_MEM": "2g",
    "REMOTE_CPUS": "2",
    "REMOTE_MEM": "512m",
    "HOSTS": "5",
    "SENDERS_PER_HOST": "4",
    "MESSAGES_PER_SENDER": "300000",
    "DONE_THRESHOLD": "0",
    "DONE_WINDOW": "60",
    "RUN_TIMEOUT": "900",
    "KEEP_LOGS": "0",
    "SEED": "2014",
    "UDP_RCVBUF": "",  # the kernel's default
    "LEDGER_WAIT": "",  # 60 s
    "TUNING": "",  # default
}
# A small machine and one sender of ten messages: what the tests that run something start from.
SMALL = {"CENTRAL_CPUS": 1, "CENTRAL_MEM": "64m", "REMOTE_CPUS": 1, "REMOTE_MEM": "64m", "HOSTS": 1}


def env(small: bool = False, **changes: object) -> dict[str, str]:
    """Every key the settings read: the seed's values, or a small run's (small=True), with changes by key
    (e.g. SENDERS_PER_HOST=3); values become strings, as the environment holds them."""
    base = {**SEED_ENV, **SMALL, "SENDERS_PER_HOST": 1, "MESSAGES_PER_SENDER": 10} if small else SEED_ENV
    return {key: str(value) for key, value in {**base, **changes}.items()}


# --- a result document ----------------------------------------------------------------------------------------

GIB = 2**30


def limit(requested: float, effective: float | None) -> dict[str, Any]:
    return {"requested": requested, "configured": requested, "effective": effective}


# The smallest whole result results/schema.json accepts: a passing seed run of one sender's ledger.
RESULT: dict[str, Any] = {
    "schema_version": 2,
    "run_id": "20261122T100000Z-rsyslog-8.2504",
    "started_utc": "2026-11-22T10:00:00Z",
    "finished_utc": "2026-11-22T10:01:00Z",
    "verdict": "pass",
    "errors": [],
    "notes": [],
    "scenario": {
        "id": "seed2014",
        "variant": "default",
        "hosts": 5,
        "senders_per_host": 4,
        "messages_per_sender": 300000,
        "transport": "tcp",
        "format": "rfc3164",
        "port": 514,
        "done_threshold": 20,
        "done_window_s": 60,
        "run_timeout_s": 900,
        "seed": 2014,
    },
    "daemon": {
        "profile": "rsyslog-8.2504",
        "name": "rsyslog",
        "version": "rsyslogd  8.2504.0 (aka 2025.04) compiled with:",
        "image": "syslogbench/rsyslog-8.2504:local",
        "base": "pull debian:trixie-slim@sha256:3a39",
        "settings": {},
        "stopped": True,
        "exit_code": 0,
    },
    "limits": {
        "central_cpus": limit(8, 8),
        "central_memory_bytes": limit(2 * GIB, 2 * GIB),
        "remote_cpus": limit(2, 2),
        "remote_memory_bytes": limit(GIB / 2, GIB / 2),
    },
    "host": {
        "cpu_model": "Test CPU",
        "cores": 8,
        "memory_bytes": 16 * GIB,
        "kernel": "6.1.0",
        "docker_version": "27.0.0",
        "cgroup_version": 2,
    },
    "elapsed_s": 42.5,
    "end": {"trigger": "sec", "sec_fired_s": 42.6, "done_spread_s": 1.5},
    "cpu": {"user_s": 30.25, "system_s": 20.75, "percent": 120.0},
    "memory": {"peak_bytes": None, "max_rss_bytes": None},
    "io": {"write_bytes": None, "output_bytes": 600002000},
    "messages": {
        "expected": 6000020,
        "sent": 6000020,
        "received": 6000020,
        "lost": 0,
        "duplicated": 0,
        "misfiled": 0,
        "done_expected": 20,
        "done_received": 20,
        "done_log_lines": 20,
    },
    "senders": [
        {
            "id": "host1-s1",
            "status": "ok",
            "sent": 300001,
            "received": 300001,
            "lost": 0,
            "duplicated": 0,
            "done_seen": True,
        }
    ],
    "throughput": {"msgs_per_s": 141176.9, "mb_per_s": 14.1},
    "summary": "30.25user 20.75system 0:42.50elapsed 120%CPU",
}


def result_document(version: int = 2, **changes: Any) -> dict[str, Any]:
    """A fresh copy of RESULT with values changed by path, parts joined by "__" (e.g. cpu__user_s=1.5,
    senders=[]); version 1 is the document before scenario.variant existed."""
    document = copy.deepcopy(RESULT)
    if version == 1:
        document["schema_version"] = 1
        del document["scenario"]["variant"]
    for dotted, value in changes.items():
        *parents, key = dotted.split("__")
        target = document
        for parent in parents:
            target = target[parent]
        target[key] = value
    return document


# -- the host as the command line's tests see it: .env, the shell, Docker and the machine's size are the test's

SEED_ENV_FILE = """# the machine and the seed scenario, as in .env
CENTRAL_CPUS=8
CENTRAL_MEM=2g
REMOTE_CPUS=2
REMOTE_MEM=512m
RUN_TIMEOUT=900
KEEP_LOGS=0
UDP_RCVBUF=
LEDGER_WAIT=
TUNING=
SCENARIO=seed2014
"""


@pytest.fixture
def host_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """run_env asks Docker for its version and reads .env and the shell: none of them may touch a test."""
    env_file = tmp_path / ".env"
    env_file.write_text(SEED_ENV_FILE)
    monkeypatch.setattr(environment, "ENV_FILE", env_file)
    monkeypatch.setattr(environment, "docker_version", lambda: "test")
    monkeypatch.setattr(fits, "docker_disk", lambda: fits.Disk("/var/lib/docker", 100 * GIB))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the project locks (host/lock.py) go here
    for key in [*env(small=True), "GENERATORS"]:
        monkeypatch.delenv(key, raising=False)


@pytest.fixture
def small_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host with 2 cores and 8 GiB of memory."""
    real = os.sysconf
    fake = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": 8 * GIB // 4096}
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "sysconf", lambda name: fake[name] if name in fake else real(name))
