"""The run plan: what every command that starts containers runs, made once from the command line.

The profile, the settings, the user's own config (--config), the scenario and where the containers go (one
host or a swarm) are read and checked here, every problem listed at once, before any container starts. `run`,
`check`, `stack`, `capacity`, `matrix` and `faults` all take a Plan; the orchestrator in it (compose on one
host, host/onehost.py; or a swarm, host/swarm.py) is chosen once, so that no command asks which it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from syslogbench.host import environment, families, ownconfig, profiles, render
from syslogbench.host.lifecycle import RunningStack, RunOptions
from syslogbench.model import capacity, scenarios, settings

if TYPE_CHECKING:
    from syslogbench.model.result import Fingerprint

T = TypeVar("T")
Config = tuple[Path, bool]  # --config PATH, and whether --config-private keeps its text out of the result
INPUT_ERRORS = (
    settings.SettingsError,
    profiles.ProfileError,
    scenarios.ScenarioError,
    capacity.CapacityError,
)


class Orchestrator(Protocol):
    """Where the containers run: compose on this machine, or a swarm. Chosen once, in the plan."""

    def make_plan(self, profile_name: str, overrides: dict[str, str], config: Config | None = None) -> Plan:
        """make()'s plan on this orchestrator: for a runner that makes plans of its own (a capacity search's
        run and burst) without importing the making of a plan and the services it reads."""

    def refuse_unfit(self, chosen: Plan) -> None:
        """The run's load against what the machine (or the nodes) can give: one line, before any container."""

    def run(self, chosen: Plan, results_dir: Path, options: RunOptions) -> int:
        """One run: up, the result collected into results_dir, down; its verdict's exit code."""

    def default_daemon_cores(self) -> int:
        """The cores a search gives the daemon alone where DAEMON_CORES is not given."""

    def search_placement(self, chosen: Plan, daemon_cores: int) -> dict[str, str]:
        """A capacity search's checks and where each role runs (cores, or nodes)."""

    def running_stack(self, chosen: Plan, project: str, build: bool, extra_files: tuple[Path, ...],
                      log: Callable[[str], None]) -> AbstractContextManager[RunningStack]:  # fmt: skip
        """A capacity search's containers, ready to come up: images built or pushed, a user config checked."""

    def fingerprint(self, chosen: Plan, env: dict[str, str]) -> Fingerprint | None:
        """The machine's fingerprint before the rig comes up, or None where the watcher measures it."""

    def machine(self, facts: dict, central: dict | None) -> tuple[dict, list[dict] | None]:
        """The result's machine (this one's facts, or the central node's as the watcher read it) and nodes."""


@dataclass(frozen=True)
class Plan:
    """What one command runs, checked: the profile, the settings and the compose environment, the scenario,
    the user's config (None: the profile's own) and the orchestrator."""

    profile: profiles.Profile
    cfg: settings.Settings
    env: dict[str, str]  # for compose; copied by whatever adds to it
    scenario: scenarios.Scenario
    on: Orchestrator
    user: ownconfig.UserConfig | None = None

    @property
    def unsupported(self) -> list[str]:
        """Why the daemon cannot run the scenario: the run is then n/a, not bad input."""
        return scenarios.unsupported(self.scenario, self.profile.features)

    @property
    def user_files(self) -> list[Path] | None:
        return self.user.files if self.user else None

    @property
    def config_sha256(self) -> str | None:
        """The user config's hash (None: the profile's own config), which names a matrix of it."""
        return str(self.user.identity()["sha256"]) if self.user else None

    @property
    def config_identity(self) -> dict[str, object] | None:
        """The user config as a result records it (None: the profile's own config)."""
        return self.user.identity() if self.user else None

    def tuning_record(self) -> dict[str, object]:
        """The tuning of the config that runs, as a result records it: a user's own, or the profile's at
        TUNING, with its knobs."""
        if self.user is not None:
            return {"tuning": "user", "knobs": {}}
        applied = render.applied_for(self.profile, self.scenario, self.cfg.tuning)
        return applied.record(families.get(self.profile.daemon).knobs)


def collect(errors: list[Exception], step: Callable[[], T]) -> T | None:
    """step's value, or None with its error added to the list."""
    try:
        return step()
    except INPUT_ERRORS as error:
        errors.append(error)
        return None


def refused(errors: list[Exception]) -> Exception:
    """One error as it was raised (its kind kept), or several as one SettingsError listing each problem."""
    if len(errors) == 1:
        return errors[0]
    problems = [problem for error in errors for problem in settings.items(error)]
    return settings.SettingsError(settings.listed("invalid input", problems))


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


def resolve(name: str, pairs: Sequence[str] = ()) -> profiles.Profile:
    """The profile, or a ProfileError that speaks of the profile, also when a space split its name."""
    table = profiles.names()
    stray = stray_words(list(pairs))
    if name in table and not stray:
        return table[name]
    spaced = " ".join([name, *stray])
    hint = profiles.did_you_mean(spaced, table)
    known = f". Known profiles: {', '.join(sorted(table))}"
    if " " in spaced:
        raise profiles.ProfileError(f"profile {spaced!r}: a profile name has no space{hint}{known}")
    raise profiles.ProfileError(f"unknown profile {name!r}{hint}{known}")


def make(
    profile_name: str,
    overrides: dict[str, str],
    on: Orchestrator,
    config: Config | None = None,
    pairs: Sequence[str] = (),
) -> Plan:
    """The plan, or one SettingsError that lists every problem: the profile (pairs: the command line's
    words, for a name a space split), the user config and its settings, the run settings, the scenario."""
    errors: list[Exception] = []
    profile = collect(errors, lambda: resolve(profile_name, list(pairs)))
    run_settings, options = ownconfig.split_settings(overrides)
    user = collect(errors, lambda: ownconfig.given(config, profile.daemon, options)) if profile else None
    if errors and (config is not None or options):
        raise refused(errors)  # before the settings, which ask Docker its version: a config's line is enough
    found = collect(errors, lambda: environment.run_env(run_settings))
    scenario = collect(errors, lambda: scenarios.load(found[0].scenario)) if found else None
    if found:
        collect(errors, lambda: ownconfig.refuse_udp_rcvbuf(user, found[0].udp_rcvbuf))
        collect(errors, lambda: ownconfig.refuse_tuning(user, found[0].tuning))
    if errors:
        raise refused(errors)
    assert profile is not None and found is not None and scenario is not None
    cfg, env = found
    return Plan(profile, cfg, env, scenario, on, user)
