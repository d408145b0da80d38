"""The syslogbench command: it parses the command line and hands each command to its module.

python -m syslogbench run --profile rsyslog8 [KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from syslogbench.contract import EXIT_CODES
from syslogbench.host import (
    benchmark,
    calibrate,
    faults,
    fingerprint,
    images,
    matrix,
    profiles,
    render,
    search,
    stack,
    swarm,
)
from syslogbench.host.benchmark import DEFAULT_PROFILE, ROOT, log
from syslogbench.model import capacity, result, scenarios, settings

Show = Callable[[Path], None]
OVERRIDE_HELP = (
    "override a .env setting, or the scenario's shape (HOSTS, SENDERS_PER_HOST, MESSAGES_PER_SENDER)"
)


def profile_table() -> list[dict[str, str]]:
    """Each profile once (no aliases), from the manifests: the GitHub Actions matrix is built from this."""
    return [
        {"profile": p.profile, "daemon": p.daemon, "version": p.version}
        for p in sorted(profiles.all_profiles(), key=lambda p: p.profile)
    ]


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="syslogbench", description=__doc__.splitlines()[0])
    sub = top.add_subparsers(dest="command", required=True)
    for name, text in (
        ("run", "run one benchmark and print its result"),
        ("check", "validate settings only"),
    ):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument(
            "--profile", default=DEFAULT_PROFILE, help=f"daemon profile (default {DEFAULT_PROFILE})"
        )
        cmd.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help=OVERRIDE_HELP)
        if name == "run":
            cmd.add_argument("--results", type=Path, default=ROOT / "results", help="where results go")
            cmd.add_argument(
                "--swarm",
                action="store_true",
                help="on the Docker Swarm the Docker CLI points at (docs/swarm.md)",
            )
            cmd.add_argument("--registry", help="with --swarm: push the images there, the nodes pull them")
    cmd = sub.add_parser(
        "capacity", help="search the highest rate the daemon holds (NDR, PDR) and its latency"
    )
    cmd.add_argument("--profile", default=DEFAULT_PROFILE, help=f"daemon profile (default {DEFAULT_PROFILE})")
    cmd.add_argument("--scenario", help="the scenario whose transport and destination are searched")
    cmd.add_argument(
        "--results", type=Path, default=ROOT / "results", help="writes <results>/capacity/<id>.json"
    )
    cmd.add_argument(
        "overrides", nargs="*", metavar="KEY=VALUE", help=f"{OVERRIDE_HELP}; or {', '.join(capacity.KEYS)}"
    )
    cmd = sub.add_parser("stack", help="write a stack file for docker stack deploy (Docker Swarm)")
    cmd.add_argument("--profile", default=DEFAULT_PROFILE, help=f"daemon profile (default {DEFAULT_PROFILE})")
    cmd.add_argument("--out", type=Path, help="where to write it (default: standard output)")
    cmd.add_argument("--registry", help="registry prefix of the images, e.g. registry.lab:5000")
    cmd.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help=OVERRIDE_HELP)
    cmd = sub.add_parser("matrix", help="profiles x replicates, interleaved and resumable")
    cmd.add_argument("--profiles", required=True, help="comma-separated profile names")
    cmd.add_argument("--replicates", type=int, default=3)
    cmd.add_argument("--fresh", action="store_true", help="rerun cells that already have a result")
    cmd.add_argument(
        "--warmup",
        type=int,
        default=0,
        help="first N runs of each profile, kept in RESULTS/warmup/ and not counted",
    )
    cmd.add_argument("--results", type=Path, default=ROOT / "results")
    cmd.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help=OVERRIDE_HELP)
    cmd = sub.add_parser(
        "faults", help="small runs, each with one fault injected; checks every run's invariants"
    )
    cmd.add_argument("--runs", type=int, default=9, help="runs, one fault each (9 covers every kind once)")
    cmd.add_argument("--seed", type=int, default=1, help="draws the faults, the profiles and the moments")
    cmd.add_argument("--profiles", default=",".join(faults.DEFAULT_PROFILES), help="comma-separated profiles")
    cmd.add_argument(
        "--results", type=Path, default=ROOT / "results", help="writes <results>/faults/<id>.json"
    )
    cmd.add_argument("--summary", type=Path, metavar="FILE", help="print a campaign file as a Markdown table")
    cmd = sub.add_parser("calibrate", help="our sender vs loggen, each into a discarding sink")
    cmd.add_argument("--messages", type=int, default=300000, help="messages per connection")
    cmd.add_argument("--connections", type=int, default=4, help="parallel connections (one remote host)")
    cmd.add_argument("--results", type=Path, default=ROOT / "results")
    cmd = sub.add_parser("fingerprint", help="time this machine's fingerprint (as a run does) and its spread")
    cmd.add_argument("--times", type=int, default=1, help="how many fingerprints, one after the other")
    cmd.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="CENTRAL_CPUS, CENTRAL_MEM, ...")
    cmd = sub.add_parser("setup", help="install Compose v2 if needed, make base images, build daemon images")
    cmd.add_argument("--profile", action="append", help="profile to build (repeatable; default: all)")
    cmd = sub.add_parser("report", help="Markdown table over results/")
    cmd.add_argument("args", nargs=argparse.REMAINDER)
    sub.add_parser("render", help="render every daemon config from its template")
    cmd = sub.add_parser("profiles", help="list the profile names")
    cmd.add_argument(
        "--json",
        action="store_true",
        help="one JSON list of the profiles, aliases left out (for CI matrices)",
    )
    return top


def interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: list[str], show: Show = benchmark.show_path) -> int:
    """show prints a run's result; the report's renderer is passed in by the caller (syslogbench.__main__)."""
    args = parser().parse_args(argv)
    # A SIGTERM (kill, a CI job cancelled) ends a run as Ctrl-C does: its containers are stopped and removed.
    signal.signal(signal.SIGTERM, interrupt)
    try:
        return dispatch(args, show)
    except KeyboardInterrupt:
        log("interrupted: the run's containers were stopped and removed")
        return benchmark.INTERRUPTED  # 128 + SIGINT, as a shell reports Ctrl-C
    except (
        settings.SettingsError,
        profiles.ProfileError,
        images.SetupError,
        scenarios.ScenarioError,
        capacity.CapacityError,
    ) as error:
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


def write_stack(args: argparse.Namespace) -> int:
    profile = profiles.resolve(args.profile)
    cfg, _ = benchmark.run_env(benchmark.parse_overrides(args.overrides))
    text = stack.render(profile, cfg, registry=args.registry, docker_version=benchmark.docker_version())
    if args.out is None:
        print(text, end="")
        return 0
    args.out.write_text(text)
    log(f"wrote {args.out}: docker stack deploy -c {args.out} NAME (docs/swarm.md)")
    return 0


def dispatch(args: argparse.Namespace, show: Show) -> int:
    if args.command == "run" and args.registry and not args.swarm:
        raise settings.SettingsError("--registry is for --swarm: the nodes pull the images from it")
    if args.command == "run" and args.swarm:
        overrides = benchmark.parse_overrides(args.overrides)
        return swarm.run(args.profile, overrides, args.results, args.registry, show=show)
    if args.command == "run":
        return benchmark.run(args.profile, benchmark.parse_overrides(args.overrides), args.results, show=show)
    if args.command == "matrix":
        names = [name.strip() for name in args.profiles.split(",") if name.strip()]
        overrides = benchmark.parse_overrides(args.overrides)
        return matrix.run_matrix(
            names, args.replicates, overrides, args.results, args.fresh, show=show, warmup=args.warmup
        )
    if args.command == "capacity":
        overrides = benchmark.parse_overrides(args.overrides)
        if args.scenario:
            overrides["SCENARIO"] = args.scenario
        return search.run(args.profile, overrides, args.results)
    if args.command == "stack":
        return write_stack(args)
    if args.command == "fingerprint":
        if args.times < 1:
            raise settings.SettingsError(f"--times {args.times}: use 1 or more")
        cfg, _ = benchmark.run_env(benchmark.parse_overrides(args.overrides))
        return fingerprint.main(cfg, args.times, log)
    if args.command == "faults" and args.summary:
        print(faults.summary(args.summary))
        return 0
    if args.command == "faults":
        names = [name.strip() for name in args.profiles.split(",") if name.strip()]
        return faults.campaign(args.runs, args.seed, names, args.results)
    if args.command == "calibrate":
        return calibrate.main(args.messages, args.connections, args.results)
    if args.command == "check":
        benchmark.check(args.profile, benchmark.parse_overrides(args.overrides))
    elif args.command == "setup":
        if args.profile:
            benchmark.setup(args.profile)
        else:  # every profile: those that need an unreachable registry are left out, with a notice
            benchmark.setup([p.profile for p in profiles.all_profiles()], skip_unreachable=True)
    elif args.command == "render":
        for path in render.render_all():
            log(f"rendered {path.relative_to(ROOT)}")
    elif args.command == "profiles" and args.json:
        print(json.dumps(profile_table()))
    elif args.command == "profiles":
        for name, profile in sorted(profiles.names().items()):
            origin = (
                f"Debian {profile.suite}" if profile.suite else f"registry image {profile.registry_image}"
            )
            print(f"{name:16} {profile.daemon} {profile.version} ({origin})")
    return 0
