"""``python -m strategies.bench``: games per second of greedy and the archetypes on one core.

4-player games with every seat on the same strategy, played by ``sim.bench.run_games`` (no
events, no files) in one process, pinned to one core when run as a command, after a warm-up
that loads (or pays) the compile cache. Prints one line per strategy and writes
bench/strategies.json.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

from sim.bench import N_PLAYERS, cpu_model, run_games
from sim.catalog import load_catalog
from strategies.archetypes import ARCHETYPES

STRATEGIES = ("greedy", *(archetype.name for archetype in ARCHETYPES))
RESULTS = Path("bench") / "strategies.json"
FIRST_GAME = 1000  # the timed games: the same ids for every strategy and every run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m strategies.bench", description=__doc__)
    parser.add_argument("--games", type=int, default=2000, help="games per strategy")
    parser.add_argument("--quick", action="store_true", help="a short run (200 games each)")
    parser.add_argument(
        "--strategies", default=",".join(STRATEGIES), help="comma-separated strategy names"
    )
    args = parser.parse_args(argv)
    n_games = 200 if args.quick else args.games
    names = [name.strip() for name in args.strategies.split(",") if name.strip()]

    tables = load_catalog()
    start = time.perf_counter()
    for name in names:
        run_games(tables, name, 0, 1)
    warm = time.perf_counter() - start

    rates = {}
    print(f"CPU: {cpu_model()}; {N_PLAYERS} players, every seat the same strategy")
    print(f"compile / cache load: {warm:.1f} s (once per machine)")
    for name in names:
        seconds = run_games(tables, name, FIRST_GAME, n_games)
        rates[name] = round(n_games / seconds, 1)
        print(f"{name:>14}: {rates[name]:8,.1f} games/s ({n_games} games)", flush=True)
    results = {
        "players": N_PLAYERS,
        "cpu": cpu_model(),
        "catalog": tables.name,
        "games": n_games,
        "warm_up_seconds": round(warm, 2),
        "games_per_second": rates,
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(f"written: {RESULTS}")
    return 0


if __name__ == "__main__":
    # One core, as sim.bench (here, not in main, so that a test does not pin its process).
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    sys.exit(main())
