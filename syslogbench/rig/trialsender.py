"""The generators' side of a capacity run's trials (the story: rig/trials.py): each sender keeps one
connection and one compiled sender for every trial, and for each renders the trial's templates, checks its
clock, waits for the common start and sends open loop; its record is the trial's ledger. Stdlib only: runs in
the generator containers.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import time
from collections.abc import Callable
from dataclasses import asdict

from syslogbench.model import capacity, preprocess, scenarios, settings
from syslogbench.model.messages import (
    FACILITIES,
    SEVERITIES,
    SenderId,
    bsd_timestamp,
    datagram,
    iso_timestamp,
    render_line,
)
from syslogbench.model.rigrecord import FailedRecord, SendRecord, SendRequest, Templates
from syslogbench.rig import channel, control
from syslogbench.rig.compiled import RigError, RigProcess
from syslogbench.rig.trials import RIG_ANSWER_S

NODE_ENV = "NODE_HOSTNAME"  # a swarm node (host/stack.py); on one host its name (environment.py)
# A sender opens its connection to the daemon and starts its compiled sender on it (rig/sender.py).
Opener = Callable[[str], RigProcess]

# The low digits of a trial's sequence number that the compiled sender sets: the index within the trial + 1.
INDEX_DIGITS = len(str(capacity.TRIAL_SEQ_SPAN - 1))


def templates(
    sender: SenderId, cfg: settings.Settings, scenario: scenarios.Scenario, spec: dict
) -> Templates:
    """One framed message per priority for the trial (datagrams over UDP), from which the compiled sender
    makes every message as it sends. Each is rendered twice, with the lowest and the highest index digits:
    where the two differ is where the sender writes a message's own."""
    trial, count = int(spec["trial"]), int(spec["messages"])
    width = len(str(capacity.trial_seq(trial, count)))
    payload = preprocess.payload(scenario.preprocess)
    now = time.time()
    stamp = iso_timestamp(now) if scenario.format == "rfc5424" else bsd_timestamp(now)
    lines, index_at = [], []
    for pri in range(FACILITIES * SEVERITIES):
        low, high = (
            render_line(sender, capacity.trial_seq(trial, index), pri, stamp, width, size=scenario.message_bytes,
                        fmt=scenario.format, payload=payload)
            for index in (0, capacity.TRIAL_SEQ_SPAN - 2)
        )  # fmt: skip
        if scenario.transport == "udp":
            low, high = datagram(low, scenario.format), datagram(high, scenario.format)
        differ = [at for at, (a, b) in enumerate(zip(low, high, strict=True)) if a != b]
        assert differ == list(range(differ[0], differ[0] + INDEX_DIGITS)), (low, high)
        lines.append(low.decode())
        index_at.append(differ[0])
    seed = hashlib.blake2b(f"{cfg.seed + trial}:{sender.host}:{sender.sender}".encode(), digest_size=8)
    return Templates(lines, index_at, int.from_bytes(seed.digest(), "little"))


def one_trial(
    link: channel.Link, sender: SenderId, cfg: settings.Settings, scenario: scenarios.Scenario, rig: RigProcess,
    spec: dict,
) -> SendRecord:  # fmt: skip
    """Render the templates, wait for the common start, send open loop (compiled); the sender's record of
    this trial."""
    made = templates(sender, cfg, scenario, spec)
    trial, count, rate = int(spec["trial"]), int(spec["messages"]), float(spec["rate"])
    # Checked before each trial: a clock that drifts over a long search is followed.
    clock = link.clock_check(capacity.CLOCK_ROUNDS)
    answer = link.call("trial_ready", timeout=float(spec["ready_wait_s"]) + 10, sender=sender.name, trial=trial,
                       clock_offset_s=clock.offset_s, clock_uncertainty_s=clock.uncertainty_s,
                       node=os.environ.get(NODE_ENV))  # fmt: skip
    start, give_up = float(answer["start"]), float(answer["give_up"])
    rig.ask(SendRequest("", None, count, rate, start, give_up, capacity.SEND_TICK_S, float(answer["phase_s"]),
                        made))  # fmt: skip
    return rig.answer(SendRecord, max(0.0, give_up - time.time()) + RIG_ANSWER_S)


def sender_main(sender: SenderId, cfg: settings.Settings, open_rig: Opener) -> None:
    """One sender of a capacity run: one connection for every trial, until finish."""
    scenario = scenarios.load(cfg.scenario)
    link = channel.link()
    rig = open_rig(scenario.transport)
    link.ready(sender.name)
    after = 0
    try:
        while True:
            spec = link.call("trial", timeout=None, sender=sender.name, after=after)
            if spec.get("finish"):
                break
            after = int(spec["trial"])
            try:
                record: SendRecord | FailedRecord = one_trial(link, sender, cfg, scenario, rig, spec)
            except (OSError, RigError, channel.ChannelError, control.WaitTimeout) as error:
                failed = FailedRecord("failed", str(error))
                link.call("trial_ledger", sender=sender.name, trial=after, ledger=asdict(failed))
                break
            link.call("trial_ledger", sender=sender.name, trial=after, ledger=asdict(record))
    finally:
        rig.close()


def generator_main(host: int, cfg: settings.Settings, open_rig: Opener) -> int:
    """A generator in a capacity run: its senders, each a process, until the watcher's finish. open_rig is
    the plain sender's (rig/sender.py): the same connection, TCP, UDP or TLS, as in a run."""
    senders = [SenderId(host, number) for number in range(1, cfg.senders_per_host + 1)]
    workers = [multiprocessing.Process(target=sender_main, args=(s, cfg, open_rig)) for s in senders]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    channel.link().wait_finish(cfg.run_timeout)
    return 0
