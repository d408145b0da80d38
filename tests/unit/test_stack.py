"""The stack file for Docker Swarm, rendered without Docker: what `docker stack deploy` takes, and nothing it
ignores or refuses (the integration test deploys it)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from syslogbench.host import cli, configrun, environment, ownconfig, profiles, stack
from syslogbench.model import settings
from tests.unit.conftest import env

ROOT = Path(__file__).resolve().parents[2]

# What `docker stack deploy` ignores or refuses (docs/swarm.md); none may appear in any service.
NOT_FOR_SWARM = {
    "build", "depends_on", "profiles", "restart", "cgroup_parent", "privileged", "security_opt",
    "group_add", "pids_limit", "cpu_quota", "cpu_period", "cpu_shares", "cpuset", "mem_limit",
    "memswap_limit", "network_mode", "healthcheck", "extends", "container_name",
}  # fmt: skip


def rendered(**options: object) -> dict:
    cfg = settings.from_env({**env(), "HOSTS": "2", "SENDERS_PER_HOST": "2", "MESSAGES_PER_SENDER": "2000"})
    profile = profiles.resolve("rsyslog8")
    return yaml.safe_load(stack.text(stack.stack(profile, cfg, **options), profile, cfg))  # type: ignore[arg-type]


def test_services_are_the_four_roles_with_the_profile_as_the_daemon() -> None:
    services = rendered(tag="t")["services"]
    assert list(services) == ["watcher", "daemon", "generator", "lasthop"]
    assert services["daemon"]["image"] == "syslogbench/rsyslog-8.2504:t"
    assert services["generator"]["image"] == services["lasthop"]["image"] == "syslogbench/generator:t"
    assert services["watcher"]["image"] == "syslogbench/watcher:t"


def test_a_registry_prefix_goes_before_every_image() -> None:
    services = rendered(tag="t", registry="lab.example:5000/")["services"]
    assert {s["image"] for s in services.values()} == {
        "lab.example:5000/syslogbench/watcher:t",
        "lab.example:5000/syslogbench/rsyslog-8.2504:t",
        "lab.example:5000/syslogbench/generator:t",
    }


def test_nothing_swarm_ignores_or_refuses() -> None:
    for name, service in rendered()["services"].items():
        assert not set(service) & NOT_FOR_SWARM, f"{name}: {sorted(set(service) & NOT_FOR_SWARM)}"


def test_every_task_runs_once_by_dns_round_robin_on_its_role() -> None:
    services = rendered()["services"]
    roles = {name: s["deploy"]["placement"]["constraints"] for name, s in services.items()}
    central = ["node.labels.syslogbench.role == central"]
    assert roles == {
        "watcher": central,
        "daemon": central,
        "lasthop": central,
        "generator": ["node.labels.syslogbench.role == generator"],
    }
    for service in services.values():
        assert service["deploy"]["restart_policy"] == {"condition": "none"}
        assert service["deploy"]["endpoint_mode"] == "dnsrr"
        assert service["networks"] in (["bench"], {"bench": {"aliases": ["central"]}})


def test_limits_come_from_the_settings() -> None:
    services = rendered()["services"]
    assert services["daemon"]["deploy"]["resources"]["limits"] == {
        "cpus": "8",
        "memory": str(2 * 1024**3),
        "pids": 1024,
    }
    assert services["generator"]["deploy"]["resources"]["limits"] == {
        "cpus": "2",
        "memory": str(512 * 1024**2),
        "pids": 1024,
    }


def test_the_daemon_cpu_limit_is_cut_to_the_central_node_cores() -> None:
    limits = rendered(central_cores=2)["services"]["daemon"]["deploy"]["resources"]["limits"]
    assert limits["cpus"] == "2"


def test_generators_are_the_hosts_spread_one_per_node_where_there_are_enough() -> None:
    spread = rendered(generator_nodes=2)["services"]["generator"]["deploy"]
    assert spread["replicas"] == 2
    assert spread["placement"]["preferences"] == [{"spread": "node.id"}]
    assert spread["placement"]["max_replicas_per_node"] == 1
    crowded = rendered(generator_nodes=1)["services"]["generator"]["deploy"]
    assert crowded["placement"]["max_replicas_per_node"] == 2
    assert "max_replicas_per_node" not in rendered()["services"]["generator"]["deploy"]["placement"]


def test_only_the_central_roles_mount_volumes_and_control_is_in_memory() -> None:
    data = rendered()
    mounts = {name: s.get("volumes", []) for name, s in data["services"].items()}
    assert mounts["generator"] == []
    assert "control:/bench/control" in mounts["watcher"]
    assert data["volumes"]["control"] == {
        "driver": "local",
        "driver_opts": {"type": "tmpfs", "device": "tmpfs"},
    }
    assert data["networks"] == {"bench": {"driver": "overlay"}}


def test_the_watcher_gets_the_settings_and_sends_the_result_on_its_output() -> None:
    env = rendered()["services"]["watcher"]["environment"]
    assert (env["HOSTS"], env["SENDERS_PER_HOST"], env["MESSAGES_PER_SENDER"]) == ("2", "2", "2000")
    assert env["RESULT_ON_OUTPUT"] == "1"
    assert settings.from_env(env).variant == "2x2x2000"


def test_a_user_config_goes_in_as_swarm_configs_placed_as_on_one_host(tmp_path: Path) -> None:
    """The same places as compose's override (configrun.placement), as configs read from the user's paths;
    the daemon writes its own /var/log into the logs volume, and the watcher knows the config's name."""
    (tmp_path / "rsyslog.d").mkdir()
    (tmp_path / "rsyslog.conf").write_text('module(load="imtcp")\ninput(type="imtcp" port="514")\n')
    (tmp_path / "rsyslog.d" / "all.conf").write_text("*.* /var/log/all.log\n")
    user = ownconfig.load(tmp_path, "rsyslog", {"EXPECT_DROPPED": "local7.*"})
    spec = stack.stack(profiles.resolve("rsyslog8"), settings.from_env(env()))
    stack.with_user_config(spec, user, "seed2014")
    configs, services = spec["configs"], spec["services"]
    assert sorted(c["file"] for c in configs.values()) == [
        str(tmp_path / "rsyslog.conf"),
        str(tmp_path / "rsyslog.d" / "all.conf"),
    ]
    named = {name: c["file"] for name, c in configs.items()}
    daemon = {(named[c["source"]], c["target"]) for c in services["daemon"]["configs"]}
    watcher = {(named[c["source"]], c["target"]) for c in services["watcher"]["configs"]}
    where = configrun.placement(user, "seed2014")
    assert daemon == set(where.daemon) and watcher == set(where.watcher)
    assert (str(tmp_path / "rsyslog.conf"), "/etc/rsyslog.conf") in daemon
    assert (str(tmp_path / "rsyslog.d" / "all.conf"), "/etc/syslogbench/user/rsyslog.d/all.conf") in watcher
    logs = services["daemon"]["volumes"][1]
    assert logs == {"type": "volume", "source": "logs", "target": "/var/log", "volume": {"nocopy": True}}
    assert "CHOWN" in services["daemon"]["cap_add"]
    assert services["watcher"]["environment"]["USER_CONFIG"] == "rsyslog.conf"
    assert services["watcher"]["environment"]["EXPECT_DROPPED"] == "local7.*"
    assert all(name.startswith("userconfig-") and len(name) <= 64 for name in configs)
    assert "configs" not in rendered()


def test_the_stack_command_takes_a_config_and_refuses_its_settings_without_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(environment, "docker_version", lambda: "test")
    example = ROOT / "examples" / "syslog-ng-debian-trixie.conf"
    out = tmp_path / "stack.yaml"
    assert cli.main(["stack", "--profile", "syslog-ng", "--config", str(example), "--out", str(out)]) == 0
    spec = yaml.safe_load(out.read_text())
    assert [c["file"] for c in spec["configs"].values()] == [str(example)]
    capsys.readouterr()
    assert cli.main(["stack", "--profile", "rsyslog8", "--config", str(example)]) == 2
    assert "--profile syslog-ng" in capsys.readouterr().out
    assert cli.main(["stack", "--profile", "rsyslog8", "EXPECT_DROPPED=local7.*"]) == 2
    assert "EXPECT_DROPPED: only for a run with --config PATH" in capsys.readouterr().out
