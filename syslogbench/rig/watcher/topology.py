"""Where each service of the run ran, for the result's `topology` (docs/swarm.md): the watcher's node, which
the daemon and the last hop share with it, and each generator's node as its report (rig/channel.py) says."""

from __future__ import annotations

import os
from dataclasses import replace

from syslogbench.model import machine
from syslogbench.model.result import Host, Node, Topology
from syslogbench.rig.watcher.harness import generator_reports

# The stack file sets SWARM=1 for the watcher: the generators reach the daemon over the overlay network.
SWARM_ENV = "SWARM"


def gather(host: Host, profile: str) -> Topology:
    central = machine.node(["watcher", profile, "lasthop"], host)
    nodes = [central]
    for report in sorted(generator_reports(), key=lambda report: report.host):
        if report.node is not None:  # an older generator image does not say
            place(nodes, replace(report.node, services=[f"generator host{report.host}"]))
    return Topology(network="overlay" if os.environ.get(SWARM_ENV) else "bridge", nodes=nodes)


def place(nodes: list[Node], node: Node) -> None:
    """A node already listed (same hostname) gets the service; the first report of a node keeps its facts."""
    for known in nodes:
        if known.hostname == node.hostname:
            known.services.extend(node.services)
            return
    nodes.append(node)
