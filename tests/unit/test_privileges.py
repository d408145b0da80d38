"""Least privilege in the compose files: every service drops every capability but the ones it needs."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
BENCH_ID = "10001"  # the generators' user and group (generators/Dockerfile)


def services() -> dict[str, dict]:
    """The harness services of compose.yaml and every rendered daemon service (merge keys resolved)."""
    harness = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    daemons = yaml.safe_load((ROOT / "compose.daemons.yaml").read_text())["services"]
    return {**harness, **daemons}


def test_every_service_drops_all_capabilities_and_new_privileges_and_has_a_pids_limit() -> None:
    found = services()
    assert {"watcher", "generator", "lasthop", "rsyslog-8.2504", "syslog-ng-4.8", "baseline"} <= set(found)
    for name, service in found.items():
        assert service.get("cap_drop") == ["ALL"], name
        assert service.get("security_opt") == ["no-new-privileges:true"], name
        assert isinstance(service.get("pids_limit"), int) and 0 < service["pids_limit"] <= 1024, name


def test_each_service_adds_back_only_what_it_needs() -> None:
    added = {name: service.get("cap_add", []) for name, service in services().items()}
    assert added.pop("watcher") == ["DAC_OVERRIDE"]
    assert added.pop("generator") == []
    assert added.pop("lasthop") == []
    assert set(map(tuple, added.values())) == {("NET_BIND_SERVICE",)}, added  # every daemon alike


def test_the_generators_run_as_the_unprivileged_user_and_the_watcher_shares_its_group() -> None:
    text = (ROOT / "generators" / "Dockerfile").read_text()
    assert f"USER {BENCH_ID}:{BENCH_ID}" in text
    assert re.search(rf"useradd --uid {BENCH_ID} --gid bench .*--shell /usr/sbin/nologin bench", text)
    assert services()["watcher"]["group_add"] == [BENCH_ID]
    entry = (ROOT / "watcher" / "entrypoint.sh").read_text()
    assert f'chgrp {BENCH_ID} "$dir"' in entry and 'chmod 2775 "$dir"' in entry and "umask 002" in entry
    # The volumes the entry point hands over are those the last hop writes into; the generators mount none
    # (they use the control channel).
    assert "volumes" not in services()["generator"]
    for mount in services()["lasthop"]["volumes"]:
        assert mount.split(":", 1)[1] in entry, mount
