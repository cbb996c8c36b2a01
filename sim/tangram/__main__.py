"""``python -m sim.tangram COMMAND``: Tangram City's commands (sim.tangram.commands)."""

import sys

from sim.tangram.commands import main

sys.exit(main())
