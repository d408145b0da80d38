"""The report's plots: written from fixture results, and the time series derived from samples."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from syslogbench.model.result import Result, Samples
from syslogbench.report import drawing, load, plots, profile_plots, timeseries_plot, versions_plot
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
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, plots.Written]:
    out = tmp_path_factory.mktemp("plots")
    return out, plots.write_plots(RUNS, out)


def test_every_plot_is_written(written: tuple[Path, plots.Written]) -> None:
    out, figures = written
    assert list(figures.scenarios) == ["seed2014"]
    names = [png.name for _, png in figures.matrix + figures.scenarios["seed2014"]]
    assert names == [
        "versions.png",
        "throughput-seed2014.png",
        "cpu-seed2014.png",
        "memory-seed2014.png",
        "timeseries-seed2014.png",
    ]
    for name in names:
        png, svg = out / name, (out / name).with_suffix(".svg")
        assert png.read_bytes()[:8] == PNG_MAGIC
        assert svg.read_text().lstrip().startswith("<?xml") and "<svg" in svg.read_text()


def test_captions_name_the_run(written: tuple[Path, plots.Written]) -> None:
    _, figures = written
    captions = [caption for caption, _ in figures.scenarios["seed2014"]]
    assert figures.matrix[0][0] == "The version matrix, scenario seed2014"
    assert captions[0] == "Throughput per profile, scenario seed2014"
    assert captions[-1] == "One run over time: 20250301T000007Z-syslog-ng-4.8"  # the latest with samples


def test_svg_is_reproducible(tmp_path: Path, written: tuple[Path, plots.Written]) -> None:
    out, _ = written
    plots.write_plots(RUNS, tmp_path)
    assert (tmp_path / "throughput-seed2014.svg").read_text() == (out / "throughput-seed2014.svg").read_text()


def test_many_scenarios_are_drawn_in_processes_in_their_order_with_the_same_bytes(tmp_path: Path) -> None:
    names = [f"s{index}" for index in range(2 * plots.JOBS_PER_WORKER)]  # enough for two processes
    many = [replace(r, scenario=replace(r.scenario, id=name)) for name in names for r in RUNS[:4]]
    figures = plots.write_plots(many, tmp_path / "many")
    assert list(figures.scenarios) == names
    alone = plots.write_plots([r for r in many if r.scenario.id == names[-1]], tmp_path / "alone")
    for _, png in alone.scenarios[names[-1]]:
        assert png.read_bytes() == (tmp_path / "many" / png.name).read_bytes()


def test_no_samples_no_timeseries(tmp_path: Path) -> None:
    figures = plots.write_plots(RUNS[:4], tmp_path).scenarios
    assert [png.name for _, png in figures["seed2014"]] == [
        "throughput-seed2014.png",
        "cpu-seed2014.png",
        "memory-seed2014.png",
    ]
    assert not (tmp_path / "timeseries-seed2014.png").exists()


def test_chosen_run_and_scenario(tmp_path: Path) -> None:
    other = run("baseline", 10, 50_000, scenario__id="small")
    figures = plots.write_plots([*RUNS, other], tmp_path, run_id="20250301T000005Z-rsyslog-8.2504").scenarios
    assert figures["seed2014"][-1][0] == "One run over time: 20250301T000005Z-rsyslog-8.2504"
    assert [png.name for _, png in figures["small"]] == [
        "throughput-small.png",
        "cpu-small.png",
        "memory-small.png",
    ]
    only = plots.write_plots([*RUNS, other], tmp_path / "only", scenario_id="small")
    assert list(only.scenarios) == ["small"] and only.matrix == []


def test_choose_run() -> None:
    chosen = timeseries_plot.choose_run(RUNS)
    assert chosen is not None and chosen.run_id == "20250301T000007Z-syslog-ng-4.8"
    chosen = timeseries_plot.choose_run(RUNS, "20250301T000005Z-rsyslog-8.2504")
    assert chosen is not None and chosen.run_id.endswith("rsyslog-8.2504")
    assert timeseries_plot.choose_run(RUNS, "20250301T000001Z-baseline") is None  # no samples
    assert timeseries_plot.choose_run(RUNS[:2]) is None


def test_sample_series() -> None:
    rows: list[list[float | None]] = [
        [0.0, 0.0, 0.0, 10 * MIB, 0],
        [1.0, 0.5, 0.25, 20 * MIB, 100],
        [2.0, 1.5, 0.75, None, 300],
        [2.5, None, None, 40 * MIB, 400],
    ]
    result = replace(RUNS[0], samples=Samples(columns=COLUMNS, rows=rows))
    s = timeseries_plot.sample_series(result)
    assert s["t"] == [1.0, 2.0, 2.5]
    assert s["rate"] == [100.0, 200.0, 200.0]
    assert s["t_cpu"] == [1.0, 2.0]
    assert s["user"] == [0.5, 1.0]
    assert s["system"] == [0.25, 0.5]
    assert s["t_mem"] == [0.0, 1.0, 2.5]
    assert s["mem"] == [10.0, 20.0, 40.0]
    assert timeseries_plot.steps([1.0, 2.0], [100.0, 200.0], 0.0) == ([0.0, 1.0, 2.0], [100.0, 100.0, 200.0])


def test_family_and_labels() -> None:
    groups = load.group_results(RUNS)["seed2014"]
    assert [drawing.family(g) for g in groups] == ["baseline", "rsyslog", "syslog-ng", "syslog-ng"]
    assert drawing.tick_labels(groups) == [
        "baseline\nn=2",
        "rsyslog-\n8.2504\nn=3",
        "syslog-ng-\n3.38\nn=0\n+1 not pass",
        "syslog-ng-\n4.8\nn=2\n+1 not pass",
    ]
    assert drawing.offsets(3) == [-0.15, 0.0, 0.15]
    assert drawing.machine_caption(RUNS) == "Machine: Test CPU 9000, 16 cores, kernel 6.1.0-test"


def test_the_family_is_the_daemon_the_result_records() -> None:
    """A family the code has never heard of gets a colour of its own, from the result's daemon.name."""
    newcomer = [run("fluent-9.1", i, 300_000 + i, daemon__name="fluent") for i in (20, 21)]
    groups = load.group_results([*RUNS, *newcomer])["seed2014"]
    assert [drawing.family(g) for g in groups] == ["baseline", "fluent", "rsyslog", "syslog-ng", "syslog-ng"]
    colors = drawing.family_colors(drawing.family(g) for g in groups)
    assert colors["baseline"] == drawing.BASELINE_COLOR
    assert len({colors[f] for f in ("baseline", "fluent", "rsyslog", "syslog-ng")}) == 4
    renamed = [
        replace(r, daemon=replace(r.daemon, name="syslog-ng"))
        for r in RUNS
        if r.daemon.profile == "rsyslog-8.2504"
    ]
    (group,) = [g for g in load.group_results(renamed)["seed2014"]]
    assert drawing.family(group) == "syslog-ng"  # not guessed from the profile's name


def test_the_seed_scenario_on_one_of_two_machines_keeps_its_2014_panel() -> None:
    groups = load.group_results(RUNS)["seed2014"]
    moved = [replace(group, scenario="seed2014 on machine 2") for group in groups]
    figure = profile_plots.cpu_figure("seed2014 on machine 2", moved, "caption")
    assert len(figure.axes) == 2  # this project's runs, and the 2014 medians beside them
    small = [
        replace(
            groups[0], runs=[replace(r, scenario=replace(r.scenario, id="small")) for r in groups[0].runs]
        )
    ]
    assert len(profile_plots.cpu_figure("small", small, "caption").axes) == 1


# -- what the figures draw, read back from matplotlib's objects ------------------------------------


def seed_groups() -> list[load.Group]:
    return load.group_results(RUNS)["seed2014"]


def bars(ax: Axes) -> dict[str, float]:
    """Each tagged bar's value by what it shows: the height, or the width of a horizontal bar."""
    found = {}
    for patch in ax.patches:
        gid = patch.get_gid() or ""
        if gid.startswith(drawing.BAR_GID) and isinstance(patch, Rectangle):
            value = patch.get_width() if patch.get_x() == 0 and patch.get_height() < 1 else patch.get_height()
            found[gid.removeprefix(drawing.BAR_GID)] = round(value, 6)
    return found


def whiskers(ax: Axes) -> dict[str, tuple[float, float]]:
    """Each interval's (low, high), by the profile or row it belongs to."""
    found = {}
    for container in ax.containers:
        if isinstance(container, ErrorbarContainer):
            (segment,) = container.lines[2][0].get_segments()
            (x0, y0), (x1, y1) = segment
            low, high = (y0, y1) if x0 == x1 else (x0, x1)
            found[container.get_label().removeprefix("_ci:")] = (round(low, 6), round(high, 6))
    return found


def dots(ax: Axes) -> list[float]:
    """The y of every run's dot, in order."""
    return sorted(
        float(y) for c in ax.collections if isinstance(c, PathCollection) for _, y in c.get_offsets()
    )


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def tick_texts(ax: Axes, axis: str = "x") -> list[str]:
    labels = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    return [label.get_text() for label in labels]


def test_throughput_draws_medians_intervals_runs_and_the_baseline_apart() -> None:
    fig = profile_plots.throughput_figure("seed2014", seed_groups(), "caption")
    ours, own = fig.axes[:2]
    # The bars are the medians of the pass runs: (200k, 210k, 260k), (400k, 420k; the loss run left out).
    assert bars(ours) == {"rsyslog-8.2504": 210_000, "syslog-ng-4.8": 410_000}
    assert bars(own) == {"baseline": 605_000}  # its own panel, on its own scale
    assert own.get_ylim()[1] > 605_000 > ours.get_ylim()[1]
    # With three runs the bootstrap interval of the median is their range; with two, too.
    assert whiskers(ours) == {"rsyslog-8.2504": (200_000, 260_000), "syslog-ng-4.8": (400_000, 420_000)}
    assert dots(ours) == [200_000, 210_000, 260_000, 400_000, 420_000]
    assert tick_texts(ours) == [
        "rsyslog-\n8.2504\nn=3",
        "syslog-ng-\n3.38\nn=0\n+1 not pass",
        "syslog-ng-\n4.8\nn=2\n+1 not pass",
    ]
    shown = texts(fig)
    assert "210,000\n35% of baseline\nerratic: CoV 14%" in shown  # 210,000 / 605,000; sd 32,146 / mean
    assert "410,000\n68% of baseline" in shown
    assert "no pass run" in shown  # syslog-ng-3.38 timed out: a word, not a bar
    assert fig.get_suptitle() == "Throughput per profile, scenario seed2014 (higher is better)"


def test_memory_draws_rss_and_cgroup_peak_per_profile() -> None:
    fig = profile_plots.memory_figure("seed2014", seed_groups(), "caption")
    (ax,) = fig.axes
    expected = {}
    for profile in ("baseline", "rsyslog-8.2504", "syslog-ng-4.8"):
        expected[f"max_rss_bytes:{profile}"] = 12.5  # MiB, make_result's figures
        expected[f"peak_bytes:{profile}"] = 300.0
    assert bars(ax) == expected
    assert "no pass run" in texts(fig)
    assert [t for t in texts(fig) if t in ("12", "300")] == ["12", "300"] * 3


def test_cpu_stacks_user_and_system_and_cuts_the_2014_nxlog_bar() -> None:
    fig = profile_plots.cpu_figure("seed2014", seed_groups(), "caption")
    ours, theirs = fig.axes[:2]
    assert bars(ours)["user:rsyslog-8.2504"] == 30.25 and bars(ours)["system:rsyslog-8.2504"] == 20.75
    published = bars(theirs)
    assert published["user:NXLog"] == 832.65 and published["system:NXLog"] == 188.51
    # NXLog's 1,021 s would flatten the others: the axis stops short of it, and the bar says so.
    assert theirs.get_ylim()[1] < 1_021
    assert theirs.get_ylim()[1] > published["user:Syslog-ng 3.3"] + published["system:Syslog-ng 3.3"]
    assert "1,021 s\n(833 user,\n189 system):\nbar cut" in texts(fig)


def test_versions_sets_2014_beside_ours_in_the_same_units() -> None:
    fig = versions_plot.versions_figure("seed2014", seed_groups(), "caption")
    rate, cpu, old_rate, old_cpu, base_rate, base_cpu = fig.axes[:6]
    drawn = bars(rate)
    assert drawn == {"rsyslog-8.2504 (n=3)": 210_000, "syslog-ng-4.8 (n=2)": 410_000}
    # 2014 (8 cores, other hardware) on axes of its own: 6,000,020 messages over the median published time.
    published = bars(old_rate)
    assert published["2014: NXLog (n=3)"] == round(6_000_020 / 367.30, 6)
    assert published["2014: Syslog-ng 3.5 (n=3)"] == round(6_000_020 / 20.56, 6)
    assert bars(base_rate) == {"baseline (n=2)": 605_000}
    assert whiskers(rate)["rsyslog-8.2504 (n=3)"] == (200_000, 260_000)
    # CPU seconds per million messages: ours 51 s over 6,000,020 messages; NXLog's 1,021 s likewise.
    assert bars(cpu)["rsyslog-8.2504 (n=3)"] == round(51.0 / 6_000_020 * 1e6, 6)
    assert abs(bars(old_cpu)["2014: NXLog (n=3)"] - 170.19) < 0.01
    # Bars on linear axes: a log axis makes their lengths lie.
    assert {ax.get_xscale() for ax in (cpu, old_cpu, base_cpu)} == {"linear"}
    assert "2014" in old_rate.get_title(loc="left") and "8 cores" in old_rate.get_title(loc="left")
    assert tick_texts(rate, "y")[:2] == ["rsyslog-8.2504 (n=3)", "syslog-ng-4.8 (n=2)"]


def test_timeseries_draws_the_rate_between_samples() -> None:
    result = RUNS[6]  # syslog-ng-4.8 at 420,000 msgs/s, one sample a second
    fig = timeseries_plot.timeseries_figure(result, "caption")
    rate_ax, cpu_ax, mem_ax = fig.axes[:3]
    step = rate_ax.get_lines()[0]
    rates = list(step.get_ydata())
    assert rates[1:14] == [420_000.0] * 13  # every full second of the run
    done = [line for line in mem_ax.get_lines() if line.get_label().startswith("done")]
    assert [line.get_xdata()[0] for line in done] == [result.elapsed_s]
    assert mem_ax.get_lines()[0].get_ydata()[0] == 50.0  # MiB at t=0, from the samples


# -- legible: nothing cut, nothing small -----------------------------------------------------------

SHOWN_PX = 1340  # the page's column at a 1,400 px window (tests/browser checks no plot is shrunk)
MIN_TEXT_PX = 11


def every_figure() -> list[tuple[str, Figure]]:
    groups = seed_groups()
    two = load.group_results(
        [replace(r, scenario=replace(r.scenario, id="relay-pause-disk-assisted")) for r in RUNS[2:8]]
    )
    ((name, pair),) = two.items()
    name += "@5x4x50000"
    return [
        ("versions", versions_plot.versions_figure("seed2014", groups, drawing.machine_caption(RUNS))),
        ("throughput", profile_plots.throughput_figure("seed2014", groups, drawing.machine_caption(RUNS))),
        ("cpu", profile_plots.cpu_figure("seed2014", groups, drawing.machine_caption(RUNS))),
        ("memory", profile_plots.memory_figure("seed2014", groups, drawing.machine_caption(RUNS))),
        ("timeseries", timeseries_plot.timeseries_figure(RUNS[6], drawing.machine_caption(RUNS))),
        ("two-profile memory", profile_plots.memory_figure(name, pair, drawing.machine_caption(RUNS))),
        (
            "two-profile throughput",
            profile_plots.throughput_figure(name, pair, drawing.machine_caption(RUNS)),
        ),
        ("two-profile cpu", profile_plots.cpu_figure(name, pair, drawing.machine_caption(RUNS))),
    ]


def drawn_texts(fig: Figure, monkeypatch: pytest.MonkeyPatch) -> list[Text]:
    """The texts matplotlib really draws: a tick label beyond the axis's limits is an object, not ink."""
    drawn: list[Text] = []
    draw = Text.draw

    def record(self: Text, renderer: Any) -> None:
        if self.get_visible() and self.get_text().strip():
            drawn.append(self)
        draw(self, renderer)

    monkeypatch.setattr(Text, "draw", record)
    with rc_context(drawing.RC):
        FigureCanvasAgg(fig).draw()
    monkeypatch.undo()
    return drawn


@pytest.mark.parametrize("name, fig", every_figure(), ids=lambda item: item if isinstance(item, str) else "")
def test_no_text_is_cut_or_small(name: str, fig: Figure, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = drawn_texts(fig, monkeypatch)
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    assert fig.get_figwidth() <= drawing.MAX_WIDTH_IN, name
    width, height = fig.get_figwidth() * fig.dpi, fig.get_figheight() * fig.dpi
    scale = min(1.0, SHOWN_PX / (fig.get_figwidth() * drawing.DPI))
    cut, small = [], []
    for text in texts:
        box = text.get_window_extent(renderer)
        if box.x0 < -1 or box.x1 > width + 1 or box.y0 < -1 or box.y1 > height + 1:
            cut.append(text.get_text())
        px = text.get_fontsize() * drawing.DPI / 72 * scale
        if px < MIN_TEXT_PX:
            small.append((text.get_text(), round(px, 1)))
    assert len(texts) > 10, name
    assert not cut, f"{name}: text beyond the figure's edge: {cut}"
    assert not small, f"{name}: text under {MIN_TEXT_PX} px as shown: {small}"


def test_a_scenario_where_nothing_passed_has_no_plot(tmp_path: Path) -> None:
    failed = [
        run("rsyslog-8.2504", 30, 1, verdict="loss", scenario__id="relay-slow"),
        run("syslog-ng-4.8", 31, 1, verdict="n/a", scenario__id="relay-slow"),
    ]
    written = plots.write_plots([*RUNS, *failed], tmp_path)
    assert list(written.scenarios) == ["seed2014"]
    assert not list(tmp_path.glob("*relay-slow*"))


# -- the capacity figures, read back --------------------------------------------------------------

CAPACITY_RESULTS = Path(__file__).resolve().parents[2] / "results" / "capacity"


def recorded_capacity_figures() -> list[tuple[str, Figure]]:
    from syslogbench.report import capacity, capacity_plots

    searches, _ = capacity.load(CAPACITY_RESULTS.parent)
    if not searches:
        pytest.skip("no capacity results in results/capacity/")
    with rc_context(drawing.RC):
        figures = [
            (key, capacity_plots.figure(key, chosen))
            for key, chosen in capacity_plots.groups(searches).items()
        ]
        for _, fig in figures:
            FigureCanvasAgg(fig).draw()  # lays the figure out: every extent below is final
    return figures


def overlapping(boxes: list[tuple[str, Any]]) -> list[tuple[str, str]]:
    return [
        (a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1 :] if box_a.overlaps(box_b)
    ]


def test_capacity_tick_labels_never_meet() -> None:
    for key, fig in recorded_capacity_figures():
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                labels = [t for t in axis.get_ticklabels(which="both") if t.get_visible() and t.get_text()]
                boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in labels]
                boxes = [(text, box) for text, box in boxes if box.width > 0]
                assert not overlapping(boxes), f"{key}: tick labels that meet: {overlapping(boxes)}"


def test_capacity_legends_lie_outside_the_axes() -> None:
    for key, fig in recorded_capacity_figures():
        renderer = fig.canvas.get_renderer()
        legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
        assert legends, f"{key}: no legend"
        for legend in legends:
            box = legend.get_window_extent(renderer)
            inside = [
                ax.get_title(loc="left") for ax in fig.axes if box.overlaps(ax.get_window_extent(renderer))
            ]
            assert not inside, f"{key}: the legend covers the axes {inside}"
        labels = [text.get_text() for legend in legends for text in legend.get_texts()]
        assert "latency p99" in labels and "latency p50" in labels, f"{key}: no legend for the latency lines"


def test_capacity_repeated_searches_are_told_apart() -> None:
    from syslogbench.report import capacity_plots

    repeated = 0
    for key, fig in recorded_capacity_figures():
        lines = [
            line
            for line in fig.axes[0].get_lines()
            if (line.get_gid() or "").startswith(capacity_plots.LINE_GID)
        ]
        looks = [(line.get_color(), line.get_marker()) for line in lines]
        assert len(set(looks)) == len(looks), f"{key}: two searches drawn alike: {looks}"
        names = [line.get_label() for line in lines]
        assert len(set(names)) == len(names), f"{key}: two searches with one legend label: {names}"
        profiles = [name.split(" (2")[0] for name in names]
        repeated += len(profiles) - len(set(profiles))
    assert repeated >= 1  # results/capacity/ holds repeated searches of one profile
