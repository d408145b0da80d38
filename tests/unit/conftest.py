"""Fixtures shared by the unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from syslogbench import contract
from syslogbench.rig import channel, control


@pytest.fixture
def control_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty control directory in place of the shared volume."""
    directory = tmp_path / "control"
    directory.mkdir()
    monkeypatch.setattr(control, "CONTROL", contract.Control(directory))
    return directory


@pytest.fixture
def watcher_channel(control_dir: Path, monkeypatch: pytest.MonkeyPatch) -> channel.Server:
    """The watcher's side of the control channel on a free loopback port, over control_dir; this process's
    links reach it."""
    server = channel.Server(contract.Control(control_dir), port=0)
    server.open()
    monkeypatch.setattr(channel, "WATCHER", "127.0.0.1")
    monkeypatch.setattr(channel, "PORT", server.port)
    monkeypatch.setattr(channel, "_links", {})
    yield server
    server.close(grace=0)
