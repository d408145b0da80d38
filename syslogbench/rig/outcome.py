"""Build one result document (results/schema.json) from what a run observed.

Pure functions over plain data, so the figures can be unit-tested without containers. Stdlib only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from statistics import median

from syslogbench import contract
from syslogbench.model.scenarios import Scenario
from syslogbench.model.settings import Settings
from syslogbench.rig import snmp
from syslogbench.rig.cgroup import Snapshot, cpu_delta
from syslogbench.rig.reconcile import Reconciliation

SCHEMA_VERSION = 1
SAMPLE_COLUMNS = ["t_s", "cpu_user_s", "cpu_system_s", "memory_bytes", "received"]


@dataclass
class HostFacts:
    cpu_model: str
    cores: int
    memory_bytes: int
    kernel: str
    docker_version: str
    cgroup_version: int

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


@dataclass
class DaemonInfo:
    profile: str = "unknown"
    name: str = "unknown"
    version: str = "unknown"
    package: str = "unknown"
    image: str = "unknown"
    base: str = "unknown"
    settings: dict = field(default_factory=dict)


@dataclass
class Observed:
    """Everything the watcher saw; None where it did not get that far."""

    cfg: Settings
    host: HostFacts
    daemon: DaemonInfo
    started: datetime
    finished: datetime
    elapsed_s: float | None = None
    timed_out: bool = False
    end_trigger: str = "not-started"
    sec_fired_s: float | None = None
    done_spread_s: float | None = None
    generator_cpu_s: float | None = None
    start: Snapshot | None = None
    end: Snapshot | None = None
    daemon_exit: int | None = None
    counts: Reconciliation | None = None
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    progress: list[list[float]] = field(default_factory=list)
    samples: list[list[float | None]] = field(default_factory=list)
    matrix: dict[str, object] | None = None
    scenario: Scenario | None = None
    unsupported: str | None = None
    relay: dict | None = None  # relay scenarios: the last hop and the queue towards it


def utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_id(started: datetime, profile: str) -> str:
    return f"{started.astimezone(UTC).strftime('%Y%m%dT%H%M%SZ')}-{profile}"


def limit(requested: float, configured: float | None, host: float) -> dict[str, float | None]:
    given = requested if configured is None else configured
    return {"requested": requested, "configured": configured, "effective": min(given, host)}


def limits(obs: Observed) -> dict[str, dict[str, float | None]]:
    cfg, end = obs.cfg, obs.end or obs.start
    return {
        "central_cpus": limit(cfg.central_cpus, end.cpu_limit if end else None, obs.host.cores),
        "central_memory_bytes": limit(
            cfg.central_mem, end.memory_limit_bytes if end else None, obs.host.memory_bytes
        ),
        # The generators do not report their cgroup; "configured" stays unknown for them.
        "remote_cpus": limit(cfg.remote_cpus, None, obs.host.cores),
        "remote_memory_bytes": limit(cfg.remote_mem, None, obs.host.memory_bytes),
    }


def readable(name: str, value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value / 2**30:.2f} GiB" if name.endswith("bytes") else f"{value:g}"


def limit_notes(table: dict[str, dict[str, float | None]]) -> list[str]:
    """A notice for every limit the host could not give."""
    notes = []
    for name, entry in table.items():
        wanted = entry["configured"] if entry["configured"] is not None else entry["requested"]
        if entry["effective"] is not None and wanted is not None and entry["effective"] < wanted:
            notes.append(
                f"{name}: {readable(name, entry['requested'])} requested, but the host can give only "
                f"{readable(name, entry['effective'])}; the effective value is recorded"
            )
    return notes


def cpu_figures(obs: Observed) -> dict[str, float | None]:
    user = system = percent = None
    if obs.start and obs.end:
        user, system = cpu_delta(obs.start, obs.end)
    total = None
    if obs.start and obs.end and obs.start.cpu_total_s is not None and obs.end.cpu_total_s is not None:
        total = obs.end.cpu_total_s - obs.start.cpu_total_s
    if user is not None and system is not None and obs.elapsed_s:
        percent = round(100 * (user + system) / obs.elapsed_s, 1)
    return {
        "user_s": _round(user),
        "system_s": _round(system),
        "total_s": _round(total, 6),
        "percent": percent,
    }


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def message_figures(obs: Observed) -> dict[str, int]:
    counts, cfg = obs.counts, obs.cfg
    if counts is None:
        return dict.fromkeys(
            (
                "sent",
                "received",
                "lost",
                "duplicated",
                "misfiled",
                "unknown",
                "done_received",
                "done_log_lines",
            ),
            0,
        ) | {"expected": cfg.expected_messages, "done_expected": cfg.senders, "done_log_extra": 0}
    return {
        "expected": counts.expected,
        "sent": counts.total("sent"),
        "received": counts.total("received"),
        "lost": counts.total("lost"),
        "duplicated": counts.total("duplicated"),
        "misfiled": counts.misfiled,
        "unknown": counts.unknown,
        "done_expected": cfg.senders,
        "done_received": sum(1 for sender in counts.senders if sender.done_seen),
        "done_log_lines": counts.done_log_lines,
        "done_log_extra": counts.done_log_extra,
        "filtered": counts.total("filtered"),
        "unexpected": counts.total("unexpected"),
        "unprocessed": counts.unprocessed,
    }


def throughput(obs: Observed, received: int) -> dict[str, float | None]:
    if not obs.elapsed_s or obs.counts is None:
        return {"msgs_per_s": None, "mb_per_s": None}
    sent = obs.counts.total("sent")
    wire = obs.counts.total("bytes") * (received / sent) if sent else 0
    return {
        "msgs_per_s": round(received / obs.elapsed_s, 1),
        "mb_per_s": round(wire / obs.elapsed_s / 1e6, 3),
    }


def generator_figures(obs: Observed) -> dict[str, float | None]:
    """How busy the senders were while sending: near 1 would mean they, not the daemon, set the pace."""
    figures: dict[str, float | None] = dict.fromkeys(("send_s_max", "cpu_s_total", "cpu_share_of_send"))
    figures["container_cpu_s"] = obs.generator_cpu_s
    if obs.counts is None:
        return figures
    sends = [s.send_s for s in obs.counts.senders if s.send_s is not None]
    cpus = [s.cpu_s for s in obs.counts.senders if s.cpu_s is not None]
    if sends and cpus and sum(sends):
        figures["send_s_max"] = round(max(sends), 3)
        figures["cpu_s_total"] = round(sum(cpus), 3)
        figures["cpu_share_of_send"] = round(sum(cpus) / sum(sends), 6)
    return figures


SATURATED_SHARE = 0.5  # senders busy at least half their send time
SPARE_SHARE = 0.8  # the daemon used less than 80% of the CPUs it could have


def sender_bound(generators: dict[str, float | None], cpu: dict, central_cpus: float | None) -> dict:
    """Sender-bound: the senders' send phase was saturated while the daemon had CPU to spare."""
    share = generators.get("cpu_share_of_send")
    if share is None or cpu["percent"] is None or not central_cpus:
        return {"value": None, "reason": "not measured"}
    used = cpu["percent"] / 100
    saturated, spare = share >= SATURATED_SHARE, used < SPARE_SHARE * central_cpus
    return {
        "value": saturated and spare,
        "reason": (
            f"senders were busy {share:.1%} of their send time (saturated from {SATURATED_SHARE:.0%}); "
            f"the daemon used {used:.2f} of {central_cpus:g} effective CPUs (spare below {SPARE_SHARE:.0%})"
        ),
    }


def scenario_figures(obs: Observed) -> dict[str, object]:
    """The scenario's axes (from its file) and the load's shape (from .env), as they were in force."""
    cfg = obs.cfg
    axes = obs.scenario.as_dict() if obs.scenario else {"id": cfg.scenario}
    return {
        **axes,
        "framing": obs.scenario.framing if obs.scenario else "unknown",
        "port": contract.CENTRAL_PORT,
        "hosts": cfg.hosts,
        "senders_per_host": cfg.senders_per_host,
        "connections": cfg.senders,
        "messages_per_sender": cfg.messages_per_sender,
        "done_threshold": cfg.done_threshold,
        "done_window_s": cfg.done_window,
        "run_timeout_s": cfg.run_timeout,
        "seed": cfg.seed,
    }


def is_udp(obs: Observed) -> bool:
    return obs.scenario is not None and obs.scenario.transport == "udp"


def verdict(obs: Observed) -> str:
    """pass: every message arrived exactly once. Over UDP, loss is the figure (the `udp` block), not a
    failure: pass when whatever arrived arrived once and in the right file; duplicates or misfiling are loss.
    """
    if obs.unsupported:
        return "n/a"
    if obs.timed_out:
        return "timeout"
    if obs.errors or obs.counts is None:
        return "error"
    if is_udp(obs):
        return "pass" if obs.counts.clean_but_for_loss else "loss"
    return "pass" if obs.counts.clean else "loss"


def kernel_udp(obs: Observed) -> dict[str, object] | None:
    """The daemon namespace's /proc/net/snmp Udp counters, end snapshot minus start snapshot.

    InDatagrams counts datagrams the daemon read; InErrors those the kernel dropped (RcvbufErrors, the
    socket's receive buffer was full, is one kind of it). Datagrams dropped before the UDP layer (e.g. a
    full network backlog) appear in neither, so the sequence numbers remain the reference.
    """
    delta = snmp.udp_delta(obs.start.udp if obs.start else None, obs.end.udp if obs.end else None)
    if delta is None:
        return None
    arrived = delta["InDatagrams"] + delta["InErrors"]
    return {
        "in_datagrams": delta["InDatagrams"],
        "in_errors": delta["InErrors"],
        "rcvbuf_errors": delta["RcvbufErrors"],
        "no_ports": delta["NoPorts"],
        "drop_rate": round(delta["InErrors"] / arrived, 6) if arrived else None,
    }


def udp_figures(obs: Observed, messages: dict[str, int]) -> dict[str, object] | None:
    """The drop rate of a UDP run, from the sequence numbers (lost / sent) and from the kernel's counters."""
    if not is_udp(obs):
        return None
    sent, lost = messages["sent"], messages["lost"]
    return {
        "sent": sent,
        "received": messages["received"],
        "lost": lost,
        "drop_rate": round(lost / sent, 6) if sent else None,
        "kernel": kernel_udp(obs),
    }


def rate_figures(obs: Observed) -> dict[str, object]:
    """Target and achieved send rates (msg/s), each sender's achieved rate as its ledger gives it."""
    target = obs.scenario.rate if obs.scenario else 0
    senders = obs.counts.senders if obs.counts else []
    achieved = [s.rate_achieved for s in senders if s.rate_achieved is not None and s.sent]
    return {
        "target_per_sender": target,
        "target_total": target * obs.cfg.senders,
        "achieved_per_sender": {
            "min": min(achieved) if achieved else None,
            "median": round(median(achieved), 1) if achieved else None,
            "max": max(achieved) if achieved else None,
        },
        # The senders send side by side: their rates add up to the load the daemon was offered.
        "achieved_total": round(sum(achieved), 1) if achieved else None,
    }


def time_line(
    cpu: dict[str, float | None], elapsed: float | None, rss: float | None, rate: float | None
) -> str:
    """Shaped like GNU time's default output, which the 2014 figures were, plus msg/s."""

    def num(value: float | None, fmt: str) -> str:
        return "?" if value is None else format(value, fmt)

    # GNU time truncates to hundredths (and whole percent), so 59.999 s is 0:59.99, never 0:60.00.
    hundredths = None if elapsed is None else int(elapsed * 100 + 1e-6)  # 68.24 * 100 is 6823.99...
    clock = "?" if hundredths is None else f"{hundredths // 6000}:{hundredths % 6000 / 100:05.2f}"
    percent = None if cpu["percent"] is None else int(cpu["percent"])
    rss_kb = None if rss is None else rss / 1024
    return (
        f"{num(cpu['user_s'], '.2f')}user {num(cpu['system_s'], '.2f')}system {clock}elapsed "
        f"{num(percent, 'd')}%CPU (0avgtext+0avgdata {num(rss_kb, '.0f')}maxresident)k "
        f"{num(rate, ',.0f')} msg/s"
    )


def build(obs: Observed) -> dict[str, object]:
    end = obs.end
    table = limits(obs)
    messages = message_figures(obs)
    cpu = cpu_figures(obs)
    # A filtering scenario's daemon handles the messages it drops too: they count towards its rate.
    rates = throughput(obs, messages["received"] + messages.get("filtered", 0))
    rss = end.max_rss_bytes if end else None
    generators = generator_figures(obs)
    extra = {"matrix": obs.matrix} if obs.matrix else {}
    if obs.relay is not None:
        extra["relay"] = obs.relay
    return extra | {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id(obs.started, obs.daemon.profile),
        "started_utc": utc(obs.started),
        "finished_utc": utc(obs.finished),
        "verdict": verdict(obs),
        "errors": obs.errors,
        "notes": obs.notes + limit_notes(table),
        "scenario": scenario_figures(obs),
        "daemon": {
            **obs.daemon.__dict__,
            "stopped": obs.daemon_exit is not None,
            "exit_code": obs.daemon_exit,
        },
        "limits": table,
        "host": obs.host.as_dict(),
        "elapsed_s": _round(obs.elapsed_s),
        "end": {
            "trigger": obs.end_trigger,
            "sec_fired_s": obs.sec_fired_s,
            "done_spread_s": obs.done_spread_s,
        },
        "cpu": cpu,
        "memory": {
            "peak_bytes": end.memory_peak_bytes if end else None,
            "peak_source": end.memory_peak_source if end else "none",
            "max_rss_bytes": rss,
        },
        "io": {
            "write_bytes": end.io_write_bytes if end else None,
            "output_bytes": obs.counts.output_bytes if obs.counts else None,
        },
        "messages": messages,
        "senders": obs.counts.as_senders() if obs.counts else [],
        "generators": generators,
        "sender_bound": sender_bound(generators, cpu, table["central_cpus"]["effective"]),
        "throughput": rates,
        "rate": rate_figures(obs),
        "udp": udp_figures(obs, messages),
        "progress": obs.progress,
        "samples": {"columns": SAMPLE_COLUMNS, "rows": obs.samples},
        "summary": time_line(cpu, obs.elapsed_s, rss, rates["msgs_per_s"]),
    }
