"""What a `run --config PATH` run changes, on one host (a compose override, `override_text`) or a swarm (the
stack file, host/stack.py): the daemon gets the user's files where its family keeps its configs, and the logs
volume on /var/log (so any file the config writes there is counted); the watcher gets the same files
read-only and the run's user-config settings. After the run, the files the daemon wrote outside /var/log,
which the watcher could not see, are added to its result as not counted.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from syslogbench import contract
from syslogbench.model import result, userconfig

if TYPE_CHECKING:
    from syslogbench.host import families
    from syslogbench.host.ownconfig import UserConfig

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
