"""Run settings: the machine's from `.env` and the environment, the load from the scenario; validated
before any container starts.

The scenario (scenarios/<SCENARIO>.yaml) holds the load. HOSTS, SENDERS_PER_HOST and MESSAGES_PER_SENDER in
the environment override its shape, and the run is then recorded as a named variant ("2x2x2000"). The
watcher and the generators import this inside their containers too (stdlib and the scenario's PyYAML).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from syslogbench import contract
from syslogbench.model import scenarios

# The shape of the load: the scenario's, unless the environment sets it (a variant).
SHAPE = ("HOSTS", "SENDERS_PER_HOST", "MESSAGES_PER_SENDER")
# The rest of the load, also the scenario's. Neither the command line nor compose passes these on (a
# different value is a different experiment: a new scenario id); the environment may still set them for
# a test or the calibration, which call from_env directly.
RULES = ("DONE_THRESHOLD", "DONE_WINDOW", "SEED")
# The keys `.env` holds (each read by from_env), and IMAGE_TAG, which compose reads: a key of `.env` that is
# none of these, nor of SHAPE, is a mistyped one, refused as the same key on the command line is.
ENV_KEYS = ("SCENARIO", "CENTRAL_CPUS", "CENTRAL_MEM", "REMOTE_CPUS", "REMOTE_MEM", "RUN_TIMEOUT", "LEDGER_WAIT",
            "KEEP_LOGS", "UDP_RCVBUF", "TUNING", "IMAGE_TAG")  # fmt: skip
DEFAULT_VARIANT = "default"
# TUNING: the daemon at its package's defaults, or at the settings its maintainers recommend for throughput
# (daemons/_families/<family>.yaml, knobs:; host/tuning.py).
TUNINGS = ("default", "tuned")
DEFAULT_TUNING = "default"  # the load's shape is the scenario's own (else variant_name)
SIZE_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
MIN_MEMORY = 6 * 1024**2  # Docker refuses memory limits below 6 MiB.
# UDP_RCVBUF: imudp refuses a rcvbufSize above 1 GiB (and uses the default instead); below a page the
# kernel gives its own minimum anyway.
UDP_RCVBUF_RANGE = (4096, 1024**3)
# LEDGER_WAIT: how long the watcher waits, once the run has ended, for the ledgers of senders that have not
# reported (a sender whose generator lost its network never will); unset, the most.
LEDGER_WAIT_RANGE = (1, 60)
# Rendering the messages and connecting, before the start signal: `run` allows this on top of RUN_TIMEOUT.
START_ALLOWANCE_S = 600
# After compose: the engine's events, `docker ps` and `inspect`, and `down` (host/benchmark.py, worst_case_s).
END_ALLOWANCE_S = 240
# The daemon's supervisor (and the last hop) stop MAX_LIFETIME seconds after they start, whatever happens, so
# a run given longer could never end in its own verdict: the whole run, start and end included, stays within
# it. (A RUN_TIMEOUT of 10,000,000,000,000 s also overflowed the senders' socket timeout.)
MAX_RUN_TIMEOUT = int(contract.SUPERVISOR_ENV["MAX_LIFETIME"] or 0) - START_ALLOWANCE_S - END_ALLOWANCE_S
# The env file as compose reads it: blank lines and comments, then an optional `export`, the key, and
# `=` (or YAML's `:`); a key alone on its line is taken from the environment.
ENV_SKIP = re.compile(r"(?:\s+|#[^\n]*)*")
ENV_KEY = re.compile(r"(?:export[ \t]+)?(?P<key>[^=:\n]*)(?P<sep>[=:\n]?)")
ENV_GAP = re.compile(r"[ \t\r\v\f]*")
_REFERENCE = (
    r"(?P<dollar>\$\$)|\$(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<open>\{)(?:(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?P<op>:?[-?+])?(?P<word>[^}]*)\})?)"
)
ENV_EXPANSION = re.compile(_REFERENCE)
ENV_EXPANSION_ESCAPED = re.compile(r"(?P<escape>\\.)|" + _REFERENCE, re.DOTALL)
ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}
# The watcher reconciles in one byte per message of the run (the DONEs and an unused index 0 included) within
# its memory limit: no count of the load can be larger, whatever the others are (host/fits.py checks the
# product). Checked here first, so no later arithmetic meets a number of hundreds of digits.
MAX_COUNT = contract.WATCHER_MEM - contract.WATCHER_OWN_BYTES - 2
TALLY = f"the watcher reconciles in one byte per message within its {contract.WATCHER_MEM // 1024**2} MiB: "
# Why a maximum holds, said before "use at most ...".
MAXIMA = {
    **dict.fromkeys(SHAPE, TALLY),
    "RUN_TIMEOUT": (
        f"the daemon's supervisor stops it MAX_LIFETIME={contract.SUPERVISOR_ENV['MAX_LIFETIME']} s after it "
        f"starts, and rendering and connecting may take {START_ALLOWANCE_S} s of that, and the end of the run "
        f"{END_ALLOWANCE_S} s: "
    ),
}


class SettingsError(ValueError):
    """One or more settings are invalid; the message lists each and how to fix it."""


def items(error: Exception) -> list[str]:
    """The problems one error names: listed() puts several on lines of their own."""
    lines = str(error).splitlines()
    found = [line.removeprefix("  - ") for line in lines[1:] if line.startswith("  - ")]
    return found or [str(error)]


def listed(kind: str, problems: list[str]) -> str:
    """One problem is one line; several are listed under a heading, one line each."""
    if len(problems) == 1:
        return problems[0]
    return f"{kind}:\n  - " + "\n  - ".join(problems)


@dataclass(frozen=True)
class Settings:
    scenario: str
    central_cpus: int
    central_mem: int
    remote_cpus: int
    remote_mem: int
    hosts: int
    senders_per_host: int
    messages_per_sender: int
    done_threshold: int
    done_window: int
    run_timeout: int
    keep_logs: bool
    seed: int
    # "default" when the load's shape is the scenario's own, else "<hosts>x<senders_per_host>x<messages>".
    variant: str = DEFAULT_VARIANT
    # UDP_RCVBUF: the receive buffer, in bytes, a UDP listener asks of the kernel (rsyslog's rcvbufSize,
    # syslog-ng's so-rcvbuf()); None: not set, the kernel's default (net.core.rmem_default).
    udp_rcvbuf: int | None = None
    # LEDGER_WAIT: seconds the watcher waits after the run for the ledgers of senders that have not reported.
    ledger_wait: int = LEDGER_WAIT_RANGE[1]
    # TUNING: which of the profile's rendered configs runs (daemons/<profile>/scenarios/ or tuned/).
    tuning: str = DEFAULT_TUNING

    @property
    def senders(self) -> int:
        return self.hosts * self.senders_per_host

    @property
    def expected_messages(self) -> int:
        """Messages plus one DONE per sender."""
        return self.senders * (self.messages_per_sender + 1)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def env_file_problems(values: Mapping[str, str], where: str) -> list[str]:
    """A key of the env file that the scenario fixes, or that is no setting (with the nearest one)."""
    problems = []
    if fixed := sorted(set(values) & set(RULES)):
        problems.append(
            f"{where}: {', '.join(fixed)}: set by the scenario (scenarios/<SCENARIO>.yaml), not here: remove it"
        )
    for key in sorted(set(values) - {*ENV_KEYS, *SHAPE, *RULES}):
        near = difflib.get_close_matches(key, [*ENV_KEYS, *SHAPE], n=1)
        guess = f"did you mean {near[0]}? " if near else ""
        problems.append(
            f"{where}: {key} is not a setting: {guess}the keys are {', '.join([*ENV_KEYS, *SHAPE])}"
        )
    return problems


def read_env_file(path: Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """KEY=VALUE lines read the way docker compose 2.26 reads its env file (checked with
    `docker compose --env-file F config`): `export KEY=VALUE`, blank lines, `#` comments, ` #` inline
    comments after an unquoted value, single quotes (literal), double quotes (escapes and `${VAR}`), values
    over several lines inside quotes, `$VAR`/`${VAR:-default}` taken from the environment over the file,
    a bare KEY taken from the environment. What compose refuses is refused here, naming the file and line."""
    return EnvReader(str(path), env_text(path), environ or {}).read()


def env_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SettingsError(
            f"{path}: not found: restore it (`git checkout {path.name}`) or create it"
        ) from None
    except OSError as error:
        raise SettingsError(f"{path}: cannot be read ({error.strerror}): check its permissions") from None
    try:
        return data.decode("utf-8-sig")  # compose skips a byte order mark too
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise SettingsError(
            f"{path}:{line}: not UTF-8 (byte 0x{data[error.start]:02x}): save the file as UTF-8"
        ) from None


class EnvReader:
    """One pass over an env file's text; `values` holds what is read so far (later lines see it)."""

    def __init__(self, where: str, text: str, environ: Mapping[str, str]) -> None:
        self.where, self.text, self.environ = where, text, environ
        self.pos = 0
        self.values: dict[str, str] = {}

    @property
    def line(self) -> int:
        return self.text.count("\n", 0, self.pos) + 1

    def fail(self, line: int, text: str) -> SettingsError:
        return SettingsError(f"{self.where}:{line}: {text}")

    def read(self) -> dict[str, str]:
        while self.statement():
            pass
        return self.values

    def statement(self) -> bool:
        """Read the next KEY=VALUE (comments and blank lines skipped); False at the end."""
        self.pos = ENV_SKIP.match(self.text, self.pos).end()
        if self.pos >= len(self.text):
            return False
        line = self.line
        match = ENV_KEY.match(self.text, self.pos)
        self.pos = match.end()
        key, sep = match.group("key").strip(), match.group("sep")
        if re.search(r"\s", key):
            raise self.fail(line, f"key cannot contain a space: {key!r}: write KEY=VALUE, e.g. HOSTS=5")
        if not key:
            raise self.fail(line, "no key before '=': write KEY=VALUE, e.g. HOSTS=5")
        if sep in ("\n", ""):  # a bare KEY: compose takes it from the environment, if set there
            if key in self.environ:
                self.values[key] = self.environ[key]
            return True
        self.pos = ENV_GAP.match(self.text, self.pos).end()
        self.values[key] = (
            self.quoted(line) if self.text[self.pos : self.pos + 1] in ("'", '"') else self.plain()
        )
        return True

    def plain(self) -> str:
        end = self.text.find("\n", self.pos)
        end = len(self.text) if end < 0 else end
        value = self.text[self.pos : end].split(" #", 1)[0].rstrip()
        self.pos = end
        return self.expand(value, self.line)

    def quoted(self, line: int) -> str:
        quote = self.text[self.pos]
        closing = re.compile(rf"(?<!\\){quote}").search(self.text, self.pos + 1)
        if closing is None:
            opened = self.text[self.pos :].split("\n", 1)[0]
            raise self.fail(
                line, f"unterminated quoted value {opened}: close the quote ({quote}) or remove it"
            )
        value = self.text[self.pos + 1 : closing.start()]
        rest = self.text.find("\n", closing.end())  # compose ignores what follows the closing quote
        self.pos = len(self.text) if rest < 0 else rest
        if quote == "'":
            return value
        return self.expand(value, line, escapes=True)

    def lookup(self, name: str) -> str | None:
        return self.environ.get(name, self.values.get(name))

    def expand(self, value: str, line: int, escapes: bool = False) -> str:
        """`$$` is a `$`; `$NAME`, `${NAME}`, `${NAME:-default}` (and `-`, `:?`, `?`, `:+`, `+`) as in compose;
        in double quotes also \\n, \\r, \\t and an escaped quote, backslash or `$`."""

        def one(match: re.Match[str]) -> str:
            if escape := match.groupdict().get("escape"):
                return ESCAPES.get(escape[1], escape[1])
            if match.group("dollar"):
                return "$"
            if match.group("open") and match.group("braced") is None:
                raise self.fail(line, f"invalid ${{...}} in {value!r}: close the brace, or write $$ for a $")
            name = match.group("name") or match.group("braced")
            return self.substitute(name, match.group("op") or "", match.group("word") or "", line)

        pattern = ENV_EXPANSION_ESCAPED if escapes else ENV_EXPANSION
        return pattern.sub(one, value)

    def substitute(self, name: str, op: str, word: str, line: int) -> str:
        found = self.lookup(name)
        empty = found is None or (op.startswith(":") and found == "")
        if op in (":-", "-"):
            return word if empty else (found or "")
        if op in (":?", "?") and empty:
            raise self.fail(line, f"required variable {name} is missing a value: {word or 'set it'}")
        if op in (":+", "+"):
            return "" if empty else word
        return found or ""


def parse_size(text: str) -> int:
    # [0-9], not \d: Unicode digits ("５") would pass here and then fail in compose.
    match = re.fullmatch(r"([0-9]+)([bkmg]?)", text.strip().lower())
    if not match:
        raise ValueError(text)
    return int(match.group(1)) * SIZE_UNITS[match.group(2)]


# One number rule for every KEY=VALUE: ASCII digits, an optional sign and decimal fraction. Not float(): it
# takes 1e5, 1_000, "inf" and full-width digits, which compose and the daemons do not.
DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


def decimal(key: str, text: str) -> float:
    """A KEY=VALUE number by the rule above; SettingsError saying how to write it."""
    if not DECIMAL.fullmatch(text):
        raise SettingsError(
            f"{key}={shown(text)!r} is not a number in ASCII digits: write e.g. {key}=0.5 or {key}=1000"
        )
    return float(text)


def shown(value: str) -> str:
    """A value as an error line repeats it: a number of hundreds of digits by its length."""
    return value if len(value) <= 24 else f"{value[:8]}... ({len(value)} characters)"


class _Reader:
    """Collects every problem instead of stopping at the first, so one run of the check lists them all."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.problems: list[str] = []
        self.bad: set[str] = set()  # keys with a problem, so checks built on them can be skipped

    def problem(self, key: str, text: str) -> None:
        self.bad.add(key)
        self.problems.append(text)

    def raw(self, key: str) -> str | None:
        value = self.env.get(key)
        if value is None or value == "":
            self.problem(key, f"{key} is not set: add it to .env (see the comments there)")
            return None  # so the typed readers do not report the same key a second time
        return value

    def integer(self, key: str, minimum: int, maximum: int | None = None) -> int:
        value = self.raw(key)
        if value is None:
            return minimum
        # [0-9], not \d: Unicode digits ("５") would pass here and then fail in compose.
        if not re.fullmatch(r"-?[0-9]+", value):
            self.problem(
                key,
                f"{key}={value!r} is not a whole number in ASCII digits: use e.g. {key}={max(minimum, 1)}",
            )
            return minimum
        number = int(value)
        if number < minimum:
            self.problem(key, f"{key}={shown(value)} is below {minimum}: use a value of at least {minimum}")
        if maximum is not None and number > maximum:
            self.problem(
                key, f"{key}={shown(value)} is above {maximum:,}: {MAXIMA.get(key, '')}use at most {maximum}"
            )
        return number

    def size(self, key: str) -> int:
        value = self.raw(key)
        if value is None:
            return MIN_MEMORY
        try:
            size = parse_size(value)
        except ValueError:
            self.problem(key, f"{key}={value!r} is not a size: use a number with b, k, m or g, e.g. 512m")
            return MIN_MEMORY
        if size < MIN_MEMORY:
            self.problem(key, f"{key}={value} is below Docker's minimum of 6m: use at least 6m")
        return size

    def flag(self, key: str) -> bool:
        value = self.raw(key)
        if value not in (None, "0", "1"):
            self.problem(key, f"{key}={value!r} must be 0 or 1")
        return value == "1"

    def buffer(self, key: str) -> int | None:
        """A size in bytes (b, k, m, g as for memory), or None when not set (the kernel's default)."""
        value = self.env.get(key)
        if value in (None, ""):
            return None
        low, high = UDP_RCVBUF_RANGE
        try:
            size = parse_size(value)
        except ValueError:
            self.problem(
                key, f"{key}={value!r} is not a size: use bytes, or a number with k, m or g, e.g. 4m"
            )
            return None
        if not low <= size <= high:
            self.problem(key, f"{key}={value} is outside {low} bytes to 1g: use e.g. 4m, or leave it unset for "
                              "the kernel's default")  # fmt: skip
            return None
        return size

    def optional_integer(self, key: str, default: int, minimum: int, maximum: int) -> int:
        """A whole number between minimum and maximum, or the default when the key is not set."""
        if self.env.get(key) in (None, ""):
            return default
        return self.integer(key, minimum, maximum)

    def load_value(self, key: str, own: int, minimum: int, maximum: int | None = None) -> int:
        """The scenario's value (own), unless the environment sets the key."""
        if self.env.get(key) in (None, ""):
            return own
        return self.integer(key, minimum, maximum)

    def choice(self, key: str, allowed: tuple[str, ...], default: str) -> str:
        """One of allowed, or the default when the key is not set."""
        value = self.env.get(key)
        if value in (None, ""):
            return default
        if value not in allowed:
            self.problem(
                key, f"{key}={shown(value)!r} is not one of {', '.join(allowed)}: e.g. {key}={allowed[-1]}"
            )
            return default
        return value

    def name(self, key: str) -> str:
        value = self.raw(key) or ""
        if value and not re.fullmatch(r"[A-Za-z0-9._-]+", value):
            self.problem(key, f"{key}={value!r} may hold only letters, digits, '.', '_' and '-'")
        return value


def load_scenario(reader: _Reader, scenario_id: str) -> scenarios.Scenario | None:
    """The scenario whose load the settings take. When it cannot be loaded but the environment gives the
    whole load (a unit test's made-up id), the settings stand on the environment alone, and the scenario's
    own error is reported where the scenario is loaded (by the command line before any container, or in
    the watcher's result)."""
    if not scenario_id or "SCENARIO" in reader.bad:
        return None
    try:
        return scenarios.load(scenario_id)
    except scenarios.ScenarioError as error:
        if not all(reader.env.get(key) for key in (*SHAPE, *RULES)):
            reader.problem("SCENARIO", str(error))
        return None


def variant_name(hosts: int, senders_per_host: int, messages_per_sender: int) -> str:
    """A load shape that is not the scenario's own, by name (the result's scenario.variant)."""
    return f"{hosts}x{senders_per_host}x{messages_per_sender}"


def from_env(env: Mapping[str, str]) -> Settings:
    reader = _Reader(env)
    scenario_id = reader.name("SCENARIO")
    scenario = load_scenario(reader, scenario_id)
    own = {key.upper(): getattr(scenario, key) if scenario else 1 for key in scenarios.LOAD}
    settings = Settings(
        scenario=scenario_id,
        central_cpus=reader.integer("CENTRAL_CPUS", 1),
        central_mem=reader.size("CENTRAL_MEM"),
        remote_cpus=reader.integer("REMOTE_CPUS", 1),
        remote_mem=reader.size("REMOTE_MEM"),
        hosts=reader.load_value("HOSTS", own["HOSTS"], 1, MAX_COUNT),
        senders_per_host=reader.load_value("SENDERS_PER_HOST", own["SENDERS_PER_HOST"], 1, MAX_COUNT),
        messages_per_sender=reader.load_value(
            "MESSAGES_PER_SENDER", own["MESSAGES_PER_SENDER"], 1, MAX_COUNT
        ),
        done_threshold=reader.load_value("DONE_THRESHOLD", own["DONE_THRESHOLD"], 0),
        done_window=reader.load_value("DONE_WINDOW", own["DONE_WINDOW"], 1),
        run_timeout=reader.integer("RUN_TIMEOUT", 1, MAX_RUN_TIMEOUT),
        keep_logs=reader.flag("KEEP_LOGS"),
        seed=reader.load_value("SEED", own["SEED"], 0),
        udp_rcvbuf=reader.buffer("UDP_RCVBUF"),
        ledger_wait=reader.optional_integer("LEDGER_WAIT", LEDGER_WAIT_RANGE[1], *LEDGER_WAIT_RANGE),
        tuning=reader.choice("TUNING", TUNINGS, DEFAULT_TUNING),
    )
    # Only when its inputs are valid: a bad HOSTS would otherwise add a misleading second complaint.
    inputs_valid = not reader.bad & {"SCENARIO", "HOSTS", "SENDERS_PER_HOST", "DONE_THRESHOLD"}
    if inputs_valid and settings.done_threshold > settings.senders:
        reader.problems.append(
            f"DONE_THRESHOLD={settings.done_threshold} exceeds the {settings.senders} senders "
            "(HOSTS x SENDERS_PER_HOST), so it could never fire: lower it, or use 0 for all senders"
        )
    if reader.problems:
        raise SettingsError(listed("invalid settings", reader.problems))
    shape = (settings.hosts, settings.senders_per_host, settings.messages_per_sender)
    resolved = {
        "done_threshold": settings.done_threshold or settings.senders,
        "variant": DEFAULT_VARIANT if scenario and shape == scenario.shape else variant_name(*shape),
    }
    return Settings(**{**settings.as_dict(), **resolved})


def load(env_file: Path, environ: Mapping[str, str]) -> Settings:
    """Settings as compose sees them: the shell environment overrides `.env`, and may set the shape."""
    merged = read_env_file(env_file, environ) if env_file.exists() else {}
    merged.update({key: value for key, value in environ.items() if key in merged or key in SHAPE})
    return from_env(merged)
