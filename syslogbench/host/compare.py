"""`syslogbench compare`: two or more sides over one scenario's burst, or with --capacity their capacity
searches, interleaved in one run and paired into ratios over the first side, with an A/A control
(model/compare.py says how they are judged).

A side is a profile at a tuning (`rsyslog-8.2504`, `syslog-ng-4.8@tuned`) or with a user's config
(`syslog-ng-4.8=my.conf`). Every round runs each side once and the first side twice. A burst round runs
them one after another in a fresh random order, each a burst run as `run` makes it, kept in
results/compare/<id>/runs/. A capacity round runs their searches at once, each on a stack of its own, one
trial at a time in a fresh random order each time round (host/capacity/interleave.py), kept in
results/compare/<id>/searches/; each side's RATE_MAX comes once, before the first round, from its burst
(host/capacity/ceiling.py), unless given. The comparison is one file, results/compare/<id>.json, which the
report reads.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from syslogbench import contract
from syslogbench.host import benchmark, environment, lock, runplan
from syslogbench.host.capacity import ceiling, duet, interleave, searchplan
from syslogbench.host.capacity import command as capacity_command
from syslogbench.host.capacity.search import AT_RATE
from syslogbench.host.compose import project_name
from syslogbench.host.log import log
from syslogbench.model import capacity, compare_pairs, machine, result, settings
from syslogbench.model import compare as model

if TYPE_CHECKING:
    from syslogbench.host.onehost import OneHost

# The rounds' random order is drawn from a seed drawn afresh each comparison and recorded in its result: with
# one fixed seed every comparison of as many sides took the same sequence of turns (findings/compare-capacity.md,
# "Is the control below the first side?").


# Each search's trial for CPU per message runs at this fraction of the lowest burst drain rate of the sides:
# below every side's saturation (over seed2014 the NDRs were 1.2 to 1.8 times the drain rates, 0f68), so the
# daemons' CPU per message is compared at one rate, where none of them loses anything.
CPU_FRACTION = 0.5


def fresh_seed() -> int:
    return random.SystemRandom().randrange(1, 2**31)


class CompareError(settings.SettingsError):
    """A comparison that cannot run as asked: one line that says what to change."""


@dataclass(frozen=True)
class Side:
    """One side, checked: its name as given, and the plan every one of its runs runs."""

    name: str
    plan: runplan.Plan
    search: searchplan.Search | None = None  # --capacity: the search each round runs

    @property
    def record(self) -> model.Side:
        chosen = self.plan
        tuning = str(chosen.tuning_record()["tuning"])
        return model.Side(self.name, chosen.profile.profile, tuning, chosen.config_identity)


def side_words(word: str) -> tuple[str, str | None, Path | None]:
    """PROFILE, PROFILE@TUNING or PROFILE=CONFIG: the profile, the tuning given, the config given."""
    if "=" in word:
        name, _, path = word.partition("=")
        return name, None, Path(path)
    name, _, tuning = word.partition("@")
    return name, tuning or None, None


def make_side(word: str, overrides: dict[str, str], on: OneHost, searches: int = 0) -> Side:
    """searches: with --capacity, how many searches share the machine in a round (0: a burst side)."""
    name, tuning, config = side_words(word)
    if tuning is not None and tuning not in settings.TUNINGS:
        raise CompareError(f"--side {word}: tuning {tuning!r}: give {' or '.join(settings.TUNINGS)}")
    if "TUNING" in overrides:
        raise CompareError(
            "compare sets each side's TUNING itself: write PROFILE@tuned as the side, not TUNING="
        )
    given = {**overrides, "TUNING": tuning or settings.DEFAULT_TUNING}
    if config is not None:
        given.pop("TUNING")
    own = None if config is None else (config, False)
    if searches and config is not None:
        raise CompareError(
            f"--side {word}: compare --capacity and --duet take profiles at a tuning only, not a config of your own: in "
            "searches that take turns, syslog-ng with a user's config lost whole trials, which it did not alone "
            "(docs/findings/user-config-interleaved.md); search it alone with capacity --config"
        )
    if searches:
        return searched_side(word, searchplan.plan(name, given, on, own), searches)
    chosen = runplan.make(name, given, on, own)
    if chosen.unsupported:
        said = "; ".join(chosen.unsupported)
        raise CompareError(
            f"--side {word}: {chosen.profile.profile} cannot run scenario {chosen.scenario.id}: {said}"
        )
    chosen.on.refuse_unfit(chosen)
    return Side(word, chosen)


def searched_side(word: str, found: searchplan.Search, searches: int) -> Side:
    """A capacity side: its search, widened for the searches that share the machine in a round."""
    widened = interleave.widened(found, searches)
    return Side(word, widened.plan, widened)


def refuse_few_rounds(rounds: int, flag: str = "--rounds") -> None:
    if rounds < 2:
        raise CompareError(f"{flag} {rounds}: the rounds are paired into ratios: give 2 or more (one round has "
                           "no interval)")  # fmt: skip


def make(words: list[str], overrides: dict[str, str], rounds: int, on: OneHost,
         searches: bool = False, duet_rate: float | None = None) -> list[Side]:  # fmt: skip
    """Every bad input as one line, before any container: the sides, the settings, the rounds. on: this
    machine's compose (the runs are interleaved on one machine); searches: --capacity; duet_rate: --duet's
    fixed rate (each side a stack with a search's settings, its daemon beside the others')."""
    if len(words) < 2:
        raise CompareError("give two sides or more: --side A --side B (the first is the one each is over)")
    if len(set(words)) != len(words):
        raise CompareError(f"--side given twice: {sorted({w for w in words if words.count(w) > 1})}; the A/A "
                           "control of the first side is run for you")  # fmt: skip
    refuse_few_rounds(rounds)
    if duet_rate is not None:
        sides = [make_side(word, overrides, on, 1) for word in words]
        try:
            duet.check(stacks(sides), duet_rate, rounds)
        except duet.DuetError as error:
            raise CompareError(str(error)) from None
        return sides
    return [make_side(word, overrides, on, len(words) + 1 if searches else 0) for word in words]


def stacks(sides: list[Side]) -> dict[str, searchplan.Search]:
    """--duet: every side's search settings by name, the first's twice (its A/A control)."""
    return model.with_control({side.name: side.search for side in sides if side.search is not None})


def profiles(names: list[str], overrides: dict[str, str], rounds: int, on: OneHost) -> list[Side]:
    """`matrix --capacity`: every profile a side of one capacity comparison, the first the one each is over,
    all at the TUNING given (default the profiles' own). A profile that cannot search the scenario's transport
    (the baseline has no UDP) is said n/a and left out; fewer than two left is one line."""
    refuse_few_rounds(rounds, "--replicates")
    given = dict(overrides)
    tuning = given.pop("TUNING", None)
    found: dict[str, searchplan.Search] = {}
    for name in dict.fromkeys(runplan.resolve(name).profile for name in names):
        try:
            one = searchplan.plan(name, {**given, "TUNING": tuning or settings.DEFAULT_TUNING}, on)
        except searchplan.Unsupported as reason:
            log(f"n/a: {reason}")
            continue
        found[f"{name}@{tuning}" if tuning else name] = one
    if len(found) < 2:
        raise CompareError(f"--profiles: {len(found)} of them can search this scenario; give two or more that "
                           "can (a capacity matrix ranks each over the first)")  # fmt: skip
    return [searched_side(word, one, len(found) + 1) for word, one in found.items()]


def schedule(sides: list[str], rounds: int, seed: int) -> list[tuple[int, str]]:
    """Every side once a round and the first twice (its control), in a fresh random order each round."""
    draw = random.Random(seed)
    order = []
    for number in range(1, rounds + 1):
        names = model.run_names(sides)
        draw.shuffle(names)
        order += [(number, name) for name in names]
    return order


def run_one(side: Side, name: str, number: int, runs_dir: Path) -> model.Run:
    options = runplan.RunOptions(lambda path: None, build=False)
    code, written = benchmark.run_kept(side.plan, runs_dir, options)
    if written is None:
        return model.Run(name, number, "error", exit_code=code)
    found = result.read(written)
    used, total = found.cpu.used_s, found.messages.expected
    cpu = round(used / total * 1e6, 3) if used is not None and total else None
    run = model.Run(name, number, found.verdict, found.run_id, found.throughput.msgs_per_s, cpu)
    rate = "-" if run.msgs_per_s is None else f"{run.msgs_per_s:,.0f}"
    log(f"compare: {name}, round {number}: {run.verdict}, {rate} msg/s")
    return run


def cpu_rate_of(ceilings: dict[str, capacity.Ceiling]) -> float | None:
    """The rate of every search's trial for CPU per message: CPU_FRACTION of the lowest burst drain rate,
    down to three significant figures; None where a side had no burst (RATE_MAX given, or a paced scenario):
    no rate then is known to lie below every side's saturation."""
    drained = [one.burst_msgs_per_s if one.source == "burst" else None for one in ceilings.values()]
    known = [rate for rate in drained if rate]
    if not drained or len(known) < len(drained):
        return None
    return ceiling.rounded_down(CPU_FRACTION * min(known))


def cpu_rate_words(cpu_rate: float | None) -> str:
    if cpu_rate is None:
        return "compare: no CPU per message paired at a fixed rate: a side's RATE_MAX came from no burst"
    return (
        f"compare: CPU per message paired at {cpu_rate:,.0f} msg/s, {CPU_FRACTION:g} of the lowest drain rate"
    )


def cpu_at_rate(found: capacity.CapacityResult) -> tuple[float | None, str | None]:
    """The daemon's CPU per message (us) in the search's trial at the comparison's fixed rate, and why there
    is none where that trial lost or delayed any message (the rate was not below its saturation)."""
    trial = next((t for t in reversed(found.trials) if t.purpose == AT_RATE), None)
    if trial is None:
        return None, None
    if trial.loss_ratio > 0:
        missed = trial.lost + trial.late + trial.unsent
        return None, (f"its trial at {trial.offered_msgs_per_s:,.0f} msg/s missed {missed:,} of "
                      f"{trial.intended:,} messages: no CPU per message there")  # fmt: skip
    if not trial.daemon_cpu_s or not trial.received:
        return None, None
    return round(trial.daemon_cpu_s / trial.received * 1e6, 3), None


def search_run(name: str, number: int, ended: interleave.Ended) -> model.Run:
    """One side's search of a round as the comparison keeps it: "pass" where it found an NDR below its
    ceiling; "at least" where its RATE_MAX held (never ranked); else its outcome, and why."""
    if ended.path is None:
        return model.Run(name, number, "error", exit_code=ended.code, why=ended.why, place=ended.place)
    try:
        found = capacity.read(ended.path)
    except capacity.CapacityResultError as error:  # a result this version cannot read is that run's error
        return model.Run(name, number, "error", exit_code=ended.code, why=str(error)[:300], place=ended.place)
    verdict = "pass" if found.outcome == "found" else found.outcome
    why = (
        "; ".join([*found.errors, *(b.unconfirmed for b in (found.ndr, found.pdr) if b.unconfirmed)])[:300]
        or None
    )
    if found.at_ceiling:
        verdict, why = "at least", capacity.at_least_text(found)
    cpu, missed = cpu_at_rate(found)
    why = "; ".join(part for part in (why, missed) if part) or None
    run = model.Run(name, number, verdict, found.run_id, cpu_us_per_msg=cpu, exit_code=ended.code, why=why,
                    ndr_msgs_per_s=found.ndr_msgs_per_s, pdr_msgs_per_s=found.pdr_msgs_per_s,
                    ndr_upper_msgs_per_s=found.ndr.upper_msgs_per_s,
                    pdr_upper_msgs_per_s=found.pdr.upper_msgs_per_s, place=ended.place)  # fmt: skip
    rate = "-" if run.ndr_msgs_per_s is None else f"{run.ndr_msgs_per_s:,.0f}"
    log(f"compare: {name}, round {number}: {run.verdict}, NDR {rate} msg/s")
    return run


def side_ceilings(sides: list[Side], folder: Path) -> dict[str, tuple[searchplan.Search, capacity.Ceiling]]:
    """Each side's search with its RATE_MAX, once, from its burst (one after another, before any search);
    the A/A control's the first side's."""
    return model.with_control(
        {side.name: ceiling.ceiling(side.search, folder, False, (), log) for side in sides if side.search}
    )


def searched(ceilings: dict[str, tuple[searchplan.Search, capacity.Ceiling]], rounds: int, folder: Path,
             turns: list[list[str]], runs: list[model.Run], seed: int, cpu_rate: float | None) -> None:  # fmt: skip
    """The searches, round by round, into runs: every round's searches at once, a trial at a time (whose
    each was: into turns), each first a trial at the fixed rate (None: none). A round that Ctrl-C ends still
    gives its searches' runs, each as it ended."""
    for number in range(1, rounds + 1):
        turns.append([])
        where = folder / "searches" / f"round-{number}"
        ended: dict[str, interleave.Ended] = {}
        try:
            interleave.run(
                ceilings, where, seed + number, log, capacity_command.run, turns[-1], ended, cpu_rate
            )
        finally:
            runs.extend(search_run(name, number, how) for name, how in ended.items())


def bursts(sides: list[Side], rounds: int, folder: Path, seed: int) -> Iterator[model.Run]:
    by_name = model.with_control({side.name: side for side in sides})
    for number, name in schedule([s.name for s in sides], rounds, seed):
        yield run_one(by_name[name], name, number, folder / "runs")


def measure_of(sides: list[Side], duet_rate: float | None = None) -> str:
    """What the sides measure (model.MEASURES): their daemons at once, a capacity search each, or their burst."""
    if duet_rate is not None:
        return "duet"
    return "capacity" if sides[0].search is not None else "burst"


def duet_facts(sides: list[Side], rate: float | None) -> tuple[float | None, float | None]:
    """--duet's fixed rate and window length, as the result records them."""
    return (None, None) if rate is None or sides[0].search is None else (rate, duet.window_s(sides[0].search))


def command(
    sides: list[Side], rounds: int, results_dir: Path, on: OneHost, duet_rate: float | None = None
) -> int:
    began = datetime.now(UTC)
    scenario = sides[0].plan.scenario.id
    measure = measure_of(sides, duet_rate)
    cid = f"{result.run_id(began, 'compare', None)}-{scenario}" + (
        "" if measure == "burst" else f"-{measure}"
    )
    folder = results_dir / "compare" / cid
    runs: list[model.Run] = []
    turns: list[list[str]] = []
    seed = fresh_seed()
    cpu_rate: float | None = None  # --capacity: the rate of each search's trial for CPU per message
    try:
        with lock.project(project_name()):
            for side in sides:  # images built, and a user's config checked by its daemon, before any run
                on.images_ready(side.plan, True, log)
            if measure == "duet":
                assert duet_rate is not None
                duet.run(stacks(sides), folder, duet_rate, rounds, log, runs)
            else:
                if measure == "capacity":
                    ceilings = side_ceilings(sides, folder)
                    cpu_rate = cpu_rate_of({name: one for name, (_, one) in ceilings.items()})
                    log(cpu_rate_words(cpu_rate))
                    searched(ceilings, rounds, folder, turns, runs, seed, cpu_rate)
                else:
                    runs.extend(bursts(sides, rounds, folder, seed))
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the rounds so far still make a result, which says so
        write(sides, cid, began, rounds, runs, results_dir, "interrupted", turns, duet_rate, seed=seed,
              cpu_rate=cpu_rate)  # fmt: skip
        raise
    path = write(sides, cid, began, rounds, runs, results_dir, turns=turns, duet_rate=duet_rate, seed=seed,
                 cpu_rate=cpu_rate)  # fmt: skip
    print(table(model.read(path)))
    log(f"compare: {path}")
    verdicts = {run.verdict for run in runs}
    return contract.EXIT_CODES["pass"] if verdicts == {"pass"} else contract.EXIT_CODES["error"]


def write(sides: list[Side], cid: str, began: datetime, rounds: int, runs: list[model.Run], results_dir: Path,
          outcome: str = "done", turns: list[list[str]] | None = None, duet_rate: float | None = None, *,
          seed: int, cpu_rate: float | None = None) -> Path:  # fmt: skip
    """The comparison's one file; cpu_rate: --capacity's rate of CPU per message, recorded where a duet's is."""
    measure = measure_of(sides, duet_rate)
    rate, window = duet_facts(sides, duet_rate)
    if measure in model.AT_RATE:
        rate = cpu_rate
    judged = model.judge(runs, [side.name for side in sides], model.fields(measure))
    found = model.CompareResult(
        kind=model.KIND,
        id=cid,
        outcome=outcome,
        scenario=sides[0].plan.scenario.id,
        started_utc=result.utc(began),
        finished_utc=result.utc(datetime.now(UTC)),
        rounds=rounds,
        seed=seed,
        machine=asdict(machine.host_facts(docker_version=environment.docker_version())),
        sides=[side.record for side in sides],
        runs=runs,
        measure=measure,
        turns=turns or [],
        ratios=judged.ratios,
        floor=judged.floor,
        control_spread=judged.control_spread,
        erratic=judged.erratic,
        rate_msgs_per_s=rate,
        window_s=window,
    )
    path = results_dir / "compare" / f"{cid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(model.text(found))
    return path


def table(found: model.CompareResult) -> str:
    """One row per side over the first: its ratio of each figure paired (the drain rate and CPU per message,
    or the NDR and PDR), and the verdicts."""
    first, (one, two) = found.sides[0].name, model.MEASURES[found.measure]
    label1, label2 = model.LABELS[one], model.LABELS[two]
    what = found.measure_text()
    rows = [f"over {first}, {found.rounds} rounds, scenario {found.scenario} ({what}): ratio [95% interval] "
            "(pairs)", f"{'side':<40} {label1 + ' ratio':<34} {label2 + ' ratio':<34} verdict"]  # fmt: skip
    for name, ratios in found.ratios.items():
        a, b = ratios[one], ratios[two]
        rows.append(
            f"{name[:40]:<40} {a.text(pairs=True):<34} {b.text(pairs=True):<34} {a.verdict}; {label2}: {b.verdict}"
        )
    for name in (one, two):
        rows.append(
            f"{model.LABELS[name]}: {found.control_text(name)} (the floor: the larger of "
            f"{model.MIN_EFFECT:.0%} and the control's distance from 1)"
        )
    for pair in compare_pairs.pairs(found):  # like with like beyond the first: sides at two tunings
        if pair.base != first:
            a, b = pair.ratios[one], pair.ratios[two]
            rows.append(f"{pair.side} over {pair.base} ({pair.differs_in} alone): {label1} {a.text(pairs=True)}, "
                        f"{a.verdict}; {label2} {b.text(pairs=True)}, {b.verdict}")  # fmt: skip
    rows += at_rate_lines(found)
    rows += [f"{run.side}, round {run.round}: {run.verdict}: {run.why}" for run in found.runs if run.why]
    return "\n".join(rows)


def at_rate_lines(found: model.CompareResult) -> list[str]:
    """A capacity comparison's CPU per message at its fixed rate: each side's ratio over the first, and
    the control's floor."""
    if found.rate_msgs_per_s is None or found.measure not in model.AT_RATE:
        return []
    rows = []
    for name in model.AT_RATE[found.measure]:
        label = f"{model.LABELS[name]} at {found.rate_msgs_per_s:,.0f} msg/s"
        rows += [f"{label}, {side} over {found.sides[0].name}: {ratios[name].text(pairs=True)}, "
                 f"{ratios[name].verdict}" for side, ratios in found.ratios.items()]  # fmt: skip
        rows.append(f"{label}: {found.control_text(name)}")
    return rows
