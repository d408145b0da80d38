"""`run --config`: a user's own config on real rsyslog and syslog-ng, every message accounted in whatever file
it landed, against the senders' own ledgers; and each bad config refused before any container starts."""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from syslogbench.host import benchmark, onehost, ownconfig, runplan
from syslogbench.model import messages
from syslogbench.model.messages import SenderId

from .conftest import PROJECT, ROOT, SMALL

pytestmark = pytest.mark.integration
CONFIGS = Path(__file__).parent / "configs"
EXAMPLES = ROOT / "examples"
HOSTS, PER_HOST, COUNT = (int(SMALL[key]) for key in ("HOSTS", "SENDERS_PER_HOST", "MESSAGES_PER_SENDER"))
SENDERS = [SenderId(h, s) for h in range(1, HOSTS + 1) for s in range(1, PER_HOST + 1)]
EXPECTED = len(SENDERS) * (COUNT + 1)
SEED = 2014
AUTH, MAIL, LOCAL6, LOCAL7 = 4, 2, 22, 23
# Debian trixie's rsyslog.conf: these facilities have a file of their own beside syslog.
OWN_FILE = {0: "kern.log", 1: "user.log", 2: "mail.log", 9: "cron.log"}


def facilities() -> Counter[int]:
    """Messages per facility over every sender, DONEs included, as the senders draw them."""
    counted: Counter[int] = Counter()
    for sender in SENDERS:
        stream = messages.pri_stream(SEED, sender)
        counted.update(next(stream) // messages.SEVERITIES for _ in range(COUNT + 1))
    return counted


def table(run) -> dict[str, dict]:
    return {entry["file"]: entry for entry in run.result["config"]["output_files"]}


def test_debian_default_rsyslog_passes_with_every_copy_counted(bench) -> None:
    config = ownconfig.load(EXAMPLES / "rsyslog-debian-trixie.conf", "rsyslog", {})
    run = bench("rsyslog-8.2504", user_config=config)
    m, block, files, by = run.result["messages"], run.result["config"], table(run), facilities()
    assert run.code == 0 and run.result["verdict"] == "pass", run.result["errors"] or m
    assert (m["sent"], m["received"], m["lost"], m["duplicated"]) == (EXPECTED, EXPECTED, 0, 0)
    assert run.result["end"]["trigger"] == "done-in-output"
    # Every mail.* message (and kern, user, cron) is in syslog and in its own file: copies, not duplicates.
    auth = by[AUTH] + by[10]
    assert files["mail.log"]["messages"] == by[MAIL] and files["mail.log"]["facilities"] == ["mail"]
    assert {name: files[name]["messages"] for name in OWN_FILE.values()} == {
        name: by[facility] for facility, name in OWN_FILE.items()
    }
    assert files["syslog"]["messages"] == EXPECTED - auth and files["auth.log"]["messages"] == auth
    copied = sum(by[facility] for facility in OWN_FILE)
    assert (block["copied"], block["copies"]) == (copied, copied)
    assert block["fanout"] == {"1": EXPECTED - copied, "2": copied}
    assert block["sha256"] and block["text"]["rsyslog-debian-trixie.conf"].startswith("# /etc/rsyslog.conf")
    assert block["not_counted"] == []


def test_a_dropped_facility_is_filtered_when_declared_and_lost_when_written_elsewhere(bench) -> None:
    """local7 is dropped, as EXPECT_DROPPED declares; local6 goes to /srv, outside /var/log: lost, named."""
    path = CONFIGS / "user-rsyslog-drop-local7.conf"
    config = ownconfig.load(path, "rsyslog", {"EXPECT_DROPPED": "local7.*"})
    run = bench("rsyslog-8.2504", user_config=config)
    m, block, by = run.result["messages"], run.result["config"], facilities()
    assert run.code == 1 and run.result["verdict"] == "loss", run.result["errors"]
    assert (m["filtered"], m["lost"], m["duplicated"]) == (by[LOCAL7], by[LOCAL6], 0)
    assert m["received"] == EXPECTED - by[LOCAL7] - by[LOCAL6]
    assert sum(block["lost_by_priority"].values()) == by[LOCAL6]
    assert all(name.startswith("local6.") for name in block["lost_by_priority"])
    assert block["not_counted"] == ["/srv/local6.log"]
    assert any("not counted" in note and "/srv/local6.log" in note for note in run.result["notes"])
    assert table(run)["all.log"]["messages"] == m["received"]


def test_syslog_ng_config_dropping_what_it_declares_passes(bench) -> None:
    path = CONFIGS / "user-syslog-ng-drop-local7.conf"
    config = ownconfig.load(path, "syslog-ng", {"EXPECT_DROPPED": "local7.*,local6.*"})
    run = bench("syslog-ng-4.8", user_config=config)
    m, block, by = run.result["messages"], run.result["config"], facilities()
    assert run.code == 0 and run.result["verdict"] == "pass", run.result["errors"] or m
    assert (m["filtered"], m["lost"], m["received"]) == (by[LOCAL7] + by[LOCAL6], 0, EXPECTED - m["filtered"])
    assert block["not_counted"] == ["/srv/local6.log"]  # dropped from the count as declared, still named


BAD = [
    ("rsyslog-8.2504", CONFIGS / "user-rsyslog-syntax-error.conf", r"rsyslogd -N1 refused the config: rsyslogd: error during parsing file \S+user-rsyslog-syntax-error.conf, on or before line 6"),
    ("rsyslog-8.2504", CONFIGS / "user-rsyslog-missing-module.conf", r"the image of rsyslog-8.2504 lacks a module the config loads: rsyslogd: could not load module 'omkafka'"),
    ("rsyslog-8.2504", CONFIGS / "user-rsyslog-other-port.conf", r'does not listen on 514/tcp.*it listens on 1514/tcp; add module\(load="imtcp"\) and input\(type="imtcp" port="514"\)'),
    ("rsyslog-8.2504", EXAMPLES / "syslog-ng-debian-trixie.conf", r"syslog-ng-debian-trixie.conf:1: .*--profile syslog-ng"),
    ("syslog-ng-4.8", CONFIGS / "user-syslog-ng-syntax-error.conf", r"--syntax-only refused the config: Error parsing destination statement, .* in \S+user-syslog-ng-syntax-error.conf:4:"),
    ("syslog-ng-4.8", CONFIGS / "user-syslog-ng-missing-module.conf", r"the image of syslog-ng-4.8 lacks the module of kafka\(\)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("profile", "path", "said"), BAD, ids=lambda v: v.name if isinstance(v, Path) else None
)
def test_a_bad_config_is_one_line_before_any_container(
    built, profile, path, said, tmp_path, monkeypatch
) -> None:
    """As `syslogbench run --config` calls it (the images are built once, by the `built` fixture); the command
    line turns the error into its one line and exit code 2 (tests/unit/test_userconfig.py)."""
    project = f"{PROJECT}-bad"
    monkeypatch.setenv("SYSLOGBENCH_PROJECT", project)
    with pytest.raises(ownconfig.UserConfigError) as refused:
        chosen = runplan.make(profile, dict(SMALL), onehost.OneHost(), (path, False))
        benchmark.run(chosen, tmp_path, runplan.RunOptions(benchmark.show_path, build=False))
    assert re.search(said, str(refused.value)) and "\n" not in str(refused.value), str(refused.value)
    started = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=com.docker.compose.project={project}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert started.stdout.strip() == ""
