"""The Compose v2 install (host/prerequisites.py): an apt source verified with Debian's archive keys, never trusted."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from syslogbench.host import prerequisites

MIRROR = "http://mirror.invalid/debian"


def test_the_sources_line_is_signed_by_the_debian_archive_keyring() -> None:
    assert prerequisites.sources_line(MIRROR) == (
        f"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] {MIRROR} trixie main\n"
    )


def test_nothing_in_the_set_up_trusts_an_unsigned_source() -> None:
    assert "trusted=yes" not in Path(prerequisites.__file__).read_text()


class FakeApt:
    """apt-get as the test says: update lists the suite (or not), download leaves a .deb."""

    def __init__(self, lists: bool, update_code: int = 0) -> None:
        self.lists, self.update_code = lists, update_code
        self.commands: list[list[str]] = []

    def __call__(self, command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        self.commands.append(command)
        directory = Path(
            str(next(o for o in command if o.startswith("-oDir::Cache="))).split("=", 1)[1]
        ).parent
        if command[-1] == "update" and self.lists:
            (directory / "lists" / "mirror.invalid_debian_dists_trixie_InRelease").write_text("signed\n")
        if command[-1] == "docker-compose":
            (directory / "docker-compose_2.26.1-4_amd64.deb").write_bytes(b"deb")
        return subprocess.CompletedProcess(
            command, self.update_code, "", "E: The repository is not signed.\n"
        )


def test_download_writes_the_signed_source_and_keeps_to_its_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    keyring = tmp_path / "keys.gpg"
    keyring.write_bytes(b"keys")
    apt = FakeApt(lists=True)
    monkeypatch.setattr(prerequisites.subprocess, "run", apt)
    deb = prerequisites.download_compose(MIRROR, tmp_path / "apt", keyring)
    assert deb == tmp_path / "apt" / "docker-compose_2.26.1-4_amd64.deb"
    assert (
        tmp_path / "apt" / "sources.list"
    ).read_text() == f"deb [signed-by={keyring}] {MIRROR} trixie main\n"
    options = [
        f"-oDir::Etc::sourcelist={tmp_path / 'apt' / 'sources.list'}",
        "-oDir::Etc::sourceparts=/dev/null",
        f"-oDir::State::Lists={tmp_path / 'apt' / 'lists'}",
        f"-oDir::Cache={tmp_path / 'apt' / 'cache'}",
    ]
    assert apt.commands == [
        ["apt-get", *options, "update"],
        ["apt-get", *options, "download", "docker-compose"],
    ]


@pytest.mark.parametrize(("lists", "code"), [(False, 0), (False, 100), (True, 100)])
def test_a_suite_apt_cannot_verify_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, lists: bool, code: int
) -> None:
    # apt-get update may exit 0 and only warn when a signature fails: no Release listed is a refusal too.
    keyring = tmp_path / "keys.gpg"
    keyring.write_bytes(b"keys")
    apt = FakeApt(lists=lists, update_code=code)
    monkeypatch.setattr(prerequisites.subprocess, "run", apt)
    with pytest.raises(prerequisites.SetupError) as refused:
        prerequisites.download_compose(MIRROR, tmp_path / "apt", keyring)
    assert str(refused.value) == (
        f"apt could not read or verify Debian trixie from {MIRROR}: E: The repository is not signed."
    )
    assert [command[-1] for command in apt.commands] == ["update"]  # nothing downloaded


def test_a_missing_keyring_is_refused_before_apt_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(
        prerequisites.subprocess, "run", lambda *a, **k: pytest.fail("apt ran without a keyring")
    )
    with pytest.raises(prerequisites.SetupError) as refused:
        prerequisites.download_compose(MIRROR, tmp_path, tmp_path / "none.gpg")
    assert str(refused.value).startswith(f"{tmp_path / 'none.gpg'} is missing: install Debian's archive keys")
