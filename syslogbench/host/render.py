"""Render each daemon's config from its family template and its manifest.

The rendered files are committed beside the manifest, so a plain `docker compose up` needs no Python;
a unit test checks that they match what this module renders.
"""

from __future__ import annotations

from pathlib import Path

import jinja2

from syslogbench import contract
from syslogbench.host.profiles import DAEMONS, Profile, all_profiles
from syslogbench.model import preprocess, scenarios

TEMPLATES = DAEMONS / "_templates"
LOG_DIR = "/var/log/bench"  # as the daemon container mounts the logs volume
PORT = contract.CENTRAL_PORT
# Where the watcher writes a TLS scenario's CA, server certificate and key (the control volume).
TLS_DIR = f"/bench/control/{contract.TLS_SUBDIR}"


def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render(profile: Profile, scenario: scenarios.Scenario | None = None, **overrides: object) -> str:
    scenario = scenario or scenarios.load(scenarios.DEFAULT)
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
        "queue_dir": "/var/spool/bench-queue",  # as the daemon container mounts the queue volume
        "queue_bytes": contract.QUEUE_CAPACITY_BYTES,
        **profile.config.get("params", {}),
        **overrides,
    }
    return environment().get_template(profile.config["template"]).render(context)


def config_path(profile: Profile, scenario_id: str = scenarios.DEFAULT) -> Path:
    """Rendered configs live per scenario; the supervisor links the one SCENARIO names to active.conf."""
    return profile.folder / "scenarios" / f"{scenario_id}.conf"


def render_all() -> list[Path]:
    """Every (profile, scenario) the profile supports; unsupported pairs get no file (the run says n/a)."""
    written = []
    for profile in all_profiles():
        if "template" not in profile.config:
            continue  # hand-written (the baseline receiver)
        folder = profile.folder / "scenarios"
        folder.mkdir(exist_ok=True)
        for stale in folder.glob("*.conf"):
            stale.unlink()
        for scenario in scenarios.all_scenarios():
            if scenarios.unsupported(scenario, profile.features):
                continue
            path = config_path(profile, scenario.id)
            path.write_text(render(profile, scenario))
            written.append(path)
    return written


if __name__ == "__main__":
    for path in render_all():
        print(f"rendered {path.relative_to(DAEMONS.parent)}")
