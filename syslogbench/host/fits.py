"""Loads that cannot fit this machine or this daemon, refused before any container starts.

Each check gives one line that says what to change. They run after the settings and the scenario are valid
(model.settings, model.scenarios), on the host, for `run`, `check` and `matrix`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from syslogbench import contract
from syslogbench.host import families, profiles, render
from syslogbench.model import messages, preprocess, scenarios, settings

MIB = 1024**2
# The largest UDP payload over IPv4: 65,535 bytes less the 20-byte IP and 8-byte UDP headers. The bench
# network is a Docker bridge (IPv4); a larger message cannot leave the sender at all (EMSGSIZE).
DATAGRAM_MAX = 65_507
# Measured (2026-11, Python 3.11, fork as in rig/sender.py): the generator's main process is 11.7 MiB of
# private memory; each sender process peaked at 6.9 MiB while rendering 300,000 seed messages to its file
# (3.4 MiB after the fork, plus a 10,000-message chunk). An earlier sender that held 2,000,000 messages in one
# list was killed by its 512 MB limit; the chunked file keeps a sender's cost flat in the message count.
GENERATOR_BYTES = 12 * MIB
SENDER_BYTES = 7 * MIB
# UDP and fixed rates keep each message's end offset (array "Q": 8 bytes) for the whole run, and an array
# grows by a sixteenth: 1,000,000 UDP messages peaked at 15.0 MiB against 6.9 MiB for an all-out sender.
INDEX_BYTES_PER_MESSAGE = 8 * 17 / 16
WATCHER_MEM = contract.WATCHER_MEM
WATCHER_BYTES = contract.WATCHER_OWN_BYTES


class DoesNotFit(settings.SettingsError):
    """A load that cannot fit; a SettingsError, so the command line refuses it as bad input (exit 2)."""


@dataclass(frozen=True)
class Disk:
    """Free space where Docker keeps container layers and volumes; free is None when it could not be read."""

    root: str
    free: int | None
    reason: str = ""


def message_size(cfg: settings.Settings, scenario: scenarios.Scenario) -> int:
    """Bytes of the largest message a sender renders (the highest host and sender numbers, the widest
    sequence number and priority), as messages.render_line frames it: a datagram for UDP."""
    sender = messages.SenderId(cfg.hosts, cfg.senders_per_host)
    width = messages.seq_width(cfg.messages_per_sender)
    stamp = messages.iso_timestamp(0) if scenario.format == "rfc5424" else messages.bsd_timestamp(0)
    line = messages.render_line(
        sender,
        cfg.messages_per_sender,
        messages.FACILITIES * messages.SEVERITIES - 1,
        stamp,
        width,
        size=scenario.message_bytes,
        fmt=scenario.format,
        payload=preprocess.payload(scenario.preprocess),
    )
    return len(messages.datagram(line, scenario.format)) if scenario.transport == "udp" else len(line)


def rendered_bytes(cfg: settings.Settings, scenario: scenarios.Scenario) -> int:
    """Every sender's file of rendered messages (a DONE included), at most."""
    return cfg.senders * (cfg.messages_per_sender + 1) * message_size(cfg, scenario)


def human(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} TiB"


def docker_disk() -> Disk:
    """Free space of Docker's data root: the generators' rendered files are in their container layers and
    the daemon's output in the logs volume, both under it."""
    try:
        done = subprocess.run(
            ["docker", "info", "--format", "{{.DockerRootDir}}"], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return Disk("Docker's data root", None, f"docker info failed: {error}")
    root = done.stdout.strip()
    if done.returncode or not root:
        return Disk("Docker's data root", None, "docker info did not name it")
    try:
        stat = os.statvfs(root)
    except OSError as error:
        return Disk(root, None, f"{error.strerror or error}")
    return Disk(root, stat.f_bavail * stat.f_frsize)


def disk_problem(cfg: settings.Settings, scenario: scenarios.Scenario, disk: Disk) -> str | None:
    """The rendered messages and the daemon's output (about as many bytes again, since every message is
    written once; a disk queue adds up to its capacity) must fit on Docker's data root."""
    if disk.free is None:
        return None
    rendered = rendered_bytes(cfg, scenario)
    queue = min(rendered, contract.QUEUE_CAPACITY_BYTES) if scenario.buffer != "none" else 0
    need = 2 * rendered + queue
    if need <= disk.free:
        return None
    per_message = 2 * cfg.senders * message_size(cfg, scenario)
    most = (disk.free - queue) // per_message - 1
    fewer = f"use MESSAGES_PER_SENDER={most} or less, fewer senders, or " if most > 0 else ""
    return (
        f"{variant(cfg)} needs about {human(need)} on {disk.root} ({human(rendered)} of rendered messages and as "
        f"much output{' and the disk queue' if queue else ''}), which has {human(disk.free)} free: "
        f"{fewer}free space there"
    )


def variant(cfg: settings.Settings) -> str:
    return (
        f"HOSTS={cfg.hosts} x SENDERS_PER_HOST={cfg.senders_per_host} x "
        f"MESSAGES_PER_SENDER={cfg.messages_per_sender}"
    )


def indexed(scenario: scenarios.Scenario) -> bool:
    """UDP and fixed rates send in batches of whole messages, so each sender keeps an index of them."""
    return scenario.transport == "udp" or scenario.rate > 0


def generator_bytes(cfg: settings.Settings, scenario: scenarios.Scenario) -> float:
    index = INDEX_BYTES_PER_MESSAGE * (cfg.messages_per_sender + 1) if indexed(scenario) else 0
    return GENERATOR_BYTES + cfg.senders_per_host * (SENDER_BYTES + index)


def memory_problem(cfg: settings.Settings, scenario: scenarios.Scenario) -> str | None:
    """One process per sender in each generator container, all rendering at once within REMOTE_MEM."""
    need = generator_bytes(cfg, scenario)
    if need <= cfg.remote_mem:
        return None
    room = cfg.remote_mem - GENERATOR_BYTES
    if not indexed(scenario):
        most = max(0, room // SENDER_BYTES)
        return (
            f"SENDERS_PER_HOST={cfg.senders_per_host}: each generator needs about {human(need)} (12 MiB, then "
            f"7 MiB per sender process), more than REMOTE_MEM={human(cfg.remote_mem)}: use SENDERS_PER_HOST="
            f"{most} or less (and more HOSTS), or raise REMOTE_MEM"
        )
    per_sender = room / cfg.senders_per_host - SENDER_BYTES
    most = max(0, int(per_sender / INDEX_BYTES_PER_MESSAGE) - 1)
    return (
        f"{variant(cfg)}: each generator needs about {human(need)} ({cfg.senders_per_host} senders x (7 MiB + "
        f"8.5 bytes per message, the index a {scenario.transport.upper()} or fixed-rate sender keeps)), more "
        f"than REMOTE_MEM={human(cfg.remote_mem)}: use MESSAGES_PER_SENDER={most} or less, fewer "
        "SENDERS_PER_HOST, or raise REMOTE_MEM"
    )


def watcher_problem(cfg: settings.Settings) -> str | None:
    """The watcher reconciles in one byte per message (the DONEs included) within its memory limit."""
    tally = cfg.senders * (cfg.messages_per_sender + 2)  # index 0 is unused
    if WATCHER_BYTES + tally <= WATCHER_MEM:
        return None
    most = (WATCHER_MEM - WATCHER_BYTES) // cfg.senders - 2
    return (
        f"{variant(cfg)}: the watcher reconciles in one byte per message, {human(tally)} beside its own "
        f"{human(WATCHER_BYTES)}, more than its memory limit of {human(WATCHER_MEM)} (compose.yaml): use "
        f"MESSAGES_PER_SENDER={most} or less, or fewer senders"
    )


def connection_limit(
    profile: profiles.Profile, scenario: scenarios.Scenario, files: list[Path] | None = None
) -> tuple[int, str] | None:
    """The most connections the daemon's config takes, and where that is said: the config rendered for this
    scenario, or the files of a user's own (--config). A listener that sets no limit has the daemon's own
    default (the manifest's default_connections); with several listeners, the most generous one counts.
    How the config states it is the family's record (daemons/_families/)."""
    family = families.get(profile.daemon)
    found: list[tuple[int, str]] = []
    for path in files or [render.config_path(profile, scenario.id)]:
        text = path.read_text(errors="replace") if path.is_file() else ""
        where = path.relative_to(profiles.ROOT) if path.is_relative_to(profiles.ROOT) else path
        for limit in families.session_limits(text, family):
            if limit is not None:
                found.append((limit, f"{limit_word(family, limit)} in {where}"))
            elif (default := profile.default_connections) is not None:
                unset = limit_word(family, "")
                found.append(
                    (
                        default,
                        f"{profile.daemon}'s default of {default}: a listener in {where} sets no {unset}",
                    )
                )
    if found:
        return max(found)
    if (default := profile.default_connections) is not None:
        return default, f"{profile.daemon}'s default of {default} TCP sessions"
    return None


def limit_word(family: families.Family, limit: int | str) -> str:
    """How a config of the family states this limit (empty: the family states none)."""
    return family.session_limit.write.format(limit) if family.session_limit else ""


def connections_problem(
    cfg: settings.Settings,
    scenario: scenarios.Scenario,
    profile: profiles.Profile,
    files: list[Path] | None = None,
) -> str | None:
    if scenario.transport == "udp":
        return None  # no connections
    limit = connection_limit(profile, scenario, files)
    if limit is None or cfg.senders <= limit[0]:
        return None
    most, where = limit
    word = limit_word(families.get(profile.daemon), cfg.senders)
    raise_it = f"set {word} in your config, or " if files and word else ""
    return (
        f"HOSTS={cfg.hosts} x SENDERS_PER_HOST={cfg.senders_per_host} = {cfg.senders} connections, but "
        f"{profile.profile} takes at most {most} ({where}): {raise_it}use at most {most} senders in all"
    )


def connection_scenario_problem(cfg: settings.Settings, scenario: scenarios.Scenario) -> str | None:
    """A conn* scenario is about its number of connections: a variant may change the messages, not that."""
    if not scenario.connections or cfg.senders == scenario.connections:
        return None
    return (
        f"scenario {scenario.id} is about {scenario.connections} connections, but HOSTS={cfg.hosts} x "
        f"SENDERS_PER_HOST={cfg.senders_per_host} = {cfg.senders}: keep the product at "
        f"{scenario.connections} (its own {scenario.hosts} x {scenario.senders_per_host}), or pick the conn* "
        "scenario of that count"
    )


def datagram_problem(cfg: settings.Settings, scenario: scenarios.Scenario) -> str | None:
    if scenario.transport != "udp":
        return None
    size = message_size(cfg, scenario)
    if size <= DATAGRAM_MAX:
        return None
    return (
        f"scenario {scenario.id}: message_bytes {scenario.message_bytes} makes UDP datagrams of {size:,} bytes, "
        f"more than the {DATAGRAM_MAX:,} one datagram can carry over IPv4: use message_bytes of at most "
        f"{scenario.message_bytes - (size - DATAGRAM_MAX)} in a new scenario, or TCP"
    )


def rate_problem(cfg: settings.Settings, scenario: scenarios.Scenario) -> str | None:
    """At a fixed rate, the last message leaves messages / rate seconds after the start."""
    if not scenario.rate:
        return None
    seconds = cfg.messages_per_sender / scenario.rate
    if seconds < cfg.run_timeout:
        return None
    return (
        f"scenario {scenario.id} sends {cfg.messages_per_sender:,} messages per sender at {scenario.rate:,} "
        f"msg/s, which takes {seconds:,.0f} s, not less than RUN_TIMEOUT={cfg.run_timeout}: lower "
        f"MESSAGES_PER_SENDER below {scenario.rate * cfg.run_timeout}, or raise RUN_TIMEOUT"
    )


def problems(
    cfg: settings.Settings,
    scenario: scenarios.Scenario,
    profile: profiles.Profile,
    disk: Disk,
    files: list[Path] | None = None,
) -> list[str]:
    found = [
        connection_scenario_problem(cfg, scenario),
        connections_problem(cfg, scenario, profile, files),
        datagram_problem(cfg, scenario),
        memory_problem(cfg, scenario),
        watcher_problem(cfg),
        rate_problem(cfg, scenario),
        disk_problem(cfg, scenario, disk),
    ]
    return [problem for problem in found if problem]


def refuse_unfit(
    cfg: settings.Settings,
    scenario: scenarios.Scenario,
    profile: profiles.Profile,
    log: Callable[[str], None],
    disk: Callable[[], Disk] | None = None,
    files: list[Path] | None = None,
) -> None:
    """Refuse (DoesNotFit) a load that cannot fit; a check that could not be made is a notice. files: a
    user's own config (--config), read in place of the profile's rendered one."""
    space = (disk or docker_disk)()
    if space.free is None:
        log(f"notice: the free disk space on {space.root} could not be checked ({space.reason})")
    if found := problems(cfg, scenario, profile, space, files):
        raise DoesNotFit(settings.listed("the load cannot fit", found))
