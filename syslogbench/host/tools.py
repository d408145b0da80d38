"""Host prerequisites: Docker Compose v2 and debootstrap, installed on Debian when missing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path


class SetupError(RuntimeError):
    """A set-up step failed; the message says what to do."""


MIN_COMPOSE = (2, 20)
APT_SOURCES = (Path("/etc/apt/sources.list.d/debian.sources"), Path("/etc/apt/sources.list"))


def compose_version() -> tuple[int, int] | None:
    try:
        done = subprocess.run(["docker", "compose", "version", "--short"], capture_output=True, text=True)
    except FileNotFoundError:
        return None
    match = re.match(r"v?(\d+)\.(\d+)", done.stdout.strip())
    return (int(match.group(1)), int(match.group(2))) if done.returncode == 0 and match else None


def is_debian_root() -> bool:
    return Path("/etc/debian_version").exists() and os.geteuid() == 0 and shutil.which("apt-get") is not None


def machine_mirror() -> str | None:
    """The Debian mirror this machine's own apt configuration uses (no host is named in this project)."""
    for path in APT_SOURCES:
        if not path.exists():
            continue
        match = re.search(r"^(?:URIs:|deb)\s+(?:\[[^\]]*\]\s+)?(\S+/debian)\s", path.read_text(), re.M)
        if match:
            return match.group(1)
    return None


def install_trixie_compose() -> None:
    """Debian trixie's docker-compose (v2) on an older Debian, without touching the machine's apt sources."""
    mirror = machine_mirror()
    if mirror is None:
        raise SetupError("cannot find this machine's Debian mirror in its apt sources")
    with tempfile.TemporaryDirectory(prefix="syslogbench-apt-") as tmp:
        base = Path(tmp)
        for sub in ("lists/partial", "cache/archives/partial"):
            (base / sub).mkdir(parents=True)
        (base / "sources.list").write_text(f"deb [trusted=yes] {mirror} trixie main\n")
        options = [
            f"-oDir::Etc::sourcelist={base / 'sources.list'}",
            "-oDir::Etc::sourceparts=/dev/null",
            f"-oDir::State::Lists={base / 'lists'}",
            f"-oDir::Cache={base / 'cache'}",
        ]
        subprocess.run(["apt-get", *options, "update"], check=True, capture_output=True)
        subprocess.run(
            ["apt-get", *options, "download", "docker-compose"], check=True, cwd=base, capture_output=True
        )
        debs = sorted(base.glob("docker-compose_*.deb"))
        subprocess.run(["dpkg", "-i", str(debs[-1])], check=True, capture_output=True)


def ensure_compose(log=print) -> None:
    version = compose_version()
    if version is not None and version >= MIN_COMPOSE:
        return
    found = "missing" if version is None else f"{version[0]}.{version[1]}"
    if not is_debian_root():
        raise SetupError(
            f"Docker Compose v2 (>= {MIN_COMPOSE[0]}.{MIN_COMPOSE[1]}) is needed, found {found}. Install it: on "
            "Debian, the `docker-compose` package of trixie or later; elsewhere Docker's `docker-compose-plugin`."
        )
    log(f"Docker Compose v2 is {found}: installing Debian trixie's docker-compose package")
    install_trixie_compose()
    if compose_version() is None:
        raise SetupError("installed docker-compose, but `docker compose version` still fails")


def ensure_debootstrap(log=print) -> None:
    if shutil.which("debootstrap"):
        return
    if not is_debian_root():
        raise SetupError("debootstrap is missing: install it (`sudo apt-get install debootstrap`) and retry")
    log("installing debootstrap")
    subprocess.run(["apt-get", "install", "-y", "-q", "debootstrap"], check=True, capture_output=True)
