"""A capacity search's plan: the run plan, the search's own settings, and where each role runs, checked
before any container starts (docs/capacity.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from syslogbench.host import ownconfig
from syslogbench.model import capacity, scenarios, settings, userconfig
from syslogbench.model.capacity import CapacitySettings

if TYPE_CHECKING:
    from syslogbench.host.runplan import Config, Orchestrator, Plan

# Without RATE_MAX, the burst run that sets it sends this many messages, all senders together
# (host/capacity/ceiling.py): seconds at the rates seen here (100,000 to 600,000 msg/s), long enough that the
# daemon's start does not decide its rate.
BURST_MESSAGES = 2_000_000
# A last hop that reads as fast as it can, or at a fixed rate; a pause belongs to one burst (rig/lasthop.py).
RELAY_TARGETS = ("normal", "slow")


class Unsupported(settings.SettingsError):
    """The profile cannot run the scenario's transport or destination: `matrix --capacity` counts it n/a."""


@dataclass(frozen=True)
class Search:
    """What a capacity search runs, checked before any container starts: the run plan, the search's own
    settings, and which cores (one host) or nodes (a swarm) each role has."""

    plan: Plan
    cap: CapacitySettings
    cpu_placement: dict[str, str]
    # Without RATE_MAX: the burst run whose drain rate sets it (host/capacity/ceiling.py), of the scenario's
    # all-out twin where it is paced; None: RATE_MAX given, or a paced scenario without a twin (or with
    # --config), and then `paced` says why its burst would not tell the daemon's rate.
    burst: Plan | None = None
    paced: str | None = None


def plan(
    profile_name: str, overrides: dict[str, str], on: Orchestrator, config: Config | None = None
) -> Search:
    """Every bad input as one line (SettingsError, CapacityError, ProfileError, ScenarioError, SwarmError)
    before any container: a PDR target outside [0, 1), an empty rate range, LATENCY_BOUND=0, a transport the
    profile lacks; a user config (--config) that cannot be searched; a swarm it cannot run on."""
    cap, rest = capacity.split(overrides)
    refuse_unused(rest)
    chosen = on.make_plan(profile_name, rest, config)
    ownconfig.refuse_expect_dropped(chosen.user)
    if reasons := chosen.unsupported:
        raise Unsupported(
            f"{chosen.profile.profile} cannot run scenario {chosen.scenario.id}: {'; '.join(reasons)}; pick "
            "another scenario"
        )
    scenario = chosen.scenario
    if scenario.destination == "relay" and scenario.relay_target not in RELAY_TARGETS:
        raise settings.SettingsError(
            f"scenario {scenario.id}: its last hop pauses ({scenario.relay_target}) once, at a run's start, which "
            f"a search of many trials has not got; pick a relay scenario whose target is "
            f"{' or '.join(RELAY_TARGETS)} (relay, relay-slow-disk-*)"
        )
    cores = on.default_daemon_cores() if cap.daemon_cores is None else int(cap.daemon_cores)
    cap = replace(cap, daemon_cores=float(cores))  # the result records the number in force
    if "RATE_MAX" in overrides:
        return Search(chosen, cap, on.search_placement(chosen, cores))
    burst, paced = None, None
    # A paced scenario's burst would drain at its pace: its all-out twin (udp-allout for udp) tells the rate.
    twin = scenarios.all_out_twin(scenario) if config is None else None
    if scenario.rate and twin is None:
        paced = paced_words(chosen, cap)
    else:
        per_sender = math.ceil(BURST_MESSAGES / max(chosen.cfg.senders, 1))
        burst_env = {
            **rest,
            "MESSAGES_PER_SENDER": str(per_sender),
            **({"SCENARIO": twin.id} if twin else {}),
        }
        burst = on.make_plan(profile_name, burst_env, config)
    return Search(chosen, cap, on.search_placement(chosen, cores), burst, paced)


def paced_words(chosen: Plan, cap: CapacitySettings) -> str:
    """Why a paced scenario's search keeps RATE_MAX's default: its burst would drain at the scenario's pace
    (udp, 1,000 msg/s a sender: 20261206T105528.391Z-syslog-ng-4.8-3cca drained 19,627 msg/s over 20
    senders), which says nothing of the daemon's rate, and 3 times it is below NDRs found over UDP."""
    pace = chosen.scenario.rate * chosen.cfg.senders
    return (f"scenario {chosen.scenario.id} sends at a fixed {pace:,} msg/s, so a burst of it drains at that "
            f"pace, not the daemon's: RATE_MAX stays at its default ({cap.rate_max:,.0f}); give RATE_MAX to "
            "set it")  # fmt: skip


# Run settings a search has no use for: its trials set their own length and message count, and it ends
# when the search does. Each is named with the commands that take it.
NOT_FOR_CAPACITY = {
    "MESSAGES_PER_SENDER": "its trials send as many as each rate and length needs; for run, check, matrix",
    "RUN_TIMEOUT": "it ends when the search does (SEARCH_MAX); for run, check, matrix",
    userconfig.QUIET_ENV: "its trials end on their own; for run --config and matrix --config",
}


def refuse_unused(overrides: dict[str, str]) -> None:
    """A setting the search would ignore is refused, so that no one reads a result as if it had held."""
    unused = [
        f"{key}: capacity does not use it ({NOT_FOR_CAPACITY[key]})"
        for key in NOT_FOR_CAPACITY
        if key in overrides
    ]
    if unused:
        raise settings.SettingsError(settings.listed("settings capacity does not use", unused))
