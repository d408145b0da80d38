"""The command line's options, one function per command (argparse), and the checks of what the user gave
that need nothing but the value: a writable directory or file, a count, a list of profile names. Each refusal
is one line saying what to change (host/cli.py turns it into exit code 2)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from syslogbench.host.compose import ROOT
from syslogbench.model import capacity, settings

OVERRIDE_HELP = (
    "override a .env setting, or the scenario's shape (HOSTS, SENDERS_PER_HOST, MESSAGES_PER_SENDER)"
)


# -- options ---------------------------------------------------------------------------------------------------


def profile_option(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--profile",
        help="daemon profile (default: the one `profiles` marks default, whose manifest says default: true)",
    )
    cmd.set_defaults(profile_default=True)


def overrides_option(cmd: argparse.ArgumentParser, text: str = OVERRIDE_HELP) -> None:
    cmd.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help=text)


def results_option(cmd: argparse.ArgumentParser, writes: str) -> None:
    cmd.add_argument("--results", type=Path, default=ROOT / "results", help=f"results directory: {writes}")


def run_options(cmd: argparse.ArgumentParser) -> None:
    profile_option(cmd)
    results_option(cmd, "writes <results>/<run id>.json (default results/)")
    swarm_options(cmd)
    config_options(cmd)
    overrides_option(cmd)


def swarm_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--swarm", action="store_true", help="on the Docker Swarm the Docker CLI points at (docs/swarm.md)"
    )
    cmd.add_argument("--registry", help="with --swarm: push the images there, the nodes pull them")


def config_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--config",
        type=Path,
        metavar="PATH",
        help="your own rsyslog.conf or syslog-ng.conf (a file, or a directory with its includes) in place of "
        "the profile's; EXPECT_DROPPED=local7.* declares what it drops (docs/userconfig.md)",
    )
    cmd.add_argument(
        "--config-private", action="store_true", help="with --config: record its hash, not its text"
    )


def capacity_options(cmd: argparse.ArgumentParser) -> None:
    profile_option(cmd)
    cmd.add_argument("--scenario", help="the scenario whose transport and destination are searched")
    results_option(cmd, "writes <results>/capacity/<run id>.json (default results/)")
    swarm_options(cmd)
    config_options(cmd)
    overrides_option(cmd, f"{OVERRIDE_HELP}; or the search's: {', '.join(capacity.KEYS)} (docs/capacity.md)")


def compare_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--side",
        action="append",
        default=[],
        metavar="PROFILE[@TUNING]|PROFILE=CONFIG",
        help="a side (repeat it; the first is the one each is over): a profile at a tuning (default or tuned), "
        "or with your own config file",
    )
    cmd.add_argument("--scenario", help="the scenario every side runs (default: SCENARIO, seed2014)")
    cmd.add_argument(
        "--rounds", type=int, default=5, help="rounds, each every side once in a random order (default 5)"
    )
    cmd.add_argument(
        "--capacity",
        action="store_true",
        help="compare capacity searches (NDR, PDR), every round's searches at once, one trial at a time "
        "in a random order; SEARCH_MAX is then each search's own trials' time (docs/capacity.md)",
    )
    cmd.add_argument(
        "--duet",
        type=float,
        metavar="RATE",
        help="every side's daemon at once on the same core(s), each under its own senders at RATE msg/s (below "
        "saturation): each round one window of TRIAL_FINAL seconds, CPU per message and p99 paired by window "
        "(docs/compare.md)",
    )
    results_option(
        cmd,
        "writes <results>/compare/<id>.json, each run's result in <results>/compare/<id>/runs/ (a "
        "search's in .../searches/)",
    )
    overrides_option(cmd, f"{OVERRIDE_HELP}; with --capacity also the search's: {', '.join(capacity.KEYS)}")


def knobs_options(cmd: argparse.ArgumentParser) -> None:
    profile_option(cmd)
    cmd.add_argument("--scenario", help="the scenario every step runs (default: SCENARIO, seed2014)")
    cmd.add_argument(
        "--knob",
        action="append",
        default=[],
        metavar="NAME[=V1,V2]",
        help="a knob to try (repeat it), at its tuned value or at each value given, e.g. file-cache=10,64,256 "
        "(default: every knob of the family that applies; docs/tuning.md lists them)",
    )
    cmd.add_argument("--replicates", type=int, default=2, help="runs of each step, interleaved (default 2)")
    cmd.add_argument(
        "--capacity",
        action="store_true",
        help="also a capacity search of the first step and of the last (the search's keys as for capacity)",
    )
    cmd.add_argument(
        "--latency-rate",
        default="auto",
        metavar="RATE",
        help="each step's p99 latency from one capacity trial at this total msg/s (default auto: half the "
        "default step's drain rate; off: none)",
    )
    results_option(cmd, "writes <results>/knobs/<id>.json, each run's result in <results>/knobs/<id>/")
    overrides_option(cmd, f"{OVERRIDE_HELP}; with --capacity also the search's (docs/capacity.md)")


def check_options(cmd: argparse.ArgumentParser) -> None:
    profile_option(cmd)
    overrides_option(cmd)


def stack_options(cmd: argparse.ArgumentParser) -> None:
    profile_option(cmd)
    cmd.add_argument("--out", type=Path, help="where to write it (default: standard output)")
    cmd.add_argument("--registry", help="registry prefix of the images, e.g. registry.lab:5000")
    config_options(cmd)
    overrides_option(cmd)


def matrix_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--profiles", required=True, help="comma-separated profile names")
    cmd.add_argument("--replicates", type=int, default=3, help="runs of each profile (default 3)")
    cmd.add_argument("--fresh", action="store_true", help="rerun cells that already have a result")
    cmd.add_argument(
        "--warmup",
        type=int,
        default=0,
        help="first N runs of each profile, kept in RESULTS/warmup/ and not counted",
    )
    cmd.add_argument(
        "--capacity",
        action="store_true",
        help="a capacity search per profile and replicate instead of a run, for the scenario's transport "
        "(SCENARIO=udp; the search's keys as for capacity; docs/capacity.md)",
    )
    cmd.add_argument(
        "--tunings",
        metavar="default,tuned",
        help="runs only: each profile at each tuning, interleaved (docs/tuning.md); default: TUNING's one",
    )
    results_option(cmd, "one <run id>.json per run, or per search under capacity/ (default results/)")
    config_options(cmd)
    overrides_option(cmd)


def faults_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--runs", type=int, default=9, help="runs, one fault each (9 covers every kind once)")
    cmd.add_argument("--seed", type=int, default=1, help="draws the faults, the profiles and the moments")
    cmd.add_argument(
        "--profiles",
        help="comma-separated profiles (default: one of each daemon family, e.g. rsyslog8,syslog-ng)",
    )
    results_option(cmd, "writes <results>/faults/<id>.json")
    cmd.add_argument("--summary", type=Path, metavar="FILE", help="print a campaign file as a Markdown table")


def calibrate_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--messages", type=int, default=300000, help="messages per connection")
    cmd.add_argument("--connections", type=int, default=4, help="parallel connections (one remote host)")
    results_option(cmd, "writes <results>/calibration/<time>.json")


def fingerprint_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--times", type=int, default=1, help="how many fingerprints, one after the other")
    overrides_option(cmd, "CENTRAL_CPUS, CENTRAL_MEM (the daemon's limits it runs under)")


def setup_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--profile", action="append", help="profile to build (repeatable; default: all)")


def no_options(cmd: argparse.ArgumentParser) -> None:
    return None


def profiles_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--json",
        action="store_true",
        help="one JSON list of the profiles, aliases left out (for CI matrices)",
    )


# -- what the user gave, checked before anything starts ----------------------------------------------------------


def writable_dir(path: Path, option: str = "--results") -> Path:
    """A directory that exists or can be made, and written: else one line. A directory made to find out is
    removed again, so a command refused later leaves nothing behind."""
    made = [folder for folder in [path, *path.parents] if not folder.exists()]
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise settings.SettingsError(
            f"{option} {path}: is a file, not a directory: name a directory"
        ) from None
    except OSError as error:
        raise settings.SettingsError(
            f"{option} {path}: cannot be made ({error.strerror}): choose another"
        ) from None
    finally:
        for folder in made:  # deepest first
            if folder.is_dir():
                folder.rmdir()
    if not made and not os.access(path, os.W_OK | os.X_OK):
        raise settings.SettingsError(f"{option} {path}: cannot be written by this user: choose another")
    return path


def writable_file(path: Path, option: str = "--out") -> Path:
    """A file whose directory exists and can be written (nothing is created on the way)."""
    if path.is_dir():
        raise settings.SettingsError(
            f"{option} {path}: is a directory: name a file, e.g. {path / 'stack.yaml'}"
        )
    folder = path.parent
    if not folder.is_dir():
        raise settings.SettingsError(
            f"{option} {path}: the directory {folder} does not exist: create it first"
        )
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise settings.SettingsError(f"{option} {path}: cannot be written by this user: choose another path")
    return path


def at_least(option: str, value: int, low: int) -> int:
    if value < low:
        raise settings.SettingsError(f"{option} {value}: use {low} or more")
    return value


def profile_names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise settings.SettingsError(
            f"--profiles {text!r} names no profile: give a comma-separated list of `profiles` names"
        )
    return names
