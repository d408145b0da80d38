"""`syslogbench knobs`: what each knob of a daemon family buys, on one profile and scenario, in one run.

Each step is a burst run (as `run`) of a config rendered from the profile's template with the step's knobs
(host/tuning.py), the default step's with none, mounted where the image keeps its tuned config; a control step
runs the image's own default config, as `run` does. Steps alternate in a fresh random order each round (host/knobsteps.py). With --capacity, a
capacity search of the first step and of the last one follows. Everything goes into one file,
results/knobs/<id>.json, which the report reads; each run's own result is kept beside it, in
results/knobs/<id>/.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from statistics import median
from typing import TYPE_CHECKING

from syslogbench import contract
from syslogbench.host import (
    benchmark,
    dockerrun,
    environment,
    families,
    knobsteps,
    lock,
    render,
    runplan,
    setup,
)
from syslogbench.host import tuning as tunings
from syslogbench.host.capacity import command as capacity_command
from syslogbench.host.capacity import searchplan
from syslogbench.host.compose import project_name
from syslogbench.host.knobsteps import Step
from syslogbench.host.log import log
from syslogbench.model import capacity, machine, result
from syslogbench.model import knobs as knobs_model

if TYPE_CHECKING:
    from syslogbench.host.onehost import OneHost

CHECK_TIMEOUT_S = 60
SEED = 1  # the order of each round's steps
# --latency-rate auto: this share of the default step's median drain rate, every step at that one rate, so
# that each is below what the defaults hold (the default NDRs found were above their drain rates) and the
# steps differ in latency, not in load.
AUTO_SHARE = 0.5
LATENCY_WORDS = ("auto", "off")
# The search's settings a latency trial uses (model/capacity/settings.py KEYS): without --capacity, the others are refused.
LATENCY_KEYS = ("LATENCY_BOUND", "TRIAL_FINAL", "TRIAL_PAUSE", "DAEMON_CORES")


@dataclass
class StepRecord:
    """One step as the knob result keeps it: its knobs (with their values) and each of its runs."""

    name: str
    phase: str
    knobs: dict[str, str]
    runs: list[dict[str, object]] = field(default_factory=list)
    latency: dict[str, object] | None = None  # its trial at the study's fixed rate (model/knobs.py FixedRate)


@dataclass(frozen=True)
class Knobs:
    """What the command runs: the base plan (the profile's default), the family's knobs, the steps asked."""

    base: runplan.Plan
    knobs: tuple[tunings.Knob, ...]
    asked: dict[str, list[str | None]]
    replicates: int
    capacity: bool
    search_overrides: dict[str, str]
    latency: float | str = "auto"  # --latency-rate: msg/s in all, or "auto" or "off" (LATENCY_WORDS)


def latency_option(word: str) -> float | str:
    """--latency-rate: a total rate of at least RATE_MIN's default, or auto, or off; one line otherwise."""
    if word in LATENCY_WORDS:
        return word
    try:
        value = float(word)
    except ValueError:
        value = -1.0
    lowest = capacity.CapacitySettings().rate_min
    if not value >= lowest or value == float("inf"):
        raise tunings.TuningError(
            f"--latency-rate {word}: give msg/s in all senders, at least {lowest:,.0f}, or auto, or off"
        )
    return value


def make(profile: str, overrides: dict[str, str], words: list[str], replicates: int, searched: bool,
         latency: str, on: OneHost) -> Knobs:  # fmt: skip
    """Every bad input as one line, before any container: the profile, the settings, the knobs and their
    values, the fixed rate, and with --capacity the search's settings. on: this machine's compose (each step
    mounts a compose file of its own)."""
    fixed = latency_option(latency)
    if replicates < 1:
        raise tunings.TuningError(f"--replicates {replicates}: use 1 or more")
    if "TUNING" in overrides:
        raise tunings.TuningError("knobs sets TUNING itself, step by step: leave TUNING out")
    _, rest = capacity.split(overrides)
    search = {key: value for key, value in overrides.items() if key not in rest}
    latency_keys = LATENCY_KEYS if fixed != "off" else ()
    if not searched and (unused := sorted(set(search) - set(latency_keys))):
        also = f" (the latency trials take {', '.join(latency_keys)})" if latency_keys else ""
        raise tunings.TuningError(f"{', '.join(unused)}: settings of a capacity search; add --capacity{also}")
    base = runplan.make(profile, rest, on)
    if base.unsupported:
        said = "; ".join(base.unsupported)
        raise tunings.TuningError(f"{base.profile.profile} cannot run scenario {base.scenario.id}: {said}")
    if tunings.TUNINGS[-1] not in render.tunings(base.profile):
        raise tunings.TuningError(
            f"{base.profile.profile} has no knobs: the Debian versions of rsyslog and syslog-ng have (profiles)"
        )
    knobs = families.get(base.profile.daemon).knobs
    asked = knobsteps.parse_asked(words)
    knobsteps.alone_steps(knobs, render.target(base.profile, base.scenario), asked)  # refuses an unknown knob
    base.on.refuse_unfit(base)
    job = Knobs(base, knobs, asked, replicates, searched, search, fixed)
    if fixed != "off":
        latency_plan(
            job, tunings.DEFAULT, 1000.0 if fixed == "auto" else float(fixed)
        )  # its settings checked
    if searched:
        searchplan.plan(
            base.profile.profile, {**plan_overrides(job), **search}, base.on
        )  # its settings checked
    return job


def applied(job: Knobs, step: Step) -> tunings.Applied:
    if step.phase in ("default", "control"):
        return tunings.Applied(tunings.DEFAULT, {})
    return tunings.custom(job.knobs, render.target(job.base.profile, job.base.scenario), step.values)


def stage(job: Knobs, step: Step, folder: Path) -> tuple[Path, ...]:
    """The step's config and its knobs, and the compose file that mounts them where TUNING=tuned looks: every
    step's, the default's too, so that all steps run alike; the control runs the image's own."""
    chosen = applied(job, step)
    if step.phase == "control":
        return ()  # the image's own config, as `run` runs it
    profile, scenario = job.base.profile, job.base.scenario.id
    folder.mkdir(parents=True, exist_ok=True)
    conf, knobs = folder / f"{scenario}.conf", folder / f"{scenario}.yaml"
    conf.write_text(render.render(profile, job.base.scenario, chosen))
    knobs.write_text(render.knobs_text(profile, chosen))
    target = f"{contract.DAEMON_CONFIG_DIR}/{contract.TUNING_FOLDERS['tuned']}/{scenario}"
    override = folder / "override.yaml"
    override.write_text(
        f"services:\n  {profile.profile}:\n    volumes:\n"
        f"      - {conf.resolve()}:{target}.conf:ro\n      - {knobs.resolve()}:{target}.yaml:ro\n"
    )
    return (override,)


def syntax_check(job: Knobs, step: Step) -> None:
    """The daemon's own check of a step's config in the profile's image, before any run: the config goes in on
    standard input (a TLS config names the run's certificates, which exist only in a run: its daemon then says
    at its start)."""
    if step.phase in ("default", "control") or job.base.scenario.transport == "tls":
        return
    family = families.get(job.base.profile.daemon)
    inside = "/tmp/knobs.conf"
    text = render.render(job.base.profile, job.base.scenario, applied(job, step))
    check = ["sh", "-c", f'cat > {inside} && exec "$@"', "check", *family.check_command(inside)]
    command = dockerrun.offline_run(job.base.profile.image, check, stdin=True)
    try:
        done = subprocess.run(command, input=text, capture_output=True, text=True, timeout=CHECK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise tunings.TuningError(
            f"step {step.name}: {family.check_name} took over {CHECK_TIMEOUT_S} s"
        ) from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise tunings.TuningError(
            f"step {step.name}: {family.check_name} refused its config: {said[0]}: change the value"
        )


def all_together(job: Knobs, alone: list[Step]) -> list[Step]:
    """Every tuned knob tried alone, together at its first value: the together steps' configs are this one's
    parts, so the daemon checks it before any run (each together step is checked again once known)."""
    tuned = {knob.knob for knob in job.knobs if knob.tuned}
    values: dict[str, str | None] = {}
    for step in alone:
        if step.phase == "alone" and len(step.values) == 1 and set(step.values) <= tuned:
            values.setdefault(*next(iter(step.values.items())))
    return [Step("+".join(values), "together", values)] if len(values) > 1 else []


def checked_together(job: Knobs, steps: list[Step]) -> list[Step]:
    """The together steps up to the first whose config the daemon refuses (each builds on the one before)."""
    for index, step in enumerate(steps):
        try:
            syntax_check(job, step)
        except tunings.TuningError as refused:
            log(f"notice: {refused}; the chain ends before it")
            return steps[:index]
    return steps


def figures(path: Path, udp: bool = False) -> dict[str, object]:
    """What a step keeps of one run: its id, verdict, drain rate, CPU per message received, elapsed time, lost
    messages, and whether its rate counts: a run that passed; over UDP also one that lost datagrams, which
    drops are part of (its rate is what the daemon received; every run of an all-out UDP burst loses some)."""
    found = result.read(path)
    used, received = found.cpu.used_s, found.messages.received
    rate = found.throughput.msgs_per_s
    counted = found.verdict == "pass" or (udp and found.verdict == "loss" and received > 0)
    return {
        "run_id": found.run_id,
        "verdict": found.verdict,
        "msgs_per_s": rate,
        "cpu_us_per_msg": round(used / received * 1e6, 3) if used is not None and received else None,
        "elapsed_s": found.elapsed_s,
        "lost": found.messages.lost,
        "received": received,
        "counts": bool(counted and rate),
    }


def run_step(
    job: Knobs, step: Step, files: tuple[Path, ...], replicate: int, runs_dir: Path
) -> dict[str, object]:
    """One run of a step, with its staged compose files (none: the image's own default config)."""
    env = {"TUNING": tunings.TUNINGS[-1] if files else tunings.DEFAULT}
    options = runplan.RunOptions(lambda path: None, extra_env=env, build=False, extra_files=files)
    code, written = benchmark.run_kept(job.base, runs_dir, options)
    if written is None:
        return {"run_id": None, "verdict": "error", "exit_code": code, "replicate": replicate}
    shown = {**figures(written, job.base.scenario.transport == "udp"), "replicate": replicate}
    log(f"knobs: {step.name}, round {replicate}: {shown['verdict']}, {rate(shown['msgs_per_s'])} msg/s")
    return shown


def slug(name: str) -> str:
    return "".join(char if char.isalnum() or char in "-." else "_" for char in name)[:120]


def rate(value: object) -> str:
    return f"{value:,.0f}" if isinstance(value, (int, float)) else "-"


def passed(records: dict[str, StepRecord]) -> dict[str, list[float]]:
    """Each step's drain rates over its runs that count (figures): over TCP a run with loss drained nothing
    comparable."""
    return {
        name: [float(r["msgs_per_s"]) for r in rec.runs if r.get("counts") and r["msgs_per_s"]]
        for name, rec in records.items()
    }


def run_phase(job: Knobs, steps: list[Step], records: dict[str, StepRecord], folder: Path) -> None:
    runs_dir = folder / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    files = {}
    for step in steps:
        records[step.name] = StepRecord(step.name, step.phase, dict(applied(job, step).values))
        files[step.name] = stage(job, step, folder / "configs" / slug(step.name))  # once, for every round
    for replicate, step in knobsteps.rounds(steps, job.replicates, SEED + len(records)):
        records[step.name].runs.append(run_step(job, step, files[step.name], replicate, runs_dir))


def latency_plan(job: Knobs, tuning: str, rate: float) -> searchplan.Search:
    """The plan of a step's latency trial: the capacity search's shape and settings, RATE_MAX the fixed rate
    (the senders sized for it)."""
    given = {**job.search_overrides, "RATE_MAX": f"{rate:.0f}", "TUNING": tuning}
    return searchplan.plan(job.base.profile.profile, {**plan_overrides(job), **given}, job.base.on)


def fixed_rate(job: Knobs, rates: dict[str, list[float]]) -> float | None:
    """The study's fixed rate: as given, or AUTO_SHARE of the default step's median drain rate (rounded to
    three figures); None when off, or when the default step has no rate."""
    if job.latency == "off":
        return None
    if job.latency != "auto":
        return float(job.latency)
    found = rates.get(knobs_model.DEFAULT_STEP) or []
    if not found:
        return None
    wanted = median(found) * AUTO_SHARE
    return max(capacity.CapacitySettings().rate_min, float(f"{wanted:.3g}"))


def latency_of(found: capacity.Trial | str, rate: float) -> dict[str, object]:
    """What a step keeps of its latency trial (model/knobs.py FixedRate)."""
    if isinstance(found, str):
        return {"rate_msgs_per_s": rate, "error": found}
    cpu = found.daemon_cpu_s
    return {
        "rate_msgs_per_s": found.offered_msgs_per_s,
        "p50_ms": found.latency_ms.p50,
        "p99_ms": found.latency_ms.p99,
        "max_ms": found.latency_ms.max,
        "intended": found.intended,
        "received": found.received,
        "lost": found.lost,
        "late": found.late,
        "cpu_us_per_msg": round(cpu / found.received * 1e6, 3)
        if cpu is not None and found.received
        else None,
        "error": None,
    }


def latency_phase(
    job: Knobs, steps: list[Step], records: dict[str, StepRecord], folder: Path
) -> float | None:
    """Each step's trial at the study's fixed rate, on a rig of its own (the control's config is the default
    step's, so it has none); the rate, or None when there is none."""
    rate = fixed_rate(job, passed(records))
    if rate is None:
        return None
    for step in steps:
        if step.phase == "control":
            continue
        files = stage(job, step, folder / "configs" / slug(step.name))
        chosen = latency_plan(job, tunings.TUNINGS[-1] if files else tunings.DEFAULT, rate)
        found = capacity_command.fixed_rate(chosen, rate, folder, files)
        records[step.name].latency = latency_of(found, rate)
        said = found if isinstance(found, str) else f"p99 {found.latency_ms.p99} ms"
        log(f"knobs: {step.name} at {rate:,.0f} msg/s: {said}")
    return rate


def search(job: Knobs, step: Step, folder: Path) -> str | None:
    """A capacity search of one step: its result id, or None when it wrote none."""
    files = stage(job, step, folder / "configs" / slug(step.name))
    overrides = {**job.search_overrides, "TUNING": tunings.TUNINGS[-1] if files else tunings.DEFAULT}
    chosen = searchplan.plan(job.base.profile.profile, {**plan_overrides(job), **overrides}, job.base.on)
    before = set((folder / "capacity").glob("*.json"))
    record = applied(job, step).record(job.knobs)
    capacity_command.run(chosen, folder, build=False, extra_files=files, tuning=record)
    after = sorted(set((folder / "capacity").glob("*.json")) - before)
    return after[-1].stem if after else None


def plan_overrides(job: Knobs) -> dict[str, str]:
    """The base plan's settings as the command line gave them, for a search to take again."""
    given = {"SCENARIO": job.base.scenario.id}
    if job.base.cfg.variant != "default":
        given.update(HOSTS=str(job.base.cfg.hosts), SENDERS_PER_HOST=str(job.base.cfg.senders_per_host))
    return given


def command(job: Knobs, results_dir: Path) -> int:
    began = datetime.now(UTC)
    profile, scenario = job.base.profile, job.base.scenario
    kid = f"{result.run_id(began, profile.profile, None)}-{scenario.id}"
    folder = results_dir / "knobs" / kid
    setup.setup([profile.profile])
    folder.mkdir(parents=True, exist_ok=True)  # after the images: a command stopped before writes nothing
    alone = knobsteps.alone_steps(job.knobs, render.target(profile, scenario), job.asked)
    for step in [*alone, *all_together(job, alone)]:
        syntax_check(job, step)
    records: dict[str, StepRecord] = {}
    together: list[Step] = []
    searches: dict[str, str | None] = {}
    latency: list[float | None] = [None]
    try:
        with lock.project(project_name()):
            run_phase(job, alone, records, folder)
            together = checked_together(job, knobsteps.together_steps(job.knobs, alone, passed(records)))
            run_phase(job, together, records, folder)
        names = knobsteps.chain(job.knobs, alone, together, passed(records))
        latency[0] = latency_phase(job, [*alone, *together], records, folder)
        if job.capacity and len(names) > 1:
            by_name = {step.name: step for step in [*alone, *together]}
            for name in (names[0], names[-1]):
                searches[name] = search(job, by_name[name], folder)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the steps so far still make a result, which says so
        names = knobsteps.chain(job.knobs, alone, together, passed(records))
        write(job, kid, began, records, names, searches, results_dir, latency[0], "interrupted")
        raise
    path = write(job, kid, began, records, names, searches, results_dir, latency[0])
    print(table(records, names, latency[0]))
    log(f"knobs: {path}")
    verdicts = {run["verdict"] for rec in records.values() for run in rec.runs}
    return (
        contract.EXIT_CODES["pass"]
        if verdicts == {"pass"}
        else contract.EXIT_CODES["loss" if verdicts <= {"pass", "loss"} else "error"]
    )


def write(job: Knobs, kid: str, began: datetime, records: dict[str, StepRecord], names: list[str],
          searches: dict[str, str | None], results_dir: Path, latency: float | None = None,
          outcome: str = "done") -> Path:  # fmt: skip
    """results/knobs/<kid>.json, through the model the report reads it with (model/knobs.py): a document it
    would refuse is never written. outcome: "done", or "interrupted" (Ctrl-C or SIGTERM: the steps with the
    runs made so far)."""
    rates = passed(records)
    data = {
        "kind": knobs_model.KIND,
        "id": kid,
        "outcome": outcome,
        "profile": job.base.profile.profile,
        "daemon": job.base.profile.daemon,
        "daemon_version": job.base.profile.version,
        "scenario": job.base.scenario.id,
        "started_utc": result.utc(began),
        "finished_utc": result.utc(datetime.now(UTC)),
        "replicates": job.replicates,
        # The Docker version as a run's result has it, so that the report sees the runs' machine.
        "machine": asdict(machine.host_facts(docker_version=environment.docker_version())),
        "knobs": {
            k.knob: {
                "param": k.param,
                "default": k.default,
                "tuned": k.tuned,
                "source": k.source,
                "trades": k.trades,
            }
            for k in job.knobs
        },  # fmt: skip
        "steps": [asdict(rec) | {"gain": knobsteps.gain(rates, name)} for name, rec in records.items()],
        "chain": names,
        "shares": knobsteps.shares(names, rates),
        "capacity": searches,
        "latency_rate": latency,
    }
    path = results_dir / "knobs" / f"{kid}.json"
    path.write_text(json.dumps(knobs_model.result_from_dict(data).to_dict(), indent=1, sort_keys=True) + "\n")
    return path


def p99(record: StepRecord) -> str:
    found = record.latency or {}
    value = found.get("p99_ms")
    return "-" if value is None else f"{value:.2f}"


def table(records: dict[str, StepRecord], names: list[str], latency: float | None = None) -> str:
    rates = passed(records)
    shares = knobsteps.shares(names, rates)
    at = "" if latency is None else f" {'p99 ms':>8}"
    rows = [f"{'step':<48} {'phase':<9} {'runs':>4} {'median msg/s':>13} {'x default':>9} {'share':>7}{at}"]
    for name, rec in records.items():
        found = rates.get(name) or []
        middle = median(found) if found else None
        times = knobsteps.gain(rates, name)
        share = shares.get(name)
        rows.append(
            f"{name[:48]:<48} {rec.phase:<9} {len(found):>2}/{len(rec.runs):<1} {rate(middle):>13} "
            f"{'-' if times is None else f'{times:.2f}':>9} {'-' if share is None else f'{share:.0%}':>7}"
            + ("" if latency is None else f" {p99(rec):>8}")
        )
    if latency is not None:
        rows.append(f"p99 ms: of each step's TRIAL_FINAL trial at {latency:,.0f} msg/s (--latency-rate)")
    return "\n".join(rows)
