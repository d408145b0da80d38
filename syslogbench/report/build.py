"""The report: statistics per profile and scenario over results/, next to the published 2014 figures.

python -m syslogbench report [--results DIR] [--scenario ID] [--output FILE] [--html FILE]
                             [--plots DIR] [--out DIR] [--run RUN_ID]

Without --output or --out the Markdown goes to stdout. --out DIR writes DIR/report.md,
DIR/report.html and DIR/plots/*.png, *.svg. Everything is made from the result files alone:
report/sections.py decides the content once, report/markdown.py and report/html.py render it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from syslogbench.model.result import Result, read
from syslogbench.report import html, markdown, sections
from syslogbench.report.load import DEFAULT_SCENARIO, load_results

ROOT = Path(__file__).resolve().parents[2]
RESULTS_DIR = ROOT / "results"


def render_markdown(results_dir: Path, scenario_id: str | None = DEFAULT_SCENARIO) -> str:
    """The Markdown report of one scenario (every scenario for None) from the files in results_dir."""
    return markdown.document(sections.document(load_results(results_dir), results_dir, scenario_id))


def render_run(result: Result) -> str:
    """One run's row, its machine, and the 2014 medians beside it: what `syslogbench run` prints."""
    return markdown.blocks(sections.run_blocks(result))


def show_run(path: Path) -> None:
    """What `syslogbench run` prints after a run."""
    print()
    print(render_run(read(path)))
    print(f"\nResult file: {path}")


# -- the command -----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m syslogbench report", description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="results directory")
    parser.add_argument("--scenario", help="only this scenario id (default: every scenario present)")
    parser.add_argument("--output", type=Path, help="write the Markdown here instead of stdout")
    parser.add_argument("--html", type=Path, help="write the static HTML page here")
    parser.add_argument(
        "--plots", type=Path, help="write the PNG and SVG plots here (default with --html: its folder/plots)"
    )
    parser.add_argument(
        "--out", type=Path, help="write DIR/report.md, DIR/report.html and DIR/plots/ (the flags above win)"
    )
    parser.add_argument("--run", help="run id for the over-time plot (default: the latest run with samples)")
    return parser.parse_args(argv)


def relative_figures(figures: dict[str, list[tuple[str, Path]]], start: Path) -> sections.Figures:
    """The plot paths as seen from the folder of the file that shows them."""
    return {
        scenario: [(caption, Path(os.path.relpath(path, start)).as_posix()) for caption, path in items]
        for scenario, items in figures.items()
    }


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"report: wrote {path}", file=sys.stderr)


def write_plots(
    results: list[Result], plots_dir: Path, args: argparse.Namespace
) -> dict[str, list[tuple[str, Path]]]:
    from syslogbench.report import plots  # matplotlib only when plots are asked for

    figures = plots.write_plots(results, plots_dir, args.scenario, args.run)
    count = sum(map(len, figures.values()))
    print(f"report: wrote {count} plots (PNG and SVG) to {plots_dir}", file=sys.stderr)
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--"]:  # `python -m syslogbench report -- --out DIR`
        argv = argv[1:]
    args = parse_args(argv)
    markdown_path, html_path, plots_dir = args.output, args.html, args.plots
    if args.out is not None:
        markdown_path = markdown_path or args.out / "report.md"
        html_path = html_path or args.out / "report.html"
        plots_dir = plots_dir or args.out / "plots"
    if html_path is not None and plots_dir is None:
        plots_dir = html_path.parent / "plots"
    results = load_results(args.results)
    figures = write_plots(results, plots_dir, args) if plots_dir is not None else {}
    md_base = markdown_path.parent if markdown_path else Path.cwd()
    md_doc = sections.document(results, args.results, args.scenario, relative_figures(figures, md_base))
    if markdown_path is None:
        sys.stdout.write(markdown.document(md_doc))
    else:
        write_text(markdown_path, markdown.document(md_doc))
    if html_path is not None:
        figures_here = relative_figures(figures, html_path.parent)
        write_text(
            html_path, html.document(sections.document(results, args.results, args.scenario, figures_here))
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
