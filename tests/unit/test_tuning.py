"""The tuning axis: the families' knobs as data, what `tuned` renders, and `knobs`' plan and arithmetic."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from syslogbench.host import families, knobsteps, profiles, render, tuning
from syslogbench.host import knobs as command
from syslogbench.host.knobsteps import Step
from syslogbench.model import scenarios, settings

FAMILIES = [family for family in families.all_families().values() if family.knobs]
SEED = scenarios.load("seed2014")


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.family)
def test_every_knob_says_its_source_its_trade_and_the_daemons_default(family: families.Family) -> None:
    for knob in family.knobs:
        assert knob.source and knob.trades and knob.default, knob.knob
        assert "documentation" in knob.source or "/" in knob.source, (
            f"{knob.knob}: a source a reader can find"
        )
        assert knob.slot in family.slots


def test_both_families_have_knobs() -> None:
    assert {family.family for family in FAMILIES} == {"rsyslog", "syslog-ng"}


@pytest.mark.parametrize("missing", ["source", "trades", "default"])
def test_a_knob_without_its_source_or_trade_is_refused(tmp_path: Path, missing: str) -> None:
    record = yaml.safe_load((families.DIRECTORY / "rsyslog.yaml").read_text())
    del record["knobs"][0][missing]
    path = tmp_path / "rsyslog.yaml"
    path.write_text(yaml.safe_dump(record))
    with pytest.raises(tuning.TuningError, match=rf"missing {missing}: every knob says"):
        families.load(path)


def test_a_knob_in_a_slot_the_family_lacks_is_refused(tmp_path: Path) -> None:
    record = yaml.safe_load((families.DIRECTORY / "syslog-ng.yaml").read_text())
    record["knobs"][0]["slot"] = "nowhere"
    path = tmp_path / "syslog-ng.yaml"
    path.write_text(yaml.safe_dump(record))
    with pytest.raises(tuning.TuningError, match="slot 'nowhere' is not one of"):
        families.load(path)


def test_values_follow_the_scenario_and_the_profile() -> None:
    rsyslog, syslog_ng = profiles.resolve("rsyslog-8.2504"), profiles.resolve("syslog-ng-4.8")
    seed = render.applied_for(rsyslog, SEED, "tuned").values
    assert seed["file-cache"] == "192", "a file cache as large as the files written"
    assert "file-cache" not in render.applied_for(rsyslog, scenarios.load("plain"), "tuned").values
    assert render.applied_for(syslog_ng, SEED, "tuned").values["window"] == "25000", "1000 per connection"
    assert render.applied_for(syslog_ng, scenarios.load("conn200"), "tuned").values["window"] == "200000"
    assert render.applied_for(rsyslog, SEED, "default").values == {}


def test_tuned_leaves_out_a_knob_whose_trade_breaks_the_latency_bound() -> None:
    rsyslog = profiles.resolve("rsyslog-8.2504")
    knob = next(k for k in families.get("rsyslog").knobs if k.knob == "async-write")
    assert knob.tuned is False and "LATENCY_BOUND" in knob.trades
    assert "async-write" not in render.applied_for(rsyslog, SEED, "tuned").values
    assert 'asyncWriting="on" flushOnTXEnd="off" flushInterval="1"' in render.render(
        rsyslog,
        SEED,
        tuning.custom(families.get("rsyslog").knobs, render.target(rsyslog, SEED), {"async-write": None}),
    )


def test_a_knob_newer_than_the_version_does_not_apply() -> None:
    old, new = profiles.resolve("rsyslog-8.2302"), profiles.resolve("rsyslog-8.2504")
    knobs = families.get("rsyslog").knobs
    with pytest.raises(tuning.TuningError, match=r"do not apply to scenario seed2014 on version 8.2302"):
        tuning.custom(knobs, render.target(old, SEED), {"imtcp-workers": None})
    assert tuning.custom(knobs, render.target(new, SEED), {"imtcp-workers": "3"}).values == {
        "imtcp-workers": "3"
    }


def test_an_unknown_knob_is_one_line_naming_the_known_ones() -> None:
    target = render.target(profiles.resolve("rsyslog-8.2504"), SEED)
    with pytest.raises(
        tuning.TuningError, match=r"unknown knob\(s\) \['cache'\]: the knobs are file-cache, "
    ):
        tuning.custom(families.get("rsyslog").knobs, target, {"cache": None})


@pytest.mark.parametrize("value", ["fast", "TUNED", " tuned"])
def test_tuning_takes_default_or_tuned_only(value: str) -> None:
    from tests.unit.conftest import env

    with pytest.raises(
        settings.SettingsError, match=r"TUNING=.* is not one of default, tuned: e.g. TUNING=tuned"
    ):
        settings.from_env(env(TUNING=value))
    assert settings.from_env(env(TUNING="tuned")).tuning == "tuned"
    assert settings.from_env(env()).tuning == "default"


# -- knobs' plan ------------------------------------------------------------------------------------------


def test_knob_words_give_each_knob_its_values() -> None:
    assert knobsteps.parse_asked(["file-cache=10,64,256", "io-buffer"]) == {
        "file-cache": ["10", "64", "256"],
        "io-buffer": [None],
    }
    assert knobsteps.parse_asked(["file-cache+async-write"]) == {"file-cache+async-write": [None]}
    for bad in ["", "=5", "file-cache=", "file-cache=10,,64", "file-cache+", "a+b=3"]:
        with pytest.raises(tuning.TuningError, match="give a knob's name, NAME=VALUE"):
            knobsteps.parse_asked([bad])


def test_knobs_tried_together_are_one_step_and_stay_out_of_the_chain() -> None:
    target = render.target(profiles.resolve("rsyslog-8.2504"), SEED)
    asked = {"file-cache+async-write": [None], "file-cache": [None]}
    steps = knobsteps.alone_steps(KNOBS, target, asked)
    assert [(s.name, s.values) for s in steps] == [
        ("default", {}),
        ("default-as-run", {}),
        ("file-cache+async-write", {"file-cache": None, "async-write": None}),
        ("file-cache", {"file-cache": None}),
    ]
    rates = {"default": [1.0], "file-cache+async-write": [9.0], "file-cache": [5.0]}
    assert knobsteps.together_steps(KNOBS, steps, rates) == []
    assert knobsteps.chain(KNOBS, steps, [], rates) == ["default", "file-cache"]
    with pytest.raises(tuning.TuningError, match=r"unknown knob\(s\) \['cash'\]"):
        knobsteps.alone_steps(KNOBS, target, {"file-cache+cash": [None]})


def test_alone_steps_are_the_default_then_each_knob_at_each_value() -> None:
    target = render.target(profiles.resolve("rsyslog-8.2504"), SEED)
    steps = knobsteps.alone_steps(families.get("rsyslog").knobs, target, {"file-cache": ["10", "64"]})
    assert [(s.name, s.phase, s.values) for s in steps] == [
        ("default", "default", {}),
        ("default-as-run", "control", {}),
        ("file-cache=10", "alone", {"file-cache": "10"}),
        ("file-cache=64", "alone", {"file-cache": "64"}),
    ]
    every = knobsteps.alone_steps(families.get("rsyslog").knobs, target, {})
    assert "udp-batch" not in [s.name for s in every], "a UDP knob does not apply over TCP"
    assert {"file-cache", "io-buffer", "imptcp", "async-write"} <= {s.name for s in every}


KNOBS = families.get("rsyslog").knobs
ALONE = [
    Step("default", "default"),
    Step("io-buffer", "alone", {"io-buffer": None}),
    Step("file-cache=64", "alone", {"file-cache": "64"}),
    Step("file-cache=256", "alone", {"file-cache": "256"}),
    Step("async-write", "alone", {"async-write": None}),
]
RATES = {"default": [100.0, 110.0], "io-buffer": [120.0], "file-cache=64": [300.0], "file-cache=256": [500.0],
         "async-write": [900.0]}  # fmt: skip


def test_together_starts_with_the_knob_that_bought_most_and_keeps_out_a_knob_not_tuned() -> None:
    together = knobsteps.together_steps(KNOBS, ALONE, RATES)
    assert [(s.name, s.values) for s in together] == [
        ("file-cache=256+io-buffer", {"file-cache": "256", "io-buffer": None})
    ]
    assert knobsteps.chain(KNOBS, ALONE, together, RATES) == [
        "default",
        "file-cache=256",
        "file-cache=256+io-buffer",
    ]


def test_each_steps_share_of_the_whole_gain() -> None:
    rates = {"default": [100.0], "a": [400.0], "a+b": [500.0]}
    assert knobsteps.shares(["default", "a", "a+b"], rates) == {"default": None, "a": 0.75, "a+b": 0.25}
    assert knobsteps.shares(["default", "a"], {"default": [100.0], "a": [90.0]}) == {
        "default": None,
        "a": None,
    }
    assert knobsteps.gain(rates, "a") == 4.0


def test_rounds_hold_every_step_once_each_in_a_fresh_order() -> None:
    order = knobsteps.rounds(ALONE, 3, seed=1)
    assert len(order) == 15
    for replicate in (1, 2, 3):
        assert sorted(s.name for r, s in order if r == replicate) == sorted(s.name for s in ALONE)
    assert order == knobsteps.rounds(ALONE, 3, seed=1), "the same seed, the same order"
    each = [[s.name for r, s in order if r == replicate] for replicate in (1, 2, 3)]
    assert len({tuple(names) for names in each}) > 1, f"every round in one order: {each}"


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.family)
def test_docs_tuning_lists_every_knob_as_its_record_marks_it(family: families.Family) -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "tuning.md").read_text()
    section = text.split(f"### {family.family} (", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    cells = {
        line.split("|")[1].strip(" `"): line.split("|")
        for line in section.splitlines()
        if line.startswith("| `")
    }
    assert {name: row[4].strip() for name, row in cells.items()} == {
        knob.knob: "yes" if knob.tuned else "no" for knob in family.knobs
    }
    # Where it applies, as its `when` says: "all" without one, else the transports or destination named.
    words = {"tcp": "TCP", "tls": "TLS", "udp": "UDP", "split": "split"}
    for knob in family.knobs:
        where = cells[knob.knob][5].strip()
        named = [words[str(value)] for values in knob.when.values() for value in values]
        assert (where == "all") if not named else all(word in where for word in named), (knob.knob, where)


def test_every_tuned_knob_together_is_checked_before_any_run_and_a_refused_together_step_ends_the_chain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    job = command.Knobs(None, KNOBS, {}, 1, False, {})  # type: ignore[arg-type]
    (whole,) = command.all_together(job, ALONE)
    # Each tuned knob at the first value tried alone; async-write is tried alone only (not tuned).
    assert whole.values == {"io-buffer": None, "file-cache": "64"}, whole.values

    def check(job: command.Knobs, step: Step) -> None:
        if "async" in step.name:
            raise tuning.TuningError(
                f"step {step.name}: rsyslogd -N1 refused its config: no: change the value"
            )

    monkeypatch.setattr(command, "syntax_check", check)
    steps = [
        Step("a+b", "together", {}),
        Step("a+b+async", "together", {}),
        Step("a+b+async+c", "together", {}),
    ]
    assert [s.name for s in command.checked_together(job, steps)] == ["a+b"]
