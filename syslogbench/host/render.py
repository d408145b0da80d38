"""Render, from the manifests, each daemon's configs and what compose needs per daemon version.

The rendered files are committed (the configs beside each manifest, compose.daemons.yaml and
compose.profiles.yaml beside compose.yaml), so a plain `docker compose up` needs no Python; a unit test
checks that they match what this module renders. So is the scenario part of results/schema.json, from the
scenario's field records.
"""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
import yaml

from syslogbench import contract
from syslogbench.host import families, tuning
from syslogbench.host.profiles import DAEMONS, ROOT, Profile, all_profiles, names
from syslogbench.model import preprocess, result, scenarios

TEMPLATES = DAEMONS / "_templates"
RESULT_SCHEMA = ROOT / "results" / "schema.json"
# compose.yaml includes the first and extends the harness services from the second (see their headers).
COMPOSE_DAEMONS = ROOT / "compose.daemons.yaml"
COMPOSE_PROFILES = ROOT / "compose.profiles.yaml"
LOG_DIR = contract.LOG_MOUNT  # as the daemon container mounts the logs volume
PORT = contract.CENTRAL_PORT
# Where the watcher writes a TLS scenario's CA, server certificate and key (the control volume).
TLS_DIR = f"{contract.CONTROL_MOUNT}/{contract.TLS_SUBDIR}"


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["yaml_block"] = yaml_block
    return env


class ComposeDumper(yaml.SafeDumper):
    """Block YAML with each list on one line, as compose.yaml writes `profiles: [a, b]`."""


ComposeDumper.add_representer(
    list, lambda dumper, data: dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)
)


def yaml_block(data: dict, indent: int, one_line_lists: bool = True) -> str:
    """A mapping as block YAML, indented to sit under a key."""
    dumper = ComposeDumper if one_line_lists else yaml.SafeDumper
    text = yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False, width=1000)
    return "\n".join(" " * indent + line for line in text.splitlines())


def compose_value(text: str) -> str:
    """Compose interpolates ${...} in every value: a literal $ in a manifest value is written $$."""
    return text.replace("$", "$$")


def render(
    profile: Profile,
    scenario: scenarios.Scenario | None = None,
    applied: tuning.Applied | None = None,
    **overrides: object,
) -> str:
    """One config: the profile's template for the scenario, with the knobs `applied` names (none: default)."""
    scenario = scenario or scenarios.load(scenarios.DEFAULT)
    applied = applied or tuning.Applied(tuning.DEFAULT, {})
    if scenario.preprocess != "none" and scenario.destination != "plain":
        # The templates write the pre-processing rows to one plain file only.
        raise ValueError(
            f"scenario {scenario.id}: preprocess {scenario.preprocess!r} is rendered for destination plain only"
        )
    context = {
        "scenario": scenario,
        **preprocess.daemon_params(),
        "profile": profile.profile,
        "daemon": profile.daemon,
        "port": PORT,
        "log_dir": LOG_DIR,
        "tls_dir": TLS_DIR,
        "relay_host": contract.LASTHOP_HOST,
        "relay_port": contract.LASTHOP_PORT,
        "queue_dir": contract.QUEUE_MOUNT,  # as the daemon container mounts the queue volume
        "queue_bytes": contract.QUEUE_CAPACITY_BYTES,
        **profile.config.get("params", {}),
        **knob_functions(profile, applied),
        **overrides,
    }
    return environment().get_template(profile.config["template"]).render(context)


def knob_functions(profile: Profile, applied: tuning.Applied) -> dict[str, object]:
    """What a template asks of the knobs: params(slot), each parameter of the slot as the family writes one
    (with a leading space; empty when none), and knob(slot, param, otherwise), one value."""
    if not applied.values:
        return {
            "params": lambda slot: "",
            "statements": lambda slot: "",
            "knob": lambda slot, param, otherwise: otherwise,
        }
    family = families.get(profile.daemon)
    slots = applied.slots(family.knobs)

    def written(slot: str) -> list[str]:
        if slot not in family.slots:
            raise ValueError(f"template asks for slot {slot!r}, which {family.family} does not declare")
        return [family.param_style.format(key=key, value=value) for key, value in slots.get(slot, {}).items()]

    def params(slot: str) -> str:
        return "".join(f" {param}" for param in written(slot))

    def statements(slot: str) -> str:
        """The same, each ended by a semicolon (syslog-ng's options {} and a log path's flags)."""
        return "".join(f" {param};" for param in written(slot))

    def knob(slot: str, param: str, otherwise: str) -> str:
        return slots.get(slot, {}).get(param, otherwise)

    return {"params": params, "statements": statements, "knob": knob}


def applied_for(profile: Profile, scenario: scenarios.Scenario, chosen: str) -> tuning.Applied:
    """The knobs a profile's `chosen` tuning renders for a scenario."""
    return tuning.applied(chosen, families.get(profile.daemon).knobs, target(profile, scenario))


def target(profile: Profile, scenario: scenarios.Scenario) -> tuning.Target:
    return tuning.Target(scenario, profile.version, profile.config.get("params", {}))


def tunings(profile: Profile) -> tuple[str, ...]:
    """The tunings rendered for a profile: tuned only for the Debian versions (the registry-based ones are
    the 2014 daemons, kept at their defaults), and only where the family has knobs."""
    if profile.registry_image or "template" not in profile.config:
        return (tuning.DEFAULT,)
    return tuning.TUNINGS if families.get(profile.daemon).knobs else (tuning.DEFAULT,)


def config_path(profile: Profile, scenario_id: str = scenarios.DEFAULT, chosen: str = tuning.DEFAULT) -> Path:
    """Rendered configs live per tuning and scenario; the supervisor links the one TUNING and SCENARIO name
    to active.conf."""
    return profile.folder / contract.TUNING_FOLDERS[chosen] / f"{scenario_id}.conf"


def knobs_path(profile: Profile, scenario_id: str, chosen: str) -> Path:
    """Beside a tuned config, what it was rendered with: the supervisor hands it to the watcher."""
    return config_path(profile, scenario_id, chosen).with_suffix(".yaml")


def knobs_text(profile: Profile, applied: tuning.Applied) -> str:
    record = applied.record(families.get(profile.daemon).knobs)
    header = (
        f"# Rendered by `python -m syslogbench render` for {profile.profile}: the knobs of this config.\n"
    )
    return header + yaml.safe_dump(record, sort_keys=False, width=1000)


def build(profile: Profile) -> dict:
    """The compose `build:` of a version: its family's stage of daemons/Dockerfile with the manifest's values,
    or the registry-based version's own Dockerfile as it is."""
    dockerfile = str(profile.dockerfile.relative_to(DAEMONS))
    if profile.target is None:
        return {"context": "daemons", "dockerfile": dockerfile}
    args = {
        "SUITE": profile.base,
        "PACKAGES": " ".join(profile.packages),
        "VERSION_CMD": profile.version_cmd,
        "PROFILE": profile.profile,
    }
    args = {key: compose_value(value) for key, value in args.items()}
    return {"context": "daemons", "dockerfile": dockerfile, "target": profile.target, "args": args}


def compose_service(profile: Profile) -> dict:
    """What a daemon service adds to the shared x-daemon block of compose.daemons.yaml."""
    return {
        "profiles": [profile.profile, *profile.aliases],
        "build": build(profile),
        "image": f"{contract.IMAGE_PREFIX}/{profile.profile}:${{IMAGE_TAG:-{contract.DEFAULT_IMAGE_TAG}}}",
    }


def compose_files() -> dict[Path, str]:
    """compose.daemons.yaml (one service per version) and compose.profiles.yaml (every profile name)."""
    every = names()  # refuses a name two versions claim, before anything is written
    services = {profile.profile: compose_service(profile) for profile in all_profiles()}
    template = environment().get_template
    return {
        COMPOSE_DAEMONS: template("compose.daemons.yaml.j2").render(services=services),
        COMPOSE_PROFILES: template("compose.profiles.yaml.j2").render(service={"profiles": list(every)}),
    }


def result_schema(text: str) -> str:
    """results/schema.json (its text) with the scenario part as the result model has it: the run's shape as the
    file describes it, then each axis of the scenario file from its record (model/scenarios.py FIELDS)."""
    node = json.loads(text)["properties"]["scenario"]
    shape = {name: node["properties"][name] for name in result.RunShape.__dataclass_fields__}
    node["properties"] = shape | {axis.name: axis.schema() for axis in result.RESULT_AXES}
    begin, end = '\n    "scenario": {\n', "\n    },\n"
    start = text.index(begin)
    stop = text.index(end, start + len(begin))
    return text[:start] + "\n" + schema_block("scenario", node, "    ") + text[stop + len("\n    }") :]


def schema_block(name: str, node: dict, indent: str) -> str:
    """One object of the schema in the file's layout: each keyword on its line, each property on one line."""
    inner, item = indent + "  ", indent + "    "
    lines = [
        f"{inner}{json.dumps(key)}: {json.dumps(value)},"
        for key, value in node.items()
        if key != "properties"
    ]
    properties = [
        f"{item}{json.dumps(key)}: {json.dumps(value)}" for key, value in node["properties"].items()
    ]
    body = "\n".join([*lines, f'{inner}"properties": {{', ",\n".join(properties), f"{inner}}}"])
    return f"{indent}{json.dumps(name)}: {{\n{body}\n{indent}}}"


def render_tuning(profile: Profile, chosen: str | None) -> list[Path]:
    """One tuning's configs of a profile, the folder emptied first; None: the profile has no such tuning
    (its folder goes)."""
    folder = profile.folder / contract.TUNING_FOLDERS[chosen or tuning.TUNINGS[-1]]
    for stale in [*folder.glob("*.conf"), *folder.glob("*.yaml")]:
        stale.unlink()
    if chosen is None:
        if folder.is_dir():
            folder.rmdir()
        return []
    folder.mkdir(exist_ok=True)
    written = []
    for scenario in scenarios.all_scenarios():
        if scenarios.unsupported(scenario, profile.features):
            continue
        applied = applied_for(profile, scenario, chosen)
        path = config_path(profile, scenario.id, chosen)
        path.write_text(render(profile, scenario, applied))
        written.append(path)
        if chosen != tuning.DEFAULT:
            knobs_path(profile, scenario.id, chosen).write_text(knobs_text(profile, applied))
            written.append(knobs_path(profile, scenario.id, chosen))
    return written


def render_all() -> list[Path]:
    """Every (profile, scenario) the profile supports; unsupported pairs get no file (the run says n/a).
    Then the compose files. Every manifest is read and checked before anything is written."""
    compose = compose_files()
    if RESULT_SCHEMA.exists():  # a copy of the harness without results/ has no schema to keep in step
        compose[RESULT_SCHEMA] = result_schema(RESULT_SCHEMA.read_text())
    written = []
    for profile in all_profiles():
        if "template" not in profile.config:
            continue  # hand-written (the baseline receiver)
        for chosen in tuning.TUNINGS:
            written += render_tuning(profile, chosen if chosen in tunings(profile) else None)
    for path, text in compose.items():
        path.write_text(text)
        written.append(path)
    return written


if __name__ == "__main__":
    for path in render_all():
        print(f"rendered {path.relative_to(DAEMONS.parent)}")
