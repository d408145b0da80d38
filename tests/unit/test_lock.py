"""The lock per compose project (host/lock.py): one run at a time, released however the holder ends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from syslogbench.host import lock

HOLD = (
    "import sys;from pathlib import Path;from syslogbench.host import lock\n"
    "with lock.project(sys.argv[1], Path(sys.argv[2])):\n"
    "    print('held', flush=True); sys.stdin.read()\n"
)


def holder(project: str, directory: Path) -> subprocess.Popen[str]:
    """Another process holding the project's lock through lock.project, until killed."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, project, str(directory)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    return process


def test_the_lock_file_is_named_after_the_project(tmp_path: Path) -> None:
    assert lock.lock_path("privilege", tmp_path) == tmp_path / "syslogbench-privilege.lock"
    assert lock.lock_path("a/b c", tmp_path) == tmp_path / "syslogbench-a_b_c.lock"


def test_a_held_project_is_refused_naming_the_holder_and_the_way_out(tmp_path: Path) -> None:
    other = holder("bench", tmp_path)
    try:
        with pytest.raises(lock.ProjectBusy) as refused, lock.project("bench", tmp_path):
            pytest.fail("took a lock another process holds")
    finally:
        other.kill()
        other.wait()
    assert str(refused.value) == (
        f"compose project 'bench' is busy with another run (pid {other.pid}): wait for it, or run in parallel "
        "with another project and image tag, e.g. SYSLOGBENCH_PROJECT=bench-2 IMAGE_TAG=bench-2"
    )
    assert lock.HELD == {}


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    other = holder("bench", tmp_path)
    other.kill()  # SIGKILL: no clean-up ran, the kernel dropped the flock
    other.wait()
    with lock.project("bench", tmp_path):
        assert list(lock.HELD) == ["bench"]
    assert lock.HELD == {}


def test_other_projects_are_not_blocked(tmp_path: Path) -> None:
    other = holder("bench", tmp_path)
    try:
        with lock.project("bench-2", tmp_path):
            assert list(lock.HELD) == ["bench-2"]
    finally:
        other.kill()
        other.wait()


def test_the_same_process_takes_its_own_project_again(tmp_path: Path) -> None:
    # A matrix holds the project and each run takes it again.
    with lock.project("bench", tmp_path), lock.project("bench", tmp_path):
        assert list(lock.HELD) == ["bench"]
    assert lock.HELD == {}


def test_the_lock_is_released_when_the_block_raises(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), lock.project("bench", tmp_path):
        raise KeyboardInterrupt
    probe = subprocess.run(
        [sys.executable, "-c", HOLD, "bench", str(tmp_path)],
        input="",
        capture_output=True,
        text=True,
        cwd=Path(__file__).parents[2],
        timeout=30,
    )
    assert (probe.returncode, probe.stdout) == (0, "held\n"), probe.stderr


def test_set_ups_of_one_checkout_take_turns(tmp_path: Path) -> None:
    """taking_turns waits for the holder (flock on the same file) and says when its wait ran out."""
    other = holder("setup-x", tmp_path)  # lock.project's file for the name is taking_turns' file too
    try:
        with lock.taking_turns("setup-x", 0.6, tmp_path) as held:
            assert held is False
    finally:
        other.kill()
        other.wait()
    with lock.taking_turns("setup-x", 5, tmp_path) as held:
        assert held is True
        with lock.taking_turns("setup-x", 0.6, tmp_path) as again:  # a second descriptor: a second taker
            assert again is False
