"""Write the report from the result files: Markdown, an HTML page and PNG/SVG plots, beside 2014's figures.

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
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from syslogbench.model.knobs import KnobsResult
from syslogbench.model.result import Result, read
from syslogbench.report import capacity, html, markdown, sections
from syslogbench.report.load import DEFAULT_SCENARIO, load_knobs, load_results, scenario_of

if TYPE_CHECKING:  # matplotlib is imported only when plots are asked for
    from syslogbench.report.plots import Written

ROOT = Path(__file__).resolve().parents[2]
RESULTS_DIR = ROOT / "results"
BAD_INPUT = (
    2  # contract.EXIT_CODES["bad-input"]; the report imports only the result model (test_report checks)
)


class BadInput(Exception):
    """A flag to change, said in one line."""


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
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="the folder of the result files")
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


def relative(items: Sequence[tuple[str, Path]], start: Path) -> list[tuple[str, str]]:
    """The plot paths as seen from the folder of the file that shows them."""
    return [(caption, Path(os.path.relpath(path, start)).as_posix()) for caption, path in items]


def figures_for(written: Written | None, start: Path) -> sections.Figures:
    """The plots by the anchor of the section that shows them."""
    if written is None:
        return {}
    figures = {
        sections.scenario_anchor(name): relative(items, start) for name, items in written.scenarios.items()
    }
    return {
        sections.VERSIONS_ANCHOR: relative(written.matrix, start),
        capacity.ANCHOR: relative(written.capacity, start),
        capacity.FOLDED_FIGURES: relative(written.capacity_folded, start),
        **figures,
    }


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"report: wrote {path}", file=sys.stderr)


def write_plots(
    results: list[Result], searches: list[dict], plots_dir: Path, args: argparse.Namespace
) -> Written:
    from syslogbench.report import capacity_plots, plots  # matplotlib only when plots are asked for

    written = plots.write_plots(results, plots_dir, args.scenario, args.run)
    written.capacity.extend(capacity_plots.write(searches, plots_dir, ranked=True))
    written.capacity_folded.extend(capacity_plots.write(searches, plots_dir, ranked=False))
    count = len(written.matrix) + sum(map(len, written.scenarios.values()))
    count += len(written.capacity) + len(written.capacity_folded)
    if count:
        print(f"report: wrote {count} plots (PNG and SVG) to {plots_dir}", file=sys.stderr)
    else:
        print("report: no plots: no run passed", file=sys.stderr)
    return written


def file_target(flag: str, path: Path | None) -> None:
    """BadInput unless path can be written as a file: not a folder, and under a folder or nothing yet."""
    if path is None:
        return
    if path.is_dir():
        raise BadInput(f"{flag} {path} is a folder; give a file name (--out takes a folder)")
    folder_target(flag, path.parent, path)


def folder_target(flag: str, path: Path | None, given: Path | None = None) -> None:
    """BadInput unless path is a folder, or can become one: no file in the way of it or of a parent."""
    if path is None:
        return
    for part in (path, *path.parents):
        if part.exists() and not part.is_dir():
            what = "is a file" if part == path else f"sits under {part}, a file"
            raise BadInput(
                f"{flag} {path} {what}; give a folder (for one file: --output FILE or --html FILE)"
            )
        if part.exists():
            writable(flag, given or path, part)
            return


def writable(flag: str, path: Path, folder: Path) -> None:
    """BadInput unless a file can be made in folder (the nearest one of path that exists). Tried, not
    asked of the permissions: root passes os.access on /proc, where no file can be made, and the whole
    report would be built before the write failed."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise BadInput(
            f"{flag} {path}: nothing can be written in {folder} ({error.strerror or error}); give another path"
        ) from None


def check_args(args: argparse.Namespace) -> None:
    if not args.results.is_dir():
        what = "is not a folder" if args.results.exists() else "does not exist"
        raise BadInput(f"--results {args.results} {what}: give the folder of the result files")
    folder_target("--out", args.out)
    if args.out is not None and args.out.suffix in (".md", ".html") and not args.out.is_dir():
        raise BadInput(
            f"--out {args.out} names a file; --out takes a folder (for the Markdown alone: --output FILE)"
        )
    folder_target("--plots", args.plots)
    file_target("--output", args.output)
    file_target("--html", args.html)


def filter_problem(args: argparse.Namespace, results: Sequence[Result], searches: Sequence[dict],
                   studies: Sequence[KnobsResult]) -> str | None:  # fmt: skip
    """A filter that matches nothing would write a report of nothing: one line saying what there is."""
    if args.scenario is not None:
        present = {scenario_of(r) for r in results} | {s["scenario"] for s in searches}
        present |= {study.scenario for study in studies}
        if args.scenario not in present:
            return (f"--scenario {args.scenario}: no result in {args.results} has it; give one of "
                    f"{', '.join(sorted(present)) or 'none: the folder has no results'}")  # fmt: skip
    if args.run is not None and args.run not in {r.run_id for r in results}:
        return f"--run {args.run}: no run in {args.results} has this id: give a run id (a result file's name without .json)"
    return None


def targets(args: argparse.Namespace) -> tuple[Path | None, Path | None, Path | None]:
    """Where the Markdown, the HTML and the plots go (None: Markdown to stdout, no HTML, no plots)."""
    markdown_path, html_path, plots_dir = args.output, args.html, args.plots
    if args.out is not None:
        markdown_path = markdown_path or args.out / "report.md"
        html_path = html_path or args.out / "report.html"
        plots_dir = plots_dir or args.out / "plots"
    if html_path is not None and plots_dir is None:
        plots_dir = html_path.parent / "plots"
    return markdown_path, html_path, plots_dir


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--"]:  # `python -m syslogbench report -- --out DIR`
        argv = argv[1:]
    args = parse_args(argv)
    try:
        check_args(args)
    except BadInput as error:
        print(f"report: error: {error}", file=sys.stderr)
        return BAD_INPUT
    markdown_path, html_path, plots_dir = targets(args)
    results = load_results(args.results)
    searches = capacity.load(args.results)  # read once: the plots, the Markdown and the HTML share it
    studies = load_knobs(args.results)  # likewise, the Markdown and the HTML
    if problem := filter_problem(args, results, searches[0], studies[0]):
        print(f"report: error: {problem}", file=sys.stderr)
        return BAD_INPUT
    written = write_plots(results, searches[0], plots_dir, args) if plots_dir is not None else None
    md_base = markdown_path.parent if markdown_path else Path.cwd()
    md_figures = figures_for(written, md_base)
    md_doc = sections.document(results, args.results, args.scenario, md_figures, searches, studies)
    if markdown_path is None:
        sys.stdout.write(markdown.document(md_doc))
    else:
        write_text(markdown_path, markdown.document(md_doc))
    if html_path is not None:
        figures_here = figures_for(written, html_path.parent)
        write_text(
            html_path,
            html.document(
                sections.document(results, args.results, args.scenario, figures_here, searches, studies)
            ),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
