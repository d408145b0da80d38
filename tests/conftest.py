"""The order in which `make test`'s two workers take the test files: the longest first.

pytest-xdist (`--dist loadfile`) hands out whole files, and by default the files with the most tests first:
the unit files, quick, then the integration files, the longest of them last, so that one worker ran the
swarm's file alone at the end. With `--no-loadscope-reorder` it keeps the order set here, and the longest file
goes first while the other worker takes the rest (docs/ci.md, "How long it takes").
"""

from __future__ import annotations

import os
import shutil
import time

import pytest

# The longest files of a fresh-clone `make test` (--durations), longest first; the others keep their order. The
# capacity compare (471 s on an AMD EPYC machine, docs/ci.md) is the longest single test.
LONGEST_FIRST = (
    "tests/integration/test_swarm_run.py",
    "tests/integration/test_capacity.py",
    "tests/integration/test_faults.py",
    "tests/integration/test_compare_capacity_run.py",
    "tests/browser/test_capacity_page.py",
    "tests/integration/test_compare_run.py",
    "tests/integration/test_matrix_and_calibration.py",
    "tests/integration/test_relay_run.py",
)


def rank(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=rank)  # stable: within a file, and among the other files, the order stays


# CI stops `make test` at 90 minutes and then prints nothing of what failed. Past this budget every test still
# to run fails at once, saying so, and `--maxfail` (Makefile) ends the session with its failures listed.
BUDGET_ENV = "TEST_BUDGET_MIN"
STARTED = time.monotonic()


def machine_line() -> str:
    """What a failed CI run needs to be read: the machine's load and the free space where images live."""
    free = shutil.disk_usage("/var/lib/docker" if os.path.exists("/var/lib/docker") else "/").free
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    budget = os.environ.get(BUDGET_ENV)
    limit = f"time budget {budget} min" if budget else "no time budget"
    return f"machine: load {load}; {free / 2**30:.1f} GiB free for Docker; {limit}"


def say_machine(session: pytest.Session, before: str = "") -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and not hasattr(session.config, "workerinput"):  # once, not per worker: -q too
        reporter.write(before + machine_line() + "\n")


def pytest_sessionstart(session: pytest.Session) -> None:
    say_machine(session)


def pytest_sessionfinish(session: pytest.Session) -> None:
    say_machine(session, before="\n")  # and again at the end, beside the failures


def pytest_runtest_setup(item: pytest.Item) -> None:
    budget = os.environ.get(BUDGET_ENV)
    spent = (time.monotonic() - STARTED) / 60
    if budget and spent > float(budget):
        pytest.fail(f"the suite is past its {budget}-minute budget ({spent:.0f} min): {item.nodeid} not run")
