"""What the one-off comparison migrations share: each file read strictly, changed in its runs, judged again
from them (model.compare.judge_again) and written back through the strict reader; one line per file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from syslogbench.model import compare as model


def rewrite(
    paths: list[str], measure: str, change: Callable[[model.CompareResult, Path], int], what: str
) -> int:
    """change(result, its folder) changes runs and says how many; other measures' files are left as they were."""
    for name in paths:
        path = Path(name)
        found = model.read(path)
        if found.measure != measure:
            print(f"{path.name}: not a {measure} comparison, left as it was")
            continue
        changed = change(found, path.with_suffix(""))
        model.judge_again(found)
        path.write_text(model.text(found))
        print(f"{path.name}: {changed} of {len(found.runs)} runs {what}")
    return 0
