"""The Markdown report and the 2014 reference data."""

from __future__ import annotations

import copy
import json
import logging
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from syslogbench import contract
from syslogbench.model.result import Result
from syslogbench.report import build as report
from syslogbench.report import burst, cells, html, load, machines, markdown, sections, stats
from syslogbench.report.blocks import Contents, Figure, Heading, Note, Paragraph
from syslogbench.report.published import seed2014
from tests.unit.conftest import limit, result_document

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())
SEED_TEXT = Path("/work/shared/seeds/000_c0a1f4aba303bdb8.txt")
GIB = 2**30
MIB = 2**20


# What the report's runs have beside the smallest result (tests/unit/conftest.py): a version 1 document.
REPORT_RUN: dict[str, Any] = {
    "started_utc": "2025-01-01T00:00:00Z",
    "scenario__run_timeout_s": 3600,
    "scenario__seed": 1,
    "host": {
        "cpu_model": "Test CPU 9000",
        "cores": 16,
        "memory_bytes": 32 * GIB,
        "kernel": "6.1.0-test",
        "docker_version": "24.0.7",
        "cgroup_version": 2,
    },
    "memory": {"peak_bytes": 300 * MIB, "max_rss_bytes": 12.5 * MIB},
    "io__output_bytes": 123456,
    "senders": [],
    "throughput__mb_per_s": 12.3,
}


def make_result(run_id: str, profile: str, finished: str, **changes: Any) -> dict[str, Any]:
    daemon = {
        "profile": profile,
        "name": re.sub(r"-[0-9.]+$", "", profile),  # the family, as a manifest names it
        "version": f"{profile} 1.2.3",
        "image": f"syslogbench/{profile}:test",
        "base": "debian:bookworm@sha256:abc",
        "settings": {},
        "stopped": True,
        "exit_code": 0,
    }
    own = {"run_id": run_id, "finished_utc": finished, "daemon": daemon}
    result = result_document(1, **copy.deepcopy({**REPORT_RUN, **own, **changes}))
    jsonschema.validate(Result.from_dict(result).to_dict(), SCHEMA)  # a version 1 document, as read
    return result


def typed(*documents: dict[str, Any]) -> list[Result]:
    return [Result.from_dict(document) for document in documents]


OLD = make_result("20250101T000000Z-rsyslog8", "rsyslog8", "2025-01-01T00:10:00Z", elapsed_s=99.99)
NEW = make_result(
    "20250102T000000Z-rsyslog8",
    "rsyslog8",
    "2025-01-02T00:10:00+00:00",
    elapsed_s=61.23,
    cpu__user_s=40.5,
    cpu__system_s=35.25,
    cpu__percent=123.4,
    memory__peak_bytes=512 * MIB,
    memory__max_rss_bytes=210.25 * MIB,
    throughput__msgs_per_s=97991.5,
    messages__received=5999000,
    messages__lost=1030,
    harness={"cpu": {"total_s": 0.5, "daemon_s": 75.75}, "cpu_share_of_daemon": 0.006601},
    messages__duplicated=10,
    verdict="loss",
)
NULLS = make_result(
    "20250101T120000Z-syslog-ng",
    "syslog-ng",
    "2025-01-01T12:00:00Z",
    verdict="timeout",
    elapsed_s=None,
    cpu__user_s=None,
    cpu__system_s=None,
    cpu__percent=None,
    memory__peak_bytes=None,
    memory__max_rss_bytes=None,
    throughput__msgs_per_s=None,
    limits__central_cpus=limit(16, None),
)
OTHER_SCENARIO = make_result(
    "20250103T000000Z-rsyslog8", "rsyslog8", "2025-01-03T00:00:00Z", scenario__id="small", elapsed_s=7.77
)


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    for result in (OLD, NEW, NULLS, OTHER_SCENARIO):
        (tmp_path / f"{result['run_id']}.json").write_text(json.dumps(result))
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "list.json").write_text("[1, 2, 3]")
    (tmp_path / "other.json").write_text(json.dumps({"hello": "world"}))
    (tmp_path / "notes.txt").write_text("not a result")
    return tmp_path


def latest_part(markdown: str) -> str:
    """The 'Latest run per profile' table of the first scenario."""
    return markdown[markdown.index("### Latest run per profile") :]


def table_row(markdown: str, first_cell: str) -> list[str]:
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("|") and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no table row for {first_cell!r}")


# -- loading ---------------------------------------------------------------------------------------


def test_load_results_skips_non_results(results_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="syslogbench.report.load"):
        loaded = load.load_results(results_dir)
    assert sorted(r.run_id for r in loaded) == sorted(r["run_id"] for r in (OLD, NEW, NULLS, OTHER_SCENARIO))
    warned = caplog.text
    for name in ("broken.json", "list.json", "other.json"):
        assert name in warned
    assert "schema.json" not in warned


def test_latest_per_profile_picks_newest() -> None:
    latest = load.latest_per_profile(typed(NEW, OLD, NULLS, OTHER_SCENARIO))
    assert [r.run_id for r in latest] == [NEW["run_id"], NULLS["run_id"]]
    assert [r.run_id for r in load.latest_per_profile(typed(OLD, NEW))] == [NEW["run_id"]]


def test_latest_per_profile_other_scenario() -> None:
    latest = load.latest_per_profile(typed(NEW, OLD, NULLS, OTHER_SCENARIO), "small")
    assert [r.run_id for r in latest] == [OTHER_SCENARIO["run_id"]]


# -- rendering -------------------------------------------------------------------------------------


def test_runs_table_has_exact_figures(results_dir: Path) -> None:
    markdown = report.render_markdown(results_dir)
    assert markdown.startswith("# ")
    row = table_row(latest_part(markdown), "rsyslog8")
    assert row == [
        "rsyslog8",
        "rsyslog8 1.2.3",
        "default",  # a result from before the tuning axis: the package's defaults
        "loss",
        "61.23",
        "40.50",
        "35.25",
        "123%",
        "512.0",
        "210.2",
        "97,992",
        "5,999,000 / 6,000,020",
        "1,030",
        "10",
        "8",
        "2.00 GiB",
        "n/a",  # sender-bound not recorded
        "0.66%",  # the harness's CPU over the daemon's
        "`20250102T000000Z-rsyslog8`",
    ]
    assert "99.99" not in latest_part(markdown)  # the older run is not in the latest-run table
    assert table_row(markdown, "rsyslog8")[8] == "99.99"  # but, passing, it is in the statistics
    assert "7.77" not in markdown  # nor the other scenario


def test_null_figures_are_na(results_dir: Path) -> None:
    row = table_row(latest_part(report.render_markdown(results_dir)), "syslog-ng")
    assert row[3] == "timeout"
    assert row[4:11] == ["n/a"] * 7
    assert row[cells.runs_header().index("central CPUs")] == "n/a"  # effective central CPUs unknown


def test_machine_line(results_dir: Path) -> None:
    markdown = report.render_markdown(results_dir)
    line = "Machine: Test CPU 9000, 16 cores, 32.0 GiB RAM, kernel 6.1.0-test, cgroup v2, Docker 24.0.7."
    assert line in markdown.splitlines()


def test_seed_section(results_dir: Path) -> None:
    markdown = report.render_markdown(results_dir)
    seed_part = markdown[markdown.index("## Published 2014 figures") :]
    assert "Intel E5-2620" in seed_part
    assert table_row(seed_part, "Rsyslog8")[:2] == ["Rsyslog8", "70.52"]
    assert table_row(seed_part, "Syslog-ng 3.5") == [
        "Syslog-ng 3.5",
        "20.56",
        "20.56, 21.86, 19.82",
        "62.21",
        "45.53",
        "529%",
        "29.2",
        "291,830",
    ]
    assert table_row(seed_part, "NXLog")[1] == "367.30"
    assert "derived here" in seed_part
    assert "cgroup peak" in markdown and "RSS to RSS" in markdown


def test_empty_results_dir(tmp_path: Path) -> None:
    markdown = report.render_markdown(tmp_path)
    assert "No runs of scenario `seed2014`" in markdown
    assert "## Published 2014 figures" in markdown


def test_main_writes_output(results_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out" / "report.md"
    out.parent.mkdir()
    assert report.main(["--results", str(results_dir), "--output", str(out)]) == 0
    assert out.read_text() == report.render_markdown(results_dir, None)  # every scenario
    assert "## Scenario `seed2014`" in out.read_text()
    # small has one run per profile: folded into one table with the others like it.
    assert "## Scenarios with one run per profile" in out.read_text() and "| `small` |" in out.read_text()
    assert report.main(["--results", str(results_dir), "--scenario", "small"]) == 0
    printed = capsys.readouterr().out
    assert "7.77" in printed
    assert "61.23" not in printed
    # What `python -m syslogbench report -- --scenario small` passes on.
    assert report.main(["--", "--results", str(results_dir), "--scenario", "small"]) == 0
    assert capsys.readouterr().out == printed


@pytest.mark.parametrize(
    ("flag", "said"),
    [
        (["--scenario", "smal"], "--scenario smal: no result in "),
        (["--run", "20250201T000001Z-nothing"], "--run 20250201T000001Z-nothing: no run in "),
    ],
)
def test_a_filter_that_matches_nothing_is_one_line_and_no_report(
    flag: list[str], said: str, results_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert report.main(["--results", str(results_dir), "--out", str(out), *flag]) == 2
    printed = capsys.readouterr()
    (line,) = printed.err.strip().splitlines()
    assert line.startswith(f"report: error: {said}") and not out.exists(), line
    if flag[0] == "--scenario":
        assert "give one of " in line and "small" in line and "seed2014" in line, line


# -- the 2014 data ---------------------------------------------------------------------------------


def test_parse_elapsed() -> None:
    assert seed2014.parse_elapsed("6:07.43") == 367.43
    assert seed2014.parse_elapsed("1:08.24") == 68.24
    assert seed2014.parse_elapsed("0:19.82") == 19.82
    assert seed2014.parse_elapsed("1:00:01.50") == 3601.5


def test_messages_total() -> None:
    assert seed2014.MESSAGES_TOTAL == 6_000_020


# Hand-computed from the seed text: (user, system, elapsed, %CPU, maxresident kB) medians.
HAND_MEDIANS = {
    "NXLog": (832.65, 188.51, 367.30, 278, 239680),
    "Rsyslog5": (41.09, 47.17, 86.94, 101, 25504),
    "Rsyslog7": (37.97, 68.35, 82.71, 128, 207600),
    "Rsyslog8": (29.85, 49.77, 70.52, 112, 210112),
    "Syslog-ng 3.3": (65.48, 47.24, 21.72, 524, 31920),
    "Syslog-ng 3.5": (62.21, 45.53, 20.56, 529, 29872),
}


@pytest.mark.parametrize("daemon", list(HAND_MEDIANS))
def test_seed_medians(daemon: str) -> None:
    user, system, elapsed, cpu, rss_kb = HAND_MEDIANS[daemon]
    m = seed2014.medians()[daemon]
    assert m.user_s == user
    assert m.system_s == system
    assert m.elapsed_s == pytest.approx(elapsed)
    assert m.cpu_percent == cpu
    assert m.max_rss_mib == rss_kb / 1024
    assert m.msgs_per_s == pytest.approx(6_000_020 / elapsed)


def test_seed_known_rates() -> None:
    medians = seed2014.medians()
    assert list(medians) == list(HAND_MEDIANS)
    assert medians["Rsyslog8"].msgs_per_s == pytest.approx(85082.53, abs=0.01)
    assert medians["Syslog-ng 3.5"].msgs_per_s == pytest.approx(291829.77, abs=0.01)
    assert medians["Syslog-ng 3.5"].max_rss_mib == pytest.approx(29.171875)


@pytest.mark.parametrize("daemon", list(seed2014.RUNS))
def test_seed_runs_are_consistent(daemon: str) -> None:
    """%CPU as time prints it, (user + system) / elapsed truncated, catches transcription slips."""
    for run in seed2014.RUNS[daemon]:
        computed = (run.user_s + run.system_s) / run.elapsed_s * 100
        assert abs(computed - run.cpu_percent) < 1.5, run


TIME_LINE = re.compile(
    r"^([\d.]+)user ([\d.]+)system ([\d:.]+)elapsed (\d+)%CPU \(0avgtext\+0avgdata (\d+)maxresident\)k$"
)


@pytest.mark.skipif(not SEED_TEXT.exists(), reason="seed document not available")
def test_seed_matches_document() -> None:
    parsed: dict[str, list[seed2014.Run]] = {}
    daemon = ""
    for line in SEED_TEXT.read_text().splitlines():
        if line.endswith(":") and not line[0].isdigit():
            daemon = line[:-1].strip()
            parsed[daemon] = []
        elif match := TIME_LINE.match(line.strip()):
            user, system, elapsed, cpu, rss = match.groups()
            parsed[daemon].append(seed2014.Run(float(user), float(system), elapsed, int(cpu), int(rss)))
    assert {d: tuple(runs) for d, runs in parsed.items()} == seed2014.RUNS


# -- statistics per profile and scenario -----------------------------------------------------------

TOTAL = 6_000_020


def replicate(
    profile: str, index: int, msgs_per_s: float, verdict: str = "pass", **changes: Any
) -> dict[str, Any]:
    """One run of profile; elapsed follows from msgs/s so the two agree."""
    return make_result(
        f"20250201T0000{index:02d}Z-{profile}",
        profile,
        f"2025-02-01T00:00:{index:02d}Z",
        verdict=verdict,
        elapsed_s=round(TOTAL / msgs_per_s, 3),
        throughput__msgs_per_s=msgs_per_s,
        sender_bound=changes.pop("sender_bound", {"value": False, "reason": "the daemon was busy"}),
        **changes,
    )


# baseline: median 200,000, CoV 5%. rsyslog8: median 100,000 (50% of baseline), a loss run of 5 msgs/s
# that must not count. syslog-ng: 100k/150k/200k, CoV 33%: erratic, and one run sender-bound.
STATS_RUNS = [
    replicate("baseline", 1, 190_000),
    replicate("baseline", 2, 200_000, memory__max_rss_bytes=4 * MIB),
    replicate("baseline", 3, 210_000),
    replicate("rsyslog8", 4, 90_000, cpu__user_s=10.0),
    replicate("rsyslog8", 5, 100_000, cpu__user_s=20.0),
    replicate("rsyslog8", 6, 110_000, cpu__user_s=30.0),
    replicate(
        "rsyslog8", 7, 5, verdict="loss", cpu__user_s=1000.0, messages__lost=5, messages__received=TOTAL - 5
    ),
    replicate("syslog-ng", 8, 100_000),
    replicate(
        "syslog-ng", 9, 150_000, sender_bound={"value": True, "reason": "senders at 98% CPU, daemon idle"}
    ),
    replicate("syslog-ng", 10, 200_000),
    replicate("syslog-ng", 11, 1, verdict="timeout"),
    replicate("syslog-ng", 12, 1, verdict="error"),
]


@pytest.fixture
def stats_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    folder.mkdir()
    for result in STATS_RUNS:
        (folder / f"{result['run_id']}.json").write_text(json.dumps(result))
    return folder


def stats_row(markdown: str, profile: str) -> dict[str, str]:
    return dict(zip(cells.STATS_HEADER, table_row(markdown, profile), strict=True))


def test_group_results() -> None:
    grouped = load.group_results(typed(*STATS_RUNS, OTHER_SCENARIO))
    assert list(grouped) == ["seed2014", "small"]
    groups = grouped["seed2014"]
    assert [g.profile for g in groups] == ["baseline", "rsyslog8", "syslog-ng"]  # baseline first
    rsyslog = groups[1]
    assert len(rsyslog.runs) == 4 and len(rsyslog.counted) == 3
    assert rsyslog.values("msgs_per_s") == [90_000, 100_000, 110_000]
    assert rsyslog.median("cpu_user_s") == 20.0
    assert rsyslog.median("cpu_s") == 20.0 + 20.75
    assert rsyslog.not_counted == {"loss": 1}
    assert rsyslog.throughput == stats.Summary(
        n=3, median=100_000, mad=10_000, ci_low=90_000, ci_high=110_000, cov=pytest.approx(0.1), erratic=False
    )
    assert groups[2].erratic and not groups[0].erratic
    assert load.baseline_group(groups) is groups[0]
    assert load.fastest_group(groups) is groups[2]  # the baseline is not a daemon
    assert load.fastest_group(groups[:1]) is groups[0]


def test_grouped_statistics_row(stats_dir: Path) -> None:
    markdown = report.render_markdown(stats_dir)
    row = stats_row(markdown, "baseline")
    assert row["n"] == "3"
    assert row["median msgs/s"] == "200,000"
    assert row["95% CI msgs/s"] == "190,000\u2013210,000"  # three runs: their range
    assert row["MAD msgs/s"] == "10,000"
    assert row["CoV"] == "5.0%"
    assert row["erratic"] == "no"
    assert row["% of baseline"] == "100%"
    assert row["median elapsed s"] == f"{TOTAL / 200_000:.2f}"
    assert row["median max RSS MiB"] == "12.5"
    assert row["median peak MiB (cgroup)"] == "300.0"
    assert row["not counted"] == "0"


def test_non_pass_runs_are_not_counted(stats_dir: Path) -> None:
    markdown = report.render_markdown(stats_dir)
    row = stats_row(markdown, "rsyslog8")
    assert row["n"] == "3"
    assert row["median msgs/s"] == "100,000"  # not pulled down by the loss run's 5 msgs/s
    assert row["median user s"] == "20.00"  # nor up by its 1000 s
    assert row["not counted"] == "1 loss"
    assert stats_row(markdown, "syslog-ng")["not counted"] == "1 timeout, 1 error"


def test_percent_of_baseline(stats_dir: Path) -> None:
    row = stats_row(report.render_markdown(stats_dir), "rsyslog8")
    # 100k / 200k; the bootstrap interval spans 90k/210k to 110k/190k (see test_stats)
    assert row["% of baseline"] == "50% (43\u201358%)"


def test_no_baseline(results_dir: Path) -> None:
    markdown = report.render_markdown(results_dir)
    assert stats_row(markdown, "rsyslog8")["% of baseline"] == "n/a"
    assert "No `baseline` profile with a passing run" in markdown


def test_erratic_flag(stats_dir: Path) -> None:
    markdown = report.render_markdown(stats_dir)
    row = stats_row(markdown, "syslog-ng")
    assert row["CoV"] == "33.3%"
    assert row["erratic"] == "**erratic**"
    assert stats_row(markdown, "rsyslog8")["erratic"] == "no"  # CoV exactly 10% is not above 10%
    assert stats_row(markdown, "rsyslog8")["CoV"] == "10.0%"
    assert "Erratic (CoV of msgs/s above 10%): `syslog-ng`." in markdown


def test_sender_bound_marker(stats_dir: Path) -> None:
    markdown = report.render_markdown(stats_dir)
    assert stats_row(markdown, "syslog-ng")["sender-bound"] == "yes \u2021 (1 of 5 runs)"
    assert stats_row(markdown, "rsyslog8")["sender-bound"] == "no"
    assert sections.SENDER_BOUND_NOTE in markdown
    assert "- `20250201T000009Z-syslog-ng` (syslog-ng, pass): senders at 98% CPU, daemon idle" in markdown
    latest = table_row(latest_part(markdown), "syslog-ng")
    assert latest[cells.runs_header().index("sender-bound")] == "no"  # the latest run was not


def test_sender_bound_unknown_without_the_key(results_dir: Path) -> None:
    markdown = report.render_markdown(results_dir)
    assert stats_row(markdown, "rsyslog8")["sender-bound"] == "unknown"
    assert "\u2021 Sender-bound" not in markdown


def test_render_run_marks_sender_bound() -> None:
    (run,) = typed(STATS_RUNS[8])
    text = report.render_run(run)
    assert table_row(text, "syslog-ng")[cells.runs_header().index("sender-bound")] == "yes \u2021"


def test_ratio_to_fastest(stats_dir: Path) -> None:
    markdown = report.render_markdown(stats_dir)
    part = markdown[markdown.index("### Throughput relative to the fastest daemon profile, `syslog-ng`") :]
    assert table_row(part, "syslog-ng")[2:] == ["1.00", "reference"]
    assert table_row(part, "baseline")[1:3] == ["200,000", "1.33"]
    rsyslog = table_row(part, "rsyslog8")
    assert rsyslog[2] == "0.67"
    low, high = (float(x) for x in rsyslog[3].split("\u2013"))
    assert low < 0.67 < high


def test_statistics_note(stats_dir: Path) -> None:
    markdown = report.render_markdown(stats_dir)
    assert "bootstrap interval of the median" in markdown
    assert f"seed {stats.BOOTSTRAP_SEED}" in markdown


# -- HTML and the files of --out -------------------------------------------------------------------


class PageText(HTMLParser):
    """The visible text of a page, and every src and href."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.links: list[str] = []
        self.tags: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag in ("style", "script"):
            self._skip += 1
        self.links += [value or "" for name, value in attrs if name in ("src", "href")]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)


def parse_page(page: str) -> PageText:
    parser = PageText()
    parser.feed(page)
    parser.close()
    return parser


def test_html_names_every_profile(stats_dir: Path) -> None:
    results = load.load_results(stats_dir) + typed(OTHER_SCENARIO, NULLS)
    page = parse_page(html.document(sections.document(results, stats_dir, None)))
    text = " ".join(" ".join(page.text).split())
    profiles = {r.daemon.profile for r in results}
    assert profiles == {"baseline", "rsyslog8", "syslog-ng"}
    for profile in profiles:
        assert profile in page.text, profile  # a table cell of its own
    assert "Scenario seed2014" in text and "Scenarios with one run per profile" in text and "small" in text
    assert "erratic" in text and "\u2021" in text
    assert "script" not in page.tags
    assert all(not link.startswith(("http:", "https:", "//")) for link in page.links)


def test_main_out_writes_everything(
    stats_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    assert report.main(["--results", str(stats_dir), "--out", str(out)]) == 0
    assert capsys.readouterr().out == ""  # the Markdown went to the file
    markdown = (out / "report.md").read_text()
    assert "![Throughput per profile, scenario seed2014](plots/throughput-seed2014.png)" in markdown
    page = parse_page((out / "report.html").read_text())
    text = " ".join(page.text)
    for profile in ("baseline", "rsyslog8", "syslog-ng"):
        assert profile in text
    images = [link for link in page.links if link.endswith(".png")]
    assert {Path(link).name for link in images} == {
        "versions.png",
        "throughput-seed2014.png",
        "cpu-seed2014.png",
        "memory-seed2014.png",
    }
    for link in page.links:
        if not link.startswith("#"):
            assert (out / link).is_file(), link  # relative, and there
    for name in ("throughput", "cpu", "memory"):
        assert (out / "plots" / f"{name}-seed2014.svg").stat().st_size > 5000


def test_main_html_and_plots_flags(stats_dir: Path, tmp_path: Path) -> None:
    page_path, plots_dir = tmp_path / "pages" / "index.html", tmp_path / "figures"
    markdown_path = tmp_path / "report.md"
    argv = ["--results", str(stats_dir), "--output", str(markdown_path)]
    argv += ["--html", str(page_path), "--plots", str(plots_dir), "--scenario", "seed2014"]
    assert report.main(argv) == 0
    page = parse_page(page_path.read_text())
    images = [link for link in page.links if link.endswith(".png")]
    assert images and all(link.startswith("../figures/") for link in images)
    assert all((page_path.parent / link).is_file() for link in images)
    assert "](figures/throughput-seed2014.png)" in markdown_path.read_text()


def test_runs_with_another_load_shape_never_pool_with_the_seed() -> None:
    """Version 1 results: the variant comes from the shape, the seed's being the default."""
    one = make_result(
        "20250104T000000Z-rsyslog8",
        "rsyslog8",
        "2025-01-04T00:00:00Z",
        scenario__hosts=1,
        scenario__senders_per_host=1,
        scenario__messages_per_sender=2_000_000,
    )
    seed, other = typed(OLD, one)
    assert load.scenario_of(seed) == "seed2014"
    assert load.scenario_of(other) == "seed2014@1x1x2000000"
    grouped = load.group_results([seed, other], None)
    assert {label: [len(g.runs) for g in groups] for label, groups in grouped.items()} == {
        "seed2014": [1],
        "seed2014@1x1x2000000": [1],
    }


def test_groups_follow_the_recorded_variant_not_the_shape() -> None:
    """Version 2: a scenario's own shape is its default variant, whatever the shape; no seed shape assumed."""
    own = copy.deepcopy(OTHER_SCENARIO) | {"schema_version": 2}
    own["scenario"] = own["scenario"] | {"hosts": 5, "senders_per_host": 10, "variant": "default"}
    shaped = copy.deepcopy(own)
    shaped["run_id"], shaped["scenario"]["variant"] = "20250103T000001Z-rsyslog8", "2x2x2000"
    runs = typed(own, shaped)
    assert [load.scenario_of(run) for run in runs] == ["small", "small@2x2x2000"]
    assert list(load.group_results(runs, None)) == ["small", "small@2x2x2000"]


def test_render_run_gives_rate_and_udp_drop_rates() -> None:
    run = copy.deepcopy(STATS_RUNS[0])
    run["rate"] = {
        "target_per_sender": 2500,
        "target_total": 10000,
        "achieved_per_sender": {"min": 2479.3, "median": 2496.0, "max": 2498.4},
        "achieved_total": 9977.1,
    }
    run["udp"] = {
        "sent": 80004,
        "received": 78677,
        "lost": 1327,
        "drop_rate": 0.016587,
        "kernel": {
            "in_datagrams": 78685,
            "in_errors": 1327,
            "rcvbuf_errors": 1327,
            "no_ports": 0,
            "drop_rate": 0.016585,
        },
    }
    text = report.render_run(*typed(run))
    assert (
        "Rate: target 2,500 msg/s per sender (10,000 in all); achieved 2,496 per sender (median; 2,479-2,498), "
        "9,977 in all."
    ) in text
    assert (
        "UDP: 1,327 of 80,004 lost, drop rate 1.659%; kernel: 78,685 datagrams read, 1,327 dropped "
        "(1,327 for a full receive buffer)."
    ) in text
    run["udp"]["kernel"] = None
    assert "drop rate 1.659%; no kernel counters." in report.render_run(*typed(run))


def test_render_run_all_out_tcp_has_no_rate_or_udp_line() -> None:
    text = report.render_run(*typed(STATS_RUNS[0]))
    assert "Rate:" not in text and "UDP:" not in text


class TableCells(HTMLParser):
    """The text of every table cell of a page: tables of rows of cells, the header row first."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def markdown_tables(text: str) -> list[list[list[str]]]:
    """Every table of a Markdown text, its cells as a reader sees them: `code` and **bold** marks dropped."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] | None = None
    for line in text.splitlines():
        if not line.startswith("|"):
            current = None
            continue
        if line.startswith("|---"):
            continue
        if current is None:
            current = []
            tables.append(current)
        cells = re.split(r"(?<!\\)\|", line)[1:-1]
        current.append([c.strip().replace("\\|", "|").replace("`", "").replace("*", "") for c in cells])
    return tables


def test_markdown_and_html_of_each_section_carry_the_same_cells(stats_dir: Path) -> None:
    results = load.load_results(stats_dir) + typed(OTHER_SCENARIO, NULLS)
    doc = sections.document(results, stats_dir, None)
    counts = []
    for section in doc.sections:
        in_markdown = markdown_tables(markdown.blocks(section.blocks))
        page = TableCells()
        page.feed("\n".join(html.section(section)))
        assert in_markdown == page.tables, section.anchor
        counts.append([len(rows) for rows in in_markdown])
    # Rows, header included. The navigation bar: none. The version matrix: 3 profiles and the 6 daemons of
    # 2014. The machines: one. The overview: 2 scenarios. seed2014: statistics, ratio to the fastest and
    # latest run (folded) for 3 profiles. small, one run per profile: one row of the folded table. syslog-ng
    # PE 7's 8 tables, once. The 2014 figures: 6 daemons.
    assert counts == [[], [10], [2], [3], [4, 4, 4], [2], [5, 5, 5, 4, 4, 4, 11, 11], [7]]


# -- machines and the version matrix --------------------------------------------------------------


def on_other_machine(result: dict[str, Any], finished: str) -> dict[str, Any]:
    moved = copy.deepcopy(result)
    moved["run_id"] = "other-" + moved["run_id"]
    moved["finished_utc"] = finished
    moved["host"]["kernel"] = "6.1.0-other"  # the same CPU model: still another machine
    return moved


def test_two_machines_never_pool_and_are_numbered_oldest_first() -> None:
    later = [on_other_machine(run, "2026-01-01T00:00:00Z") for run in STATS_RUNS[:3]]
    grouped = load.group_results(typed(*STATS_RUNS, *later, OTHER_SCENARIO))
    assert list(grouped) == ["seed2014 on machine 1", "seed2014 on machine 2", "small"]
    assert [g.profile for g in grouped["seed2014 on machine 2"]] == ["baseline"]
    assert len(grouped["seed2014 on machine 2"][0].runs) == 3
    assert len(grouped["seed2014 on machine 1"][0].runs) == 3  # not 6: the runs did not pool


def test_the_version_matrix_comes_first_from_the_machine_with_most_profiles(tmp_path: Path) -> None:
    later = [on_other_machine(run, "2026-01-01T00:00:00Z") for run in STATS_RUNS[:3]]
    doc = sections.document(typed(*STATS_RUNS, *later), tmp_path, None)  # no capacity results
    text = markdown.document(doc)
    first = markdown_tables(text)[0]
    assert first[0] == burst.VERSIONS_HEADER
    ours = [row for row in first[1:] if row[2].startswith("machine")]
    # Machine 1 has three profiles, machine 2 only the baseline, although its runs are newer.
    assert [(row[0], row[1], row[2], row[3]) for row in ours] == [
        ("baseline (baseline)", "-", "machine 1", "3"),
        ("rsyslog8 (rsyslog8)", "default", "machine 1", "3"),
        ("syslog-ng (syslog-ng)", "default", "machine 1", "3"),
    ]
    assert [row[0] for row in first[1:] if row[2] == "2014, published"] == list(seed2014.RUNS)
    assert "seed2014 on machine 2" in text.split("## Machines")[0]  # named as the other seed section
    machines = next(table for table in markdown_tables(text) if table[0][0] == "machine")
    assert [row[0] for row in machines[1:]] == ["1", "2"] and "6.1.0-other" in machines[2][1]


def test_cpu_seconds_per_million_messages() -> None:
    run = typed(make_result("20250101T000000Z-rsyslog8", "rsyslog8", "2025-01-01T00:10:00Z"))[0]
    assert load.cpu_per_million(run) == pytest.approx((30.25 + 20.75) / 6000020 * 1e6)
    published = burst.published_versions_rows()
    rsyslog8 = next(row for row in published if row[0] == "Rsyslog8")
    runs = seed2014.RUNS["Rsyslog8"]
    per_million = sorted((r.user_s + r.system_s) / seed2014.MESSAGES_TOTAL * 1e6 for r in runs)
    assert rsyslog8[burst.VERSIONS_HEADER.index("median CPU s per M msgs")] == f"{per_million[1]:.2f}"


# -- the machine fingerprint ----------------------------------------------------------------------


FINGERPRINT = json.loads((Path(__file__).resolve().parent / "samples" / "fingerprint.json").read_text())


def fingerprint_scaled(factor: float, source: str = "container") -> dict[str, Any]:
    """The sample fingerprint with every figure times factor: another machine."""
    scaled = copy.deepcopy(FINGERPRINT) | {"source": source}
    for name in ("cpu", "file_churn", "loopback_tcp"):
        scaled[name]["per_cpu_s"] = round(scaled[name]["per_cpu_s"] * factor, 1)
    return scaled


def test_fingerprint_table_gives_median_and_range_per_profile(tmp_path: Path) -> None:
    runs = [
        make_result("20250101T000000Z-r1", "rsyslog8", "2025-01-01T00:10:00Z", host__fingerprint=FINGERPRINT),
        make_result(
            "20250101T010000Z-r2",
            "rsyslog8",
            "2025-01-01T01:10:00Z",
            host__fingerprint=fingerprint_scaled(0.5),
        ),
        make_result("20250101T020000Z-r3", "rsyslog8", "2025-01-01T02:10:00Z"),  # an older result
        make_result(
            "20250101T030000Z-s1",
            "syslog-ng",
            "2025-01-01T03:10:00Z",
            host__fingerprint=fingerprint_scaled(2, "watcher"),
        ),
    ]
    for run in runs:
        (tmp_path / f"{run['run_id']}.json").write_text(json.dumps(run))
    text = report.render_markdown(tmp_path)
    assert machines.FINGERPRINT_NOTE in text
    # Per CPU second, medians of two: (22.11 + 11.06) / 2 M loops, (629 + 315) / 2 k ops, (2,986 + 1,493) / 2 MB.
    rows = [line for line in text.splitlines() if line.startswith("| rsyslog8 | 2 of 3 |")]
    assert rows == [
        "| rsyslog8 | 2 of 3 | 16.6 (11.1\u201322.1) | 472 (315\u2013629) | 2,239 (1,493\u20132,986) | container |"
    ]
    rows = [line for line in text.splitlines() if line.startswith("| syslog-ng | 1 of 1 |")]
    assert rows == [
        "| syslog-ng | 1 of 1 | 44.2 (44.2\u201344.2) | 1,259 (1,259\u20131,259) | 5,971 (5,971\u20135,971) | watcher |"
    ]


def test_without_any_fingerprint_the_report_says_so(results_dir: Path) -> None:
    text = report.render_markdown(results_dir)
    assert text.count(machines.NO_FINGERPRINT_NOTE) == 1  # one scenario in the default report
    assert machines.FINGERPRINT_NOTE not in text


def test_render_run_gives_the_fingerprint_line() -> None:
    (run,) = typed(
        make_result("20250101T000000Z-r1", "rsyslog8", "2025-01-01T00:10:00Z", host__fingerprint=FINGERPRINT)
    )
    assert (
        "Fingerprint (container, 6.7 s): cpu 4.0M loops/s (22.1M loops per CPU s), file churn 351k ops/s "
        "(629k ops per CPU s), loopback TCP 1,831 MB/s (2,986 MB per CPU s)."
        in report.render_run(run).splitlines()
    )
    (older,) = typed(OLD)
    assert "Fingerprint: none (an older or n/a result)." in report.render_run(older).splitlines()


# -- the first screen ------------------------------------------------------------------------------


def test_the_answer_names_the_fastest_daemon_by_how_much_and_how_sure() -> None:
    groups = load.group_results(typed(*STATS_RUNS))["seed2014"]
    assert burst.answer_sentences(groups, "machine 1") == (
        "**On machine 1, at the defaults, `syslog-ng` drains the seed scenario's burst fastest:** 150,000 "
        "msgs/s (median of "
        "3 runs, 95% CI 100,000\u2013200,000), 1.50 times `rsyslog8`, 100,000 msgs/s (median of 3 runs, 95% "
        "CI 90,000\u2013110,000); 95% CI of the ratio 0.91\u20132.22, which includes 1: these runs do not "
        "tell the two apart."
    )
    alone = burst.answer_sentences(groups[:2], "machine 1")  # the baseline is a receiver, not a daemon
    assert alone is not None and alone.endswith("110,000); no other daemon passed here.")
    assert burst.answer_sentences(groups[:1], "machine 1") is None


def test_the_report_opens_with_the_answer_the_machine_and_the_chart(stats_dir: Path) -> None:
    figures = {sections.VERSIONS_ANCHOR: [("The version matrix", "plots/versions.png")]}
    doc = sections.document(load.load_results(stats_dir), stats_dir, figures=figures)
    nav, first = doc.sections[:2]  # without capacity results, the burst leads, after the navigation bar
    assert (
        isinstance(nav.blocks[0], Contents)
        and ("Burst and version matrix", "versions") in nav.blocks[0].entries
    )
    assert first.anchor == sections.VERSIONS_ANCHOR
    heading, definition, answer, machine, chart = first.blocks[:5]
    assert isinstance(heading, Heading) and heading.text == "Burst: how fast a 6,000,000-message burst drains"
    assert isinstance(definition, Note) and "the rate at which that burst drains" in definition.text
    assert (
        isinstance(answer, Paragraph)
        and "`syslog-ng` drains the seed scenario's burst fastest" in answer.text
    )
    # No tuned run: said in one short sentence after the answer, which keeps the chart high on the screen.
    assert answer.text.endswith(" *Tuned:* no run of the seed scenario on [machine 1](#machines) yet.")
    assert isinstance(machine, Paragraph) and machine.text.startswith(
        "**Machine 1:** Test CPU 9000, 16 cores"
    )
    assert chart == Figure("The version matrix", "plots/versions.png")


def test_the_overview_lists_what_ran_and_says_what_did_not() -> None:
    seed = typed(*STATS_RUNS)
    other = typed(OTHER_SCENARIO)  # rsyslog8 alone in `small`
    failed = make_result("20250104T000000Z-syslog-ng", "syslog-ng", "2025-01-04T00:00:00Z", verdict="loss")
    failed["scenario"]["id"] = "relay"
    header, rows, notes = cells.overview(load.group_results([*seed, *other, *typed(failed)]))
    # baseline ran once: named in the last column, not given a column of blanks.
    assert header == ["scenario", "rsyslog8 msgs/s (n)", "syslog-ng msgs/s (n)", "other profiles"]
    assert rows == [
        ["`seed2014`", "100,000 (3)", "150,000 (3)", "baseline 200,000 (3)"],
        ["`relay`", "", "loss x1", ""],
        ["`small`", "141,177 (1)", "", ""],
    ]
    assert notes == [
        "A blank cell: that profile did not run that scenario (2 of 6).",
        "No run passed, so no plots: `relay`.",
    ]


# -- bad input: one line, no traceback -------------------------------------------------------------


def test_a_bad_result_file_is_skipped_with_one_line_naming_the_field(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fast = make_result("20250105T000000Z-a", "rsyslog8", "2025-01-05T00:00:00Z")
    fast["elapsed_s"] = "fast"
    missing = make_result("20250105T000100Z-b", "rsyslog8", "2025-01-05T00:01:00Z")
    missing["messages"]["received"] = None
    good = make_result("20250105T000200Z-c", "rsyslog8", "2025-01-05T00:02:00Z")
    for name, document in (("fast.json", fast), ("missing.json", missing), ("good.json", good)):
        (tmp_path / name).write_text(json.dumps(document))
    with caplog.at_level(logging.WARNING, logger="syslogbench.report.load"):
        assert report.main(["--results", str(tmp_path), "--output", str(tmp_path / "out" / "r.md")]) == 0
    assert [r.getMessage() for r in caplog.records] == [
        f'report: skipping {tmp_path / "fast.json"}: elapsed_s is "fast", not a number or null',
        f"report: skipping {tmp_path / 'missing.json'}: messages.received is null, not a whole number",
    ]
    assert "`rsyslog8`" in (tmp_path / "out" / "r.md").read_text()  # the good one is reported


def bad_input(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line a refused command prints; it must exit with the contract's bad-input code."""
    assert report.main(argv) == contract.EXIT_CODES["bad-input"]
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    return captured.err.strip()


def test_a_missing_results_folder_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "does-not-exist"
    assert bad_input(["--results", str(missing)], capsys) == (
        f"report: error: --results {missing} does not exist: give the folder of the result files"
    )


def test_out_takes_a_folder(stats_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    existing = tmp_path / "report.md"
    existing.write_text("")
    line = bad_input(["--results", str(stats_dir), "--out", str(existing)], capsys)
    assert line == (
        f"report: error: --out {existing} is a file; give a folder (for one file: --output FILE or --html FILE)"
    )
    new = tmp_path / "r" / "report.md"
    line = bad_input(["--results", str(stats_dir), "--out", str(new)], capsys)
    assert line == (
        f"report: error: --out {new} names a file; --out takes a folder (for the Markdown alone: --output FILE)"
    )
    under = existing / "site"
    line = bad_input(["--results", str(stats_dir), "--out", str(under)], capsys)
    assert line.startswith(f"report: error: --out {under} sits under {existing}, a file;")
    line = bad_input(["--results", str(stats_dir), "--output", str(tmp_path)], capsys)
    assert line == f"report: error: --output {tmp_path} is a folder; give a file name (--out takes a folder)"
    assert not new.parent.exists()  # refused before anything was written


def test_an_output_where_nothing_can_be_written_is_refused_before_the_report_is_built(
    stats_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "load_results", lambda *a: pytest.fail("the report was built"))
    line = bad_input(["--results", str(stats_dir), "--output", "/proc/x.md"], capsys)
    assert line.startswith("report: error: --output /proc/x.md: nothing can be written in /proc"), line


def test_an_empty_folder_claims_no_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "results"
    empty.mkdir()
    assert report.main(["--results", str(empty), "--out", str(tmp_path / "site")]) == 0
    err = capsys.readouterr().err
    assert "report: no plots: no run passed" in err and "plots (PNG" not in err
    assert not (tmp_path / "site" / "plots").exists()
    assert "No runs in" in (tmp_path / "site" / "report.md").read_text()


def test_the_help_says_what_the_report_writes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        report.parse_args(["--help"])
    assert "Markdown, an HTML page and PNG/SVG plots" in " ".join(capsys.readouterr().out.split())


def test_runs_of_two_configs_never_pool() -> None:
    """run --config: each config (by its hash) is a group of its own, in a section of the users' configs
    (a result from before the tuning axis that ran one reads as tuning "user"), apart from the profile's own
    config."""
    own = make_result("20250101T000000Z-rsyslog8-a", "rsyslog8", "2025-01-01T00:10:00Z")
    mine, theirs = (
        make_result(f"20250101T000000Z-rsyslog8-{n}", "rsyslog8", "2025-01-01T00:20:00Z",
                    config={"sha256": sha * 64, "main": "rsyslog.conf", "files": []})
        for n, sha in (("b", "1"), ("c", "2"))
    )  # fmt: skip
    grouped = load.group_results(typed(own, mine, theirs))
    assert {name: [g.profile for g in groups] for name, groups in grouped.items()} == {
        "seed2014": ["rsyslog8"],
        "seed2014 (user)": ["rsyslog8 (config 111111111111)", "rsyslog8 (config 222222222222)"],
    }
    assert [len(g.runs) for groups in grouped.values() for g in groups] == [1, 1, 1]


# -- the page's HTML: a phone, aligned cells, ids, folded blocks ---------------------------------


def test_the_page_has_a_viewport_and_aligns_figures_right_and_text_left() -> None:
    from syslogbench.report.blocks import Details, Document, Section, Table

    table = Table(
        ["profile", "msgs/s", "flags"], [["rsyslog-8.2504", "58,792", "other settings"]], css_class="stack"
    )
    page = html.document(Document("t", [Section([Details("Trials", [table])])]))
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page
    assert '<td data-label="profile">rsyslog-8.2504</td>' in page
    assert '<td class="num" data-label="msgs/s">58,792</td>' in page
    assert "<details><summary>Trials</summary>" in page and "</details>" in page
    assert '<a href="#machines">machine 5</a>' in html.inline("[machine 5](#machines)")


def test_scenario_ids_have_no_spaces() -> None:
    assert sections.scenario_anchor("seed2014 on machine 1") == "scenario-seed2014-on-machine-1"
    assert sections.scenario_anchor("udp@5x4x50000") == "scenario-udp@5x4x50000"
