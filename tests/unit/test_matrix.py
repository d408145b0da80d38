"""The matrix runner's pure parts, the sender-bound rule, and loggen output parsing."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from syslogbench.contract import EXIT_CODES
from syslogbench.host import calibrate, cli, compare, matrix, onehost, ownconfig, setup
from syslogbench.host.capacity import searchplan
from syslogbench.model import settings, userconfig
from syslogbench.model.result import Cpu, Generators, Matrix, SenderBound
from syslogbench.rig import outcome as result
from tests.unit.test_result import document_of, observed

ONE_HOST = onehost.OneHost()


def test_cells_interleave_profiles_within_each_replicate() -> None:
    assert matrix.cells(["a", "b"], 3) == [(1, "a"), (1, "b"), (2, "a"), (2, "b"), (3, "a"), (3, "b")]


def test_matrix_id_depends_on_profiles_and_settings_only() -> None:
    first = matrix.matrix_id(["a", "b"], {"HOSTS": "2"})
    assert first == matrix.matrix_id(["b", "a"], {"HOSTS": "2"})
    assert first != matrix.matrix_id(["a", "b"], {"HOSTS": "3"})
    assert first != matrix.matrix_id(["a"], {"HOSTS": "2"})
    assert first.startswith("m") and len(first) == 11


def write(path: Path, data: object) -> None:
    path.write_text(json.dumps(data))


def cell(profile: str, matrix_cell: Matrix | None) -> dict:
    """A whole result of the daemon `profile`, of that matrix cell (None: of no matrix)."""
    document = document_of(observed(matrix=matrix_cell))
    document["daemon"]["profile"] = profile
    return document


def test_done_cells_reads_only_this_matrix(tmp_path: Path) -> None:
    write(tmp_path / "1.json", cell("a", Matrix("m1", replicate=2)))
    write(tmp_path / "2.json", cell("a", Matrix("other", replicate=1)))
    write(tmp_path / "3.json", cell("b", None))
    (tmp_path / "4.json").write_text("not json")
    write(
        tmp_path / "5.json", {"matrix": {"id": "m1", "replicate": 3}, "daemon": {"profile": "c"}}
    )  # no result
    assert matrix.done_cells(tmp_path, "m1") == {(2, "a")}


def quiet_matrix(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Path, dict[str, str]]]:
    """run_matrix with benchmark.run faked: what it was asked to run, in order."""
    calls: list[tuple[str, Path, dict[str, str]]] = []

    def fake_run(chosen: FakePlan, results_dir: Path, options: matrix.runplan.RunOptions) -> int:
        calls.append((chosen.profile.profile, results_dir, options.extra_env))
        return EXIT_CODES["pass"]

    monkeypatch.setattr(matrix.benchmark, "run", fake_run)
    monkeypatch.setattr(setup, "setup", lambda names: None)
    monkeypatch.setattr(matrix, "log", lambda line: None)
    monkeypatch.setattr(matrix.runplan, "resolve", lambda name: type("P", (), {"profile": name}))
    monkeypatch.setattr(matrix.runplan, "make", FakePlan.make)
    monkeypatch.setattr(matrix.lock, "project", lambda name: contextlib.nullcontext())
    return calls


@dataclass
class FakePlan:
    """A plan of a made-up profile: its user config read as rsyslog's, nothing else checked."""

    profile: object
    user: object
    unsupported: tuple = ()

    @property
    def on(self) -> FakePlan:
        return self  # its own orchestrator, whose load check passes

    def refuse_unfit(self, chosen: object) -> None:
        return None

    @property
    def config_sha256(self) -> str | None:
        return str(self.user.identity()["sha256"]) if self.user else None  # type: ignore[attr-defined]

    @classmethod
    def make(cls, name: str, overrides: dict, on: object, config: object = None) -> FakePlan:
        options = ownconfig.split_settings(overrides)[1]
        return cls(type("P", (), {"profile": name})(), ownconfig.given(config, "rsyslog", options))  # type: ignore[arg-type]


def test_warmup_runs_first_apart_and_under_their_own_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = quiet_matrix(monkeypatch)
    assert matrix.run_matrix(["a", "b"], 2, {}, tmp_path, False, ONE_HOST, warmup=1) == EXIT_CODES["pass"]
    mid = matrix.matrix_id(["a", "b"], {})
    assert [(name, where, env["MATRIX_ID"]) for name, where, env in calls] == [
        ("a", tmp_path / "warmup", f"{mid}-warmup"),
        ("b", tmp_path / "warmup", f"{mid}-warmup"),
        *[(name, tmp_path, mid) for name in ("a", "b", "a", "b")],
    ]
    assert [env["MATRIX_REPLICATE"] for _, _, env in calls] == ["1", "1", "1", "1", "2", "2"]


def test_a_negative_warmup_is_refused_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = quiet_matrix(monkeypatch)
    with pytest.raises(matrix.benchmark.settings.SettingsError, match="--warmup -1: use 0 or more"):
        matrix.run_matrix(["a"], 1, {}, Path("/nonexistent"), False, ONE_HOST, warmup=-1)
    assert calls == []


def test_progress_line_shows_share_and_eta() -> None:
    line = matrix.progress_line(1, 4, 60.0)
    assert line.startswith("[" + "#" * 7 + "-" * 23 + "]")
    assert "1/4 runs, 25%, elapsed 1m00s, ETA 3m00s" in line
    assert "ETA ?" in matrix.progress_line(0, 4, 0.0)


@pytest.mark.parametrize(
    ("share", "percent", "cpus", "expected"),
    [
        (0.9, 50.0, 2, True),  # senders saturated, daemon used 0.5 of 2 CPUs
        (0.9, 190.0, 2, False),  # the daemon was busy: not sender-bound
        (0.01, 50.0, 2, False),  # senders mostly waited on the daemon
        (0.5, 159.0, 2, True),  # both limits exactly at their boundary
        (0.5, 160.0, 2, False),
    ],
)
def test_sender_bound_rule(share: float, percent: float, cpus: float, expected: bool) -> None:
    verdict = result.sender_bound(Generators(cpu_share_of_send=share), Cpu(percent=percent), cpus)
    assert verdict.value is expected
    assert "send time" in verdict.reason and "effective CPUs" in verdict.reason


def test_sender_bound_unknown_without_figures() -> None:
    unknown = result.sender_bound(Generators(cpu_share_of_send=None), Cpu(percent=50.0), 2)
    assert unknown == SenderBound(value=None, reason="not measured")


LOGGEN_OUTPUT = """count=421336, rate = 421336.00 msg/sec
average rate = 264303.17 msg/sec, count=1200000, time=4.54020, (average) msg size=100, bandwidth=25810.86 kB/sec
0m0.001s 0m0.002s
0m1.250s 0m1.035s
"""


def test_parse_loggen_reads_rate_count_time_and_children_cpu() -> None:
    row = calibrate.parse_loggen(LOGGEN_OUTPUT)
    assert row["messages"] == 1_200_000
    assert row["seconds"] == 4.54
    assert row["cpu_s"] == 2.285
    assert row["cpu_s_per_million"] == pytest.approx(1.904, abs=0.001)


def test_parse_loggen_says_what_it_could_not_read() -> None:
    with pytest.raises(RuntimeError, match="could not read loggen"):
        calibrate.parse_loggen("connection refused")


def test_matrix_summary_names_each_code_from_the_contract() -> None:
    assert matrix.summary([0, 0, 1, 4]) == "4 runs: 1 loss, 1 n/a, 2 pass (see their results)"
    assert matrix.summary([0, 0]) == "2 runs: 2 pass"
    assert matrix.summary([]) == "0 runs: none"
    assert matrix.summary([0, 99]) == "2 runs: 1 exit 99, 1 pass (see their results)"


@pytest.mark.parametrize(
    ("codes", "name"),
    [
        ([0, 0], "pass"),
        ([], "pass"),
        ([0, 4], "n/a"),
        ([4, 1, 0], "loss"),
        ([1, 5], "timeout"),
        ([5, 3, 1], "error"),
        ([0, 99], "error"),  # a code outside the table cannot be read as anything else
    ],
)
def test_matrix_ends_with_the_code_that_most_needs_a_look(codes: list[int], name: str) -> None:
    assert matrix.matrix_code(codes) == EXIT_CODES[name]


def test_a_user_config_gives_the_matrix_its_own_id_and_reaches_every_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configs: list[object] = []
    calls = quiet_matrix(monkeypatch)
    real_run = matrix.benchmark.run

    def keep(chosen: FakePlan, *args: object) -> int:
        configs.append(chosen.user.root.resolve())  # type: ignore[attr-defined]
        return real_run(chosen, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(matrix.benchmark, "run", keep)
    conf = tmp_path / "rsyslog.conf"
    conf.write_text('module(load="imtcp")\ninput(type="imtcp" port="514")\n*.* /var/log/all\n')
    given = (conf, False)
    assert matrix.run_matrix(["a"], 2, {}, tmp_path, False, ONE_HOST, config=given) == EXIT_CODES["pass"]
    assert configs == [conf.resolve()] * 2 and len(calls) == 2
    ours = matrix.matrix_id(["a"], {})
    assert (
        {env["MATRIX_ID"] for _, _, env in calls} == {matrix.matrix_id(["a"], {}, model_sha(conf))} != {ours}
    )


def model_sha(path: Path) -> str:
    return str(userconfig.identity(path, False)["sha256"])


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["--profiles", "rsyslog8", "--config", "examples/syslog-ng-debian-trixie.conf"],
            "syslog-ng-debian-trixie.conf:1:",
        ),
        (["--profiles", "rsyslog8", "EXPECT_DROPPED=local7.*"], "EXPECT_DROPPED"),
        (["--profiles", "rsyslog8", "--config-private"], "--config-private is for --config PATH"),
    ],
)
def test_matrix_config_mistakes_are_one_line_before_anything_runs(
    argv: list[str],
    line: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    calls = quiet_matrix(monkeypatch)
    monkeypatch.undo()  # the real profiles and checks; only the runs stay faked below
    monkeypatch.setattr(matrix.benchmark, "run", lambda *a, **k: calls.append(("run", tmp_path, {})) or 0)
    monkeypatch.setattr(setup, "setup", lambda names: calls.append(("setup", tmp_path, {})))
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    code = cli.main(["matrix", "--results", str(tmp_path), *argv])
    out = capsys.readouterr().out
    assert code == EXIT_CODES["bad-input"] and calls == []
    assert out.count("\n") == 1 and line in out, out


def test_a_capacity_matrix_is_one_comparison_of_its_profiles_leaving_out_what_cannot_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    said: list[str] = []
    monkeypatch.setattr(compare, "log", said.append)
    names = ["rsyslog8", "baseline", "syslog-ng", "rsyslog-8.2504"]
    overrides = {"SCENARIO": "udp", "TUNING": "tuned", "SEARCH_MAX": "200"}
    sides = compare.profiles(names, overrides, 2, ONE_HOST)
    assert [side.name for side in sides] == ["rsyslog-8.2504@tuned", "syslog-ng-4.8@tuned"]  # named once each
    assert len(said) == 1 and said[0].startswith("n/a: baseline cannot run scenario udp"), said
    assert overrides["TUNING"] == "tuned"  # the caller's settings are left as given
    for side in sides:  # three searches share the machine, the first side's control among them
        assert side.search is not None and side.search.cap.search_max_s == 600
        assert side.record.tuning == "tuned"
    with pytest.raises(compare.CompareError, match="--profiles: 1 of them can search this scenario"):
        compare.profiles(["baseline", "rsyslog8"], {"SCENARIO": "udp"}, 2, ONE_HOST)


def test_a_capacity_matrix_refuses_bad_search_settings_before_any_search() -> None:
    with pytest.raises(searchplan.capacity.CapacityError, match="PDR_TARGET=1.5 is outside"):
        compare.profiles(["rsyslog8", "syslog-ng"], {"PDR_TARGET": "1.5"}, 2, ONE_HOST)


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--warmup", "1"], "error: --warmup is for a matrix of runs"),
        (["--fresh"], "error: --fresh is for a matrix of runs: a capacity matrix is one comparison"),
        (["--config", "examples/syslog-ng-debian-trixie.conf"], "error: --config is for a matrix of runs"),
        (["--tunings", "default,tuned"], "error: --tunings is for a matrix of runs"),
        (["--replicates", "1"], "error: --replicates 1: the rounds are paired into ratios: give 2 or more"),
    ],
)
def test_what_a_capacity_matrix_does_not_take_is_one_line_before_anything_runs(
    argv: list[str], line: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran: list[object] = []
    monkeypatch.setattr(compare, "command", lambda *a: ran.append(a) or 0)
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    code = cli.main(["matrix", "--capacity", "--profiles", "rsyslog8,syslog-ng", *argv])
    out = capsys.readouterr().out
    assert code == EXIT_CODES["bad-input"] and ran == [] and out.count("\n") == 1 and line in out, out


def test_the_calibration_file_is_read_strictly(tmp_path: Path) -> None:
    assert calibrate.calibration().loggen.profile == "syslog-ng-4.8"
    changed = tmp_path / "calibration.yaml"
    changed.write_text(calibrate.CALIBRATION_FILE.read_text() + "extra: 1\n")
    with pytest.raises(calibrate.settings.SettingsError, match="unknown key 'extra'"):
        calibrate.calibration(changed)


def test_a_matrix_over_tunings_runs_each_profile_at_each_and_resumes_by_tuning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[tuple[str, str]] = []

    def make(name: str, overrides: dict, on: object, config: object = None) -> FakePlan:
        made.append((name, overrides["TUNING"]))
        return FakePlan.make(name, overrides, on, config)

    calls = quiet_matrix(monkeypatch)
    monkeypatch.setattr(matrix.runplan, "make", make)
    assert (
        matrix.run_matrix(["a", "b"], 1, {}, tmp_path, fresh=False, on=ONE_HOST, tunings=["default", "tuned"])
        == 0
    )
    assert made == [("a", "default"), ("a", "tuned"), ("b", "default"), ("b", "tuned")]
    assert [profile for profile, _, _ in calls] == ["a", "a", "b", "b"]
    tuned = cell("a", Matrix("m1", replicate=1))
    tuned["daemon"]["tuning"] = "tuned"
    write(tmp_path / "1.json", tuned)
    write(tmp_path / "2.json", cell("a", Matrix("m1", replicate=1)))  # older: no tuning, so default
    assert matrix.done_cells(tmp_path, "m1", tunings=True) == {(1, "a@tuned"), (1, "a@default")}
    with pytest.raises(settings.SettingsError, match="--tunings fast: each is one of default, tuned"):
        matrix.run_matrix(["a"], 1, {}, tmp_path, fresh=False, on=ONE_HOST, tunings=["fast"])
    with pytest.raises(settings.SettingsError, match="--tunings sets TUNING for each cell: leave TUNING out"):
        matrix.run_matrix(
            ["a"], 1, {"TUNING": "tuned"}, tmp_path, fresh=False, on=ONE_HOST, tunings=["tuned"]
        )
