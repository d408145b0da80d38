"""What the host needs before any image is built: Docker Compose v2 and debootstrap, installed on Debian when
missing."""

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
# Debian's archive keys, from the debian-archive-keyring package every Debian has: bookworm's holds trixie's.
DEBIAN_KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
COMPOSE_SUITE = "trixie"  # its docker-compose is v2 (2.26) and needs only libc6 >= 2.34


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


def sources_line(mirror: str, suite: str = COMPOSE_SUITE, keyring: Path = DEBIAN_KEYRING) -> str:
    """One apt source whose Release file apt checks against the Debian archive keyring; no source is trusted unsigned."""
    return f"deb [signed-by={keyring}] {mirror} {suite} main\n"


def download_compose(mirror: str, directory: Path, keyring: Path = DEBIAN_KEYRING) -> Path:
    """Debian trixie's docker-compose .deb, downloaded into directory with its own apt lists and cache.

    apt verifies the suite's Release signature with the keyring and every file against the Release's hashes,
    so the package is the archive's own. The machine's apt sources and lists are not touched.
    """
    if not keyring.exists():
        raise SetupError(
            f"{keyring} is missing: install Debian's archive keys (`apt-get install debian-archive-keyring`) "
            "and retry, so the docker-compose package can be verified"
        )
    for sub in ("lists/partial", "cache/archives/partial"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    (directory / "sources.list").write_text(sources_line(mirror, keyring=keyring))
    options = [
        f"-oDir::Etc::sourcelist={directory / 'sources.list'}",
        "-oDir::Etc::sourceparts=/dev/null",
        f"-oDir::State::Lists={directory / 'lists'}",
        f"-oDir::Cache={directory / 'cache'}",
    ]
    update = subprocess.run(["apt-get", *options, "update"], capture_output=True, text=True)
    # apt-get update exits 0 on a bad signature (it only warns and ignores the suite); then nothing is listed.
    if update.returncode != 0 or not any((directory / "lists").glob(f"*_dists_{COMPOSE_SUITE}_*Release")):
        raise SetupError(
            f"apt could not read or verify Debian {COMPOSE_SUITE} from {mirror}: {last_line(update.stderr)}"
        )
    subprocess.run(
        ["apt-get", *options, "download", "docker-compose"], check=True, cwd=directory, capture_output=True
    )
    return sorted(directory.glob("docker-compose_*.deb"))[-1]


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


def install_trixie_compose() -> None:
    """Debian trixie's docker-compose (v2) on an older Debian, without touching the machine's apt sources."""
    mirror = machine_mirror()
    if mirror is None:
        raise SetupError("cannot find this machine's Debian mirror in its apt sources")
    with tempfile.TemporaryDirectory(prefix="syslogbench-apt-") as tmp:
        deb = download_compose(mirror, Path(tmp))
        subprocess.run(["dpkg", "-i", str(deb)], check=True, capture_output=True)


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
