"""The harness's own CPU (result: harness): the share over the daemon's, the reports the generators and the
last hop write, and older results without it."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

import pytest

from syslogbench.contract import read_json
from syslogbench.model import result as model
from syslogbench.model.result import GeneratorReport, Harness, LastHopCpu, cpu_share
from syslogbench.model.settings import from_env
from syslogbench.rig import control, outcome
from syslogbench.rig.watcher import harness
from tests.unit.conftest import env

MOMENT = datetime(2026, 11, 24, 9, 0, 0, tzinfo=UTC)


def observed() -> outcome.Observed:
    facts = model.Host("Test CPU", 2, 2**30, "6.1.0", "27.0.0", 1)
    cfg = from_env(env())
    return outcome.Observed(cfg=cfg, host=facts, daemon=model.Daemon(), started=MOMENT, finished=MOMENT)


# -- the share --------------------------------------------------------------------------------------------


def test_the_share_is_the_sum_of_every_harness_container_over_the_daemon() -> None:
    found = Harness().with_cpu(0.125, 0.002, {"host2": 0.07, "host1": 0.05}, daemon_s=25.0)
    assert found.cpu.total_s == pytest.approx(0.247)
    assert found.cpu_share_of_daemon == 0.00988  # 0.247 / 25
    assert list(found.cpu.generators_s) == ["host1", "host2"]
    assert found.cpu.daemon_s == 25.0


@pytest.mark.parametrize(
    ("watcher", "last_hop", "generators", "daemon"),
    [
        (None, 0.0, {"host1": 0.1}, 20.0),  # the watcher did not get to the end
        (0.1, None, {"host1": 0.1}, 20.0),  # the last hop did not report
        (0.1, 0.0, {"host1": 0.1, "host2": None}, 20.0),  # one generator did not report
        (0.1, 0.0, {}, 20.0),  # no generator at all: not a run
        (0.1, 0.0, {"host1": 0.1}, None),  # no daemon figure
        (0.1, 0.0, {"host1": 0.1}, 0.0),  # a daemon that used nothing: no ratio
    ],
)
def test_no_share_when_a_part_is_unknown(
    watcher: float | None, last_hop: float | None, generators: dict, daemon: float | None
) -> None:
    assert Harness().with_cpu(watcher, last_hop, generators, daemon).cpu_share_of_daemon is None


def test_the_share_follows_from_the_figures_as_written() -> None:
    found = Harness().with_cpu(0.0123456789, 0.0, {"host1": 0.0000004}, daemon_s=0.0456789123)
    assert (found.cpu.total_s, found.cpu.daemon_s) == (0.012346, 0.045679)
    assert found.cpu_share_of_daemon == round(0.012346 / 0.045679, 6)


def test_cpu_share_rounds_to_six_digits() -> None:
    assert cpu_share(1.0, 3.0) == 0.333333
    assert cpu_share(0.0, 3.0) == 0.0


def test_an_older_result_without_harness_reads_with_every_figure_none() -> None:
    path = sorted((Path(__file__).resolve().parents[2] / "results").glob("2026*.json"))[0]
    document = read_json(path)
    assert "harness" not in document
    loaded = model.Result.from_dict(document)
    assert loaded.harness == Harness()
    assert loaded.harness.cpu_share_of_daemon is None
    written = loaded.to_dict()["harness"]
    assert written["cpu"] == {
        "watcher_s": None,
        "last_hop_s": None,
        "generators_s": {},
        "total_s": None,
        "daemon_s": None,
    }
    assert written["cpu_share_of_daemon"] is None


def test_the_result_carries_the_harness_beside_the_daemons_cpu() -> None:
    obs = observed()
    obs.watcher_cpu_s, obs.last_hop_cpu_s = 0.1, 0.01
    obs.generators_cpu_s = {f"host{i}": 0.02 for i in range(1, 6)}
    built = outcome.result(obs)  # no snapshots: the daemon's CPU is unknown, so is the share
    assert built.harness.cpu.total_s == pytest.approx(0.21)
    assert built.harness.cpu_share_of_daemon is None
    document = model.Result.from_dict(built.to_dict())
    assert document.harness == built.harness


# -- the reports -------------------------------------------------------------------------------------------


def write_reports(control_dir: Path, hosts: list[int], last_hop: float | None) -> None:
    for host in hosts:
        report = GeneratorReport(
            host=host,
            tcp_congestion="reno",
            cpu_user_s=0.01,
            cpu_system_s=0.03,
            run_cpu_s=round(0.05 + host / 1000, 6),
        )
        control.write_json(control.CONTROL.generator(host), asdict(report))
    if last_hop is not None:
        control.write_json(control.CONTROL.lasthop_cpu, asdict(LastHopCpu(run_cpu_s=last_hop)))


def test_collect_reads_every_generator_and_the_last_hop(control_dir: Path) -> None:
    write_reports(control_dir, [1, 2, 3], last_hop=0.0004)
    obs = observed()
    harness.collect(3, obs, timeout=0)
    assert obs.generators_cpu_s == {"host1": 0.051, "host2": 0.052, "host3": 0.053}
    assert obs.last_hop_cpu_s == 0.0004
    assert obs.generator_cpu_s == 0.12  # while sending: 3 x (0.01 + 0.03)
    assert obs.tcp_congestion == "reno"
    assert outcome.result(obs).generators.tcp_congestion == "reno"


def test_collect_leaves_a_missing_report_none(control_dir: Path) -> None:
    write_reports(control_dir, [1, 3], last_hop=None)
    obs = observed()
    harness.collect(3, obs, timeout=0.1)
    assert obs.generators_cpu_s == {"host1": 0.051, "host2": None, "host3": 0.053}
    assert obs.last_hop_cpu_s is None


def test_an_older_generator_report_loads_without_its_run_cpu() -> None:
    report = model.load(GeneratorReport, {"host": 2, "cpu_user_s": 0.5, "cpu_system_s": 1.0})
    assert report.run_cpu_s is None
