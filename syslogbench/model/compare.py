"""A comparison, typed: what `syslogbench compare` writes to results/compare/<id>.json and the report reads.
With --capacity a run is a capacity search and its NDR and PDR are paired in place of the drain rate and CPU
per message (MEASURES); with --duet a run is one window of every side's daemon under load at once, and its
CPU per message and p99 latency are paired (host/capacity/duet.py). The rest below holds for all three.

Two or more sides (a profile at a tuning, or with a user's config) run the same scenario's burst in rounds,
every side once a round, in a fresh random order each round, so that all sides meet the same machine
within a minute of each other; the first side runs twice a round, its second run the A/A control. Each
side's runs are paired with the first side's by round: the ratio of the two drain rates (and of CPU per
message) in each round, summarised by their geometric mean and a 95% t-interval of the log ratios. A side
"differs" where that ratio is at least the larger of MIN_EFFECT and the control's own distance from 1 away
from 1, and its interval excludes 1; a field is "erratic" where the control's ratios of it spread by more
than ERRATIC_SPREAD (their coefficient of variation), and then nothing is judged of it (Vector's rules for its
regression detector; Abedi and Brecht, ICPE 2017, for the randomized interleaving). Stdlib only; read
strictly through model/codec.py.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from syslogbench.model import codec
from syslogbench.model.student import t95

KIND = "compare"
MIN_EFFECT = 0.05
ERRATIC_SPREAD = 0.10
CONTROL_SUFFIX = " (A/A)"  # the first side's second run of each round
PASS = "pass"
FIELDS = ("msgs_per_s", "cpu_us_per_msg")  # what is paired: the drain rate, the daemon's CPU per message
# What is paired by what the sides measure: their burst, or a capacity search each (`compare --capacity`).
# With --duet every side's daemon runs at once on the same core(s), each under its own senders at one fixed
# rate: what is paired there is each window's CPU per message and p99 latency.
MEASURES = {"burst": FIELDS, "capacity": ("ndr_msgs_per_s", "pdr_msgs_per_s"),
            "duet": ("cpu_us_per_msg", "p99_ms")}  # fmt: skip
# Paired beside a measure's two figures: in a capacity comparison, each side's daemon CPU per message in one
# trial at the comparison's fixed rate, below every side's saturation (host/compare.py, fixed_rate).
AT_RATE = {"capacity": ("cpu_us_per_msg",)}
LABELS = {"msgs_per_s": "msgs/s", "cpu_us_per_msg": "CPU per message", "ndr_msgs_per_s": "NDR",
          "pdr_msgs_per_s": "PDR", "p99_ms": "p99 latency"}  # fmt: skip
# What a comparison's runs are, in words (the command's table and the report).
MEASURE_WORDS = {"burst": "bursts", "capacity": "capacity searches",
                 "duet": "daemons under load at once (duet)"}  # fmt: skip


class CompareResultError(ValueError):
    """A file that is not a comparison this model reads: the message says what is wrong, in one line."""


@dataclass
class Run:
    """One burst run of a side in one round, or one capacity search (its result id in run_id, its verdict
    "pass" where it found an NDR below its ceiling), or with --duet one window (its "round") of the daemon
    under its fixed rate beside the others ("pass" where every message arrived in time); an error run that
    wrote no result has its exit code only."""

    side: str
    round: int
    verdict: str
    run_id: str | None = None
    msgs_per_s: float | None = None
    cpu_us_per_msg: float | None = None
    exit_code: int | None = None
    ndr_msgs_per_s: float | None = None
    pdr_msgs_per_s: float | None = None
    why: str | None = None  # what kept the run from "pass", in one line
    # A search's upper bounds: the lowest rate that failed its goal; with the published rate they are the
    # search's own resolution (SEARCH_WIDTH), which a ratio's interval must not be narrower than.
    ndr_upper_msgs_per_s: float | None = None
    pdr_upper_msgs_per_s: float | None = None
    # --duet: the window's p99 latency (ms), and how busy the daemons' shared core(s) were over it (0 to 1):
    # near 1 the fixed rate was not below saturation.
    p99_ms: float | None = None
    core_busy: float | None = None
    # --capacity: the place the search's stack had in its round, drawn afresh each round (its folder
    # searches/round-<n>/<place>/); None in comparisons before it was drawn, where the sides took 1, 2, ... in
    # order and the control the last (run_names).
    place: int | None = None


@dataclass
class Side:
    """A side: its name in the comparison, its profile, its tuning ("default", "tuned" or "user"), and the
    user config's identity (model/userconfig.py) where it has one."""

    name: str
    profile: str
    tuning: str
    config: dict[str, object] | None = None


def one_config(sides: Sequence[Side]) -> bool:
    """Every side runs one config (one profile at one tuning, or one user config): each is an A/A control of
    the first, as `--side X --side X@default` makes them, and their ratios measure the floor alone."""
    return len({(side.profile, side.tuning, repr(side.config)) for side in sides}) == 1


@dataclass
class Bound:
    """What one unpaired round still says of a capacity ratio: a search that held a rate ("at least", or a
    figure it confirmed while the other did not) over the other's upper bound (the lowest rate that failed)
    is a floor under the round's ratio; the inverse, a ceiling. Never paired, never judged."""

    round: int
    low: float | None
    high: float | None

    def text(self) -> str:
        """ "round 1 ≥ 1.416", "round 2 ≤ 1.088", "round 3 1.2 to 1.9"."""
        if self.low is not None and self.high is not None:
            return f"round {self.round} {self.low:.3f} to {self.high:.3f}"
        return f"round {self.round} " + (
            f"≥ {self.low:.3f}" if self.low is not None else f"≤ {self.high:.3f}"
        )


@dataclass
class Ratio:
    """A side over the first, paired by round: the geometric mean of the rounds' ratios, its 95% interval
    (None with fewer than two pairs), the pairs it rests on, and the verdict; and of capacity, the bounds
    that rounds it could not pair still put on it."""

    value: float | None
    low: float | None
    high: float | None
    pairs: int
    verdict: str  # "differs", "not told apart", "erratic" or "no ratio"
    bounds: list[Bound] = field(default_factory=list)

    def text(self, pairs: bool = False, bounds: bool = True) -> str:
        """ "1.148 [1.090, 1.208]", the value alone where it has no interval, "-" where there is none, with
        "(n=3)" where asked; then, unless told not to, any unpaired round's bounds ("-; round 1 ≥ 1.416")."""
        said = "-" if self.value is None else f"{self.value:.3f}"
        if self.value is not None and self.low is not None and self.high is not None:
            said += f" [{self.low:.3f}, {self.high:.3f}]"
        if pairs and self.value is not None:
            said += f" (n={self.pairs})"
        return "; ".join([said, *(bound.text() for bound in self.bounds if bounds)])


@dataclass
class Judged:
    """judge()'s answer: side -> field -> ratio; and per field, the floor, the control's spread, erratic."""

    ratios: dict[str, dict[str, Ratio]]
    floor: dict[str, float]
    control_spread: dict[str, float | None]
    erratic: dict[str, bool]


@dataclass
class CompareResult:
    """results/compare/<id>.json."""

    kind: str  # "compare"
    id: str
    outcome: str  # "done", or "interrupted" (the rounds so far)
    scenario: str
    started_utc: str
    finished_utc: str
    rounds: int
    seed: int  # of the rounds' random order
    machine: dict[str, object]  # model.result.Host's fields
    sides: list[Side]  # the first is the one every other is over; the control is its second run
    runs: list[Run] = field(default_factory=list)
    measure: str = "burst"  # or "capacity": a search per side and round, interleaved trial by trial
    turns: list[list[str]] = field(default_factory=list)  # capacity: per round, whose each trial was
    # side name -> field ("msgs_per_s", "cpu_us_per_msg") -> its ratio over the first side; the control too
    ratios: dict[str, dict[str, Ratio]] = field(default_factory=dict)
    # Per field: max(MIN_EFFECT, the control's distance from 1), what a ratio must pass; the coefficient of
    # variation of the control's ratios; and whether that is past ERRATIC_SPREAD (nothing judged then).
    floor: dict[str, float] = field(default_factory=dict)
    control_spread: dict[str, float | None] = field(default_factory=dict)
    erratic: dict[str, bool] = field(default_factory=dict)
    # --duet: each side's fixed rate (msg/s, all its senders together) and a window's length. --capacity: the
    # rate of each search's trial for CPU per message (AT_RATE), no window. None otherwise.
    rate_msgs_per_s: float | None = None
    window_s: float | None = None

    def to_dict(self) -> dict:
        return codec.plain(self)  # type: ignore[return-value]

    def measure_text(self) -> str:
        """What the runs were, in words, a duet's rate and window with it ("daemons under load at once (duet),
        each at 3,000 msg/s in windows of 10 s"): the command's table and the report say it alike."""
        words = MEASURE_WORDS[self.measure]
        if self.rate_msgs_per_s is not None and self.measure in AT_RATE:
            return f"{words}, CPU per message from a trial each at {self.rate_msgs_per_s:,.0f} msg/s"
        if self.rate_msgs_per_s is None or self.window_s is None:
            return words
        return f"{words}, each at {self.rate_msgs_per_s:,.0f} msg/s in windows of {self.window_s:g} s"

    def control_text(self, name: str) -> str:
        """A field's floor and its A/A control's spread, in words: the command and the report say it alike."""
        spread = self.control_spread.get(name)
        erratic = " (erratic: nothing judged)" if self.erratic.get(name) else ""
        return (f"floor {self.floor.get(name, MIN_EFFECT):.1%}, the A/A control's spread "
                f"{'-' if spread is None else f'{spread:.1%}'}{erratic}")  # fmt: skip


T = TypeVar("T")


def control_name(first: str) -> str:
    return first + CONTROL_SUFFIX


def run_names(sides: Sequence[str]) -> list[str]:
    """Every name a round runs, in the order its searches are numbered: the sides, then the first's control."""
    return [*sides, control_name(sides[0])]


def with_control(by_name: Mapping[str, T]) -> dict[str, T]:
    """Each side's value by name (the first side first), then the A/A control's: the first side's again."""
    first = next(iter(by_name))
    return {**by_name, control_name(first): by_name[first]}


def paired(runs: Sequence[Run], side: str, base: str, name: str) -> list[float]:
    """The side's value over the base's in each round where both passed with a value."""
    values: dict[tuple[str, int], float] = {}
    for run in runs:
        value = getattr(run, name)
        if run.verdict == PASS and isinstance(value, (int, float)) and value > 0:
            values[(run.side, run.round)] = float(value)
    rounds = sorted({r for s, r in values if s == side} & {r for s, r in values if s == base})
    return [values[(side, r)] / values[(base, r)] for r in rounds]


def interval(ratios: Sequence[float]) -> tuple[float | None, float | None, float | None]:
    """The geometric mean of the ratios and its 95% t-interval on their logs (no interval below 2)."""
    if not ratios:
        return None, None, None
    logs = [math.log(r) for r in ratios]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), None, None
    half = t95(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


# A search's published rate and its upper bound (the lowest that failed): where each search's rate lies.
UPPER = {"ndr_msgs_per_s": "ndr_upper_msgs_per_s", "pdr_msgs_per_s": "pdr_upper_msgs_per_s"}


def resolution(runs: Sequence[Run], side: str, base: str, name: str) -> tuple[float, float] | None:
    """What the searches' own width leaves of the ratio: each search's rate lies between its published rate
    and its upper bound, so a round's ratio lies between side/base_upper and side_upper/base; the geometric
    means of those over the paired rounds. None for a figure that is not a search's, or with no pair. Two
    searches that land on the same rates every round give ratios without spread: their t-interval alone would
    be [1, 1], narrower than either search could tell."""
    upper = UPPER.get(name)
    if upper is None:
        return None
    found: dict[tuple[str, int], tuple[float, float]] = {}
    for run in runs:
        value, top = getattr(run, name), getattr(run, upper)
        if run.verdict == PASS and isinstance(value, (int, float)) and value > 0:
            found[(run.side, run.round)] = (float(value), float(top) if top and top > value else float(value))
    rounds = sorted({r for s, r in found if s == side} & {r for s, r in found if s == base})
    if not rounds:
        return None
    lows = [math.log(found[(side, r)][0] / found[(base, r)][1]) for r in rounds]
    highs = [math.log(found[(side, r)][1] / found[(base, r)][0]) for r in rounds]
    return math.exp(statistics.fmean(lows)), math.exp(statistics.fmean(highs))


def held(run: Run, name: str) -> tuple[float | None, float | None]:
    """Where one search's true rate lies: at or above a figure it published (it held there), below its upper
    bound (the lowest rate that failed); either unknown (None). An unconfirmed figure is not published."""
    value, top = getattr(run, name), getattr(run, UPPER[name])
    if run.verdict == "error":
        return None, None
    low = float(value) if isinstance(value, (int, float)) and value > 0 else None
    high = float(top) if isinstance(top, (int, float)) and top > 0 else None
    return low, high


def bounds(runs: Sequence[Run], side: str, base: str, name: str) -> list[Bound]:
    """The bounds each round that paired() leaves out still puts on the side's ratio over the base: the side's
    held rate over the base's upper bound, and its upper bound over the base's held rate. Capacity only."""
    if name not in UPPER:
        return []
    paired_rounds = {run.round for run in runs if run.side == side and run.verdict == PASS} & {
        run.round for run in runs if run.side == base and run.verdict == PASS
    }
    found: dict[tuple[str, int], tuple[float | None, float | None]] = {
        (run.side, run.round): held(run, name) for run in runs if run.side in (side, base)
    }
    out = []
    for number in sorted(
        {r for s, r in found if s == side} & {r for s, r in found if s == base} - paired_rounds
    ):
        (side_low, side_high), (base_low, base_high) = found[(side, number)], found[(base, number)]
        low = side_low / base_high if side_low and base_high else None
        high = side_high / base_low if side_high and base_low else None
        if low is not None or high is not None:
            out.append(Bound(number, rounded(low), rounded(high)))
    return out


def widened(runs: Sequence[Run], side: str, base: str, name: str,
            low: float | None, high: float | None) -> tuple[float | None, float | None]:  # fmt: skip
    """The t-interval, no narrower than the searches' resolution (where there is an interval at all)."""
    if low is None or high is None or (bracket := resolution(runs, side, base, name)) is None:
        return low, high
    return min(low, bracket[0]), max(high, bracket[1])


def spread(ratios: Sequence[float]) -> float | None:
    """The coefficient of variation of the ratios; None below two."""
    if len(ratios) < 2:
        return None
    return statistics.stdev(ratios) / statistics.fmean(ratios)


def verdict(value: float | None, low: float | None, high: float | None, floor: float, erratic: bool) -> str:
    if value is None:
        return "no ratio"
    if erratic:
        return "erratic"
    far = abs(value - 1.0) >= floor
    excludes = low is not None and high is not None and (high < 1.0 or low > 1.0)
    return "differs" if far and excludes else "not told apart"


def judge(runs: Sequence[Run], sides: Sequence[str], fields: Sequence[str] = FIELDS) -> Judged:
    """Every side's ratios over the first (the control's too), and per field the floor, the control's spread
    and whether it is erratic: a field is judged by its own control (CPU per message can hold where the
    drain rate wanders)."""
    first, control = sides[0], control_name(sides[0])
    judged = Judged({}, {}, {}, {})
    for name in fields:
        aa = paired(runs, control, first, name)
        aa_value = interval(aa)[0]
        floor = max(MIN_EFFECT, abs(aa_value - 1.0) if aa_value is not None else 0.0)
        aa_spread = spread(aa)
        erratic = aa_spread is not None and aa_spread > ERRATIC_SPREAD
        judged.floor[name], judged.erratic[name] = round(floor, 4), erratic
        judged.control_spread[name] = None if aa_spread is None else round(aa_spread, 4)
        for side in [control, *sides[1:]]:
            judged.ratios.setdefault(side, {})[name] = ratio_over(
                runs, side, first, name, MIN_EFFECT if side == control else floor, erratic
            )
    return judged


def ratio_over(runs: Sequence[Run], side: str, base: str, name: str, floor: float, erratic: bool) -> Ratio:
    """The side's figure over the base's, paired by round: geometric mean, interval no narrower than the
    searches' resolution, and the verdict against the floor."""
    found = paired(runs, side, base, name)
    value, low, high = interval(found)
    low, high = widened(runs, side, base, name, low, high)
    said = verdict(value, low, high, floor, erratic)
    return Ratio(
        rounded(value), rounded(low), rounded(high), len(found), said, bounds(runs, side, base, name)
    )


def fields(measure: str) -> tuple[str, ...]:
    """Every figure a measure pairs: its two (MEASURES), then those at its fixed rate (AT_RATE)."""
    return (*MEASURES[measure], *AT_RATE.get(measure, ()))


def judge_again(found: CompareResult) -> None:
    """The result's ratios, floors and spreads computed again from its runs, after a run's verdict changed."""
    judged = judge(found.runs, [side.name for side in found.sides], fields(found.measure))
    found.ratios, found.floor = judged.ratios, judged.floor
    found.control_spread, found.erratic = judged.control_spread, judged.erratic


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def result_from_dict(data: object) -> CompareResult:
    """The document as a CompareResult; CompareResultError (one line) where it does not fit."""
    try:
        found = codec.load_kind(CompareResult, data, "compare result", KIND)
    except codec.CodecError as error:
        raise CompareResultError(str(error)) from None
    if found.measure not in MEASURES:
        raise CompareResultError(
            f"compare result: measure {found.measure!r} is not one of {sorted(MEASURES)}"
        )
    wanted = sorted(fields(found.measure))
    for name, ratios in found.ratios.items():  # a reader of a measure's figures finds each, or none at all
        if sorted(ratios) != wanted:
            raise CompareResultError(
                f"compare result: the ratios of {name!r} are of {sorted(ratios)}, not {found.measure}'s {wanted}"
            )
    return found


def text(found: CompareResult) -> str:
    """The result file's text, read back through result_from_dict first: what is written is what reads."""
    return json.dumps(result_from_dict(found.to_dict()).to_dict(), indent=1, sort_keys=True) + "\n"


def read(path: Path) -> CompareResult:
    """results/compare/<id>.json; CompareResultError (one line) for a file that is not one."""
    try:
        return result_from_dict(codec.read_json(path))
    except codec.CodecError as error:
        raise CompareResultError(str(error)) from None
