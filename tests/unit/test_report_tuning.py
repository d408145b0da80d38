"""The report compares like with like: runs and searches of two tunings never pool, and no sentence, table or
plot ranks a tuned daemon against a default one (issue 45)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from syslogbench.model import capacity as model
from syslogbench.report import (
    burst,
    capacity,
    capacity_answer,
    capacity_plots,
    capacity_rows,
    drawing,
    load,
    markdown,
    sections,
    versions_plot,
)
from syslogbench.report.blocks import Lead, Note
from tests.unit.test_report import markdown_tables, replicate, typed
from tests.unit.test_report_capacity import a_result

TUNED = {"tuning": "tuned", "knobs": {"io-buffer": {"param": "ioBufferSize", "value": "64k", "default": "4k",
                                                   "source": "rsyslog documentation, omfile"}}}  # fmt: skip


def tuned(document: dict[str, Any]) -> dict[str, Any]:
    """The run as a TUNING=tuned run records it, under a run id of its own."""
    return document | {"run_id": document["run_id"] + "-tuned", "daemon": document["daemon"] | TUNED}


# Three runs of each daemon at each tuning. Tuned rsyslog8 is the fastest of all: a ranking that mixed the
# tunings would put it over default syslog-ng.
DEFAULT_RUNS = [
    *(replicate("baseline", n, 1_000_000 + n) for n in (1, 2, 3)),
    *(replicate("rsyslog8", n, rate) for n, rate in ((4, 90_000), (5, 100_000), (6, 110_000))),
    *(replicate("syslog-ng", n, rate) for n, rate in ((7, 140_000), (8, 150_000), (9, 160_000))),
]
TUNED_RUNS = [
    *(tuned(replicate("rsyslog8", n, rate)) for n, rate in ((10, 290_000), (11, 300_000), (12, 310_000))),
    *(tuned(replicate("syslog-ng", n, rate)) for n, rate in ((13, 190_000), (14, 200_000), (15, 210_000))),
]


def profiles_named(text: str) -> list[str]:
    """Every profile a sentence names in `code`, as it names it."""
    return re.findall(r"`((?:rsyslog8|syslog-ng)[^`]*)`", text)


# -- runs ------------------------------------------------------------------------------------------


def test_two_runs_identical_but_for_the_tuning_never_pool() -> None:
    default, other = typed(DEFAULT_RUNS[3], tuned(DEFAULT_RUNS[3]))
    assert (default.daemon.tuning, other.daemon.tuning) == (None, "tuned")
    assert load.profile_of(default) == "rsyslog8" and load.profile_of(other) == "rsyslog8, tuned"
    grouped = load.group_results([default, other])
    assert {
        name: [(g.profile, g.tuning, len(g.runs)) for g in groups] for name, groups in grouped.items()
    } == {
        "seed2014": [("rsyslog8", "default", 1)],
        "seed2014 (tuned)": [("rsyslog8, tuned", "tuned", 1)],
    }


def test_a_custom_step_pools_with_neither_tuning_nor_with_another_step() -> None:
    runs = [DEFAULT_RUNS[3], tuned(DEFAULT_RUNS[3])]
    for n, value in ((4, "16k"), (5, "64k")):
        step = tuned(DEFAULT_RUNS[n]) | {"run_id": f"step-{value}"}
        step["daemon"] = step["daemon"] | {"tuning": "custom", "knobs": {"io-buffer": {"value": value}}}
        runs.append(step)
    grouped = load.group_results(typed(*runs))
    assert {name: [g.profile for g in groups] for name, groups in grouped.items()} == {
        "seed2014": ["rsyslog8"],
        "seed2014 (tuned)": ["rsyslog8, tuned"],
        "seed2014 (custom: io-buffer=16k)": ["rsyslog8, custom: io-buffer=16k"],
        "seed2014 (custom: io-buffer=64k)": ["rsyslog8, custom: io-buffer=64k"],
    }


def test_a_result_from_before_the_tuning_axis_reads_as_the_default() -> None:
    (old,) = typed(DEFAULT_RUNS[3])
    assert old.daemon.tuning is None and old.daemon.knobs is None  # as every result before the axis
    assert load.tuning_of(old) == "default"
    (group,) = load.group_results([old])["seed2014"]
    assert (group.profile, group.tuning) == ("rsyslog8", "default")
    search = a_result()
    assert "tuning" in search and search["tuning"] is None  # the model's field, null in an older search
    assert capacity_rows.tuning_of(search) == "default"
    (row,) = capacity_rows.rows([search])
    assert (row.tuning, row.label) == ("default", "syslog-ng-4.8")


def test_each_section_ranks_one_tuning_and_the_baseline_is_in_both() -> None:
    grouped = load.group_results(typed(*DEFAULT_RUNS, *TUNED_RUNS))
    assert {name: [g.profile for g in groups] for name, groups in grouped.items()} == {
        "seed2014": ["baseline", "rsyslog8", "syslog-ng"],
        "seed2014 (tuned)": ["baseline", "rsyslog8, tuned", "syslog-ng, tuned"],
    }
    assert load.fastest_group(grouped["seed2014"]).profile == "syslog-ng"  # type: ignore[union-attr]
    assert load.fastest_group(grouped["seed2014 (tuned)"]).profile == "rsyslog8, tuned"  # type: ignore[union-attr]


def test_no_ratio_table_and_no_burst_sentence_mixes_the_tunings(tmp_path: Path) -> None:
    text = markdown.document(sections.document(typed(*DEFAULT_RUNS, *TUNED_RUNS), tmp_path, None))
    ratios = re.findall(r"### Throughput relative to the fastest daemon profile, `([^`]+)`\n\n(\|.*?)\n\n", text,
                        re.S)  # fmt: skip
    assert [fastest for fastest, _ in ratios] == ["syslog-ng", "rsyslog8, tuned"]
    for fastest, table in ratios:
        names = [row[0] for row in markdown_tables(table)[0][1:] if row[0] != "baseline"]
        assert names == (["syslog-ng", "rsyslog8"] if fastest == "syslog-ng" else
                         ["rsyslog8, tuned", "syslog-ng, tuned"]), table  # fmt: skip
    answers = [line for line in text.splitlines() if "drains the seed scenario's burst fastest" in line]
    assert len(answers) == 2, answers
    default, other = answers
    assert default.startswith("**On [machine 1](#machines), at the defaults, `syslog-ng` drains")
    assert profiles_named(default) == ["syslog-ng", "rsyslog8"] and "1.50 times `rsyslog8`" in default
    assert other.startswith("**On [machine 1](#machines), tuned, `rsyslog8, tuned` drains")
    assert profiles_named(other) == ["rsyslog8, tuned", "syslog-ng, tuned"]
    assert "1.50 times `syslog-ng, tuned`" in other  # 300,000 over 200,000: not over default syslog-ng's
    assert "no run of the seed scenario" not in text  # both tunings ran


def test_the_version_matrix_has_a_tuning_column_the_defaults_first() -> None:
    grouped = load.group_results(typed(*DEFAULT_RUNS, *TUNED_RUNS))
    matrix = load.version_matrix(grouped)
    assert [name for name, _ in matrix] == ["seed2014", "seed2014 (tuned)"]
    rows = burst.versions_rows(matrix, "machine 1")
    tuning = burst.VERSIONS_HEADER.index("tuning")
    ours = [(row[0], row[tuning]) for row in rows if row[2] == "machine 1"]
    assert ours == [
        ("`baseline` (baseline)", "-"),  # once: a receiver has no tuning
        ("`rsyslog8` (rsyslog8)", "default"),
        ("`syslog-ng` (syslog-ng)", "default"),
        ("`rsyslog8` (rsyslog8)", "tuned"),
        ("`syslog-ng` (syslog-ng)", "tuned"),
    ]


def test_the_version_matrix_draws_each_tuning_in_a_panel_of_its_own() -> None:
    grouped = load.group_results(typed(*DEFAULT_RUNS, *TUNED_RUNS))
    (_, default), (_, other) = load.version_matrix(grouped)
    fig = versions_plot.versions_figure("seed2014", default, "caption", tuned=[other])
    rate, _, tuned_rate = fig.axes[:3]
    assert "at the defaults" in rate.get_title(loc="left") and "tuned" in tuned_rate.get_title(loc="left")
    assert [t.get_text() for t in rate.get_yticklabels()] == ["rsyslog8 (n=3)", "syslog-ng (n=3)"]
    assert [t.get_text() for t in tuned_rate.get_yticklabels()] == [
        "rsyslog8, tuned (n=3)",
        "syslog-ng, tuned (n=3)",
    ]
    # Each on its own scale: no bar is set against one of the other tuning.
    assert not rate.get_shared_x_axes().joined(rate, tuned_rate) and rate.get_xlim() != tuned_rate.get_xlim()


def test_the_run_table_and_the_single_runs_say_the_tuning(tmp_path: Path) -> None:
    single = tuned(replicate("rsyslog8", 1, 100_000, scenario__id="small"))
    text = markdown.document(sections.document(typed(*TUNED_RUNS, single), tmp_path, None))
    singles = next(table for table in markdown_tables(text) if table[0] == sections.SINGLES_HEADER)
    assert [(row[0], row[2], row[3]) for row in singles[1:]] == [("small (tuned)", "rsyslog8", "tuned")]
    latest = next(
        table for table in markdown_tables(text) if table[0][:3] == ["profile", "daemon version", "tuning"]
    )
    assert {row[2] for row in latest[1:]} == {"tuned"}


def test_without_runs_of_a_tuning_the_burst_says_so_in_one_short_sentence(tmp_path: Path) -> None:
    doc = sections.document(typed(*DEFAULT_RUNS), tmp_path, None)
    versions = next(part for part in doc.sections if part.anchor == sections.VERSIONS_ANCHOR)
    said = [block.text for block in versions.blocks if "yet." in getattr(block, "text", "")]
    assert len(said) == 1 and said[0].startswith("**On [machine 1](#machines), at the defaults, `syslog-ng`")
    assert said[0].endswith("; 95% CI of the ratio 1.27\u20131.78. *Tuned:* no run of the seed scenario on "
                            "[machine 1](#machines) yet.")  # fmt: skip
    matrix = load.version_matrix(load.group_results(typed(*TUNED_RUNS)))  # tuned only: the default said so
    (tuned_only,) = burst.answer_blocks(matrix, "machine 1")
    assert tuned_only.text.startswith("**On machine 1, tuned, `rsyslog8, tuned` drains")  # type: ignore[union-attr]
    assert tuned_only.text.endswith(" *At the defaults:* no run of the seed scenario on machine 1 yet.")  # type: ignore[union-attr]
    assert burst.answer_blocks([("seed2014", matrix[0][1][:0])], "machine 1") == [
        Note("*At the defaults:* no daemon passed the seed scenario on machine 1. *Tuned:* no run of the seed "
             "scenario on machine 1 yet.")
    ]  # fmt: skip


# -- capacity searches -----------------------------------------------------------------------------


def search(profile: str, ndr: float, tuning: str | None = None, transport: str = "udp") -> dict[str, Any]:
    """A search at today's defaults on a 2-core machine that found ndr (its trial above it, so that nothing
    contradicts it), of profile at a tuning (None: a result from before the tuning axis)."""
    found = a_result(f"20261126T000000.000Z-{profile}-{int(ndr)}-{tuning}-{transport}")
    trial = found["trials"][0] | {"offered_msgs_per_s": ndr + 500}
    return found | {
        "profile": profile, "transport": transport, "scenario": transport, "tuning": tuning,
        "knobs": {} if tuning else None, "settings": model.CapacitySettings(daemon_cores=1).as_dict(),
        "ndr": found["ndr"] | {"lower_msgs_per_s": ndr, "upper_msgs_per_s": ndr + 400},
        "pdr": found["pdr"] | {"lower_msgs_per_s": ndr + 100, "upper_msgs_per_s": ndr + 400},
        "ndr_msgs_per_s": ndr, "pdr_msgs_per_s": ndr + 100, "trials": [trial],
    }  # fmt: skip


# Tuned rsyslog holds the most of all: a ranking that mixed the tunings would put it first at the defaults.
SEARCHES = [
    search("syslog-ng-4.8", 3800.0),
    search("rsyslog-8.2504", 3000.0, "default"),
    search("syslog-ng-4.8", 5000.0, "tuned"),
    search("rsyslog-8.2504", 9000.0, "tuned"),
]


def lead_texts(searches: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    numbers = {capacity_rows.machine_of(searches[0]): 1}
    blocks = capacity_answer.lead_blocks(searches, numbers, [])
    leads = [block.text for block in blocks if isinstance(block, Lead)]
    notes = [block.text for block in blocks if isinstance(block, Note) and "no search" in block.text]
    return leads, notes


def test_searches_identical_but_for_the_tuning_are_two_rows() -> None:
    one, other = search("syslog-ng-4.8", 3800.0), search("syslog-ng-4.8", 3800.0, "tuned")
    rows = capacity_rows.rows([one, other])
    assert [(row.profile, row.tuning, row.n) for row in rows] == [
        ("syslog-ng-4.8", "default", 1),
        ("syslog-ng-4.8", "tuned", 1),
    ]
    assert [row.flags for row in rows] == [[], []]  # both plain: each ranked, at its own tuning


def test_the_first_screen_ranks_each_transport_once_per_tuning() -> None:
    leads, notes = lead_texts(SEARCHES)
    assert len(leads) == 2 and notes == [], (leads, notes)
    default, other = leads
    assert default.startswith("**UDP, at the defaults** (`udp`, 1 senders): **syslog-ng-4.8** holds the most")
    assert "Others: rsyslog-8.2504 3,000 (n=1; best is 1.27x)." in default  # 3,800 / 3,000
    assert "tuned" not in default.split("holds the most", 1)[1]
    assert other.startswith("**UDP, tuned** (`udp`, 1 senders): **rsyslog-8.2504, tuned** holds the most")
    assert "Others: syslog-ng-4.8, tuned 5,000 (n=1; best is 1.80x)." in other  # 9,000 / 5,000
    assert "syslog-ng-4.8 3,800" not in other and "rsyslog-8.2504 3,000" not in other


def test_a_tuning_with_nothing_to_rank_says_so_in_one_short_line() -> None:
    leads, notes = lead_texts(SEARCHES[:2])  # at the defaults only
    assert len(leads) == 1 and notes == ["*Tuned:* no search of any transport yet."]
    tcp = [search("syslog-ng-4.8", 4000.0, transport="tcp"), search("syslog-ng-4.8", 4500.0, "tuned", "tcp")]
    leads, notes = lead_texts([*SEARCHES[:2], *tcp])  # tuned over TCP, not over UDP
    assert [lead.split(" (", 1)[0] for lead in leads] == [
        "**TCP, at the defaults**", "**TCP, tuned**", "**UDP, at the defaults**",
    ]  # fmt: skip
    assert notes == ["*UDP, tuned:* no search yet."]


def test_a_ranking_side_by_side_stands_for_the_searches_made_apart() -> None:
    """Where a comparison ranks every version of a tuning's searches side by side, the first screen ranks
    none of them by searches made hours apart (issue 47); a version it leaves out keeps that ranking."""
    numbers = {capacity_rows.machine_of(SEARCHES[0]): 1}
    both = {("udp", "default"): {"syslog-ng-4.8", "rsyslog-8.2504"}}
    blocks = capacity_answer.lead_blocks(SEARCHES, numbers, [], both)
    leads = [block.text for block in blocks if isinstance(block, Lead)]
    notes = [block.text for block in blocks if isinstance(block, Note)]
    assert [lead.split(" (", 1)[0] for lead in leads] == ["**UDP, tuned**"], leads
    assert notes[0].startswith(
        "*UDP, at the defaults:* every version searched here is ranked side by side"
    ), notes
    one = {("udp", "default"): {"syslog-ng-4.8"}}  # rsyslog not in the comparison: the ranking stays
    blocks = capacity_answer.lead_blocks(SEARCHES, numbers, [], one)
    assert len([block for block in blocks if isinstance(block, Lead)]) == 2


def test_the_first_screen_and_the_summary_of_both_tunings(tmp_path: Path) -> None:
    (tmp_path / "capacity").mkdir()
    for data in SEARCHES:
        (tmp_path / "capacity" / f"{data['run_id']}.json").write_text(json.dumps(data))
    doc = sections.document([], tmp_path, None)
    first = doc.sections[1]  # after the navigation bar
    assert first.anchor == "capacity-answer"
    assert [b.text.split(" (", 1)[0] for b in first.blocks if isinstance(b, Lead)] == [
        "**UDP, at the defaults**", "**UDP, tuned**",
    ]  # fmt: skip
    summary = next(part for part in doc.sections if part.anchor == capacity.SUMMARY_ANCHOR)
    table = markdown_tables(markdown.blocks(summary.blocks))[0]
    assert table[0][:3] == ["transport", "profile", "tuning"]
    # By transport, then tuning, then NDR: the tuned rows never sorted among the default ones.
    assert [(row[1], row[2], row[6]) for row in table[1:]] == [
        ("syslog-ng-4.8", "default", "3,800"),
        ("rsyslog-8.2504", "default", "3,000"),
        ("rsyslog-8.2504", "tuned", "9,000"),
        ("syslog-ng-4.8", "tuned", "5,000"),
    ]


def test_a_capacity_plot_draws_one_tuning() -> None:
    found = capacity_plots.groups(SEARCHES)
    assert {key: sorted(s["run_id"] for s in chosen) for key, chosen in found.items()} == {
        "udp (udp)": sorted(s["run_id"] for s in SEARCHES[:2]),
        "udp (udp), tuned": sorted(s["run_id"] for s in SEARCHES[2:]),
    }
    styles = capacity_plots.styles(
        found["udp (udp), tuned"], drawing.family_colors(["syslog-ng-4.8", "rsyslog-8.2504"])
    )
    assert sorted(name for _, _, name in styles.values()) == ["rsyslog-8.2504, tuned", "syslog-ng-4.8, tuned"]


def test_a_users_config_is_its_own_tuning_and_never_ranked_on_the_first_screen(tmp_path: Path) -> None:
    mine = search("rsyslog-8.2504", 20000.0) | {"config": {"sha256": "ab" * 32}}
    assert capacity_rows.tuning_of(mine) == "user" and capacity_rows.label_of(mine) == (
        "rsyslog-8.2504 (config abababababab)"
    )
    leads, _ = lead_texts([*SEARCHES[:2], mine])
    assert len(leads) == 1 and "config" not in leads[0] and "20,000" not in leads[0]
    # Its plot is one of its own, folded in the capacity section: the page shows the ranked tunings' plots.
    shown = capacity_plots.write([*SEARCHES[:2], mine], tmp_path, ranked=True)
    folded = capacity_plots.write([*SEARCHES[:2], mine], tmp_path, ranked=False)
    assert [caption for caption, _ in shown] == ["Capacity, udp (udp): loss and latency against offered rate"]
    assert [caption for caption, _ in folded] == [
        "Capacity, udp (udp), user: loss and latency against offered rate"
    ]
    (tmp_path / "capacity").mkdir()
    (tmp_path / "capacity" / "mine.json").write_text(json.dumps(mine))
    figures = {capacity.ANCHOR: [("ranked", "a.png")], capacity.FOLDED_FIGURES: [("mine", "b.png")]}
    doc = sections.document([], tmp_path, None, figures)
    part = next(part for part in doc.sections if part.anchor == capacity.ANCHOR)
    assert [
        (type(b).__name__, getattr(b, "caption", getattr(b, "summary", ""))) for b in part.blocks[2:4]
    ] == [
        ("Figure", "ranked"),
        ("Details", "Plots of the other tunings: users' configs and knob steps (1)"),
    ]
