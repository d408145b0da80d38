"""`run --config PATH`: a user's own daemon config in place of the profile's rendered one, read and refused
here.

Before any container of the run starts, PATH is read: it must exist, be text (UTF-8), and be a config of the
profile's daemon family; the settings of a --config run (EXPECT_DROPPED, OUTPUT_QUIET) are checked, and the
settings that a config of the user's own cannot take are refused. Every refusal is one line (UserConfigError,
exit 2). The daemon's own check of the config is host/configcheck.py; what the run changes (the files'
places in the containers, and the writes outside /var/log afterwards) is host/configrun.py. What the host,
the watcher and the result share is model/userconfig.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from syslogbench.host import families
from syslogbench.model import settings, userconfig


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
