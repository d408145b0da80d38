"""The machine fingerprint in a real run from plain compose (the watcher's own), rsyslog 8 at small scale. The one
`syslogbench run` measures in a container with the daemon's limits is checked on the matrix's runs
(test_matrix_and_calibration.py), which go through the same `syslogbench run`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from syslogbench.host import profiles, setup
from syslogbench.host.compose import Compose

from .conftest import PROJECT, SMALL

pytestmark = pytest.mark.integration
FIGURES = {"cpu": "loops/s", "file_churn": "ops/s", "loopback_tcp": "MB/s"}
REPEATS = 5
# About 3 s on a quiet 2-core machine; up to 40 s was seen with load 20 on it (docs/findings/fingerprint-spread.md).
SECONDS_NOT_MINUTES = 60


@pytest.fixture(scope="module")
def rsyslog8() -> str:
    """Only the images this file needs (the session's `built` makes every profile's)."""
    setup.setup(["rsyslog8"])
    return profiles.resolve("rsyslog8").profile


def check_figures(fingerprint: dict) -> None:
    """Three figures, each positive, the median of its repeats, in its unit."""
    assert {name: fingerprint[name]["unit"] for name in FIGURES} == FIGURES
    for name in FIGURES:
        figure = fingerprint[name]
        assert figure["value"] > 0, f"{name}: {figure}"
        assert (
            len(figure["repeats"]) == REPEATS and sorted(figure["repeats"])[REPEATS // 2] == figure["value"]
        )
        assert 0 < figure["seconds"] < SECONDS_NOT_MINUTES, f"{name} took {figure['seconds']} s"


def test_plain_compose_gets_the_watchers_own(rsyslog8: str, tmp_path: Path) -> None:
    env = {**os.environ, **SMALL, "RESULTS_DIR": str(tmp_path), "GENERATORS": SMALL["HOSTS"]}
    env.pop("FINGERPRINT", None)
    runner = Compose(rsyslog8, PROJECT)
    runner.down(env, stop_s=5, volumes=True, quiet=True)
    try:
        up = runner.up(env, 600, capture=True)
    finally:
        runner.down(env, stop_s=5, volumes=True, quiet=True)
    assert up.code == 0, up.output[-3000:]
    (path,) = tmp_path.glob("*.json")
    fingerprint = json.loads(path.read_text())["host"]["fingerprint"]
    check_figures(fingerprint)
    assert fingerprint["source"] == "watcher" and "wall_s" not in fingerprint
