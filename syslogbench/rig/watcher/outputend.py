"""The end of a run on a config of the user's own (`run --config`): it has no done.log and no SEC rule.

The run ends when every sender's DONE message is in some file under /var/log (elapsed_s: the look that saw
the last one). If some DONE never comes (the config drops or loses it), it ends once every ledger is in and
the output has not grown for OUTPUT_QUIET seconds (elapsed_s: the last growth seen). A config that has
written nothing under /var/log NO_OUTPUT_S after the start ends the run at once, in error.

Each look reads what the files gained since the last one, to find the DONEs: in the measured window, on the
daemon's cores, this reads the output once more (docs/userconfig.md). Stdlib only: runs in the watcher.
"""

from __future__ import annotations

import os
from pathlib import Path

from syslogbench.contract import BLOCK_BYTES, DONE_LOG, Trigger
from syslogbench.model import userconfig
from syslogbench.model.messages import DONE_RE
from syslogbench.model.settings import Settings
from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher.concern import Ending
from syslogbench.rig.watcher.quiet import QuietOutput


class OutputEnd(Ending):
    every = 0.25

    def __init__(self, directory: Path, cfg: Settings, quiet_s: float, no_output_s: float) -> None:
        self.directory, self.cfg, self.quiet_s, self.no_output_s = directory, cfg, quiet_s, no_output_s
        self.wanted = {(h, s) for h in range(1, cfg.hosts + 1) for s in range(1, cfg.senders_per_host + 1)}
        self.offsets: dict[str, int] = {}
        self.done: set[tuple[int, int]] = set()
        self.last_done: float | None = None
        self.bytes = 0
        self.quiet = QuietOutput(cfg.senders, quiet_s)

    @property
    def last_growth(self) -> float | None:
        return self.quiet.last_growth

    def update(self, now: float) -> None:
        before = len(self.done)
        quiet = self.quiet.over(now, self.read_new())
        if len(self.done) > before:
            self.last_done = now
        if self.done >= self.wanted:
            self.trigger = Trigger.DONE_IN_OUTPUT
        elif self.bytes == 0 and now >= self.no_output_s:
            self.trigger = Trigger.NO_OUTPUT
            self.error = (
                f"the daemon wrote no file under {userconfig.DAEMON_LOG_DIR} in {self.no_output_s:g} s: does the "
                "config write its output there? (writes elsewhere are not counted: see config.not_counted)"
            )
        elif quiet:
            self.trigger = Trigger.OUTPUT_QUIET

    def read_new(self) -> bool:
        """Read what each file gained (whole lines), noting the DONEs; True if any file grew."""
        grew = False
        for root, _, names in os.walk(self.directory):
            for name in names:
                path = os.path.join(root, name)
                if name == DONE_LOG and root == str(self.directory):
                    continue  # ours, empty: the config writes elsewhere
                try:
                    size = os.stat(path).st_size
                except FileNotFoundError:
                    continue
                offset = self.offsets.get(path, 0)
                if size > offset:
                    grew = True
                    self.bytes += size - offset
                    self.offsets[path] = self.scan(path, offset, size)
        return grew

    def scan(self, path: str, offset: int, size: int) -> int:
        """The DONEs in the whole lines from offset to size, a block at a time; the offset read to."""
        with open(path, "rb") as handle:
            handle.seek(offset)
            while offset < size and (data := handle.read(min(BLOCK_BYTES, size - offset))):
                whole = data[: data.rfind(b"\n") + 1]
                if not whole:
                    break
                for match in DONE_RE.finditer(whole):
                    self.done.add((int(match.group(1)), int(match.group(2))))
                offset += len(whole)
                handle.seek(offset)
        return offset

    def record(self, obs: Observed) -> None:
        if self.trigger is None:
            return
        obs.end_trigger = self.trigger
        if self.error:
            obs.errors.append(self.error)
        elif self.trigger == Trigger.DONE_IN_OUTPUT:
            obs.elapsed_s = self.last_done
        else:
            obs.elapsed_s = self.last_growth
            missing = sorted(self.wanted - self.done)
            obs.notes.append(
                f"{len(self.wanted) - len(missing)} of {len(self.wanted)} DONE messages reached the output "
                f"(missing: {', '.join(f'host{h}-s{s}' for h, s in missing[:8])}"
                f"{' ...' if len(missing) > 8 else ''}): the run ended when every ledger was in and the output "
                f"had not grown for {self.quiet_s:g} s (OUTPUT_QUIET). elapsed_s runs to the last growth seen."
            )
