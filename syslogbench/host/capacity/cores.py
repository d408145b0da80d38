"""A search's placement as compose's cpusets: the daemon's cores and the senders', for its trials and its burst
alike (the placement itself is capacity.placement's, in model/capacity/settings.py)."""

from __future__ import annotations


def cpuset(cores: str) -> str:
    """compose's cpuset for one host's placement (an empty one is any core; a swarm's nodes take none)."""
    return cores if cores[:1].isdigit() else ""


def cores_env(placement: dict[str, str]) -> dict[str, str]:
    """The daemon's and the senders' cpusets of a search's placement (Search.cpu_placement): its trials' and
    its burst's."""
    return {"DAEMON_CPUSET": cpuset(placement["daemon"]), "RIG_CPUSET": cpuset(placement["senders"])}
