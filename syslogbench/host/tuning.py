"""The tuning axis: `default` (the package's own settings, as in 2014) or `tuned` (what each family's
maintainers recommend for throughput), read from the family's record (daemons/_families/<family>.yaml,
`knobs:`).

Each knob there names where it goes in the family's template (a slot), its parameter and value, the daemon's
own default, the documentation that recommends it and what it trades away. A value may follow the scenario:
`{files}` is the number of files the scenario writes, `{connections}` its TCP connections,
`{max_connections}` the max-connections() the profile's config renders (syslog-ng divides its window by it), and
`{max_connections*1000}` that times 1000. `also:` sets more parameters of the same slot with the knob (a main
queue's size restated, say). `tuned: false`
marks a knob that `knobs` may try but `tuned` leaves out, because its trade-off breaks a goal of the run
(a write delayed past LATENCY_BOUND, say). No Python here names a knob.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from syslogbench.model import messages, scenarios, settings

TUNINGS = settings.TUNINGS
DEFAULT = settings.DEFAULT_TUNING
# What a knob's record must give, and may.
KNOB_REQUIRED = ("knob", "what", "slot", "param", "value", "default", "source", "trades")
KNOB_NAME = re.compile(r"[a-z][a-z0-9-]*")
# The names a value may use: what it follows in the scenario.
VALUE_NAMES = ("files", "connections", "max_connections")
# {name} or {name*N}: window sizes follow the connections times a per-connection window.
VALUE_REFERENCE = re.compile(r"\{(\w+)(?:\*([0-9]+))?\}")


class TuningError(settings.SettingsError):
    """A tuning record that cannot be used, or a knob asked for that does not exist: one line."""


@dataclass(frozen=True)
class Knob:
    knob: str  # its name on the command line: `knobs --knob file-cache=10,64,256`
    what: str
    slot: str  # where the family's template puts it
    param: str  # the parameter's name in that slot
    value: str  # the tuned value: a literal, or {files} / {connections}
    default: str  # the daemon's own default, as its documentation gives it
    source: str  # the documentation that recommends it
    trades: str  # what it costs: latency, durability, memory
    tuned: bool = True  # False: `knobs` may try it, `tuned` leaves it out (say why in trades)
    # Scenario fields and the values the knob applies at (e.g. destination: [split]); empty: every scenario.
    when: Mapping[str, tuple[object, ...]] = field(default_factory=dict)
    since: str = ""  # the first version that has it; empty: every version the project runs
    also: Mapping[str, str] = field(default_factory=dict)  # more parameters of the slot, set with it

    def applies(self, scenario: scenarios.Scenario, version: str) -> bool:
        if self.since and version_key(version) < version_key(self.since):
            return False
        return all(getattr(scenario, name) in allowed for name, allowed in self.when.items())

    def resolve(
        self, scenario: scenarios.Scenario, params: Mapping[str, object], value: str | None = None
    ) -> str:
        """The value for this scenario and profile (its manifest's config params): the given one, or the tuned
        one with its names filled in."""
        text = self.value if value is None else value
        known = scenario_values(scenario, params)
        return VALUE_REFERENCE.sub(lambda match: str(known[match.group(1)] * int(match.group(2) or 1)), text)


def version_key(version: str) -> tuple[int, ...]:
    """8.2504.0 -> (8, 2504, 0): the parts that are numbers, compared as numbers."""
    return tuple(int(part) for part in re.findall(r"\d+", version))


def scenario_values(scenario: scenarios.Scenario, params: Mapping[str, object]) -> dict[str, int]:
    """What a knob's value may follow: the files the scenario writes, its TCP connections, and the
    max-connections() the template renders for it (the larger of the manifest's and the scenario's)."""
    files = messages.FACILITIES * messages.SEVERITIES if scenario.destination == "split" else 1
    limit = max(int(params.get("max_connections", 0) or 0), scenario.connections)  # type: ignore[call-overload]
    connections = scenario.hosts * scenario.senders_per_host
    return {"files": files, "connections": connections, "max_connections": limit or connections}


def parse_knobs(where: str, data: object, slots: Mapping[str, str]) -> tuple[Knob, ...]:
    """The `knobs:` list of a family's record, each knob checked; TuningError names the first problem."""
    if data is None:
        return ()
    if not isinstance(data, list):
        raise TuningError(f"{where}: knobs must be a list (knob:, what:, slot:, ...)")
    knobs = tuple(parse_knob(f"{where}: knobs[{index}]", item, slots) for index, item in enumerate(data))
    names = [knob.knob for knob in knobs]
    if twice := sorted({name for name in names if names.count(name) > 1}):
        raise TuningError(f"{where}: knobs name {twice} more than once: each knob once")
    return knobs


def parse_knob(where: str, item: object, slots: Mapping[str, str]) -> Knob:
    if not isinstance(item, dict):
        raise TuningError(f"{where}: must be a mapping (knob:, what:, slot:, ...)")
    missing = [key for key in KNOB_REQUIRED if item.get(key) in (None, "")]
    if missing:
        raise TuningError(
            f"{where} ({item.get('knob', '?')}): missing {', '.join(missing)}: every knob says what it is, "
            "where it goes, the daemon's default, the documentation that recommends it and what it trades away"
        )
    unknown = sorted(set(item) - set(Knob.__dataclass_fields__))
    if unknown:
        raise TuningError(
            f"{where}: unknown keys {unknown}; the keys are: {', '.join(Knob.__dataclass_fields__)}"
        )
    name = str(item["knob"])
    if not KNOB_NAME.fullmatch(name):
        raise TuningError(f"{where}: knob {name!r}: use lower case, digits and '-' (e.g. file-cache)")
    if item["slot"] not in slots:
        raise TuningError(f"{where} ({name}): slot {item['slot']!r} is not one of {sorted(slots)}")
    if not isinstance(item.get("tuned", True), bool):
        raise TuningError(f"{where} ({name}): tuned must be true or false")
    names = {found[0] for found in VALUE_REFERENCE.findall(str(item["value"]))} - set(VALUE_NAMES)
    if names:
        raise TuningError(f"{where} ({name}): value names {sorted(names)}; it may name {list(VALUE_NAMES)}")
    return Knob(
        knob=name,
        what=" ".join(str(item["what"]).split()),
        slot=str(item["slot"]),
        param=str(item["param"]),
        value=str(item["value"]),
        default=str(item["default"]),
        source=" ".join(str(item["source"]).split()),
        trades=" ".join(str(item["trades"]).split()),
        tuned=item.get("tuned", True),
        when=conditions(f"{where} ({name})", item.get("when") or {}),
        since=str(item.get("since") or ""),
        also=also(f"{where} ({name})", item.get("also") or {}),
    )


def also(where: str, data: object) -> dict[str, str]:
    if not isinstance(data, dict):
        raise TuningError(f"{where}: also must map parameters of the same slot to their values")
    return {str(key): str(value) for key, value in data.items()}


def conditions(where: str, data: object) -> dict[str, tuple[object, ...]]:
    fields = {axis.name: axis for axis in scenarios.FIELDS}
    if not isinstance(data, dict):
        raise TuningError(f"{where}: when must map scenario fields to the values it applies at")
    found = {}
    for name, values in data.items():
        if name not in fields:
            raise TuningError(f"{where}: when names {name!r}, not a scenario field ({', '.join(fields)})")
        listed = tuple(values) if isinstance(values, list) else (values,)
        allowed = fields[name].allowed
        if allowed and (bad := [value for value in listed if value not in allowed]):
            raise TuningError(f"{where}: when {name}: {bad} not among {list(allowed)}")
        found[name] = listed
    return found


@dataclass(frozen=True)
class Applied:
    """What one config was rendered with: its tuning's name, and each knob's value, in the record's order."""

    tuning: str
    values: dict[str, str]  # knob name -> value

    def slots(self, knobs: tuple[Knob, ...]) -> dict[str, dict[str, str]]:
        """slot -> {param: value}: what the template reads."""
        by_name = {knob.knob: knob for knob in knobs}
        found: dict[str, dict[str, str]] = {}
        for name, value in self.values.items():
            knob = by_name[name]
            found.setdefault(knob.slot, {}).update({knob.param: value, **knob.also})
        return found

    def record(self, knobs: tuple[Knob, ...]) -> dict[str, object]:
        """As results keep it: the tuning, and each knob with its parameter, value, default and source."""
        by_name = {knob.knob: knob for knob in knobs}
        return {
            "tuning": self.tuning,
            "knobs": {
                name: {
                    "param": by_name[name].param,
                    "value": value,
                    **({"also": dict(by_name[name].also)} if by_name[name].also else {}),
                    "default": by_name[name].default,
                    "source": by_name[name].source,
                }
                for name, value in self.values.items()
            },
        }


@dataclass(frozen=True)
class Target:
    """What a knob is rendered for: the scenario, the daemon's version and its manifest's config params."""

    scenario: scenarios.Scenario
    version: str
    params: Mapping[str, object] = field(default_factory=dict)


def tuned(knobs: tuple[Knob, ...], target: Target) -> Applied:
    """`tuned`: every knob marked tuned that applies to this scenario and version, at its tuned value."""
    chosen = [knob for knob in knobs if knob.tuned and knob.applies(target.scenario, target.version)]
    return Applied("tuned", {knob.knob: knob.resolve(target.scenario, target.params) for knob in chosen})


def applied(tuning: str, knobs: tuple[Knob, ...], target: Target) -> Applied:
    if tuning == DEFAULT:
        return Applied(DEFAULT, {})
    return tuned(knobs, target)


def custom(knobs: tuple[Knob, ...], target: Target, values: Mapping[str, str | None]) -> Applied:
    """A step of `knobs`: the named knobs at the given values (None: the tuned value), in the record's order."""
    by_name = {knob.knob: knob for knob in knobs}
    if unknown := sorted(set(values) - set(by_name)):
        raise TuningError(f"unknown knob(s) {unknown}: the knobs are {', '.join(by_name) or 'none'}")
    scenario, version = target.scenario, target.version
    if idle := [name for name in values if not by_name[name].applies(scenario, version)]:
        raise TuningError(
            f"knob(s) {idle} do not apply to scenario {scenario.id} on version {version}: leave them out"
        )
    ordered = [knob for knob in knobs if knob.knob in values]
    return Applied(
        "custom", {knob.knob: knob.resolve(scenario, target.params, values[knob.knob]) for knob in ordered}
    )
