"""The result of a run on the swarm: the watcher prints it on its output (no volume of the user's is mounted
on a remote node), gzip'd JSON in base64 cut into numbered lines, read here as the watcher runs; and the
host's part added to it.
"""

from __future__ import annotations

import base64
import gzip
import json
import subprocess
import threading
import time
from dataclasses import replace

from syslogbench import contract
from syslogbench.host.swarmnodes import Node, docker
from syslogbench.model import result

RESULT_WAIT_S = 15.0  # for the result's last lines to come through the log stream after the task ended


class Follower:
    """The watcher's output as it runs: its progress lines shown, every line kept, for the result's lines.

    The result is read from here rather than from `docker service logs` afterwards, because a watcher
    stopped by scaling its service to 0 leaves no task, and so no logs, behind."""

    def __init__(self, name: str) -> None:
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            ["docker", "service", "logs", "--follow", "--raw", f"{name}_watcher"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self.read, daemon=True).start()

    def read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            if not line.startswith(contract.RESULT_LINE_PREFIX):
                print(line, end="", flush=True)

    def result(self, wait: float = RESULT_WAIT_S) -> result.Result | None:
        """The result once all its lines are in (they may trail the task's end a little)."""
        deadline = time.monotonic() + wait
        while (data := decode_result(list(self.lines))) is None and time.monotonic() < deadline:
            time.sleep(0.2)
        return data

    def stop(self) -> None:
        self.process.terminate()


def result_of(name: str) -> result.Result | None:
    """The result the watcher printed: gzip'd JSON in base64, cut into numbered lines."""
    text = docker("service", "logs", "--raw", f"{name}_watcher", check=False, timeout=300)
    return decode_result(text.splitlines())


def decode_result(lines: list[str]) -> result.Result | None:
    """The result from the watcher's numbered lines; None until all are in, ResultError if it is not one."""
    parts: dict[int, str] = {}
    total = 0
    for line in lines:
        words = line.split()
        if len(words) == 3 and words[0] == contract.RESULT_LINE_PREFIX:
            index, _, count = words[1].partition("/")
            parts[int(index)], total = words[2], int(count)
    if not total or len(parts) != total:
        return None
    packed = "".join(parts[i] for i in range(1, total + 1))
    return result.Result.from_dict(json.loads(gzip.decompress(base64.b64decode(packed))))


def amend(written: result.Result, nodes: list[Node], reasons: list[str]) -> result.Result:
    """The host's part: each node's Docker version (the engine's own), and what ended the run early."""
    engines = {node.hostname: node.engine for node in nodes}
    for node in written.topology.nodes if written.topology else []:
        node.docker_version = engines.get(node.hostname, node.docker_version)
    if reasons:
        written = replace(written, verdict="error", errors=[*reasons, *written.errors])
    return written
