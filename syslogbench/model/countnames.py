"""Every message-count field, named once: name -> what it counts.

A run's result (model/result/counts.py, udp.py, config.py, relay.py), a capacity trial
(model/capacity/sender.py, trial.py), the compiled rig's records (model/rigrecord.py), a sender's ledger
(model/ledger.py) and the reconciliation (rig/reconcile.py) carry their counts under these names, and a name
counts the same thing wherever it appears. tests/unit/test_countnames.py holds every whole-number field of
those records to COUNTS or NOT_COUNTS, so a new count is named here first. The names stay as the files on
disk spell them. A "message" is one of the senders' (the DONEs included where a count says so); a "line" is
any line of output, ours or not. Stdlib only.
"""

from __future__ import annotations

COUNTS: dict[str, str] = {
    # what the senders were to send, and sent
    "expected": "messages that must arrive: each sender's messages and its DONE, less those its filter drops",
    "intended": "messages a capacity trial's sender was to send by the trial's end",
    "sent": "messages a sender handed to the kernel (a TCP sender's, acknowledged)",
    "unsent": "intended messages a trial's sender did not send in time (intended - sent)",
    "messages": "messages: a sender's to send or sent (its ledger, a trial's request), or those arriving "
    "whole in one output file",
    # what arrived, per sender and message
    "received": "messages that arrived whole at least once",
    "lost": "messages that should have arrived whole and did not (a run: expected - received; a trial: sent - received)",
    "late": "received messages that arrived more than LATENCY_BOUND after their intended send time",
    "early": "received messages seen before their intended send time (the clocks apart)",
    "duplicated": "arrivals of a message beyond its first (in one file, for a user's config)",
    "copies": "a user config's further sightings of a received message, in files beyond its first",
    "copied": "messages a user's config wrote to more than one file",
    "truncated": "lines with a sender's key that did not arrive whole (cut or mangled)",
    "filtered": "messages the scenario's filter drops by design: they must not arrive",
    "unexpected": "filtered messages that arrived anyway",
    "unprocessed": "message lines that do not show the scenario's processing",
    "sampled": "received messages whose latency the follower measured (its sample's files)",
    # lines that are not a sender's message where it belongs
    "misfiled": "messages that arrived in the wrong facility/severity file",
    "unknown": "output lines that are no sender's message",
    "lines": "output lines, ours or not (in one file, or at the relay's last hop)",
    "stale": "lines of earlier trials seen during this one (counted lost in their own trial)",
    "stale_lines": "lines of earlier trials seen during this one (a trial's stale)",
    "drained_lines": "lines of earlier trials that arrived in the drain before this trial",
    # the DONEs that end a run
    "done_expected": "DONE messages expected: one per sender",
    "done_received": "DONE messages that arrived",
    "done_log_lines": "lines in done.log",
    "done_log_extra": "lines in done.log that are no sender's DONE",
    "done_lines": "DONE lines the relay's last hop received",
}

# Whole numbers beside the counts that count no message: sizes, ids, rates, exit codes, the kernel's own
# counters.
NOT_COUNTS: dict[str, str] = {
    "bytes": "bytes sent, written or received",
    "output_bytes": "bytes in the output files",
    "receive_buffer_bytes": "the last hop's socket receive buffer",
    "peak_rss_bytes": "the rig's peak memory in a reconciliation",
    "rig_peak_rss_bytes": "the rig's peak memory in a reconciliation",
    "split_files": "the output files of a split scenario that exist",
    "number": "a trial's number in its search",
    "trial": "a trial's number in its search",
    "host": "a generator's number",
    "sender": "a sender's number within its generator",
    "first_seq": "a sequence number",
    "last_seq": "a sequence number",
    "done_seq": "a sequence number",
    "rate_target": "msg/s asked of a sender",
    "lines_per_s": "the last hop's reading pace",
    "port": "a TCP or UDP port",
    "connections": "TCP connections",
    "resets": "connections the daemon ended with a reset",
    "fragments": "connections that ended inside a line",
    "batches": "a sender's batches (ticks of its schedule)",
    "looks": "the follower's passes over the output",
    "daemon_exit": "the daemon's exit status",
    "udp_rcvbuf_errors": "the kernel's count of datagrams a full buffer dropped, any sender's",
    "udp_in_errors": "the kernel's count of datagrams it could not deliver, any sender's",
}
