"""Base images: pull the pinned digest where a registry answers, else build from the Debian mirror."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import yaml

from syslogbench.host.tools import SetupError, ensure_debootstrap

__all__ = ["SetupError"]

ROOT = Path(__file__).resolve().parents[2]
BASES_FILE = ROOT / "images" / "bases.yaml"
LOCAL_REPO = "syslogbench/base"
MARKER = "/etc/syslogbench-base"


def load_bases() -> dict[str, dict[str, str]]:
    return yaml.safe_load(BASES_FILE.read_text())


def local_tag(suite: str) -> str:
    return f"{LOCAL_REPO}:{suite}"


def image_exists(ref: str) -> bool:
    done = subprocess.run(["docker", "image", "inspect", ref], capture_output=True)
    return done.returncode == 0


def base_source(suite: str) -> str | None:
    """The marker line of an existing base image, or None if it is missing."""
    if not image_exists(local_tag(suite)):
        return None
    done = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", local_tag(suite), "cat", MARKER],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() or "unknown"


def try_pull(pinned: str, timeout: float = 60) -> bool:
    try:
        done = subprocess.run(["docker", "pull", pinned], capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def tag_pulled(suite: str, pinned: str) -> None:
    # A one-line build adds the marker file, so pulled and debootstrapped bases look alike inside.
    dockerfile = f'FROM {pinned}\nRUN echo "pull {pinned}" > {MARKER}\n'
    subprocess.run(
        ["docker", "build", "-q", "-t", local_tag(suite), "-"],
        input=dockerfile.encode(),
        check=True,
    )


def debootstrap(suite: str) -> None:

    ensure_debootstrap()
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    with tempfile.TemporaryDirectory(prefix=f"syslogbench-{suite}-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        # No mirror argument: debootstrap's own default mirror is the one to rely on.
        cmd = ["debootstrap", "--variant=minbase", suite, str(rootfs)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            tail = "\n".join(done.stderr.splitlines()[-5:])
            raise SetupError(f"debootstrap {suite} failed (needs root and the Debian mirror):\n{tail}")
        (rootfs / MARKER.lstrip("/")).write_text(f"debootstrap {suite} minbase {stamp}\n")
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        subprocess.run(
            ["docker", "import", "--change", 'CMD ["/bin/bash"]', "-", local_tag(suite)],
            stdin=tar.stdout,
            check=True,
            capture_output=True,
        )
        if tar.wait() != 0:
            raise SetupError(f"tar of the {suite} root filesystem failed")


def ensure_base(suite: str, pinned: str, log=print) -> str:
    """Make `syslogbench/base:<suite>` exist; return where it came from."""
    source = base_source(suite)
    if source is not None:
        log(f"base {suite}: present ({source})")
        return source
    if try_pull(pinned):
        tag_pulled(suite, pinned)
        log(f"base {suite}: pulled {pinned}")
    else:
        log(f"base {suite}: no registry answers; building it from the Debian mirror with debootstrap")
        debootstrap(suite)
        log(f"base {suite}: built with debootstrap and used in place of {pinned}")
    return base_source(suite) or "unknown"


def ensure_bases(suites: list[str], log=print) -> dict[str, str]:
    bases = load_bases()
    unknown = sorted(set(suites) - set(bases))
    if unknown:
        raise SetupError(f"no base image declared for {unknown} in {BASES_FILE}")
    return {suite: ensure_base(suite, bases[suite]["pinned"], log) for suite in suites}


# Registry images (the seed's old distributions, NXLog): nothing can stand in for them, so a profile built
# on one needs a registry that answers. Asked once per process and image: a refused pull fails in well under
# a second here, a hanging one is cut at REGISTRY_TIMEOUT_S.
REGISTRY_TIMEOUT_S = 20.0
_registry_answers: dict[str, bool] = {}


def registry_image_available(ref: str, timeout: float = REGISTRY_TIMEOUT_S) -> bool:
    """True if `ref` is present locally or a registry gives it now."""
    if ref not in _registry_answers:
        _registry_answers[ref] = image_exists(ref) or try_pull(ref, timeout)
    return _registry_answers[ref]


def needs_registry_message(profile: str, ref: str) -> str:
    return (
        f"needs Docker Hub: profile {profile} builds FROM the registry image {ref}, which is not here and "
        "no registry answered a pull. Run it on a machine that reaches Docker Hub, or pull the image there, "
        "`docker save` it and `docker load` it here."
    )


# -- the compiled rig (rig-rust/) ------------------------------------------------------------------------------

RIG_DIR = ROOT / "rig-rust"
RIG_SUITE = "trixie"  # its build stage: Debian trixie's rustc (rig-rust/Dockerfile)
RIG_REPO = "syslogbench/rig"
VENDOR_TIMEOUT_S = 600


def rig_tag(tag: str) -> str:
    return f"{RIG_REPO}:{tag}"


def vendor_crates(log=print) -> None:
    """Fetch the rig's crates with the host's cargo, where there is one, into rig-rust/vendor: the image's
    build stage then builds offline. Containers on some machines cannot fetch crates themselves (they do not
    trust the TLS proxy the host goes through); without a host cargo, the build stage fetches them."""
    cargo = shutil.which("cargo")
    if cargo is None:
        log("rig: no cargo on this machine; the image's build stage fetches the crates itself")
        return
    command = [cargo, "vendor", "--locked", "--quiet", "--manifest-path", str(RIG_DIR / "Cargo.toml"),
               str(RIG_DIR / "vendor")]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=VENDOR_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        log(f"rig: cargo vendor took over {VENDOR_TIMEOUT_S} s; the build stage fetches the crates itself")
        return
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        log(f"rig: cargo vendor failed ({tail}); the build stage fetches the crates itself")


def build_rig(tag: str, log=print) -> None:
    """The image holding the compiled rig, which the generator and watcher images copy it from."""
    vendor_crates(log)
    log(f"rig: building {rig_tag(tag)} (rig-rust/Dockerfile)")
    done = subprocess.run(
        ["docker", "build", "-q", "-t", rig_tag(tag), "-f", str(RIG_DIR / "Dockerfile"), str(ROOT)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
        raise SetupError(f"building the compiled rig (rig-rust/Dockerfile) failed:\n{tail}")
