"""Relay scenarios: the central daemon's disk queue while the run goes, the tail after the DONEs, and the
last hop's report after the stop. Together they write the result's `relay` section."""

from __future__ import annotations

from syslogbench import contract
from syslogbench.model.result import LastHop, Queue, Relay, Tail, load
from syslogbench.model.scenarios import Scenario
from syslogbench.model.settings import Settings
from syslogbench.rig import control
from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher.concern import Concern
from syslogbench.rig.watcher.files import LineCounter, directory_bytes

QUEUE_SAMPLE_S = 0.5
RELAY_QUIET_S = 5.0  # no new line at the last hop for this long means nothing more is coming
DRAIN_TIMEOUT = 60.0  # the last hop reads what the stopped daemon had already sent


class RelayQueue(Concern):
    """The bytes in the central daemon's disk queue, sampled while the run goes. Only a disk queue leaves files
    to measure; an in-memory one shows in the daemon's memory samples."""

    every = QUEUE_SAMPLE_S

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.disk = scenario.buffer != "none"
        self.directory = contract.QUEUE_DIR
        self.samples: list[list[float]] = []
        self.peak = 0

    def update(self, now: float) -> None:
        if not self.disk:
            return
        size = directory_bytes(self.directory)
        self.peak = max(self.peak, size)
        self.samples.append([round(now, 2), size])

    def record(self, obs: Observed) -> None:
        """The relay section, which the tail and the restart add to; the last hop's part comes after the
        stop (after_stop)."""
        queue = Queue(
            buffer=self.scenario.buffer,
            where=f"named volume 'queue' at {contract.QUEUE_DIR} in the daemon" if self.disk else "memory",
            capacity_bytes=contract.QUEUE_CAPACITY_BYTES if self.disk else None,
            peak_bytes=self.peak if self.disk else None,
            bytes_after_stop=None,
            samples=self.samples,
        )
        obs.relay = Relay(queue=queue)


class RelayTail(Concern):
    """After the DONEs: until every expected line is at the last hop, or none came for RELAY_QUIET_S.

    DONEs can overtake queued messages (rsyslog's disk-assisted queue sends from memory while older messages
    wait on disk), so the DONE threshold does not mean that everything arrived. Stopping the daemon then would
    count messages still queued as lost. It runs after the watch, only when the DONEs ended it.
    """

    def __init__(self, cfg: Settings, counter: LineCounter) -> None:
        self.cfg, self.counter = cfg, counter
        self.began: float | None = None
        self.now = self.changed = 0.0
        self.first = self.lines = 0

    def begin(self, now: float) -> None:
        self.began = self.now = self.changed = now
        self.first = self.lines = self.counter.update()

    @property
    def ended(self) -> bool:
        if self.lines >= self.cfg.expected_messages:
            return True
        return self.now - self.changed > RELAY_QUIET_S or self.now > self.cfg.run_timeout

    def update(self, now: float) -> None:
        self.now = now
        if (count := self.counter.update()) != self.lines:
            self.lines, self.changed = count, now

    def record(self, obs: Observed) -> None:
        if self.began is None or obs.relay is None:
            return
        obs.relay.tail = Tail(
            lines_at_done=self.first,
            lines_at_stop=self.lines,
            waited_s=round(self.now - self.began, 3),
            last_line_s=round(self.changed, 3),
        )


def after_stop(obs: Observed) -> None:
    """After the daemon stopped: the queue it left, and the last hop's report once it has read all it was
    sent, so reconciliation sees everything."""
    if obs.relay is None:
        return
    obs.relay.queue.bytes_after_stop = directory_bytes(contract.QUEUE_DIR)
    drained = control.CONTROL.drained
    try:
        control.wait_for(drained, DRAIN_TIMEOUT, "the last hop to read what the daemon had sent", poll=0.05)
    except control.WaitTimeout as error:
        obs.errors.append(str(error))
        return
    obs.relay.last_hop = load(LastHop, control.read_json(drained), drained.name)
