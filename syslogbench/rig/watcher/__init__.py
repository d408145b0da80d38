"""The watcher: runs one benchmark from reset to result (docs/DESIGN.md has the sequence).

`run` is the sequence; each concern of the watch (the DONE/SEC end, the UDP quiet end, the guard against a
dead daemon, sender or clock, samples, progress, the relay queue and tail, the restart) is one object in its
own module, and `concerns` picks those the scenario needs. Run it as `python3 -m syslogbench.rig.watcher`.
"""

from syslogbench.rig.watcher.run import host_facts

# host/benchmark.py's n/a result, made without containers, reads the host's facts through this name.
__all__ = ["host_facts"]
