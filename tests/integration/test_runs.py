"""End-to-end runs on real containers. Each asserts exact counts against the senders' own ledgers."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from syslogbench import contract
from syslogbench.host import profiles
from syslogbench.host.compose import APART
from syslogbench.model import messages
from syslogbench.model.messages import SenderId
from syslogbench.rig import tlscerts

from .conftest import ROOT, SMALL, daemon_params

pytestmark = pytest.mark.integration
CONFIGS = Path(__file__).parent / "configs"
SCHEMA = json.loads((ROOT / "results" / "schema.json").read_text())
HOSTS, PER_HOST, COUNT = (
    int(SMALL["HOSTS"]),
    int(SMALL["SENDERS_PER_HOST"]),
    int(SMALL["MESSAGES_PER_SENDER"]),
)
SENDERS = [SenderId(h, s) for h in range(1, HOSTS + 1) for s in range(1, PER_HOST + 1)]
EXPECTED = len(SENDERS) * (COUNT + 1)
SEED = 2014


def expected_lines() -> dict[tuple[int, int], set[bytes]]:
    """(facility, severity) -> the message bodies the senders render with the seed: what each file must hold."""
    table: dict[tuple[int, int], set[bytes]] = {}
    for sender in SENDERS:
        for line in messages.render_lines(SEED, sender, COUNT, 0):
            body = messages.BODY_RE.search(line)
            assert body is not None
            key = (int(body.group(4)), int(body.group(5)))
            table.setdefault(key, set()).add(body.group(0))
    return table


def bodies(data: bytes) -> list[bytes]:
    return [match.group(0) for match in messages.BODY_RE.finditer(data)]


def check_every_message_counted(run) -> None:
    """A valid result, pass, and every message of every sender sent and received once, by the watcher's count."""
    result = run.result
    jsonschema.validate(result, SCHEMA)
    assert run.code == 0, run.output[-3000:]
    assert result["verdict"] == "pass", result["errors"]
    m = result["messages"]
    assert (m["expected"], m["sent"], m["received"]) == (EXPECTED, EXPECTED, EXPECTED)
    assert (m["lost"], m["duplicated"], m["misfiled"], m["unknown"]) == (0, 0, 0, 0)
    assert sorted(s["id"] for s in result["senders"]) == sorted(s.name for s in SENDERS)
    for sender in result["senders"]:
        assert (sender["status"], sender["sent"], sender["received"]) == ("ok", COUNT + 1, COUNT + 1)


@pytest.mark.parametrize("profile", daemon_params())
def test_every_message_arrives_once_in_its_file(bench, profile: str) -> None:
    run = bench(profile)
    result = run.result
    check_every_message_counted(run)

    # The files themselves, read independently of the watcher's reconciliation.
    daemon = profiles.resolve(profile).daemon
    if daemon == "baseline":
        check_plain_file(run.logs)
    else:
        check_split_files(run.logs, daemon)
    check_done_log(run.logs)

    # The daemon was stopped by the watcher, and figures were measured.
    assert result["daemon"]["stopped"] is True
    assert result["daemon"]["exit_code"] == 0
    assert all(c["State"] == "exited" for c in run.containers), run.containers
    assert result["cpu"]["total_s"] > 0
    # user and system come in 10 ms ticks (cpuacct.stat, cpu.stat is finer): 8,004 messages can fit inside
    # one tick of either (a run of the suite saw rsyslog at 0.0 s user), so only their sum must show. The
    # baseline can finish inside one tick of both.
    if daemon != "baseline":
        assert result["cpu"]["user_s"] + result["cpu"]["system_s"] > 0
    assert result["memory"]["peak_bytes"] > 0 and result["memory"]["max_rss_bytes"] > 0
    assert result["elapsed_s"] > 0 and result["throughput"]["msgs_per_s"] > 0
    assert profiles.resolve(profile).version in result["daemon"]["version"]
    assert result["sender_bound"]["value"] is not None
    check_harness(result)


def check_harness(result: dict) -> None:
    """Every harness container reported its own CPU in the measured window, and the share follows from them."""
    cpu = result["harness"]["cpu"]
    assert sorted(cpu["generators_s"]) == [f"host{h}" for h in range(1, HOSTS + 1)]
    parts = [cpu["watcher_s"], cpu["last_hop_s"], *cpu["generators_s"].values()]
    assert all(part > 0 for part in parts), cpu
    assert cpu["total_s"] == pytest.approx(sum(parts), abs=1e-5)  # each part rounded to 1 us
    assert cpu["daemon_s"] == result["cpu"]["total_s"]
    assert result["harness"]["cpu_share_of_daemon"] == round(cpu["total_s"] / cpu["daemon_s"], 6)


def check_plain_file(logs: dict[str, bytes], daemon: str = "baseline") -> None:
    name = f"test.{daemon}.all.log"
    assert set(logs) == {name, "done.log"}
    lines = bodies(logs[name])
    assert len(lines) == len(set(lines)) == EXPECTED
    assert set(lines) == {b for group in expected_lines().values() for b in group}


def check_split_files(logs: dict[str, bytes], daemon: str) -> None:
    pattern = re.compile(rf"^test\.{re.escape(daemon)}\.facility\.(\d+)\.severity\.(\d+)\.log$")
    split = {name: data for name, data in logs.items() if pattern.match(name)}
    assert set(logs) - set(split) == {"done.log"}
    found = {}
    for name, data in split.items():
        f, v = (int(x) for x in pattern.match(name).groups())
        found[(f, v)] = set(bodies(data))
        assert len(bodies(data)) == len(found[(f, v)]), f"duplicate lines in {name}"
    assert found == expected_lines()


def check_done_log(logs: dict[str, bytes]) -> None:
    done_lines = logs["done.log"].splitlines()
    assert len(done_lines) == len(SENDERS)
    assert all(b" DONE" in line for line in done_lines)
    assert sorted(bodies(logs["done.log"])) == sorted(
        b for lines in expected_lines().values() for b in lines if b.endswith(b"DONE")
    )


def test_lossy_daemon_is_reported_as_loss(bench) -> None:
    run = bench("rsyslog-8.2504", config=CONFIGS / "rsyslog-lossy.conf")
    result = run.result
    jsonschema.validate(result, SCHEMA)
    expected_lost = len(expected_lines_for_facility(23))
    assert result["verdict"] == "loss"
    assert run.code == 1
    assert result["messages"]["lost"] == expected_lost > 0
    assert result["messages"]["received"] == EXPECTED - expected_lost


def expected_lines_for_facility(facility: int) -> list[bytes]:
    return [b for (f, _), lines in expected_lines().items() if f == facility for b in lines]


def test_missing_done_is_a_timeout_naming_the_senders(bench) -> None:
    run = bench(
        "rsyslog-8.2504", {"RUN_TIMEOUT": "8", "KEEP_LOGS": "0"}, config=CONFIGS / "rsyslog-no-done.conf"
    )
    result = run.result
    jsonschema.validate(result, SCHEMA)
    assert result["verdict"] == "timeout"
    assert run.code == 5
    error = " ".join(result["errors"])
    for sender in SENDERS:
        assert sender.name in error
    assert result["daemon"]["stopped"] is True
    assert all(c["State"] == "exited" for c in run.containers), run.containers


def test_plain_up_ends_by_itself_and_removes_the_logs(bench) -> None:
    """`docker compose --profile X up`, without --exit-code-from: every container exits when the run ends."""
    run = bench("syslog-ng-3.38", {"KEEP_LOGS": "0"}, abort_on_exit=False)
    assert run.code == 0
    assert run.result["verdict"] == "pass"
    assert {c["State"] for c in run.containers} == {"exited"}
    assert {c["ExitCode"] for c in run.containers} == {0}
    assert run.logs == {}, "KEEP_LOGS=0 must remove the test files and done.log"


def syntax_check(service: profiles.Profile, config: str) -> list[str]:
    """The daemon's own check of a config file, started as the profile starts the daemon (rsyslog 5: -c5)."""
    return {
        "rsyslog": ["rsyslogd", *(["-c5"] if "-c5" in service.command else []), "-N1", "-f", config],
        "syslog-ng": ["syslog-ng", "--syntax-only", "-f", config],
        "nxlog": ["nxlog", "-v", "-c", config],
        "baseline": ["python3", "-m", "py_compile", config],
    }[service.daemon]


@pytest.mark.parametrize("profile", daemon_params())
def test_daemon_accepts_every_config_rendered_for_it(built, profile: str, tmp_path: Path) -> None:
    """The daemon's own syntax check on every config this project rendered for it, in one container.

    TLS configs name the run's certificate files, which the check opens: a throwaway set is mounted there.
    """
    service = profiles.resolve(profile)
    if "template" not in service.config:
        configs = [f"/etc/syslogbench/{service.config['file']}"]
    else:
        configs = [  # every tuning's: the package's defaults and the tuned settings (docs/tuning.md)
            f"/etc/syslogbench/{p.parent.name}/{p.stem}.conf"
            for folder in contract.TUNING_FOLDERS.values()
            for p in sorted((service.folder / folder).glob("*.conf"))
        ]
    tlscerts.generate(tmp_path / "tls")
    os.chmod(tmp_path / "tls" / "server.key", 0o644)  # the daemon in the container runs as root anyway
    script = "; ".join(
        f"{shlex.join(syntax_check(service, config))} >/tmp/out 2>&1 || {{ echo FAILED {config}; cat /tmp/out; exit 1; }}"
        for config in configs
    )
    tls = ["-v", f"{tmp_path / 'tls'}:/bench/control/tls:ro"]
    argv = ["docker", "run", "--rm", *APART, "--network", "none", *tls, "--entrypoint", "sh", service.image]
    done = subprocess.run([*argv, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_bad_settings_stop_before_any_container(built) -> None:
    for args in (
        ["HOSTS=-2"],
        ["MESSAGES_PER_SENDER=lots"],
        ["CENTRAL_MEM=2 gigs"],
        ["--profile", "rsyslog9"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "syslogbench", "run", "--results", "/tmp/none", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2
        assert "error:" in done.stdout
        assert "Container" not in done.stdout + done.stderr
