"""The order in which `make test`'s two workers take the test files: the longest first.

pytest-xdist (`--dist loadfile`) hands out whole files, and by default the files with the most tests first:
the unit files, quick, then the integration files, the longest of them last, so that one worker ran the
swarm's file alone at the end. With `--no-loadscope-reorder` it keeps the order set here, and the longest file
goes first while the other worker takes the rest (docs/ci.md, "How long it takes").
"""

from __future__ import annotations

import pytest

# The longest files of a fresh-clone `make test` (--durations), longest first; the others keep their order.
LONGEST_FIRST = (
    "tests/integration/test_swarm_run.py",
    "tests/integration/test_capacity.py",
    "tests/integration/test_faults.py",
    "tests/browser/test_capacity_page.py",
    "tests/integration/test_matrix_and_calibration.py",
    "tests/integration/test_relay_run.py",
)


def rank(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=rank)  # stable: within a file, and among the other files, the order stays
