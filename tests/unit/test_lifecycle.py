"""host/lifecycle.py: a stack's life written once: staged before up, and however it ends, down, its results
kept and its staging folder gone."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from syslogbench.host import lifecycle
from syslogbench.host.compose import Up


class FakeStack:
    """Up writes one result where the watcher would (RESULTS_DIR); every step is recorded, in order."""

    project = "sbtest"

    def __init__(self) -> None:
        self.steps: list[str] = []

    def up(self, env: dict[str, str], timeout_s: float) -> Up:
        self.steps.append("up")
        (Path(env["RESULTS_DIR"]) / "run1.json").write_text(json.dumps({"verdict": "pass"}))
        (Path(env["RESULTS_DIR"]) / "run1.json.tmp").write_text("a killed watcher's leftover")
        return Up(0)

    def exec(self, env: dict[str, str], service: str, args: list[str], timeout_s: float) -> object:
        return None

    def down(self, env: dict[str, str]) -> None:
        self.steps.append("down")


def test_a_staged_run_is_fingerprinted_before_up_and_its_result_kept(tmp_path: Path) -> None:
    stack, env = FakeStack(), {"SCENARIO": "seed2014"}

    def fingerprint(given: dict[str, str]) -> None:
        stack.steps.append(f"fingerprint in {Path(given['RESULTS_DIR']).name[:11]}")

    with lifecycle.staged(stack, env, tmp_path, "run", fingerprint) as stage:
        assert stage.up(60).code == 0
    assert stack.steps == ["fingerprint in .run-sbtest", "up", "down"]
    assert stage.kept == [tmp_path / "run1.json"] and not stage.staging.exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run1.json"]


def test_the_start_stamp_is_taken_after_the_fingerprint(tmp_path: Path) -> None:
    stack, taken = FakeStack(), []

    def fingerprint(given: dict[str, str]) -> None:
        taken.append(datetime.now(UTC))

    with lifecycle.staged(stack, {}, tmp_path, "run", fingerprint) as stage:
        assert len(taken) == 1 and stage.began >= taken[0], (taken, stage.began)


def test_a_fingerprint_stopped_by_ctrl_c_leaves_no_staging_folder(tmp_path: Path) -> None:
    stack = FakeStack()

    def fingerprint(given: dict[str, str]) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), lifecycle.staged(stack, {}, tmp_path, "run", fingerprint):
        pass
    assert stack.steps == [] and list(tmp_path.iterdir()) == []


def test_a_staged_run_stopped_by_ctrl_c_is_down_and_keeps_what_it_wrote(tmp_path: Path) -> None:
    stack = FakeStack()
    with pytest.raises(KeyboardInterrupt), lifecycle.staged(stack, {}, tmp_path, "run") as stage:
        stage.up(60)
        raise KeyboardInterrupt
    assert stack.steps == ["up", "down"] and stage.fingerprint is None
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run1.json"]


def test_a_search_keeps_nothing_of_its_staging_folder(tmp_path: Path) -> None:
    stack = FakeStack()
    with lifecycle.staged(stack, {}, tmp_path, "capacity", keep=False) as stage:
        stage.up_behind(60).join()
    assert stack.steps == ["up", "down"] and [up.code for up in stage.ups] == [0]
    assert stage.kept == [] and list(tmp_path.iterdir()) == []


def test_a_kept_run_moves_its_results_into_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    with lifecycle.kept(folder) as (staging, written):
        (staging / "a.json").write_text("{}")
    assert written == [folder / "a.json"] and sorted(p.name for p in folder.iterdir()) == ["a.json"]
