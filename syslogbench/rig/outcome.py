"""Build one result (syslogbench/model/result/) from what a run observed.

Pure functions over the model's types, so the figures can be unit-tested without containers. Stdlib only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from syslogbench.contract import Trigger
from syslogbench.model import result as model
from syslogbench.model.result import SAMPLE_COLUMNS, SCHEMA_VERSION, run_id, time_line, utc
from syslogbench.model.scenarios import Scenario
from syslogbench.model.settings import Settings
from syslogbench.rig import control, fanout, snmp
from syslogbench.rig.cgroup import Snapshot, cpu_delta
from syslogbench.rig.reconcile import Reconciliation

__all__ = ["SAMPLE_COLUMNS", "SCHEMA_VERSION", "Observed", "result", "run_id", "utc"]


@dataclass
class Observed:
    """Everything the watcher saw; None where it did not get that far."""

    cfg: Settings
    host: model.Host
    daemon: model.Daemon
    started: datetime
    finished: datetime
    elapsed_s: float | None = None
    timed_out: bool = False
    end_trigger: str = Trigger.NOT_STARTED
    sec_fired_s: float | None = None
    done_spread_s: float | None = None
    generator_cpu_s: float | None = None
    # Each harness container's own CPU from the start signal to the end of the run (result: harness).
    watcher_cpu_s: float | None = None
    last_hop_cpu_s: float | None = None
    generators_cpu_s: dict[str, float | None] = field(default_factory=dict)
    tcp_congestion: str | None = None  # the senders', as the generators reported it
    start: Snapshot | None = None
    end: Snapshot | None = None
    daemon_exit: int | None = None
    counts: Reconciliation | None = None
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    progress: list[list[float]] = field(default_factory=list)
    samples: list[list[float | None]] = field(default_factory=list)
    matrix: model.Matrix | None = None
    scenario: Scenario | None = None
    unsupported: str | None = None
    relay: model.Relay | None = None  # relay scenarios: the last hop and the queue towards it
    harness: model.Harness = field(default_factory=model.Harness)  # what the harness itself cost
    topology: model.Topology | None = None
    config: model.UserConfig | None = None  # `run --config`: the user's config and where its output went


def limits(obs: Observed) -> model.Limits:
    end = obs.end or obs.start
    return model.Limits.of(
        obs.cfg, obs.host, end.cpu_limit if end else None, end.memory_limit_bytes if end else None
    )


def cpu_figures(obs: Observed) -> model.Cpu:
    user = system = percent = None
    if obs.start and obs.end:
        user, system = cpu_delta(obs.start, obs.end)
    total = None
    if obs.start and obs.end and obs.start.cpu_total_s is not None and obs.end.cpu_total_s is not None:
        total = obs.end.cpu_total_s - obs.start.cpu_total_s
    if user is not None and system is not None and obs.elapsed_s:
        percent = round(100 * (user + system) / obs.elapsed_s, 1)
    return model.Cpu(user_s=_round(user), system_s=_round(system), total_s=_round(total, 6), percent=percent)


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def message_figures(obs: Observed) -> model.Messages:
    counts, cfg = obs.counts, obs.cfg
    if counts is None:
        return model.nothing_received(cfg)
    return model.Messages(
        expected=counts.expected,
        sent=counts.total("sent"),
        received=counts.total("received"),
        lost=counts.total("lost"),
        duplicated=counts.total("duplicated"),
        misfiled=counts.misfiled,
        unknown=counts.unknown,
        done_expected=cfg.senders,
        done_received=sum(1 for sender in counts.senders if sender.done_seen),
        done_log_lines=counts.done_log_lines,
        done_log_extra=counts.done_log_extra,
        filtered=counts.total("filtered"),
        unexpected=counts.total("unexpected"),
        unprocessed=counts.unprocessed,
        truncated=counts.total("truncated"),
    )


def throughput(obs: Observed, received: int) -> model.Throughput:
    if not obs.elapsed_s or obs.counts is None:
        return model.Throughput()
    sent = obs.counts.total("sent")
    wire = obs.counts.total("bytes") * (received / sent) if sent else 0
    return model.Throughput(
        msgs_per_s=round(received / obs.elapsed_s, 1), mb_per_s=round(wire / obs.elapsed_s / 1e6, 3)
    )


def generator_figures(obs: Observed) -> model.Generators:
    """How busy the senders were while sending: near 1 would mean they, not the daemon, set the pace."""
    figures = model.Generators(container_cpu_s=obs.generator_cpu_s, tcp_congestion=obs.tcp_congestion)
    if obs.counts is None:
        return figures
    sends = [s.send_s for s in obs.counts.senders if s.send_s is not None]
    cpus = [s.cpu_s for s in obs.counts.senders if s.cpu_s is not None]
    if sends and cpus and sum(sends):
        figures.send_s_max = round(max(sends), 3)
        figures.cpu_s_total = round(sum(cpus), 3)
        figures.cpu_share_of_send = round(sum(cpus) / sum(sends), 6)
    return figures


SATURATED_SHARE = 0.5  # senders busy at least half their send time
SPARE_SHARE = 0.8  # the daemon used less than 80% of the CPUs it could have


def sender_bound(
    generators: model.Generators, cpu: model.Cpu, central_cpus: float | None
) -> model.SenderBound:
    """Sender-bound: the senders' send phase was saturated while the daemon had CPU to spare."""
    share = generators.cpu_share_of_send
    if share is None or cpu.percent is None or not central_cpus:
        return model.SenderBound()
    used = cpu.percent / 100
    saturated, spare = share >= SATURATED_SHARE, used < SPARE_SHARE * central_cpus
    return model.SenderBound(
        value=saturated and spare,
        reason=(
            f"senders were busy {share:.1%} of their send time (saturated from {SATURATED_SHARE:.0%}); "
            f"the daemon used {used:.2f} of {central_cpus:g} effective CPUs (spare below {SPARE_SHARE:.0%})"
        ),
    )


def is_udp(obs: Observed) -> bool:
    return obs.scenario is not None and obs.scenario.transport == "udp"


def verdict(obs: Observed) -> str:
    """The meanings are contract.MEANINGS. pass means every message arrived exactly once, over UDP too: there
    the drop rate is the figure (the `udp` block), and a run that dropped any datagram is loss."""
    if obs.unsupported:
        return "n/a"
    if obs.timed_out:
        return "timeout"
    if obs.errors or obs.counts is None:
        return "error"
    if obs.config is not None:  # a config of the user's own: copies are no error (rig/fanout.py)
        return "pass" if fanout.clean(obs.counts) else "loss"
    return "pass" if obs.counts.clean else "loss"


def kernel_udp(obs: Observed) -> model.UdpKernel | None:
    """The daemon namespace's /proc/net/snmp Udp counters, end snapshot minus start snapshot.

    InDatagrams counts datagrams the daemon read; InErrors those the kernel dropped (RcvbufErrors, the
    socket's receive buffer was full, is one kind of it). Datagrams dropped before the UDP layer (e.g. a
    full network backlog) appear in neither, so the sequence numbers remain the reference.
    """
    delta = snmp.udp_delta(obs.start.udp if obs.start else None, obs.end.udp if obs.end else None)
    if delta is None:
        return None
    arrived = delta["InDatagrams"] + delta["InErrors"]
    return model.UdpKernel(
        in_datagrams=delta["InDatagrams"],
        in_errors=delta["InErrors"],
        rcvbuf_errors=delta["RcvbufErrors"],
        no_ports=delta["NoPorts"],
        drop_rate=round(delta["InErrors"] / arrived, 6) if arrived else None,
    )


def udp_figures(obs: Observed, messages: model.Messages) -> model.Udp | None:
    """The drop rate of a UDP run, from the sequence numbers (lost / sent) and from the kernel's counters."""
    if not is_udp(obs):
        return None
    figures = model.Udp.of(messages, kernel_udp(obs))
    if obs.unsupported:  # n/a: the daemon never ran, as the host's own n/a result (model.not_applicable) says
        return figures
    figures.buffers = model.udp_buffers(obs.cfg.udp_rcvbuf, snmp.read_buffers(control.CONTROL.daemon.buffers))
    return figures


def rate_figures(obs: Observed) -> model.Rate:
    """Target and achieved send rates (msg/s), each sender's achieved rate as its ledger gives it."""
    senders = obs.counts.senders if obs.counts else []
    achieved = [s.rate_achieved for s in senders if s.rate_achieved is not None and s.sent]
    return model.rate_of(obs.scenario.rate if obs.scenario else 0, obs.cfg.senders, achieved)


def result(obs: Observed) -> model.Result:
    """The typed result of what the run observed."""
    end = obs.end
    table = limits(obs)
    messages = message_figures(obs)
    cpu = cpu_figures(obs)
    # A filtering scenario's daemon handles the messages it drops too: they count towards its rate.
    rates = throughput(obs, messages.received + (messages.filtered or 0))
    rss = end.max_rss_bytes if end else None
    generators = generator_figures(obs)
    return model.Result(
        run_id=run_id(obs.started, obs.daemon.profile),
        started_utc=utc(obs.started),
        finished_utc=utc(obs.finished),
        verdict=verdict(obs),
        errors=list(obs.errors),
        notes=obs.notes + table.notes(),
        scenario=model.Scenario.of(obs.cfg, obs.scenario),
        daemon=replace(obs.daemon, stopped=obs.daemon_exit is not None, exit_code=obs.daemon_exit),
        limits=table,
        host=obs.host,
        elapsed_s=_round(obs.elapsed_s),
        end=model.End(obs.end_trigger, obs.sec_fired_s, obs.done_spread_s),
        cpu=cpu,
        memory=model.Memory(
            peak_bytes=end.memory_peak_bytes if end else None,
            peak_source=end.memory_peak_source if end else "none",
            max_rss_bytes=rss,
        ),
        io=model.Io(
            write_bytes=end.io_write_bytes if end else None,
            output_bytes=obs.counts.output_bytes if obs.counts else None,
        ),
        messages=messages,
        senders=list(obs.counts.senders) if obs.counts else [],
        generators=generators,
        sender_bound=sender_bound(generators, cpu, table.central_cpus.effective),
        throughput=rates,
        rate=rate_figures(obs),
        udp=udp_figures(obs, messages),
        progress=obs.progress,
        samples=model.Samples(list(SAMPLE_COLUMNS), obs.samples),
        summary=time_line(cpu, obs.elapsed_s, rss, rates.msgs_per_s),
        matrix=obs.matrix,
        relay=obs.relay,
        harness=obs.harness.with_cpu(
            obs.watcher_cpu_s, obs.last_hop_cpu_s, obs.generators_cpu_s, cpu.total_s
        ),
        topology=obs.topology,
        config=obs.config,
    )
