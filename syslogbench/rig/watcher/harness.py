"""The harness's own CPU in the measured window (result: harness). The watcher reads its own cgroup at the
start signal and once the daemon's end snapshot is in; the generators and the last hop report theirs
(model: GeneratorReport, LastHopCpu) once they see the daemon's exit."""

from __future__ import annotations

import time

from syslogbench.model.result import GeneratorReport, LastHopCpu, LastHopCpuAt, load
from syslogbench.rig import cgroup, control
from syslogbench.rig.outcome import Observed

REPORT_WAIT_S = 5.0
LAST_HOP_ANSWER_S = 2.0  # the last hop looks at its control files every 0.1 s  # the generators hear of the daemon's exit within 0.2 s (channel), the last hop 0.5 s


def own_cpu() -> float | None:
    return cgroup.own().cpu_total_s()


def since(start: float | None) -> float | None:
    now = own_cpu()
    return None if start is None or now is None else now - start


def last_hop_cpu(name: str) -> float | None:
    """A relay trial's last hop: its cgroup CPU total now (None if it did not answer in time)."""
    answer = control.CONTROL.lasthop_cpu_at(name)
    control.write_atomic(control.CONTROL.lasthop_cpu_request(name), "")
    try:
        control.wait_for(answer, LAST_HOP_ANSWER_S, f"the last hop's CPU {name!r}", poll=0.01)
        return load(LastHopCpuAt, control.read_json(answer), answer.name).cpu_total_s
    except (control.WaitTimeout, OSError, ValueError):
        return None


def generator_reports() -> list[GeneratorReport]:
    paths = control.CONTROL.generators.glob("host*.json")
    return [load(GeneratorReport, control.read_json(path), path.name) for path in paths]


def wait_for_reports(hosts: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(generator_reports()) >= hosts and control.CONTROL.lasthop_cpu.exists():
            return
        time.sleep(0.05)


def collect(hosts: int, obs: Observed, timeout: float = REPORT_WAIT_S) -> None:
    """The generators' and the last hop's reports; a container that did not report leaves its figure None."""
    wait_for_reports(hosts, timeout)
    reports = generator_reports()
    obs.generators_cpu_s = {f"host{r.host}": r.run_cpu_s for r in reports}
    for host in range(1, hosts + 1):
        obs.generators_cpu_s.setdefault(f"host{host}", None)
    obs.generator_cpu_s = sending_cpu(reports)
    obs.tcp_congestion = ",".join(sorted({r.tcp_congestion for r in reports if r.tcp_congestion})) or None
    path = control.CONTROL.lasthop_cpu
    if path.exists():
        obs.last_hop_cpu_s = load(LastHopCpu, control.read_json(path), path.name).run_cpu_s


def sending_cpu(reports: list[GeneratorReport]) -> float | None:
    """CPU seconds all generator containers used while sending, from their own cgroups."""
    parts = [(r.cpu_user_s, r.cpu_system_s) for r in reports]
    if not parts or any(user is None or system is None for user, system in parts):
        return None
    return round(sum(user + system for user, system in parts), 3)  # type: ignore[operator]
