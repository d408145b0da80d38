"""Whose trial is next when several capacity searches share the machine (capacity/interleave.py runs them):
every running search once per time round, in a random order drawn afresh each time round; and what a search
does differently as one of them (Interleaved), which capacity/command.py takes."""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from syslogbench.host.capacity.measurer import TrialFailed
from syslogbench.model.capacity import Ceiling


class Turns:
    """Whose trial is next: every search still running once per time round, in a random order drawn
    afresh each time round. A search waits for its turn at most wait_s; stop() makes every later turn end
    its search as Ctrl-C (or SIGTERM) did the command."""

    def __init__(self, names: list[str], seed: int, wait_s: float, taken: list[str] | None = None) -> None:
        self._cond = threading.Condition()
        self._running = list(names)
        self._order: list[str] = []
        self._draw = random.Random(seed)
        # What stopped the turns, None until then: KeyboardInterrupt (Ctrl-C), or host/cli.py's SIGTERM.
        self._stopped: type[KeyboardInterrupt] | None = None
        self.wait_s = wait_s
        self.taken = [] if taken is None else taken  # who had each turn, in order: the result keeps it

    def _next(self) -> str | None:
        if not self._order and self._running:
            self._order = self._draw.sample(self._running, len(self._running))
        return self._order[0] if self._order else None

    @contextlib.contextmanager
    def turn(self, name: str) -> Iterator[None]:
        """The block runs while it is name's turn and no one else's."""
        with self._cond:
            mine = self._cond.wait_for(lambda: self._stopped is not None or self._next() == name, self.wait_s)
            if self._stopped is not None:
                raise self._stopped
            if not mine:
                raise TrialFailed(f"{name} waited {self.wait_s:,.0f} s for its turn: another search hung")
        try:
            yield
        finally:
            with self._cond:
                self._order.remove(name)
                self.taken.append(name)
                self._cond.notify_all()

    def leave(self, name: str) -> None:
        """name's search has ended: the turns go round without it."""
        with self._cond:
            self._running.remove(name)
            if name in self._order:
                self._order.remove(name)
            self._cond.notify_all()

    def stop(self, by: type[KeyboardInterrupt] = KeyboardInterrupt) -> None:
        """Every later turn raises `by`: what stopped the command (Ctrl-C, or host/cli.py's SIGTERM), so that
        each search's result says which."""
        with self._cond:
            self._stopped = by
            self._cond.notify_all()


@dataclass(frozen=True)
class Interleaved:
    """What a search does differently as one of several at once: it waits for its turn before each trial,
    takes no fingerprint of its own (the others' stacks are up), and says so in its notes."""

    turn: Callable[[], contextlib.AbstractContextManager[None]]
    note: str
    ceiling: Ceiling  # where its RATE_MAX came from: set once for every round (compare's burst runs)
    cpu_rate: float | None = None  # every side's one trial at this rate first (capacity/search.py, at_rate)
