"""The stack file for Docker Swarm (`docker stack deploy`), from the same model as compose.yaml: the profile's
manifest, the validated settings, the contract's names.

What `docker stack deploy` takes differs from compose (docs/swarm.md): no `build`, `depends_on`, `profiles`,
`group_add`, `security_opt` or `pids_limit`; limits only under `deploy.resources`; named volumes per node;
tasks restart unless told not to. So the watcher, the daemon and the last hop, which share volumes, are placed
on the node labelled syslogbench.role=central, and the generators on the nodes labelled generator.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import yaml

from syslogbench import contract
from syslogbench.host import configrun, ownconfig
from syslogbench.host.profiles import Profile
from syslogbench.host.render import ComposeDumper
from syslogbench.model import settings, userconfig

if TYPE_CHECKING:
    from syslogbench.host.runplan import Plan

DAEMON_SERVICE = "daemon"  # the daemon under test, whichever profile; it also answers to `central`
STACK_VERSION = "3.9"  # what Docker 20.10's swarm takes (deploy.resources.limits.pids needs API 1.41)
# The lifetime of a daemon or last hop whose watcher vanished, as in compose.
MAX_LIFETIME = contract.SUPERVISOR_ENV["MAX_LIFETIME"]
# Swarm's template for the node a task runs on: the result's topology names nodes by it.
NODE_HOSTNAME = "{{.Node.Hostname}}"


def placed(role: str) -> dict:
    return {"constraints": [f"node.labels.{contract.ROLE_LABEL} == {role}"]}


def deploy(role: str, cpus: int, memory: int, pids: int, replicas: int = 1) -> dict:
    """One task per replica, never restarted (a restarted sender or daemon would be another run), reached by
    its name's DNS records (dnsrr: no virtual IP, so the senders' connections go to the task itself)."""
    return {
        "replicas": replicas,
        "endpoint_mode": "dnsrr",
        "restart_policy": {"condition": "none"},
        "placement": placed(role),
        "resources": {"limits": {"cpus": str(cpus), "memory": str(memory), "pids": pids}},
    }


def image(name: str, registry: str | None, tag: str | None) -> str:
    """syslogbench/<name>:<tag>, behind the registry prefix when the nodes pull from one."""
    plain = contract.image_name(name, tag)
    return f"{registry.rstrip('/')}/{plain}" if registry else plain


def watcher_env(cfg: settings.Settings, docker_version: str, tag: str) -> dict[str, str]:
    """The settings as the watcher reads them; the generators get them from the watcher (docs/DESIGN.md)."""
    return {
        "SCENARIO": cfg.scenario,
        "CENTRAL_CPUS": str(cfg.central_cpus),
        "CENTRAL_MEM": str(cfg.central_mem),
        "REMOTE_CPUS": str(cfg.remote_cpus),
        "REMOTE_MEM": str(cfg.remote_mem),
        "RUN_TIMEOUT": str(cfg.run_timeout),
        "LEDGER_WAIT": str(cfg.ledger_wait),
        "TUNING": cfg.tuning,
        "KEEP_LOGS": "1" if cfg.keep_logs else "0",
        "HOSTS": str(cfg.hosts),
        "SENDERS_PER_HOST": str(cfg.senders_per_host),
        "MESSAGES_PER_SENDER": str(cfg.messages_per_sender),
        "DOCKER_VERSION": docker_version,
        "IMAGE_TAG": tag,
        # No bind mount of the user's results/ on a remote node: the result comes back on the watcher's output.
        "RESULT_ON_OUTPUT": "1",
        "SWARM": "1",
        "NODE_HOSTNAME": NODE_HOSTNAME,
    }


def watcher(cfg: settings.Settings, registry: str | None, tag: str, docker_version: str) -> dict:
    return {
        "image": image("watcher", registry, tag),
        "environment": watcher_env(cfg, docker_version, tag),
        "volumes": [contract.volume("control"), contract.volume("logs"), contract.volume("queue")],
        "networks": [contract.NETWORK],
        "stop_grace_period": "120s",
        # Root with two capabilities. DAC_OVERRIDE as in compose.yaml. CHOWN: the stack format has no
        # group_add, so the entry point's chgrp of the volumes to the last hop's group needs it.
        "user": "0:0",
        "cap_drop": ["ALL"],
        "cap_add": ["CHOWN", "DAC_OVERRIDE"],
        "deploy": deploy(contract.CENTRAL_ROLE, 1, 1024**3, 256),
    }


def daemon(profile: Profile, cfg: settings.Settings, registry: str | None, tag: str, cpus: int) -> dict:
    return {
        "image": image(profile.profile, registry, tag),
        "environment": {"MAX_LIFETIME": MAX_LIFETIME, "SCENARIO": cfg.scenario, "TUNING": cfg.tuning},
        "volumes": [contract.volume("control"), contract.volume("logs"), contract.volume("queue")],
        "networks": {contract.NETWORK: {"aliases": [contract.CENTRAL_HOST]}},
        "stop_grace_period": "90s",
        # As in compose.daemons.yaml: port 514 is below 1024.
        "cap_drop": ["ALL"],
        "cap_add": ["NET_BIND_SERVICE"],
        "deploy": deploy(contract.CENTRAL_ROLE, cpus, cfg.central_mem, 1024),
    }


def lasthop(cfg: settings.Settings, registry: str | None, tag: str) -> dict:
    return {
        "image": image("generator", registry, tag),
        "command": ["python3", "-m", "syslogbench.rig.lasthop"],
        "environment": {"MAX_LIFETIME": MAX_LIFETIME, "SCENARIO": cfg.scenario},
        "volumes": [contract.volume("control"), contract.volume("logs")],
        "networks": [contract.NETWORK],
        "cap_drop": ["ALL"],
        "deploy": deploy(contract.CENTRAL_ROLE, cfg.remote_cpus, cfg.remote_mem, 128),
    }


def generator(cfg: settings.Settings, registry: str | None, tag: str, generator_nodes: int | None) -> dict:
    """HOSTS replicas, spread over the generator nodes: one per node where there are enough nodes."""
    spec = deploy(contract.GENERATOR_ROLE, cfg.remote_cpus, cfg.remote_mem, 1024, replicas=cfg.hosts)
    spec["placement"]["preferences"] = [{"spread": "node.id"}]
    if generator_nodes:
        spec["placement"]["max_replicas_per_node"] = math.ceil(cfg.hosts / generator_nodes)
    # No volume: the generators get the settings and the CA from the watcher over TCP and send their
    # ledgers back the same way (docs/DESIGN.md, "The control channel").
    return {
        "image": image("generator", registry, tag),
        "environment": {"NODE_HOSTNAME": NODE_HOSTNAME},
        "networks": [contract.NETWORK],
        "cap_drop": ["ALL"],
        "deploy": spec,
    }


def stack(
    profile: Profile,
    cfg: settings.Settings,
    registry: str | None = None,
    tag: str | None = None,
    docker_version: str = "",
    generator_nodes: int | None = None,
    central_cores: int | None = None,
    capacity_env: dict[str, str] | None = None,
) -> dict:
    """The stack as a mapping. central_cores: the central node's cores, when known; Docker refuses a CPU
    limit above them, so the daemon's limit is cut to them (the result records both). A config of the user's
    own (--config) goes in by with_user_config, which plan_text applies. capacity_env: more of
    the watcher's environment (a capacity search's, host/capacity/command.py)."""
    tag = tag or contract.image_tag()
    cpus = min(cfg.central_cpus, central_cores) if central_cores else cfg.central_cpus
    spec = {
        "version": STACK_VERSION,
        "services": {
            "watcher": watcher(cfg, registry, tag, docker_version),
            # Not the profile's name, as in compose: Swarm refuses a dot in a service name (rsyslog-8.2504).
            DAEMON_SERVICE: daemon(profile, cfg, registry, tag, cpus),
            "generator": generator(cfg, registry, tag, generator_nodes),
            "lasthop": lasthop(cfg, registry, tag),
        },
        # Overlay: the tasks of one run find each other by name across nodes; nothing is published.
        "networks": {contract.NETWORK: {"driver": "overlay"}},
        "volumes": {
            # The control files live in memory, so every run starts from an empty directory: a named volume
            # outlives `docker stack rm` on its node, and a stale run.json or finish would end the next run.
            "control": {"driver": "local", "driver_opts": {"type": "tmpfs", "device": "tmpfs"}},
            "logs": {},
            "queue": {},
        },
    }
    spec["services"]["watcher"]["environment"].update(capacity_env or {})
    return spec


def with_user_config(spec: dict, user: ownconfig.UserConfig, scenario: str) -> None:
    """The user's files as swarm configs (read from their paths by `docker stack deploy`, on the machine it
    runs on), placed as on one host (configrun.placement); the daemon's logs volume on /var/log itself. Each
    config's name holds the files' sha256: a swarm config cannot change, so another config is another name."""
    where = configrun.placement(user, scenario)
    sha = str(user.identity()["sha256"])[:12]
    sources = list(dict.fromkeys(source for source, _ in [*where.daemon, *where.watcher]))
    names = {source: f"userconfig-{sha}-{index}" for index, source in enumerate(sources)}
    spec["configs"] = {names[source]: {"file": source} for source in sources}
    daemon, watcher_spec = spec["services"][DAEMON_SERVICE], spec["services"]["watcher"]
    daemon["cap_add"] = [*daemon["cap_add"], *configrun.DAEMON_CAPS]
    daemon["volumes"] = [
        contract.volume("control"),
        {"type": "volume", "source": "logs", "target": userconfig.DAEMON_LOG_DIR, "volume": {"nocopy": True}},
        contract.volume("queue"),
    ]
    daemon["configs"] = [{"source": names[source], "target": target} for source, target in where.daemon]
    watcher_spec["environment"].update(where.environment)
    watcher_spec["configs"] = [
        {"source": names[source], "target": target} for source, target in where.watcher
    ]


HEADER = """\
# Written by `python -m syslogbench stack --profile {profile}` for scenario {scenario} ({variant}).
# Deploy with `docker stack deploy -c FILE NAME` on a swarm whose nodes carry the label {label}:
# one node `{central}` (watcher, daemon, last hop: they share volumes), and `{generator}` nodes for the
# {hosts} generator replicas. docs/swarm.md has the steps; `python -m syslogbench run --swarm` does them.
"""


def text(spec: dict, profile: Profile, cfg: settings.Settings) -> str:
    """The stack file: its header, then the mapping as YAML."""
    body = yaml.dump(
        spec,
        Dumper=ComposeDumper,
        sort_keys=False,
        default_flow_style=False,
        width=1000,
    )
    header = HEADER.format(
        profile=profile.profile,
        scenario=cfg.scenario,
        variant=cfg.variant,
        label=contract.ROLE_LABEL,
        central=contract.CENTRAL_ROLE,
        generator=contract.GENERATOR_ROLE,
        hosts=cfg.hosts,
    )
    return header + body


def plan_text(chosen: Plan, **options: object) -> str:
    """The plan's stack file, with the user's config, if any, in place of the profile's (options: stack()'s)."""
    spec = stack(chosen.profile, chosen.cfg, **options)  # type: ignore[arg-type]
    if chosen.user is not None:
        with_user_config(spec, chosen.user, chosen.cfg.scenario)
    return text(spec, chosen.profile, chosen.cfg)
