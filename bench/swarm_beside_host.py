"""The seed scenario on a three-node Docker-in-Docker swarm beside the same load on one host.

    TEST_PROJECT=sbt-x IMAGE_TAG=... PYTHONPATH=. .venv/bin/python bench/swarm_beside_host.py [RESULTS]

Builds the swarm of tests/integration/swarm.py (named after TEST_PROJECT, with "-docs"), then runs rsyslog8
and syslog-ng twice each, alternating `run --swarm` against it and `run` on this machine, at 2 hosts x 2
senders x 50,000 messages with CENTRAL_CPUS=2 (the nodes have this machine's cores), into RESULTS
(results/swarm by default). Removes the swarm at the end. Not part of `make test`: the figures of
docs/swarm.md. The images must exist (`python -m syslogbench setup --profile rsyslog8 --profile syslog-ng`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from syslogbench.contract import image_name
from syslogbench.host import profiles
from tests.integration.swarm import Swarm

ROOT = Path(__file__).resolve().parents[2]
PROFILES = ["rsyslog8", "syslog-ng"]
SHAPE = ["HOSTS=2", "SENDERS_PER_HOST=2", "MESSAGES_PER_SENDER=50000", "CENTRAL_CPUS=2", "RUN_TIMEOUT=300"]


def ready_swarm(prefix: str) -> Swarm:
    nodes = Swarm(prefix)
    nodes.remove()
    nodes.build_node_image()
    nodes.start()
    nodes.form()
    central = [
        image_name(name)
        for name in ["watcher", "generator", *(profiles.resolve(p).profile for p in PROFILES)]
    ]
    with ThreadPoolExecutor(3) as pool:
        loads = [pool.submit(nodes.load, nodes.nodes[0], central)]
        loads += [pool.submit(nodes.load, node, [image_name("generator")]) for node in nodes.nodes[1:]]
        for load in loads:
            load.result()
    return nodes


def run(profile: str, results: Path, swarm: Swarm | None) -> None:
    env = {**os.environ, **({"DOCKER_HOST": swarm.manager_host()} if swarm else {})}
    where = ["--swarm"] if swarm else []
    command = [
        sys.executable,
        "-m",
        "syslogbench",
        "run",
        *where,
        "--profile",
        profile,
        "--results",
        str(results),
    ]
    began = time.monotonic()
    done = subprocess.run([*command, *SHAPE], env=env, cwd=ROOT, capture_output=True, text=True)
    path = next((line for line in done.stdout.splitlines() if line.startswith("Result file:")), "no result")
    print(
        f"{'swarm' if swarm else 'host '} {profile}: exit {done.returncode} in {time.monotonic() - began:.1f} s; {path}"
    )


def main() -> int:
    results = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "results" / "swarm"
    nodes = Swarm(f"{os.environ.get('TEST_PROJECT', 'syslogbench-test')}-docs")
    try:
        nodes = ready_swarm(nodes.prefix)
        for _ in range(2):
            for profile in PROFILES:
                run(profile, results, nodes)
                run(profile, results, None)
    finally:
        nodes.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main())
