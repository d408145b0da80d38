"""The watcher: runs one benchmark from reset to result (docs/DESIGN.md has the sequence).

`run` is the sequence, and `accounting` what it counts once the daemon has stopped; each concern of the
watch (the DONE/SEC end, the UDP quiet end, the guard against a dead daemon, sender or clock, samples,
progress, the relay queue and tail, the restart) is one object in its own module, and `concerns` picks those
the scenario needs. Run it as `python3 -m syslogbench.rig.watcher`.
"""
