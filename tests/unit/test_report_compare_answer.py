"""The first screen's side-by-side answer (report/compare_answer.py): the capacity comparisons' sides ranked by
their NDR ratio over the first, with intervals, bars and each side's absolute NDR on its machine."""

from __future__ import annotations

import json
from pathlib import Path

from syslogbench.model import compare as model
from syslogbench.report import compare_answer, compare_pairs, markdown, sections

AMD = {"cgroup_version": 1, "cores": 2, "cpu_model": "AMD EPYC", "docker_version": "20.10.24", "fingerprint": None,
       "kernel": "6.18.44", "memory_bytes": 25_276_182_528}  # fmt: skip
INTEL = AMD | {"cpu_model": "Intel(R) Xeon(R) Processor"}
BASE = [500_000.0, 560_000.0, 470_000.0]  # the machine drifts; every side with it
WOBBLE = [1.0, 1.01, 0.99]


def write(
    folder: Path, cid: str, finished: str, host: dict, factors: dict[str, float], **extra: object
) -> None:
    """A capacity comparison of these sides (the first's factor 1), each side's NDR its factor of BASE, the
    A/A control the first side's again."""
    names = [*factors, f"{next(iter(factors))} (A/A)"]
    factor = factors | {names[-1]: 1.0}
    runs = [
        model.Run(
            name,
            n,
            "pass",
            f"{name}-{n}",
            ndr_msgs_per_s=round(rate * factor[name] * (w if name != names[0] else 1.0)),
            pdr_msgs_per_s=round(rate * factor[name]),
        )
        for name in names
        for n, (rate, w) in enumerate(zip(BASE, WOBBLE, strict=True), start=1)
    ]
    measure = str(extra.pop("measure", "capacity"))
    judged = model.judge(runs, list(factors), model.fields(measure))
    found = model.CompareResult(
        kind=model.KIND, id=cid, outcome="done", scenario="seed2014", started_utc=finished,
        finished_utc=finished, rounds=3, seed=47, machine=host,
        sides=[model.Side(name, name.split("@")[0], tuning_in(name)) for name in factors], runs=runs,
        measure=measure, ratios=judged.ratios, floor=judged.floor, control_spread=judged.control_spread,
        erratic=judged.erratic,
    )  # fmt: skip
    for key, value in extra.items():
        setattr(found, key, value)
    (folder / "compare").mkdir(parents=True, exist_ok=True)
    (folder / "compare" / f"{cid}.json").write_text(json.dumps(found.to_dict()))


def tuning_in(name: str) -> str:
    return name.split("@")[1] if "@" in name else "default"


def first_screen(folder: Path) -> str:
    doc = sections.document([], folder, None)
    (part,) = [part for part in doc.sections if part.anchor == "capacity-answer"]
    return markdown.blocks(part.blocks)


def table_rows(text: str) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| rank")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines if "---" not in line]


def test_the_sides_are_ranked_by_their_ratio_with_bars_and_an_overlap_said(tmp_path: Path) -> None:
    write(tmp_path, "cid", "2026-12-05T23:00:00Z", AMD, {"A@tuned": 1.0, "B@tuned": 1.5, "C@tuned": 1.47})
    text = first_screen(tmp_path)
    assert f"## {compare_answer.TITLE}" in text and "**`seed2014`**, tuned, 3 rounds" in text
    assert "**`B@tuned`** holds **1.500×** `A@tuned`'s NDR (95% interval 1.4" in text and "differs" in text
    rows = table_rows(text)
    assert [row[1] for row in rows] == ["`B@tuned`", "`C@tuned`", "`A@tuned`"]  # the control left out
    assert [len(row[3]) for row in rows] == [20, 20, 13]  # 20 x 1.47/1.5 is 19.6: rounded
    assert rows[2][2] == "1 (the first)" and rows[2][4] == "the first"
    assert rows[0][5] == "750,000 (697,950–848,400, 3)"  # B's rounds: median, range, how many
    assert rows[0][6] == "[1](#machines)"
    assert "Not told apart (their intervals overlap): `B@tuned` and `C@tuned`." in text


def test_each_machine_shows_its_newest_comparison_and_is_numbered_in_the_machines_table(
    tmp_path: Path,
) -> None:
    write(tmp_path, "old", "2026-12-05T22:00:00Z", AMD, {"A@tuned": 1.0, "B@tuned": 1.2})
    write(tmp_path, "new", "2026-12-05T23:00:00Z", AMD, {"A@tuned": 1.0, "B@tuned": 1.15})
    write(tmp_path, "intel", "2026-12-06T01:00:00Z", INTEL, {"A@tuned": 1.0, "B@tuned": 1.14})
    write(
        tmp_path,
        "cut",
        "2026-12-06T02:00:00Z",
        INTEL,
        {"A@tuned": 1.0, "B@tuned": 3.0},
        outcome="interrupted",
    )
    write(tmp_path, "burst", "2026-12-06T03:00:00Z", INTEL, {"A@tuned": 1.0, "B@tuned": 3.0}, measure="burst")
    text = first_screen(tmp_path)
    assert "1.200" not in text and "3.000" not in text
    # One sentence for the two machines, the newest first, and how far apart they put the ratio.
    assert (
        "**`seed2014`**, tuned, 3 rounds each, on 2 machines: `B@tuned` holds, of `A@tuned`'s NDR, **1.140 ["
        in text
    ), text
    assert text.index("on [machine 2](#machines) (Intel") < text.index("on [machine 1](#machines) (AMD")
    assert "The machines put it 1.140 to 1.150: each ratio is its machine's answer." in text, text
    # A CPU model with several machines gets its own span beside the whole one.
    write(tmp_path, "amd2", "2026-12-06T04:00:00Z", {**AMD, "boot": "b2"}, {"A@tuned": 1.0, "B@tuned": 1.05})
    text = first_screen(tmp_path)
    assert "on 3 machines" in text and "The machines put it 1.050 to 1.150 (" in text, text
    assert "(AMD EPYC 1.050 to 1.150; Intel(R) Xeon(R) Processor 1.140): each ratio is its" in text, text
    whole = markdown.document(sections.document([], tmp_path, None))
    machines = [
        line for line in whole.splitlines() if line.startswith("| 1 | AMD") or line.startswith("| 2 | Intel")
    ]
    assert len(machines) == 2 and all("| 0 | 0 | 0 |" in line for line in machines), machines
    counts = [line.split("|")[6].strip() for line in machines]
    assert counts == ["2", "3"], machines  # comparisons of either measure and outcome ran there


def test_a_comparison_of_tunings_is_never_ranked_on_the_first_screen(tmp_path: Path) -> None:
    """Like with like: a tuned side beside a default one is what the tuning buys, not a ranking of daemons."""
    write(tmp_path, "mixed", "2026-12-06T04:00:00Z", INTEL, {"A": 1.0, "A@tuned": 2.0, "B@tuned": 2.2})
    assert compare_answer.blocks(compare_answer_found(tmp_path), {}) == []
    write(tmp_path, "plain", "2026-12-06T03:00:00Z", INTEL, {"A": 1.0, "B": 0.5})
    text = first_screen(tmp_path)
    ranking = text.split(f"## {compare_pairs.TITLE}")[0]  # what the tuning buys follows (compare_pairs)
    assert "**`seed2014`**, at the defaults, 3 rounds" in ranking and "0.500×" not in ranking
    assert "`A`** holds the most" in ranking and "@tuned" not in ranking


def test_a_comparison_of_one_config_with_itself_ranks_nothing(tmp_path: Path) -> None:
    """`--side A --side A@default`: two A/A controls, a study of the floor, not a ranking of two daemons; a
    comparison of two sides that differ is ranked as before."""
    write(tmp_path, "floor", "2026-12-06T04:00:00Z", INTEL, {"A": 1.0, "A@default": 0.96})
    assert compare_answer.blocks(compare_answer_found(tmp_path), {}) == []
    write(tmp_path, "plain", "2026-12-06T03:00:00Z", INTEL, {"A": 1.0, "B": 0.5})
    ranking = first_screen(tmp_path).split(f"## {compare_pairs.TITLE}")[0]
    assert "`A`** holds the most" in ranking and "A@default" not in ranking


def test_no_capacity_comparison_no_answer(tmp_path: Path) -> None:
    write(tmp_path, "burst", "2026-12-06T03:00:00Z", INTEL, {"A@tuned": 1.0, "B@tuned": 3.0}, measure="burst")
    assert compare_answer.blocks(compare_answer_found(tmp_path), {}) == []


def compare_answer_found(folder: Path) -> list[model.CompareResult]:
    return [model.read(path) for path in sorted((folder / "compare").glob("*.json"))]


def one_pair(folder: Path, factor: float) -> tuple[Path, dict]:
    """A comparison of A and B whose B paired one round: a ratio with no interval."""
    write(folder, "one-pair", "2026-12-06T11:00:00Z", AMD, {"A": 1.0, "B": factor})
    path = folder / "compare" / "one-pair.json"
    data = json.loads(path.read_text())
    data["ratios"]["B"]["ndr_msgs_per_s"].update(low=None, high=None, pairs=1, verdict="not told apart")
    path.write_text(json.dumps(data))
    return path, data


def test_a_newer_comparison_without_an_interval_does_not_hide_one_with_intervals(tmp_path: Path) -> None:
    """A comparison that paired one round has no interval to rank by: the newest with intervals is shown."""
    write(tmp_path, "paired", "2026-12-06T08:00:00Z", AMD, {"A": 1.0, "B": 0.415})
    path, data = one_pair(tmp_path, 0.517)
    text = first_screen(tmp_path)
    assert "0.415" in text and "0.517" not in text
    data["ratios"]["B"]["ndr_msgs_per_s"].update(low=0.5, high=0.53, pairs=2, verdict="differs")
    path.write_text(json.dumps(data))
    assert "0.517" in first_screen(tmp_path) and "0.415" not in first_screen(tmp_path)


def test_a_comparison_that_paired_one_round_says_so_in_its_sentence_and_row(tmp_path: Path) -> None:
    """One pair gives a ratio but no interval: the sentence and the table say n=1, never a bare ratio that reads
    like one measured as often as the rest (6455: "holds 1.155 ... not told apart")."""
    one_pair(tmp_path, 1.155)
    text = first_screen(tmp_path)
    assert "`B` holds 1.155 of `A`'s NDR (one round paired: no interval): not told apart." in text, text
    assert "| 1.155 (n=1) |" in text, text


def test_the_versions_ranked_side_by_side_are_those_of_ranking_comparisons(tmp_path: Path) -> None:
    """What the first screen then ranks by no search made apart (report/capacity_answer.py): the profiles of
    each comparison that ranks, by scenario and tuning; a comparison of tunings adds none."""
    write(tmp_path, "mixed", "2026-12-06T04:00:00Z", INTEL, {"C": 1.0, "C@tuned": 2.0})
    assert compare_answer.ranked_versions(compare_answer_found(tmp_path)) == {}
    write(tmp_path, "plain", "2026-12-06T03:00:00Z", INTEL, {"A": 1.0, "B": 0.5})
    write(tmp_path, "tuned", "2026-12-06T05:00:00Z", AMD, {"A@tuned": 1.0, "D@tuned": 0.5})
    assert compare_answer.ranked_versions(compare_answer_found(tmp_path)) == {
        ("seed2014", "default"): {"A", "B"},
        ("seed2014", "tuned"): {"A", "D"},
    }


def test_three_sides_or_more_are_each_ranked_in_the_sentence(tmp_path: Path) -> None:
    """A matrix of versions: the first screen's sentence ranks every side, not the best alone; two sides
    keep their one sentence."""
    write(tmp_path, "three", "2026-12-06T04:00:00Z", AMD, {"A": 1.0, "B": 0.5, "C": 1.2})
    text = first_screen(tmp_path)
    order = text.split("In order, NDR over `A`: ", 1)[1].split(".\n", 1)[0]
    assert [part.split("`")[1] for part in order.split("; ")] == ["C", "A", "B"], order
    assert "`A` 1;" in order and "`B` 0.500 [" in order, order
    write(tmp_path / "two", "two", "2026-12-06T04:00:00Z", AMD, {"A": 1.0, "B": 0.5})
    assert "In order" not in first_screen(tmp_path / "two")
