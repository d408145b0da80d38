"""The quiet-output rule that ends a run whose DONEs did not all arrive (a UDP run, a user's config).

Once every ledger is in (nothing more will be sent), output that has not grown for a while means the daemon
has written all it will write; the run's elapsed_s is then the last growth seen. Stdlib only.
"""

from __future__ import annotations

from syslogbench.rig.watcher.files import Ledgers


class QuietOutput:
    """Every sender's ledger in, then no growth of the output for quiet_s seconds."""

    def __init__(self, senders: int, quiet_s: float) -> None:
        self.senders, self.quiet_s = senders, quiet_s
        self.last_growth: float | None = None
        self.ledgers = Ledgers()
        self.ledgers_in: float | None = None

    def over(self, now: float, grew: bool) -> bool:
        """One look at `now`: grew says whether the output grew since the last look."""
        if grew:
            self.last_growth = now
        if self.ledgers_in is None and len(self.ledgers.update()) >= self.senders:
            self.ledgers_in = now
        if self.ledgers_in is None:
            return False
        return now - max(self.ledgers_in, self.last_growth or 0.0) >= self.quiet_s
