"""The report's capacity section, from results/capacity/*.json."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from syslogbench.model import capacity as model
from syslogbench.model.result import read
from syslogbench.report import capacity, capacity_answer, capacity_rows, markdown, sections


def a_result(run_id: str = "20261125T000000.000Z-syslog-ng-4.8-abcd-udp") -> dict:
    """Written through the model the search writes with, as the report reads it."""
    sender = model.SenderTrial("h1-s1", intended=40000, sent=40000, received=39990, lost=10, late=5)
    trial = model.Trial(
        number=1, offered_msgs_per_s=4000.0, duration_s=10.0, intended=40000, sent=40000, received=39990,
        lost=10, late=5, unsent=0, duplicated=0, loss_ratio=0.000375, achieved_msgs_per_s=4000.0,
        sender_bound=False, latency_ms=model.Latency(p50=2.0, p90=3.0, p99=7.5, p999=9.0, max=12.0),
        latency_histogram_us={"2000": 39990}, sample_s=0.02, stale_lines=0, daemon_cpu_s=1.25,
        watcher_cpu_s=0.1, udp_rcvbuf_errors=0, udp_in_errors=0, senders=[sender],
    )  # fmt: skip
    return model.CapacityResult(
        run_id=run_id, kind="capacity", profile="syslog-ng-4.8", daemon_version="4.8.1", scenario="udp",
        transport="udp", destination="split", senders=1, settings={}, started_utc="", finished_utc="",
        outcome="found", ndr_msgs_per_s=3800.0, pdr_msgs_per_s=4000.0, pdr_loss_ratio=0.005,
        ndr=model.Bound(0.0, 3800.0, 4000.0), pdr=model.Bound(0.005, 4000.0, 4200.0), trials=[trial],
        latency_at_pdr={"50%": model.Latency(p99=4.5)}, cpu_placement={"daemon": "any"},
        rig_limit_msgs_per_s=None, died_at_msgs_per_s=None, machine={"cpu_model": "AMD EPYC", "cores": 2},
    ).to_dict()  # fmt: skip


def render(results: Path) -> str:
    return markdown.document(sections.document([], results, None))


def test_the_capacity_section_gives_ndr_pdr_and_each_trial(tmp_path: Path) -> None:
    (tmp_path / "capacity").mkdir()
    (tmp_path / "capacity" / "a.json").write_text(json.dumps(a_result()))
    text = render(tmp_path)
    assert capacity.TITLE in text
    earlier = "other settings (CONFIRM_S=0, EXCEED_RATIO=0, TRIAL_SUM=0)"  # settings={}: BEFORE_THE_KEY
    assert (
        f"| syslog-ng-4.8 | udp | udp | 3,800 | 3,800 .. 4,000 | 4,000 | 0.50% | 4.5 | found | {earlier} |"
        in text
    )
    assert "| 1 | 4,000 | 10 | 40,000 | 10 | 5 | 0 | 0.0375% | 2.0 | 7.5 | 12.0 | 1.2 |" in text


def test_no_capacity_results_no_section_and_a_damaged_one_is_named(tmp_path: Path) -> None:
    assert capacity.TITLE not in render(tmp_path)
    (tmp_path / "capacity").mkdir()
    (tmp_path / "capacity" / "bad.json").write_text(json.dumps({"run_id": "x"}))
    text = render(tmp_path)
    assert capacity.TITLE in text and "not read: bad.json: capacity result: missing key 'kind'" in text


def test_a_search_of_a_users_config_is_named_by_its_hash(tmp_path: Path) -> None:
    (tmp_path / "capacity").mkdir()
    (tmp_path / "capacity" / "a.json").write_text(json.dumps(a_result() | {"config": {"sha256": "ab" * 32}}))
    text = render(tmp_path)
    assert "| syslog-ng-4.8 (config abababababab) | udp | udp |" in text
    assert "<summary>Trials of syslog-ng-4.8 (config abababababab), udp (udp)" in text
    assert "| UDP | syslog-ng-4.8 (config abababababab) | user | udp | [1](#machines) | 1 | 3,800 |" in text


def test_a_result_the_model_cannot_read_is_named_not_raised(tmp_path: Path) -> None:
    (tmp_path / "capacity").mkdir()
    broken = a_result() | {"trials": [{"number": 1}]}
    (tmp_path / "capacity" / "t.json").write_text(json.dumps(broken))
    (tmp_path / "capacity" / "n.json").write_text("{not json")
    text = render(tmp_path)
    assert "not read: t.json: capacity result.trials.0: missing key 'offered_msgs_per_s'" in text
    assert "__init__" not in text  # the model's own words never reach the reader
    assert "not read: n.json: not JSON" in text


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"speed": 1}, "capacity result: unknown key 'speed'"),
        ({"ndr_msgs_per_s": "fast"}, 'capacity result.ndr_msgs_per_s is "fast", not a number or null'),
        (
            {"ndr": {"loss_ratio": 0, "lower_msgs_per_s": 1, "upper_msgs_per_s": 2, "x": 1}},
            "capacity result.ndr: unknown key 'x'",
        ),
        (
            {"latency_at_pdr": {"50%": {"p99": "slow"}}},
            'capacity result.latency_at_pdr.50%.p99 is "slow", not a number or null',
        ),
    ],
)
def test_a_capacity_result_is_read_as_strictly_as_a_run_s(tmp_path: Path, change: dict, said: str) -> None:
    (tmp_path / "capacity").mkdir()
    (tmp_path / "capacity" / "t.json").write_text(json.dumps(a_result() | change))
    text = render(tmp_path)
    assert f"not read: t.json: {said}" in text, text[-600:]


@pytest.mark.parametrize(
    ("trial", "said"),
    [
        (
            {"latency_histogram_us": {"2000": 39989, "3000": "many"}},
            '.latency_histogram_us.3000 is "many", not',
        ),
        ({"arrived_per_s": [4000, True]}, ".arrived_per_s.1 is true, not a whole number"),
        # A trial's senders, written as columns: every column a list of one length, every key a field.
        ({"senders": {"id": ["h1-s1"], "intended": [40000, 1]}}, ".senders.intended has 2 entries where"),
        ({"senders": {"id": ["h1-s1"], "intended": 40000}}, ".senders.intended is 40000, not a list"),
        ({"senders": {"id": ["h1-s1"], "intended": [40000], "x": [1]}}, ".senders.0: unknown key 'x'"),
        ({"senders": {"id": ["h1-s1"], "intended": ["many"]}}, '.senders.0.intended is "many", not'),
    ],
)
def test_every_count_of_a_trials_histogram_and_timeline_is_checked(
    tmp_path: Path, trial: dict, said: str
) -> None:
    """The codec reads these in one pass (thousands per trial), not value by value: still every value."""
    written = a_result()
    (tmp_path / "capacity").mkdir()
    (tmp_path / "capacity" / "t.json").write_text(
        json.dumps(written | {"trials": [written["trials"][0] | trial]})
    )
    assert f"not read: t.json: capacity result.trials.0{said}" in render(tmp_path)


def test_the_model_reads_back_what_it_wrote() -> None:
    written = a_result()
    assert model.result_from_dict(written).to_dict() == written
    # to_dict is asdict (faster), but for a trial's senders, which it writes as columns; read as rows (results
    # written before the columns) they are the same records.
    rows = dataclasses.asdict(model.result_from_dict(written))
    assert isinstance(rows["trials"][0]["senders"], list) and isinstance(
        written["trials"][0]["senders"], dict
    )
    assert rows["trials"][0]["senders"] == [
        dataclasses.asdict(s) for s in model.result_from_dict(written).trials[0].senders
    ]
    assert model.result_from_dict(rows) == model.result_from_dict(written)
    assert written["trials"][0]["senders"]["sent"] == [s["sent"] for s in rows["trials"][0]["senders"]]


def test_the_plots_draw_only_the_trials_the_search_believed(tmp_path: Path) -> None:
    from syslogbench.report import capacity_plots

    data = a_result()
    data["settings"] = {"final_trial_s": 10.0}
    believed = data["trials"][0]
    data["trials"] = [
        believed,
        believed | {"number": 2, "purpose": "warmup"},
        believed | {"number": 3, "sender_bound": True},
        believed | {"number": 4, "duration_s": 1.0},
        believed | {"number": 5, "purpose": "latency", "offered_msgs_per_s": 2000.0},
    ]
    assert [t["number"] for t in capacity_plots.final_trials(data)] == [5, 1]
    written = capacity_plots.write([data], tmp_path)
    assert [(caption, png.name) for caption, png in written] == [
        ("Capacity, udp (udp): loss and latency against offered rate", "capacity-udp_udp_.png")
    ]
    assert (tmp_path / "capacity-udp_udp_.svg").is_file()
    assert (
        capacity_plots.write([data | {"trials": [believed | {"sender_bound": True}]}], tmp_path / "n") == []
    )


def test_every_capacity_result_in_the_tree_reads_with_the_model() -> None:
    """What the search wrote, kept under results/capacity/, is what the model reads (superseded ones too); the
    burst runs that set a search's RATE_MAX, in results/capacity/bursts/, are runs, read by the run model."""
    found = sorted((Path(__file__).resolve().parents[2] / "results" / "capacity").glob("**/*.json"))
    assert found
    for path in found:
        if path.parent.name == "bursts":
            assert read(path).run_id == path.stem, path
            continue
        assert model.read(path).kind == "capacity", path


def test_a_swarm_search_names_its_central_node_and_the_nodes(tmp_path: Path) -> None:
    (tmp_path / "capacity").mkdir()
    swarm = {"nodes": [{"hostname": f"node{n}"} for n in (1, 2, 3)],
             "cpu_placement": {"daemon": "node node1", "senders": "nodes node2, node3"}}  # fmt: skip
    (tmp_path / "capacity" / "a.json").write_text(json.dumps(a_result() | swarm))
    text = render(tmp_path)
    assert "Swarm of 3 nodes; the central node: AMD EPYC, 2 cores" in text
    assert "CPU placement: daemon on node node1, senders on nodes node2, node3" in text


def test_a_lead_without_latency_says_so_rather_than_dashes() -> None:
    row = capacity_rows.Row("syslog-ng-4.8", "seed2014", "tcp", "m", ())
    row.searches.append({"latency_at_pdr": {"10%": {"p50": 3.0, "p99": 5.8}}})
    assert capacity_answer.latency_sentence(row) == (
        "Latency at 50% and 90% of its PDR: not measured (the searches' notes say why)."
    )
    row.searches.append({"latency_at_pdr": {"50%": {"p50": 3.6, "p99": 8.9}}})
    assert (
        capacity_answer.latency_sentence(row) == "Latency p50/p99 3.6/8.9 ms at 50% of its PDR, - ms at 90%."
    )


def test_a_lead_whose_searches_all_found_one_rate_says_so_rather_than_a_range_of_one() -> None:
    row = capacity_rows.Row("syslog-ng-4.8", "tls", "tls", "m", ())
    row.searches += [{"ndr": {"confirmed": None, "lower_msgs_per_s": 154458.0}} for _ in range(3)]
    assert capacity_answer.ndr_text(row) == "NDR 154,458 msg/s (each of n=3 searches)"
    row.searches[1] = {"ndr": {"confirmed": None, "lower_msgs_per_s": 150000.0}}
    assert (
        capacity_answer.ndr_text(row)
        == "NDR 154,458 msg/s (median of n=3 searches, range 150,000\u2013154,458)"
    )


def test_a_lead_without_a_pdr_says_why_rather_than_a_dash() -> None:
    """A search whose NDR held its confirmation and whose PDR did not (the UDP lead of the committed report)."""
    row = capacity_rows.Row("rsyslog-8.2504", "udp", "udp", "m", ())
    found = Path(__file__).resolve().parents[2] / "results/capacity"
    search = json.loads((found / "20261127T211853.208Z-rsyslog-8.2504-3d64-udp.json").read_text())
    row.searches.append(search)
    assert capacity_answer.pdr_text(row) == "no PDR: it did not hold again in its confirmation"
    row.searches[0] = search | {"pdr": search["pdr"] | {"confirmed": None, "lower_msgs_per_s": 35000.0}}
    assert capacity_answer.pdr_text(row) == "PDR 35,000 msg/s"


def test_a_lead_alone_in_its_transport_does_not_say_no_other_version_was_searched() -> None:
    """Other versions' rows may be left out of the ranking (a floor among their searches), not unsearched."""
    row = capacity_rows.Row("rsyslog-8.2504", "seed2014", "tcp", "m", ())
    found = Path(__file__).resolve().parents[2] / "results/capacity"
    row.searches.append(
        json.loads((found / "20261127T033110.620Z-rsyslog-8.2504-75a0-seed2014.json").read_text())
    )
    text = capacity_answer.lead_text("tcp", [row], [])
    assert "No other version is ranked here" in text and "(#capacity-summary)" in text, text


def test_the_first_screen_names_the_machine_its_answers_stand_on() -> None:
    """The machine with the most searches in all may have none at today's defaults: the opening names the
    machine that the transports' answers were ranked on, and no answer names it again."""
    defaults = model.CapacitySettings(daemon_cores=1).as_dict()
    busy = [
        a_result(f"20261125T00000{n}.000Z-syslog-ng-4.8-abc{n}-udp")
        | {"settings": defaults | {"pdr_target": 0.01}}
        for n in range(3)
    ]
    ranked = a_result("20261126T000000.000Z-syslog-ng-4.8-beef-udp") | {
        "settings": defaults,
        "machine": {"cpu_model": "Intel Xeon", "cores": 2},
    }
    numbers = {capacity_rows.machine_of(busy[0]): 5, capacity_rows.machine_of(ranked): 2}
    assert capacity_rows.busiest_machine([*busy, ranked]) == capacity_rows.machine_of(busy[0])
    blocks = capacity_answer.lead_blocks([*busy, ranked], numbers, [])
    text = "\n".join(block.text for block in blocks)
    opening = text.split("Per transport, on ", 1)[1].split("\n", 1)[0]
    assert opening.startswith("[machine 2](#machines) (Intel Xeon, 2 cores"), opening
    assert "machine 5" not in text and text.count("machine 2") == 1, text


def test_a_machine_with_repeated_searches_answers_before_one_with_more_single_searches() -> None:
    """Three versions searched once each on one machine, one version twice on another: the answer with a
    range is the one the first screen gives."""
    defaults = model.CapacitySettings(daemon_cores=1).as_dict()
    singles = [
        a_result(f"20261126T00000{n}.000Z-{profile}-abc{n}-udp") | {"profile": profile, "settings": defaults}
        for n, profile in enumerate(("syslog-ng-4.8", "syslog-ng-3.38", "rsyslog-8.2504"))
    ]
    twice = [
        a_result(f"20261125T00000{n}.000Z-syslog-ng-4.8-bee{n}-udp")
        | {"settings": defaults, "machine": {"cpu_model": "Intel Xeon", "cores": 2}}
        for n in range(2)
    ]
    numbers = {capacity_rows.machine_of(singles[0]): 1, capacity_rows.machine_of(twice[0]): 2}
    blocks = capacity_answer.lead_blocks([*singles, *twice], numbers, [])
    text = "\n".join(block.text for block in blocks)
    opening = text.split("Per transport, on ", 1)[1].split("\n", 1)[0]
    assert opening.startswith("[machine 2](#machines) (Intel Xeon, 2 cores"), opening
    assert "n=2" in text and "rsyslog-8.2504" not in text, text


def test_searches_at_other_settings_are_folded_below_those_at_the_defaults(tmp_path: Path) -> None:
    """The summary grows with the searches at the defaults; every experiment is one click away."""
    (tmp_path / "capacity").mkdir()
    other = a_result()  # settings {}: from before CONFIRM_S and the rest
    default = a_result("20261125T010000.000Z-rsyslog-8.2504-beef-udp")
    default |= {"settings": model.CapacitySettings(daemon_cores=1).as_dict(), "profile": "rsyslog-8.2504"}
    for name, data in (("other.json", other), ("default.json", default)):
        (tmp_path / "capacity" / name).write_text(json.dumps(data))
    summary = render(tmp_path).split(f"## {capacity.SUMMARY_TITLE}")[1].split("\n## ")[0]
    folded = "<summary>Searches at other settings (1 rows)</summary>"
    assert folded in summary, summary
    shown, hidden = summary.split(folded)
    assert "| rsyslog-8.2504 |" in shown and "other settings (" not in shown
    assert "| syslog-ng-4.8 |" in hidden and "other settings (CONFIRM_S=0" in hidden


def test_a_search_with_repeats_at_its_ndr_gives_its_interval_and_marks_them(tmp_path: Path) -> None:
    written = a_result()
    written["trials"][0]["purpose"] = model.REPEAT
    written["ndr_interval"] = dataclasses.asdict(model.Interval(
        repeats=2, held=1, msgs_per_cpu_s=[31992.0, 30100.0], core_share=0.131, upper_msgs_per_s=4000.0,
        low_msgs_per_s=3100.0, high_msgs_per_s=4900.0,
    ))  # fmt: skip
    assert model.result_from_dict(written).to_dict() == written
    (tmp_path / "capacity").mkdir()
    (tmp_path / "capacity" / "a.json").write_text(json.dumps(written))
    text = render(tmp_path)
    assert ("NDR interval for the next search 3,100 .. 4,900 msg/s (95%), from 2 repeats at the NDR (1 held; "
            "messages per daemon CPU second spread 4.3%, the daemon at 0.13 of its cores) and the lowest rate "
            "above it that broke, 4,000 msg/s.") in text  # fmt: skip
    assert "| 12.0 | 1.2 | repeat at the NDR (its interval) |" in text
    assert "| syslog-ng-4.8 | udp | udp | 3,800 (next search 3,100\u20134,900) | 3,800 .. 4,000 |" in text
