"""`python -m syslogbench`: the report renders what the host side runs, so both are wired up here."""

import sys

from syslogbench.host import cli
from syslogbench.report import build as report


def main(argv: list[str]) -> int:
    if argv[:1] == ["report"]:  # its own flags (--out, --html, ...) go to the report unchanged
        return report.main(argv[1:])
    return cli.main(argv, show=report.show_run)


sys.exit(main(sys.argv[1:]))
