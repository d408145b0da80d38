"""Fixtures shared by the unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from syslogbench import contract
from syslogbench.rig import control


@pytest.fixture
def control_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty control directory in place of the shared volume."""
    directory = tmp_path / "control"
    directory.mkdir()
    monkeypatch.setattr(control, "CONTROL", contract.Control(directory))
    return directory
