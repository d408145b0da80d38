"""The machine fingerprint: its model, the probes at tiny sizes, the watcher's choice, the host's container."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import pytest

from syslogbench import contract
from syslogbench.host import benchmark, fingerprintcontainer
from syslogbench.model import result as model
from syslogbench.model.settings import from_env
from syslogbench.rig import fingerprintprobes
from tests.unit.conftest import env
from tests.unit.test_schema import MINIMAL, VALIDATOR, lost_or_changed

SAMPLES = Path(__file__).resolve().parent / "samples"
SAMPLE_TEXT = (SAMPLES / "fingerprint.json").read_text()
SAMPLE = json.loads(SAMPLE_TEXT)
ENV = env(CENTRAL_CPUS=1, CENTRAL_MEM="512m")


# --- the model ------------------------------------------------------------------------------------------------


def test_sample_loads_with_three_positive_figures() -> None:
    found = model.Fingerprint.from_json(SAMPLE_TEXT)
    assert found is not None
    assert {name: (f.value, f.per_cpu_s, f.unit, len(f.repeats)) for name, f in found.figures().items()} == {
        "cpu": (3973188.2, 22112935.2, "loops/s", 5),
        "file_churn": (351030.4, 629421.7, "ops/s", 5),
        "loopback_tcp": (1831.4, 2985.7, "MB/s", 5),
    }
    assert (found.source, found.cpu_limit, found.memory_limit_bytes, found.wall_s) == (
        "container",
        8.0,
        2**31,
        None,
    )
    assert found.to_dict() == SAMPLE  # wall_s, None, is left out


@pytest.mark.parametrize("text", [None, ""])
def test_no_fingerprint_is_none(text: str | None) -> None:
    assert model.Fingerprint.from_json(text) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "fingerprint: not JSON"),
        (json.dumps({k: v for k, v in SAMPLE.items() if k != "cpu"}), "fingerprint: missing key 'cpu'"),
        (json.dumps(SAMPLE | {"gpu": 1}), "fingerprint: unknown key 'gpu'"),
        (json.dumps(SAMPLE | {"cpu": {"value": 1}}), "fingerprint.cpu: missing key 'unit'"),
    ],
)
def test_a_bad_fingerprint_names_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(model.ResultError, match=message):
        model.Fingerprint.from_json(text)


def with_fingerprint(fingerprint: dict) -> dict:
    document = copy.deepcopy(MINIMAL)
    document["host"]["fingerprint"] = fingerprint
    return document


def test_a_result_with_a_fingerprint_validates_and_round_trips() -> None:
    document = with_fingerprint(SAMPLE | {"wall_s": 2.8})
    assert list(VALIDATOR.iter_errors(document)) == []
    loaded = model.Result.from_dict(document)
    assert loaded.host.fingerprint is not None and loaded.host.fingerprint.file_churn.value == 351030.4
    assert lost_or_changed(document, loaded.to_dict()) == []
    assert loaded.to_dict()["host"]["fingerprint"] == document["host"]["fingerprint"]


def test_an_older_result_without_a_fingerprint_loads_and_stays_without() -> None:
    assert "fingerprint" not in MINIMAL["host"]
    loaded = model.Result.from_dict(MINIMAL)
    assert loaded.host.fingerprint is None
    assert "fingerprint" not in loaded.to_dict()["host"]


@pytest.mark.parametrize(
    "bad",
    [
        SAMPLE | {"source": "laptop"},
        SAMPLE | {"cpu": SAMPLE["cpu"] | {"value": 0}},
        SAMPLE | {"file_churn": SAMPLE["file_churn"] | {"colour": "blue"}},
        {k: v for k, v in SAMPLE.items() if k != "loopback_tcp"},
    ],
    ids=["source", "zero-figure", "unknown-key", "two-figures"],
)
def test_the_schema_refuses_a_bad_fingerprint(bad: dict) -> None:
    errors = list(VALIDATOR.iter_errors(with_fingerprint(bad)))
    assert len(errors) == 1, errors


# --- the probes, at tiny sizes ------------------------------------------------------------------------------


def test_figure_is_the_median_of_the_repeats() -> None:
    Timing = fingerprintprobes.Timing
    timings = iter([Timing(100, 1.0, 0.5), Timing(300, 1.0, 1.0), Timing(200, 2.0, 0.5)])
    found = fingerprintprobes.figure(lambda: next(timings), "ops/s", repeats=3)
    assert (found.value, found.unit, found.repeats) == (100.0, "ops/s", [100.0, 300.0, 100.0])
    assert (found.cpu_s, found.per_cpu_s) == (2.0, 300.0)  # 600 ops in 2 CPU seconds
    assert found.seconds >= 0


def test_cpu_probe_counts_its_loops() -> None:
    timing = fingerprintprobes.cpu_probe(1000)
    assert timing.amount == 1000 and timing.seconds > 0 and timing.cpu_s >= 0


def test_churn_probe_appends_one_line_per_operation_and_removes_its_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept: list[int] = []
    monkeypatch.setattr(fingerprintprobes.os, "unlink", lambda path: kept.append(Path(path).stat().st_size))
    timing = fingerprintprobes.churn_probe(tmp_path, 500)
    assert (timing.amount, len(kept)) == (500, fingerprintprobes.CHURN_FILES)
    assert sum(kept) == 500 * len(fingerprintprobes.LINE)  # every operation appended one whole line
    assert timing.seconds > 0


def test_churn_probe_leaves_nothing_behind(tmp_path: Path) -> None:
    fingerprintprobes.churn_probe(tmp_path, 200)
    assert list(tmp_path.iterdir()) == []


def test_churn_order_is_fixed() -> None:
    paths = [str(i) for i in range(fingerprintprobes.CHURN_FILES)]
    assert fingerprintprobes.churn_order(paths, 1000) == fingerprintprobes.churn_order(paths, 1000)
    assert len(set(fingerprintprobes.churn_order(paths, 3000))) == 192  # every file gets its turn


def test_loopback_probe_sends_whole_writes_of_whole_lines() -> None:
    timing = fingerprintprobes.loopback_probe(4 * 2**20)
    per_write = len(fingerprintprobes.LINE) * (fingerprintprobes.TCP_WRITE // len(fingerprintprobes.LINE))
    assert timing.amount == 4 * 2**20 // per_write * per_write / 1e6
    assert timing.seconds > 0 and timing.cpu_s > 0  # the receiver's CPU counts too


# ~0.1 s in all
TINY = fingerprintprobes.Work(cpu_loops=200_000, churn_ops=2000, tcp_bytes=8 * 2**20, repeats=3)


def test_measure_gives_three_positive_figures_and_leaves_no_file(tmp_path: Path) -> None:
    found = fingerprintprobes.probe(tmp_path / "fingerprint", "watcher", TINY)
    assert [(name, f.unit, len(f.repeats)) for name, f in found.figures().items()] == [
        ("cpu", "loops/s", 3),
        ("file_churn", "ops/s", 3),
        ("loopback_tcp", "MB/s", 3),
    ]
    assert all(f.value > 0 and f.value in f.repeats for f in found.figures().values())
    assert all(f.cpu_s and f.per_cpu_s and f.per_cpu_s > 0 for f in found.figures().values())
    assert (found.version, found.source) == (fingerprintprobes.VERSION, "watcher")
    assert list((tmp_path / "fingerprint").iterdir()) == []


# --- the watcher: the host's fingerprint, else its own ------------------------------------------------------


def without_busy(notes: list[str]) -> list[str]:
    """Tiny work on a shared machine may vary by more than 20%: that note is tested on its own."""
    return [note for note in notes if not note.startswith("the fingerprint's repeats varied")]


@pytest.fixture
def tiny_measure(monkeypatch: pytest.MonkeyPatch) -> None:
    real = fingerprintprobes.probe
    monkeypatch.setattr(fingerprintprobes, "probe", lambda directory, source: real(directory, source, TINY))


def test_the_watcher_takes_the_hosts_fingerprint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(contract.FINGERPRINT_ENV, json.dumps(QUIET))
    notes: list[str] = []
    found = fingerprintprobes.for_run(tmp_path, notes)
    assert found is not None and found.to_dict() == QUIET
    assert (notes, list(tmp_path.iterdir())) == ([], [])


def test_without_one_the_watcher_measures_its_own_on_the_logs_volume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_measure: None
) -> None:
    monkeypatch.delenv(contract.FINGERPRINT_ENV, raising=False)
    notes: list[str] = []
    found = fingerprintprobes.for_run(tmp_path, notes)
    assert found is not None and found.source == "watcher"
    assert (without_busy(notes), list(tmp_path.iterdir())) == ([], [])


def test_a_bad_fingerprint_from_the_host_is_a_note_and_the_watcher_measures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_measure: None
) -> None:
    monkeypatch.setenv(contract.FINGERPRINT_ENV, "{}")
    notes: list[str] = []
    found = fingerprintprobes.for_run(tmp_path, notes)
    assert found is not None and found.source == "watcher"
    assert without_busy(notes) == [
        "FINGERPRINT ignored (fingerprint: missing key 'version'): the fingerprint was measured in the watcher"
    ]


def test_a_fingerprint_that_fails_is_a_note_not_the_end_of_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(directory: Path, source: str) -> model.Fingerprint:
        directory.mkdir()
        raise OSError(28, "No space left on device")

    monkeypatch.delenv(contract.FINGERPRINT_ENV, raising=False)
    monkeypatch.setattr(fingerprintprobes, "probe", full)
    notes: list[str] = []
    assert fingerprintprobes.for_run(tmp_path, notes) is None
    assert (notes, list(tmp_path.iterdir())) == (["no fingerprint: [Errno 28] No space left on device"], [])


# --- the host: a one-shot container with the daemon's limits -------------------------------------------------


def test_the_container_gets_the_daemons_limits_and_nothing_more() -> None:
    argv = fingerprintcontainer.command(from_env(ENV), "syslogbench/watcher:t", "sb-t-fingerprint")
    text = " ".join(argv)
    assert "--cpu-period 100000 --cpu-quota 100000" in text  # CENTRAL_CPUS=1, as compose.daemons.yaml
    assert f"--memory {512 * 2**20} --memory-swap {512 * 2**20}" in text  # CENTRAL_MEM, no swap beyond
    assert "--mount type=volume,dst=/var/log/bench" in text  # anonymous: fresh, the default driver
    assert "--name sb-t-fingerprint --network none" in text and "--cap-drop ALL" in text
    # Not taken for a service of whichever project built the image (compose.APART): its exit ends no run.
    assert "--rm --label com.docker.compose.project= --label com.docker.compose.service= " in text
    assert not [arg for arg in argv if "privileged" in arg or "docker.sock" in arg or "cap-add" in arg]
    assert argv[-4:] == [
        "syslogbench/watcher:t",
        "-m",
        "syslogbench.rig.fingerprintprobes",
        "/var/log/bench/fingerprint",
    ]


def fake_run(stdout: str = "", code: int = 0, stderr: str = "", raises: Exception | None = None):
    def run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess:
        if raises is not None:
            raise raises
        return subprocess.CompletedProcess(argv, code, stdout, stderr)

    return run


def test_the_host_reads_the_containers_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fingerprintcontainer.subprocess, "run", fake_run(json.dumps(SAMPLE) + "\n"))
    found, why = fingerprintcontainer.take(from_env(ENV), "img")
    assert why == "" and found is not None
    assert found.cpu.value == 3973188.2 and found.wall_s is not None and found.wall_s >= 0
    assert fingerprintcontainer.summary(found).startswith(
        "cpu 4.0M loops/s, file_churn 351k ops/s, loopback_tcp 1,831 MB/s ("
    )


@pytest.mark.parametrize(
    ("run", "why"),
    [
        (fake_run(code=125, stderr="x\nUnable to find image 'img' locally\n"),
         "the fingerprint container exited with code 125: Unable to find image 'img' locally"),
        (fake_run("Traceback"), "the fingerprint container printed no fingerprint: fingerprint: not JSON"),
        (fake_run(""), "the fingerprint container printed nothing"),
        (fake_run(raises=subprocess.TimeoutExpired(["docker"], 120)),
         "the fingerprint container failed: Command '['docker']' timed out after 120 seconds"),
    ],
    ids=["exit-code", "garbage", "nothing", "timeout"],
)  # fmt: skip
def test_a_failed_container_says_why(monkeypatch: pytest.MonkeyPatch, run: object, why: str) -> None:
    monkeypatch.setattr(fingerprintcontainer.subprocess, "run", run)
    found, said = fingerprintcontainer.take(from_env(ENV), "img")
    assert found is None and said.startswith(why)


def test_a_container_past_its_time_is_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess:
        calls.append(argv)
        if argv[:2] == ["docker", "run"]:
            raise subprocess.TimeoutExpired(argv, 120)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setenv("SYSLOGBENCH_PROJECT", "sb-t")
    monkeypatch.setattr(fingerprintcontainer.subprocess, "run", run)
    found, _ = fingerprintcontainer.take(from_env(ENV), "img")
    assert found is None
    assert [call[:3] for call in calls] == [["docker", "run", "--rm"], ["docker", "rm", "-f"]]
    assert "sb-t-fingerprint" in calls[0] and calls[1][3] == "sb-t-fingerprint"


def test_the_run_hands_the_fingerprint_to_the_watcher(monkeypatch: pytest.MonkeyPatch) -> None:
    sample = model.Fingerprint.from_json(SAMPLE_TEXT)
    monkeypatch.setattr(fingerprintcontainer, "take", lambda cfg: (sample, ""))
    env: dict[str, str] = {}
    assert benchmark.measure_fingerprint(from_env(ENV), env) is sample
    assert json.loads(env[contract.FINGERPRINT_ENV]) == SAMPLE
    monkeypatch.setattr(fingerprintcontainer, "take", lambda cfg: (None, "the engine is gone"))
    assert benchmark.measure_fingerprint(from_env(ENV), env) is None
    assert contract.FINGERPRINT_ENV not in env  # the watcher measures its own


# --- a busy machine shows in the repeats ---------------------------------------------------------------------

# The sample was measured while other benchmarks ran on the machine's 2 cores (load average 14). This one,
# with nothing else running (Intel Xeon, 2 cores, 2026-11-24), before the figures had a rate per CPU second.
QUIET = json.loads((SAMPLES / "fingerprint-quiet.json").read_text())


def test_a_quiet_fingerprint_says_nothing() -> None:
    found = model.Fingerprint.from_json(json.dumps(QUIET))
    assert found is not None
    assert [round(f.cov() or 0, 3) for f in found.figures().values()] == [0.049, 0.021, 0.102]
    assert found.unsteady() is None


def test_a_busy_machine_is_named_in_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(contract.FINGERPRINT_ENV, SAMPLE_TEXT)
    notes: list[str] = []
    fingerprintprobes.for_run(tmp_path, notes)
    assert notes == [
        "the fingerprint's repeats varied by more than 20% (CoV: cpu 22%, file_churn 23%): "
        "something else was using the machine, and this run's figures may not compare with others"
    ]


def test_one_repeat_has_no_spread() -> None:
    assert model.Figure(1.0, "ops/s", 0.1, [1.0]).cov() is None


# --- syslogbench fingerprint ------------------------------------------------------------------------------


def test_the_command_gives_each_fingerprint_and_their_spread(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from syslogbench.host import cli

    takes = iter([json.dumps(QUIET | {"wall_s": 3.0}), SAMPLE_TEXT])
    limits: list[tuple[int, int]] = []

    def measure(cfg: object) -> tuple[model.Fingerprint | None, str]:
        limits.append((cfg.central_cpus, cfg.central_mem))  # type: ignore[attr-defined]
        return model.Fingerprint.from_json(next(takes)), ""

    monkeypatch.setattr(fingerprintcontainer, "take", measure)
    assert cli.main(["fingerprint", "--times", "2", "CENTRAL_CPUS=1", "CENTRAL_MEM=1g"]) == 0
    assert limits == [(1, 2**30), (1, 2**30)]
    lines = capsys.readouterr().out.splitlines()
    assert lines[2:] == [
        # One quiet take (21.2M loops/s) and one busy (4.0M); only the busy one has a rate per CPU second.
        "syslogbench: cpu: 12,566,087 loops/s (CoV 96.7%), 22,112,935 per CPU s (CoV 0.0%), 2.19 s each",
        "syslogbench: file_churn: 545,054 ops/s (CoV 50.3%), 629,422 per CPU s (CoV 0.0%), 1.23 s each",
        "syslogbench: loopback_tcp: 2,791 MB/s (CoV 48.6%), 2,986 per CPU s (CoV 0.0%), 1.15 s each",
        "syslogbench: took 3.0 s each (median; 3.0-3.0 s)",
    ]


def test_the_command_without_a_watcher_image_says_what_to_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from syslogbench.host import cli

    monkeypatch.setattr(
        fingerprintcontainer,
        "take",
        lambda cfg: (None, "the fingerprint container exited with code 125: no image"),
    )
    assert cli.main(["fingerprint"]) == 3
    assert capsys.readouterr().out == (
        "syslogbench: error: the fingerprint container exited with code 125: no image: build the watcher image "
        "first (python -m syslogbench setup --profile P)\n"
    )
