"""Runs the compiled rig (rig-rust/, the `syslogbench-rig` binary): one role, one JSON request on stdin, one
JSON answer on stdout. Stdlib only: runs in the watcher.

The binary is at $SYSLOGBENCH_RIG, by default where the watcher's image installs it. From a checkout (the unit
tests): `cargo build --release --manifest-path rig-rust/Cargo.toml` builds rig-rust/target/release/syslogbench-rig.
"""

from __future__ import annotations

import json
import os
import subprocess

RIG_ENV = "SYSLOGBENCH_RIG"
DEFAULT_RIG = "/usr/local/bin/syslogbench-rig"
BUILD = "cargo build --release --manifest-path rig-rust/Cargo.toml"


class RigError(RuntimeError):
    """The rig could not answer: its message says why, in one line (the watcher's result shows it)."""


def binary() -> str:
    return os.environ.get(RIG_ENV) or DEFAULT_RIG


def call(role: str, request: object, *options: str, timeout: float = 900) -> object:
    """The rig's answer to one request (JSON data), or RigError: not there, failed, timed out, or no JSON."""
    path = binary()
    command = [path, role, *options]
    try:
        done = subprocess.run(
            command,
            input=json.dumps(request).encode(),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise RigError(f"syslogbench-rig not found at {path} (${RIG_ENV}); build it with: {BUILD}") from None
    except PermissionError as error:
        raise RigError(f"syslogbench-rig at {path} cannot run: {error.strerror}") from None
    except subprocess.TimeoutExpired:
        raise RigError(f"syslogbench-rig {role} gave no answer within {timeout:g} s (stopped)") from None
    said = done.stderr.decode(errors="replace").strip().splitlines()
    if done.returncode != 0:
        # The rig's own last line reads "syslogbench-rig ROLE: why".
        reason = (
            said[-1].removeprefix(f"syslogbench-rig {role}: ") if said else f"exit code {done.returncode}"
        )
        raise RigError(f"syslogbench-rig {role} failed: {reason}")
    try:
        return json.loads(done.stdout)
    except ValueError:
        raise RigError(f"syslogbench-rig {role} answered no JSON: {done.stdout[:200]!r}") from None
