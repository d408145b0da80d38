"""The run's accounting, once the daemon has stopped (or the run failed after the start): the senders'
ledgers in, the output reconciled against them by the compiled rig, what the counts say (UDP that never
arrived, a DONE threshold that never fired, the TLS the senders negotiated), the harness's own reports, and
the test files removed; and the senders a run expects, whom it accounts for. Stdlib only: runs in the
watcher container.
"""

from __future__ import annotations

import os
import time

from syslogbench import contract
from syslogbench.model import preprocess, rigrecord, settings, userconfig
from syslogbench.model.ledger import Ledger
from syslogbench.model.messages import SenderId
from syslogbench.rig import compiled, control, fanout, reconcile
from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher import fault, harness
from syslogbench.rig.watcher.files import clear, read_ledgers

# How an error of the compiled rig's reconciliation begins in the result (the rig's reason follows).
RECONCILE_FAILED = "the reconciliation failed: "


class ReconcileFailed(RuntimeError):
    """The compiled rig could not reconcile the output: the result's error, in one line (RECONCILE_FAILED and
    the rig's reason); the run is not reconciled again."""


def expected_senders(cfg: settings.Settings) -> list[SenderId]:
    return [SenderId(h, s) for h in range(1, cfg.hosts + 1) for s in range(1, cfg.senders_per_host + 1)]


def conclude(cfg: settings.Settings, obs: Observed, ledger_wait: float) -> None:
    wait_for_ledgers(cfg, ledger_wait)
    ledgers = read_ledgers()
    reconcile_output(cfg, obs, ledgers)
    if full := fault.logs_full(control.LOGS):
        obs.errors.insert(0, full)  # the cause, before the loss or the timeout it led to
    if note := tls_note(ledgers):
        obs.notes.append(note)
    udp = obs.scenario is not None and obs.scenario.transport == "udp"
    if udp and obs.counts.total("sent") and not obs.counts.total("received"):
        # Loss is the figure over UDP, but losing everything is a daemon that does not listen on its port.
        obs.errors.append(
            f"no UDP datagram reached the output files: is the daemon listening on {contract.CENTRAL_PORT}/udp?"
        )
    if obs.timed_out:
        missing = [sender.id for sender in obs.counts.senders if not sender.done_seen]
        obs.errors.append(
            f"the DONE threshold ({cfg.done_threshold} in {cfg.done_window} s) did not fire within "
            f"RUN_TIMEOUT={cfg.run_timeout} s; DONE never reached done.log from: {', '.join(missing) or 'none'}"
        )
    # After the reconciliation, which gives the others time to see the daemon's exit and report.
    harness.collect(cfg.hosts, obs, min(harness.REPORT_WAIT_S, ledger_wait))
    discard_logs(cfg)


def discard_logs(cfg: settings.Settings) -> None:
    """The test's output and the daemon's queue, once counted (unless KEEP_LOGS): a compose project's named
    volumes outlive its containers, and a capacity search's last trial left several GB there."""
    if not cfg.keep_logs:
        remove_test_files()
        if contract.QUEUE_DIR.exists():
            clear(contract.QUEUE_DIR)


def wait_for_ledgers(cfg: settings.Settings, timeout: float) -> None:
    """Senders write their ledger just after their queue drains; give stragglers a moment."""
    deadline = time.monotonic() + timeout
    while len(read_ledgers()) < cfg.senders and time.monotonic() < deadline:
        time.sleep(0.1)


def reconcile_output(cfg: settings.Settings, obs: Observed, ledgers: dict[str, Ledger]) -> None:
    """The counts, and what reconciling them took (harness.reconcile_s, reconcile_cpu_s: the watcher's CPU and
    the compiled rig's, which reads the output)."""
    # A filtering scenario expects only its subset; some scenarios' lines must show their processing.
    expect = preprocess.Expectation.of(obs.scenario, cfg.seed)
    senders, per_sender = expected_senders(cfg), cfg.messages_per_sender + 1
    began, cpu = time.monotonic(), time.process_time()
    # forget: the output leaves the page cache as it is read, so that it is not charged to the watcher.
    try:
        if (user := userconfig.from_env(os.environ)) and obs.config is not None:
            obs.counts, fan = fanout.account(
                control.LOGS, ledgers, senders, per_sender, expect, user.dropped, True
            )
            fanout.fill(obs.config, fan)
            obs.notes.append(fanout.MISFILED_NOTE)
        else:
            obs.counts = reconcile.reconcile(control.LOGS, ledgers, senders, per_sender, expect, forget=True)
    except (compiled.RigError, rigrecord.RecordError) as error:
        # The run ends in error with the rig's one-line reason (attempt() records it); not tried again.
        raise ReconcileFailed(f"{RECONCILE_FAILED}{error}") from None
    obs.harness.reconcile_s = round(time.monotonic() - began, 3)
    obs.harness.reconcile_cpu_s = round(time.process_time() - cpu + obs.counts.rig_cpu_s, 3)


def tls_note(ledgers: dict[str, Ledger]) -> str | None:
    """What the senders negotiated, e.g. 'TLSv1.3 TLS_AES_256_GCM_SHA384 on 4 of 4 connections'."""
    seen = [f"{tls.version} {tls.cipher}" for ledger in ledgers.values() if (tls := ledger.tls)]
    if not seen:
        return None
    counts = {text: seen.count(text) for text in sorted(set(seen))}
    return "TLS (sender side): " + "; ".join(
        f"{text} on {n} of {len(ledgers)} connections" for text, n in counts.items()
    )


def remove_test_files() -> None:
    if userconfig.from_env(os.environ):  # a user's config may write any file there
        clear(control.LOGS)
        return
    for path in control.LOGS.iterdir():
        if contract.OUTPUT_RE.match(path.name) or path.name == contract.DONE_LOG:
            path.unlink()
