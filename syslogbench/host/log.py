"""The one line the host says at a time, prefixed so a user can tell it from compose's and the daemon's."""

from __future__ import annotations


def log(text: str) -> None:
    print(f"syslogbench: {text}", flush=True)
