"""A capacity search's result: what the search found and every trial, with the plan, the machine, the rig's load
and the generators' clocks, written once at the end to results/capacity/<run id>.json, with the table
`syslogbench capacity` prints (docs/capacity.md). The search that made it runs in host/capacity/command.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from syslogbench import contract
from syslogbench.host import environment
from syslogbench.host.capacity.measurer import Measurer
from syslogbench.host.capacity.search import Found
from syslogbench.model import capacity, machine, result, settings
from syslogbench.model.capacity import CapacityResult, Latency, Load, Trial, UdpBuffers

if TYPE_CHECKING:
    from syslogbench.host.capacity.searchplan import Search


@dataclass(frozen=True)
class Start:
    """What the result keeps of the search's start: when it began, the machine's fingerprint, the project's
    commit."""

    began: datetime
    fingerprint: result.Fingerprint | None = None
    commit: str | None = None
    # The config's tuning and knobs where the search's plan does not say them (a step of `knobs`).
    tuning: dict[str, object] | None = None
    ceiling: capacity.Ceiling | None = None  # where RATE_MAX came from (host/capacity/ceiling.py)


def record(chosen: Search, measurer: Measurer, found: Found, latency: dict[str, Latency], start: Start,
           results_dir: Path, log: Callable[[str], None]) -> CapacityResult:  # fmt: skip
    """The result, written to results/capacity/<run id>.json; its table printed, its errors logged."""
    data = build(chosen, measurer.trials, found, latency, start.began, start.fingerprint, measurer.machine)
    data.commit = start.commit
    data.ceiling = start.ceiling
    if data.at_ceiling:  # the result says it too, not only its table
        data.notes.append(capacity.at_least_text(data))
    tuned = start.tuning or chosen.plan.tuning_record()
    data.tuning, data.knobs = str(tuned["tuning"]), dict(tuned["knobs"])  # type: ignore[call-overload]
    text = capacity.table(data)
    directory = results_dir / "capacity"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{data.run_id}.json"
    path.write_text(result_text(data.to_dict()))
    print(text)
    for error in data.errors:
        log(f"error: {error}")
    log(f"result: {path}")
    return data


def result_text(document: dict) -> str:
    """A capacity result as its file holds it: a key a line, but each trial on one line of its own, its
    senders and histogram with it (a line per sender and per bucket made the results 191 MB)."""
    trials = document.get("trials") or []
    text = json.dumps({**document, "trials": []}, indent=2, sort_keys=True)
    if trials:
        lines = ",\n".join("    " + json.dumps(t, sort_keys=True, separators=(",", ":")) for t in trials)
        text = text.replace('\n  "trials": []', '\n  "trials": [\n' + lines + "\n  ]", 1)
    return text + "\n"


def build(chosen: Search, trials: list[Trial], found: Found, latency: dict[str, Latency], began: datetime,
          fingerprint: result.Fingerprint | None = None, central: dict | None = None) -> CapacityResult:  # fmt: skip
    """central: the daemon's machine as the watcher read it (a swarm's central node)."""
    errors = [*found.errors, *(e for t in trials for e in t.errors)]
    outcome = "daemon-died" if found.died_at is not None else ("error" if errors else "found")
    if outcome == "found" and False in (found.ndr.confirmed, found.pdr.confirmed):
        outcome = "unconfirmed"  # a bound could not be confirmed: its `unconfirmed` says why
    outcome = "interrupted" if found.interrupted else outcome
    here = replace(machine.host_facts(docker_version=environment.docker_version()), fingerprint=fingerprint)
    facts, nodes = chosen.plan.on.machine(asdict(here), central)
    profile, scenario = chosen.plan.profile, chosen.plan.scenario
    load = load_of(chosen.plan.cfg)
    buffers = udp_buffers(chosen, central) if scenario.transport == "udp" else None
    run_id = result.run_id(began, profile.profile, None) + f"-{scenario.id}"
    clocks = capacity.clocks_of(trials, chosen.cap.latency_bound_s)
    # The search still ran; its latencies (and over TCP its late counts) are then not on one clock.
    distrust = [] if clocks is None or clocks.trusted else [f"latency is not trusted: {clocks.why}"]
    return CapacityResult(
        run_id=run_id,
        kind="capacity",
        profile=profile.profile,
        daemon_version=profile.version,
        scenario=scenario.id,
        transport=scenario.transport,
        destination=scenario.destination,
        senders=chosen.plan.cfg.senders,
        settings=chosen.cap.as_dict(),
        started_utc=result.utc(began),
        finished_utc=result.utc(datetime.now(UTC)),
        outcome=outcome,
        ndr_msgs_per_s=found.ndr.published(),
        pdr_msgs_per_s=found.pdr.published(),
        pdr_loss_ratio=chosen.cap.pdr_target,
        ndr=found.ndr,
        pdr=found.pdr,
        trials=trials,
        latency_at_pdr=latency,
        cpu_placement=chosen.cpu_placement,
        rig_limit_msgs_per_s=found.rig_limit,
        died_at_msgs_per_s=found.died_at,
        machine=facts,
        nodes=nodes,
        errors=errors,
        notes=[*found.notes, *distrust],
        config=chosen.plan.config_identity,
        load=load,
        udp_buffers=buffers,
        clocks=clocks,
        ndr_interval=found.ndr_interval,
    )


def load_of(cfg: settings.Settings) -> Load:
    return Load(cfg.hosts, cfg.senders_per_host, cfg.remote_mem, cfg.remote_cpus)


def udp_buffers(chosen: Search, central: dict | None) -> UdpBuffers:
    """UDP_RCVBUF as asked, and what the watcher read of the daemon's namespace (with the first trial)."""
    seen = (central or {}).get(contract.UDP_BUFFERS_KEY) or {}
    return result.udp_buffers(chosen.plan.cfg.udp_rcvbuf, seen)
