"""The watcher: runs one benchmark from reset to result (see docs/DESIGN.md for the sequence).

It needs no Docker socket: the daemon's supervisor answers its requests through the control volume.
Stdlib only: runs in the watcher container with Debian's python3 and sec.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from syslogbench.model import preprocess, scenarios, settings
from syslogbench.model.machine import host_facts
from syslogbench.model.messages import SenderId
from syslogbench.rig import control, lasthop, tlscerts
from syslogbench.rig.cgroup import Snapshot, parse_sample, read_snapshot
from syslogbench.rig.outcome import DaemonInfo, Observed, build
from syslogbench.rig.reconcile import OUTPUT_RE, reconcile

RESULTS = Path(os.environ.get("RESULTS_DIR", "/results"))
HEALTH_FILE = Path("/tmp/watcher-ready")
SEC_FIRED = Path("/tmp/sec-fired")
READY_TIMEOUT = float(os.environ.get("READY_TIMEOUT", "300"))
PROGRESS_EVERY = float(os.environ.get("PROGRESS_EVERY", "2"))
STOP_TIMEOUT = 120.0
DRAIN_TIMEOUT = 60.0  # the last hop reads what the stopped daemon had already sent
QUEUE_SAMPLE_S = 0.5
RESTART_AFTER_SENDERS_S = 1.0  # pause-restart: time for the daemon to read what the senders' kernels acked
RELAY_QUIET_S = 5.0  # relay: no new line at the last hop for this long means nothing more is coming
SEC_GRACE_S = 2.0  # SEC polls done.log every 0.05 s; 2 s without firing after the last DONE means never
# UDP: a DONE datagram may be lost, so SEC may never fire. Once every ledger is in (nothing more will be
# sent), output that has not grown for UDP_QUIET_S means the daemon has written all it will write.
UDP_QUIET_S = 2.0
UDP_POLL_S = 0.1
EXIT_CODES = {"pass": 0, "loss": 1, "timeout": 2, "error": 3, "n/a": 4}


class Unsupported(RuntimeError):
    """The daemon has no config for this scenario."""


def say(text: str) -> None:
    print(f"watcher: {text}", flush=True)


def clear(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for entry in directory.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def read_text(path: Path, default: str = "unknown") -> str:
    try:
        return path.read_text().strip() or default
    except OSError:
        return default


def clean_version(line: str) -> str:
    """rsyslog prints 'rsyslogd  8.2504.0 (aka 2025.04) compiled with:'; keep the words that name it."""
    return " ".join(line.replace("compiled with:", "").split())


def daemon_info() -> DaemonInfo:
    import yaml  # Debian's python3-yaml, in the watcher image only

    folder = control.CONTROL / "daemon"
    manifest_path = folder / "manifest.yaml"
    manifest = yaml.safe_load(manifest_path.read_text()) if manifest_path.exists() else {}
    profile = manifest.get("profile", "unknown")
    return DaemonInfo(
        profile=profile,
        name=manifest.get("daemon", "unknown"),
        version=clean_version(read_text(folder / "version")),
        package=manifest.get("package", "unknown"),
        image=f"syslogbench/{profile}:{os.environ.get('IMAGE_TAG') or 'local'}",
        base=read_text(folder / "base"),
        settings=manifest.get("settings") or {},
    )


def expected_senders(cfg: settings.Settings) -> list[SenderId]:
    return [SenderId(h, s) for h in range(1, cfg.hosts + 1) for s in range(1, cfg.senders_per_host + 1)]


def read_ledgers() -> dict[str, dict]:
    ledgers = {}
    for path in (control.CONTROL / "ledgers").glob("*.json"):
        ledgers[path.stem] = control.read_json(path)
    return ledgers


def failed_senders() -> list[str]:
    return [
        f"{name}: {ledger['status']}" for name, ledger in read_ledgers().items() if ledger["status"] != "ok"
    ]


def wait_until_ready(cfg: settings.Settings) -> None:
    """Wait for the daemon and every sender; a sender that fails while rendering ends the wait at once."""
    ready, unsupported = control.CONTROL / "daemon" / "ready", control.CONTROL / "daemon" / "unsupported"
    deadline = time.monotonic() + READY_TIMEOUT
    while not ready.exists():
        if unsupported.exists():
            raise Unsupported(unsupported.read_text().strip())
        if time.monotonic() > deadline:
            raise control.WaitTimeout(
                f"gave up after {READY_TIMEOUT:.0f} s waiting for the daemon to listen on 514"
            )
        time.sleep(0.05)
    deadline = time.monotonic() + READY_TIMEOUT
    ready_dir = control.CONTROL / "ready"
    while len(list(ready_dir.glob("host*"))) < cfg.senders:
        if failed := failed_senders():
            raise RuntimeError("a sender failed before the start: " + "; ".join(failed))
        if time.monotonic() > deadline:
            count = len(list(ready_dir.glob("host*")))
            raise control.WaitTimeout(
                f"only {count} of {cfg.senders} senders were ready after {READY_TIMEOUT:.0f} s: "
                f"{cfg.hosts} hosts need {cfg.hosts} generator containers (plain compose: set GENERATORS={cfg.hosts})"
            )
        time.sleep(0.05)


def take_snapshot(name: str) -> Snapshot:
    control.write_atomic(control.CONTROL / "snapshots" / f"{name}.request", "")
    control.wait_for(
        control.CONTROL / "snapshots" / name / "time", 30, f"the daemon's cgroup snapshot {name!r}"
    )
    return read_snapshot(control.CONTROL / "snapshots" / name)


def sec_rule(cfg: settings.Settings) -> str:
    return (
        "type=SingleWithThreshold\n"
        "ptype=SubStr\n"
        "pattern=DONE\n"
        "desc=syslogbench DONE threshold\n"
        f"action=write {SEC_FIRED} fired\n"
        f"window={cfg.done_window}\n"
        f"thresh={cfg.done_threshold}\n"
    )


def start_sec(cfg: settings.Settings) -> subprocess.Popen:
    """The real SEC, as in 2014, following done.log from its (empty) start.

    The watcher creates done.log empty before the start, so SEC need not wait for --reopen-timeout to
    notice the file; the daemon appends to it.
    """
    rules = Path("/tmp/done-threshold.sec")
    rules.write_text(sec_rule(cfg))
    SEC_FIRED.unlink(missing_ok=True)
    command = [
        "sec",
        f"--conf={rules}",
        f"--input={control.LOGS / 'done.log'}",
        "--reopen-timeout=1",
        "--poll-timeout=0.05",
        "--log=/tmp/sec.log",
    ]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


class LineCounter:
    """Counts newlines in the daemon's split files, reading only what was added since the last look."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.offsets: dict[str, int] = {}
        self.lines = 0

    def update(self) -> int:
        for entry in os.scandir(self.directory):
            if not OUTPUT_RE.match(entry.name):
                continue
            offset = self.offsets.get(entry.name, 0)
            if entry.stat().st_size > offset:
                with open(entry.path, "rb") as handle:
                    handle.seek(offset)
                    data = handle.read()
                self.offsets[entry.name] = offset + len(data)
                self.lines += data.count(b"\n")
        return self.lines


class DoneTail:
    """Follows done.log like SEC does, noting when each DONE line appeared (seconds after the start)."""

    def __init__(self, path: Path, t0: float) -> None:
        self.path, self.t0 = path, t0
        self.offset = 0
        self.seen: list[float] = []

    def update(self) -> int:
        size = self.path.stat().st_size if self.path.exists() else 0
        if size > self.offset:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                data = handle.read(size - self.offset)
            complete = data[: data.rfind(b"\n") + 1]
            self.offset += len(complete)
            now = time.monotonic() - self.t0
            self.seen += [now] * sum(1 for line in complete.splitlines() if b"DONE" in line)
        return len(self.seen)


class SampleTail:
    """Reads the supervisor's samples.log as blocks complete; CPU is made relative to the start snapshot."""

    def __init__(self, path: Path, start: Snapshot | None) -> None:
        self.path = path
        self.offset = 0
        self.pending: list[str] = []
        self.base = (start.cpu_user_s, start.cpu_system_s) if start else (None, None)

    def update(self) -> list[tuple[float | None, float | None, int | None]]:
        size = self.path.stat().st_size if self.path.exists() else 0
        if size <= self.offset:
            return []
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            data = handle.read(size - self.offset)
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        blocks = []
        for line in complete.decode(errors="replace").splitlines():
            if line.startswith("sample "):
                self.pending = []
            elif line.startswith("end "):
                blocks.append(self.relative(*parse_sample(self.pending)))
            else:
                self.pending.append(line)
        return blocks

    def relative(self, user: float | None, system: float | None, memory: int | None) -> tuple:
        base_user, base_system = self.base
        user = None if user is None or base_user is None else round(user - base_user, 3)
        system = None if system is None or base_system is None else round(system - base_system, 3)
        return user, system, memory


def directory_bytes(directory: Path) -> int:
    """Size of every file under directory (the central daemon's disk queue files)."""
    total = 0
    for root, _, files in os.walk(directory):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except FileNotFoundError:  # the daemon removed it meanwhile
                continue
    return total


class QueueWatch:
    """The bytes in the central daemon's disk queue (relay scenarios), sampled while the run goes."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.samples: list[list[float]] = []
        self.peak = 0
        self.next_at = 0.0

    def update(self, now: float) -> None:
        if now < self.next_at:
            return
        self.next_at = now + QUEUE_SAMPLE_S
        size = directory_bytes(self.directory)
        self.peak = max(self.peak, size)
        self.samples.append([round(now, 2), size])


class Restart:
    """relay_target pause-restart: once every sender is done and a second more, so that every message is in the
    daemon's queue while the last hop still pauses, ask the supervisor to restart the daemon, once."""

    def __init__(self, senders: int) -> None:
        self.senders = senders
        self.senders_done_s: float | None = None
        self.requested_s: float | None = None
        self.next_at = 0.0

    def update(self, now: float) -> None:
        if self.requested_s is not None or now < self.next_at:
            return
        self.next_at = now + 0.1
        if self.senders_done_s is None:
            if len(list((control.CONTROL / "ledgers").glob("*.json"))) >= self.senders:
                self.senders_done_s = round(now, 3)
            return
        if now - self.senders_done_s >= RESTART_AFTER_SENDERS_S:
            control.write_atomic(control.CONTROL / "restart", "")
            self.requested_s = round(now, 3)

    def record(self, obs: Observed) -> dict:
        done = control.CONTROL / "daemon" / "restarted"
        if not done.exists():
            obs.errors.append(
                "relay_target pause-restart: the daemon was not restarted before the run ended "
                f"(senders done at {self.senders_done_s} s, restart asked at {self.requested_s} s)"
            )
            return {"senders_done_s": self.senders_done_s, "requested_s": self.requested_s, "exit_code": None}
        code, tenths = done.read_text().split()
        return {
            "senders_done_s": self.senders_done_s,
            "requested_s": self.requested_s,
            "exit_code": int(code),
            "stop_s": int(tenths) / 10,
        }


def relay_record(scenario: scenarios.Scenario, queue: QueueWatch | None) -> dict:
    """The last hop and the central daemon's queue towards it, for the result's `relay` section."""
    disk = scenario.buffer != "none"
    return {
        "last_hop": None,
        "queue": {
            "buffer": scenario.buffer,
            "where": f"named volume 'queue' at {lasthop.QUEUE_DIR} in the daemon" if disk else "memory",
            "capacity_bytes": lasthop.QUEUE_CAPACITY_BYTES if disk else None,
            "peak_bytes": queue.peak if queue else None,
            "bytes_after_stop": None,
            "samples": queue.samples if queue else [],
        },
    }


def ended(cfg: settings.Settings, obs: Observed, done: DoneTail, now: float) -> bool:
    """SEC fired; or every sender's DONE is in and SEC stayed silent (its window can no longer be met)."""
    if SEC_FIRED.exists():
        obs.end_trigger = "sec"
        return True
    if len(done.seen) >= cfg.senders and now - done.seen[-1] > SEC_GRACE_S:
        obs.end_trigger = "all-done-without-sec"
        obs.notes.append(
            f"SEC's SingleWithThreshold ({cfg.done_threshold} DONE in {cfg.done_window} s) did not fire: the "
            f"{cfg.senders} DONE messages reached done.log over {done.seen[-1] - done.seen[0]:.1f} s. "
            "The run ended when the watcher saw every DONE."
        )
        return True
    return False


class UdpQuiet:
    """Ends a UDP run whose DONE datagrams did not all arrive: every ledger in, then no new line for a while.

    last_growth is when the watcher last saw the output grow (seconds after the start, UDP_POLL_S
    resolution): the arrival of the last message the daemon wrote, which is the run's elapsed time.
    """

    def __init__(self, counter: LineCounter, senders: int) -> None:
        self.counter, self.senders = counter, senders
        self.lines = 0
        self.last_growth: float | None = None
        self.ledgers_in: float | None = None
        self.next_poll = 0.0

    def over(self, now: float) -> bool:
        if now < self.next_poll:
            return False
        self.next_poll = now + UDP_POLL_S
        lines = self.counter.update()
        if lines > self.lines:
            self.lines, self.last_growth = lines, now
        if self.ledgers_in is None and len(read_ledgers()) >= self.senders:
            self.ledgers_in = now
        if self.ledgers_in is None:
            return False
        return now - max(self.ledgers_in, self.last_growth or 0.0) >= UDP_QUIET_S


def quiet_end(cfg: settings.Settings, obs: Observed, done: DoneTail) -> None:
    obs.end_trigger = "udp-quiet"
    obs.notes.append(
        f"{len(done.seen)} of {cfg.senders} DONE datagrams reached done.log, so SEC could not fire: the run "
        f"ended when every sender's ledger was in and no line had arrived for {UDP_QUIET_S:g} s. elapsed_s "
        "runs to the last arrival the watcher saw (0.1 s polling)."
    )


def problem(cfg: settings.Settings, obs: Observed, elapsed: float) -> bool:
    if elapsed > cfg.run_timeout:
        obs.timed_out = True
        obs.end_trigger = "timeout"
        return True
    if (control.CONTROL / "daemon" / "exit").exists():
        obs.errors.append("the daemon exited before the DONE threshold fired")
        obs.end_trigger = "daemon-exited"
        return True
    if failed := failed_senders():
        obs.errors.append("a sender failed: " + "; ".join(failed))
        obs.end_trigger = "sender-failed"
        return True
    return False


def watch(cfg: settings.Settings, obs: Observed, t0: float) -> None:
    """Until SEC fires (or every DONE is in), the daemon dies, a sender fails, or RUN_TIMEOUT passes."""
    counter = LineCounter(control.LOGS)
    done = DoneTail(control.LOGS / "done.log", t0)
    samples = SampleTail(control.CONTROL / "samples.log", obs.start)
    udp = obs.scenario is not None and obs.scenario.transport == "udp"
    quiet = UdpQuiet(counter, cfg.senders) if udp else None
    relay = obs.scenario is not None and obs.scenario.destination == "relay"
    # Only a disk queue leaves files to measure; an in-memory one shows in the daemon's memory samples.
    queue = QueueWatch(lasthop.QUEUE_DIR) if relay and obs.scenario.buffer != "none" else None
    restart = Restart(cfg.senders) if relay and obs.scenario.relay_target == "pause-restart" else None
    next_report, last_lines, last_time = t0 + PROGRESS_EVERY, 0, t0
    while True:
        now = time.monotonic()
        done.update()
        if queue:
            queue.update(now - t0)
        if restart:
            restart.update(now - t0)
        if ended(cfg, obs, done, now - t0) or problem(cfg, obs, now - t0):
            break
        # Only while some DONE is missing: with every DONE in, SEC (or all-done-without-sec) ends the run.
        if quiet is not None and len(done.seen) < cfg.senders and quiet.over(now - t0):
            quiet_end(cfg, obs, done)
            break
        for user, system, memory in samples.update():
            obs.samples.append([round(now - t0, 2), user, system, memory, counter.update()])
        if PROGRESS_EVERY > 0 and now >= next_report:
            lines = counter.update()
            rate = (lines - last_lines) / (now - last_time)
            obs.progress.append([round(now - t0, 2), lines])
            share = 100 * lines / cfg.expected_messages
            say(f"{lines:,} / {cfg.expected_messages:,} received ({share:.1f}%), {rate:,.0f} msg/s")
            next_report, last_lines, last_time = now + PROGRESS_EVERY, lines, now
        time.sleep(0.02)
    record_end(cfg, obs, done, time.monotonic() - t0)
    if obs.end_trigger == "udp-quiet" and quiet is not None:
        obs.elapsed_s = quiet.last_growth
    if relay:
        obs.relay = relay_record(obs.scenario, queue)
        if obs.end_trigger in ("sec", "all-done-without-sec"):
            obs.relay["tail"] = wait_for_relay_tail(cfg, counter, t0)
        if restart:
            obs.relay["restart"] = restart.record(obs)


def wait_for_relay_tail(cfg: settings.Settings, counter: LineCounter, t0: float) -> dict:
    """After the DONEs: wait until every expected line is at the last hop, or none came for RELAY_QUIET_S.

    DONEs can overtake queued messages (rsyslog's disk-assisted queue sends from memory while older messages
    wait on disk), so the DONE threshold does not mean that everything arrived. Stopping the daemon then would
    count messages still queued as lost.
    """
    began = time.monotonic()
    lines = first = counter.update()
    changed = began
    while lines < cfg.expected_messages:
        now = time.monotonic()
        if now - changed > RELAY_QUIET_S or now - t0 > cfg.run_timeout:
            break
        time.sleep(0.05)
        if (count := counter.update()) != lines:
            lines, changed = count, time.monotonic()
    return {
        "lines_at_done": first,
        "lines_at_stop": lines,
        "waited_s": round(time.monotonic() - began, 3),
        "last_line_s": round(changed - t0, 3),
    }


def record_end(cfg: settings.Settings, obs: Observed, done: DoneTail, now: float) -> None:
    """Elapsed runs to the threshold-th DONE as the watcher saw it appear in done.log (20 ms polling)."""
    done.update()
    obs.sec_fired_s = round(now, 3) if obs.end_trigger == "sec" else None
    if len(done.seen) >= cfg.done_threshold and obs.end_trigger in ("sec", "all-done-without-sec"):
        obs.elapsed_s = done.seen[cfg.done_threshold - 1]
    if done.seen:
        obs.done_spread_s = round(done.seen[-1] - done.seen[0], 3)


def stop_daemon(obs: Observed) -> None:
    control.write_atomic(control.CONTROL / "stop", "")
    exit_file = control.CONTROL / "daemon" / "exit"
    try:
        control.wait_for(exit_file, STOP_TIMEOUT, "the daemon to stop", poll=0.05)
    except control.WaitTimeout as error:
        obs.errors.append(str(error))
        return
    obs.daemon_exit = int(read_text(exit_file, "-1"))
    try:
        obs.end = read_snapshot(control.CONTROL / "snapshots" / "end")
    except ValueError as error:
        obs.errors.append(f"no cgroup figures from the daemon: {error}")


def wait_for_last_hop(obs: Observed) -> None:
    """After the daemon stopped: the last hop has read all it was sent, so reconciliation sees everything."""
    if obs.relay is None:
        return
    obs.relay["queue"]["bytes_after_stop"] = directory_bytes(lasthop.QUEUE_DIR)
    drained = control.CONTROL / "lasthop" / "drained.json"
    try:
        control.wait_for(drained, DRAIN_TIMEOUT, "the last hop to read what the daemon had sent", poll=0.05)
    except control.WaitTimeout as error:
        obs.errors.append(str(error))
        return
    obs.relay["last_hop"] = control.read_json(drained)


def wait_for_ledgers(cfg: settings.Settings, timeout: float = 60) -> None:
    """Senders write their ledger just after their queue drains; give stragglers a moment."""
    deadline = time.monotonic() + timeout
    while len(read_ledgers()) < cfg.senders and time.monotonic() < deadline:
        time.sleep(0.1)


def remove_test_files() -> None:
    for path in control.LOGS.iterdir():
        if OUTPUT_RE.match(path.name) or path.name == "done.log":
            path.unlink()


def read_generator_cpu() -> float | None:
    """CPU seconds all generator containers used while sending, from their own cgroups."""
    total = 0.0
    reports = [control.read_json(p) for p in (control.CONTROL / "generators").glob("host*.json")]
    for entry in reports:
        if entry["cpu_user_s"] is None or entry["cpu_system_s"] is None:
            return None
        total += entry["cpu_user_s"] + entry["cpu_system_s"]
    return round(total, 3) if reports else None


def conclude(cfg: settings.Settings, obs: Observed) -> None:
    wait_for_ledgers(cfg)
    obs.generator_cpu_s = read_generator_cpu()
    senders = expected_senders(cfg)
    ledgers = read_ledgers()
    # A filtering scenario expects only its subset; some scenarios' lines must show their processing.
    expect = preprocess.Expectation.of(obs.scenario, cfg.seed)
    obs.counts = reconcile(control.LOGS, ledgers, senders, cfg.messages_per_sender + 1, expect)
    if note := tls_note(ledgers):
        obs.notes.append(note)
    udp = obs.scenario is not None and obs.scenario.transport == "udp"
    if udp and obs.counts.total("sent") and not obs.counts.total("received"):
        # Loss is the figure over UDP, but losing everything is a daemon that does not listen on 514/udp.
        obs.errors.append("no UDP datagram reached the output files: is the daemon listening on 514/udp?")
    if obs.timed_out:
        missing = [sender.id for sender in obs.counts.senders if not sender.done_seen]
        obs.errors.append(
            f"the DONE threshold ({cfg.done_threshold} in {cfg.done_window} s) did not fire within "
            f"RUN_TIMEOUT={cfg.run_timeout} s; DONE never reached done.log from: {', '.join(missing) or 'none'}"
        )
    if not cfg.keep_logs:
        remove_test_files()
        if lasthop.QUEUE_DIR.exists():
            clear(lasthop.QUEUE_DIR)


def prepare_tls(cfg: settings.Settings) -> str | None:
    """A TLS scenario's throwaway CA and server certificate, written before run.json (which daemons and
    senders wait for). Returns what went wrong, if anything; a bad scenario is reported with the run."""
    try:
        scenario = scenarios.load(cfg.scenario)
    except scenarios.ScenarioError:
        return None
    if scenario.transport != "tls":
        return None
    try:
        tlscerts.generate(control.CONTROL / "tls")
    except tlscerts.CertError as error:
        return f"cannot make the TLS certificates: {error}"
    return None


def tls_note(ledgers: dict[str, dict]) -> str | None:
    """What the senders negotiated, e.g. 'TLSv1.3 TLS_AES_256_GCM_SHA384 on 4 of 4 connections'."""
    seen = [
        f"{entry['version']} {entry['cipher']}" for ledger in ledgers.values() if (entry := ledger.get("tls"))
    ]
    if not seen:
        return None
    counts = {text: seen.count(text) for text in sorted(set(seen))}
    return "TLS (sender side): " + "; ".join(
        f"{text} on {n} of {len(ledgers)} connections" for text, n in counts.items()
    )


def run(cfg: settings.Settings, obs: Observed) -> None:
    wait_until_ready(cfg)
    obs.daemon = daemon_info()
    obs.start = take_snapshot("start")
    obs.host.cgroup_version = obs.start.version
    sec = start_sec(cfg)
    try:
        time.sleep(0.5)  # let SEC load its rules before any DONE can arrive
        t0 = time.monotonic()
        control.write_atomic(control.CONTROL / "start", f"{time.time()}\n")
        say(f"start: {cfg.senders} senders x {cfg.messages_per_sender:,} messages to {obs.daemon.profile}")
        watch(cfg, obs, t0)
    finally:
        sec.terminate()
        sec.wait(timeout=10)
    stop_daemon(obs)
    wait_for_last_hop(obs)
    conclude(cfg, obs)


def write_result(obs: Observed) -> dict:
    result = build(obs)
    RESULTS.mkdir(parents=True, exist_ok=True)
    control.write_json(RESULTS / f"{result['run_id']}.json", result)
    return result


def report(result: dict) -> None:
    m = result["messages"]
    say(f"result: results/{result['run_id']}.json")
    for note in result["notes"]:
        say(f"notice: {note}")
    for error in result["errors"]:
        say(f"error: {error}")
    say(
        f"{result['daemon']['profile']} ({result['daemon']['version']}): verdict {result['verdict'].upper()}; "
        f"sent {m['sent']:,}, received {m['received']:,} of {m['expected']:,}, "
        f"lost {m['lost']:,}, duplicated {m['duplicated']:,}, misfiled {m['misfiled']:,}"
    )
    rate = result["rate"]
    if rate["target_per_sender"]:
        say(
            f"rate: target {rate['target_per_sender']:,} msg/s per sender, achieved median "
            f"{rate['achieved_per_sender']['median'] or 0:,.0f} (min {rate['achieved_per_sender']['min'] or 0:,.0f}); "
            f"offered in all {rate['achieved_total'] or 0:,.0f} of {rate['target_total']:,} msg/s"
        )
    if udp := result["udp"]:
        kernel = udp["kernel"] or {}
        say(
            f"udp: {udp['lost']:,} of {udp['sent']:,} lost (drop rate {udp['drop_rate'] or 0:.4%}); kernel: "
            f"{kernel.get('in_datagrams', '?')} datagrams read, {kernel.get('in_errors', '?')} errors "
            f"({kernel.get('rcvbuf_errors', '?')} receive buffer full)"
        )
    if m.get("filtered") or m.get("unexpected") or m.get("unprocessed"):
        say(
            f"filtered out by the scenario {m['filtered']:,}, of which arrived anyway {m['unexpected']:,}; "
            f"lines not showing the processing {m['unprocessed']:,}"
        )
    say(result["summary"])


def scenario_transport(cfg: settings.Settings) -> str:
    """tcp, udp or tls; tcp when the scenario does not load (the run then ends with that error anyway)."""
    try:
        return scenarios.load(cfg.scenario).transport
    except scenarios.ScenarioError:
        return "tcp"


def scenario_needs(cfg: settings.Settings) -> list[str]:
    """The manifest features the scenario needs; a hand-written config's supervisor checks them (baseline)."""
    try:
        return scenarios.load(cfg.scenario).needs()
    except scenarios.ScenarioError:
        return []


def matrix_cell() -> dict[str, object] | None:
    """Set by `python -m syslogbench matrix`, so a resumed matrix knows which cells are done."""
    cell, replicate = os.environ.get("MATRIX_ID"), os.environ.get("MATRIX_REPLICATE", "")
    return {"id": cell, "replicate": int(replicate)} if cell and replicate.isdigit() else None


def main() -> int:
    try:
        cfg = settings.from_env(os.environ)
    except settings.SettingsError as error:
        say(str(error))
        control.write_atomic(control.CONTROL / "finish", "")
        return EXIT_CODES["error"]
    clear(control.CONTROL)
    clear(control.LOGS)
    if lasthop.QUEUE_DIR.exists():  # a disk queue left by an earlier run would replay its messages here
        clear(lasthop.QUEUE_DIR)
    (control.LOGS / "done.log").touch()
    tls_problem = prepare_tls(cfg)
    # Before run.json: the supervisor reads it once run.json exists, to know where readiness shows.
    control.write_atomic(control.CONTROL / "transport", f"{scenario_transport(cfg)}\n")
    control.write_atomic(control.CONTROL / "needs", f"{' '.join(scenario_needs(cfg))}\n")
    control.write_json(control.CONTROL / "run.json", {"settings": cfg.as_dict(), "pid": os.getpid()})
    HEALTH_FILE.touch()
    started = datetime.now(UTC)
    obs = Observed(
        cfg=cfg,
        host=host_facts(2 if Path("/sys/fs/cgroup/cgroup.controllers").exists() else 1),
        daemon=DaemonInfo(),
        started=started,
        finished=started,
    )
    obs.matrix = matrix_cell()
    try:
        obs.scenario = scenarios.load(cfg.scenario)
        if tls_problem:
            raise RuntimeError(tls_problem)
        run(cfg, obs)
    except Unsupported as reason:
        obs.unsupported = str(reason)
        obs.errors.append(f"n/a: {reason}")
        obs.daemon = daemon_info()
    except (control.WaitTimeout, RuntimeError, OSError, ValueError, scenarios.ScenarioError) as error:
        obs.errors.append(str(error))
        obs.daemon = daemon_info()
        if obs.daemon_exit is None and (control.CONTROL / "daemon" / "ready").exists():
            stop_daemon(obs)
    # The key is throwaway, but it need not outlive the run in the volume either.
    shutil.rmtree(control.CONTROL / "tls", ignore_errors=True)
    obs.finished = datetime.now(UTC)
    result = write_result(obs)
    report(result)
    control.write_atomic(control.CONTROL / "finish", "")
    return EXIT_CODES[result["verdict"]]


if __name__ == "__main__":
    sys.exit(main())
