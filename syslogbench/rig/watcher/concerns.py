"""The one place that decides, from the scenario, which concerns watch a run."""

from __future__ import annotations

import os
from dataclasses import dataclass

from syslogbench import contract
from syslogbench.model import userconfig
from syslogbench.model.scenarios import Scenario
from syslogbench.model.settings import Settings
from syslogbench.rig import control
from syslogbench.rig.cgroup import Snapshot
from syslogbench.rig.watcher.concern import Concern
from syslogbench.rig.watcher.done import DoneEnd
from syslogbench.rig.watcher.files import DoneTail, LineCounter, OutputSize
from syslogbench.rig.watcher.guard import Guard
from syslogbench.rig.watcher.outputend import OutputEnd
from syslogbench.rig.watcher.progress import Progress
from syslogbench.rig.watcher.relay import RelayQueue, RelayTail
from syslogbench.rig.watcher.restart import Restart
from syslogbench.rig.watcher.samples import Samples
from syslogbench.rig.watcher.udp import UDP_POLL_S, UdpQuiet

# The watch runs inside the measured window, on the daemon's cores, and each wake-up costs the watcher CPU:
# four looks a second. The DONEs' times do not depend on it (done.log's mtime, files.DoneTail); SEC's firing
# is seen at most 0.25 s late. A UDP run that may end on quiet output looks ten times a second, since its end
# is the last growth the watch saw (udp.UDP_POLL_S).
POLL_S = 0.25


@dataclass
class Watch:
    """`during` is updated each poll, in this order, until one of them has ended the run; `tail` (relay
    scenarios) runs after that if the DONEs ended it; then each concern in `every` records its part, in
    that order (the order of the result's errors and notes)."""

    done: DoneEnd
    during: list[Concern]
    tail: RelayTail | None
    every: list[Concern]
    poll_s: float = POLL_S  # seconds between two looks of the watch


def for_scenario(
    cfg: Settings, scenario: Scenario | None, start: Snapshot | None, t0: float, wall0: float | None = None
) -> Watch:
    user = userconfig.from_env(os.environ)  # a config of the user's own (run --config), or None
    size = OutputSize(control.LOGS, every_file=user is not None)
    done = DoneEnd(cfg, DoneTail(control.LOGS / contract.DONE_LOG, t0, wall0))
    relay = scenario is not None and scenario.destination == "relay"
    udp = scenario is not None and scenario.transport == "udp"
    relay_during: list[Concern] = []  # looked at each poll before the end is decided
    if relay and scenario is not None:
        relay_during.append(RelayQueue(scenario))
        if scenario.relay_target == "pause-restart":
            relay_during.append(Restart(cfg.senders))
    ends: list[Concern] = [done, Guard(cfg)] + ([UdpQuiet(size, done.tail, cfg.senders)] if udp else [])
    if user is not None:  # no done.log and no SEC rule: the DONEs in any file, or quiet output
        ends = [done, Guard(cfg), OutputEnd(control.LOGS, cfg, user.quiet_s, userconfig.NO_OUTPUT_S)]
    series: list[Concern] = [Samples(size, start), Progress(size, cfg.expected_messages)]
    # The relay tail waits for every line: it counts them exactly, reading what was added since its last look.
    tail = RelayTail(cfg, LineCounter(control.LOGS)) if relay else None
    # The queue's record makes the relay section that the tail and the restart write into.
    relay_records = relay_during[:1] + ([tail] if tail else []) + relay_during[1:]
    return Watch(
        done=done,
        during=relay_during + ends + series,
        tail=tail,
        every=ends + series + relay_records,
        poll_s=UDP_POLL_S if udp else POLL_S,
    )
