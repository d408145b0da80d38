"""Result files read strictly: every key a field of the model, every value of its field's type.

Both result kinds go through here: a run's (model/result/, whose reader also migrates older documents)
and a capacity search's (model/capacity/). A file with an unknown key, a missing one, or a figure that is
not a number ("fast" for ndr_msgs_per_s) is one line naming the place, never the model's own exception.
Stdlib only.
"""

from __future__ import annotations

import functools
import json
import types
import typing
from dataclasses import MISSING, fields, is_dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
# What a result's scalar types are called in the line that says what is wrong.
KINDS: dict[object, str] = {float: "a number", int: "a whole number", str: "text", bool: "true or false"}
# A trial's latency histogram holds thousands of counts and a result dozens of trials: lists and objects of
# these are checked, built and copied in one pass each, not value by value through the type machinery.
SCALARS = (str, int, float, bool, type(None))
# A list of records whose field says `metadata=COLUMNS` is written as one list per key, {"id": [...], "sent":
# [...]}: a trial's 20 senders as rows repeated every key 20 times, 22.6 MB of the 58 MB of committed trials.
# Read back, either layout gives the same records (rows: results written before it).
COLUMNS = {"layout": "columns"}


class CodecError(ValueError):
    """A document that does not fit its model: where, and what is wrong there."""


def arms(hint: object) -> tuple[object, ...]:
    """The types a hint allows: (float, NoneType) for `float | None`."""
    union = isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
    return typing.get_args(hint) if union else (hint,)


def kind(hint: object) -> str:
    """A type hint in words: `float | None` is "a number or null"."""
    if len(arms(hint)) > 1:
        return " or ".join(map(kind, arms(hint)))
    if hint is type(None):
        return "null"
    origin = typing.get_origin(hint)
    if origin in (list, dict):
        return "a list" if origin is list else "an object"
    return KINDS.get(hint, "an object")


def json_text(value: object) -> str:
    """A value as the file spells it: null, "fast", 1.5."""
    return json.dumps(value, default=repr)


def fits(value: object, hint: object) -> bool:
    if hint is typing.Any:
        return True
    if hint in (int, float) and isinstance(value, bool):  # a bool is not a figure
        return False
    if hint is float:  # JSON writes 2.0 as 2
        return isinstance(value, int | float)
    return not isinstance(hint, type) or isinstance(value, hint)


def wrong_value(value: object, hint: object, where: str) -> str | None:
    """Where value (at `where` in a result) does not fit its type hint, and what it holds; None when it
    fits. Keys alone are not enough: "fast" for elapsed_s would reach the statistics."""
    allowed = arms(hint)
    if value is None and type(None) in allowed:
        return None
    problem = f"{where} is {json_text(value)}, not {kind(hint)}"
    hint = next(arm for arm in allowed if arm is not type(None))
    if is_dataclass(hint) and isinstance(hint, type):
        return wrong_field(value, f"{where}.") if isinstance(value, hint) else problem
    origin = typing.get_origin(hint)
    if origin in (list, dict):
        if not isinstance(value, origin):
            return problem
        item = typing.get_args(hint)[-1]
        entries = value.items() if isinstance(value, dict) else enumerate(value)
        if item in KINDS:
            bad = next(((k, v) for k, v in entries if not fits(v, item)), None)
            return None if bad is None else f"{where}.{bad[0]} is {json_text(bad[1])}, not {kind(item)}"
        return next(filter(None, (wrong_value(v, item, f"{where}.{k}") for k, v in entries)), None)
    return None if fits(value, hint) else problem


def wrong_field(part: object, where: str = "") -> str | None:
    """The first field of a result part, dotted, whose value does not fit: `messages.received is null, not
    a whole number`; None when every one fits."""
    hints = hints_of(type(part))
    found = (wrong_value(getattr(part, f.name), hints[f.name], f"{where}{f.name}") for f in fields(part))  # type: ignore[arg-type]
    return next(filter(None, found), None)


@functools.cache
def hints_of(kind_: type) -> dict[str, object]:
    return typing.get_type_hints(kind_)


def dataclass_in(hint: object) -> type | None:
    """The dataclass a hint like `Udp | None` names, if any."""
    found = [arm for arm in arms(hint) if isinstance(arm, type) and is_dataclass(arm)]
    return found[0] if found else None


def value_of(hint: object, value: object, where: str) -> object:
    """A JSON value as the hint's type: dataclasses built, inside lists and objects too."""
    if value is None:
        return None
    made = dataclass_in(hint)
    if made is not None:
        return build(made, value, where)
    origin = typing.get_origin(next((arm for arm in arms(hint) if arm is not type(None)), hint))
    if origin is list and isinstance(value, dict) and dataclass_in(list_item(hint)) is not None:
        value = rows(value, where)
    if origin is list and isinstance(value, list):
        item = list_item(hint)
        if item in KINDS:
            return list(value)
        return [value_of(item, entry, f"{where}.{i}") for i, entry in enumerate(value)]
    if origin is dict and isinstance(value, dict):
        item = typing.get_args(next(arm for arm in arms(hint) if typing.get_origin(arm) is dict))[-1]
        if item in KINDS:
            return dict(value)
        return {key: value_of(item, entry, f"{where}.{key}") for key, entry in value.items()}
    return value


def list_item(hint: object) -> object:
    """What a `list[X] | None` hint holds: X."""
    return typing.get_args(next(arm for arm in arms(hint) if typing.get_origin(arm) is list))[0]


def rows(columns: dict, where: str) -> list[dict]:
    """Records written as columns (COLUMNS), one dict each; CodecError where a column is not a list or is
    shorter or longer than the first."""
    count = None
    for key, column in columns.items():
        if not isinstance(column, list):
            raise CodecError(f"{where}.{key} is {json_text(column)[:40]}, not a list (a column)")
        if count is not None and len(column) != count:
            first = next(iter(columns))
            raise CodecError(f"{where}.{key} has {len(column)} entries where {where}.{first} has {count}")
        count = len(column)
    return [{key: column[i] for key, column in columns.items()} for i in range(count or 0)]


def columns(records: list[dict]) -> dict[str, list]:
    """Records as one list per key (COLUMNS); every record has the same keys (plain() of one dataclass)."""
    return {key: [record[key] for record in records] for key in (records[0] if records else {})}


def laid_out(made: object, metadata: object) -> object:
    """A field's plain value as its file holds it: records as columns where the field says COLUMNS."""
    return columns(made) if metadata == COLUMNS and isinstance(made, list) else made


def build(kind_: type[T], data: object, where: str) -> T:
    """A dataclass from a dict: every key must be a field, every field without a default must be there."""
    if not isinstance(data, dict):
        raise CodecError(f"{where} is {json_text(data)[:40]}, not an object")
    hints = hints_of(kind_)
    known = {f.name: f for f in fields(kind_)}  # type: ignore[arg-type]
    if unknown := sorted(set(data) - set(known)):
        raise CodecError(f"{where}: unknown key {unknown[0]!r}")
    values = {}
    for name, f in known.items():
        if name in data:
            values[name] = value_of(hints[name], data[name], f"{where}.{name}")
        elif f.default is MISSING and f.default_factory is MISSING:
            raise CodecError(f"{where}: missing key {name!r}")
    return kind_(**values)


def load(kind_: type[T], data: object, where: str) -> T:
    """The document as kind_, keys and values checked; CodecError (one line) when it does not fit."""
    made = build(kind_, data, where)
    if wrong := wrong_field(made, f"{where}."):
        raise CodecError(wrong)
    return made


def load_kind(kind_: type[T], data: object, where: str, kind: str) -> T:
    """load(), and its `kind` field checked against kind: a knob study is not read as a comparison."""
    found = load(kind_, data, where)
    if getattr(found, "kind", None) != kind:
        raise CodecError(f"{where}: kind is {json_text(getattr(found, 'kind', None))}, not {kind!r}")
    return found


def read_json(path: Path) -> object:
    """A result file's document; CodecError (one line) for a file that cannot be read or is not JSON."""
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as error:
        raise CodecError(f"cannot be read ({error})") from None
    except ValueError as error:
        raise CodecError(f"not JSON ({error})") from None


def plain(value: object) -> object:
    """A model part as JSON-ready dicts and lists, like dataclasses.asdict, which deep-copies every count of
    every histogram one by one (40 s of a report's 90 over the committed capacity results)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: laid_out(plain(getattr(value, f.name)), f.metadata) for f in fields(value)}
    if isinstance(value, dict):
        if all(isinstance(v, SCALARS) for v in value.values()):
            return dict(value)
        return {key: plain(v) for key, v in value.items()}
    if isinstance(value, list | tuple):
        if all(isinstance(v, SCALARS) for v in value):
            return type(value)(value)
        return type(value)(plain(v) for v in value)
    return value
