"""`syslogbench check`: what `run` would decide before it starts any container, as one verdict.

Every problem found is listed at once (the profile, each setting, the scenario, the load), and the exit code is
the one `run` would give before any container: 2 for bad input, 4 for n/a, 0 when the run could start.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from syslogbench.contract import EXIT_CODES
from syslogbench.host import environment, profiles, resources
from syslogbench.host.log import log
from syslogbench.host.pairs import read_pairs
from syslogbench.model import scenarios, settings

T = TypeVar("T")
INPUT_ERRORS = (settings.SettingsError, profiles.ProfileError, scenarios.ScenarioError)


def collect(problems: list[str], step: Callable[[], T]) -> T | None:
    """step's value, or None with its problems added to the list."""
    try:
        return step()
    except INPUT_ERRORS as error:
        problems.extend(settings.items(error))
        return None


def stray_words(pairs: list[str]) -> list[str]:
    """Words among the KEY=VALUE arguments that are neither: a piece of a profile name split by a space
    (`make run PROFILE="rsyslog 8"` gives --profile rsyslog 8). An upper-case word (HOSTS) is a bad
    KEY=VALUE instead, and parse_overrides says so."""
    stray, previous = [], ""
    for word in pairs:
        key_without_value = "=" not in previous and previous.isupper()  # HOSTS 2: a bad pair, not a name
        if "=" not in word and not word.isupper() and not key_without_value:
            stray.append(word)
        previous = word
    return stray


def resolve(name: str, pairs: list[str]) -> profiles.Profile:
    """The profile, or a ProfileError that speaks of the profile, also when a space split its name."""
    table = profiles.names()
    stray = stray_words(pairs)
    if name in table and not stray:
        return table[name]
    spaced = " ".join([name, *stray])
    hint = profiles.did_you_mean(spaced, table)
    known = f". Known profiles: {', '.join(sorted(table))}"
    if " " in spaced:
        raise profiles.ProfileError(f"profile {spaced!r}: a profile name has no space{hint}{known}")
    raise profiles.ProfileError(f"unknown profile {name!r}{hint}{known}")


def check(profile_name: str, pairs: list[str]) -> int:
    """Log each problem, or the n/a reason, or ok with the notices; return the exit code `run` would give."""
    problems: list[str] = []
    profile = collect(problems, lambda: resolve(profile_name, pairs))
    stray = stray_words(pairs)  # said once, as the profile's problem
    pairs = [pair for pair in pairs if pair not in stray]
    overrides, bad = read_pairs(pairs)
    problems.extend(bad)
    found = collect(problems, lambda: environment.run_env(overrides))
    cfg = found[0] if found else None
    scenario = collect(problems, lambda: scenarios.load(cfg.scenario)) if cfg else None
    if problems:
        return refuse(problems)
    assert profile is not None and cfg is not None and scenario is not None
    if reasons := scenarios.unsupported(scenario, profile.features):
        log(f"n/a: {profile.profile} cannot run scenario {scenario.id}: {'; '.join(reasons)}")
        return EXIT_CODES["n/a"]
    if collect(problems, lambda: resources.check(cfg, scenario, profile, log)) is None and problems:
        return refuse(problems)
    log(f"ok: profile {profile.profile}, scenario {scenario.id}, {cfg.expected_messages:,} messages expected")
    if profile.registry_image:
        log(
            f"notice: {profile.profile} builds FROM the registry image {profile.registry_image}: needs Docker Hub"
        )
    for notice in environment.host_notices(cfg):
        log(f"notice: {notice}")
    return EXIT_CODES["pass"]


def refuse(problems: list[str]) -> int:
    if len(problems) == 1:
        log(f"error: {problems[0]}")
    else:
        log(f"error: {len(problems)} problems:\n  - " + "\n  - ".join(problems))
    return EXIT_CODES["bad-input"]
