"""`python3 -m syslogbench.rig.watcher`: the watcher image's command."""

import sys

from syslogbench.rig import trials
from syslogbench.rig.watcher import run, trialrun

# A capacity search (CAPACITY=1) serves trials until the host ends them (docs/capacity.md).
sys.exit(trialrun.main() if trials.enabled() else run.main())
