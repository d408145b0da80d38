"""What the engine saw happen to a run's containers: `docker events` while compose runs.

A container killed, paused or cut from its network from outside leaves no trace in the containers' own
files, and by the time `docker inspect` is asked (after compose stopped everything) a paused container has
been unpaused and killed like the rest. The engine's event stream keeps the order: whatever happened to the
project's containers before the first of them ended is what ended the run, and the result names it.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from dataclasses import dataclass

PROJECT_LABEL = "com.docker.compose.project"
# Container actions that come from outside the run. Compose's own stop comes after the first container ended.
OUTSIDE = {"kill", "pause", "unpause", "oom", "disconnect"}
SIGNALS = {"9": "SIGKILL", "15": "SIGTERM", "2": "SIGINT", "1": "SIGHUP"}
DRAIN_S = 1.0  # events reach the stream a little after the fact


@dataclass(frozen=True)
class Event:
    kind: str  # container or network
    action: str
    at: float  # seconds since the epoch
    container_id: str
    name: str  # the container's name
    detail: str = ""  # the signal, the exit code, or the network's name


# What is asked of the engine: names (create, start), the run's end (die), and what comes from outside.
# Leaving out the rest (exec, attach, volume) keeps the stream short.
ASKED = ("create", "start", "die", *sorted(OUTSIDE))


class Recorder:
    """`docker events` for one compose project, from just before `up` until stop(). A thread reads the
    stream as it comes, so a long run never fills the pipe and blocks the engine's writer."""

    def __init__(self, project: str) -> None:
        self.project = project
        self.began = time.time()
        self.process: subprocess.Popen[str] | None = None
        self.lines: list[str] = []
        self.reader: threading.Thread | None = None

    def start(self) -> Recorder:
        command = ["docker", "events", "--since", f"{self.began:.3f}", "--format", "{{json .}}"]
        command += ["--filter", "type=container", "--filter", "type=network"]
        command += [arg for action in ASKED for arg in ("--filter", f"event={action}")]
        try:
            self.process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
            )
        except OSError:
            self.process = None  # the run goes on; its result then says less
            return self
        self.reader = threading.Thread(target=self.read, args=(self.process,), daemon=True)
        self.reader.start()
        return self

    def read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            self.lines.append(line)

    def stop(self) -> list[Event]:
        """The events so far; the stream is closed (a second call returns nothing)."""
        process, self.process = self.process, None
        if process is None:
            return []
        time.sleep(DRAIN_S)
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        if self.reader is not None:
            self.reader.join(timeout=10)
        return parse("".join(self.lines), self.project)


def parse(text: str, project: str) -> list[Event]:
    """The project's container events, and its network's connect/disconnect events, in order."""
    names: dict[str, str] = {}
    events = []
    for line in text.splitlines():
        try:
            raw = json.loads(line)
            kind, action, actor = raw["Type"], raw["Action"], raw["Actor"]
            attributes, at = actor.get("Attributes") or {}, raw["timeNano"] / 1e9
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if kind == "container" and attributes.get(PROJECT_LABEL) == project:
            names[actor["ID"]] = attributes.get("name", actor["ID"][:12])
            detail = attributes.get("signal") or attributes.get("exitCode") or ""
            events.append(Event(kind, action, at, actor["ID"], names[actor["ID"]], detail))
        elif kind == "network" and attributes.get("container") in names:
            container = attributes["container"]
            events.append(Event(kind, action, at, container, names[container], attributes.get("name", "")))
    return sorted(events, key=lambda event: event.at)


def before_the_end(events: list[Event]) -> list[Event]:
    """Events from outside, up to the first container that ended (compose's own stopping comes after it).
    A network event repeated at the same moment is one event."""
    first_die = next((event.at for event in events if event.action == "die"), float("inf"))
    kept: list[Event] = []
    for event in events:
        key = (event.action, event.name, event.detail)
        repeated = bool(kept) and (kept[-1].action, kept[-1].name, kept[-1].detail) == key
        if event.action in OUTSIDE and event.at <= first_die and not repeated:
            kept.append(event)
    return kept


def describe(event: Event, began: float) -> str:
    at = f"at +{event.at - began:.1f} s"
    if event.action == "kill":
        return f"{event.name} was sent {SIGNALS.get(event.detail, 'signal ' + event.detail)} {at}"
    if event.action == "disconnect":
        return f"{event.name} was disconnected from network {event.detail} {at}"
    if event.action == "oom":
        return f"{event.name}: the kernel's OOM killer acted {at}"
    return f"{event.name} was {event.action}d {at}"  # paused, unpaused


def reasons(events: list[Event], began: float) -> list[str]:
    """One line for the result, or none when nothing came from outside."""
    outside = before_the_end(events)
    if not outside:
        return []
    paused = {e.name for e in outside if e.action == "pause"} - {
        e.name for e in outside if e.action == "unpause"
    }
    said = [describe(event, began) for event in outside]
    said += [f"{name} was still paused when the run ended" for name in sorted(paused)]
    return ["docker events before any container ended: " + "; ".join(said)]
