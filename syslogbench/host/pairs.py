"""The command line's KEY=VALUE pairs, read the same way by every command."""

from __future__ import annotations

from syslogbench.model import settings


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    """KEY=VALUE pairs; every malformed pair and every key given twice listed at once."""
    overrides, bad = read_pairs(pairs)
    if bad:
        raise settings.SettingsError(settings.listed("invalid arguments", bad))
    return overrides


def read_pairs(pairs: list[str]) -> tuple[dict[str, str], list[str]]:
    """The well-formed pairs, and a problem for each other one (`check` goes on with the former)."""
    overrides: dict[str, str] = {}
    bad = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isupper():
            bad.append(f"{pair!r} is not KEY=VALUE: write e.g. HOSTS=2 (keys as in .env)")
        elif key in overrides and overrides[key] != value:
            bad.append(f"{key} is given twice ({key}={overrides[key]}, then {pair}): give it once")
        else:
            overrides[key] = value
    return overrides, bad
