"""Trials against a running daemon, for the capacity search (docs/capacity.md).

In a capacity run (CAPACITY=1) the daemon, the watcher and the generators stay up; the host asks for one
trial at a time, `trial_run` on the control channel, through `docker compose exec` into the watcher
(`python3 -m syslogbench.rig.trials run RATE DURATION`, `client` below), and the watcher answers with the
trial's record once its late messages are counted. Each trial:

- the watcher's follower first waits until the earlier trials' lines have drained out of the daemon, and
  forgets them (rig/trialserver.py, `Trials.trial`);
- the senders get its rate and message count (`trial`), render one template per priority (the compiled
  sender makes each message from one as it sends, with the trial's own sequence number:
  model.capacity.trial_seq), check their clocks against the watcher's and say so (`trial_ready`); the
  watcher then gives one start time to all, on each sender's own clock (rig/trialsender.py, `one_trial`);
- each sender's compiled sender (rig-rust `send`, on the connection it keeps for every trial) sends open
  loop: message i is due at start + i/rate, a sender that falls behind sends what is due at once and never
  stretches its schedule; its record (model.rigrecord.SendRecord: what it sent, its CPU, its largest lag at
  any batch, its oversleeps) is the trial's ledger (`trial_ledger`);
- the compiled follower (rig-rust `follow`) wakes on inotify when the daemon writes, reads only the new
  lines' keys, and times each message from its intended send time into an HdrHistogram. The trial ends when
  every message sent has arrived, or LATENCY_BOUND + LATE_WATCH_S after the last one was due;
- the watcher's record of it (model.capacity.Trial: the counts per sender, the latency, the daemon's and the
  rig's CPU, the cores, the UDP counters) goes back to the host, which feeds the search.

The watcher's side is rig/trialserver.py, the generators' rig/trialsender.py; this module holds what both
use, and the host's client. Stdlib only: runs in the watcher and generator containers.
"""

from __future__ import annotations

import json
import os
import sys

from syslogbench.rig import channel, control

CAPACITY_ENV = "CAPACITY"
RIG_ANSWER_S = 30.0  # a request of the compiled rig's that does no trial (forget, connect)


def enabled() -> bool:
    return bool(os.environ.get(CAPACITY_ENV))


# -- the host's client, run in the watcher by `docker compose exec` -----------------------------------------


def client(argv: list[str]) -> int:
    """`run RATE DURATION` prints the trial's record as JSON; `end` ends the capacity run."""
    link = channel.Link("127.0.0.1")
    try:
        if argv[:1] == ["run"] and len(argv) == 3:
            answer = link.call("trial_run", timeout=None, rate=float(argv[1]), duration=float(argv[2]))
        elif argv == ["end"]:
            answer = link.call("trial_end", timeout=30)
        else:
            print(json.dumps({"error": f"usage: run RATE DURATION | end (got {argv})"}))
            return 2
    except (OSError, channel.ChannelError, control.WaitTimeout) as error:
        answer = {"error": str(error)}
    print(json.dumps(answer))
    return 0 if "error" not in answer else 1


if __name__ == "__main__":
    sys.exit(client(sys.argv[1:]))
