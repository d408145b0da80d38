"""Base images: pull the pinned digest where a registry answers, else build from the Debian mirror."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import yaml

from syslogbench.host.prerequisites import SetupError, ensure_debootstrap

__all__ = ["SetupError"]

ROOT = Path(__file__).resolve().parents[2]
BASES_FILE = ROOT / "images" / "bases.yaml"
LOCAL_REPO = "syslogbench/base"
MARKER = "/etc/syslogbench-base"


# The keys a suite's entry in images/bases.yaml may have.
BASE_KEYS = ("pinned", "unpinned_why", "apt_options", "apt_options_why")
# Where a base's apt_options go inside it: read by every later `apt-get` in the images built FROM it.
APT_CONF = "/etc/apt/apt.conf.d/99syslogbench"


@dataclass(frozen=True)
class Base:
    """One suite's entry in images/bases.yaml."""

    suite: str
    # The registry reference pulled by digest where a registry answers; None: always debootstrap.
    pinned: str | None = None
    unpinned_why: str = ""  # why there is no `pinned` (required then)
    # apt settings the base carries (written to APT_CONF) and the reason for them, both in its marker.
    apt_options: dict[str, str] = field(default_factory=dict)
    apt_options_why: str = ""

    @property
    def apt_conf(self) -> str:
        """The APT_CONF file's text: `Name "value";` a line each (empty without apt_options)."""
        return "".join(f'{name} "{value}";\n' for name, value in self.apt_options.items())

    @property
    def marker_note(self) -> str:
        """What the marker adds after how the base was made: its apt settings and why (empty without)."""
        if not self.apt_options:
            return ""
        options = ", ".join(f"{name}={value}" for name, value in self.apt_options.items())
        return f"; apt {options} ({self.apt_options_why})"


def parse_base(suite: object, entry: object, path: Path = BASES_FILE) -> Base:
    """One suite's entry, checked: a wrong one is refused in one line naming the file, the suite and the key."""
    where = f"{path}: {suite}"
    if not isinstance(entry, dict):
        raise SetupError(f"{where}: must be a mapping with pinned: (or unpinned_why:), apt_options:, ...")
    unknown = sorted(set(entry) - set(BASE_KEYS))
    if unknown:
        raise SetupError(f"{where}: unknown keys {unknown}; the keys are: {', '.join(BASE_KEYS)}")
    pinned = entry.get("pinned")
    if pinned is not None and not (
        isinstance(pinned, str) and re.fullmatch(r"[^@\s]+:[^@\s]+@sha256:[0-9a-f]{64}", pinned)
    ):
        raise SetupError(
            f"{where}: pinned {pinned!r} must be an image reference name:tag@sha256:<64 hex digits>"
        )
    if pinned is None and not str(entry.get("unpinned_why") or "").strip():
        raise SetupError(f"{where}: without pinned:, unpinned_why: must say why there is no digest")
    options = entry.get("apt_options") or {}
    if not isinstance(options, dict) or not all(
        isinstance(k, str) and re.fullmatch(r"[A-Za-z0-9:_-]+", k) and isinstance(v, str) and '"' not in v
        for k, v in options.items()
    ):
        raise SetupError(
            f'{where}: apt_options must map apt option names to quoted strings, e.g. Acquire::Check-Valid-Until: "false"'
        )
    if options and not str(entry.get("apt_options_why") or "").strip():
        raise SetupError(f"{where}: apt_options need apt_options_why: (every result records it)")
    for key in ("unpinned_why", "apt_options_why"):
        text = entry.get(key, "")
        if not isinstance(text, str) or '"' in text or "\n" in text:
            raise SetupError(f"{where}: {key} must be one line of text without double quotes")
    return Base(
        str(suite),
        pinned,
        str(entry.get("unpinned_why") or ""),
        dict(options),
        str(entry.get("apt_options_why") or ""),
    )


def load_bases(path: Path | None = None) -> dict[str, Base]:
    path = path or BASES_FILE
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise SetupError(f"{path}: not valid YAML: {getattr(error, 'problem', error)}") from None
    if not isinstance(data, dict):
        raise SetupError(f"{path}: must map each Debian suite to its entry (pinned:, ...)")
    return {str(suite): parse_base(suite, entry, path) for suite, entry in data.items()}


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


def tag_pulled(base: Base) -> None:
    # A one-line build adds the marker file (and the base's apt settings), so pulled and debootstrapped bases
    # look alike inside.
    lines = " ".join(f"'{line}'" for line in base.apt_conf.splitlines())
    apt = f"printf '%s\\n' {lines} > {APT_CONF} && " if base.apt_options else ""
    dockerfile = f'FROM {base.pinned}\nRUN {apt}echo "pull {base.pinned}{base.marker_note}" > {MARKER}\n'
    subprocess.run(
        ["docker", "build", "-q", "-t", local_tag(base.suite), "-"],
        input=dockerfile.encode(),
        check=True,
    )


def debootstrap(base: Base) -> None:
    suite = base.suite
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
        if base.apt_options:
            (rootfs / APT_CONF.lstrip("/")).write_text(base.apt_conf)
        (rootfs / MARKER.lstrip("/")).write_text(f"debootstrap {suite} minbase {stamp}{base.marker_note}\n")
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        subprocess.run(
            ["docker", "import", "--change", 'CMD ["/bin/bash"]', "-", local_tag(suite)],
            stdin=tar.stdout,
            check=True,
            capture_output=True,
        )
        if tar.wait() != 0:
            raise SetupError(f"tar of the {suite} root filesystem failed")


def ensure_base(base: Base, log=print) -> str:
    """Make `syslogbench/base:<suite>` exist; return where it came from."""
    suite = base.suite
    source = base_source(suite)
    if source is not None:
        if not source.endswith(base.marker_note):
            raise SetupError(
                f"base {suite}: {local_tag(suite)} lacks what {BASES_FILE.relative_to(ROOT)} gives it (its marker "
                f"reads '{source}', not ending in '{base.marker_note}'): remove it (docker rmi {local_tag(suite)}) "
                "and run `python -m syslogbench setup` again"
            )
        log(f"base {suite}: present ({source})")
        return source
    if base.pinned is None:
        log(
            f"base {suite}: no pinned digest ({base.unpinned_why}); building it from the Debian mirror with debootstrap"
        )
        debootstrap(base)
        log(f"base {suite}: built with debootstrap")
    elif try_pull(base.pinned):
        tag_pulled(base)
        log(f"base {suite}: pulled {base.pinned}")
    else:
        log(f"base {suite}: no registry answers; building it from the Debian mirror with debootstrap")
        debootstrap(base)
        log(f"base {suite}: built with debootstrap and used in place of {base.pinned}")
    return base_source(suite) or "unknown"


def ensure_bases(suites: list[str], log=print) -> dict[str, str]:
    bases = load_bases()
    unknown = sorted(set(suites) - set(bases))
    if unknown:
        raise SetupError(f"no base image declared for {unknown} in {BASES_FILE}")
    return {suite: ensure_base(bases[suite], log) for suite in suites}


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
