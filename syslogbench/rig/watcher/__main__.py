"""`python3 -m syslogbench.rig.watcher`: the watcher image's command."""

import sys

from syslogbench.rig.watcher.run import main

sys.exit(main())
