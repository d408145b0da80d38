"""`knobs`' plan and its arithmetic, apart from any container: which steps run, in which order, and what each
knob's step bought.

Two phases. Alone: the package's defaults, then each knob by itself at each value asked (or its tuned
value), so that each knob's own effect is seen against the same default. Together: from the defaults to
`tuned` one knob at a time, the knob that bought most alone first, so that the step that matters most comes
first and each later step shows what it adds on top. Each step's share is its gain over the whole gain from
the first step to the last.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import median

from syslogbench.host import tuning

DEFAULT_STEP = "default"
# The control: the package's defaults as `run` runs them, from the image, where every step (the default one
# too) runs a config rendered for it and mounted. Its distance from the default step is what the way a step
# runs costs, or the machine's drift between repeats: no knob's gain smaller than that says anything.
CONTROL_STEP = "default-as-run"


@dataclass(frozen=True)
class Step:
    """One config of the knob command: its name, its phase ("default", "control", "alone", "together"), the knobs it
    sets (knob name -> value as asked; None: the knob's tuned value)."""

    name: str
    phase: str
    values: dict[str, str | None] = field(default_factory=dict)


def parse_asked(words: Sequence[str]) -> dict[str, list[str | None]]:
    """--knob NAME, NAME=V1,V2 or A+B: the knobs to try, each at its tuned value or at the values given; A+B
    is one step with both at their tuned values (a knob on top of another, tried alone only)."""
    asked: dict[str, list[str | None]] = {}
    for word in words:
        name, sep, values = word.partition("=")
        combined = "+" in name and (sep or any(not part for part in name.split("+")))
        if (
            not name
            or (sep and not values)
            or any(not value for value in values.split(",") if sep)
            or combined
        ):
            raise tuning.TuningError(
                f"--knob {word!r}: give a knob's name, NAME=VALUE[,VALUE...] or NAME+NAME, e.g. --knob "
                "file-cache=10,64,256 or --knob file-cache+async-write"
            )
        asked[name] = [*asked.get(name, []), *(values.split(",") if sep else [None])]
    return asked


def alone_steps(
    knobs: tuple[tuning.Knob, ...], target: tuning.Target, asked: Mapping[str, list]
) -> list[Step]:
    """The default, then each knob alone at each value: the knobs asked for, or every knob that applies."""
    names = list(asked) or [knob.knob for knob in knobs if knob.applies(target.scenario, target.version)]
    tuning.custom(knobs, target, dict.fromkeys(part for name in names for part in name.split("+")))  # refuses
    steps = [Step(DEFAULT_STEP, "default"), Step(CONTROL_STEP, "control")]
    for name in names:
        if "+" in name:
            steps.append(Step(name, "alone", dict.fromkeys(name.split("+"))))
            continue
        for value in asked.get(name) or [None]:
            label = f"{name}={value}" if value is not None else name
            steps.append(Step(label, "alone", {name: value}))
    return steps


def gain(rates: Mapping[str, Sequence[float]], step: str, base: str = DEFAULT_STEP) -> float | None:
    """A step's median rate over the base step's: 1.0 is no change."""
    if not rates.get(step) or not rates.get(base):
        return None
    return median(rates[step]) / median(rates[base])


def together_steps(
    knobs: tuple[tuning.Knob, ...], alone: list[Step], rates: Mapping[str, Sequence[float]]
) -> list[Step]:
    """From the default to every tuned knob at its best value alone, one knob more per step, the knob that
    bought most alone first. A knob marked tuned: false is tried alone only (its trade-off keeps it out of
    `tuned`). The first step of the chain is the best knob alone, measured already: it is not run again."""
    tuned = {knob.knob for knob in knobs if knob.tuned}
    best: dict[str, tuple[float, Step]] = {}
    for step in alone:
        if step.phase != "alone" or len(step.values) != 1:
            continue  # the default, or knobs tried together
        (name,) = step.values
        if name not in tuned:
            continue
        found = gain(rates, step.name) or 0.0
        if name not in best or found > best[name][0]:
            best[name] = (found, step)
    order = sorted(best, key=lambda name: -best[name][0])
    steps, values = [], {}
    for count, name in enumerate(order, start=1):
        values = {**values, **best[name][1].values}
        if count > 1:
            steps.append(Step("+".join(best[n][1].name for n in order[:count]), "together", dict(values)))
    return steps


def chain(
    knobs: tuple[tuning.Knob, ...],
    alone: list[Step],
    together: list[Step],
    rates: Mapping[str, Sequence[float]],
) -> list[str]:
    """The steps from the default to the last one, in order: the default, the tuned knob that bought most
    alone, then each together step."""
    if together:
        return [DEFAULT_STEP, together[0].name.split("+")[0], *(step.name for step in together)]
    tuned = {knob.knob for knob in knobs if knob.tuned}
    single = [s for s in alone if s.phase == "alone" and len(s.values) == 1 and set(s.values) <= tuned]
    best = max(single, key=lambda s: gain(rates, s.name) or 0, default=None)
    return [DEFAULT_STEP, *([best.name] if best else [])]


def shares(names: list[str], rates: Mapping[str, Sequence[float]]) -> dict[str, float | None]:
    """Each step's gain in median rate over the step before, as a share of the whole gain from the first step
    to the last (None for the first, or where there is no gain to share)."""
    medians = [median(rates[name]) if rates.get(name) else None for name in names]
    whole = None if None in (medians[0], medians[-1]) else medians[-1] - medians[0]
    whole = whole if whole and whole > 0 else None  # no gain, or a loss: nothing to share out
    found: dict[str, float | None] = {names[0]: None}
    for before, name, now in zip(medians, names[1:], medians[1:], strict=False):
        ok = whole and before is not None and now is not None
        found[name] = round((now - before) / whole, 4) if ok else None
    return found


def rounds(steps: list[Step], replicates: int, seed: int) -> list[tuple[int, Step]]:
    """Every step once per round, in a fresh random order each round, so that a machine that drifts does not
    favour the steps that come first."""
    draw = random.Random(seed)
    order = []
    for replicate in range(1, replicates + 1):
        shuffled = list(steps)
        draw.shuffle(shuffled)
        order += [(replicate, step) for step in shuffled]
    return order
