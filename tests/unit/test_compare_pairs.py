"""Like with like inside one comparison (model/compare_pairs.py): every two sides that differ in the tuning
alone or the profile alone, paired round by round, judged against the comparison's floor; the compare
command's table, the comparisons section and the first screen say them."""

from __future__ import annotations

from pathlib import Path

from syslogbench.host.compare import table
from syslogbench.model import compare as model
from syslogbench.model import compare_pairs
from syslogbench.report import compare_pairs as first_screen_pairs
from syslogbench.report import markdown, sections
from syslogbench.report.compare import pairs_table
from tests.unit.test_report_compare_answer import INTEL, compare_answer_found, first_screen, write

FOUR = {"A": 1.0, "A@tuned": 2.0, "B": 0.5, "B@tuned": 2.2}  # two families at two tunings


def side(name: str, config: dict[str, object] | None = None) -> model.Side:
    profile, _, tuning = name.partition("@")
    return model.Side(name, profile, tuning or "default", config)


def four(folder: Path) -> model.CompareResult:
    write(folder, "mixed", "2026-12-06T04:00:00Z", INTEL, FOUR)
    (found,) = compare_answer_found(folder)
    return found


def test_the_pairs_are_the_sides_that_differ_in_one_thing_alone_a_default_or_the_first_as_base() -> None:
    sides = [side("A@tuned"), side("A"), side("B"), side("B@tuned"), side("B=own.conf", {"sha256": "x"})]
    found = [(base.name, other.name, what) for base, other, what in compare_pairs.like_pairs(sides)]
    assert found == [
        ("A", "A@tuned", "tuning"),  # the default is the base, though given second
        ("A@tuned", "B@tuned", "profile"),
        ("A", "B", "profile"),
        ("B", "B@tuned", "tuning"),
    ]  # A@tuned and B differ in both: never paired; a user's config never


def test_each_pair_is_paired_round_by_round_as_the_sides_are_with_the_first(tmp_path: Path) -> None:
    found = four(tmp_path)
    pairs = {(p.side, p.base): p for p in compare_pairs.pairs(found)}
    assert sorted(pairs) == [("A@tuned", "A"), ("B", "A"), ("B@tuned", "A@tuned"), ("B@tuned", "B")]
    over_first = pairs[("A@tuned", "A")].ratios["ndr_msgs_per_s"]
    assert over_first == found.ratios["A@tuned"]["ndr_msgs_per_s"]  # the comparison's own ratio, unchanged
    tuned = pairs[("B@tuned", "A@tuned")].ratios["ndr_msgs_per_s"]
    assert (tuned.value, tuned.low, tuned.high, tuned.pairs, tuned.verdict) == (1.1, 1.1, 1.1, 3, "differs")
    bought = pairs[("B@tuned", "B")].ratios["pdr_msgs_per_s"]
    assert (bought.value, bought.pairs, bought.verdict) == (4.4, 3, "differs")


def test_a_pair_is_judged_against_the_comparisons_floor(tmp_path: Path) -> None:
    found = four(tmp_path)
    found.floor["ndr_msgs_per_s"] = 0.2  # an A/A control 20% from 1: a 10% difference is within it
    (tuned,) = [p for p in compare_pairs.pairs(found) if p.base == "A@tuned"]
    assert tuned.ratios["ndr_msgs_per_s"].verdict == "not told apart"
    found.erratic["ndr_msgs_per_s"] = True
    assert all(p.ratios["ndr_msgs_per_s"].verdict == "erratic" for p in compare_pairs.pairs(found))


def test_the_command_table_adds_the_pairs_beyond_the_first(tmp_path: Path) -> None:
    text = table(four(tmp_path))
    assert "B@tuned over A@tuned (profile alone): NDR 1.100 [1.100, 1.100] (n=3), differs" in text
    assert "B@tuned over B (tuning alone): NDR 4.400" in text
    assert "A@tuned over A (tuning alone)" not in text  # the side's own row over the first says it


def test_the_comparisons_section_has_a_pairs_table_only_where_the_sides_differ_in_tuning(
    tmp_path: Path,
) -> None:
    found = four(tmp_path)
    shown = pairs_table(found)
    assert shown is not None and len(shown.rows) == 4
    assert shown.rows[-1][:3] == ["`B@tuned`", "`B`", "tuning"] and shown.rows[-1][3].startswith("4.400")
    write(tmp_path, "plain", "2026-12-06T05:00:00Z", INTEL, {"A": 1.0, "B": 0.5})
    plain = [one for one in compare_answer_found(tmp_path) if one.id == "plain"]
    assert pairs_table(plain[0]) is None
    whole = markdown.document(sections.document([], tmp_path, None))
    assert whole.count("Like with like: every two sides") == 1


def test_the_first_screen_says_what_tuning_buys_each_family_and_each_tunings_families(tmp_path: Path) -> None:
    four(tmp_path)
    text = first_screen(tmp_path)
    assert f"## {first_screen_pairs.TITLE}" in text
    (line,) = [line for line in text.splitlines() if line.startswith("**`seed2014`**, 3 rounds")]
    assert "Tuned over default: `A@tuned` over `A`: **2.000×** [1.9" in line
    assert "`B@tuned` over `B`: **4.400×** [4.40, 4.40], n=3, differs" in line
    assert "Families at one tuning: `B` over `A`: **0.500×**" in line and "`B@tuned` over `A@tuned`" in line


def test_no_comparison_of_tunings_no_pairs_on_the_first_screen(tmp_path: Path) -> None:
    write(tmp_path, "plain", "2026-12-06T03:00:00Z", INTEL, {"A": 1.0, "B": 0.5})
    write(tmp_path, "cut", "2026-12-06T04:00:00Z", INTEL, FOUR, outcome="interrupted")
    assert first_screen_pairs.blocks(compare_answer_found(tmp_path), {}) == []


def test_cpu_per_message_at_the_fixed_rate_is_paired_beside_the_ndr_and_pdr(tmp_path: Path) -> None:
    """A capacity comparison's third figure: each side's CPU per message in its trial at the fixed rate,
    in the command's table and the comparisons section; a run with no such trial pairs none."""
    write(tmp_path, "cpu", "2026-12-06T04:00:00Z", INTEL, {"A": 1.0, "B": 0.5}, rate_msgs_per_s=39_400.0)
    path = tmp_path / "compare" / "cpu.json"
    found = model.read(path)
    for run in found.runs:
        run.cpu_us_per_msg = 4.0 if run.side == "B" else 2.0 + 0.01 * run.round
    run.cpu_us_per_msg = None  # the control's last round: its trial lost messages
    model.judge_again(found)
    path.write_text(model.text(found))
    cpu = model.read(path).ratios["B"]["cpu_us_per_msg"]
    assert cpu.pairs == 3 and cpu.verdict == "differs" and cpu.value is not None and 1.9 < cpu.value < 2.0
    assert model.read(path).ratios["A (A/A)"]["cpu_us_per_msg"].pairs == 2
    text = table(model.read(path))
    assert "CPU per message at 39,400 msg/s, B over A: 1.9" in text, text
    whole = markdown.document(sections.document([], tmp_path, None))
    assert (
        "CPU per message ratio [95%]" in whole
        and "CPU per message from a trial each at 39,400 msg/s" in whole
    )


def test_a_comparison_from_before_the_fixed_rate_shows_no_cpu_columns(tmp_path: Path) -> None:
    """Its ratios of CPU per message are all "no ratio" (migrate/compare_at_rate.py): no column of dashes."""
    write(tmp_path, "old", "2026-12-06T04:00:00Z", INTEL, {"A": 1.0, "B": 0.5})
    whole = markdown.document(sections.document([], tmp_path, None))
    assert "NDR ratio [95%]" in whole and "CPU per message ratio" not in whole
