"""The matrix runner and the sender calibration, on real containers at small scale."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import PROJECT, ROOT
from .test_fingerprint_run import SECONDS_NOT_MINUTES, check_figures

pytestmark = pytest.mark.integration
SMALL = ["HOSTS=1", "SENDERS_PER_HOST=2", "MESSAGES_PER_SENDER=2000"]


def syslogbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "syslogbench", *args],
        cwd=ROOT,
        env={**os.environ, "SYSLOGBENCH_PROJECT": PROJECT},
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_matrix_interleaves_and_resumes(built, tmp_path: Path) -> None:
    args = [
        "matrix",
        "--profiles",
        "baseline,syslog-ng-3.38",
        "--replicates",
        "2",
        "--results",
        str(tmp_path),
    ]
    limits = ["CENTRAL_CPUS=1", "CENTRAL_MEM=1g"]
    first = syslogbench(*args, *SMALL, *limits)
    results = [json.loads(path.read_text()) for path in sorted(tmp_path.glob("*.json"))]
    # Each run's own account first: the output's tail is only the last run's.
    said = "\n".join(f"{r['run_id']}: {r['verdict']} {r['errors']}" for r in results)
    (tmp_path / "first.log").write_text(first.stdout + first.stderr)  # the whole output, for a post-mortem
    assert first.returncode == 0, f"{said}\n{first.stdout[-3000:]}{first.stderr[-3000:]}"
    order = [(r["matrix"]["replicate"], r["daemon"]["profile"]) for r in results]
    assert order == [(1, "baseline"), (1, "syslog-ng-3.38"), (2, "baseline"), (2, "syslog-ng-3.38")]
    assert {r["verdict"] for r in results} == {"pass"}
    assert all(r["samples"]["rows"] or r["elapsed_s"] < 1.5 for r in results)
    # Each run's fingerprint, measured by `syslogbench run` in a container with the daemon's own limits.
    assert first.stdout.count("syslogbench: fingerprint: cpu ") == 4
    for result in results:
        fingerprint = result["host"]["fingerprint"]
        check_figures(fingerprint)
        assert fingerprint["source"] == "container"
        assert (fingerprint["cpu_limit"], fingerprint["memory_limit_bytes"]) == (1.0, 2**30)
        assert result["limits"]["central_cpus"]["configured"] == 1.0
        assert result["limits"]["central_memory_bytes"]["configured"] == 2**30
        assert fingerprint["wall_s"] < SECONDS_NOT_MINUTES, f"the fingerprint took {fingerprint['wall_s']} s"

    again = syslogbench(*args, *SMALL, *limits)
    assert again.returncode == 0
    assert "0 runs to do, 4 already" in again.stdout
    assert len(list(tmp_path.glob("*.json"))) == 4


def test_calibration_measures_both_senders(built, tmp_path: Path) -> None:
    done = syslogbench("calibrate", "--messages", "20000", "--connections", "2", "--results", str(tmp_path))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (path,) = (tmp_path / "calibration").glob("*.json")
    rows = {row["sender"]: row for row in json.loads(path.read_text())["rows"]}
    ours, loggen = rows["syslogbench sender (sendfile)"], rows["loggen (syslog-ng-core)"]
    assert ours["messages"] == 2 * 20001 and loggen["messages"] == 2 * 20000
    assert ours["msgs_per_s"] > 0 and loggen["msgs_per_s"] > 0
    assert ours["cpu_s_per_million_with_render"] > ours["cpu_s_per_million"]
