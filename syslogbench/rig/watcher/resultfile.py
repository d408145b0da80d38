"""The run's result, written by the watcher: the file in the results directory (a reduced one on a full disk),
on the watcher's output for a swarm run, and its summary on the log. Stdlib only: runs in the watcher."""

from __future__ import annotations

import base64
import gzip
import os
from dataclasses import replace
from pathlib import Path

from syslogbench import contract
from syslogbench.model.result import Result
from syslogbench.rig import outcome
from syslogbench.rig.outcome import Observed
from syslogbench.rig.watcher.progress import say

RESULTS = Path(os.environ.get("RESULTS_DIR", str(contract.RESULTS_DIR_IN_WATCHER)))


def write(obs: Observed) -> Result:
    """The result file; on a full disk a reduced one (no time series, on one line) that says so; and where
    even that cannot be written, the result on the watcher's output, for `syslogbench run` to record."""
    written = outcome.result(obs)
    if os.environ.get("RESULT_ON_OUTPUT"):
        print_result(written)
    try:
        written.write(RESULTS, indent=2)
        return written
    except OSError as error:
        written = reduced(written, error)
    try:
        written.write(RESULTS, indent=None)
    except OSError as error:
        say(f"error: cannot write the result ({error}); here it is on one line:")
        print(written.to_json(), flush=True)
    return written


def print_result(written: Result) -> None:
    """On Swarm (RESULT_ON_OUTPUT=1): the result on the watcher's output, for `syslogbench run --swarm`."""
    packed = base64.b64encode(gzip.compress(written.to_json().encode())).decode()
    size = contract.RESULT_LINE_CHARS
    parts = [packed[i : i + size] for i in range(0, len(packed), size)]
    for index, part in enumerate(parts, 1):
        print(f"{contract.RESULT_LINE_PREFIX} {index}/{len(parts)} {part}", flush=True)


def reduced(written: Result, error: OSError) -> Result:
    """The result without its time series (the bulk of a long run's file): verdict error, saying why."""
    errors = [
        *written.errors,
        f"the full result could not be written ({error}): this one leaves out the time series (samples, progress)",
    ]
    samples = replace(written.samples, rows=[])
    return replace(written, verdict="error", errors=errors, samples=samples, progress=[])


def report(written: Result) -> None:
    m = written.messages
    say(f"result: results/{written.run_id}.json")
    for note in written.notes:
        say(f"notice: {note}")
    for error in written.errors:
        say(f"error: {error}")
    say(
        f"{written.daemon.profile} ({written.daemon.version}): verdict {written.verdict.upper()}; "
        f"sent {m.sent:,}, received {m.received:,} of {m.expected:,}, "
        f"lost {m.lost:,}, duplicated {m.duplicated:,}, misfiled {m.misfiled:,}, "
        f"truncated {m.truncated or 0:,}"
    )
    rate = written.rate
    if rate is not None and rate.target_per_sender:
        achieved = rate.achieved_per_sender
        say(
            f"rate: target {rate.target_per_sender:,} msg/s per sender, achieved median "
            f"{achieved.median or 0:,.0f} (min {achieved.min or 0:,.0f}); "
            f"offered in all {rate.achieved_total or 0:,.0f} of {rate.target_total:,} msg/s"
        )
    if udp := written.udp:
        kernel = udp.kernel
        read, errors, full = (
            (kernel.in_datagrams, kernel.in_errors, kernel.rcvbuf_errors) if kernel else ("?", "?", "?")
        )
        say(
            f"udp: {udp.lost:,} of {udp.sent:,} lost (drop rate {udp.drop_rate or 0:.4%}); kernel: "
            f"{read} datagrams read, {errors} errors ({full} receive buffer full)"
        )
    if m.filtered or m.unexpected or m.unprocessed:
        say(
            f"filtered out by the scenario {m.filtered or 0:,}, of which arrived anyway {m.unexpected or 0:,}; "
            f"lines not showing the processing {m.unprocessed or 0:,}"
        )
    say(written.summary)
