"""The result's `config` block (`run --config`): the user's config as the run found it, and the files its
output went to. model/userconfig.py is the run of such a config (its environment, selectors and identity)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ConfigFile:
    name: str  # relative to the directory given, or the file's own name
    bytes: int


@dataclass
class OutputFile:
    """One file a user's config wrote under /var/log: its lines, and the messages of ours in it."""

    file: str  # relative to /var/log
    lines: int  # every line, ours or not (the daemon's own messages too)
    messages: int  # our messages that arrived whole in it, copies within it included
    duplicated: int = 0  # lines beyond the first of a message in this file
    truncated: int = 0
    facilities: list[str] = field(default_factory=list)  # of our messages in it
    severities: list[str] = field(default_factory=list)


@dataclass
class UserConfig:
    """`run --config`: the config (its text unless --config-private) and where its output went."""

    sha256: str  # over every file's name, size and bytes: the report never pools two configs
    main: str
    files: list[ConfigFile]
    text: dict[str, str] | None = None  # file name -> text; None with --config-private
    expect_dropped: str = ""
    output_files: list[OutputFile] = field(default_factory=list)
    copied: int = 0  # messages written to more than one file
    copies: int = 0  # lines beyond each message's first file
    fanout: dict[str, int] = field(default_factory=dict)  # files per message -> messages
    lost_by_priority: dict[str, int] = field(default_factory=dict)  # e.g. "local7.info" -> lost
    not_counted: list[str] = field(default_factory=list)  # files written outside /var/log (docker diff)
