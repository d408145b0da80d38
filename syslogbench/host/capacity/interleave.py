"""Several capacity searches at once, one trial at a time: each search runs in a thread of its own, on a stack
of its own, and takes a turn for every trial (capacity/turns.py), so that every search meets the same machine
within a few trials of the others (Abedi and Brecht, ICPE 2017: randomized multiple interleaved trials).
`compare --capacity` runs its sides through here; the searches themselves are capacity/command.py's run(),
which the caller hands in (Search below), with the turn in their measurer (capacity/measurer.py)."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from syslogbench.host.capacity.turns import Interleaved, Turns
from syslogbench.host.compose import project_name
from syslogbench.model import capacity
from syslogbench.model.capacity import Ceiling

if TYPE_CHECKING:
    from syslogbench.host.capacity.searchplan import Search

# capacity/command.py's run(): a search, its results directory, and how it differs as one of several.
Searching = Callable[..., int]

# Beyond the longest lifetime of the searches: a stack's start and stop, before a thread is given up.
JOIN_ALLOWANCE_S = 900.0


@dataclass
class Ended:
    """How one search of the round ended: its result file, or why there is none; its exit code; and the
    place its stack had in the round (places() below)."""

    path: Path | None = None
    code: int | None = None
    why: str = ""
    place: int | None = None


def widened(chosen: Search, searches: int) -> Search:
    """The search with SEARCH_MAX for its wall time: its own trials' time times the searches that share the
    machine (each waits for the others' turns)."""
    cap = replace(chosen.cap, search_max_s=chosen.cap.search_max_s * searches)
    capacity.check_lifetime(cap)
    return replace(chosen, cap=cap)


def places(names: list[str], seed: int) -> dict[str, int]:
    """Each search's place in its round, 1 to n: its folder (round-<r>/<place>/) and its compose project
    (<project>-round-<r>-<place>), drawn afresh each round, apart from the turns' draw (with the turns' own
    seed, a place followed from the order of the round's first turns). With the first side always at 1 and
    its copies after it, the copies came out below it (findings/compare-capacity.md, "A second copy on one
    grid")."""
    draw = random.Random(f"places {seed}")
    return dict(zip(names, draw.sample(range(1, len(names) + 1), len(names)), strict=True))


def one(name: str, side: tuple[Search, Ceiling], folder: Path, turns: Turns, note: str,
        log: Callable[[str], None], ended: Ended, searching: Searching,
        cpu_rate: float | None = None) -> None:  # fmt: skip
    """A thread's search, into folder/capacity/ (folder named for its place); however it ends, the turns go
    on without it."""
    chosen, ceiling = side
    shared = Interleaved(lambda: turns.turn(name), note, ceiling, cpu_rate)
    try:
        ended.code = searching(chosen, folder, build=False, log=lambda line: log(f"[{name}] {line}"),
                                 project=f"{project_name()}-{folder.parent.name}-{folder.name}", interleaved=shared)  # fmt: skip
    except KeyboardInterrupt:
        ended.why = "stopped"
    except Exception as error:  # noqa: BLE001 - one search's failure is its side's "error", not the others'
        ended.why = f"{type(error).__name__}: {error}"
    finally:
        turns.leave(name)
    written = sorted((folder / "capacity").glob("*.json"))
    ended.path = written[-1] if written else None
    if ended.path is None and not ended.why:
        ended.why = f"the search wrote no result (exit code {ended.code})"


def run(searches: dict[str, tuple[Search, Ceiling]], folder: Path, seed: int, log: Callable[[str], None],
        searching: Searching, taken: list[str] | None = None,
        ended: dict[str, Ended] | None = None, cpu_rate: float | None = None) -> dict[str, Ended]:  # fmt: skip
    """Every search at once (each widened() already, with its ceiling), a trial at a time, each into
    folder/<its place>/capacity/: how each ended (into `ended`, which the caller still has when Ctrl-C
    ends the round); taken gets whose each trial was, in order; cpu_rate: each search's first trial after
    its warm-up is at this rate (capacity/search.py, at_rate). Ctrl-C stops every search at its next turn;
    each still writes its result, then KeyboardInterrupt."""
    longest = max(capacity.lifetime_s(chosen.cap) for chosen, _ in searches.values())
    turns = Turns(list(searches), seed, wait_s=longest + JOIN_ALLOWANCE_S, taken=taken)
    note = (f"one of {len(searches)} searches interleaved trial by trial (compare), so SEARCH_MAX is their wall "
            f"time together")  # fmt: skip
    where = places(list(searches), seed)
    ended = {} if ended is None else ended
    ended.update({name: Ended(place=where[name]) for name in searches})

    def thread(name: str, side: tuple[Search, Ceiling]) -> threading.Thread:
        at = folder / str(where[name])
        return threading.Thread(
            target=one, args=(name, side, at, turns, note, log, ended[name], searching, cpu_rate)
        )

    threads = [thread(name, side) for name, side in searches.items()]
    # Their stacks come up in a random order too: started in the sides' order, the A/A control's always came
    # up last (findings/compare-capacity.md, "Is the control below the first side?").
    for thread in random.Random(seed).sample(threads, len(threads)):  # the order of the round's first turns
        thread.start()
    try:
        for thread in threads:
            thread.join(longest + JOIN_ALLOWANCE_S)
    except KeyboardInterrupt as signal:
        turns.stop(type(signal))
        for thread in threads:
            thread.join(longest + JOIN_ALLOWANCE_S)
        raise
    for name, thread in zip(searches, threads, strict=True):
        if thread.is_alive():
            ended[name].why = "the search did not end in its lifetime"
    return ended
