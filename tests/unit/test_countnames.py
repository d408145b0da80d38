"""Every message count is named once (model/countnames.py): each whole-number field of a record that carries
counts is a count named there or a whole number listed as no count, and every named count is carried."""

from __future__ import annotations

import dataclasses
import importlib
import types
import typing

from syslogbench.model import countnames, ledger, rigrecord
from syslogbench.model.capacity import SenderTrial, Trial
from syslogbench.model.ledger import Ledger
from syslogbench.model.result import LastHop, Messages, OutputFile, Sender, Udp, UserConfig
from syslogbench.rig import reconcile
from syslogbench.rig.reconcile import Reconciliation

# The records that carry message counts: a run's result, a capacity trial, the rig's records, a sender's
# ledger, the reconciliation.
CARRIERS: list[type] = [
    Messages,
    Sender,
    Udp,
    OutputFile,
    UserConfig,
    LastHop,
    SenderTrial,
    Trial,
    rigrecord.SendRecord,
    rigrecord.TrialRequest,
    rigrecord.SenderTally,
    rigrecord.TallyRecord,
    rigrecord.DrainedRecord,
    rigrecord.SenderCounts,
    rigrecord.FileCounts,
    rigrecord.Reconciled,
    Ledger,
    Reconciliation,
]
# Where those records are declared: a record there with a named count among its whole numbers is a carrier.
MODULES = [
    *(f"syslogbench.model.result.{name}" for name in ("counts", "udp", "config", "relay", "usage")),
    *(f"syslogbench.model.capacity.{name}" for name in ("sender", "trial", "clocks", "rigcost", "result")),
    rigrecord.__name__,
    ledger.__name__,
    reconcile.__name__,
]


def whole_numbers(kind: type) -> list[str]:
    """The fields of a dataclass that hold a whole number (int, or int or None)."""
    hints = typing.get_type_hints(kind)
    found = []
    for field in dataclasses.fields(kind):
        hint = hints[field.name]
        union = isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
        if int in (typing.get_args(hint) if union else (hint,)):
            found.append(field.name)
    return found


def unnamed(kind: type) -> list[str]:
    """Its whole-number fields that are neither a named count nor listed as no count."""
    known = countnames.COUNTS.keys() | countnames.NOT_COUNTS.keys()
    return [f"{kind.__name__}.{name}" for name in whole_numbers(kind) if name not in known]


def test_every_whole_number_of_a_carrier_is_a_named_count_or_listed_as_none() -> None:
    found = [name for kind in CARRIERS for name in unnamed(kind)]
    assert found == [], f"name each in model/countnames.py, COUNTS or NOT_COUNTS: {found}"


def test_every_named_count_is_carried() -> None:
    carried = {name for kind in CARRIERS for name in whole_numbers(kind)}
    assert sorted(countnames.COUNTS.keys() - carried) == [], "a count no record carries: drop it"
    assert sorted(countnames.NOT_COUNTS.keys() - carried) == [], "a whole number no record carries: drop it"


def test_a_name_is_a_count_or_not_never_both() -> None:
    assert sorted(countnames.COUNTS.keys() & countnames.NOT_COUNTS.keys()) == []


def test_every_record_carrying_a_count_is_a_carrier() -> None:
    """A record declared beside the carriers with a count among its whole numbers is held to the names too."""
    missed = []
    for module in map(importlib.import_module, MODULES):
        for kind in vars(module).values():
            if (
                not (dataclasses.is_dataclass(kind) and isinstance(kind, type))
                or kind.__module__ != module.__name__
            ):
                continue
            if kind not in CARRIERS and set(whole_numbers(kind)) & countnames.COUNTS.keys():
                missed.append(f"{module.__name__}.{kind.__name__}")
    assert missed == [], f"add to CARRIERS: {missed}"


def test_an_unknown_whole_number_is_caught() -> None:
    made_up = dataclasses.make_dataclass(
        "MadeUp", [("received", int), ("bounced", int | None), ("note", str), ("share", float)]
    )
    assert whole_numbers(made_up) == ["received", "bounced"]
    assert unnamed(made_up) == ["MadeUp.bounced"]


def test_each_name_says_what_it_counts_in_one_line() -> None:
    for table in (countnames.COUNTS, countnames.NOT_COUNTS):
        bad = {name: meaning for name, meaning in table.items() if not meaning or "\n" in meaning}
        assert bad == {}
