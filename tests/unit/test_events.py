"""The engine's events of a run (host/events.py): which ones came from outside, and how the result says it."""

from __future__ import annotations

import json

from syslogbench.host import events

PROJECT = "syslogbench-faults"


def line(kind: str, action: str, at: float, actor: str, **attributes: str) -> str:
    return json.dumps(
        {
            "Type": kind,
            "Action": action,
            "timeNano": int(at * 1e9),
            "Actor": {"ID": actor, "Attributes": attributes},
        }
    )


def container(action: str, at: float, name: str, project: str = PROJECT, **extra: str) -> str:
    return line("container", action, at, f"id-{name}", name=name, **{events.PROJECT_LABEL: project}, **extra)


def stream(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def test_a_normal_run_has_nothing_from_outside() -> None:
    text = stream(
        container("create", 100.0, "p-watcher-1"),
        container("start", 100.5, "p-watcher-1"),
        container("die", 130.0, "p-watcher-1", exitCode="0"),
        container("kill", 130.1, "p-daemon-1", signal="15"),  # compose stopping the rest, after the watcher
        container("die", 130.2, "p-daemon-1", exitCode="143"),
    )
    assert events.reasons(events.parse(text, PROJECT), 100.0) == []


def test_a_kill_before_the_first_end_is_named_with_its_signal_and_moment() -> None:
    text = stream(
        container("start", 100.0, "p-daemon-1"),
        container("kill", 112.34, "p-daemon-1", signal="9"),
        container("die", 112.4, "p-daemon-1", exitCode="137"),
        container("kill", 112.5, "p-watcher-1", signal="15"),
    )
    assert events.reasons(events.parse(text, PROJECT), 100.0) == [
        "docker events before any container ended: p-daemon-1 was sent SIGKILL at +12.3 s"
    ]


def test_a_pause_never_resumed_and_a_disconnect_are_named() -> None:
    text = stream(
        container("start", 100.0, "p-daemon-1"),
        container("start", 100.0, "p-generator-2"),
        container("pause", 105.0, "p-daemon-1"),
        line(
            "network", "disconnect", 106.0, "net", container="id-p-generator-2", name="p_bench", type="bridge"
        ),
        line(
            "network", "disconnect", 106.0, "net", container="id-p-generator-2", name="p_bench", type="bridge"
        ),
        container("die", 150.0, "p-watcher-1", exitCode="5"),
    )
    assert events.reasons(events.parse(text, PROJECT), 100.0) == [
        "docker events before any container ended: p-daemon-1 was paused at +5.0 s; p-generator-2 was "
        "disconnected from network p_bench at +6.0 s; p-daemon-1 was still paused when the run ended"
    ]


def test_a_pause_resumed_is_not_still_paused() -> None:
    text = stream(
        container("start", 100.0, "p-daemon-1"),
        container("pause", 101.0, "p-daemon-1"),
        container("unpause", 102.0, "p-daemon-1"),
    )
    said = events.reasons(events.parse(text, PROJECT), 100.0)
    assert said == [
        "docker events before any container ended: p-daemon-1 was paused at +1.0 s; p-daemon-1 was unpaused at +2.0 s"
    ]


def test_other_projects_and_unreadable_lines_are_left_out() -> None:
    text = stream(
        container("kill", 101.0, "other-daemon-1", project="syslogbench-faults-2", signal="9"),
        line("network", "disconnect", 102.0, "net", container="id-unknown", name="x_bench"),
        "not json",
        json.dumps({"Type": "container"}),
    )
    assert events.parse(text, PROJECT) == []


def test_the_recorder_without_docker_records_nothing(monkeypatch) -> None:
    def no_docker(*args, **kwargs):
        raise FileNotFoundError("docker")

    monkeypatch.setattr(events.subprocess, "Popen", no_docker)
    recorder = events.Recorder(PROJECT).start()
    assert recorder.stop() == [] and recorder.stop() == []
