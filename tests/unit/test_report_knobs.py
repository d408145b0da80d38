"""The knob tables, from results/knobs/<id>.json (`syslogbench knobs`), read strictly through model/knobs.py."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from syslogbench.host import environment, families, knobsteps
from syslogbench.host import knobs as command
from syslogbench.model import knobs as model
from syslogbench.report import knobs, load, markdown, sections
from syslogbench.report.machines import MACHINES_ANCHOR
from tests.unit.test_report import REPORT_RUN, markdown_tables, replicate

HOST = REPORT_RUN["host"]  # the machine of the report's test runs: a study there is that machine's


def runs(*rates: float, verdict: str = "pass") -> list[dict[str, Any]]:
    """One run per rate, the i-th with 7 + i CPU µs per message: three runs have a median of 9."""
    return [
        {"run_id": f"r{i}-{rate:.0f}", "verdict": verdict, "msgs_per_s": rate, "cpu_us_per_msg": 7.0 + i,
         "elapsed_s": round(6_000_020 / rate, 3), "lost": 0 if verdict == "pass" else 5, "replicate": i,
         "counts": verdict == "pass", "received": 6_000_020 if verdict == "pass" else 6_000_015}
        for i, rate in enumerate(rates, start=1)
    ]  # fmt: skip


def step(
    name: str, phase: str, values: dict[str, str], found: list[dict[str, Any]], gain: float | None
) -> dict:
    return {"name": name, "phase": phase, "knobs": values, "runs": found, "gain": gain, "latency": None}


def knob(param: str, default: str, trades: str, tuned: bool = True) -> dict[str, Any]:
    return {
        "param": param,
        "default": default,
        "tuned": tuned,
        "source": "rsyslog documentation",
        "trades": trades,
    }


# The default drains at 100,000 msg/s, the control (the image's own default config) at 101,000; no-dns alone 103,000 (within 5%: it did nothing); file-cache=192 alone
# 150,000, file-cache=10 alone 90,000; io-buffer alone 120,000 (one run of three lost messages); both tuned
# knobs together 180,000. The chain's 80,000 msg/s of gain: 50,000 (62.5%) from file-cache, 30,000 (37.5%) from
# io-buffer.
STUDY: dict[str, Any] = {
    "kind": "knobs",
    "id": "20261201T120000.000Z-rsyslog-8.2504-ab12-seed2014",
    "outcome": "done",
    "profile": "rsyslog-8.2504",
    "daemon": "rsyslog",
    "daemon_version": "8.2504.0",
    "scenario": "seed2014",
    "started_utc": "2026-12-01T12:00:00Z",
    "finished_utc": "2026-12-01T13:00:00Z",
    "replicates": 3,
    "machine": dict(HOST, fingerprint=None),
    "knobs": {
        "file-cache": knob(
            "dynaFileCacheSize", "10", "memory and file descriptors: one open file per cached file"
        ),
        "io-buffer": knob("ioBufferSize", "4k", "memory, 64 KiB per open file"),
        "no-dns": knob("net.enableDNS", "on", "%fromhost% holds the address", tuned=False),
        "imptcp": knob("module", "imtcp", "Linux only, no TLS"),
    },
    "steps": [
        step("default", "default", {}, runs(98_000, 100_000, 102_000), 1.0),
        step("default-as-run", "control", {}, runs(100_000, 101_000, 102_000), 1.01),
        step("no-dns", "alone", {"no-dns": "off"}, runs(102_000, 103_000, 104_000), 1.03),
        step("file-cache=10", "alone", {"file-cache": "10"}, runs(89_000, 90_000, 91_000), 0.9),
        step("file-cache=192", "alone", {"file-cache": "192"}, runs(149_000, 150_000, 151_000), 1.5),
        step(
            "io-buffer", "alone", {"io-buffer": "64k"}, runs(119_000, 121_000) + runs(5, verdict="loss"), 1.2
        ),
        step(
            "file-cache=192+io-buffer",
            "together",
            {"file-cache": "192", "io-buffer": "64k"},
            runs(179_000, 180_000, 181_000),
            1.8,
        ),
    ],  # fmt: skip
    "chain": ["default", "file-cache=192", "file-cache=192+io-buffer"],
    "shares": {"default": None, "file-cache=192": 0.625, "file-cache=192+io-buffer": 0.375},
    "capacity": {
        "default": "20261201T130000.000Z-rsyslog-8.2504-cd34-seed2014",
        "file-cache=192+io-buffer": None,
    },
    "latency_rate": None,
}


def write(folder: Path, study: dict[str, Any], name: str | None = None) -> Path:
    (folder / "knobs").mkdir(parents=True, exist_ok=True)
    path = folder / "knobs" / f"{name or study['id']}.json"
    path.write_text(json.dumps(study))
    return path


def knob_section(folder: Path) -> str:
    """The knob section's Markdown of the report of folder (a run of the same machine beside the study)."""
    doc = sections.document(load.load_results(folder), folder, None)
    (part,) = [part for part in doc.sections if part.anchor == knobs.ANCHOR]
    return markdown.blocks(part.blocks)


@pytest.fixture
def results(tmp_path: Path) -> Path:
    run = replicate("rsyslog-8.2504", 1, 100_000)
    (tmp_path / f"{run['run_id']}.json").write_text(json.dumps(run))
    write(tmp_path, STUDY)
    return tmp_path


def test_the_model_reads_a_study_and_writes_back_the_same_document() -> None:
    study = model.result_from_dict(STUDY)
    assert [s.name for s in study.steps] == [s["name"] for s in STUDY["steps"]]
    assert study.step("io-buffer") is not None and study.step("io-buffer").median_rate == 120_000  # type: ignore[union-attr]
    written = study.to_dict()
    runs_of = [run for s in written["steps"] for run in s["runs"]]
    assert all(run["exit_code"] is None for run in runs_of)  # the one key a run gains, null
    for s in written["steps"]:
        for run in s["runs"]:
            del run["exit_code"]
    assert written == STUDY


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"kind": "capacity"}, "knobs result: kind is \"capacity\", not 'knobs'"),
        ({"speed": 1}, "knobs result: unknown key 'speed'"),
        ({"chain": "default"}, 'knobs result.chain is "default", not a list'),
        ({"shares": {"default": "most"}}, 'knobs result.shares.default is "most", not a number or null'),
        (
            {"steps": [{"name": "default", "phase": "default", "knobs": {}, "runs": [{"verdict": "pass"}]}]},
            "knobs result.steps.0.runs.0: missing key 'replicate'",
        ),
    ],  # fmt: skip
)
def test_a_malformed_study_is_one_line_naming_the_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, change: dict, said: str
) -> None:
    write(tmp_path, STUDY | change, "bad")
    with caplog.at_level(logging.WARNING, logger="syslogbench.report.load"):
        found, skipped = load.load_knobs(tmp_path)
    assert found == [] and skipped == [f"bad.json: {said}"]
    assert [record.getMessage() for record in caplog.records] == [
        f"report: skipping {tmp_path / 'knobs' / 'bad.json'}: not a knob study ({said})"
    ]
    assert f"not read: bad.json: {said}" in knob_section(tmp_path)


def test_a_studys_own_runs_are_not_read_as_runs_of_their_own(results: Path) -> None:
    """`knobs` keeps each step's run beside its file, in results/knobs/<id>/runs/: steps, not top-level runs."""
    kept = results / "knobs" / STUDY["id"] / "runs"
    kept.mkdir(parents=True)
    step_run = replicate("rsyslog-8.2504", 2, 150_000)
    (kept / f"{step_run['run_id']}.json").write_text(json.dumps(step_run))
    assert [r.run_id for r in load.load_results(results)] == ["20250201T000001Z-rsyslog-8.2504"]
    found, skipped = load.load_knobs(results)
    assert [study.id for study in found] == [STUDY["id"]] and skipped == []


def test_the_knob_table_has_a_row_per_step_with_its_share_of_the_gain(results: Path) -> None:
    text = knob_section(results)
    (table,) = markdown_tables(text)
    assert table[0] == list(knobs.HEADER)
    assert table[1:] == [
        ["default", "none: the defaults", "default", "3 of 3", "100,000", "1.00", "9.00", "-"],
        ["default-as-run", "none: the defaults", "control", "3 of 3", "101,000", "1.01", "9.00", ""],
        ["no-dns", "no-dns=off", "alone", "3 of 3", "103,000", "1.03", "9.00", ""],
        ["file-cache=10", "file-cache=10", "alone", "3 of 3", "90,000", "0.90", "9.00", ""],
        ["file-cache=192", "file-cache=192", "alone", "3 of 3", "150,000", "1.50", "9.00", "62%"],
        ["io-buffer", "io-buffer=64k", "alone", "2 of 3", "120,000", "1.20", "8.50", ""],
        ["file-cache=192+io-buffer", "file-cache=192, io-buffer=64k", "together", "3 of 3", "180,000", "1.80",
         "9.00", "38%"],
    ]  # fmt: skip
    assert "### rsyslog" in text


def test_the_knobs_that_did_nothing_are_named_in_one_sentence(results: Path) -> None:
    text = knob_section(results)
    assert (
        "Not told apart from the default alone (the median within ±5% of the default's at every value tried): "
        "`no-dns`. The control ran at 1.01 times the default."
    ) in text
    # A control farther from the default than 5% widens what says nothing, and the sentence says why.
    wide = copy.deepcopy(STUDY)
    control = next(step for step in wide["steps"] if step["phase"] == "control")
    control["gain"] = 1.12
    said = knobs.idle_sentence(model.result_from_dict(wide))
    assert "within ±12% (the control's distance from the default)" in said, said
    # file-cache moved the median at both values (0.90 and 1.50): not idle, though one value lost.
    moved = copy.deepcopy(STUDY)
    moved["steps"][2]["gain"] = 1.06  # no-dns
    assert knobs.idle(model.result_from_dict(moved)) == []
    assert "No knob alone left the median within ±5%" in knobs.idle_sentence(model.result_from_dict(moved))


def test_each_knob_tried_says_what_it_trades_and_the_study_is_cited(results: Path) -> None:
    text = knob_section(results)
    assert "- `file-cache` (dynaFileCacheSize, default 10): memory and file descriptors" in text
    assert "- `io-buffer` (ioBufferSize, default 4k): memory, 64 KiB per open file" in text
    assert (
        "- `no-dns` (net.enableDNS, default on; `tuned` leaves it out): %fromhost% holds the address" in text
    )
    assert "imptcp" not in text  # no step tried it
    assert (
        f"**`rsyslog-8.2504`** (8.2504.0), scenario `seed2014`: knob study `{STUDY['id']}`, 3 rounds, on "
        "[machine 1](#machines) (Test CPU 9000, 16 cores, 32.0 GiB RAM), 2026-12-01T12:00:00Z to "
        "2026-12-01T13:00:00Z. Capacity searches of its steps (results/knobs/"
        f"{STUDY['id']}/capacity/): `default`: `20261201T130000.000Z-rsyslog-8.2504-cd34-seed2014`."
    ) in text  # the machine the report's runs name 1: the same words


def test_a_study_that_did_not_record_the_docker_version_is_of_the_machine_alike_in_all_else(
    results: Path,
) -> None:
    """The first studies wrote "unknown (run without the syslogbench command)" for Docker's version."""
    unknown = dict(HOST, fingerprint=None, docker_version="unknown (run without the syslogbench command)")
    write(results, STUDY | {"machine": unknown})
    assert "on [machine 1](#machines) (Test CPU 9000" in knob_section(results)
    elsewhere = STUDY | {
        "machine": unknown | {"kernel": "6.9.0"}
    }  # no known machine alike: a machine of its own
    write(results, elsewhere)
    assert "on [machine 2](#machines) (Test CPU 9000" in knob_section(results)


def test_an_interrupted_study_says_so(tmp_path: Path) -> None:
    write(tmp_path, STUDY | {"outcome": "interrupted"})
    said = f"`{STUDY['id']}`, 3 rounds (interrupted: the steps and runs made until then), on"
    assert said in knob_section(tmp_path)
    before = {key: value for key, value in STUDY.items() if key not in ("outcome", "daemon")}
    assert model.result_from_dict(before).outcome == "done"  # the first studies, before the key


def test_the_newest_study_of_each_profile_and_scenario_follows_the_capacity_summary(results: Path) -> None:
    older = STUDY | {
        "id": "20261130T000000.000Z-rsyslog-8.2504-0000-seed2014",
        "finished_utc": "2026-11-30T00:00:00Z",
    }
    other = STUDY | {"id": "20261101T000000.000Z-syslog-ng-4.8-0000-seed2014", "profile": "syslog-ng-4.8",
                     "daemon": None, "finished_utc": "2026-11-01T00:00:00Z"}  # fmt: skip
    write(results, older)
    write(results, other)
    text = knob_section(results)
    assert STUDY["id"] in text and older["id"] not in text and other["id"] in text
    assert text.index("### rsyslog") < text.index("### syslog-ng")  # the family from the profile's name
    doc = sections.document(load.load_results(results), results, None)
    anchors = [part.anchor for part in doc.sections]
    assert anchors.index(knobs.ANCHOR) == anchors.index(MACHINES_ANCHOR) - 1
    assert ("Knobs", knobs.ANCHOR) in doc.sections[0].blocks[0].entries  # type: ignore[union-attr]
    machines = next(table for table in markdown_tables(markdown.document(doc)) if table[0][0] == "machine")
    counted = [
        machines[0].index(name) for name in ("runs", "capacity searches", "knob studies", "last result")
    ]
    assert [[row[i] for i in counted] for row in machines[1:]] == [["1", "0", "3", "2026-12-01 13:00"]]


def test_no_study_no_section(tmp_path: Path) -> None:
    doc = sections.document([], tmp_path, None)
    assert knobs.ANCHOR not in [part.anchor for part in doc.sections]


def test_the_knobs_command_writes_what_the_report_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(environment, "docker_version", lambda: "27.0.0")
    family = families.get("rsyslog")
    profile = SimpleNamespace(profile="rsyslog-8.2504", daemon="rsyslog", version="8.2504.0")
    job = SimpleNamespace(base=SimpleNamespace(profile=profile, scenario=SimpleNamespace(id="seed2014")),
                          knobs=family.knobs, replicates=1)  # fmt: skip
    name = family.knobs[0].knob
    records = {
        "default": command.StepRecord("default", "default", {}, runs(100_000)),
        name: command.StepRecord(name, "alone", {name: "64"}, runs(120_000) + [
            {"run_id": None, "verdict": "error", "exit_code": 3, "replicate": 2}]),
    }  # fmt: skip
    (tmp_path / "knobs").mkdir()
    chain = knobsteps.chain(family.knobs, [], [], {})
    path = command.write(job, "kid", command.datetime.now(command.UTC), records, chain, {}, tmp_path)  # type: ignore[arg-type]
    study = model.read(path)
    assert (study.daemon, study.machine["docker_version"]) == ("rsyslog", "27.0.0")
    assert [(s.name, s.gain, len(s.passed), len(s.runs)) for s in study.steps] == [
        ("default", 1.0, 1, 1),
        (name, 1.2, 1, 2),
    ]
    assert study.steps[1].runs[1].exit_code == 3 and set(study.knobs) == {k.knob for k in family.knobs}


def test_over_udp_a_run_with_loss_counts_with_its_loss_beside_it(tmp_path: Path) -> None:
    udp = copy.deepcopy(STUDY)
    udp["scenario"] = "udp-allout"
    for found in udp["steps"]:
        for run in found["runs"]:
            run.update(verdict="loss", counts=True, lost=600_002, received=5_400_018)
    write(tmp_path, udp)
    text = knob_section(tmp_path)
    header = next(line for line in text.splitlines() if line.startswith("| step "))
    assert header.rstrip(" |").endswith("median loss"), header
    row = next(line for line in text.splitlines() if line.startswith("| `file-cache=192` "))
    assert "| 3 of 3 |" in row and "| 150,000 |" in row and row.rstrip(" |").endswith("10.0%"), row


@pytest.mark.parametrize(("udp", "counts"), [(True, True), (False, False)])
def test_a_run_with_loss_counts_over_udp_only(tmp_path: Path, udp: bool, counts: bool) -> None:
    found = replicate("syslog-ng-4.8", 1, 100_000, verdict="loss")
    found["messages"].update(lost=1_000, received=found["messages"]["expected"] - 1_000)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(found))
    kept = command.figures(path, udp)
    assert (kept["counts"], kept["verdict"], kept["lost"]) == (counts, "loss", 1_000)
    assert kept["received"] == found["messages"]["expected"] - 1_000
