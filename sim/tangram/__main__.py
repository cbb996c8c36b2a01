"""``python -m sim.tangram tileset ...``: Tangram City's own command (sim.tangram.commands)."""

import sys

from sim.tangram.commands import main

sys.exit(main())
