"""`python -m syslogbench`: the report renders what the host side runs, so both are wired up here."""

import sys

from syslogbench.contract import EXIT_CODES  # stdlib only

try:
    from syslogbench.host import cli
    from syslogbench.report import build as report
except ModuleNotFoundError as missing:  # a Python without requirements.txt: one line, not a traceback
    print(
        f"syslogbench: error: this Python lacks the module {missing.name!r}: run `make setup` once, then "
        "`.venv/bin/python -m syslogbench ...` (or activate .venv)",
        file=sys.stderr,
    )
    sys.exit(EXIT_CODES["bad-input"])  # nothing started

sys.exit(cli.main(sys.argv[1:], show=report.show_run, report=report.main))
