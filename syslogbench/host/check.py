"""`syslogbench check`: what `run` would decide before it starts any container, as one verdict.

Every problem found is listed at once (the profile, each setting, the scenario, the load), and the exit code is
the one `run` would give before any container: 2 for bad input, 4 for n/a, 0 when the run could start.
"""

from __future__ import annotations

from syslogbench.contract import EXIT_CODES
from syslogbench.host import environment, runplan
from syslogbench.host.log import log
from syslogbench.host.pairs import read_pairs
from syslogbench.model import settings


def check(profile_name: str, pairs: list[str], on: runplan.Orchestrator) -> int:
    """Log each problem, or the n/a reason, or ok with the notices; return the exit code `run` would give on
    the orchestrator the command line chose."""
    stray = runplan.stray_words(pairs)  # said once, as the profile's problem
    overrides, bad = read_pairs([pair for pair in pairs if pair not in stray])
    try:
        chosen = runplan.make(profile_name, overrides, on, pairs=pairs)
    except runplan.INPUT_ERRORS as error:
        return refuse([*settings.items(error), *bad])
    if bad:
        return refuse(bad)
    profile, cfg, scenario = chosen.profile, chosen.cfg, chosen.scenario
    if reasons := chosen.unsupported:
        log(f"n/a: {profile.profile} cannot run scenario {scenario.id}: {'; '.join(reasons)}")
        return EXIT_CODES["n/a"]
    try:
        chosen.on.refuse_unfit(chosen)
    except runplan.INPUT_ERRORS as error:
        return refuse(settings.items(error))
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
