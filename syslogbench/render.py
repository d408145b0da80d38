"""Render each daemon's config from its family template and its manifest.

The rendered files are committed beside the manifest, so a plain `docker compose up` needs no Python;
a unit test checks that they match what this module renders.
"""

from __future__ import annotations

from pathlib import Path

import jinja2

from syslogbench.profiles import DAEMONS, Profile, all_profiles

TEMPLATES = DAEMONS / "_templates"
LOG_DIR = "/var/log/bench"
PORT = 514


def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render(profile: Profile, **overrides: object) -> str:
    context = {
        "profile": profile.profile,
        "daemon": profile.daemon,
        "port": PORT,
        "log_dir": LOG_DIR,
        **profile.config.get("params", {}),
        **overrides,
    }
    return environment().get_template(profile.config["template"]).render(context)


def config_path(profile: Profile) -> Path:
    return profile.folder / profile.config["file"]


def render_all() -> list[Path]:
    written = []
    for profile in all_profiles():
        if "template" not in profile.config:
            continue  # hand-written (the baseline receiver)
        path = config_path(profile)
        path.write_text(render(profile))
        written.append(path)
    return written


if __name__ == "__main__":
    for path in render_all():
        print(f"rendered {path.relative_to(DAEMONS.parent)}")
