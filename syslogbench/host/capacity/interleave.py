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
from syslogbench.model.compare import CONTROL_SUFFIX

if TYPE_CHECKING:
    from syslogbench.host.capacity.plan import Search

# capacity/command.py's run(): a search, its results directory, and how it differs as one of several.
Searching = Callable[..., int]

# Beyond the longest lifetime of the searches: a stack's start and stop, before a thread is given up.
JOIN_ALLOWANCE_S = 900.0


@dataclass
class Ended:
    """How one search of the round ended: its result file, or why there is none; and its exit code."""

    path: Path | None = None
    code: int | None = None
    why: str = ""


def widened(chosen: Search, searches: int) -> Search:
    """The search with SEARCH_MAX for its wall time: its own trials' time times the searches that share the
    machine (each waits for the others' turns)."""
    cap = replace(chosen.cap, search_max_s=chosen.cap.search_max_s * searches)
    capacity.check_lifetime(cap)
    return replace(chosen, cap=cap)


def one(name: str, side: tuple[Search, Ceiling], folder: Path, turns: Turns, note: str,
        log: Callable[[str], None], ended: Ended, searching: Searching) -> None:  # fmt: skip
    """A thread's search, into folder/capacity/; however it ends, the turns go on without it."""
    chosen, ceiling = side
    shared = Interleaved(lambda: turns.turn(name), note, ceiling)
    try:
        ended.code = searching(chosen, folder, build=False, log=lambda line: log(f"[{name}] {line}"),
                                 project=f"{project_name()}-{folder.name}-{slug(name)}", interleaved=shared)  # fmt: skip
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


def slug(name: str) -> str:
    """A compose project's part for a side's name: letters, digits and dashes; of a config, its file's name."""
    base = name.removesuffix(CONTROL_SUFFIX)
    profile, _, config = base.partition("=")
    name = (f"{profile}-{Path(config).name}" if config else profile) + ("-aa" if base != name else "")
    kept = "".join(c if c.isalnum() else "-" for c in name.lower())
    return "-".join(part for part in kept.split("-") if part)[:40] or "side"


def run(searches: dict[str, tuple[Search, Ceiling]], folder: Path, seed: int, log: Callable[[str], None],
        searching: Searching, taken: list[str] | None = None,
        ended: dict[str, Ended] | None = None) -> dict[str, Ended]:  # fmt: skip
    """Every search at once (each widened() already, with its ceiling), a trial at a time, each into
    folder/<its number>/capacity/: how each ended (into `ended`, which the caller still has when Ctrl-C
    ends the round); taken gets whose each trial was, in order. Ctrl-C stops every search at its next turn;
    each still writes its result, then KeyboardInterrupt."""
    longest = max(capacity.lifetime_s(chosen.cap) for chosen, _ in searches.values())
    turns = Turns(list(searches), seed, wait_s=longest + JOIN_ALLOWANCE_S, taken=taken)
    note = (f"one of {len(searches)} searches interleaved trial by trial (compare), so SEARCH_MAX is their wall "
            f"time together")  # fmt: skip
    ended = {} if ended is None else ended
    ended.update({name: Ended() for name in searches})
    threads = [
        threading.Thread(
            target=one, args=(name, side, folder / str(n), turns, note, log, ended[name], searching)
        )
        for n, (name, side) in enumerate(searches.items(), 1)
    ]
    # Their stacks come up in a random order too: started in the sides' order, the A/A control's always came
    # up last (findings/compare-capacity.md, "Is the control below the first side?").
    for thread in random.Random(seed).sample(threads, len(threads)):
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
