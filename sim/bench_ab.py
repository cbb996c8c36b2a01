"""``python -m sim.bench_ab``: the paired speed comparison of two checkouts
(:mod:`sim.tools.bench_ab`), under the name every speed figure of the project cites."""

import sys

from sim.tools.bench_ab import main

if __name__ == "__main__":
    from sim.core.cli import guarded

    sys.exit(guarded(main, "python -m sim.bench_ab"))
