"""A result's blocks as plain data and back: what is left out when None, and the strict reader's error."""

from __future__ import annotations

from dataclasses import field, fields, is_dataclass
from typing import Any, TypeVar

from syslogbench.model import codec


class ResultError(ValueError):
    """A document that is not a result this model reads; the message names the key."""


# A field with this metadata is left out of the document when it is None: older results lack it, or a run
# that measured nothing never had it. Every other field is always written, null where not measured.
OMIT_IF_NONE = {"omit_if_none": True}


def optional() -> Any:
    return field(default=None, metadata=OMIT_IF_NONE)


T = TypeVar("T")


def plain(value: object) -> object:
    """A dataclass tree as JSON-ready dicts and lists."""
    if is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in fields(value):
            item = getattr(value, f.name)
            if item is None and f.metadata.get("omit_if_none"):
                continue
            out[f.name] = plain(item)
        return out
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def load(kind: type[T], data: object, where: str = "result") -> T:
    """A dataclass from a dict: every key must be a field, every field without a default must be there
    (codec.build, the one strict reader of both result kinds)."""
    try:
        return codec.build(kind, data, where)
    except codec.CodecError as error:
        raise ResultError(str(error)) from None
