"""A user's own config (`run --config PATH`) checked by its daemon in the profile's image, before any
container of the run starts: the daemon's own check (the check command of the family's record,
daemons/_families/), then the daemon started once in a throwaway container, without network, to see that it
listens where the scenario sends. Every refusal is one line (UserConfigError, exit 2).
"""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
from pathlib import Path

from syslogbench import contract
from syslogbench.host import dockerrun, families, profiles
from syslogbench.host.ownconfig import UserConfig, UserConfigError

CHECK_TIMEOUT_S = 60
# How long the throwaway daemon is given to listen: Debian's defaults listen within a second.
LISTEN_WAIT_S = 5


# -- the daemon's own check, in the profile's image ------------------------------------------------------------


def check_command(cfg: UserConfig) -> list[str]:
    """The family's own config check (its record), on the main config's place in the image."""
    return cfg.record.check_command(cfg.main_target)


def daemon_command(cfg: UserConfig) -> list[str]:
    """How the family's stage in daemons/Dockerfile starts the daemon, on the user's main config."""
    command = profiles.stage_commands(profiles.FAMILY_DOCKERFILE).get(cfg.family)
    if command is None:
        raise families.FamilyError(f"daemon family {cfg.family} has no stage in daemons/Dockerfile: add one")
    return [cfg.main_target if word == contract.ACTIVE_CONFIG else word for word in command]


def docker_run(image: str, command: list[str]) -> list[str]:
    """The command in the image, after the user's files are unpacked at their places from a tar on standard
    input (file_tar): no bind mount, so the engine may be another machine's, as with run --swarm."""
    return dockerrun.offline_run(
        image, ["sh", "-c", 'tar -x -o -C / && exec "$@"', "unpack", *command], stdin=True
    )


def file_tar(cfg: UserConfig) -> bytes:
    """Each of the user's files at its path in the image, readable by all, as a tar."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for source, target in cfg.mounts():
            data = Path(source).read_bytes()
            info = tarfile.TarInfo(target.lstrip("/"))
            info.size, info.mode = len(data), 0o444
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def syntax_check(cfg: UserConfig, image: str, profile: str) -> None:
    """The daemon's own verdict on the config; its first error line, with the user's paths, when it refuses."""
    done = run_checked(docker_run(image, check_command(cfg)), cfg)
    if done.returncode == 0:
        return
    said = done.stdout + done.stderr
    line = user_paths(cfg, first_error(said))
    if cfg.record.lacks_module(said):
        raise UserConfigError(f"the image of {profile} lacks a module the config loads: {line}")
    modules = cfg.record.modules
    if modules and (word := unknown_word(cfg, said)) and word.replace("_", "-") not in plugins(image, cfg):
        raise UserConfigError(
            f"the image of {profile} lacks the module of {word}() (`{' '.join(modules.command)}` lists what it "
            f"has): {line}"
        )
    raise UserConfigError(f"{cfg.record.check_name} refused the config: {line}")


def unknown_word(cfg: UserConfig, said: str) -> str | None:
    """The word the daemon did not know (file, line and columns as it gives them: the record's
    unknown_word), or None."""
    pattern = cfg.record.unknown_word
    match = pattern.search(said) if pattern else None
    sources = {target: source for source, target in cfg.mounts()}
    if match is None or match.group(1) not in sources:
        return None
    lines = Path(sources[match.group(1)]).read_text().splitlines()
    number, start, end = int(match.group(2)), int(match.group(3)), int(match.group(4))
    return lines[number - 1][start - 1 : end - 1] if number <= len(lines) else None


def plugins(image: str, cfg: UserConfig) -> set[str]:
    """Every plugin name (driver, parser, ...) of the image's daemon, '_' read as '-'."""
    modules = cfg.record.modules
    if modules is None:
        return set()
    done = run_checked(docker_run(image, modules.command), cfg)
    return {name.replace("_", "-") for name in modules.line.findall(done.stdout + done.stderr)}


def run_checked(command: list[str], cfg: UserConfig) -> subprocess.CompletedProcess[str]:
    """The command run with the user's files on its standard input (docker_run); its output as text."""
    try:
        done = subprocess.run(command, input=file_tar(cfg), capture_output=True, timeout=CHECK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise UserConfigError(
            f"checking the config took over {CHECK_TIMEOUT_S} s ({' '.join(command[-4:])}): is it waiting on "
            "something outside the container?"
        ) from None
    return subprocess.CompletedProcess(
        command, done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
    )


def user_paths(cfg: UserConfig, text: str) -> str:
    """The daemon names files by their place in its image: name them as the user knows them."""
    for source, target in sorted(cfg.mounts(), key=lambda pair: -len(pair[1])):
        text = text.replace(target, source)
    return text


def first_error(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    wanted = [
        line for line in lines if re.search(r"\berror|not found|unexpected|invalid|could not", line, re.I)
    ]
    return (wanted or lines or ["(it printed nothing)"])[0]


# -- does it listen where the scenario sends? ----------------------------------------------------------------

# Starts the daemon, waits until the port is bound (or LISTEN_WAIT_S), then prints the socket tables.
PROBE = (
    '"$@" > /tmp/daemon.out 2>&1 & i=0; '
    f"while [ $i -lt {LISTEN_WAIT_S * 5} ]; do "
    'grep -q ":0202 " /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6 2>/dev/null && break; '
    "sleep 0.2; i=$((i+1)); done; sleep 0.3; "
    'for t in tcp tcp6 udp udp6; do sed "s/^/$t /" /proc/net/$t; done; echo ---; cat /tmp/daemon.out'
)
SOCKET_LINE = re.compile(r"^(tcp|udp)6? +\d+: [0-9A-F]+:([0-9A-F]{4}) [0-9A-F]+:0000 ([0-9A-F]{2})", re.M)


def listening(tables: str) -> set[tuple[int, str]]:
    """(port, tcp|udp) of every listening TCP socket (state 0A) and bound UDP socket (07)."""
    return {
        (int(port, 16), proto)
        for proto, port, state in SOCKET_LINE.findall(tables)
        if (proto, state) in (("tcp", "0A"), ("udp", "07"))
    }


def listener_check(cfg: UserConfig, image: str, transport: str, port: int) -> None:
    """The config must listen on the scenario's port and transport (TLS is TCP on the wire)."""
    command = ["sh", "-c", PROBE, "probe", *daemon_command(cfg)]
    done = run_checked(docker_run(image, command), cfg)
    tables, _, daemon_said = done.stdout.partition("---")
    proto = "udp" if transport == "udp" else "tcp"
    found = listening(tables)
    if (port, proto) in found:
        return
    where = ", ".join(f"{p}/{t}" for p, t in sorted(found)) or "no port at all"
    why = (
        f" (it said: {user_paths(cfg, first_error(daemon_said))})"
        if not found and daemon_said.strip()
        else ""
    )
    raise UserConfigError(
        f"the config does not listen on {port}/{proto}, where the scenario's senders send ({transport}); it listens "
        f"on {where}{why}{cfg.record.listener_hint(transport)}"
    )


def daemon_and_listener(cfg: UserConfig, image: str, profile: str, transport: str, port: int) -> str:
    """The daemon's own check, then the listener's; what passed, to be said."""
    syntax_check(cfg, image, profile)
    listener_check(cfg, image, transport, port)
    return f"--config {cfg.root}: {cfg.main.name} passed {cfg.family}'s own check, and listens"
