"""A search's placement as compose's cpusets: the daemon's cores and the senders', for its trials and its burst
alike (the placement itself is capacity.placement's, in model/capacity/settings.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from syslogbench.host.capacity.plan import Search


def cpuset(cores: str) -> str:
    """compose's cpuset for one host's placement (an empty one is any core; a swarm's nodes take none)."""
    return cores if cores[:1].isdigit() else ""


def cores_env(chosen: Search) -> dict[str, str]:
    """The daemon's and the senders' cpusets of the search's placement: its trials' and its burst's."""
    cores = chosen.cpu_placement
    return {"DAEMON_CPUSET": cpuset(cores["daemon"]), "RIG_CPUSET": cpuset(cores["senders"])}
