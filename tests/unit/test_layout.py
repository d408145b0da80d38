"""The package's shape: roles import one way, with no cycle, and each image copies only what runs in it."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from tests.conftest import LONGEST_FIRST

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "syslogbench"

# What each role may import from syslogbench, besides itself.
ALLOWED = {
    "contract": set(),
    "model": {"contract"},
    "rig": {"contract", "model"},
    "host": {"contract", "model"},
    # the result models, runs, searches, knob studies and comparisons (their like-with-like pairs too), and
    # their strict reader, and Student's t, which the comparisons' intervals use too
    "report": {
        "model.student",
        "model.result",
        "model.capacity",
        "model.codec",
        "model.knobs",
        "model.compare",
        "model.compare_pairs",
    },  # fmt: skip
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def type_checking_only(tree: ast.AST) -> set[int]:
    """The ids of the imports under `if TYPE_CHECKING:`, which a type checker reads and Python never runs."""
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for statement in node.body
        for inner in ast.walk(statement)
    }


def imported(path: Path, name: str, runtime: bool = False) -> set[str]:
    """Every syslogbench module this file imports, at the top or inside a function (runtime: not those under
    `if TYPE_CHECKING:`)."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    known = modules()
    tree = ast.parse(path.read_text())
    skipped = type_checking_only(tree) if runtime else set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("syslogbench")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + [base])
            if not base.startswith("syslogbench"):
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in known else base)
    return {module for module in found if module != "syslogbench"}


def role(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "top"


def test_each_role_imports_only_what_it_may() -> None:
    wrong = []
    for name, path in modules().items():
        mine = role(name)
        if mine not in ALLOWED:
            continue  # __main__ wires the host to the report
        for target in imported(path, name):
            other = target.removeprefix("syslogbench.")
            ok = role(target) == mine or any(
                other == allowed or other.startswith(allowed + ".") for allowed in ALLOWED[mine]
            )
            if not ok:
                wrong.append(f"{name} imports {target}")
    assert wrong == [], "imports against the roles (see docs/DESIGN.md, layout):\n" + "\n".join(wrong)


def test_no_import_cycle() -> None:
    graph = {name: imported(path, name) & set(modules()) for name, path in modules().items()}
    cycles = []

    def visit(node: str, trail: list[str]) -> None:
        if node in trail:
            cycles.append(" -> ".join(trail[trail.index(node) :] + [node]))
            return
        for nxt in sorted(graph.get(node, ())):
            if nxt not in done:
                visit(nxt, [*trail, node])
        done.add(node)

    done: set[str] = set()
    for start in sorted(graph):
        visit(start, [])
    assert cycles == []


def test_at_most_four_modules_at_the_top() -> None:
    flat = sorted(path.name for path in PACKAGE.glob("*.py"))
    subpackages = sorted(path.parent.name for path in PACKAGE.glob("*/__init__.py"))
    assert len(flat) <= 4, flat
    assert len(subpackages) >= 3, subpackages


def test_the_files_make_test_starts_first_exist() -> None:
    """A renamed long file would silently lose its place at the front (tests/conftest.py)."""
    missing = [path for path in LONGEST_FIRST if not (ROOT / path).is_file()]
    assert not missing, missing


# Where a --config or --swarm may change the way: the plan, the config's own module, the two orchestrators,
# and the stack file of a plan (stack.plan_text).
BRANCHING = {"runplan.py", "ownconfig.py", "onehost.py", "swarm.py", "stack.py"}
BRANCH = re.compile(r"\bif (not )?([a-z_]+\.)?(user|swarm)\b|\b(user|swarm) is (not )?None")


def test_only_the_plan_and_its_orchestrators_branch_on_a_config_or_a_swarm() -> None:
    """The commands take one plan (host/runplan.py); an `if user` elsewhere is a second way through them."""
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted((PACKAGE / "host").glob("*.py"))
        if path.name not in BRANCHING
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if BRANCH.search(line)
    ]
    assert not found, found


# host/ in tiers, each importing only its own tier and those below: the command line; the commands; what runs
# a plan (a run, a search and its parts, the orchestrators); and the services every tier uses.
HOST_TIERS = {
    "entry": {"cli", "options"},
    "commands": {"check", "matrix", "knobs", "compare", "faults", "calibrate"},
    # capacity.command runs a search for `capacity`, `matrix --capacity` and `knobs`: a runner they share
    "runners": {"benchmark", "onehost", "swarm", "capacity", "capacity.command", "capacity.ceiling",
                "capacity.confirm", "capacity.cores", "capacity.duet", "capacity.interleave", "capacity.turns", "capacity.histogram", "capacity.measurer", "capacity.searchplan",
                "capacity.record", "capacity.repeats", "capacity.search", "capacity.session"},
}  # fmt: skip
TIER_ORDER = ("services", "runners", "commands", "entry")


def host_tier(module: str) -> str:
    return next((tier for tier, names in HOST_TIERS.items() if module in names), "services")


def test_host_modules_import_only_their_tier_and_those_below() -> None:
    host = host_modules()
    upward, downward = [], 0
    for name, path in sorted(host.items()):
        level = TIER_ORDER.index(host_tier(name))
        for target in imported(path, f"syslogbench.host.{name}"):
            short = target.removeprefix("syslogbench.host.")
            if not target.startswith("syslogbench.host."):
                continue
            if TIER_ORDER.index(host_tier(short)) > level:
                upward.append(f"{name} ({host_tier(name)}) imports {short} ({host_tier(short)})")
            downward += TIER_ORDER.index(host_tier(short)) < level
    assert not upward, upward
    assert downward > 20, downward  # the scan saw the imports it judges (cli's of the commands, ...)
    named = set().union(*HOST_TIERS.values())
    assert named <= set(host), sorted(named - set(host))  # a renamed module is renamed here too


def host_modules() -> dict[str, Path]:
    return {name.removeprefix("syslogbench.host."): path for name, path in modules().items()
            if name.startswith("syslogbench.host.")}  # fmt: skip


def test_no_command_imports_another() -> None:
    """A command runs what is below it; one that needs another's work finds it in a runner (a search in
    capacity.command, a run in benchmark), so that each command reads alone."""
    host = host_modules()
    found = [
        f"{name} imports {target.removeprefix('syslogbench.host.')}"
        for name in sorted(HOST_TIERS["commands"])
        for target in imported(host[name], f"syslogbench.host.{name}")
        if target.removeprefix("syslogbench.host.") in HOST_TIERS["commands"] - {name}
    ]
    assert not found, found


MAX_IMPORT_DEPTH = 6  # cli, a command, a runner, and three floors of services
# Counting the imports under `if TYPE_CHECKING:` too: cli, a command, capacity.command, a part of the search
# (ceiling, session, record), the search's plan (each part takes a Search), the run plan it holds, and three
# floors of services. A type-only import costs no start-up time but is a file a reader opens, so it is held too.
MAX_TYPED_IMPORT_DEPTH = 9


def longest_chain(graph: dict[str, set[str]]) -> list[str]:
    """The longest path of imports in an acyclic graph (test_no_import_cycle keeps it one)."""
    memo: dict[str, list[str]] = {}

    def down(node: str) -> list[str]:
        if node not in memo:
            memo[node] = [node, *max((down(nxt) for nxt in sorted(graph[node])), key=len, default=[])]
        return memo[node]

    return max((down(node) for node in sorted(graph)), key=len, default=[])


def host_graph(runtime: bool) -> dict[str, set[str]]:
    """Which host modules each host module imports (runtime: leaving out those under `if TYPE_CHECKING:`)."""
    host = host_modules()
    return {
        name: {target.removeprefix("syslogbench.host.") for target in imported(path, f"syslogbench.host.{name}",
               runtime=runtime)} & set(host) - {name}
        for name, path in host.items()
    }  # fmt: skip


def test_host_imports_are_at_most_six_modules_deep() -> None:
    """From the command line to the last service a run touches, at most six modules import one another at
    run time: a reader follows a run in a few files. (Imports under `if TYPE_CHECKING:` name a type only.)"""
    chain = longest_chain(host_graph(runtime=True))
    assert len(chain) <= MAX_IMPORT_DEPTH, f"{len(chain)} modules deep: {' -> '.join(chain)}"


def test_host_imports_with_type_hints_are_at_most_nine_modules_deep() -> None:
    """The same walk with the imports a type hint needs: Python never runs them, but a reader opens those files
    too."""
    chain = longest_chain(host_graph(runtime=False))
    assert len(chain) <= MAX_TYPED_IMPORT_DEPTH, f"{len(chain)} modules deep: {' -> '.join(chain)}"


def test_the_measurement_scripts_are_not_tests() -> None:
    """bench/ holds measurement scripts: pytest collects none of them, and ruff lints them."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests"]
    scripts = sorted(path.name for path in (ROOT / "bench").glob("*.py"))
    assert scripts, "bench/ holds no script"
    assert [name for name in scripts if name.startswith("test_") or name.endswith("_test.py")] == []
    assert not (ROOT / "tests" / "perf").exists(), "measurement scripts go in bench/, not under tests/"
    ruff = config["tool"]["ruff"]
    excluded = [*ruff.get("exclude", []), *ruff.get("extend-exclude", [])]
    assert not [pattern for pattern in excluded if "bench" in pattern], excluded


MAX_MODULE_LINES = 500  # a module a reader takes in at one sitting (docs/DESIGN.md, layout)


def test_no_module_outgrows_one_sitting() -> None:
    """No Python module of the package and no Rust source, tests aside, holds more than MAX_MODULE_LINES."""
    sources = [*PACKAGE.rglob("*.py"), *(ROOT / "rig-rust" / "src").rglob("*.rs")]
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sources
        if path.name != "tests.rs" and (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}, f"over {MAX_MODULE_LINES} lines, split by role: {long}"
