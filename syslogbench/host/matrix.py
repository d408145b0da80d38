"""Run profiles x replicates, interleaved (A B A B ...), resumable, with a progress bar and an ETA."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path

from syslogbench.contract import EXIT_CODES
from syslogbench.host import benchmark, lock, runplan, setup
from syslogbench.host.compose import project_name
from syslogbench.host.log import log
from syslogbench.model import result, settings

BAR_WIDTH = 30
# A matrix ends with one run's code: the first of these that any run had, so what most needs a look wins
# (a run that could not be measured, then one that never finished, then a loss; n/a is a result too).
PRECEDENCE = ("error", "timeout", "loss", "n/a")
NAMES = {code: name for name, code in EXIT_CODES.items()}


def cells(names: list[str], replicates: int) -> list[tuple[int, str]]:
    """Replicate-major order, so slow drift of the machine does not favour one daemon."""
    return [(replicate, name) for replicate in range(1, replicates + 1) for name in names]


def matrix_id(names: list[str], overrides: dict[str, str], config_sha256: str | None = None) -> str:
    """The same profiles, settings and user config (its sha256; none: the profiles' own) give the same id,
    which is what lets a matrix resume."""
    parts: dict[str, object] = {"profiles": sorted(names), "overrides": overrides}
    if config_sha256:
        parts["config"] = config_sha256
    key = json.dumps(parts, sort_keys=True)
    return "m" + hashlib.sha256(key.encode()).hexdigest()[:10]


def done_cells(results_dir: Path, mid: str, tunings: bool = False) -> set[tuple[int, str]]:
    """The cells of matrix mid that have a result: (replicate, profile), or (replicate, profile@tuning) in a
    matrix over tunings."""
    done = set()
    for path in results_dir.glob("*.json"):
        try:
            written = result.read(path)
        except (OSError, result.ResultError):  # not a result: not a cell of any matrix
            continue
        if written.matrix is not None and written.matrix.id == mid:
            name = written.daemon.profile
            if tunings:
                name = cell_name(name, written.daemon.tuning or settings.DEFAULT_TUNING)
            done.add((written.matrix.replicate, name))
    return done


def cell_name(profile: str, tuning: str) -> str:
    """A profile at one tuning, as a matrix over tunings names its cells: rsyslog-8.2504@tuned."""
    return f"{profile}@{tuning}"


def clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


def progress_line(finished: int, total: int, elapsed: float, what: str = "runs") -> str:
    share = finished / total if total else 1.0
    filled = int(BAR_WIDTH * share)
    eta = "?" if finished == 0 else clock(elapsed / finished * (total - finished))
    return f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {finished}/{total} {what}, {share:.0%}, elapsed {clock(elapsed)}, ETA {eta}"


def warmup_dir(results_dir: Path) -> Path:
    """Warm-up runs are kept, apart: the report reads only the results directory's own files."""
    return results_dir / "warmup"


def run_matrix(
    names: list[str],
    replicates: int,
    overrides: dict[str, str],
    results_dir: Path,
    fresh: bool,
    on: runplan.Orchestrator,
    show: Callable[[Path], None] = benchmark.show_path,
    warmup: int = 0,
    config: tuple[Path, bool] | None = None,
    tunings: list[str] | None = None,
) -> int:
    """on: where every run goes (the command line's choice); config: a user's own config (its path, and whether its text stays private) for every profile;
    tunings: each profile at each of these tunings, the cells interleaved (None: the TUNING in force)."""
    if replicates < 1:
        raise settings.SettingsError(f"--replicates {replicates}: use 1 or more")
    if warmup < 0:
        raise settings.SettingsError(f"--warmup {warmup}: use 0 or more")
    canonical = list(dict.fromkeys(runplan.resolve(name).profile for name in names))
    plans = matrix_plans(canonical, overrides, on, config, tunings)
    # Every setting and load is checked before anything starts (n/a ones become results).
    for chosen in plans.values():
        if not chosen.unsupported:
            chosen.on.refuse_unfit(chosen)
    mid = matrix_id(list(plans), overrides, plans[next(iter(plans))].config_sha256)
    with lock.project(project_name()):  # held for the whole matrix; each run takes it again, in this process
        if warmup:
            # Declared before the matrix, so nothing is dropped after the fact (docs/measurement.md, Noise).
            run_cells(plans, warmup, warmup_dir(results_dir), f"{mid}-warmup", fresh, show, bool(tunings))
        return run_cells(plans, replicates, results_dir, mid, fresh, show, bool(tunings))


def matrix_plans(canonical: list[str], overrides: dict[str, str], on: runplan.Orchestrator,
                 config: tuple[Path, bool] | None, tunings: list[str] | None) -> dict[str, runplan.Plan]:  # fmt: skip
    """A plan per cell: per profile, or per profile and tuning (TUNING then set by the matrix, not given)."""
    if not tunings:
        return {name: runplan.make(name, overrides, on, config) for name in canonical}
    if "TUNING" in overrides:
        raise settings.SettingsError("--tunings sets TUNING for each cell: leave TUNING out")
    if bad := [t for t in tunings if t not in settings.TUNINGS]:
        raise settings.SettingsError(
            f"--tunings {','.join(bad)}: each is one of {', '.join(settings.TUNINGS)}"
        )
    return {
        cell_name(name, tuning): runplan.make(name, {**overrides, "TUNING": tuning}, on, config)
        for name in canonical
        for tuning in dict.fromkeys(tunings)
    }


def run_cells(
    plans: dict[str, runplan.Plan],
    replicates: int,
    results_dir: Path,
    mid: str,
    fresh: bool,
    show: Callable[[Path], None],
    tunings: bool = False,
) -> int:
    canonical = list(plans)
    skip = set() if fresh else done_cells(results_dir, mid, tunings)
    todo = [cell for cell in cells(canonical, replicates) if cell not in skip]
    log(f"matrix {mid}: {len(todo)} runs to do, {len(skip)} already in {results_dir} (--fresh reruns them)")
    setup.setup(list(dict.fromkeys(chosen.profile.profile for chosen in plans.values())))
    started, codes = time.monotonic(), []
    try:
        for index, (replicate, name) in enumerate(todo):
            log(progress_line(index, len(todo), time.monotonic() - started))
            log(f"replicate {replicate} of {name}")
            env = {"MATRIX_ID": mid, "MATRIX_REPLICATE": str(replicate)}
            code = benchmark.run(
                plans[name], results_dir, runplan.RunOptions(show, extra_env=env, build=False)
            )
            codes.append(code)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the command line says which, and exits with its code
        log(f"matrix {mid} stopped after {len(codes)} runs: run the same command to resume")
        raise
    log(progress_line(len(todo), len(todo), time.monotonic() - started))
    log(f"matrix {mid} done: {summary(codes)}")
    return matrix_code(codes)


def summary(codes: list[int]) -> str:
    """e.g. '3 pass, 1 loss (see their results)', named by contract.EXIT_CODES."""
    names = [NAMES.get(code, f"exit {code}") for code in codes]
    counts = ", ".join(f"{names.count(name)} {name}" for name in dict.fromkeys(sorted(names)))
    return f"{len(codes)} runs: {counts or 'none'}" + (
        " (see their results)" if set(names) - {"pass"} else ""
    )


def matrix_code(codes: list[int]) -> int:
    """0 when every run passed, else the code of the first name in PRECEDENCE that a run had."""
    seen = {NAMES.get(code, "error") for code in codes}  # a code outside the table is an error too
    return next((EXIT_CODES[name] for name in PRECEDENCE if name in seen), EXIT_CODES["pass"])
