"""The README stays short and leads with the two commands; every relative link in README and docs/ resolves,
every result id they cite is a committed result, and a figure quoted right beside a result id is that result's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from syslogbench.host import environment

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "findings").glob("*.md"))]
README_MAX_LINES = 200
COMMANDS_WITHIN = 40

# [text](target) and ![alt](target); the target ends at the first space or closing parenthesis.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) for each line outside fenced code blocks."""
    kept, inside = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line.strip()):
            inside = not inside
        elif not inside:
            kept.append((number, line))
    return kept


def prose(text: str) -> str:
    """The text without fenced code blocks, where brackets are code, not links."""
    return "\n".join(line for _, line in prose_lines(text))


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#{1,6}\s+(.+)$", prose(page.read_text()), re.M)
    return {anchor(h) for h in headings}


def relative_links(page: Path) -> list[str]:
    targets = LINK.findall(prose(page.read_text()))
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in relative_links(page):
        path_part, _, fragment = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target}: no heading #{fragment} in {dest.name}")
    return broken


def test_readme_is_at_most_200_lines():
    lines = len(README.read_text().splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines, at most {README_MAX_LINES}"


@pytest.mark.parametrize("command", ["make run", "make test"])
def test_readme_gives_the_two_commands_first(command):
    head = README.read_text().splitlines()[:COMMANDS_WITHIN]
    assert any(command in line for line in head), (
        f"`{command}` is not in README.md's first {COMMANDS_WITHIN} lines"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    assert relative_links(page), f"{page.name} links nowhere: the check would be empty"
    assert broken_links(page) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_text_speaks_of_the_project_not_of_who_did_the_work(page):
    hits = [
        n for n, line in enumerate(page.read_text().splitlines(), 1) if re.search(r"\bhelpers?\b", line, re.I)
    ]
    assert hits == [], f"{page.name} says 'helper' on lines {hits}"


def test_the_link_check_finds_a_broken_link(tmp_path):
    (tmp_path / "there.md").write_text("# A heading\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md#a-heading) [gone](missing.md) [bad anchor](there.md#nope) [web](https://example.org)\n"
        "```\n[in code](not-a-link.md)\n```\n"
    )
    assert broken_links(page) == ["missing.md: no such file", "there.md#nope: no heading #nope in there.md"]


# --- what the docs quote runs as they say ------------------------------------------------------------------------
# Every `python -m syslogbench ...` command of README, docs/ and .env is run up to the point where a container
# would start (the first Docker command, a build, the project's lock, or a file written outside tmp), and every
# KEY=VALUE setting they quote is checked. Each must exit as the text says: 0, or reach that point, unless listed
# here with the code the text gives it.
INLINE_COMMAND = re.compile(r"`(?:\.venv/bin/)?python -m syslogbench ([^`]+)`")
FENCED_COMMAND = re.compile(r"python -m syslogbench ((?:[a-z]+|--help)\b[^#\n]*)")
FENCED_BLOCK = re.compile(r"^```[a-z]*\n(.*?)^```", re.S | re.M)
QUOTED_SETTING = re.compile(r"`([A-Z_]+)=([^`\s<]+)`")
NO_CONTAINER = {"profiles", "check", "stack", "report", "--help"}
# The text says these are refused (exit 2) or n/a (exit 4).
SAID_TO_FAIL = {
    "check RUN_TIMEOUT=6361": 2,  # .env: RUN_TIMEOUT is at most 6360
    "HOSTS=５": 2,  # docs/running.md: numbers are ASCII digits
    # findings/capacity-python-rig.md: the capacity matrix before it was one comparison (2 replicates at least)
    "matrix --capacity --replicates 1 --profiles rsyslog-8.2102,rsyslog-8.2302,rsyslog-8.2504,syslog-ng-3.28,"
    "syslog-ng-3.38,syslog-ng-4.8,baseline SCENARIO=seed2014 HOSTS=1 SENDERS_PER_HOST=4 RATE_MAX=200000 "
    "REMOTE_MEM=1g": 2,
}
# A command's name quoted alone in prose, where its options are required: it names the command, it is not one.
NAMES_ONLY = {"matrix"}
# The files the docs' examples of --config name as the user's own.
USER_FILES = {
    "my.conf": "rsyslog-debian-trixie.conf",
    "my-rsyslog/rsyslog.conf": "rsyslog-debian-trixie.conf",
}


class WouldStart(BaseException):
    """The command reached the point where a container would start: it passed every check before."""


def commands_in(text: str) -> list[str]:
    """Commands in fenced blocks (a line each, `\\` continuing it) and in inline code (which may wrap)."""
    found = []
    for block in FENCED_BLOCK.findall(text):
        found += FENCED_COMMAND.findall(re.sub(r"\\\n\s*", " ", block))
    found += INLINE_COMMAND.findall(prose(text))
    return found


def quoted_commands() -> list[str]:
    found: set[str] = set()
    for page in [*PAGES, ROOT / ".env"]:
        for quoted in commands_in(page.read_text()):
            command = re.sub(r"\[[^\]]*\]", "", quoted.split(" #")[0])  # optional parts, e.g. [--json]
            command = " ".join(command.split())
            if not re.search(r"\.\.\.|<|\bP\b|──", command) and command not in NAMES_ONLY:
                found.add(command)
    return sorted(found)


def quoted_settings() -> list[str]:
    from syslogbench.model import settings

    known = {*settings.read_env_file(ROOT / ".env"), *settings.SHAPE}
    found = {f"{key}={value}" for page in PAGES for key, value in QUOTED_SETTING.findall(page.read_text())}
    return sorted(pair for pair in found if pair.split("=")[0] in known)


def test_the_docs_quote_commands_and_settings() -> None:
    """The scan finds what it is meant to: a change of wording must not leave the tests below empty."""
    commands = quoted_commands()
    assert {"profiles", "profiles --json", "check RUN_TIMEOUT=6361", "report --out results/report"} <= set(
        commands
    )
    assert "faults --runs 18 --seed 4242 --profiles " + "rsyslog-8.2102" in " ".join(
        commands
    )  # wrapped inline
    assert any(c.startswith("capacity --profile rsyslog8 --scenario tcp-rate") for c in commands)  # fenced
    assert {"KEEP_LOGS=1", "HOSTS=2", "HOSTS=５"} <= set(quoted_settings())


# A few committed results: the report's plots for all of results/ take minutes on a busy 2-core machine.
SAMPLE_RESULTS = [
    "20261122T093743Z-baseline.json",
    "20261122T093517Z-rsyslog-8.2504.json",
    "20261122T093656Z-syslog-ng-4.8.json",
]


def with_paths_in(command: str, tmp: Path) -> list[str]:
    """The command's words; what it would write goes under tmp, and the report reads a few committed results
    copied under tmp (the command's own --results, when it is a CI artifact, does not exist here)."""
    words = command.split()
    for option in ("--out", "--results"):
        if option in words and words[0] != "report":
            index = words.index(option) + 1
            words[index] = str(tmp / Path(words[index]).name)
    if "--out" in words and words[0] == "report":
        index = words.index("--out") + 1
        words[index] = str(tmp / Path(words[index]).name)
    if words[0] == "report":
        sample = tmp / "results"
        sample.mkdir()
        for name in SAMPLE_RESULTS:
            (sample / name).write_text((ROOT / "results" / name).read_text())
        if "--results" in words:
            index = words.index("--results")
            del words[index : index + 2]
        words += ["--results", str(sample)]
    return words


def user_files(tmp: Path) -> None:
    """The user's own configs the docs' examples name, and the examples/ they start from, under tmp."""
    (tmp / "examples").symlink_to(ROOT / "examples")
    for name, example in USER_FILES.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text((ROOT / "examples" / example).read_text())


def stop_before_containers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every way a command starts a container or changes the machine raises WouldStart; the engine's
    version and free disk are answered without it. Matplotlib's font cache is built first: on a machine
    without one its first import runs fc-list, which would be taken for a container (both report commands
    failed so on this session's first run)."""
    import subprocess

    import matplotlib.font_manager  # noqa: F401 - builds the font cache, with fc-list, before the patch

    from syslogbench.host import fits, lock, onehost, render

    def would_start(*a: object, **k: object) -> None:
        raise WouldStart

    monkeypatch.setattr(environment, "docker_version", lambda: "test")  # stack asks the engine's version
    monkeypatch.setattr(fits, "docker_disk", lambda: fits.Disk("/var/lib/docker", 100 * 2**30))
    for module, name in ((subprocess, "run"), (subprocess, "Popen"), (onehost, "setup"), (lock, "project"),
                         (render, "render_all")):  # fmt: skip
        monkeypatch.setattr(module, name, would_start)


@pytest.mark.parametrize("command", quoted_commands())
def test_each_quoted_command_runs_as_the_docs_say(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from syslogbench.host import cli
    from syslogbench.report import build as report

    user_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    words = with_paths_in(command, tmp_path)
    stop_before_containers(monkeypatch)
    try:
        code = cli.main(words, report=report.main)
    except SystemExit as done:  # --help
        code = int(done.code or 0)
    except WouldStart:
        code = 0 if words[0] not in NO_CONTAINER else -1
    said = capsys.readouterr()
    assert code == SAID_TO_FAIL.get(command, 0), f"{command}:\n{said.out[-2000:]}{said.err[-2000:]}"


@pytest.mark.parametrize("pair", quoted_settings())
def test_each_quoted_setting_is_checked_as_the_docs_say(
    pair: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from syslogbench.host import cli, fits

    monkeypatch.setattr(fits, "docker_disk", lambda: fits.Disk("/var/lib/docker", 100 * 2**30))
    code = cli.main(["check", pair])
    assert code == SAID_TO_FAIL.get(pair, 0), f"{pair}: {capsys.readouterr().out}"


def test_the_run_timeout_limit_in_env_is_the_one_check_applies() -> None:
    from syslogbench.model import settings

    limit = re.search(r"At most (\d+):", (ROOT / ".env").read_text())
    assert limit and int(limit.group(1)) == settings.MAX_RUN_TIMEOUT


def test_the_readme_exit_code_table_is_contract_meanings() -> None:
    from syslogbench.contract import EXIT_CODES, MEANINGS

    rows = re.findall(r"^\| (\d+) \| [^|]+ \| (.+) \|$", README.read_text(), re.M)
    assert {int(code): meaning for code, meaning in rows} == {
        EXIT_CODES[name]: meaning for name, meaning in MEANINGS.items()
    }


# --- every result id the docs cite is a committed result ---------------------------------------------------------
# A run's id (20261202T035323.212Z-rsyslog-8.2504-75c2; 20261122T093517Z-rsyslog-8.2504 before milliseconds) or a
# search's (20261127T174542.580Z-syslog-ng-4.8-b0ef-seed2014), wherever it is cited: bare, in a path, or as a file
# name that goes on past the id (.json, .jsonl, .result.json, .txt). It must name a file anywhere under results/:
# the id with its extension, or a name that ends with it after a prefix (before-<id>.json, core1-perf-<id>.txt).
RESULT_ID = re.compile(r"(?<![\w.])\d{8}T\d{6}(?:\.\d{3})?Z-[a-z0-9][a-z0-9.-]*[a-z0-9]")
# Cited, and never committed; the text beside each says so. A new id must be a committed result, not an entry here.
NOT_COMMITTED = {
    "20261126T212156.267Z-rsyslog-8.2504-d422",  # docs/findings/udp-receive-buffer.md: the socket check's runs
    "20261126T212240.181Z-syslog-ng-4.8-4910",  # the same
}


def result_names() -> set[str]:
    return {path.name for path in (ROOT / "results").rglob("*") if path.is_file()}


def committed(cited: str, names: set[str]) -> bool:
    return any(
        name == cited or name.startswith(cited + ".") or name.endswith(("-" + cited, "-" + cited + ".json"))
        for name in names
    )


def cited_result_ids() -> dict[str, list[str]]:
    cited: dict[str, list[str]] = {}
    for page in PAGES:
        for result_id in sorted(set(RESULT_ID.findall(page.read_text()))):
            cited.setdefault(result_id, []).append(str(page.relative_to(ROOT)))
    return cited


def test_every_result_id_the_docs_cite_is_a_committed_result() -> None:
    cited, names = cited_result_ids(), result_names()
    assert len(cited) > 100, f"only {len(cited)} result ids cited: the pattern no longer finds them"
    missing = [
        f"{', '.join(pages)}: {result_id}"
        for result_id, pages in sorted(cited.items())
        if result_id not in NOT_COMMITTED and not committed(result_id, names)
    ]
    assert missing == [], "cited, but no such result under results/:\n" + "\n".join(missing)


def test_the_ids_known_to_be_missing_are_still_cited_and_still_missing() -> None:
    """An entry of NOT_COMMITTED whose result was committed since, or that no page cites any longer, goes."""
    cited, names = cited_result_ids(), result_names()
    assert sorted(NOT_COMMITTED - set(cited)) == []
    assert sorted(result_id for result_id in NOT_COMMITTED if committed(result_id, names)) == []


def test_the_result_id_check_finds_a_typo() -> None:
    names = {
        "20261127T174542.580Z-syslog-ng-4.8-b0ef-seed2014.json",
        "before-20261124T053032Z-rsyslog-8.2504.json",
        "core1-perf-20261129T062250.255Z-syslog-ng-4.8-905a-udp.txt",
        "20261127T032420Z-rsyslog-8.2504-seed2014.jsonl",
    }
    text = (
        "`20261127T174542.580Z-syslog-ng-4.8-b0ef-seed2014` and [it](../results/capacity/"
        "20261127T174542.580Z-syslog-ng-4.8-b0ef-seed2014.json); `before-20261124T053032Z-rsyslog-8.2504`; "
        "[perf](core1-perf-20261129T062250.255Z-syslog-ng-4.8-905a-udp.txt); "
        "`20261127T032420Z-rsyslog-8.2504-seed2014`: a tag dropped, `20261127T174542.580Z-syslog-ng-4.8-b0ef`; "
        "a digit wrong, `20261127T174542.581Z-syslog-ng-4.8-b0ef-seed2014`"
    )
    found = RESULT_ID.findall(text)
    assert len(found) == 7
    assert [result_id for result_id in found if not committed(result_id, names)] == [
        "20261127T174542.580Z-syslog-ng-4.8-b0ef",
        "20261127T174542.581Z-syslog-ng-4.8-b0ef-seed2014",
    ]


# --- a short id the docs cite names one committed result ---------------------------------------------------------
# The findings mostly cite a result by the 4 hex digits of its id (before a search's scenario or a comparison's
# tags), and a matrix by its own id. Matched outside fenced code, with full result ids and link targets taken out:
#  - 4 hex digits in backticks: `9866`, `c841`;
#  - an elided id in backticks: `...-de57-udp` (the full id ends so), `...-eb14-...` (it holds -eb14-);
#  - in prose, outside inline code, a word of 4 hex digits with a letter and a digit, and the words of 4 hex digits
#    listed with it (", ", " and "): "comparison 99d0", "(c154 and 6455". A word of 4 digits alone
#    is a year, a port or a count, and is not taken for an id;
#  - 4 hex digits as a link's text: [d46e](../../results/rig/trials/<full id>.json) names the result it links to;
#  - a matrix id, "ma" and 9 hex digits: `ma0c352dec9`.
# A short id must be carried by exactly one committed result (a file or folder name under results/, its extension
# dropped), and a matrix id by the runs under results/. None, or several, is an error: cite the full id there.
# The full ids a page cites do not settle its short ones: capacity-versions.md cited one 614c in full and meant
# the other by `614c`.
EXTENSION = re.compile(r"\.(?:result\.json|json|jsonl|txt|conf|yaml|png)$")
HEX4 = r"[0-9a-f]{4}"
BACKTICKED_SHORT = re.compile(rf"`({HEX4})`")
ELIDED_SHORT = re.compile(rf"`\.\.\.-({HEX4})((?:-[a-z0-9][a-z0-9.]*)*)(-\.\.\.)?`")
BARE_WORD = rf"(?<![\w.:/@#'-]){HEX4}(?![\w/-]|[.,]\d)"
BARE_LIST = re.compile(rf"{BARE_WORD}(?:(?:,? and |, ){BARE_WORD})*")
LINKED_SHORT = re.compile(rf"\[({HEX4})\]\(([^)\s]+)\)")
INLINE_CODE = re.compile(r"`[^`]*`")
MATRIX_ID = re.compile(r"(?<![\w-])ma[0-9a-f]{9}(?![\w-])")


def linked(short: str, target: str) -> str:
    """The pattern for a short id that links to a result: that result's id, if it carries the short id."""
    full = RESULT_ID.search(Path(target).name)
    if not full:
        return rf"-{short}(?:-|$)"
    full_id = EXTENSION.sub("", full.group(0))
    return rf"^{re.escape(full_id)}$" if re.search(rf"-{short}(?:-|$)", full_id) else r"(?!)"


def short_ids(text: str) -> list[tuple[int, str, str]]:
    """(line, the id as cited, a pattern the full id must match) for each short result id the text cites."""
    found = []
    for number, line in prose_lines(text):
        for short, target in LINKED_SHORT.findall(line):
            found.append((number, f"[{short}]({target})", linked(short, target)))
        line = re.sub(r"\]\([^)]*\)", "]", RESULT_ID.sub("FULL-ID", LINKED_SHORT.sub("", line)))
        for short in BACKTICKED_SHORT.findall(line):
            found.append((number, short, rf"-{short}(?:-|$)"))
        for short, tail, open_end in ELIDED_SHORT.findall(line):
            pattern = rf"-{short}{tail}-" if open_end else rf"-{short}{tail}$"
            found.append((number, f"...-{short}{tail}{open_end}", pattern))
        for listed in BARE_LIST.findall(INLINE_CODE.sub("`code`", line)):
            words = re.findall(HEX4, listed)
            if any(re.search(r"\d", w) and re.search(r"[a-f]", w) for w in words):
                found += [(number, word, rf"-{word}(?:-|$)") for word in words]
    return found


def committed_ids() -> set[str]:
    """The full result id in each file and folder name under results/, without its extension."""
    ids = set()
    for path in (ROOT / "results").rglob("*"):
        full = RESULT_ID.search(path.name)
        if full:
            ids.add(EXTENSION.sub("", full.group(0)))
    return ids


def matrix_ids() -> set[str]:
    """The matrix of each run result: `matrix` writes its runs at the top of results/."""
    results = (json.loads(path.read_text()) for path in (ROOT / "results").glob("*.json"))
    return {r["matrix"]["id"] for r in results if isinstance(r.get("matrix"), dict) and "id" in r["matrix"]}


def unresolved_short_ids(text: str, ids: set[str], matrices: set[str]) -> list[str]:
    """Each short id the text cites that names no result, or several, by line."""
    wrong = []
    for number, cited, pattern in short_ids(text):
        named = {full for full in ids if re.search(pattern, full)}
        if len(named) != 1:
            which = "several results: " + ", ".join(sorted(named)) if named else "no result under results/"
            wrong.append((number, f"{cited} names {which}"))
    for number, line in prose_lines(text):
        wrong += [
            (number, f"matrix {m} has no run under results/")
            for m in MATRIX_ID.findall(line)
            if m not in matrices
        ]
    return [f"line {number}: {what}" for number, what in sorted(wrong, key=lambda w: w[0])]


def test_every_short_id_the_docs_cite_names_one_committed_result() -> None:
    ids, matrices = committed_ids(), matrix_ids()
    cited = [short for page in PAGES for short in short_ids(page.read_text())]
    assert len(cited) > 100, f"only {len(cited)} short ids cited: the patterns no longer find them"
    wrong = [
        f"{page.relative_to(ROOT)}: {w}"
        for page in PAGES
        for w in unresolved_short_ids(page.read_text(), ids, matrices)
    ]
    assert wrong == [], (
        "cited by a short id that names no result or several; cite the full id:\n" + "\n".join(wrong)
    )


def test_the_short_id_check_finds_an_unknown_and_an_ambiguous_id() -> None:
    ids = {
        "20261206T204603.187Z-compare-d211-tls-capacity",
        "20261206T075241.246Z-rsyslog-8.2504-d211",
        "20261205T220554.935Z-compare-eb14-plain-capacity",
        "20261206T105858.715Z-syslog-ng-4.8-de57-udp",
    }
    run = "20261206T075241.246Z-rsyslog-8.2504-d211"
    right = (
        f"comparison eb14 and `...-de57-udp`, (`...-eb14-...`), matrix `ma0c352dec9`, [d211](../{run}.json)\n"
        f"`{run}` in full\n"
        "```\nnot an id in code: 9f9f\n```\n"
        "2014 and 5140 are not ids; nor is `taskset -c 0 ab12`\n"
    )
    assert [cited for _, cited, _ in short_ids(right)] == [
        f"[d211](../{run}.json)",
        "...-de57-udp",
        "...-eb14-...",
        "eb14",
    ]
    assert unresolved_short_ids(right, ids, {"ma0c352dec9"}) == []
    wrong = (
        "in c0de and 6455, `...-de57-tls`\n"
        f"`d211`, not d211 alone, [d211](../{run}.json) nor [de57](../{run}.json)\n"
        "matrix ma0c352dec8\n"
    )
    several = (
        "several results: 20261206T075241.246Z-rsyslog-8.2504-d211, "
        "20261206T204603.187Z-compare-d211-tls-capacity"
    )
    assert unresolved_short_ids(wrong, ids, {"ma0c352dec9"}) == [
        "line 1: ...-de57-tls names no result under results/",
        "line 1: c0de names no result under results/",
        "line 1: 6455 names no result under results/",
        f"line 2: [de57](../{run}.json) names no result under results/",
        f"line 2: d211 names {several}",
        f"line 2: d211 names {several}",
        "line 3: matrix ma0c352dec8 has no run under results/",
    ]


# --- a figure quoted beside a result id is the result's ----------------------------------------------------------
# Two patterns, the common ones; any other way of quoting a figure is not checked:
#  - prose: a number with its unit right before the id in backticks, joined by nothing, a comma, " (" or " in":
#    "74,550 msg/s, `<run id>`", "8.21 s (`<run id>`)", "52,737 msg/s (`<search id>`)", "80.4 s in `<run id>`".
#    msg/s must be a run's `throughput.msgs_per_s` or a search's `ndr_msgs_per_s` or `pdr_msgs_per_s`; s must be a
#    run's `elapsed_s` (a search has no such field: its "s" figures are not checked).
#  - tables: in a row that names exactly one result id, the first number of a cell under one of COLUMNS.
# The figure must equal the field rounded to the decimals shown (74,601 for 74601.2, 80.43 for 80.428).
NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
QUOTED_FIGURE = re.compile(
    rf"(?<![\w.,])({NUMBER})\s(msg/s|s)(?:,|\s\(|\sin|\s\(in)?\s?`({RESULT_ID.pattern})`"
)
UNIT_FIELDS = {"msg/s": ("throughput.msgs_per_s", "ndr_msgs_per_s", "pdr_msgs_per_s"), "s": ("elapsed_s",)}
COLUMNS = {
    "ndr msg/s": "ndr_msgs_per_s",
    "ndr (msg/s)": "ndr_msgs_per_s",
    "published ndr (confirmed 60 s)": "ndr_msgs_per_s",
    "pdr msg/s": "pdr_msgs_per_s",
    "published pdr": "pdr_msgs_per_s",
    "elapsed s": "elapsed_s",
    "msgs/s": "throughput.msgs_per_s",
}


def quoted_figures(text: str) -> list[tuple[str, tuple[str, ...], str]]:
    """(figure, the fields it may be, result id) for every figure the text quotes beside a result id."""
    found = [(figure, UNIT_FIELDS[unit], cited) for figure, unit, cited in QUOTED_FIGURE.findall(text)]
    columns: dict[int, str] | None = None
    for line in text.splitlines():
        if not line.startswith("|"):
            columns = None
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if columns is None:  # a table's first row names its columns
            columns = {i: COLUMNS[cell.lower()] for i, cell in enumerate(cells) if cell.lower() in COLUMNS}
            continue
        ids = set(RESULT_ID.findall(line))
        for i, name in columns.items():
            figure = re.match(rf"({NUMBER})\b", cells[i]) if i < len(cells) and len(ids) == 1 else None
            if figure:
                found.append((figure.group(1), (name,), next(iter(ids))))
    return found


def result_files() -> dict[str, Path]:
    return {path.name: path for path in (ROOT / "results").rglob("*.json")}


def result_of(cited: str, files: dict[str, Path]) -> dict | None:
    for name, path in files.items():
        if name in (cited + ".json", cited + ".result.json") or name.endswith("-" + cited + ".json"):
            return json.loads(path.read_text())
    return None


def number_at(result: dict, dotted: str) -> float | None:
    value: object = result
    for key in dotted.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def wrong_figures(text: str, files: dict[str, Path]) -> list[str]:
    wrong = []
    for figure, fields, cited in quoted_figures(text):
        result = result_of(cited, files)
        values = {name: number_at(result, name) for name in fields} if result else {}
        values = {name: value for name, value in values.items() if value is not None}
        decimals = len(figure.partition(".")[2])
        if values and float(figure.replace(",", "")) not in {round(v, decimals) for v in values.values()}:
            wrong.append(f"{figure} beside {cited}: the result has {values}")
    return wrong


def test_the_figures_quoted_beside_a_result_id_are_the_results() -> None:
    files = result_files()
    quoted = [figure for page in PAGES for figure in quoted_figures(page.read_text())]
    assert len(quoted) > 100, (
        f"only {len(quoted)} figures beside a result id: the patterns no longer find them"
    )
    wrong = [
        f"{page.relative_to(ROOT)}: {w}" for page in PAGES for w in wrong_figures(page.read_text(), files)
    ]
    assert wrong == [], "a figure the cited result does not bear out:\n" + "\n".join(wrong)


def test_the_figure_check_finds_a_wrong_digit(tmp_path: Path) -> None:
    (tmp_path / "20261122T120846Z-rsyslog-8.2504.json").write_text(
        json.dumps({"elapsed_s": 13.414, "throughput": {"msgs_per_s": 74550.3}})
    )
    (tmp_path / "20261127T005659.228Z-rsyslog-8.2504-7c71-seed2014.json").write_text(
        json.dumps({"ndr_msgs_per_s": 72100.6, "pdr_msgs_per_s": 72100.6})
    )
    files = {path.name: path for path in tmp_path.iterdir()}
    run, search = "20261122T120846Z-rsyslog-8.2504", "20261127T005659.228Z-rsyslog-8.2504-7c71-seed2014"
    right = (
        f"74,550 msg/s, `{run}`; 13.41 s (`{run}`); 72,101\nmsg/s (`{search}`); 13 s in `{run}`\n\n"
        f"| profile | NDR msg/s | result |\n|---|---|---|\n| rsyslog | 72,101 | `{search}` |\n"
    )
    assert len(quoted_figures(right)) == 5
    assert wrong_figures(right, files) == []
    wrong = right.replace("74,550", "74,560").replace("13.41", "13.42").replace("| 72,101", "| 72,102")
    assert [w.split(" beside")[0] for w in wrong_figures(wrong, files)] == ["74,560", "13.42", "72,102"]
