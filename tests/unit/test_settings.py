"""Run settings: the committed .env, the scenario's load, overrides of its shape (a named variant), and one
clear message per bad value."""

from __future__ import annotations

from pathlib import Path

import pytest

from syslogbench.model import settings
from syslogbench.model.settings import SettingsError

ROOT = Path(__file__).resolve().parents[2]
ENV_FILE = ROOT / ".env"


def seed_env(**changes: str) -> dict[str, str]:
    """The committed .env as a mapping, with some keys changed."""
    env = settings.read_env_file(ENV_FILE)
    env.update(changes)
    return env


def problems_of(**changes: str) -> str:
    with pytest.raises(SettingsError) as error:
        settings.from_env(seed_env(**changes))
    return str(error.value)


def test_committed_env_gives_the_seed_scenario() -> None:
    cfg = settings.load(ENV_FILE, {})
    assert cfg.scenario == "seed2014"
    assert cfg.central_cpus == 8
    assert cfg.central_mem == 2 * 1024**3 == 2147483648
    assert cfg.remote_cpus == 2
    assert cfg.remote_mem == 512 * 1024**2
    assert cfg.hosts == 5
    assert cfg.senders_per_host == 4
    assert cfg.messages_per_sender == 300000
    assert cfg.senders == 20
    assert cfg.done_threshold == 20  # 0 in the scenario means every sender
    assert cfg.done_window == 60
    assert cfg.run_timeout == 900
    assert cfg.keep_logs is False
    assert cfg.seed == 2014
    assert cfg.expected_messages == 6000020
    assert cfg.variant == "default"


def test_env_file_holds_only_the_machine_the_scenario_id_and_the_tuning() -> None:
    assert set(settings.read_env_file(ENV_FILE)) == {
        "SCENARIO", "CENTRAL_CPUS", "CENTRAL_MEM", "REMOTE_CPUS", "REMOTE_MEM", "RUN_TIMEOUT", "KEEP_LOGS",
        "UDP_RCVBUF", "LEDGER_WAIT", "TUNING",
    }  # fmt: skip


def test_the_load_comes_from_the_scenario() -> None:
    cfg = settings.load(ENV_FILE, {"SCENARIO": "conn50"})
    assert (cfg.hosts, cfg.senders_per_host, cfg.messages_per_sender) == (5, 10, 120_000)
    assert (cfg.done_threshold, cfg.done_window, cfg.seed, cfg.variant) == (50, 60, 2014, "default")
    conn1 = settings.load(ENV_FILE, {"SCENARIO": "conn1"})
    assert (conn1.hosts, conn1.senders_per_host, conn1.messages_per_sender) == (1, 1, 6_000_000)
    assert conn1.done_threshold == 1


def test_a_shape_override_is_a_named_variant() -> None:
    cfg = settings.load(ENV_FILE, {"SCENARIO": "conn10", "HOSTS": "2", "MESSAGES_PER_SENDER": "1000"})
    assert (cfg.hosts, cfg.senders_per_host, cfg.messages_per_sender) == (2, 2, 1000)
    assert cfg.variant == "2x2x1000"
    assert cfg.done_threshold == 4  # 0 in the scenario: every sender of the variant
    # The scenario's own shape, set explicitly, is no variant.
    same = settings.load(ENV_FILE, {"HOSTS": "5", "SENDERS_PER_HOST": "4", "MESSAGES_PER_SENDER": "300000"})
    assert same.variant == "default"
    # Empty is unset, as compose passes an unset ${HOSTS:-}.
    assert settings.load(ENV_FILE, {"HOSTS": ""}).hosts == 5


def test_an_unknown_scenario_is_one_problem_naming_the_choices() -> None:
    message = problems_of(SCENARIO="nope")
    assert message.startswith("unknown scenario 'nope': set SCENARIO to one of ")
    assert "\n" not in message and "seed2014" in message


def test_a_made_up_scenario_needs_the_whole_load_from_the_environment() -> None:
    load = {"HOSTS": "1", "SENDERS_PER_HOST": "3", "MESSAGES_PER_SENDER": "10"}
    load |= {"DONE_THRESHOLD": "0", "DONE_WINDOW": "60", "SEED": "7"}
    cfg = settings.from_env(seed_env(SCENARIO="unit", **load))
    assert (cfg.senders, cfg.done_threshold, cfg.seed, cfg.variant) == (3, 3, 7, "1x3x10")


def test_as_dict_round_trips() -> None:
    cfg = settings.load(ENV_FILE, {})
    assert settings.Settings(**cfg.as_dict()) == cfg
    assert cfg.as_dict()["central_mem"] == 2147483648


def test_environment_overrides_env_file() -> None:
    cfg = settings.load(ENV_FILE, {"HOSTS": "2", "MESSAGES_PER_SENDER": "1000", "KEEP_LOGS": "1"})
    assert cfg.hosts == 2
    assert cfg.messages_per_sender == 1000
    assert cfg.keep_logs is True
    assert cfg.done_threshold == 8  # 0 still means all senders: 2 x 4
    assert cfg.expected_messages == 8 * 1001


def test_environment_ignores_keys_not_in_env_file(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    lines = [f"{key}={value}" for key, value in seed_env().items() if key != "RUN_TIMEOUT"]
    env_file.write_text("\n".join(lines) + "\n")
    # RUN_TIMEOUT is not in the file, so the shell's is not picked up; nor is a SEED, which is the scenario's.
    with pytest.raises(SettingsError, match="RUN_TIMEOUT is not set"):
        settings.load(env_file, {"RUN_TIMEOUT": "7", "PATH": "/usr/bin", "HOSTS": "3"})
    assert settings.load(ENV_FILE, {"SEED": "7", "DONE_WINDOW": "1"}) == settings.load(ENV_FILE, {})


def test_unrelated_environment_is_harmless() -> None:
    assert settings.load(ENV_FILE, {"PATH": "/usr/bin", "HOME": "/root"}) == settings.load(ENV_FILE, {})


def test_env_file_quotes_comments_and_blank_lines(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("# comment\n\n  HOSTS = 3 \nSCENARIO='quoted'\nSEED=\"5\"\n")
    assert settings.read_env_file(env_file) == {"HOSTS": "3", "SCENARIO": "quoted", "SEED": "5"}


@pytest.mark.parametrize(
    ("text", "size"),
    [("2g", 2147483648), ("512m", 536870912), ("6m", 6291456), ("64k", 65536), ("100", 100), ("7b", 7)],
)
def test_parse_size(text: str, size: int) -> None:
    assert settings.parse_size(text) == size


def test_negative_count() -> None:
    message = problems_of(MESSAGES_PER_SENDER="-5")
    assert "MESSAGES_PER_SENDER=-5 is below 1: use a value of at least 1" in message


def test_not_a_number() -> None:
    message = problems_of(HOSTS="five")
    assert message == "HOSTS='five' is not a whole number in ASCII digits: use e.g. HOSTS=1"


def test_bad_size() -> None:
    message = problems_of(CENTRAL_MEM="2 gigs")
    assert "CENTRAL_MEM='2 gigs' is not a size: use a number with b, k, m or g, e.g. 512m" in message


def test_size_below_docker_minimum() -> None:
    message = problems_of(REMOTE_MEM="5m")
    assert "REMOTE_MEM=5m is below Docker's minimum of 6m" in message
    assert "use at least 6m" in message
    assert settings.from_env(seed_env(REMOTE_MEM="6m")).remote_mem == 6 * 1024**2


def test_flag_must_be_0_or_1() -> None:
    message = problems_of(KEEP_LOGS="2")
    assert "KEEP_LOGS='2' must be 0 or 1" in message


@pytest.mark.parametrize("key", ["REMOTE_CPUS", "CENTRAL_MEM", "KEEP_LOGS", "SCENARIO"])
def test_empty_value_is_reported_once(key: str) -> None:
    message = problems_of(**{key: ""})
    assert message == f"{key} is not set: add it to .env (see the comments there)"


def test_missing_key() -> None:
    env = seed_env()
    del env["RUN_TIMEOUT"]
    with pytest.raises(SettingsError, match="RUN_TIMEOUT is not set: add it to .env"):
        settings.from_env(env)


def test_bad_scenario_name() -> None:
    message = problems_of(SCENARIO="my scenario")
    assert "SCENARIO='my scenario' may hold only letters, digits" in message


def test_done_threshold_above_senders() -> None:
    """A test may set the DONE rule directly; the command line and compose do not pass it on."""
    message = problems_of(DONE_THRESHOLD="21")
    assert "DONE_THRESHOLD=21 exceeds the 20 senders" in message
    assert "lower it, or use 0 for all senders" in message


def test_done_threshold_equal_to_senders_is_fine() -> None:
    assert settings.from_env(seed_env(DONE_THRESHOLD="20")).done_threshold == 20
    assert settings.from_env(seed_env(DONE_THRESHOLD="7")).done_threshold == 7


@pytest.mark.parametrize("hosts", ["-5", "five"])
def test_bad_hosts_does_not_add_a_misleading_threshold_problem(hosts: str) -> None:
    message = problems_of(HOSTS=hosts, DONE_THRESHOLD="10")
    assert "HOSTS" in message
    assert "exceeds" not in message
    assert "\n" not in message


def test_all_problems_are_listed_in_one_error() -> None:
    bad = {"MESSAGES_PER_SENDER": "-5", "HOSTS": "five", "CENTRAL_MEM": "2 gigs", "KEEP_LOGS": "2"}
    bad["RUN_TIMEOUT"] = ""
    message = problems_of(**bad)
    assert message.startswith("invalid settings:\n  - ")
    items = message.split("\n  - ")[1:]
    assert len(items) == 5
    for key in ("MESSAGES_PER_SENDER", "HOSTS", "CENTRAL_MEM", "KEEP_LOGS", "RUN_TIMEOUT"):
        assert sum(item.startswith(key) for item in items) == 1, key


def test_malformed_env_line_names_file_and_line(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("# settings\nCENTRAL_CPUS=8\nREMOTE_CPUS 2\n")
    with pytest.raises(SettingsError) as error:
        settings.load(env_file, {})
    assert str(error.value) == (
        f"{env_file}:3: key cannot contain a space: 'REMOTE_CPUS 2': write KEY=VALUE, e.g. HOSTS=5"
    )


# --- .env as docker compose reads it ---------------------------------------------------------------------------
# Each row was checked with docker compose 2.26.1: `docker compose --env-file F config` on a compose file that
# prints [${A-unset}], [${B-unset}] and [${C-unset}].
COMPOSE_READS = [
    ("export A=5\n", {"A": "5"}),
    ("export  A=5\n", {"A": "5"}),
    ("exportA=5\n", {"exportA": "5"}),
    ("A=5 # five\n", {"A": "5"}),
    ("A=5 #five\n", {"A": "5"}),
    ("A=5# five\n", {"A": "5# five"}),
    ("A=5\t# five\n", {"A": "5\t# five"}),
    ("A=a#b\n", {"A": "a#b"}),
    ('A="5 # five"\n', {"A": "5 # five"}),
    ("A='5 # x'\n", {"A": "5 # x"}),
    ('A = "x" # c\n', {"A": "x"}),
    ('A="5"x\n', {"A": "5"}),
    ("A='x'y\n", {"A": "x"}),
    ('A=" 5 "\n', {"A": " 5 "}),
    ('A= "5"\n', {"A": "5"}),
    ("A = 5 \n", {"A": "5"}),
    ("  A=5\n", {"A": "5"}),
    ("A: 5\n", {"A": "5"}),
    ("A=5\r\n", {"A": "5"}),
    ("\ufeffA=5\n", {"A": "5"}),
    ("# c\n\nA=5\n", {"A": "5"}),
    ("A=\n", {"A": ""}),
    ("A\n", {}),
    ("A=5\nA=6\n", {"A": "6"}),
    ('A="a\\nb"\n', {"A": "a\nb"}),
    ("A='a\\nb'\n", {"A": "a\\nb"}),
    ('A="a\\tb"\n', {"A": "a\tb"}),
    ("A=a\\tb\n", {"A": "a\\tb"}),
    ('A="x\\"y"\n', {"A": 'x"y'}),
    ('C=1\nA="5\nB=2"\n', {"C": "1", "A": "5\nB=2"}),
    ("A=${B}\nB=2\n", {"A": "", "B": "2"}),
    ("B=2\nA=${B}x\n", {"B": "2", "A": "2x"}),
    ("B=2\nA=$B\n", {"B": "2", "A": "2"}),
    ("B=2\nA='$B'\n", {"B": "2", "A": "$B"}),
    ('A="\\$B"\n', {"A": "$B"}),
    ("A=$$B\n", {"A": "$B"}),
    ("A=$\n", {"A": "$"}),
    ("A=$1\n", {"A": "$1"}),
    ("A=${B:-x}y\n", {"A": "xy"}),
    ("A=${B-x}\n", {"A": "x"}),
    ("B=\nA=${B-x}/${B:-y}\n", {"B": "", "A": "/y"}),
    ("A=５\n", {"A": "５"}),  # compose passes it on; the settings refuse it (test_unicode_digits_are_refused)
]


@pytest.mark.parametrize(("text", "values"), COMPOSE_READS)
def test_env_file_is_read_as_compose_reads_it(tmp_path: Path, text: str, values: dict[str, str]) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(text)
    assert settings.read_env_file(env_file, {}) == values


def test_env_file_takes_variables_and_bare_keys_from_the_environment(tmp_path: Path) -> None:
    """compose: the shell's value wins over the file's in a reference, and a bare KEY is the shell's."""
    env_file = tmp_path / ".env"
    env_file.write_text("A=5\nB=$A\nC=${D}\nE\nF\n")
    assert settings.read_env_file(env_file, {"A": "7", "D": "9", "E": "3"}) == {
        "A": "5",
        "B": "7",
        "C": "9",
        "E": "3",
    }


# What compose 2.26 refuses, refused here too; the line is the one where the statement starts (compose names
# the line after an unclosed quote's end of file).
COMPOSE_REFUSES = [
    ('HOSTS="5\n', '1: unterminated quoted value "5: close the quote (") or remove it'),
    ("C=1\nA='5\n", "2: unterminated quoted value '5: close the quote (') or remove it"),
    ('A=1\nHOSTS="5\nB=2\n\n', '2: unterminated quoted value "5: close the quote (") or remove it'),
    ("A 5\n", "1: key cannot contain a space: 'A 5': write KEY=VALUE, e.g. HOSTS=5"),
    ("=5\n", "1: no key before '=': write KEY=VALUE, e.g. HOSTS=5"),
    ("A=${\n", "1: invalid ${...} in '${': close the brace, or write $$ for a $"),
    ("A=${C:?boom}\n", "1: required variable C is missing a value: boom"),
]


@pytest.mark.parametrize(("text", "message"), COMPOSE_REFUSES)
def test_env_file_refuses_what_compose_refuses(tmp_path: Path, text: str, message: str) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(text)
    with pytest.raises(SettingsError) as error:
        settings.read_env_file(env_file, {})
    assert str(error.value) == f"{env_file}:{message}"


def test_env_file_missing_or_not_utf8(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    with pytest.raises(SettingsError) as error:
        settings.read_env_file(env_file)
    assert str(error.value) == f"{env_file}: not found: restore it (`git checkout .env`) or create it"
    env_file.write_bytes(b"# caf\xc3\xa9 is fine\nSCENARIO=seed2014\nHOSTS=\xff5\n")
    with pytest.raises(SettingsError) as error:
        settings.read_env_file(env_file)
    assert str(error.value) == f"{env_file}:3: not UTF-8 (byte 0xff): save the file as UTF-8"


@pytest.mark.parametrize("key", ["HOSTS", "RUN_TIMEOUT", "CENTRAL_CPUS"])
def test_unicode_digits_are_not_numbers(key: str) -> None:
    assert problems_of(**{key: "５"}) == f"{key}='５' is not a whole number in ASCII digits: use e.g. {key}=1"
    assert problems_of(**{key: "٣"}) == f"{key}='٣' is not a whole number in ASCII digits: use e.g. {key}=1"


def test_unicode_digits_are_not_sizes() -> None:
    assert problems_of(REMOTE_MEM="５１２m") == (
        "REMOTE_MEM='５１２m' is not a size: use a number with b, k, m or g, e.g. 512m"
    )


def test_run_timeout_has_a_ceiling() -> None:
    assert settings.MAX_RUN_TIMEOUT == 6360
    assert settings.from_env(seed_env(RUN_TIMEOUT="6360")).run_timeout == 6360
    assert problems_of(RUN_TIMEOUT="6361") == (
        "RUN_TIMEOUT=6361 is above 6,360: the daemon's supervisor stops it MAX_LIFETIME=7200 s after it starts, "
        "and rendering and connecting may take 600 s of that, and the end of the run 240 s: use at most 6360"
    )


def test_ledger_wait_is_60_unless_set_lower() -> None:
    assert settings.from_env(seed_env()).ledger_wait == 60  # .env leaves it empty
    assert settings.from_env(seed_env(LEDGER_WAIT="5")).ledger_wait == 5
    assert problems_of(LEDGER_WAIT="0") == "LEDGER_WAIT=0 is below 1: use a value of at least 1"
    assert problems_of(LEDGER_WAIT="61") == "LEDGER_WAIT=61 is above 60: use at most 60"
    assert problems_of(LEDGER_WAIT="soon") == (
        "LEDGER_WAIT='soon' is not a whole number in ASCII digits: use e.g. LEDGER_WAIT=1"
    )
