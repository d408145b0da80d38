"""The fault campaign: `python -m syslogbench faults --runs N --seed S [--profiles P,...]`.

Each run is a small `syslogbench run` with one fault injected from this machine with the Docker CLI (no
container gets the Docker socket) at a random moment after the start signal. Each run must keep its
invariants, checked here against the campaign's own record of what it did, not against what the run says:
the fault landed (the engine's event, the injection's own output, or the logs volume seen full); a result
exists and names the fault; the run ended within its documented bound (benchmark.worst_case_s); the verdict
is not `pass` when a fault landed or a message was lost; and no container of the run's project is left. The
campaign writes results/faults/<id>.json; the runs' own results go beside it in results/faults/<id>/, out of
the report's way.
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
from syslogbench.host import benchmark, events, families, profiles, setup
from syslogbench.host import plan as run_plan
from syslogbench.host.compose import DOCKER_TIMEOUT_S, ROOT, Compose, project_name
from syslogbench.host.log import log
from syslogbench.model import result, scenarios
from syslogbench.model.settings import SettingsError

if TYPE_CHECKING:
    from syslogbench.host import onehost

# tcp-rate paces each sender at 1,000 msg/s: 2 x 2 senders x 10,000 messages send for 10 s whatever the
# machine's speed, so a fault drawn in the window lands mid-run.
PACED = {"SCENARIO": "tcp-rate", "HOSTS": "2", "SENDERS_PER_HOST": "2", "MESSAGES_PER_SENDER": "10000"}
# relay-pause: the last hop reads nothing for 5 s after the start, so its kill in the window lands mid-run.
RELAY = {"SCENARIO": "relay-pause", "HOSTS": "2", "SENDERS_PER_HOST": "2", "MESSAGES_PER_SENDER": "20000"}
# 100 connections of 400-byte messages sent all out (conn100 at 5 x 20 x 15,000), under the memory limit each
# profile's manifest gives as `oom_memory`. Many connections, because each costs the daemon memory of its
# own: at 2 x 2 syslog-ng 3.38 kept within 6 MiB (Docker's least), so no limit could kill it; and a daemon
# only just over its limit starves rather than dies, as the kernel kills the health check's exec instead.
# docs/faults.md has the limits tried.
OOM = {"SCENARIO": "conn100", "MESSAGES_PER_SENDER": "15000"}
# Long enough for a paced run and its DONE window on a loaded machine; a fault that stops the run (a pause,
# a cut network, a full disk) then ends in a timeout within this.
RUN_TIMEOUT = "45"
WINDOW = (0.5, 8.0)  # seconds after the start signal
RELAY_WINDOW = (0.5, 4.5)  # within relay-pause's 5 s pause: syslog-ng relays the rest in about 2 s after it
# The logs volume as a small tmpfs: 40,000 messages of about 100 bytes need 4 MB.
SMALL_LOGS = "volumes:\n  logs:\n    driver_opts: {type: tmpfs, device: tmpfs, o: 'size=1m'}\n"
# Every child of the supervisor (PID 1 in the daemon's container) but its sleeps: the daemon, SIGKILLed.
KILL_DAEMON = (
    'for s in /proc/[0-9]*/stat; do read -r p c _ pp _ < "$s" 2>/dev/null || continue; '
    '[ "$pp" = 1 ] && [ "$c" != "(sleep)" ] && kill -KILL "$p" && echo "$p $c"; done; true'
)


def default_profiles() -> list[str]:
    """One profile of each family of syslog daemons (their records' example_profile, daemons/_families/);
    read when asked, so a bad record is the command's one line, not an import's traceback."""
    return [family.example_profile for family in families.with_user_config()]


@dataclass(frozen=True)
class Target:
    """The containers of one run, by compose's names."""

    project: str
    daemon: str  # the daemon's service (its profile)
    hosts: int

    def container(self, service: str, index: int = 1) -> str:
        return f"{self.project}-{service}-{index}"


Inject = Callable[[Target, random.Random], tuple[list[str], str]]  # the command, and the container it hits


@dataclass
class Seen:
    """What the campaign itself saw of one run, to tell whether its fault landed."""

    began: float  # the clock of the events' moments: seconds since the epoch
    events: list[events.Event] = field(default_factory=list)  # the engine's, for the run's project
    printed: str = ""  # what the injection command printed
    logs_free: int | None = None  # the least free space seen on the logs volume, in bytes


@dataclass(frozen=True)
class Sign:
    """How the campaign knows a fault landed, from its own record of the run: find gives the evidence (one
    line for the campaign file), or None when there is none."""

    what: str  # what was looked for, said when it is missing
    find: Callable[[Target, str, Seen], str | None]


@dataclass(frozen=True)
class Kind:
    name: str
    what: str
    load: dict[str, str]
    # None: the fault is in the settings or the volume, there from the start.
    inject: Inject | None
    # What the result must say, given the container hit.
    says: Callable[[Target, str], str]
    landed: Sign
    compose_extra: str | None = None
    window: tuple[float, float] = WINDOW  # when, after the start signal, the fault may land
    # A fault there from the start that the campaign watches for itself while the run goes.
    watch: Callable[[Target, Callable[[], bool], Seen], None] | None = None


def injector(*args: str) -> Inject:
    """An injection `docker ARGS... CONTAINER` at a service's container (`generator` picks one at random)."""

    def inject(target: Target, rng: random.Random) -> tuple[list[str], str]:
        *command, service = args
        index = rng.randint(1, target.hosts) if service == "generator" else 1
        name = target.container(target.daemon if service == "daemon" else service, index)
        if command[-1] == "disconnect":
            return ["docker", *command, f"{target.project}_bench", name], name
        return ["docker", *command, name], name

    return inject


def kill_daemon_process(target: Target, rng: random.Random) -> tuple[list[str], str]:
    name = target.container(target.daemon)
    return ["docker", "exec", name, "sh", "-c", KILL_DAEMON], name


def engine_saw(action: str, detail: str = "") -> Sign:
    """The engine's event for the container hit, before any container of the run ended (compose's own
    stopping comes after that, and a fault that late did not disturb the run)."""
    what = (
        f"the engine's {action} event{f' ({events.SIGNALS[detail]})' if detail else ''} for the container hit"
    )

    def find(target: Target, hit: str, seen: Seen) -> str | None:
        for event in events.before_the_end(seen.events):
            if (event.name, event.action) == (hit, action) and detail in ("", event.detail):
                return "docker events: " + events.describe(event, seen.began)
        return None

    return Sign(what, find)


def process_killed(target: Target, hit: str, seen: Seen) -> str | None:
    """KILL_DAEMON prints the pid and name of each process it killed; nothing printed, nothing killed."""
    killed = seen.printed.split()
    return f"killed in {hit}: {' '.join(killed)}" if killed else None


def logs_filled(target: Target, hit: str, seen: Seen) -> str | None:
    if seen.logs_free is None or seen.logs_free >= contract.LOGS_FULL_BELOW_BYTES:
        return None
    return f"the logs volume had {seen.logs_free:,} bytes free (stat -f in {target.container('watcher')})"


def logs_free(target: Target) -> int | None:
    """The logs volume's free bytes, read in the watcher's container (it mounts it); None before the
    watcher is there, or after it is gone."""
    where = str(contract.LOG_DIR)
    command = ["docker", "exec", target.container("watcher"), "stat", "-f", "-c", "%a %S", where]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=DOCKER_TIMEOUT_S)
        blocks, size = (int(word) for word in done.stdout.split())
    except (subprocess.TimeoutExpired, ValueError):
        return None
    return blocks * size


def watch_logs(target: Target, alive: Callable[[], bool], seen: Seen) -> None:
    """The least free space on the logs volume while the run goes, until it is seen full."""
    while alive():
        free = logs_free(target)
        if free is not None:
            seen.logs_free = free if seen.logs_free is None else min(free, seen.logs_free)
            if free < contract.LOGS_FULL_BELOW_BYTES:
                return
        time.sleep(1.0)


PROCESS_KILLED = Sign("a process named by the kill in the daemon's container", process_killed)
LOGS_FILLED = Sign("the logs volume seen full from the watcher's container", logs_filled)
KILLED = engine_saw("kill", "9")

KINDS = {
    kind.name: kind
    for kind in (
        Kind("daemon-sigkill", "SIGKILL of the daemon process (its container lives on)", PACED,
             kill_daemon_process, lambda t, hit: "the daemon exited with code 137 (SIGKILL)", PROCESS_KILLED),
        Kind("daemon-kill", "`docker kill` of the daemon's container", PACED,
             injector("kill", "daemon"), lambda t, hit: f"{hit} exited with code 137", KILLED),
        Kind("daemon-pause", "`docker pause` of the daemon's container, never resumed", PACED,
             injector("pause", "daemon"), lambda t, hit: f"{hit} was still paused", engine_saw("pause")),
        Kind("daemon-oom", "CENTRAL_MEM at the profile's oom_memory: the kernel kills the daemon for memory",
             OOM, None, lambda t, hit: "the daemon was killed for memory: limit ", engine_saw("oom")),
        Kind("generator-kill", "`docker kill` of one generator's container", PACED,
             injector("kill", "generator"), lambda t, hit: f"{hit} exited with code 137", KILLED),
        Kind("generator-disconnect", "one generator's network disconnected", PACED,
             injector("network", "disconnect", "generator"), lambda t, hit: f"{hit} was disconnected",
             engine_saw("disconnect")),
        Kind("lasthop-kill", "`docker kill` of the last hop in a relay run", RELAY,
             injector("kill", "lasthop"), lambda t, hit: f"{hit} exited with code 137", KILLED,
             window=RELAY_WINDOW),
        Kind("logs-full", "the logs volume a 1 MiB tmpfs: it fills mid-run", PACED,
             None, lambda t, hit: "the logs volume is full", LOGS_FILLED, SMALL_LOGS, watch=watch_logs),
        Kind("watcher-sigterm", "SIGTERM to the watcher", PACED,
             injector("kill", "-s", "TERM", "watcher"), lambda t, hit: f"{hit} was sent SIGTERM",
             engine_saw("kill", "15")),
    )
}  # fmt: skip


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


def plan(runs: int, seed: int, names: list[str]) -> list[tuple[str, Kind]]:
    """(profile, kind) per run: the kinds in a shuffled cycle (so 9 runs cover every kind), profiles at
    random; a kind the profile cannot run (a relay on the baseline) is drawn again."""
    rng = random.Random(seed)
    chosen: list[tuple[str, Kind]] = []
    cycle: list[Kind] = []
    while len(chosen) < runs:
        if not cycle:
            cycle = rng.sample(list(KINDS.values()), len(KINDS))
        kind = cycle.pop()
        candidates = [name for name in names if supports(name, kind)]
        if candidates:
            chosen.append((rng.choice(candidates), kind))
    return chosen


def supports(profile_name: str, kind: Kind) -> bool:
    """The profile can run the kind's scenario, and for the OOM its manifest gives the memory to kill it."""
    profile = profiles.resolve(profile_name)
    if kind.name == "daemon-oom" and not profile.oom_memory:
        return False
    scenario = scenarios.load(kind.load.get("SCENARIO", "seed2014"))
    return not scenarios.unsupported(scenario, profile.features)


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
    chosen = run_plan.make(profile.profile, overrides, on)
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
        options = run_plan.RunOptions(show, build=False, extra_files=extra, project=project)
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
    outcome = check(number, profile.profile, kind, target, run_dir, moment, injected, hit, elapsed, bound,
                    codes, hung, seen)  # fmt: skip
    Compose(profile.profile, project, extra).down({}, stop_s=5, volumes=True, quiet=True)  # its volumes
    return outcome


def check(number: int, profile: str, kind: Kind, target: Target, run_dir: Path, moment: float | None,
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
    chosen = plan(runs, seed, names)
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
