"""`run --swarm` without a swarm: node labels, task states, and the result carried on the watcher's output."""

from __future__ import annotations

from dataclasses import replace

import pytest

from syslogbench import contract
from syslogbench.host import swarmdeploy, swarmnodes, swarmresult
from syslogbench.model.result import Samples
from syslogbench.rig import outcome
from syslogbench.rig.watcher import resultfile
from tests.unit.test_result import observed


def node(hostname: str, role: str | None, state: str = "ready") -> dict:
    labels = {"syslogbench.role": role} if role else {}
    return {
        "ID": f"id-{hostname}",
        "Spec": {"Labels": labels, "Availability": "active"},
        "Status": {"State": state},
        "Description": {
            "Hostname": hostname,
            "Resources": {"NanoCPUs": 8_000_000_000, "MemoryBytes": 2**34},
            "Engine": {"EngineVersion": "27.3.1"},
        },
    }


def nodes(*entries: dict) -> list[swarmnodes.Node]:
    return [swarmnodes.Node.of(entry) for entry in entries]


def test_one_central_and_the_generator_nodes_are_placed() -> None:
    placement = swarmnodes.place(
        nodes(node("a", "central"), node("b", "generator"), node("c", "generator")), 2
    )
    assert placement.central.hostname == "a"
    assert (placement.central.cores, placement.central.engine) == (8, "27.3.1")
    assert [n.hostname for n in placement.generators] == ["b", "c"]
    assert placement.notices == []


def test_fewer_generator_nodes_than_hosts_is_a_notice() -> None:
    placement = swarmnodes.place(nodes(node("a", "central"), node("b", "generator")), 5)
    assert placement.notices == ["1 generator nodes for 5 hosts: some nodes run more than one generator"]


def test_no_central_node_says_which_label_to_add_and_where() -> None:
    with pytest.raises(swarmnodes.SwarmError) as error:
        swarmnodes.place(
            nodes(node("a", None), node("b", "generator"), node("c", "central", state="down")), 2
        )
    assert str(error.value) == (
        "0 ready nodes carry syslogbench.role=central: exactly one must, for the watcher, the daemon and the "
        "last hop, which share volumes: docker node update --label-add syslogbench.role=central NODE "
        "(unlabelled: a)"
    )


def test_two_central_nodes_are_refused_by_name() -> None:
    with pytest.raises(
        swarmnodes.SwarmError, match=r"^2 ready nodes carry syslogbench.role=central \(a, b\)"
    ):
        swarmnodes.place(nodes(node("a", "central"), node("b", "central"), node("c", "generator")), 1)


def test_no_generator_node_is_refused() -> None:
    with pytest.raises(swarmnodes.SwarmError, match="no ready node carries syslogbench.role=generator"):
        swarmnodes.place(nodes(node("a", "central")), 1)


def test_failed_tasks_other_than_the_watcher_are_problems() -> None:
    entries = [
        {"Name": "sb_watcher.1", "Node": "a", "CurrentState": "Failed 1 second ago", "Error": "x"},
        {
            "Name": "sb_generator.2",
            "Node": "c",
            "CurrentState": "Rejected 3 seconds ago",
            "Error": "No such image",
        },
        {"Name": "sb_daemon.1", "Node": "a", "CurrentState": "Running 9 seconds ago", "Error": ""},
    ]
    assert swarmdeploy.task_problems("sb", entries) == [
        "generator.2 on c: Rejected 3 seconds ago: No such image"
    ]
    assert swarmdeploy.watcher_ended("sb", entries)
    assert not swarmdeploy.watcher_ended("sb", entries[1:])
    assert swarmdeploy.watcher_task("sb", entries) == "Failed 1 second ago on a: x"
    assert swarmdeploy.watcher_task("sb", entries[1:]) == "none was found"


def test_the_result_survives_the_watcher_output(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [[float(i), 0.5, 0.25, 1024.0, float(i)] for i in range(5000)]
    result = replace(outcome.result(observed()), samples=Samples(rows=rows))
    resultfile.print_result(result)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) > 1
    assert all(len(line) <= contract.RESULT_LINE_CHARS + 40 for line in lines)
    noisy = ["watcher: start: ...", *lines[::-1], "watcher: done"]  # any order, among other lines
    assert swarmresult.decode_result(noisy) == result
    assert swarmresult.decode_result(lines[1:]) is None  # a part missing: no result rather than half of one


def test_a_registry_without_swarm_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    from syslogbench.host import cli

    assert cli.main(["run", "--registry", "lab:5000"]) == contract.EXIT_CODES["bad-input"]
    assert capsys.readouterr().out == (
        "syslogbench: error: --registry is for --swarm: the nodes pull the images from it\n"
    )
