"""The syslogbench command: it parses the command line and hands each command to its module (COMMANDS).

Every error a user can cause ends in one line saying what to change, and exit code 2, before any container
starts; Ctrl-C and SIGTERM end in one line each and their own codes (contract.EXIT_CODES, README).
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from syslogbench.contract import EXIT_CODES, MEANINGS
from syslogbench.host import (
    benchmark,
    calibrate,
    check,
    compare,
    environment,
    faults,
    fingerprintcontainer,
    images,
    knobs,
    matrix,
    onehost,
    options,
    pairs,
    profiles,
    render,
    runplan,
    setup,
    stack,
    swarm,
)
from syslogbench.host.capacity import searchplan
from syslogbench.host.capacity.command import run as run_search
from syslogbench.host.compose import ROOT
from syslogbench.host.log import log
from syslogbench.model import capacity, result, scenarios, settings

Show = Callable[[Path], None]
Report = Callable[[list[str]], int]
DESCRIPTION = (
    "A reproducible benchmark matrix for syslog daemons on Docker Compose: each run sends syslog from "
    "generator containers to one daemon, checks every message against the senders' ledgers, and writes a "
    "result file with a verdict (docs/running.md)."
)
INPUT_ERRORS = (
    settings.SettingsError,
    profiles.ProfileError,
    images.SetupError,
    scenarios.ScenarioError,
    capacity.CapacityError,
)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C is, so that every clean-up written for Ctrl-C (containers stopped and
    removed, a matrix's note on how to resume) runs for it too."""


@dataclass(frozen=True)
class Wiring:
    """What the caller plugs in: the report's renderers (host may not import the report, __main__ does)."""

    show: Show = benchmark.show_path
    report: Report | None = None


@dataclass(frozen=True)
class Command:
    help: str  # says what the command writes
    options: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Wiring], int]
    passthrough: bool = False  # its own parser reads every argument after its name


def overrides_of(args: argparse.Namespace) -> dict[str, str]:
    """The KEY=VALUE arguments; a profile name split by a space is said to be the profile's problem."""
    if getattr(args, "profile", None) is not None:
        runplan.resolve(args.profile, args.overrides)
    return pairs.parse_overrides(args.overrides)


def orchestrator(args: argparse.Namespace) -> runplan.Orchestrator:
    """Compose on this machine, or the swarm (--swarm): chosen here, once, for every command (a command
    without --swarm runs on this machine)."""
    registry = getattr(args, "registry", None)
    if registry and not getattr(args, "swarm", True):
        raise settings.SettingsError("--registry is for --swarm: the nodes pull the images from it")
    return swarm.Swarm(registry) if getattr(args, "swarm", False) else onehost.OneHost()


def one_host(args: argparse.Namespace, command: str) -> onehost.OneHost:
    """The orchestrator of a command that runs on this machine only (it mounts compose files of its own,
    builds here, or injects faults with the Docker CLI): a swarm is refused in one line, before any container."""
    on = orchestrator(args)
    if not isinstance(on, onehost.OneHost):
        raise settings.SettingsError(f"{command} runs on this machine only (compose): leave --swarm out")
    return on


def config_of(args: argparse.Namespace) -> runplan.Config | None:
    """--config PATH and whether --config-private keeps its text out of the result."""
    if args.config_private and not args.config:
        raise settings.SettingsError("--config-private is for --config PATH")
    return (args.config, args.config_private) if args.config else None


def plan_of(args: argparse.Namespace, overrides: dict[str, str]) -> runplan.Plan:
    return runplan.make(args.profile, overrides, orchestrator(args), config_of(args), args.overrides)


# -- the commands ---------------------------------------------------------------------------------------------


def run_command(args: argparse.Namespace, wiring: Wiring) -> int:
    overrides = overrides_of(args)
    options.writable_dir(args.results)
    return benchmark.run(plan_of(args, overrides), args.results, runplan.RunOptions(wiring.show))


def capacity_command(args: argparse.Namespace, wiring: Wiring) -> int:
    overrides = with_scenario(args)  # the search's keys are not run settings: searchplan.plan splits them
    on = orchestrator(args)
    results = options.writable_dir(args.results)
    config = config_of(args)
    try:
        return run_search(searchplan.plan(args.profile, overrides, on, config), results)
    except searchplan.Unsupported as reason:  # as run and check say it: n/a, not bad input
        log(f"n/a: {reason}")
        return EXIT_CODES["n/a"]


def one_scenario(option: str, overrides: dict[str, str]) -> None:
    given = overrides.get("SCENARIO", option)
    if given != option:
        raise settings.SettingsError(
            f"--scenario {option} and SCENARIO={given} name two scenarios: give one of them"
        )


def with_scenario(args: argparse.Namespace) -> dict[str, str]:
    """The KEY=VALUE arguments, with --scenario as SCENARIO (the two naming one scenario)."""
    overrides = overrides_of(args)
    if args.scenario:
        one_scenario(args.scenario, overrides)
        overrides["SCENARIO"] = args.scenario
    return overrides


def compare_command(args: argparse.Namespace, wiring: Wiring) -> int:
    overrides = with_scenario(args)
    results = options.writable_dir(args.results)
    if args.capacity and args.duet is not None:
        raise compare.CompareError(
            "give --capacity or --duet RATE, not both: a duet runs every side at one rate"
        )
    on = one_host(args, "compare")
    try:
        sides = compare.make(args.side, overrides, args.rounds, on, args.capacity, args.duet)
    except searchplan.Unsupported as reason:
        raise compare.CompareError(str(reason)) from None
    return compare.command(sides, args.rounds, results, on, args.duet)


def capacity_matrix(args: argparse.Namespace, names: list[str], overrides: dict[str, str]) -> int:
    """`matrix --capacity`: one capacity comparison of every profile, interleaved trial by trial and paired
    into ratios over the first (docs/capacity.md); what only a matrix of runs takes is refused in one line."""
    for flag, given, why in (
        ("--warmup", args.warmup, "each capacity search warms up with its own first trial"),
        ("--tunings", args.tunings, "give a capacity matrix TUNING=tuned instead"),
        ("--fresh", args.fresh, "a capacity matrix is one comparison, searched whole each time"),
        ("--config", args.config, "a capacity matrix takes profiles only; search a config alone with capacity "
                                  "--config"),
    ):  # fmt: skip
        if given:
            raise settings.SettingsError(f"{flag} is for a matrix of runs: {why}")
    on = one_host(args, "matrix --capacity")
    sides = compare.profiles(names, overrides, args.replicates, on)
    return compare.command(sides, args.replicates, options.writable_dir(args.results), on)


def knobs_command(args: argparse.Namespace, wiring: Wiring) -> int:
    overrides = with_scenario(args)
    results = options.writable_dir(args.results)
    on = one_host(args, "knobs")
    job = knobs.make(
        args.profile, overrides, args.knob, args.replicates, args.capacity, args.latency_rate, on
    )
    return knobs.command(job, results)


def check_command(args: argparse.Namespace, wiring: Wiring) -> int:
    return check.check(args.profile, args.overrides, orchestrator(args))


def stack_command(args: argparse.Namespace, wiring: Wiring) -> int:
    overrides = overrides_of(args)
    out = options.writable_file(args.out) if args.out is not None else None
    chosen = plan_of(args, overrides)
    version = environment.docker_version()
    text = stack.plan_text(chosen, registry=args.registry, docker_version=version)
    if out is None:
        print(text, end="")
        return EXIT_CODES["pass"]
    out.write_text(text)
    log(f"wrote {out}: docker stack deploy -c {out} NAME (docs/swarm.md)")
    return EXIT_CODES["pass"]


def matrix_command(args: argparse.Namespace, wiring: Wiring) -> int:
    names = options.profile_names(args.profiles)
    overrides = pairs.parse_overrides(args.overrides)
    options.writable_dir(args.results)
    on = orchestrator(args)
    if args.capacity:
        return capacity_matrix(args, names, overrides)
    return matrix.run_matrix(
        names,
        args.replicates,
        overrides,
        args.results,
        args.fresh,
        on,
        show=wiring.show,
        warmup=args.warmup,
        config=config_of(args),
        tunings=args.tunings.split(",") if args.tunings else None,
    )


def faults_command(args: argparse.Namespace, wiring: Wiring) -> int:
    if args.summary:
        print(faults.summary(args.summary))
        return EXIT_CODES["pass"]
    options.at_least("--runs", args.runs, 1)
    options.writable_dir(args.results)
    names = options.profile_names(args.profiles) if args.profiles is not None else faults.default_profiles()
    return faults.campaign(args.runs, args.seed, names, args.results, one_host(args, "faults"))


def calibrate_command(args: argparse.Namespace, wiring: Wiring) -> int:
    options.at_least("--messages", args.messages, 1)
    options.at_least("--connections", args.connections, 1)
    options.writable_dir(args.results)  # before set-up builds anything
    return calibrate.main(args.messages, args.connections, args.results)


# The fingerprint runs under the daemon's limits, and uses no other setting.
FINGERPRINT_KEYS = ("CENTRAL_CPUS", "CENTRAL_MEM")


def fingerprint_command(args: argparse.Namespace, wiring: Wiring) -> int:
    options.at_least("--times", args.times, 1)
    overrides = pairs.parse_overrides(args.overrides)
    if unused := sorted(set(overrides) - set(FINGERPRINT_KEYS)):
        raise settings.SettingsError(
            f"{', '.join(unused)}: fingerprint does not use them (it runs under {' and '.join(FINGERPRINT_KEYS)} "
            "alone); they are for run, check and matrix"
        )
    cfg, _ = environment.run_env(overrides)
    return fingerprintcontainer.main(cfg, args.times, log)


def setup_command(args: argparse.Namespace, wiring: Wiring) -> int:
    if args.profile:
        setup.setup(args.profile)
    else:  # every profile: those that need an unreachable registry are left out, with a notice
        setup.setup([p.profile for p in profiles.all_profiles()], skip_unreachable=True)
    return EXIT_CODES["pass"]


def report_command(args: argparse.Namespace, wiring: Wiring) -> int:
    if wiring.report is None:
        raise settings.SettingsError("the report is run as `python -m syslogbench report`")
    return wiring.report(args.rest)


def render_command(args: argparse.Namespace, wiring: Wiring) -> int:
    for path in render.render_all():
        log(f"rendered {path.relative_to(ROOT)}")
    return EXIT_CODES["pass"]


def profile_table() -> list[dict[str, str | bool]]:
    """Each profile once (no aliases), from the manifests: the GitHub Actions matrix is built from this.
    debootstrap: its base has no pinned digest (images/bases.yaml), so set-up builds it with debootstrap, which
    needs root, even where a registry answers."""
    bases = images.load_bases()
    return [
        {
            "profile": p.profile,
            "daemon": p.daemon,
            "version": p.version,
            "debootstrap": p.suite is not None and bases[p.suite].pinned is None,
        }
        for p in sorted(profiles.all_profiles(), key=lambda p: p.profile)
    ]


def profiles_command(args: argparse.Namespace, wiring: Wiring) -> int:
    if args.json:
        print(json.dumps(profile_table()))
        return EXIT_CODES["pass"]
    default = profiles.default_name()
    for name, profile in sorted(profiles.names().items()):
        origin = f"Debian {profile.suite}" if profile.suite else f"registry image {profile.registry_image}"
        mark = " default" if name == default else ""
        print(f"{name:16} {profile.daemon} {profile.version} ({origin}){mark}")
    return EXIT_CODES["pass"]


COMMANDS: dict[str, Command] = {
    "run": Command(
        "run one benchmark: writes results/<run id>.json and prints its result",
        options.run_options,
        run_command,
    ),
    "check": Command(
        "check a profile, the settings and the scenario as `run` would, starting nothing and writing nothing: "
        "exit 0 (would run), 2 (every problem listed) or 4 (n/a)",
        options.check_options,
        check_command,
    ),
    "capacity": Command(
        "search the highest rate the daemon holds (NDR, PDR) and its latency: writes "
        "results/capacity/<run id>.json and prints a table",
        options.capacity_options,
        capacity_command,
    ),
    "knobs": Command(
        "what each knob buys: one profile and scenario from the package's defaults to tuned, one knob at a "
        "time, interleaved: writes results/knobs/<id>.json and prints a table",
        options.knobs_options,
        knobs_command,
    ),
    "compare": Command(
        "two or more sides (PROFILE, PROFILE@tuned, PROFILE=CONFIG) over one scenario's burst, interleaved in "
        "rounds with an A/A control, paired into ratios: writes results/compare/<id>.json and prints a table",
        options.compare_options,
        compare_command,
    ),
    "stack": Command(
        "write a stack file for docker stack deploy (Docker Swarm) to --out, or print it",
        options.stack_options,
        stack_command,
    ),
    "matrix": Command(
        "profiles x replicates, interleaved and resumable: one result file per run in --results",
        options.matrix_options,
        matrix_command,
    ),
    "faults": Command(
        "small runs, each with one fault injected; writes <results>/faults/<id>.json with every run's invariants",
        options.faults_options,
        faults_command,
    ),
    "calibrate": Command(
        "our sender vs loggen, each into a discarding sink: writes <results>/calibration/<time>.json",
        options.calibrate_options,
        calibrate_command,
    ),
    "fingerprint": Command(
        "time this machine's fingerprint as a run does, and its spread: prints it, writes no file",
        options.fingerprint_options,
        fingerprint_command,
    ),
    "setup": Command(
        "install Compose v2 if missing, make the base images, build the images: writes Docker images only",
        options.setup_options,
        setup_command,
    ),
    "report": Command(
        "the report from the result files: Markdown to standard output, or with --out DIR, DIR/report.md, "
        "DIR/report.html and DIR/plots/ (`report --help` for its options)",
        options.no_options,
        report_command,
        passthrough=True,
    ),
    "render": Command(
        "from the manifests: every daemon config, compose.daemons.yaml and compose.profiles.yaml",
        options.no_options,
        render_command,
    ),
    "profiles": Command(
        "list the profile names and where each image comes from: prints them, writes nothing",
        options.profiles_options,
        profiles_command,
    ),
}


def epilog() -> str:
    codes = "\n".join(f"  {code:>3}  {name}: {MEANINGS[name]}" for name, code in EXIT_CODES.items())
    return f"exit codes (the same for every command; contract.EXIT_CODES):\n{codes}"


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m syslogbench",
        description=textwrap.fill(DESCRIPTION, 100),
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        cmd = sub.add_parser(
            name, help=command.help, description=command.help, add_help=not command.passthrough
        )
        command.options(cmd)
    return top


def parse(argv: list[str]) -> argparse.Namespace:
    """A passthrough command (the report) gets every argument after its name untouched. KEY=VALUE pairs may
    come before and after the options (`run HOSTS=2 --config F EXPECT_DROPPED=...`): argparse takes only the
    first run of them as the positional list, so the later ones are added to it here."""
    if argv[:1] and argv[0] in COMMANDS and COMMANDS[argv[0]].passthrough:
        return argparse.Namespace(command=argv[0], rest=argv[1:])
    top = parser()
    args, extra = top.parse_known_args(argv)
    pairs = [word for word in extra if "=" in word and not word.startswith("-")]
    if extra and (extra != pairs or not hasattr(args, "overrides")):
        top.error(f"unrecognized arguments: {' '.join(extra)}")
    if pairs:
        args.overrides = [*args.overrides, *pairs]
    return args


def terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def main(argv: list[str], show: Show = benchmark.show_path, report: Report | None = None) -> int:
    """show prints a run's result and report renders the report; both come from the caller
    (syslogbench.__main__), since host may not import the report."""
    args = parse(argv)
    # A SIGTERM (kill, a CI job cancelled) ends a command as Ctrl-C does: its containers stopped and removed.
    signal.signal(signal.SIGTERM, terminate)
    try:
        if getattr(args, "profile_default", False) and args.profile is None:
            args.profile = profiles.default_name()  # read here, where a broken manifest is one line
        return COMMANDS[args.command].run(args, Wiring(show, report))
    except Terminated:
        log("stopped by SIGTERM: whatever this command had started was stopped and removed")
        return EXIT_CODES["terminated"]
    except KeyboardInterrupt:
        log("interrupted (Ctrl-C): whatever this command had started was stopped and removed")
        return EXIT_CODES["interrupted"]
    except INPUT_ERRORS as error:
        log(f"error: {error}")
        return EXIT_CODES["bad-input"]
    except result.ResultError as error:  # a result file from another version, or damaged
        log(f"error: {error}")
        return EXIT_CODES["error"]
    except (
        subprocess.CalledProcessError
    ) as error:  # a build or a Docker command failed: a tool, not the input
        said = (error.stderr or "").strip().splitlines() if isinstance(error.stderr, str) else []
        log(f"error: {' '.join(map(str, error.cmd))} failed with exit code {error.returncode}")
        if said:
            log(f"error: it said: {said[-1]}")
        return EXIT_CODES["error"]
    except OSError as error:  # a path the checks above could not foresee (a full disk, a permission)
        where = f" {error.filename}" if error.filename else ""
        log(f"error:{where}: {error.strerror or error}")
        return EXIT_CODES["error"]
