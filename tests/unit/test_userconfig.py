"""`run --config`: a user's config refused before any container, and its output accounted file by file."""

from __future__ import annotations

import calendar
import json
from pathlib import Path

import pytest

from syslogbench.host import configcheck, configrun, families, ownconfig
from syslogbench.model import messages, result, userconfig
from syslogbench.model.ledger import Ledger
from syslogbench.model.messages import SEVERITIES, SenderId
from syslogbench.model.preprocess import Expectation
from syslogbench.rig import fanout
from syslogbench.rig.watcher import files as watcher_files
from syslogbench.rig.watcher import outputend

SEED = 2014
NOW = calendar.timegm((2026, 11, 25, 10, 0, 0))
COUNT = 200
PER_SENDER = COUNT + 1
SENDERS = [SenderId(1, 1), SenderId(1, 2), SenderId(2, 1)]
LOCAL7 = range(23 * SEVERITIES, 24 * SEVERITIES)
MAIL = 2
RSYSLOG = 'module(load="imtcp")\ninput(type="imtcp" port="514")\n*.* /var/log/all.log\n'
SYSLOG_NG = '@version: 4.8\nsource s { network(transport("tcp") port(514)); };\nlog { source(s); };\n'


# -- selectors -----------------------------------------------------------------------------------------------


def test_selectors_name_exact_priorities() -> None:
    assert userconfig.dropped_priorities("local7.*") == frozenset(LOCAL7)
    assert userconfig.dropped_priorities("*.debug") == frozenset(f * 8 + 7 for f in range(24))
    assert userconfig.dropped_priorities("mail.info; local7.=err") == {2 * 8 + 6, 23 * 8 + 3}
    assert userconfig.dropped_priorities("") == frozenset()
    assert userconfig.priority_name(23 * 8 + 6) == "local7.info"


@pytest.mark.parametrize("text", ["local7", "local9.*", "mail.loud", "mail.info:x"])
def test_bad_selectors_are_refused(text: str) -> None:
    with pytest.raises(userconfig.SelectorError, match="EXPECT_DROPPED"):
        userconfig.dropped_priorities(text)


# -- bad input: one line each, before any container ----------------------------------------------------------


def refused(path: Path, family: str = "rsyslog", options: dict[str, str] | None = None) -> str:
    with pytest.raises(ownconfig.UserConfigError) as caught:
        ownconfig.load(path, family, options or {})
    text = str(caught.value)
    assert "\n" not in text, text
    return text


def test_missing_path(tmp_path: Path) -> None:
    assert "not found" in refused(tmp_path / "nothing.conf")


def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "rsyslog.conf"
    path.write_text(RSYSLOG)
    path.chmod(0)
    try:
        if path.open("rb"):  # root reads anything: nothing to test
            pytest.skip("running as root")
    except PermissionError:
        assert "cannot be read (Permission denied)" in refused(path)
    finally:
        path.chmod(0o644)


def test_directory_without_main_config(tmp_path: Path) -> None:
    (tmp_path / "other.conf").write_text(RSYSLOG)
    assert "a directory with no rsyslog.conf" in refused(tmp_path)
    assert "a directory with no syslog-ng.conf" in refused(tmp_path, "syslog-ng")


def test_binary_and_non_utf8_files(tmp_path: Path) -> None:
    binary, latin = tmp_path / "a.conf", tmp_path / "b.conf"
    binary.write_bytes(b"\x7fELF\x02\x01\x00\x00")
    latin.write_bytes(b"# ok\n# caf\xe9\n")
    assert "a binary file (a NUL byte at offset 6)" in refused(binary)
    assert refused(latin).endswith("b.conf:2: not UTF-8 (byte 0xe9): save the file as UTF-8")


def test_config_of_the_other_family(tmp_path: Path) -> None:
    ng, rs = tmp_path / "syslog-ng.conf", tmp_path / "rsyslog.conf"
    ng.write_text(SYSLOG_NG)
    rs.write_text(RSYSLOG)
    said = refused(ng, "rsyslog")
    assert "syslog-ng.conf:1:" in said and "--profile syslog-ng" in said, said
    said = refused(rs, "syslog-ng")
    assert "rsyslog.conf:1:" in said and "--profile rsyslog8" in said, said
    said = refused(rs, "baseline")
    assert "rsyslog or syslog-ng" in said and "--profile rsyslog8" in said, said


def test_bad_run_settings_are_listed(tmp_path: Path) -> None:
    path = tmp_path / "rsyslog.conf"
    path.write_text(RSYSLOG)
    with pytest.raises(ownconfig.UserConfigError) as caught:
        ownconfig.load(path, "rsyslog", {"EXPECT_DROPPED": "local9.*", "OUTPUT_QUIET": "soon"})
    assert "local9" in str(caught.value) and "OUTPUT_QUIET='soon'" in str(caught.value)
    with pytest.raises(ownconfig.UserConfigError, match="only for a run with --config"):
        ownconfig.refuse_without_config({"EXPECT_DROPPED": "local7.*"})
    assert ownconfig.split_settings({"HOSTS": "2", "EXPECT_DROPPED": "x"}) == (
        {"HOSTS": "2"},
        {"EXPECT_DROPPED": "x"},
    )


def test_a_directory_mirrors_the_family_config_directory(tmp_path: Path) -> None:
    (tmp_path / "rsyslog.d").mkdir()
    (tmp_path / "rsyslog.conf").write_text(RSYSLOG + "$IncludeConfig /etc/rsyslog.d/*.conf\n")
    (tmp_path / "rsyslog.d" / "mail.conf").write_text("mail.* /var/log/mail.log\n")
    cfg = ownconfig.load(tmp_path, "rsyslog", {"EXPECT_DROPPED": "local7.*"})
    assert cfg.main_target == "/etc/rsyslog.conf"
    assert sorted(target for _, target in cfg.mounts()) == ["/etc/rsyslog.conf", "/etc/rsyslog.d/mail.conf"]
    text = configrun.override_text(cfg, "rsyslog-8.2504", "seed2014")
    assert "volumes: !override" in text
    assert "target: /var/log, volume: {nocopy: true}" in text
    assert '"/etc/syslogbench/scenarios/seed2014.conf"' in text
    assert 'EXPECT_DROPPED: "local7.*"' in text and 'USER_CONFIG: "rsyslog.conf"' in text


def test_a_file_alone_is_the_main_config(tmp_path: Path) -> None:
    path = tmp_path / "mine.conf"
    path.write_text(SYSLOG_NG)
    cfg = ownconfig.load(path, "syslog-ng", {})
    assert cfg.mounts() == [(str(path), "/etc/syslog-ng/syslog-ng.conf")]
    assert cfg.main_name == "mine.conf"
    said = "Error parsing config, syntax error in /etc/syslog-ng/syslog-ng.conf:3:1-3:4:"
    assert configcheck.first_error(configcheck.user_paths(cfg, f"warning\n{said}\n")) == said.replace(
        "/etc/syslog-ng/syslog-ng.conf", str(path)
    )


def test_listening_reads_the_socket_tables() -> None:
    tables = (
        "tcp   0: 00000000:05EA 00000000:0000 0A 00000000:00000000\n"  # 1514/tcp listening
        "tcp6  1: 00000000000000000000000000000000:0202 00000000000000000000000000000000:0000 0A x\n"
        "udp   2: 00000000:0202 00000000:0000 07 00000000:00000000\n"
        "tcp   3: 0100007F:0202 0100007F:9C40 01 established, not listening\n"
    )
    assert configcheck.listening(tables) == {(1514, "tcp"), (514, "tcp"), (514, "udp")}


def test_writes_outside_keep_the_config_s_files_only(monkeypatch: pytest.MonkeyPatch) -> None:
    diff = "C /tmp\nA /tmp/final.status\nA /tmp/local7.log\nC /run\nA /run/rsyslogd.pid\nA /srv\nA /srv/out\nA /etc/syslogbench/active.conf\nA /var/lib/syslog-ng/syslog-ng.persist\n"

    class Done:
        stdout = diff

    monkeypatch.setattr(configrun.subprocess, "run", lambda *a, **k: Done())
    assert configrun.writes_outside("c", families.get("syslog-ng")) == ["/srv/out", "/tmp/local7.log"]


# -- the accounting --------------------------------------------------------------------------------------------


def daemon_line(line: bytes) -> bytes:
    match = messages.BODY_RE.search(line)
    return b"Nov 25 10:00:00 host%s bench[%s]: " % (match.group(1), match.group(2)) + line[match.start() :]


def debian_like(log_dir: Path, drop: set[int] = frozenset(), twice: int = 0) -> dict[str, int]:
    """As Debian's default rsyslog.conf: everything but auth/authpriv in syslog, mail also in mail.log;
    PRIs in drop nowhere; the first `twice` lines of syslog written twice. Returns mail messages written."""
    syslog, mail, auth = [], [], []
    for sender in SENDERS:
        for line in messages.render_lines(SEED, sender, COUNT, NOW):
            facility, severity = map(int, messages.BODY_RE.search(line).group(4, 5))
            if facility * 8 + severity in drop:
                continue
            (auth if facility in (4, 10) else syslog).append(daemon_line(line))
            if facility == MAIL:
                mail.append(daemon_line(line))
    log_dir.mkdir(exist_ok=True)
    (log_dir / "syslog").write_bytes(b"rsyslogd: start\n" + b"".join(syslog[:twice] + syslog))
    (log_dir / "mail.log").write_bytes(b"".join(mail))
    (log_dir / "auth.log").write_bytes(b"".join(auth))
    (log_dir / "done.log").write_bytes(b"")  # ours, left empty: not an output file
    return {"mail": len(mail), "syslog": len(syslog), "auth": len(auth)}


def ledgers() -> dict[str, Ledger]:
    return {s.name: Ledger(id=s.name, status="ok", messages=PER_SENDER, bytes=1) for s in SENDERS}


def account(log_dir: Path, dropped: frozenset[int] = frozenset()):
    return fanout.account(log_dir, ledgers(), SENDERS, PER_SENDER, Expectation(seed=SEED), dropped)


@pytest.mark.usefixtures("rig")
def test_copies_are_counted_per_file_and_are_no_error(tmp_path: Path) -> None:
    written = debian_like(tmp_path)
    counts, fan = account(tmp_path)
    total = len(SENDERS) * PER_SENDER
    assert (counts.total("received"), counts.total("lost"), counts.total("duplicated")) == (total, 0, 0)
    assert fanout.clean(counts)
    assert fan.copied == fan.copies == written["mail"] > 0
    assert fan.fanout == {"1": total - written["mail"], "2": written["mail"]}
    table = {f.file: f for f in fan.files}
    assert sorted(table) == ["auth.log", "mail.log", "syslog"]  # done.log, empty, is ours
    assert table["syslog"].lines == written["syslog"] + 1 and table["syslog"].messages == written["syslog"]
    assert table["mail.log"].facilities == ["mail"] and table["mail.log"].messages == written["mail"]
    assert set(table["auth.log"].facilities) == {"auth", "authpriv"}


@pytest.mark.usefixtures("rig")
def test_a_dropped_facility_is_loss_by_priority_unless_declared(tmp_path: Path) -> None:
    debian_like(tmp_path, drop=set(LOCAL7))
    local7 = sum(1 for s in SENDERS for pri in fanout.priorities(SEED, s, PER_SENDER)[1:] if pri in LOCAL7)
    counts, fan = account(tmp_path)
    assert counts.total("lost") == local7 > 0 and not fanout.clean(counts)
    assert sum(fan.lost_by_priority.values()) == local7
    assert all(name.startswith("local7.") for name in fan.lost_by_priority)
    counts, fan = account(tmp_path, userconfig.dropped_priorities("local7.*"))
    assert (counts.total("lost"), counts.total("filtered")) == (0, local7)
    assert fanout.clean(counts) and fan.lost_by_priority == {}


@pytest.mark.usefixtures("rig")
def test_twice_in_one_file_is_duplicated(tmp_path: Path) -> None:
    debian_like(tmp_path, twice=5)
    counts, _ = account(tmp_path)
    assert counts.total("duplicated") == 5 and not fanout.clean(counts)


@pytest.mark.usefixtures("rig")
def test_a_cut_line_is_truncated(tmp_path: Path) -> None:
    debian_like(tmp_path)
    with (tmp_path / "syslog").open("ab") as out:
        out.write(b"Nov 25 10:00:00 host1 bench[1]: syslogbench h=1 s=1 q=0000003 f=1 v=2 xx\n")
    counts, fan = account(tmp_path)
    assert counts.total("truncated") == 1 and counts.total("lost") == 0
    assert {f.file: f.truncated for f in fan.files}["syslog"] == 1


@pytest.mark.usefixtures("rig")
def test_the_result_block_round_trips(tmp_path: Path) -> None:
    config = tmp_path / "conf"
    config.mkdir()
    (config / "rsyslog.conf").write_text(RSYSLOG)
    block = fanout.config_block(userconfig.UserRun("rsyslog.conf", "local7.*"), config)
    assert block.files == [result.ConfigFile("rsyslog.conf", len(RSYSLOG))] and block.text == {
        "rsyslog.conf": RSYSLOG
    }
    assert fanout.config_block(userconfig.UserRun("rsyslog.conf", private=True), config).text is None
    debian_like(tmp_path / "logs")
    _, fan = account(tmp_path / "logs")
    fanout.fill(block, fan)
    again = result.load(result.UserConfig, json.loads(json.dumps(result.plain(block))))
    assert again == block


# -- the end of the run ------------------------------------------------------------------------------------


class Cfg:
    hosts, senders_per_host, senders = 2, 1, 2


def test_the_run_ends_on_every_done_in_any_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watcher_files.Ledgers, "update", lambda self: {})
    end = outputend.OutputEnd(tmp_path, Cfg(), 5, 30)  # type: ignore[arg-type]
    (tmp_path / "done.log").write_bytes(b"")
    end.update(1.0)
    assert not end.ended
    lines = [b"x syslogbench h=%d s=1 q=0000002 f=3 v=4 DONE\n" % h for h in (1, 2)]
    (tmp_path / "a.log").write_bytes(lines[0] + b"partial syslogbench h=2 s=1 q=0000002 f=3 v=4 DO")
    end.update(2.0)
    assert not end.ended
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.log").write_bytes(lines[1])
    end.update(3.0)
    assert end.trigger == "done-in-output" and end.last_done == 3.0


def test_no_output_and_quiet_output_end_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watcher_files.Ledgers, "update", lambda self: {"a": {}, "b": {}})
    silent = outputend.OutputEnd(tmp_path, Cfg(), 5, 30)  # type: ignore[arg-type]
    silent.update(29.0)
    assert not silent.ended
    silent.update(30.0)
    assert silent.trigger == "no-output" and "wrote no file under /var/log in 30 s" in silent.error
    quiet = outputend.OutputEnd(tmp_path, Cfg(), 5, 30)  # type: ignore[arg-type]
    (tmp_path / "a.log").write_bytes(b"x syslogbench h=1 s=1 q=0000002 f=3 v=4 DONE\n")
    quiet.update(1.0)
    quiet.update(5.9)
    assert not quiet.ended
    quiet.update(6.0)
    assert quiet.trigger == "output-quiet" and quiet.last_growth == 1.0


# -- the command line ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--config-private"], "--config-private is for --config PATH"),
        (["--swarm", "--config", "/nonexistent/x.conf"], "--config /nonexistent/x.conf: not found"),
        (["EXPECT_DROPPED=local7.*"], "EXPECT_DROPPED: only for a run with --config PATH"),
        (["--config", "/nonexistent/rsyslog.conf"], "--config /nonexistent/rsyslog.conf: not found"),
        (["--profile", "baseline", "--config", __file__], "--config needs a profile of rsyslog or syslog-ng"),
        (["--config", "/dev/null"], "--config /dev/null: neither a regular file nor a directory"),
    ],
)
def test_the_command_line_refuses_before_docker(args: list[str], said: str, capsys, monkeypatch) -> None:
    from syslogbench.host import cli

    monkeypatch.setattr(configrun.subprocess, "run", lambda *a, **k: pytest.fail("Docker was called"))
    assert cli.main(["run", *args]) == 2
    out = capsys.readouterr().out
    assert said in out and out.count("\n") == 1, out


EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.conf"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.name)
def test_every_example_is_text_of_its_family_and_listens_on_514(path: Path) -> None:
    """examples/README.md says where each came from; each is read as its family's and names a TCP listener."""
    family = "syslog-ng" if path.name.startswith("syslog-ng") else "rsyslog"
    cfg = ownconfig.load(path, family, {})
    record = families.get(family)
    assert cfg.main_target == f"{record.config_dir}/{record.main_config}"
    listener = (
        'input(type="imtcp" port="514"'
        if family == "rsyslog"
        else 'network(transport("tcp") port(514) max-connections(25))'
    )
    assert listener in path.read_text()
    assert path.name in (path.parent / "README.md").read_text()


def test_the_progress_counts_every_file_of_a_user_config(tmp_path: Path) -> None:
    from syslogbench.rig.watcher import files

    (tmp_path / "app").mkdir()
    (tmp_path / "syslog").write_bytes(b"a" * 99 + b"\n")
    (tmp_path / "app" / "events.log").write_bytes(b"b" * 49 + b"\n")
    assert files.OutputSize(tmp_path, line_sample=100, every_file=True).update() == 150
    assert files.OutputSize(tmp_path, line_sample=100).update() == 0  # our own split files only
