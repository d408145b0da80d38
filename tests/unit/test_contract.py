"""The contract between the containers is written once: the docs, supervise.sh, the baseline receiver, the
templates and the images agree with syslogbench/contract.py, so a rename in one place fails here."""

from __future__ import annotations

import re
from pathlib import Path

from syslogbench import contract

ROOT = Path(__file__).resolve().parents[2]
SUPERVISOR = ROOT / "daemons" / "_common" / "supervise.sh"
DESIGN = ROOT / "docs" / "DESIGN.md"
RIG = ROOT / "syslogbench" / "rig"


def design_table() -> list[str]:
    """The first column of docs/DESIGN.md's protocol table, one entry per path, in order."""
    section = DESIGN.read_text().split("## The control directory", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [path.rstrip("/") for row in rows for path in re.findall(r"`([^`]+)`", row.split("|")[1])]


def test_design_table_maps_onto_the_contract_one_to_one() -> None:
    assert design_table() == contract.protocol_names()


def test_protocol_names_are_unique_and_relative() -> None:
    names = contract.protocol_names()
    assert len(names) == len(set(names)) == 31
    assert not [name for name in names if name.startswith("/")]


def supervisor_paths() -> set[str]:
    """Every "$control/..." path supervise.sh spells, with its shell parts as the contract's placeholders."""
    found = set(re.findall(r"\$control\"?/([A-Za-z0-9_./*$-]+)", SUPERVISOR.read_text()))
    return {re.sub(r"\*|\$1|\$name", "<name>", path) for path in found}


def test_every_control_name_of_the_supervisor_is_in_the_contract() -> None:
    names = set(contract.protocol_names())
    folders = {str(Path(name).parent) for name in names}
    unknown = sorted(path for path in supervisor_paths() if path not in names and path not in folders)
    assert unknown == [], f"supervise.sh spells control names the contract does not have: {unknown}"


def test_the_supervisor_uses_the_names_the_watcher_waits_for() -> None:
    """Those it writes or reads to take part in the sequence; a rename in the contract must show here."""
    c = contract.Control(Path())
    used = {c.run_json, c.transport, c.go, c.unsupported, c.daemon.manifest, c.daemon.ready, c.daemon.exit}
    used |= {
        c.daemon.restarting,
        c.daemon.restarted,
        c.daemon.version,
        c.daemon.base,
        c.samples,
        c.start,
        c.stop,
        c.restart,
    }
    used |= {c.finish, c.snapshot_request("<name>"), c.snapshot("<name>")}
    assert {str(path) for path in used} <= supervisor_paths()


def test_the_supervisor_reads_exactly_the_contracts_environment_with_its_defaults() -> None:
    text = SUPERVISOR.read_text()
    shells_own = {"BASH_VERSION"}  # set by the shell, not taken from the environment
    upper = set(re.findall(r"\$\{?([A-Z][A-Z_]+)", text)) - shells_own
    assert upper == set(contract.SUPERVISOR_ENV)
    found = re.findall(r"\$\{([A-Z][A-Z_]+):-([^}]*)\}", text)
    defaults = {name: value for name, value in found if name not in shells_own}
    assert defaults == {name: value for name, value in contract.SUPERVISOR_ENV.items() if value is not None}


def test_the_control_dir_default_is_the_contracts() -> None:
    assert contract.SUPERVISOR_ENV["CONTROL_DIR"] == "/bench/control"
    assert contract.Control(Path("/bench/control")).finish == Path("/bench/control/finish")


def test_the_baseline_receiver_listens_on_the_contracts_port() -> None:
    text = (ROOT / "daemons" / "baseline" / "receiver.py").read_text()
    assert f'PORT = int(os.environ.get("CENTRAL_PORT", "{contract.CENTRAL_PORT}"))' in text


def test_the_templates_take_the_ports_from_the_renderer() -> None:
    """Rendered from contract.CENTRAL_PORT and LASTHOP_PORT; a literal port in a template would bypass it."""
    for template in (ROOT / "daemons" / "_templates").glob("*.conf.j2"):  # the daemon configs
        text = template.read_text()
        for port in (contract.CENTRAL_PORT, contract.LASTHOP_PORT):
            assert not re.search(rf"\b{port}\b", text), f"{template.name} spells port {port}"
        assert "{{ port }}" in text, template.name


def test_no_control_path_is_spelled_by_hand_in_the_rig() -> None:
    """The containers' code reaches the control volume only through contract.Control."""
    spelled = []
    for path in RIG.rglob("*.py"):
        text = path.read_text()
        for pattern in (r"CONTROL\s*/", r"CONTROL_DIR\s*/", r"/bench/control", r"\b514\b", r"\b1514\b"):
            if re.search(pattern, text):
                spelled.append(f"{path.relative_to(ROOT)}: {pattern}")
    assert spelled == []


def test_one_exit_code_table() -> None:
    assert contract.EXIT_CODES == {
        "pass": 0,
        "loss": 1,
        "bad-input": 2,
        "error": 3,
        "n/a": 4,
        "timeout": 5,
        "interrupted": 130,
        "terminated": 143,
    }
    assert set(contract.MEANINGS) == set(contract.EXIT_CODES)
    assert not [p for p in RIG.rglob("*.py") if "EXIT_CODES = " in p.read_text()]


def copied(dockerfile: Path) -> list[str]:
    return [line.split()[1] for line in dockerfile.read_text().splitlines() if line.startswith("COPY ")]


def test_the_python_images_copy_only_what_runs_in_them() -> None:
    wanted = [
        "syslogbench/__init__.py",
        "syslogbench/contract.py",
        "syslogbench/model/",
        "syslogbench/rig/",
        "scenarios/",
    ]
    # Besides the package, both have the compiled rig (from its own image, rig-rust/Dockerfile), and the
    # watcher has its entry point (it hands the volumes to the generators' group).
    rig = "--from=rig"
    extra = {"watcher": [rig, "watcher/entrypoint.sh"], "generators": [rig]}
    for image in ("watcher", "generators"):
        assert copied(ROOT / image / "Dockerfile") == [*wanted, *extra[image]], image


def test_the_images_commands_are_modules_that_exist() -> None:
    for image, module in (("watcher", "syslogbench.rig.watcher"), ("generators", "syslogbench.rig.sender")):
        text = (ROOT / image / "Dockerfile").read_text()
        assert f'CMD ["python3", "-m", "{module}"]' in text
    assert (RIG / "watcher" / "__main__.py").exists()
    assert (RIG / "sender.py").exists() and (RIG / "lasthop.py").exists()
    assert "command: [python3, -m, syslogbench.rig.lasthop]" in (ROOT / "compose.yaml").read_text()


def test_the_capacity_environment_is_one_record_compose_passes_on() -> None:
    import yaml

    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    watcher = compose["services"]["watcher"]["environment"]
    assert set(contract.CapacityEnv.NAMES) <= set(watcher), watcher
    written = contract.CapacityEnv(0.5, 700.0).to_env()
    assert set(written) == set(contract.CapacityEnv.NAMES)
    assert contract.CapacityEnv.on(written) and not contract.CapacityEnv.on({})
    assert contract.CapacityEnv.from_env(written) == contract.CapacityEnv(0.5, 700.0)
    assert contract.CapacityEnv.from_env({"CAPACITY": "1", "CAPACITY_MAX_S": "9"}).latency_bound_s == 1.0


def test_the_volumes_mount_where_compose_mounts_them() -> None:
    import yaml

    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    mounts = compose["services"]["watcher"]["volumes"]
    for name in ("control", "logs", "queue"):
        assert contract.volume(name) in mounts, mounts
