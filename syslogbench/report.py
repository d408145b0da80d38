"""Markdown report: our latest run per daemon profile, next to the published 2014 figures.

python -m syslogbench.report [--results DIR] [--scenario ID] [--output FILE]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from syslogbench import seed2014

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "results"
DEFAULT_SCENARIO = "seed2014"
MIB = 2**20
GIB = 2**30
NA = "n/a"
# The keys the report reads; a JSON file without them is not a result.
RESULT_KEYS = (
    "run_id",
    "finished_utc",
    "verdict",
    "scenario",
    "daemon",
    "limits",
    "host",
    "elapsed_s",
    "cpu",
    "memory",
    "messages",
    "throughput",
)

log = logging.getLogger(__name__)

Result = dict[str, Any]


# -- loading ---------------------------------------------------------------------------------------


def read_result(path: Path) -> Result | None:
    """The result in path, or None (with a warning) if it is unreadable or not a result."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        log.warning("skipping %s: unreadable (%s)", path, err)
        return None
    if not isinstance(data, dict) or any(key not in data for key in RESULT_KEYS):
        log.warning("skipping %s: not a syslogbench result", path)
        return None
    return data


def load_results(results_dir: Path) -> list[Result]:
    """Every result in results_dir (all *.json but schema.json), in file-name order."""
    paths = sorted(p for p in results_dir.glob("*.json") if p.name != "schema.json")
    return [result for result in map(read_result, paths) if result is not None]


def finished_at(result: Result) -> datetime:
    return datetime.fromisoformat(result["finished_utc"])


def latest_per_profile(results: Sequence[Result], scenario_id: str = DEFAULT_SCENARIO) -> list[Result]:
    """The newest run (by finished_utc) of each daemon profile in the scenario, sorted by profile."""
    latest: dict[str, Result] = {}
    for result in results:
        if result["scenario"].get("id") != scenario_id:
            continue
        profile = result["daemon"]["profile"]
        if profile not in latest or finished_at(result) > finished_at(latest[profile]):
            latest[profile] = result
    return [latest[profile] for profile in sorted(latest)]


# -- formatting ------------------------------------------------------------------------------------


def fmt(value: float | None, spec: str, scale: float = 1, suffix: str = "") -> str:
    """value / scale formatted with spec, or n/a for a figure that was not measured."""
    if value is None:
        return NA
    return f"{value / scale:{spec}}{suffix}"


def fmt_limit(limit: dict[str, Any] | None, spec: str, scale: float = 1, suffix: str = "") -> str:
    return fmt((limit or {}).get("effective"), spec, scale, suffix)


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]


# -- our runs --------------------------------------------------------------------------------------

RUN_COLUMNS: list[tuple[str, Callable[[Result], str]]] = [
    ("profile", lambda r: r["daemon"]["profile"]),
    ("daemon version", lambda r: r["daemon"].get("version") or NA),
    ("verdict", lambda r: r["verdict"]),
    ("elapsed s", lambda r: fmt(r.get("elapsed_s"), ".2f")),
    ("user s", lambda r: fmt(r["cpu"].get("user_s"), ".2f")),
    ("system s", lambda r: fmt(r["cpu"].get("system_s"), ".2f")),
    ("%CPU", lambda r: fmt(r["cpu"].get("percent"), ".0f", suffix="%")),
    ("peak mem MiB (cgroup)", lambda r: fmt(r["memory"].get("peak_bytes"), ".1f", MIB)),
    ("max RSS MiB", lambda r: fmt(r["memory"].get("max_rss_bytes"), ".1f", MIB)),
    ("msgs/s", lambda r: fmt(r["throughput"].get("msgs_per_s"), ",.0f")),
    ("received / expected", lambda r: f"{r['messages']['received']:,} / {r['messages']['expected']:,}"),
    ("lost", lambda r: f"{r['messages']['lost']:,}"),
    ("duplicated", lambda r: f"{r['messages']['duplicated']:,}"),
    ("central CPUs", lambda r: fmt_limit(r["limits"].get("central_cpus"), "g")),
    ("central memory", lambda r: fmt_limit(r["limits"].get("central_memory_bytes"), ".2f", GIB, " GiB")),
    ("run id", lambda r: f"`{r['run_id']}`"),
]


def runs_table(results: Sequence[Result]) -> list[str]:
    rows = [[column(result) for _, column in RUN_COLUMNS] for result in results]
    return table([name for name, _ in RUN_COLUMNS], rows)


def machine_label(host: dict[str, Any]) -> str:
    return (
        f"{host['cpu_model']}, {host['cores']} cores, {fmt(host['memory_bytes'], '.1f', GIB)} GiB RAM, "
        f"kernel {host['kernel']}, cgroup v{host['cgroup_version']}, Docker {host['docker_version']}"
    )


def machines_line(results: Sequence[Result]) -> str:
    labels = list(dict.fromkeys(machine_label(result["host"]) for result in results))
    noun = "Machine" if len(labels) == 1 else "Machines"
    return f"{noun}: " + "; ".join(labels) + "."


# -- the 2014 figures ------------------------------------------------------------------------------


def seed_row(daemon: str, m: seed2014.Medians) -> list[str]:
    runs = ", ".join(f"{run.elapsed_s:.2f}" for run in seed2014.RUNS[daemon])
    return [
        daemon,
        f"{m.elapsed_s:.2f}",
        runs,
        f"{m.user_s:.2f}",
        f"{m.system_s:.2f}",
        f"{m.cpu_percent:.0f}%",
        f"{m.max_rss_mib:.1f}",
        f"{m.msgs_per_s:,.0f}",
    ]


def seed_table() -> list[str]:
    header = ["daemon", "elapsed s", "elapsed s, 3 runs", "user s", "system s", "%CPU"]
    header += ["max RSS MiB", "msgs/s (derived)"]
    return table(header, [seed_row(daemon, m) for daemon, m in seed2014.medians().items()])


def seed_section() -> list[str]:
    return [
        "## Published 2014 figures, on the 2014 hardware",
        "",
        (
            "Published figures, not ours: median of three `/usr/bin/time` runs per daemon, measured "
            f"in 2014 on {seed2014.HARDWARE}. Workload: {seed2014.HOSTS} remote hosts x "
            f"{seed2014.SENDERS_PER_HOST} senders x {seed2014.MESSAGES_PER_SENDER:,} messages. "
            "Each column is the median on its own."
        ),
        "",
        *seed_table(),
        "",
        (
            f"msgs/s is derived by us as {seed2014.MESSAGES_TOTAL:,} messages (including the 20 DONE "
            "messages) / median elapsed; the 2014 post did not publish a rate."
        ),
    ]


MEMORY_NOTE = (
    "Note on memory: our *peak mem* column is the cgroup peak of the central container, which "
    "includes the page cache of the files the daemon wrote; the 2014 *max RSS* column is "
    "`/usr/bin/time` maxresident of the daemon. Compare RSS to RSS (our *max RSS* column, the "
    "daemon's VmHWM), not the cgroup peak. GNU time 1.7, current in 2014, is known to report "
    "maxresident about 4x too high on Linux (fixed in 1.8); we do not know which build was used."
)


# -- the report ------------------------------------------------------------------------------------


def our_section(results: Sequence[Result], results_dir: Path, scenario_id: str) -> list[str]:
    if not results:
        return [f"No runs of scenario `{scenario_id}` in `{results_dir}`."]
    intro = "Latest run per daemon profile (null figures, not measured, are shown as n/a)."
    return [intro, "", *runs_table(results), "", machines_line(results)]


def render_markdown(results_dir: Path, scenario_id: str = DEFAULT_SCENARIO) -> str:
    results = latest_per_profile(load_results(results_dir), scenario_id)
    lines = [
        f"# syslogbench results: scenario `{scenario_id}`",
        "",
        "## Our runs",
        "",
        *our_section(results, results_dir, scenario_id),
        "",
        *seed_section(),
        "",
        MEMORY_NOTE,
    ]
    return "\n".join(lines) + "\n"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m syslogbench.report", description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="results directory")
    parser.add_argument("--scenario", default=DEFAULT_SCENARIO, help="scenario id")
    parser.add_argument("--output", type=Path, help="write the Markdown here instead of stdout")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    text = render_markdown(args.results, args.scenario)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())


def render_run(result: Result) -> str:
    """One run's row, its machine, and the 2014 medians beside it: what `syslogbench run` prints."""
    lines = [*runs_table([result]), "", machines_line([result]), "", *seed_section()]
    return "\n".join(lines)
