#!/bin/sh
# Runs the daemon under test ("$@") and answers the watcher through files in the control volume.
# The protocol is in docs/DESIGN.md. This is POSIX sh on purpose: daemon images carry no Python,
# and whatever runs here is charged to the daemon's cgroup, so it must stay tiny. It runs under bash where
# the image has one, only so that its tick forks nothing (pause below).
set -u

# Under bash, where the image has it, a tick's pause needs no fork (pause below). The health check, run by
# Docker every few seconds, stays in sh: it starts faster, and bash would gain it nothing.
if [ -z "${BASH_VERSION:-}" ] && [ "${1:-}" != "--health" ] && command -v bash > /dev/null 2>&1; then
    exec bash "$0" "$@"
fi

control=${CONTROL_DIR:-/bench/control}
port=${CENTRAL_PORT:-514}
stop_grace=${STOP_GRACE:-60}
# If the watcher vanishes, do not run forever.
lifetime=${MAX_LIFETIME:-7200}
cg=/sys/fs/cgroup
pid=""

# Every wait here without a fork: each `sleep` is a fork and an exec in the daemon's cgroup, on the
# daemon's core (terminate's, every 0.1 s, before the end snapshot counts the daemon's CPU), the main loop's
# five a second (in a UDP search of syslog-ng 4.8 with perf on that core, `sleep` and this
# shell took 1.7% of its samples: docs/findings/syslog-ng-udp-drops.md). bash's
# read times out on a FIFO that this shell also holds open for writing, so it never sees an end; sh (dash)
# has no read with a timeout, and sleeps.
pause_fifo=""
if [ -n "${BASH_VERSION:-}" ] && pause_fifo=$(mktemp -u /tmp/supervise-pause.XXXXXX) && mkfifo "$pause_fifo"; then
    exec 9<> "$pause_fifo"
    rm -f "$pause_fifo"
else
    pause_fifo=""
fi
pause() {
    if [ -n "$pause_fifo" ]; then
        # shellcheck disable=SC3045 # read -t is bash's: this branch runs only under bash (above)
        read -r -t "$1" -u 9 _ || :
    else
        sleep "$1"
    fi
}

# Written then renamed, so the watcher never reads half a file.
put() { cat > "$1.tmp" && mv "$1.tmp" "$1"; }

# The watcher writes the scenario's transport (tcp, udp, tls) to $control/transport before run.json.
# A UDP config may open no TCP port at all, so readiness looks where that transport listens.
read_transport() {
    transport=tcp
    if [ -f "$control/transport" ]; then read -r transport < "$control/transport"; fi
}

# Whether the daemon can run the scenario is the watcher's decision (from the manifest describe() copied):
# it answers with go, or with unsupported (the run is n/a) and then this idles until finish. finish alone
# means the watcher gave up before answering.
await_go() {
    asked=0
    while [ ! -f "$control/go" ]; do
        if [ -f "$control/unsupported" ] || [ -f "$control/finish" ]; then
            while [ ! -f "$control/finish" ]; do pause 0.2; done
            exit 0
        fi
        asked=$((asked + 1))
        [ "$asked" -lt 1500 ] || { echo "supervise: no answer from the watcher" >&2; exit 1; }
        pause 0.2
    done
}

listening() {
    port_hex=$(printf ':%04X ' "$port")
    if [ "$transport" = udp ]; then
        # A bound, unconnected UDP socket: remote 0.0.0.0:0 (or ::), state 07.
        grep -q "${port_hex}[0-9A-F]*:0000 07" /proc/net/udp /proc/net/udp6 2>/dev/null
    else
        grep -q "${port_hex}[0-9A-F]*:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null
    fi
}

# The cgroup's version, decided once: v2 has one tree with cgroup.controllers at its root, v1 a directory per
# controller. The files each snapshot copies are the ones syslogbench/rig/cgroup.py reads (V1.FILES, V2.FILES),
# and sample_files those it reads from samples.log; a unit test keeps the lists in step. memory.events (v2) and
# memory.oom_control (v1) count the kernel's OOM kills: a daemon killed for memory is then named so, rather
# than by what its senders saw (connection reset).
if [ -f "$cg/cgroup.controllers" ]; then
    cgroup_version=2
    cgroup_files="cpu.stat memory.peak memory.current memory.max memory.stat io.stat cpu.max memory.events"
    sample_files="cpu.stat memory.current"
else
    cgroup_version=1
    cgroup_files="cpuacct/cpuacct.stat cpuacct/cpuacct.usage memory/memory.max_usage_in_bytes
        memory/memory.usage_in_bytes memory/memory.limit_in_bytes memory/memory.stat
        blkio/blkio.throttle.io_service_bytes cpu/cpu.cfs_quota_us cpu/cpu.cfs_period_us memory/memory.oom_control"
    sample_files="cpuacct/cpuacct.stat memory/memory.usage_in_bytes"
fi

# sh has no local variables: this one uses only its argument, so callers' variables survive.
copy_cgroup_files() {
    echo "$cgroup_version" > "$1/cgroup.version"
    for f in $cgroup_files; do
        cp "$cg/$f" "$1/" 2>/dev/null
    done
}

# snapshot NAME [PROC_STATUS_COPY]
snapshot() {
    dir="$control/snapshots/$1"
    mkdir -p "$dir.tmp"
    copy_cgroup_files "$dir.tmp"
    if [ -n "${2:-}" ]; then cp "$2" "$dir.tmp/proc.status"; else cp "/proc/$pid/status" "$dir.tmp/proc.status" 2>/dev/null; fi
    # The kernel's UDP counters of this network namespace: datagrams in, and those dropped for a full buffer.
    cp /proc/net/snmp "$dir.tmp/snmp" 2>/dev/null
    # The host's CPU times (not namespaced): what else ran on the daemon's cores, and the hypervisor's steal.
    cp /proc/stat "$dir.tmp/stat" 2>/dev/null
    date +%s.%N > "$dir.tmp/time"
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
}

# Once a second during the run: the few counters of the time series, appended to samples.log with shell
# builtins only (no fork), because whatever this costs is charged to the daemon's cgroup.
append_sample() {
    {
        echo "sample $1"
        for f in $sample_files; do
            while IFS= read -r line; do echo "$f $line"; done < "$cg/$f"
        done
        echo "end $1"
    } >> "$control/samples.log"
}

answer_snapshot_requests() {
    for request in "$control"/snapshots/*.request; do
        [ -e "$request" ] || return 0
        name=$(basename "$request" .request)
        snapshot "$name"
        rm -f "$request"
    done
}

# SIGTERM, then SIGKILL after the grace period; sets code (the exit code) and waited (tenths of a second).
terminate() {
    kill -TERM "$pid" 2>/dev/null
    waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt $((stop_grace * 10)) ]; do
        pause 0.1
        waited=$((waited + 1))
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid"
    code=$?
}

# Stop the daemon, then take snapshot "end" so the CPU spent flushing on shutdown is counted.
stop_daemon() {
    cp "/proc/$pid/status" /tmp/final.status 2>/dev/null
    terminate
    snapshot end /tmp/final.status
    echo "$code" | put "$control/daemon/exit"
}

# Relay scenarios with relay_target pause-restart: stop the daemon (SIGTERM, as a service restart does) and
# start it again, once. Its exit code and the tenths of a second it took to stop go to daemon/restarted.
restart_daemon() {
    # Marked first: the last hop keeps its pause while the daemon stops, however long its queue takes to save.
    : | put "$control/daemon/restarting"
    terminate
    "$@" 9>&- &  # the daemon gets no copy of the pause FIFO
    pid=$!
    echo "supervise: restarted $* as pid $pid (the first exited with $code)"
    echo "$code $waited" | put "$control/daemon/restarted"
}

# The manifest last: the watcher waits for it, then reads all three.
# TUNING picks the folder of rendered configs (syslogbench/contract.py, TUNING_FOLDERS): the package's
# defaults in scenarios/, the maintainers' recommended settings in tuned/.
tuning_folder() {
    if [ "${TUNING:-default}" = tuned ]; then echo tuned; else echo scenarios; fi
}

describe() {
    mkdir -p "$control/daemon" "$control/snapshots"
    sh -c "$VERSION_CMD" 2>&1 | head -n 1 | put "$control/daemon/version"
    put "$control/daemon/base" < /etc/syslogbench-base
    buffers
    knobs="/etc/syslogbench/$(tuning_folder)/${SCENARIO:-seed2014}.yaml"
    [ ! -f "$knobs" ] || put "$control/daemon/tuning.yaml" < "$knobs"
    put "$control/daemon/manifest.yaml" < /etc/syslogbench/manifest.yaml
}

# The socket buffer sysctls of this network namespace (a UDP result records them beside UDP_RCVBUF), read
# here because the watcher is in another namespace; before the daemon starts, so the forks cost it nothing.
# cat, not the shell's read: dash reads a byte at a time, and an integer sysctl read from an offset past 0
# answers end of file ("2" of 212992).
buffers() {
    for name in rmem_default rmem_max; do
        echo "$name $(cat "/proc/sys/net/core/$name" 2>/dev/null)"
    done | put "$control/daemon/buffers"
}

# The UDP listener's own receive buffer, as the kernel holds it: ss -m asks over sock_diag (netlink), which
# needs no capability, and prints skmem's rb (sk_rcvbuf: what getsockopt(SO_RCVBUF) gives, twice the
# request). Read once the port is bound, before daemon/ready, so the watcher finds it beside the sysctls.
# IPv4 first: the rig sends over IPv4, and rsyslog opens an IPv6 socket too.
socket_buffer() {
    [ "$transport" = udp ] || return 0
    rb=""
    for family in -4 -6; do
        rb=$(ss -H -u -l -n -m "$family" "sport = :$port" 2>/dev/null | sed -n 's/.*skmem:([^)]*rb\([0-9]*\).*/\1/p' | head -n 1)
        [ -n "$rb" ] && break
    done
    { cat "$control/daemon/buffers"; echo "socket_rcvbuf ${rb:-unread}"; } | put "$control/daemon/buffers"
}

# shellcheck disable=SC2329 # called by trap
on_signal() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
    exit 143
}

if [ "${1:-}" = "--health" ]; then
    read_transport
    listening
    exit
fi

trap on_signal TERM INT
started=$(date +%s)
while [ ! -f "$control/run.json" ]; do
    [ $(($(date +%s) - started)) -lt 300 ] || { echo "supervise: no run.json from the watcher" >&2; exit 1; }
    pause 0.2
done
describe
read_transport
await_go
# `make render` writes a config for every scenario the manifest's features allow (a hand-written config,
# the baseline's, has no such folder). A missing one means stale renders: the daemon then fails to start,
# and the watcher reports that it exited before it listened.
if [ -d /etc/syslogbench/scenarios ]; then
    conf="/etc/syslogbench/$(tuning_folder)/${SCENARIO:-seed2014}.conf"
    [ -f "$conf" ] || echo "supervise: no $conf although the manifest has the features: run make render" >&2
    ln -sf "$conf" /etc/syslogbench/active.conf
fi
"$@" 9>&- &  # the daemon gets no copy of the pause FIFO
pid=$!
echo "supervise: started $* as pid $pid"

ticks=0
samples=0
while [ ! -f "$control/finish" ]; do
    ticks=$((ticks + 1))
    if [ $((ticks % 5)) -eq 0 ] && [ -f "$control/start" ] && [ ! -f "$control/stop" ]; then
        samples=$((samples + 1))
        append_sample "$samples"
    fi
    if [ ! -f "$control/daemon/ready" ] && listening; then
        socket_buffer
        : | put "$control/daemon/ready"
    fi
    answer_snapshot_requests
    if [ ! -f "$control/daemon/exit" ]; then
        if [ -f "$control/restart" ] && [ ! -f "$control/daemon/restarted" ] && [ ! -f "$control/stop" ]; then
            restart_daemon "$@"
        elif [ -f "$control/stop" ]; then
            stop_daemon
        elif ! kill -0 "$pid" 2>/dev/null; then
            wait "$pid"
            code=$?
            echo "supervise: the daemon exited by itself with code $code" >&2
            snapshot end
            echo "$code" | put "$control/daemon/exit"
        fi
    fi
    # Counted in ticks, not with date: one fork fewer per tick in the daemon's cgroup.
    [ "$ticks" -lt $((lifetime * 5)) ] || { echo "supervise: lifetime over" >&2; break; }
    pause 0.2
done
[ -f "$control/daemon/exit" ] || stop_daemon
exit 0
