"""One command in an image by `docker run`, with no network and removed after: how the host reads an image or
has a daemon check a config (setup, a --config run, a knob study) without the run's containers."""

from __future__ import annotations

from syslogbench.host.compose import APART


def offline_run(image: str, command: list[str], stdin: bool = False) -> list[str]:
    """`docker run` of one command in `image` with no network, removed after: the argv; stdin: the command
    reads the caller's standard input. A check of an image or a config must not reach anything, nor leave a
    container behind."""
    return ["docker", "run", "--rm", *APART, *(["-i"] if stdin else []), "--network", "none", "--entrypoint", command[0],
            image, *command[1:]]  # fmt: skip
