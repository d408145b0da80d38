import sys

from syslogbench.cli import main

sys.exit(main())
