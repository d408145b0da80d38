"""The report's plots, from the result files alone, each written as PNG and SVG (report/drawing.py).

write_plots draws the version matrix (report/versions_plot.py), on the report's first screen, and per scenario
with a passing run the bars per profile (report/profile_plots.py) and one run over time
(report/timeseries_plot.py). Every figure but the matrix draws one section of one scenario, whose daemons are
of one tuning (load.group_results).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from matplotlib import rc_context

from syslogbench.model.result import Result
from syslogbench.report import load as report
from syslogbench.report.drawing import (
    RC,
    Colors,
    Plot,
    family,
    family_colors,
    machine_caption,
    safe_name,
    save,
)
from syslogbench.report.load import Group
from syslogbench.report.profile_plots import cpu_figure, memory_figure, throughput_figure
from syslogbench.report.timeseries_plot import choose_run, timeseries_figure
from syslogbench.report.versions_plot import versions_figure

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Written:
    """What write_plots wrote: the version matrix's chart (none without a seed run), then per scenario."""

    matrix: list[Plot]
    scenarios: dict[str, list[Plot]]
    capacity: list[Plot] = field(default_factory=list)  # report/capacity_plots.py: one per scenario searched
    capacity_folded: list[Plot] = field(
        default_factory=list
    )  # of the other tunings: users' configs, knob steps


def scenario_plots(
    scenario: str, groups: Sequence[Group], out_dir: Path, run_id: str | None, colors: Colors
) -> list[Plot]:
    runs = [run for group in groups for run in group.runs]
    caption = machine_caption(runs)
    name = safe_name(scenario)
    figures = [
        ("throughput", "Throughput per profile", throughput_figure(scenario, groups, caption, colors)),
        ("cpu", "CPU user and system per profile", cpu_figure(scenario, groups, caption)),
        ("memory", "Peak memory per profile", memory_figure(scenario, groups, caption)),
    ]
    plots = [
        (f"{title}, scenario {scenario}", save(fig, out_dir, f"{kind}-{name}"))
        for kind, title, fig in figures
    ]
    run = choose_run(runs, run_id)
    if run is not None:
        png = save(timeseries_figure(run, caption), out_dir, f"timeseries-{name}")
        plots.append((f"One run over time: {run.run_id}", png))
    return plots


def write_plots(
    results: Sequence[Result], out_dir: Path, scenario_id: str | None = None, run_id: str | None = None
) -> Written:
    """The version matrix's chart, and every plot of every scenario with a passing run (or only
    scenario_id's), as (caption, PNG path); a scenario where nothing passed has no figure to draw."""
    if run_id is not None and choose_run(results, run_id) is None:
        log.warning("report: no run %s with samples: no over-time plot", run_id)
    grouped = report.group_results(results, scenario_id)
    colors = family_colors(family(g) for groups in grouped.values() for g in groups)
    written = Written([], {})
    with rc_context(RC):
        # One section per tuning on the matrix's machine: a panel each.
        matrix = [
            (name, groups) for name, groups in report.version_matrix(grouped) if report.daemon_groups(groups)
        ]
        if matrix:
            (name, groups), tuned = matrix[0], [section for _, section in matrix[1:]]
            caption = machine_caption(
                [run for _, section in matrix for group in section for run in group.runs]
            )
            png = save(versions_figure(name, groups, caption, colors, tuned), out_dir, "versions")
            written.matrix.append((f"The version matrix, scenario {name}", png))
    jobs = [
        (scenario, groups, out_dir, run_id, colors)
        for scenario, groups in grouped.items()
        if any(group.counted for group in groups)
    ]
    for job, drawn in zip(jobs, in_parallel(scenario_job, jobs), strict=True):
        written.scenarios[job[0]] = drawn
    return written


Job = tuple[str, Sequence[Group], Path, str | None, Colors]
JOBS_PER_WORKER = 4


def scenario_job(job: Job) -> list[Plot]:
    with rc_context(RC):
        return scenario_plots(*job)


def in_parallel(work: Callable[[Job], list[Plot]], jobs: list[Job]) -> list[list[Plot]]:
    """Each scenario's figures in a process of its own, one per core: drawing is all CPU, and one scenario's
    figures need nothing of another's. Spawned, not forked: the caller may have threads (a test runner's)."""
    workers = min(len(jobs) // JOBS_PER_WORKER, os.cpu_count() or 1)
    if workers < 2:  # starting a process (matplotlib's import) costs more than a few scenarios' figures
        return [work(job) for job in jobs]
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        return pool.map(work, jobs, chunksize=1)
