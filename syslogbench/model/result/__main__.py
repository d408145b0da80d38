"""python -m syslogbench.model.result FILE...: checks that each file loads into the model."""

import sys

from syslogbench.model.result.document import main

sys.exit(main(sys.argv[1:]))
