"""`run --config PATH`: a user's own daemon config in place of the profile's rendered one.

Before any container of the run starts, PATH is read and checked here: it must exist, be text (UTF-8), be a
config of the profile's daemon family, and pass the daemon's own check in the profile's image (the check
command of the family's record, daemons/_families/); then the daemon is started once in a throwaway container, without network, to see
that it listens where the scenario sends. Every refusal is one line (UserConfigError, exit 2).

The run itself differs from ours only in a compose override (`override_text`): the daemon gets the user's
files where its family keeps its configs, and the logs volume on /var/log (so any file the config writes
there is counted); the watcher gets the same files read-only and the run's user-config settings.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from syslogbench import contract
from syslogbench.host import dockerrun, families, profiles
from syslogbench.model import result, settings, userconfig

CHECK_TIMEOUT_S = 60
# How long the throwaway daemon is given to listen: Debian's defaults listen within a second.
LISTEN_WAIT_S = 5


class UserConfigError(settings.SettingsError):
    """A config that cannot run: one line saying what to change (exit 2, before any container)."""


@dataclass(frozen=True)
class UserConfig:
    """The user's files: root (the file, or the directory), the main config, and each file's target in the
    daemon's image."""

    root: Path
    main: Path
    family: str
    expect_dropped: str = ""
    quiet_s: int = userconfig.DEFAULT_QUIET_S
    private: bool = False

    @property
    def record(self) -> families.Family:
        """What the family's configs are like (daemons/_families/<family>.yaml)."""
        return families.get(self.family)

    @property
    def files(self) -> list[Path]:
        return userconfig.config_files(self.root)

    @property
    def main_name(self) -> str:
        """The main config's name under the watcher's CONFIG_DIR."""
        return self.main.name if self.root.is_file() else str(self.main.relative_to(self.root))

    def target(self, path: Path) -> str:
        """Where a file goes in the daemon's image: a file given alone is the family's main config; a
        directory mirrors the family's config directory (its record's config_dir)."""
        if self.root.is_file():
            return f"{self.record.config_dir}/{self.record.main_config}"
        return f"{self.record.config_dir}/{path.relative_to(self.root)}"

    @property
    def main_target(self) -> str:
        return self.target(self.main)

    def mounts(self) -> list[tuple[str, str]]:
        """(host path, path in the daemon's image) for every file."""
        return [(str(path), self.target(path)) for path in self.files]

    def identity(self) -> dict[str, object]:
        """sha256, file names and sizes, and text unless private, as the result records them."""
        return userconfig.identity(self.root, self.private)


def split_settings(overrides: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The command line's KEY=VALUE pairs: those of .env and the shape, and those of a --config run."""
    own = {key: value for key, value in overrides.items() if key in userconfig.SETTINGS}
    return {key: value for key, value in overrides.items() if key not in own}, own


def load(path: Path, family: str, options: dict[str, str], private: bool = False) -> UserConfig:
    """PATH read and checked as text of the profile's family; UserConfigError says what is wrong."""
    record = supported(family)
    root = path.expanduser().absolute()
    if not root.exists():
        raise UserConfigError(f"--config {path}: not found: give a config file or a directory holding one")
    if not (root.is_file() or root.is_dir()):
        raise UserConfigError(
            f"--config {path}: neither a regular file nor a directory: give a config file or a directory "
            "holding one"
        )
    main = root if root.is_file() else root / record.main_config
    if root.is_dir() and not main.is_file():
        raise UserConfigError(
            f"--config {path}: a directory with no {record.main_config}: put the main config there under that "
            f"name (its includes beside it, as in {record.config_dir})"
        )
    texts = {file: read_text(file) for file in userconfig.config_files(root)}
    check_family(main, texts[main], record)
    return UserConfig(root, main, family, *run_settings(options), private=private)


def supported(family: str) -> families.Family:
    """The family's record, if `run --config` takes its configs."""
    record = families.get(family)
    if record.user_config:
        return record
    takes = families.with_user_config()
    example = f": pick e.g. --profile {takes[0].example_profile}" if takes else ""
    raise UserConfigError(
        f"--config needs a profile of {' or '.join(f.family for f in takes)}; this one runs {family}{example}"
    )


def given(config: tuple[Path, bool] | None, family: str, options: dict[str, str]) -> UserConfig | None:
    """--config PATH (and whether it stays private) loaded for the profile's family; without one, the
    user-config settings (EXPECT_DROPPED, OUTPUT_QUIET) are refused."""
    if config is None:
        refuse_without_config(options)
        return None
    return load(config[0], family, options, config[1])


def refuse_udp_rcvbuf(user: UserConfig | None, udp_rcvbuf: int | None) -> None:
    """UDP_RCVBUF goes into the profile's rendered configs only: a config of the user's own asks for its
    own buffer (where: the family record's udp_buffer), which this cannot rewrite."""
    if user is not None and udp_rcvbuf is not None:
        where = f" ({user.record.udp_buffer})" if user.record.udp_buffer else ""
        raise UserConfigError(
            f"UDP_RCVBUF={udp_rcvbuf} sets the profile's own config; with --config set the buffer in your "
            f"config{where} and leave UDP_RCVBUF unset"
        )


def refuse_tuning(user: UserConfig | None, tuning: str) -> None:
    """TUNING picks one of the profile's rendered configs: a config of the user's own has its own settings."""
    if user is not None and tuning != settings.DEFAULT_TUNING:
        raise UserConfigError(
            f"TUNING={tuning} picks the profile's own tuned config; with --config your config's settings run: "
            "leave TUNING unset (or copy the profile's tuned config, daemons/<profile>/tuned/, and edit it)"
        )


def refuse_expect_dropped(user: UserConfig | None) -> None:
    """A capacity search counts every message a trial sends as lost or not: it has no dropped ones."""
    if user is not None and user.expect_dropped:
        raise UserConfigError(
            "capacity --config counts every message a trial sends, so a config that drops some on purpose "
            f"(EXPECT_DROPPED={user.expect_dropped}) cannot be searched yet: use run --config for it"
        )


def read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UserConfigError(
            f"--config {path}: cannot be read ({error.strerror}): check its permissions"
        ) from None
    if b"\0" in data:
        raise UserConfigError(
            f"--config {path}: a binary file (a NUL byte at offset {data.index(0)}), not a config"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise UserConfigError(
            f"--config {path}:{line}: not UTF-8 (byte 0x{data[error.start]:02x}): save the file as UTF-8"
        ) from None


def check_family(path: Path, text: str, record: families.Family) -> None:
    """A config with another family's marks and none of its own is refused before the daemon's check, whose
    own message would not say why."""
    if record.marks and record.marks.search(text):
        return
    for other in families.with_user_config():
        found = other.marks.search(text) if other.marks and other is not record else None
        if found is None:
            continue
        line = text.count("\n", 0, found.start()) + 1
        raise UserConfigError(
            f"--config {path}:{line}: a config of {other.family}, but the profile runs {record.family}: pick a "
            f"profile of {other.family} (e.g. --profile {other.example_profile}) or give a config of {record.family}"
        )


def run_settings(options: dict[str, str]) -> tuple[str, int]:
    """EXPECT_DROPPED and OUTPUT_QUIET, checked (every problem listed)."""
    problems = []
    dropped = options.get(userconfig.EXPECT_DROPPED_ENV, "")
    try:
        userconfig.dropped_priorities(dropped)
    except userconfig.SelectorError as error:
        problems.append(str(error))
    quiet = options.get(userconfig.QUIET_ENV, str(userconfig.DEFAULT_QUIET_S))
    if not re.fullmatch(r"[0-9]+", quiet) or not 1 <= int(quiet) <= 600:
        problems.append(f"{userconfig.QUIET_ENV}={quiet!r}: use whole seconds from 1 to 600, e.g. 5")
    if problems:
        raise UserConfigError(settings.listed("invalid --config settings", problems))
    return dropped, int(quiet)


def refuse_without_config(options: dict[str, str]) -> None:
    if options:
        raise UserConfigError(
            f"{', '.join(sorted(options))}: only for a run with --config PATH (a config of your own)"
        )


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


def check(cfg: UserConfig, image: str, profile: str, transport: str, port: int) -> str:
    """The daemon's own check, then the listener's; what passed, to be said."""
    syntax_check(cfg, image, profile)
    listener_check(cfg, image, transport, port)
    return f"--config {cfg.root}: {cfg.main.name} passed {cfg.family}'s own check, and listens"


# -- the run ----------------------------------------------------------------------------------------------


# What a --config run changes in the daemon's container, on one host (compose) or a swarm (the stack file).
# Debian's default configs give their files an owner and group (rsyslog $FileOwner/$FileGroup, syslog-ng
# owner()/group()). Without CHOWN, rsyslog 8.2504 on Debian's rsyslog.conf lost the first message bound for
# auth.log, the file it opened after the chown failed.
DAEMON_CAPS = ["CHOWN"]


@dataclass(frozen=True)
class Placement:
    """Where the user's files go (host path, path in the container) in the daemon and in the watcher, and
    the watcher's environment: said once for compose (override_text) and for the stack file (host/stack.py)."""

    daemon: list[tuple[str, str]]
    watcher: list[tuple[str, str]]
    environment: dict[str, str]


def placement(cfg: UserConfig, scenario: str) -> Placement:
    """The main config also takes the place of the scenario's rendered one, which the supervisor links to
    active.conf; the watcher sees each file under CONFIG_DIR, by its name relative to PATH."""
    base = cfg.root.parent if cfg.root.is_file() else cfg.root
    return Placement(
        daemon=[*cfg.mounts(), (str(cfg.main), contract.SCENARIO_CONFIG.format(scenario=scenario))],
        watcher=[(str(path), str(userconfig.CONFIG_DIR / path.relative_to(base))) for path in cfg.files],
        environment={
            userconfig.CONFIG_ENV: cfg.main_name,
            userconfig.EXPECT_DROPPED_ENV: cfg.expect_dropped,
            userconfig.QUIET_ENV: str(cfg.quiet_s),
            userconfig.PRIVATE_ENV: "1" if cfg.private else "0",
        },
    )


def override_text(cfg: UserConfig, service: str, scenario: str) -> str:
    """The compose override of a --config run. The daemon's volumes are replaced (`!override`): the logs
    volume goes on /var/log itself (nocopy: the image's own /var/log stays out of it)."""
    where = placement(cfg, scenario)
    lines = [
        "services:",
        f"  {service}:",
        f"    cap_add: [{', '.join(DAEMON_CAPS)}]",
        "    volumes: !override",
        f"      - {contract.volume('control')}",
        f"      - {{type: volume, source: logs, target: {userconfig.DAEMON_LOG_DIR}, volume: {{nocopy: true}}}}",
        f"      - {contract.volume('queue')}",
        *(bind(source, target) for source, target in where.daemon),
        "  watcher:",
        "    environment:",
        *(f"      {key}: {quote(value)}" for key, value in where.environment.items()),
        "    volumes:",
        *(bind(source, target) for source, target in where.watcher),
    ]
    return "\n".join(lines) + "\n"


def bind(source: str, target: str) -> str:
    return f"      - {{type: bind, source: {quote(source)}, target: {quote(target)}, read_only: true}}"


def quote(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is valid YAML); `$` doubled for compose."""
    return json.dumps(text).replace("$", "$$")


# -- after the run: writes the watcher could not see ------------------------------------------------------

# What the harness and the daemons' own state add in the daemon's container (docker diff), not the config.
# The daemon's own state directories are its family record's state_dirs.
HARNESS_PATHS = (
    r"^/(?:run/[\w.-]+\.(?:pid|ctl)|tmp/final\.status(?:\.tmp)?|etc/syslogbench/|bench(?:/|$)"
    rf"|{re.escape(contract.QUEUE_MOUNT.lstrip('/'))}(?:/|$)|var/log(?:/|$))"
)


def harness_paths(family: families.Family) -> re.Pattern[str]:
    states = "".join(f"|^{re.escape(folder.rstrip('/'))}/" for folder in family.state_dirs)
    return re.compile(HARNESS_PATHS + states)


def writes_outside(container: str, family: families.Family) -> list[str]:
    """Files the daemon's container added outside /var/log (`docker diff`'s A lines that are leaves: a
    changed directory is only where a file was added or a volume mounted)."""
    done = subprocess.run(["docker", "diff", container], capture_output=True, text=True, timeout=60)
    added = sorted({line[2:].strip() for line in done.stdout.splitlines() if line.startswith("A ")})
    leaves = [p for i, p in enumerate(added) if not (i + 1 < len(added) and added[i + 1].startswith(p + "/"))]
    harness = harness_paths(family)
    return [path for path in leaves if not harness.match(path)]


def daemon_writes(cfg: UserConfig, containers: list, service: str) -> list[str]:
    """writes_outside for the daemon's container of the run, before down removes it, but the config's own
    files mounted there; [] if it is gone."""
    name = next((c.name for c in containers if c.service == service), None)
    try:
        found = writes_outside(name, cfg.record) if name else []
    except (subprocess.SubprocessError, OSError):
        return []
    mounted = {target for _, target in cfg.mounts()}
    return [path for path in found if path not in mounted]


@contextlib.contextmanager
def compose_files(
    cfg: UserConfig | None, service: str, scenario: str, extra: tuple[Path, ...]
) -> Iterator[tuple[Path, ...]]:
    """The compose files over compose.yaml for a run or a search: extra, and with a user config its
    override, in a file of its own that is removed afterwards, whatever ended the run."""
    if cfg is None:
        yield extra
        return
    with tempfile.NamedTemporaryFile(
        "w", prefix="syslogbench-config-", suffix=".yaml", delete=False
    ) as handle:
        handle.write(override_text(cfg, service, scenario))
    path = Path(handle.name)
    try:
        yield (*extra, path)
    finally:
        path.unlink(missing_ok=True)


def amend(path: Path, outside: list[str]) -> None:
    """The watcher's result, with what it could not see: files written outside /var/log, not counted."""
    written = result.read(path)
    if written.config is None or not outside:
        return
    config = replace(written.config, not_counted=outside)
    lost = written.messages.lost
    note = (
        f"not counted: the config wrote outside {userconfig.DAEMON_LOG_DIR}: {', '.join(outside[:10])}"
        + (" ..." if len(outside) > 10 else "")
        + (f"; the {lost:,} lost messages may be there" if lost else "")
    )
    replace(written, config=config, notes=[*written.notes, note]).write(path.parent)
