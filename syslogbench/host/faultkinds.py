"""The fault campaign's catalogue (`python -m syslogbench faults`, host/faults.py runs it): each kind of fault,
the load it runs under, how it is injected from this machine with the Docker CLI, what the run's result must
say, and the sign, in the campaign's own record of the run, that it landed; and the draw of a kind and a
profile for each run of a campaign.
"""

from __future__ import annotations

import random
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from syslogbench import contract
from syslogbench.host import events, profiles
from syslogbench.host.compose import DOCKER_TIMEOUT_S
from syslogbench.model import scenarios

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
WINDOW = (0.5, 8.0)  # seconds after the start signal
RELAY_WINDOW = (0.5, 4.5)  # within relay-pause's 5 s pause: syslog-ng relays the rest in about 2 s after it
# The logs volume as a small tmpfs: 40,000 messages of about 100 bytes need 4 MB.
SMALL_LOGS = "volumes:\n  logs:\n    driver_opts: {type: tmpfs, device: tmpfs, o: 'size=1m'}\n"
# Every child of the supervisor (PID 1 in the daemon's container) but its sleeps: the daemon, SIGKILLed.
KILL_DAEMON = (
    'for s in /proc/[0-9]*/stat; do read -r p c _ pp _ < "$s" 2>/dev/null || continue; '
    '[ "$pp" = 1 ] && [ "$c" != "(sleep)" ] && kill -KILL "$p" && echo "$p $c"; done; true'
)


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


def draw(runs: int, seed: int, names: list[str]) -> list[tuple[str, Kind]]:
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
