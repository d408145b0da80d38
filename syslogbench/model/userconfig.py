"""A user's own daemon config (`run --config PATH`): what the host, the watcher and the result share.

The host reads and checks the config; the watcher, which sees the same files mounted read-only, records what
they were (sha256, names, sizes, text) and accounts for the messages wherever the config wrote them. Both
read the run's user-config settings from the environment with `from_env`. Stdlib only: runs in the watcher.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from syslogbench.model.messages import FACILITIES, SEVERITIES

# The environment of a user-config run (the host sets it on the watcher through the compose override).
CONFIG_ENV = "USER_CONFIG"  # the main config's name under CONFIG_DIR; unset: our own rendered config
EXPECT_DROPPED_ENV = "EXPECT_DROPPED"  # selectors the config drops on purpose, e.g. local7.*,*.debug
QUIET_ENV = "OUTPUT_QUIET"  # seconds without output growth that end a run whose DONEs did not all arrive
PRIVATE_ENV = "CONFIG_PRIVATE"  # 1: the result keeps the config's hash, names and sizes, not its text
# Settings given on the command line (KEY=VALUE) that belong to a --config run, not to .env.
SETTINGS = (EXPECT_DROPPED_ENV, QUIET_ENV)
DEFAULT_QUIET_S = 5
# Where the watcher sees the user's files (read-only), and where the daemon's output lands in the daemon.
CONFIG_DIR = Path("/etc/syslogbench/user")
DAEMON_LOG_DIR = "/var/log"
# A config that has written no file under /var/log this long after the start writes nothing at all.
NO_OUTPUT_S = 30
# Each family's main config name, and where the daemon's own configs live in its image (a directory given
# as PATH mirrors it: rsyslog.conf with rsyslog.d/, syslog-ng.conf with conf.d/).
MAIN = {"rsyslog": "rsyslog.conf", "syslog-ng": "syslog-ng.conf"}
NATIVE_DIR = {"rsyslog": "/etc", "syslog-ng": "/etc/syslog-ng"}

FACILITY_NAMES = (
    "kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "authpriv", "ftp",
    "ntp", "security", "console", "solaris-cron",
    "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
)  # fmt: skip
SEVERITY_NAMES = ("emerg", "alert", "crit", "err", "warning", "notice", "info", "debug")
SELECTOR_RE = re.compile(r"([a-z0-9*-]+)\.=?([a-z*]+)")


class SelectorError(ValueError):
    """An EXPECT_DROPPED selector that names no facility or severity."""


def priority_name(pri: int) -> str:
    """e.g. 'local7.info' for 187."""
    facility, severity = divmod(pri, SEVERITIES)
    return f"{FACILITY_NAMES[facility]}.{SEVERITY_NAMES[severity]}"


def dropped_priorities(text: str) -> frozenset[int]:
    """The PRIs (facility x 8 + severity) the selectors name: 'local7.*', '*.debug', 'mail.info' (exactly
    that severity, not 'and above' as in syslog.conf), several separated by commas or semicolons."""
    chosen: set[int] = set()
    for part in filter(None, (word.strip() for word in re.split(r"[,;\s]+", text or ""))):
        match = SELECTOR_RE.fullmatch(part.lower())
        if match is None:
            raise SelectorError(
                f"EXPECT_DROPPED={text!r}: {part!r} is not facility.severity: write e.g. local7.* or *.debug"
            )
        facilities = _names(match.group(1), FACILITY_NAMES, part)
        severities = _names(match.group(2), SEVERITY_NAMES, part)
        chosen |= {f * SEVERITIES + s for f in facilities for s in severities}
    return frozenset(chosen)


def _names(word: str, names: tuple[str, ...], part: str) -> range | list[int]:
    if word == "*":
        return range(len(names))
    if word not in names:
        raise SelectorError(f"EXPECT_DROPPED: {word!r} in {part!r} is not one of {', '.join(names)}, or *")
    return [names.index(word)]


@dataclass(frozen=True)
class UserRun:
    """A --config run as the watcher sees it."""

    main: str  # the main config's name under CONFIG_DIR
    expect_dropped: str = ""
    quiet_s: int = DEFAULT_QUIET_S
    private: bool = False

    @property
    def dropped(self) -> frozenset[int]:
        return dropped_priorities(self.expect_dropped)


def from_env(env: Mapping[str, str]) -> UserRun | None:
    """None for a run of our own rendered config."""
    main = env.get(CONFIG_ENV, "")
    if not main:
        return None
    quiet = env.get(QUIET_ENV, "") or str(DEFAULT_QUIET_S)
    return UserRun(
        main=main,
        expect_dropped=env.get(EXPECT_DROPPED_ENV, ""),
        quiet_s=int(quiet) if quiet.isdigit() and int(quiet) > 0 else DEFAULT_QUIET_S,
        private=env.get(PRIVATE_ENV, "") == "1",
    )


def config_files(root: Path) -> list[Path]:
    """Every regular file under root (a directory), sorted; root itself when it is a file."""
    if root.is_file():
        return [root]
    return sorted(path for path in root.rglob("*") if path.is_file())


def identity(root: Path, private: bool) -> dict[str, object]:
    """sha256 over every file's name and bytes (so a rename is another config), each name with its size,
    and each file's text unless private. The names are relative to root (a file: its own name)."""
    base = root.parent if root.is_file() else root
    digest = hashlib.sha256()
    files, text = [], {}
    for path in config_files(root):
        name, data = str(path.relative_to(base)), path.read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode() + data)
        files.append({"name": name, "bytes": len(data)})
        text[name] = data.decode("utf-8", errors="replace")
    return {"sha256": digest.hexdigest(), "files": files, "text": None if private else text}


# Where a config limits its TCP sessions: syslog-ng's max-connections() on a listening source driver,
# rsyslog's imtcp MaxSessions (module or input) or its legacy $InputTCPMaxSessions.
SYSLOG_NG_SOURCE = re.compile(r"\bsource\s+[\w-]+\s*\{")
SYSLOG_NG_LISTENER = re.compile(r"\b(network|tcp6?|syslog|default-network-drivers)\s*\(")
SYSLOG_NG_LIMIT = re.compile(r"max[-_]connections\s*\(\s*(\d+)\s*\)")
SYSLOG_NG_UDP = re.compile(r"transport\s*\(\s*\"?udp\"?\s*\)")
RSYSLOG_LIMIT = re.compile(r"\bmaxsessions\s*=\s*\"?(\d+)|^\s*\$InputTCPMaxSessions\s+(\d+)", re.I | re.M)


def uncommented(text: str) -> str:
    """The text without its # comments (both families comment with #; a # inside a string is rare here)."""
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def enclosed(text: str, start: int, opening: str, closing: str) -> str:
    """The text between the bracket at start and the one that closes it (to the end when none does)."""
    depth = 0
    for index in range(start, len(text)):
        depth += (text[index] == opening) - (text[index] == closing)
        if depth == 0:
            return text[start + 1 : index]
    return text[start + 1 :]


def session_limits(text: str, family: str) -> list[int | None]:
    """Each TCP listener's session limit in one config file; None: the listener sets none, so the daemon's
    own default holds. An rsyslog file that sets none gives no entry (imtcp's limit is global)."""
    live = uncommented(text)
    if family == "rsyslog":
        return [int(a or b) for a, b in RSYSLOG_LIMIT.findall(live)]
    if family != "syslog-ng":
        return []
    limits: list[int | None] = []
    for source in SYSLOG_NG_SOURCE.finditer(live):
        body, after = enclosed(live, source.end() - 1, "{", "}"), 0
        for driver in SYSLOG_NG_LISTENER.finditer(body):
            if driver.start() < after:
                continue  # a word inside the previous driver's options
            options = enclosed(body, driver.end() - 1, "(", ")")
            after = driver.end() + len(options)
            if SYSLOG_NG_UDP.search(options):
                continue
            found = SYSLOG_NG_LIMIT.search(options)
            limits.append(int(found.group(1)) if found else None)
    return limits


# What each family must contain to receive the scenario's transport, in its own dialect.
LISTENER_HINT = {
    ("rsyslog", "tcp"): 'module(load="imtcp") and input(type="imtcp" port="514")',
    ("rsyslog", "udp"): 'module(load="imudp") and input(type="imudp" port="514")',
    ("rsyslog", "tls"): (
        'module(load="imtcp" streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon") '
        'and input(type="imtcp" port="514"), with the certificates of /bench/control/tls (docs/userconfig.md)'
    ),
    ("syslog-ng", "tcp"): 'source { network(transport("tcp") port(514)); };',
    ("syslog-ng", "udp"): 'source { network(transport("udp") port(514)); };',
    ("syslog-ng", "tls"): (
        'source { network(transport("tls") port(514) tls(...)); }; with the certificates of '
        "/bench/control/tls (docs/userconfig.md)"
    ),
}


def listener_hint(family: str, transport: str) -> str:
    hint = LISTENER_HINT.get((family, transport))
    return f"; add {hint}" if hint else ""


__all__ = ["FACILITIES", "SEVERITIES"]
