"""A user's own daemon config (`run --config PATH`): what the host, the watcher and the result share.

The host reads and checks the config; the watcher, which sees the same files mounted read-only, records what
they were (sha256, names, sizes, text) and accounts for the messages wherever the config wrote them. Both
read the run's user-config settings from the environment with `from_env`. What the result keeps of it is
model/result/config.py. Stdlib only: runs in the watcher.
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


__all__ = ["FACILITIES", "SEVERITIES"]
