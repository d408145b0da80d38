"""`python -m syslogbench`: the report renders what the host side runs, so both are wired up here."""

import sys

from syslogbench.host import cli
from syslogbench.report import build as report

sys.exit(cli.main(sys.argv[1:], show=report.show_run, report=report.main))
