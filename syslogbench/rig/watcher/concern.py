"""What every concern of the watch has: it looks (update), may end the run (ended), writes its part (record)."""

from __future__ import annotations

from syslogbench.rig.outcome import Observed


class Concern:
    """One concern of the watch. `now` is always seconds after the start signal."""

    ended = False  # this concern ends the run (only the ones that can end it ever set it)
    # At most one look per `every` seconds; 0 is every look of the watch (concerns.POLL_S). The watch runs
    # inside the measured window on the daemon's cores: a look that need not be that quick is made less often.
    # The one timer of every concern: the watch calls update only when due() says so.
    every = 0.0
    next_look = 0.0  # the first look; a concern may set it later

    def due(self, now: float) -> bool:
        if now < self.next_look:
            return False
        self.next_look = now + self.every
        return True

    def update(self, now: float) -> None:
        """Look at what it follows; called when due(), until some concern has ended the run."""

    def holds(self, now: float) -> bool:
        """Something this concern set going is still under way: a run that the DONEs ended waits for it."""
        return False

    def stop(self, now: float) -> None:
        """The watch is over at `now`: a last look, where the figure needs one."""

    def record(self, obs: Observed) -> None:
        """Write this concern's own part of what goes into the result, and nothing else."""


class Ending(Concern):
    """A concern that ends the run by naming what ended it (the result's end.trigger), and perhaps an error."""

    trigger: str | None = None
    error: str | None = None

    @property
    def ended(self) -> bool:  # type: ignore[override]
        return self.trigger is not None
