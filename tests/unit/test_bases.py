"""images/bases.yaml and host/images.py: each suite's base, pinned or built with debootstrap, and the apt
settings a base carries (sid's Check-Valid-Until) written into it and into its marker, so every result says so."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from syslogbench.host import images
from syslogbench.host.images import Base, SetupError

pytestmark = pytest.mark.usefixtures("host_env")

REAL_RUN = subprocess.run  # images.subprocess is this module: the tests patch its run
SID_NOTE = "; apt Acquire::Check-Valid-Until=false (sid's Release had expired on the project's Debian mirror)"


def test_every_suite_is_pinned_by_digest_but_sid() -> None:
    bases = images.load_bases()
    assert set(bases) == {"bullseye", "bookworm", "trixie", "sid"}
    for suite in ("bullseye", "bookworm", "trixie"):
        assert bases[suite].pinned and "@sha256:" in bases[suite].pinned
        assert (bases[suite].apt_options, bases[suite].marker_note) == ({}, "")
    sid = bases["sid"]
    assert sid.pinned is None and "sid" in sid.unpinned_why  # always debootstrap, and says why


def test_sid_tells_apt_not_to_check_valid_until_and_its_marker_says_so() -> None:
    sid = images.load_bases()["sid"]
    assert sid.apt_options == {"Acquire::Check-Valid-Until": "false"}
    assert sid.apt_conf == 'Acquire::Check-Valid-Until "false";\n'
    assert sid.marker_note == SID_NOTE


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        (
            "pinned: debian:sid\n",
            "pinned 'debian:sid' must be an image reference name:tag@sha256:<64 hex digits>",
        ),
        ("apt_options: {A::B: 'false'}\n", "without pinned:, unpinned_why: must say why there is no digest"),
        ("unpinned_why: moving\napt_options: {A::B: 'false'}\n", "apt_options need apt_options_why:"),
        (
            "unpinned_why: moving\napt_options: [x]\n",
            "apt_options must map apt option names to quoted strings",
        ),
        (
            "unpinned_why: moving\npined: x\n",
            "unknown keys ['pined']; the keys are: pinned, unpinned_why, apt_options",
        ),
        ("unpinned_why: 'say \"no\"'\n", "unpinned_why must be one line of text without double quotes"),
        ("[just, a, list]\n", "must be a mapping with pinned: (or unpinned_why:)"),
    ],
)
def test_a_wrong_entry_is_one_line_naming_the_file_and_the_suite(
    tmp_path: Path, entry: str, said: str
) -> None:
    path = tmp_path / "bases.yaml"
    path.write_text("sid:\n" + "".join(f"  {line}\n" for line in entry.splitlines()))
    with pytest.raises(SetupError) as error:
        images.load_bases(path)
    message = str(error.value)
    assert message.startswith(f"{path}: sid: ") and said in message, message
    assert "\n" not in message


def test_an_unpinned_base_is_never_pulled(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Base] = []
    monkeypatch.setattr(images, "base_source", lambda suite: None if not built else "debootstrap sid ...")
    monkeypatch.setattr(images, "try_pull", lambda ref, timeout=0: pytest.fail(f"pulled {ref}"))
    monkeypatch.setattr(images, "debootstrap", built.append)
    lines: list[str] = []
    sid = images.load_bases()["sid"]
    assert images.ensure_base(sid, lines.append) == "debootstrap sid ..."
    assert built == [sid]
    assert lines[0] == (
        f"base sid: no pinned digest ({sid.unpinned_why}); building it from the Debian mirror with debootstrap"
    )


def fake_debootstrap(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """debootstrap, tar and docker import faked: what the root filesystem held when it was imported."""
    seen: dict[str, str] = {}

    def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        if command[0] == "debootstrap":
            rootfs = Path(command[-1])
            (rootfs / "etc" / "apt" / "apt.conf.d").mkdir(parents=True)
        seen.setdefault("commands", "")
        seen["commands"] += " ".join(command) + "\n"
        return subprocess.CompletedProcess(command, 0, "", "")

    class Tar:
        stdout = None

        def __init__(self, command: list[str], **kwargs: object) -> None:
            rootfs = Path(command[2])
            seen["marker"] = (rootfs / "etc" / "syslogbench-base").read_text()
            conf = rootfs / "etc" / "apt" / "apt.conf.d" / "99syslogbench"
            seen["apt_conf"] = conf.read_text() if conf.exists() else ""

        def wait(self) -> int:
            return 0

    monkeypatch.setattr(images, "ensure_debootstrap", lambda: None)
    monkeypatch.setattr(images.subprocess, "run", run)
    monkeypatch.setattr(images.subprocess, "Popen", Tar)
    return seen


def test_debootstrap_writes_the_apt_settings_and_appends_them_to_the_marker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = fake_debootstrap(monkeypatch)
    images.debootstrap(images.load_bases()["sid"])
    assert "debootstrap --variant=minbase sid " in seen["commands"]  # no mirror named: debootstrap's own
    assert seen["apt_conf"] == 'Acquire::Check-Valid-Until "false";\n'
    assert seen["marker"].startswith("debootstrap sid minbase 20") and seen["marker"].endswith(
        SID_NOTE + "\n"
    )


def test_a_base_without_apt_settings_gets_neither_file_nor_note(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = fake_debootstrap(monkeypatch)
    images.debootstrap(images.load_bases()["trixie"])
    assert seen["apt_conf"] == ""
    assert seen["marker"].startswith("debootstrap trixie minbase 20") and ";" not in seen["marker"]


def test_a_pulled_base_carries_the_same_apt_settings_and_note(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    built: list[bytes] = []
    monkeypatch.setattr(images.subprocess, "run", lambda command, **kwargs: built.append(kwargs["input"]))
    pinned = "debian:x@sha256:" + "0" * 64
    images.tag_pulled(Base("x", pinned, "", {"Acquire::Check-Valid-Until": "false"}, "it had expired"))
    (dockerfile,) = built
    assert dockerfile.decode() == (
        f"FROM {pinned}\n"
        "RUN printf '%s\\n' 'Acquire::Check-Valid-Until \"false\";' > /etc/apt/apt.conf.d/99syslogbench && "
        f'echo "pull {pinned}; apt Acquire::Check-Valid-Until=false (it had expired)" > /etc/syslogbench-base\n'
    )
    # The RUN line, run by a shell (paths moved into tmp_path), writes what a debootstrapped base holds.
    run = dockerfile.decode().splitlines()[1].removeprefix("RUN ")
    run = run.replace(images.APT_CONF, str(tmp_path / "apt.conf")).replace(
        images.MARKER, str(tmp_path / "marker")
    )
    REAL_RUN(["sh", "-c", run], check=True)
    assert (tmp_path / "apt.conf").read_text() == 'Acquire::Check-Valid-Until "false";\n'
    assert (
        tmp_path / "marker"
    ).read_text() == f"pull {pinned}; apt Acquire::Check-Valid-Until=false (it had expired)\n"
    built.clear()
    images.tag_pulled(Base("x", pinned))
    assert built[0].decode() == f'FROM {pinned}\nRUN echo "pull {pinned}" > /etc/syslogbench-base\n'


def test_a_present_base_without_its_apt_settings_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sid base made before (or by hand) without the settings would fail at the daemon's apt-get, and its
    marker would not say what every result must: one line saying what to do instead."""
    monkeypatch.setattr(images, "base_source", lambda suite: "debootstrap sid minbase 2026-11-01T00:00:00Z")
    with pytest.raises(SetupError) as error:
        images.ensure_base(images.load_bases()["sid"], lambda line: None)
    assert str(error.value) == (
        "base sid: syslogbench/base:sid lacks what images/bases.yaml gives it (its marker reads "
        "'debootstrap sid minbase 2026-11-01T00:00:00Z', not ending in "
        f"'{SID_NOTE}'): remove it (docker rmi syslogbench/base:sid) and run `python -m syslogbench setup` again"
    )
    monkeypatch.setattr(
        images, "base_source", lambda suite: "debootstrap sid minbase 2026-12-01T20:47:43Z" + SID_NOTE
    )
    assert images.ensure_base(images.load_bases()["sid"], lambda line: None).endswith(SID_NOTE)
