"""The GitHub Actions workflow: actionlint (with shellcheck on the run: blocks), and what the benchmark
matrix must keep doing that actionlint cannot know about (matrix from the manifests, pins, artifacts)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from syslogbench.contract import EXIT_CODES
from syslogbench.host import cli, profiles
from syslogbench.model import result, scenarios, settings

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
BENCH = WORKFLOWS / "bench-matrix.yml"
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def tool(name: str) -> str:
    """A tool from requirements-dev.txt, beside this Python first (the venv), then on PATH."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is missing: install requirements-dev.txt (`make setup` or `pip install -r ...`)")
    return found


def actionlint(*files: Path) -> subprocess.CompletedProcess[str]:
    command = [
        tool("actionlint"),
        f"-shellcheck={tool('shellcheck')}",
        "-pyflakes=",
        "-oneline",
        *map(str, files),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def workflow() -> dict:
    return yaml.safe_load(BENCH.read_text())


def steps_using(job: dict, action: str) -> list[dict]:
    return [step for step in job["steps"] if step.get("uses", "").startswith(f"{action}@")]


def run_text(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


# -- actionlint ----------------------------------------------------------------------------------------


def test_actionlint_passes_on_every_workflow() -> None:
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert BENCH in files
    done = actionlint(*files)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("old", "new", "rule"),
    [
        ("    needs: bench\n", "    needs: benches\n", "[job-needs]"),
        (
            'echo "matrix=$matrix" >> "$GITHUB_OUTPUT"',
            "echo matrix=$matrix >> $GITHUB_OUTPUT",
            "SC2086",  # shellcheck, through actionlint
        ),
        (
            "fromJSON(needs.profiles.outputs.matrix)",
            "fromJSON(needs.profiles.outputs.matrixx)",
            "[expression]",
        ),
    ],
)
def test_actionlint_fails_on_a_broken_workflow(tmp_path: Path, old: str, new: str, rule: str) -> None:
    text = BENCH.read_text()
    assert old in text, "the test's mutation no longer applies: update it to the workflow"
    broken = tmp_path / ".github" / "workflows" / "broken.yml"
    broken.parent.mkdir(parents=True)
    broken.write_text(text.replace(old, new))
    done = actionlint(broken)
    assert done.returncode == 1, done.stdout + done.stderr
    assert rule in done.stdout


# -- what the matrix must keep doing ----------------------------------------------------------------------


def test_profiles_json_lists_each_manifest_once_without_aliases(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["profiles", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert [row["profile"] for row in table] == sorted(p.profile for p in profiles.all_profiles())
    aliases = {alias for p in profiles.all_profiles() for alias in p.aliases}
    assert aliases and not aliases & {row["profile"] for row in table}
    assert all(set(row) == {"profile", "daemon", "version", "debootstrap"} for row in table)
    # debootstrap: the base has no pinned digest (sid), so set-up builds it as root, even on a runner.
    assert sorted(row["profile"] for row in table if row["debootstrap"]) == [
        "rsyslog-8.2610",
        "syslog-ng-4.12",
    ]


def test_a_base_without_a_pinned_digest_is_set_up_as_root() -> None:
    bench = workflow()["jobs"]["bench"]
    assert bench["env"]["DEBOOTSTRAP"] == "${{ matrix.debootstrap }}"
    (step,) = [step for step in bench["steps"] if step.get("name", "").startswith("Set up")]
    assert 'if [ "$DEBOOTSTRAP" = true ]; then' in step["run"]
    assert "sudo apt-get install -y -q debootstrap debian-archive-keyring" in step["run"]
    assert 'sudo "$(command -v python)" -m syslogbench setup --profile "$PROFILE"' in step["run"]
    assert '\n  python -m syslogbench setup --profile "$PROFILE"\n' in step["run"]


def test_the_matrix_comes_from_the_manifests() -> None:
    jobs = workflow()["jobs"]
    assert "python -m syslogbench profiles --json" in run_text(jobs["profiles"])
    assert jobs["profiles"]["outputs"]["matrix"] == "${{ steps.list.outputs.matrix }}"
    bench = jobs["bench"]
    assert bench["needs"] == "profiles"
    assert bench["strategy"]["matrix"] == {"include": "${{ fromJSON(needs.profiles.outputs.matrix) }}"}
    assert bench["strategy"]["fail-fast"] is False
    assert bench["env"]["PROFILE"] == "${{ matrix.profile }}"


def test_least_privilege_and_pinned_actions() -> None:
    data = workflow()
    assert data["permissions"] == {"contents": "read"}
    for name, job in data["jobs"].items():
        assert "permissions" not in job, f"job {name} must not widen the token's permissions"
        for step in job["steps"]:
            if "uses" in step:
                assert PINNED.match(step["uses"]), f"{name}: {step['uses']} is not pinned by commit SHA"
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False


def test_ci_scale_by_default_and_the_seed_scale_on_dispatch() -> None:
    data = workflow()
    triggers = data.get("on", data.get(True))  # YAML 1.1 reads a bare `on` as true
    inputs = triggers["workflow_dispatch"]["inputs"]
    assert inputs["scale"]["default"] == "ci" and inputs["scale"]["options"] == ["ci", "seed"]
    assert inputs["scenario"]["default"] == "seed2014"
    bench = data["jobs"]["bench"]
    assert bench["env"]["SCALE"] == "${{ inputs.scale || 'ci' }}"
    shape = tuple(
        int(data["env"][f"CI_{key}"]) for key in ("HOSTS", "SENDERS_PER_HOST", "MESSAGES_PER_SENDER")
    )
    assert shape == (2, 2, 20000)
    # `seed` leaves the shape to the scenario, seed2014's the 2014 one the report compares against; `ci`
    # overrides it, which the settings record as a variant.
    assert scenarios.load("seed2014").shape == result.SEED_SHAPE
    text = run_text(bench)
    for key in settings.SHAPE:
        assert f'echo "{key}=$CI_{key}"' in text
    variant = settings.load(ROOT / ".env", {key: data["env"][f"CI_{key}"] for key in settings.SHAPE}).variant
    assert variant == "2x2x20000"


def test_the_run_step_reads_exit_codes_as_the_contract_means_them() -> None:
    text = run_text(workflow()["jobs"]["bench"])
    assert f'{EXIT_CODES["n/a"]}) echo "::notice::$PROFILE cannot run scenario' in text
    names = {"loss": "loss", "bad-input": "bad input", "error": "error", "timeout": "timeout"}
    listed = ", ".join(f"{EXIT_CODES[key]} {text}" for key, text in names.items())
    assert f"exit code $code ({listed})" in run_text(workflow()["jobs"]["bench"])


def test_cpu_limits_never_exceed_the_runners_cores() -> None:
    text = run_text(workflow()["jobs"]["bench"])
    assert "for name in CENTRAL_CPUS REMOTE_CPUS; do" in text
    assert 'if [ "$wanted" -gt "$cores" ]; then' in text
    assert 'echo "$name=$cores" >> "$GITHUB_ENV"' in text


def test_each_result_is_an_artifact_and_the_report_job_renders_them() -> None:
    data = workflow()
    results = data["env"]["RESULTS"]
    bench = data["jobs"]["bench"]
    assert '--results "$RESULTS"' in run_text(bench)
    (upload,) = steps_using(bench, "actions/upload-artifact")
    assert upload["if"] == "${{ !cancelled() }}"
    assert upload["with"]["name"] == "result-${{ matrix.profile }}"
    assert upload["with"]["path"] == "${{ env.RESULTS }}/*.json"

    aggregate = data["jobs"]["report"]
    assert aggregate["needs"] == "bench"
    assert aggregate["if"] == "${{ !cancelled() && needs.bench.result != 'skipped' }}"
    (download,) = steps_using(aggregate, "actions/download-artifact")
    assert download["with"] == {"pattern": "result-*", "merge-multiple": True, "path": "${{ env.RESULTS }}"}
    text = run_text(aggregate)
    assert 'python -m syslogbench report --results "$RESULTS" --out "$REPORT"' in text
    assert '>> "$GITHUB_STEP_SUMMARY"' in text
    (upload,) = steps_using(aggregate, "actions/upload-artifact")
    assert upload["with"]["path"] == "${{ env.REPORT }}/"
    assert results != "results"  # the committed results/ stay out of the CI report
