"""The watcher in a capacity run (CAPACITY=1, docs/capacity.md): the run's own sequence up to the start
(reset, n/a, everyone ready), then trials on the control channel (rig/trialserver.py) until the host ends
them, the daemon dies or CAPACITY_MAX_S passes; then the daemon's stop and finish. The host writes the
result (host/capacity/record.py) from the trials' records. Stdlib only: runs in the watcher container.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from datetime import UTC, datetime

from syslogbench import contract
from syslogbench.model import scenarios, settings
from syslogbench.model.machine import host_facts
from syslogbench.model.result import Daemon
from syslogbench.rig import control, snmp, trialserver
from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher import accounting, harness, run
from syslogbench.rig.watcher.progress import say


def main() -> int:
    try:
        cfg = settings.from_env(os.environ)
        search = contract.CapacityEnv.from_env(os.environ)
        bound_s, max_s = search.latency_bound_s, search.max_s
    except (settings.SettingsError, ValueError) as error:
        say(f"capacity: {error}")
        control.write_atomic(control.CONTROL.finish, "")
        return contract.EXIT_CODES["error"]
    return serve(cfg, bound_s, max_s)


def serve(cfg: settings.Settings, bound_s: float, max_s: float) -> int:
    """The watcher in a capacity run: up, trials until trial_end (or max_s, or the daemon's death), down.
    Returns the exit code; the result is the host's to write (host/capacity/record.py)."""
    now = datetime.now(UTC)
    obs = Observed(cfg=cfg, host=host_facts(1), daemon=Daemon(), started=now, finished=now)
    names = [sender.name for sender in accounting.expected_senders(cfg)]
    served = trialserver.Trials(cfg, names, bound_s)
    served.snapshot, served.own_cpu = run.take_snapshot, harness.own_cpu
    run.prepare(cfg, obs, served.handlers())
    served.machine = asdict(obs.host)  # with its fingerprint: a swarm's host cannot see the central node
    code = contract.EXIT_CODES["pass"]
    try:
        scenario = scenarios.load(cfg.scenario)
        served.transport = scenario.transport
        if scenario.destination == "relay":
            served.last_hop_cpu = harness.last_hop_cpu
        run.decide(scenario)
        run.wait_until_ready(cfg)
        # Sent with the first trial (the warm-up): a UDP result records them (host/capacity/record.py).
        served.machine = {
            **served.machine,
            contract.UDP_BUFFERS_KEY: snmp.read_buffers(control.CONTROL.daemon.buffers),
        }
        served.start_following()
        served.ready_to_run.set()
        say(f"capacity: {len(names)} senders ready; waiting for trials")
        served.over.wait(max_s)
    except (run.Unsupported, control.WaitTimeout, RuntimeError, OSError, ValueError) as error:  # RigError too
        served.failure = str(error)
        served.ready_to_run.set()
        say(f"capacity: {error}")
        code = contract.EXIT_CODES["error"]
    served.end({})
    run.stop_if_started(obs, run.STOP_TIMEOUT)
    accounting.discard_logs(cfg)  # the trials were counted as they ran
    control.write_atomic(control.CONTROL.finish, "")
    run.close_gateway()
    return code
