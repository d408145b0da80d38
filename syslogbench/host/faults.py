"""The fault campaign: `python -m syslogbench faults --runs N --seed S [--profiles P,...]`.

Each run is a small `syslogbench run` with one fault injected from this machine with the Docker CLI (no
container gets the Docker socket) at a random moment after the start signal. Each run must keep its
invariants, checked here against the campaign's own record of what it did, not against what the run says:
the fault landed (the engine's event, the injection's own output, or the logs volume seen full); a result
exists and names the fault; the run ended within its documented bound (benchmark.worst_case_s); the verdict
is not `pass` when a fault landed or a message was lost; and no container of the run's project is left. The
campaign writes results/faults/<id>.json; the runs' own results go beside it in results/faults/<id>/, out of
the report's way. The kinds of fault, how each is injected and seen to land, and the draw of the runs are
host/faultkinds.py.
"""

from __future__ import annotations

import json
import random
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from syslogbench import contract
from syslogbench.host import benchmark, events, families, profiles, runplan, setup
from syslogbench.host.compose import DOCKER_TIMEOUT_S, ROOT, Compose, project_name
from syslogbench.host.faultkinds import KINDS, Kind, Seen, Target, draw
from syslogbench.host.log import log
from syslogbench.model import result
from syslogbench.model.settings import SettingsError

if TYPE_CHECKING:
    from syslogbench.host import onehost
# Long enough for a paced run and its DONE window on a loaded machine; a fault that stops the run (a pause,
# a cut network, a full disk) then ends in a timeout within this.
RUN_TIMEOUT = "45"


def default_profiles() -> list[str]:
    """One profile of each family of syslog daemons (their records' example_profile, daemons/_families/);
    read when asked, so a bad record is the command's one line, not an import's traceback."""
    return [family.example_profile for family in families.with_user_config()]


@dataclass
class Outcome:
    """One run of the campaign: what was done to it, and what its result said."""

    run: int
    profile: str
    fault: str
    moment_s: float | None  # after the start signal; None when the fault is there from the start
    injected: str  # the command, or why nothing was injected
    hit: str
    elapsed_s: float
    bound_s: int
    exit_code: int | None
    verdict: str | None
    result_id: str | None
    said: list[str] = field(default_factory=list)
    lost: int = 0
    problems: list[str] = field(default_factory=list)  # the invariants this run broke
    landed: str = ""  # the campaign's own evidence that the fault landed; empty: it did not (missed)


def started(target: Target) -> bool:
    """The watcher gave the start signal (read inside its container; it has no network)."""
    command = [
        "docker",
        "exec",
        target.container("watcher"),
        "test",
        "-f",
        str(contract.Control(Path(contract.CONTROL_MOUNT)).start),
    ]
    try:
        return subprocess.run(command, capture_output=True, timeout=DOCKER_TIMEOUT_S).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def inject_at(kind: Kind, target: Target, moment: float, rng: random.Random, alive: Callable[[], bool],
              seen: Seen, deadline: float) -> tuple[str, str]:  # fmt: skip
    """Wait for the start signal (until the run ends, or the monotonic deadline), then the moment, then
    inject: the command run, and the container hit. What the command printed goes into seen."""
    assert kind.inject is not None
    command, hit = kind.inject(target, rng)
    while not started(target):
        if not alive() or time.monotonic() > deadline:
            return "not injected: the run never gave the start signal", hit
        time.sleep(0.2)
    time.sleep(moment)
    if not alive():
        return "not injected: the run had ended", hit
    done = subprocess.run(command, capture_output=True, text=True, timeout=DOCKER_TIMEOUT_S)
    seen.printed = done.stdout
    if done.returncode != 0:
        return f"not injected: {' '.join(command)} failed: {done.stderr.strip()}", hit
    return " ".join(command), hit


def leftovers(project: str) -> list[str]:
    command = [
        "docker",
        "ps",
        "-a",
        "--filter",
        f"label=com.docker.compose.project={project}",
        "--format",
        "{{.Names}}",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=DOCKER_TIMEOUT_S)
    return done.stdout.split()


def one_run(
    number: int,
    profile_name: str,
    kind: Kind,
    rng: random.Random,
    out: Path,
    project: str,
    on: onehost.OneHost,
    waits: Mapping[str, str] | None = None,
) -> Outcome:
    """One faulted run through `syslogbench run` itself, in a thread, with the fault from this one. waits:
    RUN_TIMEOUT and LEDGER_WAIT other than the campaign's (a test's, for a fault known to end in a timeout)."""
    profile = profiles.resolve(profile_name)
    overrides = {**kind.load, "RUN_TIMEOUT": RUN_TIMEOUT, **(waits or {})}
    if kind.name == "daemon-oom":
        overrides["CENTRAL_MEM"] = profile.oom_memory
    chosen = runplan.make(profile.profile, overrides, on)
    cfg = chosen.cfg
    target = Target(project, profile.profile, cfg.hosts)
    run_dir = out / f"run{number:03d}"
    extra = ()
    if kind.compose_extra:
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "fault.yaml").write_text(kind.compose_extra)
        extra = (run_dir / "fault.yaml",)
    moment = round(rng.uniform(*kind.window), 2) if kind.inject else None
    codes: list[int] = []

    def go() -> None:
        show = lambda path: None  # noqa: E731 (the campaign prints one line per run)
        options = runplan.RunOptions(show, build=False, extra_files=extra, project=project)
        codes.append(benchmark.run(chosen, run_dir, options))

    # Fresh volumes: the small logs volume of one run must not be another's, nor the other way round.
    Compose(profile.profile, project, extra).down({}, stop_s=5, volumes=True, quiet=True)
    recorder = events.Recorder(project).start()  # the campaign's own record, beside the run's
    seen = Seen(recorder.began)
    began = time.monotonic()
    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    watcher = None
    if kind.watch is not None:
        watcher = threading.Thread(target=kind.watch, args=(target, thread.is_alive, seen), daemon=True)
        watcher.start()
    bound = benchmark.worst_case_s(cfg)
    injected, hit = "from the start (settings or volume)", target.container(profile.profile)
    if kind.inject is not None and moment is not None:
        # The start may come late on a busy machine (a campaign on 2 cores shared with other runs waited
        # more than 120 s for it): wait as long as the run may take.
        injected, hit = inject_at(kind, target, moment, rng, thread.is_alive, seen, began + bound)
    thread.join(timeout=max(0.0, bound - (time.monotonic() - began)))
    hung = thread.is_alive()
    if hung:  # past the documented bound: stop everything, then record it
        Compose(profile.profile, project, extra).down({}, stop_s=5, volumes=True, quiet=True)
        thread.join(timeout=DOCKER_TIMEOUT_S)
    elapsed = time.monotonic() - began
    if watcher is not None:
        watcher.join(timeout=DOCKER_TIMEOUT_S)
    seen.events = recorder.stop()
    outcome = judge(number, profile.profile, kind, target, run_dir, moment, injected, hit, elapsed, bound,
                    codes, hung, seen)  # fmt: skip
    Compose(profile.profile, project, extra).down({}, stop_s=5, volumes=True, quiet=True)  # its volumes
    return outcome


def judge(number: int, profile: str, kind: Kind, target: Target, run_dir: Path, moment: float | None,
          injected: str, hit: str, elapsed: float, bound: int, codes: list[int], hung: bool,
          seen: Seen) -> Outcome:  # fmt: skip
    outcome = Outcome(number, profile, kind.name, moment, injected, hit, round(elapsed, 1), bound,
                      codes[0] if codes else None, None, None)  # fmt: skip
    if hung:
        outcome.problems.append(f"hang: still running {bound} s after it began (the documented bound)")
    if not injected.startswith("not injected"):
        outcome.landed = kind.landed.find(target, hit, seen) or ""
    if not outcome.landed:
        why = (
            injected if injected.startswith("not injected") else f"no sign that it landed: {kind.landed.what}"
        )
        outcome.problems.append(f"missed: {why}")
    files = sorted(run_dir.glob("*.json"))
    if len(files) != 1:
        outcome.problems.append(f"no_result: {len(files)} result files")
        return leftover_check(outcome, profile, target)
    try:
        written = result.read(files[0])
    except result.ResultError as error:
        outcome.problems.append(f"no_result: the result cannot be read: {error}")
        return leftover_check(outcome, profile, target)
    outcome.verdict, outcome.result_id = written.verdict, written.run_id
    outcome.said = written.errors
    outcome.lost = written.messages.lost
    expected = kind.says(target, hit)
    if outcome.landed and not any(expected in error for error in written.errors):
        outcome.problems.append(f"unnamed: no error says {expected!r}")
    if written.verdict == "pass" and (
        outcome.landed or written.messages.lost or written.messages.received < written.messages.expected
    ):
        outcome.problems.append("false_pass: verdict pass after a fault or with messages missing")
    return leftover_check(outcome, profile, target)


def leftover_check(outcome: Outcome, profile: str, target: Target) -> Outcome:
    if left := leftovers(target.project):
        outcome.problems.append(f"leftover_containers: {', '.join(left)}")
        Compose(profile, target.project).down({}, stop_s=5, volumes=True, quiet=True)
    return outcome


# The invariants; `missed` counts the runs whose fault did not land (the run had ended before its moment, or the
# campaign saw no sign of it): such a run proves nothing about that fault, so it is never taken as a pass.
COUNTED = ("hangs", "no_result", "unnamed", "false_pass", "leftover_containers", "missed")


def tally(outcomes: list[Outcome]) -> dict[str, int]:
    """Runs, and per invariant the runs that broke it."""
    counts = {"runs": len(outcomes), **{key: 0 for key in COUNTED}}
    for outcome in outcomes:
        for problem in outcome.problems:
            key = "hangs" if problem.startswith("hang") else problem.split(":")[0]
            counts[key] += 1
    return counts


def campaign(runs: int, seed: int, names: list[str], results_dir: Path, on: onehost.OneHost) -> int:
    """Run the campaign on this machine's compose (on) and write results/faults/<id>.json; 0 only when no
    run broke an invariant."""
    if runs < 1:
        raise SettingsError(f"--runs {runs}: give at least 1")
    names = [profiles.resolve(name).profile for name in names]  # an unknown name: one line, nothing started
    chosen = draw(runs, seed, names)
    project = f"{project_name()}-faults"
    began = datetime.now(UTC)
    campaign_id = f"{began.strftime('%Y%m%dT%H%M%SZ')}-seed{seed}"
    out = results_dir / "faults" / campaign_id
    out.mkdir(parents=True, exist_ok=True)
    setup.setup(sorted(set(names)))
    rng = random.Random(seed)
    code = commit()  # the code the campaign runs, as it starts
    outcomes = []
    for number, (profile, kind) in enumerate(chosen, 1):
        log(f"fault run {number}/{runs}: {kind.name} on {profile}")
        try:
            outcome = one_run(number, profile, kind, rng, out, project, on)
        except KeyboardInterrupt:  # the run's thread dies with the process: stop its containers here
            Compose(profile, project).down({}, stop_s=5, volumes=True, quiet=True)
            raise
        log(
            f"  {outcome.verdict} in {outcome.elapsed_s} s; {'; '.join(outcome.problems) or 'all invariants held'}"
        )
        outcomes.append(outcome)
        write(out.with_suffix(".json"), campaign_id, code, seed, names, began, outcomes)
    counts = tally(outcomes)
    log(f"faults: {counts}; written to {out.with_suffix('.json')}")
    return 0 if all(counts[key] == 0 for key in COUNTED) else 1


def commit() -> str:
    """The code the campaign ran (with +changes when the checkout had uncommitted ones)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "syslogbench"], capture_output=True, text=True, cwd=ROOT
        )
    except OSError:
        return "unknown"
    return (head.stdout.strip() or "unknown") + ("+changes" if dirty.stdout.strip() else "")


def write(
    path: Path,
    campaign_id: str,
    code: str,
    seed: int,
    names: list[str],
    began: datetime,
    outcomes: list[Outcome],
) -> None:
    data = {
        "id": campaign_id,
        "commit": code,
        "seed": seed,
        "profiles": names,
        "started_utc": began.isoformat(timespec="seconds"),
        **tally(outcomes),
        "kinds": {name: kind.what for name, kind in KINDS.items()},
        "entries": [asdict(outcome) for outcome in outcomes],
    }
    path.write_text(json.dumps(data, indent=2) + "\n")


ENTRY_KEYS = ("fault", "verdict", "moment_s", "injected", "problems", "elapsed_s", "bound_s")


def read_campaign(path: Path) -> dict:
    """A campaign file, or a SettingsError of one line saying what was given instead."""
    where = f"faults --summary {path}"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise SettingsError(
            f"{where}: no such file; give a campaign file, results/faults/<id>.json"
        ) from None
    except OSError as error:
        raise SettingsError(f"{where}: cannot be read ({error.strerror}); give a campaign file") from None
    except ValueError:
        raise SettingsError(f"{where}: not JSON; give a campaign file, results/faults/<id>.json") from None
    if isinstance(data, dict) and "run_id" in data:
        raise SettingsError(
            f"{where}: this is the result of one run ({data['run_id']}), not a campaign file: give "
            "results/faults/<id>.json (the runs' own results are in results/faults/<id>/)"
        )
    entries = data.get("entries") if isinstance(data, dict) else None
    shaped = isinstance(entries, list) and all(
        isinstance(e, dict) and set(ENTRY_KEYS) <= set(e) for e in entries
    )
    if not shaped or not {"profiles", "seed"} <= set(data):
        raise SettingsError(
            f"{where}: not a campaign file (no runs' entries with {', '.join(ENTRY_KEYS)}, or no profiles "
            "and seed): give results/faults/<id>.json"
        )
    return data


def landed_cell(entries: list[dict]) -> str:
    """How many faults landed; campaign files from before the landing was checked say only how many were
    injected mid-run."""
    if all("landed" in e for e in entries):
        return f"{sum(bool(e['landed']) for e in entries)} of {len(entries)}"
    if entries[0]["moment_s"] is None:
        return "from the start (not checked)"
    injected = sum(not e["injected"].startswith("not injected") for e in entries)
    return f"injected {injected} of {len(entries)} (not checked)"


def summary(path: Path) -> str:
    """A campaign file as Markdown: per kind, the runs, their verdicts, how many landed, how many results
    named the fault, and the longest run against its bound; then the invariants' counts."""
    data = read_campaign(path)
    rows = [
        "| fault | runs | verdicts | landed | named | longest run (bound) |",
        "|---|---|---|---|---|---|",
    ]
    for name in KINDS:
        entries = [e for e in data["entries"] if e["fault"] == name]
        if not entries:
            continue
        verdicts = sorted({e["verdict"] or "none" for e in entries})
        counted = ", ".join(f"{v} {sum((e['verdict'] or 'none') == v for e in entries)}" for v in verdicts)
        named = sum(not any(p.startswith("unnamed") for p in e["problems"]) for e in entries)
        longest = max(entries, key=lambda e: e["elapsed_s"])
        rows.append(
            f"| `{name}` | {len(entries)} | {counted} | {landed_cell(entries)} | {named} | {longest['elapsed_s']} s ({longest['bound_s']} s) |"
        )
    counts = ", ".join(f"{key} {data[key]}" for key in ("runs", *COUNTED) if key in data)
    return "\n".join(
        [*rows, "", f"{path.name}: {counts}; profiles {', '.join(data['profiles'])}, seed {data['seed']}."]
    )
