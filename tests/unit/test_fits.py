"""Loads that cannot fit are refused before any container starts, each with one line saying what to change.

Docker is faked: the free space of its data root is given, and compose and the image builds must never be
reached. The committed .env (REMOTE_MEM=512m, RUN_TIMEOUT=900) and each scenario's own load are the start.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from syslogbench.contract import EXIT_CODES
from syslogbench.host import cli, compose, environment, fits, matrix, profiles, setup
from syslogbench.model import messages, scenarios, settings

GIB = 2**30
ROOT = Path(__file__).resolve().parents[2]
FREE = 76 * GIB  # what this machine's /var/lib/docker had free
PREFIX = "syslogbench: error: "
DOCKER_DISK = fits.docker_disk  # the real one, before the fixture fakes it


@pytest.fixture(autouse=True)
def no_docker(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The committed .env, no shell settings, 76 GiB free, and a record of anything that would start."""
    started: list[str] = []
    monkeypatch.setattr(environment, "ENV_FILE", ROOT / ".env")
    monkeypatch.setattr(environment, "docker_version", lambda: "test")
    monkeypatch.setattr(fits, "docker_disk", lambda: fits.Disk("/var/lib/docker", FREE))
    monkeypatch.setattr(setup, "setup", lambda names: started.append("setup"))
    monkeypatch.setattr(compose.Compose, "up", lambda *args, **kwargs: started.append("up"))
    monkeypatch.setattr(compose.Compose, "down", lambda *args, **kwargs: started.append("down"))
    for key in ("SCENARIO", "RUN_TIMEOUT", "REMOTE_MEM", "GENERATORS", *settings.SHAPE):
        monkeypatch.delenv(key, raising=False)
    return started


def refusal(argv: list[str], capsys: pytest.CaptureFixture[str], started: list[str], tmp_path: Path) -> str:
    """What `run` prints for these settings; it must exit 2 with nothing built or started."""
    results = tmp_path / "results"
    code = cli.main(["run", "--results", str(results), *argv])
    out = capsys.readouterr().out
    assert code == EXIT_CODES["bad-input"], out
    assert started == [], f"a container or build was started: {started}"
    assert not results.exists()
    assert out.startswith(PREFIX) and out.endswith("\n")
    return out[len(PREFIX) : -1]


def test_a_billion_messages_per_sender_are_refused_by_the_watcher_s_tally_first(
    capsys: pytest.CaptureFixture[str], no_docker: list[str], tmp_path: Path
) -> None:
    text = refusal(["--profile", "rsyslog8", "MESSAGES_PER_SENDER=1000000000"], capsys, no_docker, tmp_path)
    assert "MESSAGES_PER_SENDER=1000000000 is above 301,989,886" in text and "\n" not in text, text


def test_three_hundred_million_messages_per_sender_hit_the_watcher_and_disk_checks(
    capsys: pytest.CaptureFixture[str], no_docker: list[str], tmp_path: Path
) -> None:
    text = refusal(["--profile", "rsyslog8", "MESSAGES_PER_SENDER=300000000"], capsys, no_docker, tmp_path)
    lines = text.split("\n")
    assert lines[0] == "the load cannot fit:" and len(lines) == 3, text
    assert "watcher reconciles" in lines[1] and "use MESSAGES_PER_SENDER=15099492 or less" in lines[1], text
    assert "of rendered messages" in lines[2] and "use MESSAGES_PER_SENDER=20401093 or less" in lines[2], text


def test_ten_thousand_senders_per_host_do_not_fit_a_generator(
    capsys: pytest.CaptureFixture[str], no_docker: list[str], tmp_path: Path
) -> None:
    # HOSTS=1, so only the generator's memory is wrong here: 10,000 connections are also beyond rsyslog's 200.
    argv = ["--profile", "baseline", "HOSTS=1", "SENDERS_PER_HOST=10000", "MESSAGES_PER_SENDER=1000"]
    assert refusal(argv, capsys, no_docker, tmp_path) == (
        "SENDERS_PER_HOST=10000: each generator needs about 68.4 GiB (12 MiB, then 7 MiB per sender process), "
        "more than REMOTE_MEM=512.0 MiB: use SENDERS_PER_HOST=71 or less (and more HOSTS), or raise REMOTE_MEM"
    )


def test_ten_thousand_senders_on_rsyslog_list_each_problem_on_its_own_line(
    capsys: pytest.CaptureFixture[str], no_docker: list[str], tmp_path: Path
) -> None:
    text = refusal(["--profile", "rsyslog8", "SENDERS_PER_HOST=10000"], capsys, no_docker, tmp_path)
    assert text.split("\n") == [
        "the load cannot fit:",
        "  - HOSTS=5 x SENDERS_PER_HOST=10000 = 50000 connections, but rsyslog-8.2504 takes at most 200 "
        "(rsyslog's default of 200 TCP sessions): use at most 200 senders in all",
        "  - SENDERS_PER_HOST=10000: each generator needs about 68.4 GiB (12 MiB, then 7 MiB per sender "
        "process), more than REMOTE_MEM=512.0 MiB: use SENDERS_PER_HOST=71 or less (and more HOSTS), or "
        "raise REMOTE_MEM",
        "  - HOSTS=5 x SENDERS_PER_HOST=10000 x MESSAGES_PER_SENDER=300000: the watcher reconciles in one byte "
        "per message, 14.0 GiB beside its own 96.0 MiB, more than its memory limit of 384.0 MiB (compose.yaml): "
        "use MESSAGES_PER_SENDER=6037 or less, or fewer senders",
        "  - HOSTS=5 x SENDERS_PER_HOST=10000 x MESSAGES_PER_SENDER=300000 needs about 2.7 TiB on "
        "/var/lib/docker (1.4 TiB of rendered messages and as much output), which has 76.0 GiB free: use "
        "MESSAGES_PER_SENDER=8159 or less, fewer senders, or free space there",
    ]


def test_a_run_timeout_beyond_the_daemons_lifetime(
    capsys: pytest.CaptureFixture[str], no_docker: list[str], tmp_path: Path
) -> None:
    line = refusal(["--profile", "rsyslog8", "RUN_TIMEOUT=10000000000000"], capsys, no_docker, tmp_path)
    assert line == (
        "RUN_TIMEOUT=10000000000000 is above 6,360: the daemon's supervisor stops it MAX_LIFETIME=7200 s after "
        "it starts, and rendering and connecting may take 600 s of that, and the end of the run 240 s: use at most 6360"
    )
    assert (
        settings.from_env({**settings.read_env_file(ROOT / ".env"), "RUN_TIMEOUT": "6360"}).run_timeout
        == 6360
    )


def test_forty_connections_on_syslog_ng_which_takes_25(
    capsys: pytest.CaptureFixture[str], no_docker: list[str], tmp_path: Path
) -> None:
    line = refusal(["--profile", "syslog-ng", "HOSTS=10", "SENDERS_PER_HOST=4"], capsys, no_docker, tmp_path)
    assert line == (
        "HOSTS=10 x SENDERS_PER_HOST=4 = 40 connections, but syslog-ng-4.8 takes at most 25 "
        "(max-connections(25) in daemons/syslog-ng-4.8/scenarios/seed2014.conf): use at most 25 senders in all"
    )


def test_twenty_five_connections_on_syslog_ng_are_fine() -> None:
    cfg, _ = environment.run_env({"HOSTS": "5", "SENDERS_PER_HOST": "5"})
    seed = scenarios.load("seed2014")
    assert fits.problems(cfg, seed, profiles.resolve("syslog-ng"), fits.Disk("/d", FREE)) == []


def test_unicode_digits_are_refused(
    capsys: pytest.CaptureFixture[str], no_docker: list[str], tmp_path: Path
) -> None:
    line = refusal(["--profile", "rsyslog8", "HOSTS=５"], capsys, no_docker, tmp_path)
    assert line == "HOSTS='５' is not a whole number in ASCII digits: use e.g. HOSTS=1"


def test_conn200_with_three_hosts_is_not_200_connections(
    capsys: pytest.CaptureFixture[str], no_docker: list[str], tmp_path: Path
) -> None:
    line = refusal(["--profile", "syslog-ng", "SCENARIO=conn200", "HOSTS=3"], capsys, no_docker, tmp_path)
    assert line == (
        "scenario conn200 is about 200 connections, but HOSTS=3 x SENDERS_PER_HOST=40 = 120: keep the product "
        "at 200 (its own 5 x 40), or pick the conn* scenario of that count"
    )


def test_conn200_in_one_generator_does_not_fit_512m(
    capsys: pytest.CaptureFixture[str], no_docker: list[str], tmp_path: Path
) -> None:
    argv = ["--profile", "syslog-ng", "SCENARIO=conn200", "HOSTS=1", "SENDERS_PER_HOST=200"]
    assert refusal(argv, capsys, no_docker, tmp_path) == (
        "SENDERS_PER_HOST=200: each generator needs about 1.4 GiB (12 MiB, then 7 MiB per sender process), "
        "more than REMOTE_MEM=512.0 MiB: use SENDERS_PER_HOST=71 or less (and more HOSTS), or raise REMOTE_MEM"
    )


def test_udp_with_30m_messages_per_sender_needs_more_than_the_generator_has(
    capsys: pytest.CaptureFixture[str], no_docker: list[str], tmp_path: Path
) -> None:
    # All-out UDP (no rate) with 1 TiB free: the index each sender keeps and the watcher's tally are the
    # problems left...
    ample = fits.Disk("/var/lib/docker", 1024 * GIB)
    cfg, _ = environment.run_env({"SCENARIO": "udp-allout", "MESSAGES_PER_SENDER": "30000000"})
    found = fits.problems(cfg, scenarios.load("udp-allout"), profiles.resolve("rsyslog8"), ample)
    assert found == [
        "HOSTS=5 x SENDERS_PER_HOST=4 x MESSAGES_PER_SENDER=30000000: each generator needs about 1012.7 MiB "
        "(4 senders x (7 MiB + 8.5 bytes per message, the index a UDP or fixed-rate sender keeps)), more than "
        "REMOTE_MEM=512.0 MiB: use MESSAGES_PER_SENDER=14556701 or less, fewer SENDERS_PER_HOST, or raise "
        "REMOTE_MEM",
        "HOSTS=5 x SENDERS_PER_HOST=4 x MESSAGES_PER_SENDER=30000000: the watcher reconciles in one byte per "
        "message, 572.2 MiB beside its own 96.0 MiB, more than its memory limit of 384.0 MiB (compose.yaml): "
        "use MESSAGES_PER_SENDER=15099492 or less, or fewer senders",
    ]
    # ... and through the command line, the fixed-rate `udp` scenario: its rate and the disk say so too.
    text = refusal(
        ["--profile", "rsyslog8", "SCENARIO=udp", "MESSAGES_PER_SENDER=30000000"], capsys, no_docker, tmp_path
    )
    assert text.split("\n") == [
        "the load cannot fit:",
        f"  - {found[0]}",
        f"  - {found[1]}",
        "  - scenario udp sends 30,000,000 messages per sender at 1,000 msg/s, which takes 30,000 s, not less "
        "than RUN_TIMEOUT=900: lower MESSAGES_PER_SENDER below 900000, or raise RUN_TIMEOUT",
        "  - HOSTS=5 x SENDERS_PER_HOST=4 x MESSAGES_PER_SENDER=30000000 needs about 110.6 GiB on "
        "/var/lib/docker (55.3 GiB of rendered messages and as much output), which has 76.0 GiB free: use "
        "MESSAGES_PER_SENDER=20607165 or less, fewer senders, or free space there",
    ]


def test_the_largest_messages_in_memory_fit_exactly(tmp_path: Path) -> None:
    """The memory bound's own arithmetic: the most messages it allows fit, one more does not."""
    cfg, _ = environment.run_env({"SCENARIO": "udp-allout", "MESSAGES_PER_SENDER": "14556701"})
    assert fits.memory_problem(cfg, scenarios.load("udp-allout")) is None
    cfg, _ = environment.run_env({"SCENARIO": "udp-allout", "MESSAGES_PER_SENDER": "14556702"})
    assert fits.memory_problem(cfg, scenarios.load("udp-allout")) is not None


def test_the_largest_tally_fits_the_watcher_exactly() -> None:
    """The watcher bound's own arithmetic: the most messages it allows fit, one more does not."""
    cfg, _ = environment.run_env({"MESSAGES_PER_SENDER": "15099492"})
    assert fits.watcher_problem(cfg) is None
    cfg, _ = environment.run_env({"MESSAGES_PER_SENDER": "15099493"})
    assert fits.watcher_problem(cfg) is not None


def test_the_watchers_limit_is_the_one_compose_gives_it() -> None:
    watcher = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]["watcher"]
    assert settings.parse_size(watcher["mem_limit"]) == fits.WATCHER_MEM
    assert watcher["memswap_limit"] == watcher["mem_limit"]  # no swap: the peak is all in memory


def test_thirty_million_messages_on_the_baseline_fit() -> None:
    """The largest run of docs/measurement.md: 5 x 4 x 1,500,000, with this machine's free disk."""
    cfg, _ = environment.run_env({"HOSTS": "5", "SENDERS_PER_HOST": "4", "MESSAGES_PER_SENDER": "1500000"})
    scenario, profile = scenarios.load("seed2014"), profiles.resolve("baseline")
    assert fits.problems(cfg, scenario, profile, fits.Disk("/var/lib/docker", FREE)) == []


def udp_scenario(tmp_path: Path, message_bytes: int) -> scenarios.Scenario:
    text = (ROOT / "scenarios" / "udp-allout.yaml").read_text()
    path = tmp_path / "udp-big.yaml"
    path.write_text(
        text.replace("id: udp-allout", "id: udp-big").replace(
            "message_bytes: 100", f"message_bytes: {message_bytes}"
        )
    )
    return scenarios.load("udp-big", tmp_path)


def test_a_udp_message_bigger_than_a_datagram(tmp_path: Path) -> None:
    cfg, _ = environment.run_env({"MESSAGES_PER_SENDER": "10"})
    big = udp_scenario(tmp_path, 70_000)
    assert fits.problems(cfg, big, profiles.resolve("rsyslog8"), fits.Disk("/d", FREE)) == [
        "scenario udp-big: message_bytes 70000 makes UDP datagrams of 69,999 bytes, more than the 65,507 one "
        "datagram can carry over IPv4: use message_bytes of at most 65508 in a new scenario, or TCP"
    ]
    # The suggested size is the largest that fits: its datagram is exactly 65,507 bytes.
    largest = udp_scenario(tmp_path, 65_508)
    assert fits.message_size(cfg, largest) == fits.DATAGRAM_MAX
    assert fits.datagram_problem(cfg, largest) is None


def test_message_size_is_the_rendered_size() -> None:
    cfg, _ = environment.run_env({})
    seed = scenarios.load("seed2014")
    line = next(messages.render_lines(2014, messages.SenderId(5, 4), 300_000, 0.0, 100))
    assert fits.message_size(cfg, seed) == len(line) == 100


def test_every_committed_scenario_fits_every_profile_that_runs_it() -> None:
    """The defaults must never be refused: each scenario's own load, on each daemon that supports it."""
    refused = []
    for scenario in scenarios.all_scenarios():
        cfg, _ = environment.run_env({"SCENARIO": scenario.id})
        for profile in profiles.all_profiles():
            if not scenarios.unsupported(scenario, profile.features):
                found = fits.problems(cfg, scenario, profile, fits.Disk("/d", FREE))
                refused += [f"{profile.profile} {scenario.id}: {problem}" for problem in found]
    assert refused == []


def test_an_unreadable_disk_is_a_notice_not_a_failure(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        fits,
        "docker_disk",
        lambda: fits.Disk("Docker's data root", None, "docker info did not name it"),
    )
    assert cli.main(["check", "--profile", "baseline", "HOSTS=1"]) == 0
    assert (
        "syslogbench: notice: the free disk space on Docker's data root could not be checked "
        "(docker info did not name it)\n"
    ) in capsys.readouterr().out


def test_docker_disk_reads_the_data_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    class Done:
        returncode, stdout = 0, f"{tmp_path}\n"

    monkeypatch.setattr(fits.subprocess, "run", lambda *args, **kwargs: Done())
    disk = DOCKER_DISK()
    assert disk.root == str(tmp_path) and disk.free is not None and disk.free > 0
    Done.stdout = f"{tmp_path / 'gone'}\n"
    assert DOCKER_DISK() == fits.Disk(str(tmp_path / "gone"), None, "No such file or directory")
    Done.returncode, Done.stdout = 1, ""
    assert DOCKER_DISK() == fits.Disk("Docker's data root", None, "docker info did not name it")


def test_matrix_refuses_before_building_anything(
    capsys: pytest.CaptureFixture[str], no_docker: list[str], tmp_path: Path
) -> None:
    argv = ["matrix", "--profiles", "baseline,syslog-ng", "--results", str(tmp_path), "HOSTS=10"]
    assert cli.main(argv) == EXIT_CODES["bad-input"]
    assert capsys.readouterr().out == (
        f"{PREFIX}HOSTS=10 x SENDERS_PER_HOST=4 = 40 connections, but syslog-ng-4.8 takes at most 25 "
        "(max-connections(25) in daemons/syslog-ng-4.8/scenarios/seed2014.conf): use at most 25 senders in all\n"
    )
    assert no_docker == []
    assert matrix.done_cells(tmp_path, "m") == set()


def test_a_full_disk_says_to_free_space() -> None:
    cfg, _ = environment.run_env({})
    full = fits.Disk("/var/lib/docker", 100 * 2**20)
    assert fits.disk_problem(cfg, scenarios.load("seed2014"), full) == (
        "HOSTS=5 x SENDERS_PER_HOST=4 x MESSAGES_PER_SENDER=300000 needs about 1.1 GiB on /var/lib/docker "
        "(572.2 MiB of rendered messages and as much output), which has 100.0 MiB free: use "
        "MESSAGES_PER_SENDER=26213 or less, fewer senders, or free space there"
    )
    assert fits.disk_problem(cfg, scenarios.load("seed2014"), fits.Disk("/d", 1000)) == (
        "HOSTS=5 x SENDERS_PER_HOST=4 x MESSAGES_PER_SENDER=300000 needs about 1.1 GiB on /d (572.2 MiB of "
        "rendered messages and as much output), which has 1000 B free: free space there"
    )


def test_a_daemons_own_connection_limit_comes_from_its_manifest() -> None:
    """Family knowledge lives in the manifest: rsyslog's default_connections, none for the baseline."""
    seed = scenarios.load("seed2014")
    rsyslog = profiles.resolve("rsyslog8")
    assert fits.connection_limit(rsyslog, seed) == (200, "rsyslog's default of 200 TCP sessions")
    fewer = dataclasses.replace(rsyslog, default_connections=7)
    assert fits.connection_limit(fewer, seed) == (7, "rsyslog's default of 7 TCP sessions")
    assert fits.connection_limit(profiles.resolve("baseline"), seed) is None


def test_a_user_syslog_ng_config_with_no_limit_takes_syslog_ngs_default_of_10(
    capsys: pytest.CaptureFixture[str], no_docker: list[str], tmp_path: Path
) -> None:
    """Debian's default syslog-ng.conf with a bare network() source: 20 senders would have their connections
    refused by the daemon (seen at seed scale: broken pipes, verdict error). The example sets 25, as in 2014."""
    example = (ROOT / "examples" / "syslog-ng-debian-trixie.conf").read_text()
    bare = tmp_path / "syslog-ng.conf"
    bare.write_text(example.replace(" max-connections(25)", ""))
    assert bare.read_text() != example
    line = refusal(["--profile", "syslog-ng", "--config", str(bare)], capsys, no_docker, tmp_path)
    assert line == (
        "HOSTS=5 x SENDERS_PER_HOST=4 = 20 connections, but syslog-ng-4.8 takes at most 10 (syslog-ng's default "
        f"of 10: a listener in {bare} sets no max-connections()): set max-connections(20) in your config, or use "
        "at most 10 senders in all"
    )
    ours = environment.run_env({})[0], scenarios.load("seed2014"), profiles.resolve("syslog-ng")
    assert fits.connections_problem(*ours, [ROOT / "examples" / "syslog-ng-debian-trixie.conf"]) is None


def write(path: Path, text: str) -> list[Path]:
    path.write_text(text)
    return [path]


def test_a_user_configs_own_limit_is_read_from_its_listening_source(tmp_path: Path) -> None:
    """The TCP listener's max-connections() counts; a UDP source, a destination and comments do not."""
    seed, ng = scenarios.load("seed2014"), profiles.resolve("syslog-ng")
    files = write(
        tmp_path / "syslog-ng.conf",
        "@version: 4.8\n"
        '# source s_old { network(transport("tcp") port(514) max-connections(1)); };\n'
        'source s_net {\n  network(transport("udp") port(514) max-connections(2));\n'
        '  network(transport("tcp") port(514)\n    max_connections(30) flags(syslog-protocol));\n};\n'
        'destination d_fwd { network("10.0.0.1" port(514) max-connections(3)); };\n',
    )
    assert fits.connection_limit(ng, seed, files) == (30, f"max-connections(30) in {files[0]}")
    cfg, _ = environment.run_env({})
    assert fits.connections_problem(cfg, seed, ng, files) is None


def test_a_user_rsyslog_config_says_its_limit_as_max_sessions(tmp_path: Path) -> None:
    seed, rsyslog = scenarios.load("seed2014"), profiles.resolve("rsyslog8")
    cfg, _ = environment.run_env({})
    modern = write(
        tmp_path / "a.conf", 'module(load="imtcp" MaxSessions="8")\ninput(type="imtcp" port="514")\n'
    )
    assert fits.connections_problem(cfg, seed, rsyslog, modern) == (
        f'HOSTS=5 x SENDERS_PER_HOST=4 = 20 connections, but rsyslog-8.2504 takes at most 8 (MaxSessions="8" in '
        f'{modern[0]}): set MaxSessions="20" in your config, or use at most 8 senders in all'
    )
    legacy = write(tmp_path / "b.conf", "$ModLoad imtcp\n$InputTCPMaxSessions 12\n$InputTCPServerRun 514\n")
    assert fits.connection_limit(rsyslog, seed, legacy) == (12, f'MaxSessions="12" in {legacy[0]}')
    none = write(tmp_path / "c.conf", 'module(load="imtcp")\ninput(type="imtcp" port="514")\n')
    assert fits.connection_limit(rsyslog, seed, none) == (200, "rsyslog's default of 200 TCP sessions")
