#!/bin/sh
# The watcher's entry point: hand the volumes it shares with the generators and the last hop to their group,
# then run the command (the watcher) with umask 002. Why the watcher itself stays root: watcher/Dockerfile.
#   chgrp 10001  the group of the generators' user (generators/Dockerfile)
#   chmod 2775   group-writable, and setgid: whatever is created below stays in that group
# A directory not mounted here (the image run for another command, e.g. reading the logs volume) is skipped.
set -eu
# The healthcheck's marks (watcher/Dockerfile): a restarted container keeps its /tmp, and must be healthy
# again only after its own reset.
rm -f /tmp/watcher-ready /tmp/watcher-healthy
for dir in /bench/control /var/log/bench /var/spool/bench-queue; do
    [ -d "$dir" ] || continue
    chgrp 10001 "$dir"  # a member of the group (compose.yaml group_add): no capability needed
    chmod 2775 "$dir"
done
# What the watcher creates in them (done.log, tls/, run.json) is then writable or readable by that group.
umask 002
exec "$@"
