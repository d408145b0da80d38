"""The report's plots: written from fixture results, and the time series derived from samples."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from syslogbench.model.result import Result, Samples
from syslogbench.report import load, plots
from tests.unit.test_report import MIB, make_result

COLUMNS = ["t_s", "cpu_user_s", "cpu_system_s", "memory_bytes", "received"]
TOTAL = 6_000_020
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def samples(elapsed: float, rate: float) -> dict[str, Any]:
    """About one row a second: CPU and lines growing steadily, memory rising."""
    rows = []
    for step in range(int(elapsed) + 2):
        t = float(step)
        share = min(t / elapsed, 1.0)
        rows.append(
            [t, 2.0 * share * elapsed, 1.0 * share * elapsed, (50 + 100 * share) * MIB, min(rate * t, TOTAL)]
        )
    return {"columns": COLUMNS, "rows": rows}


def run(profile: str, index: int, msgs_per_s: float, **changes: Any) -> Result:
    figures = {"elapsed_s": round(TOTAL / msgs_per_s, 3), "throughput__msgs_per_s": msgs_per_s}
    return Result.from_dict(
        make_result(
            f"20250301T0000{index:02d}Z-{profile}",
            profile,
            f"2025-03-01T00:00:{index:02d}Z",
            **{**figures, **changes},
        )
    )


RUNS = [
    run("baseline", 1, 600_000),
    run("baseline", 2, 610_000),
    run("rsyslog-8.2504", 3, 200_000),
    run("rsyslog-8.2504", 4, 260_000),
    run("rsyslog-8.2504", 5, 210_000, samples=samples(TOTAL / 210_000, 210_000)),
    run("syslog-ng-4.8", 6, 400_000, sender_bound={"value": True, "reason": "senders saturated"}),
    run("syslog-ng-4.8", 7, 420_000, samples=samples(TOTAL / 420_000, 420_000)),
    run("syslog-ng-4.8", 8, 9, verdict="loss"),
    # A profile with no passing run and no figures: plotted as such, not a crash.
    run(
        "syslog-ng-3.38",
        9,
        1,
        verdict="timeout",
        throughput__msgs_per_s=None,
        elapsed_s=None,
        cpu__user_s=None,
        cpu__system_s=None,
        memory__peak_bytes=None,
        memory__max_rss_bytes=None,
    ),
]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[plots.Plot]]]:
    out = tmp_path_factory.mktemp("plots")
    return out, plots.write_plots(RUNS, out)


def test_every_plot_is_written(written: tuple[Path, dict[str, list[plots.Plot]]]) -> None:
    out, figures = written
    assert list(figures) == ["seed2014"]
    names = [png.name for _, png in figures["seed2014"]]
    assert names == [
        "throughput-seed2014.png",
        "cpu-seed2014.png",
        "memory-seed2014.png",
        "timeseries-seed2014.png",
    ]
    for name in names:
        png, svg = out / name, (out / name).with_suffix(".svg")
        assert png.read_bytes()[:8] == PNG_MAGIC
        assert png.stat().st_size > 20_000, name  # a real figure, not an empty canvas
        assert svg.read_text().lstrip().startswith("<?xml") and "<svg" in svg.read_text()
        assert svg.stat().st_size > 20_000, name


def test_captions_name_the_run(written: tuple[Path, dict[str, list[plots.Plot]]]) -> None:
    _, figures = written
    captions = [caption for caption, _ in figures["seed2014"]]
    assert captions[0] == "Throughput per profile, scenario seed2014"
    assert captions[-1] == "One run over time: 20250301T000007Z-syslog-ng-4.8"  # the latest with samples


def test_svg_is_reproducible(tmp_path: Path, written: tuple[Path, dict[str, list[plots.Plot]]]) -> None:
    out, _ = written
    plots.write_plots(RUNS, tmp_path)
    assert (tmp_path / "throughput-seed2014.svg").read_text() == (out / "throughput-seed2014.svg").read_text()


def test_no_samples_no_timeseries(tmp_path: Path) -> None:
    figures = plots.write_plots(RUNS[:4], tmp_path)
    assert [png.name for _, png in figures["seed2014"]] == [
        "throughput-seed2014.png",
        "cpu-seed2014.png",
        "memory-seed2014.png",
    ]
    assert not (tmp_path / "timeseries-seed2014.png").exists()


def test_chosen_run_and_scenario(tmp_path: Path) -> None:
    other = run("baseline", 10, 50_000, scenario__id="small")
    figures = plots.write_plots([*RUNS, other], tmp_path, run_id="20250301T000005Z-rsyslog-8.2504")
    assert figures["seed2014"][-1][0] == "One run over time: 20250301T000005Z-rsyslog-8.2504"
    assert [png.name for _, png in figures["small"]] == [
        "throughput-small.png",
        "cpu-small.png",
        "memory-small.png",
    ]
    only = plots.write_plots([*RUNS, other], tmp_path / "only", scenario_id="small")
    assert list(only) == ["small"]


def test_choose_run() -> None:
    chosen = plots.choose_run(RUNS)
    assert chosen is not None and chosen.run_id == "20250301T000007Z-syslog-ng-4.8"
    chosen = plots.choose_run(RUNS, "20250301T000005Z-rsyslog-8.2504")
    assert chosen is not None and chosen.run_id.endswith("rsyslog-8.2504")
    assert plots.choose_run(RUNS, "20250301T000001Z-baseline") is None  # no samples
    assert plots.choose_run(RUNS[:2]) is None


def test_sample_series() -> None:
    rows: list[list[float | None]] = [
        [0.0, 0.0, 0.0, 10 * MIB, 0],
        [1.0, 0.5, 0.25, 20 * MIB, 100],
        [2.0, 1.5, 0.75, None, 300],
        [2.5, None, None, 40 * MIB, 400],
    ]
    result = replace(RUNS[0], samples=Samples(columns=COLUMNS, rows=rows))
    s = plots.sample_series(result)
    assert s["t"] == [1.0, 2.0, 2.5]
    assert s["rate"] == [100.0, 200.0, 200.0]
    assert s["t_cpu"] == [1.0, 2.0]
    assert s["user"] == [0.5, 1.0]
    assert s["system"] == [0.25, 0.5]
    assert s["t_mem"] == [0.0, 1.0, 2.5]
    assert s["mem"] == [10.0, 20.0, 40.0]
    assert plots.steps([1.0, 2.0], [100.0, 200.0], 0.0) == ([0.0, 1.0, 2.0], [100.0, 100.0, 200.0])


def test_family_and_labels() -> None:
    groups = load.group_results(RUNS)["seed2014"]
    assert [plots.family(g) for g in groups] == ["baseline", "rsyslog", "syslog-ng", "syslog-ng"]
    assert plots.tick_labels(groups) == [
        "baseline\nn=2",
        "rsyslog-8.2504\nn=3",
        "syslog-ng-3.38\nn=0\n+1 not pass",
        "syslog-ng-4.8\nn=2\n+1 not pass",
    ]
    assert plots.offsets(3) == [-0.15, 0.0, 0.15]
    assert plots.machine_caption(RUNS) == "Machine: Test CPU 9000, 16 cores, kernel 6.1.0-test"


def test_the_seed_scenario_on_one_of_two_machines_keeps_its_2014_panel() -> None:
    groups = load.group_results(RUNS)["seed2014"]
    moved = [replace(group, scenario="seed2014 on machine 2") for group in groups]
    figure = plots.cpu_figure("seed2014 on machine 2", moved, "caption")
    assert len(figure.axes) == 2  # this project's runs, and the 2014 medians beside them
    small = [
        replace(
            groups[0], runs=[replace(r, scenario=replace(r.scenario, id="small")) for r in groups[0].runs]
        )
    ]
    assert len(plots.cpu_figure("small", small, "caption").axes) == 1
