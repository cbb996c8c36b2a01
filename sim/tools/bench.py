"""``python -m sim.tools.bench``: games per second on one core, and compiled vs interpreted.

Warms the compilation cache first (the time is reported apart: it is paid once per machine),
then plays 4-player games with random strategies (and with greedy) in one process pinned to one
core, several replays of the same games (the best replay is reported, the median beside it),
and times the same few games interpreted (a subprocess with NUMBA_DISABLE_JIT=1) for the
compiled/interpreted ratio. Prints a summary and writes bench/results.json.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np

from sim.core import rng
from sim.core.batch import STRATEGY_ID_DTYPE
from sim.core.machine import cpu_model
from sim.core.strategies import parse_strategy
from sim.neom import GAME
from sim.neom import records as R
from sim.neom.catalog import load_catalog
from sim.neom.tables import make_rules

N_PLAYERS = 4
RESULTS = Path("bench") / "results.json"


def run_games(tables, strategy: str, first: int, n_games: int, seed: int = 1) -> float:
    """Play games first..first+n_games-1 with every seat on ``strategy``; returns the CPU
    seconds they took (one thread plays them: on a shared VM, wall time also counts the time
    other guests take the core, which is not the code's speed)."""
    # The strategies through the Game interface: sim/ never imports strategies/ (one way).
    spec = parse_strategy(GAME.strategies, strategy)
    ids = np.arange(first, first + n_games, dtype=np.int64)
    games = np.zeros((n_games, R.N_GAME_COLS), dtype=np.int64)
    players = np.zeros((n_games, R.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int64)
    play_batch = GAME.play_batch_for([spec.id])  # the entry a run of this strategy uses
    start = time.process_time()
    play_batch(
        rng.master_key(seed),
        ids,
        ids,
        np.zeros((n_games, N_PLAYERS), dtype=np.int32),
        np.array([spec.id], dtype=STRATEGY_ID_DTYPE),
        spec.params.reshape(1, -1),
        tables.arrays,
        make_rules(),
        games,
        players,
        np.zeros((0, R.N_EVENT_COLS), dtype=np.int64),
    )
    return time.process_time() - start


def batch_rates(tables, strategy: str, first: int, n_games: int, batches: int) -> list[float]:
    """Games/s of ``batches`` replays of the same games: on a shared machine single timings
    vary by a quarter, the best replay is the figure that repeats."""
    return [n_games / run_games(tables, strategy, first, n_games) for _ in range(batches)]


def best_and_median(rates: list[float]) -> tuple[float, float]:
    return max(rates), statistics.median(rates)


def interpreted_seconds(strategy: str, n_games: int) -> float:
    """Seconds for games 0..n_games-1 played with NUMBA_DISABLE_JIT=1 in a subprocess."""
    code = (
        "import sys, warnings; warnings.simplefilter('ignore')\n"
        "from sim.tools.bench import run_games\nfrom sim.catalog import load_catalog\n"
        f"print(run_games(load_catalog(), {strategy!r}, 0, {n_games}))\n"
    )
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.tools.bench", description=__doc__)
    parser.add_argument("--games", type=int, default=4000, help="random games per replay")
    parser.add_argument("--replays", type=int, default=5, help="timed replays of those games")
    parser.add_argument("--quick", action="store_true", help="a short run (2 x 1000 games)")
    args = parser.parse_args(argv)
    if args.games < 1 or args.replays < 1:
        parser.error("--games and --replays must be at least 1")
    n_random = 1000 if args.quick else args.games
    replays = 2 if args.quick else args.replays
    n_greedy = max(10, n_random // 40)
    n_interpreted = 2 if args.quick else 5
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

    tables = load_catalog()
    start = time.perf_counter()
    run_games(tables, "random", 0, 1)
    run_games(tables, "greedy", 0, 1)
    warm = time.perf_counter() - start

    random_best, random_median = best_and_median(
        batch_rates(tables, "random", 1000, n_random, replays)
    )
    greedy_best, greedy_median = best_and_median(
        batch_rates(tables, "greedy", 1000, n_greedy, replays)
    )
    # The ratio compares the very same games: 0..n_interpreted-1, compiled many times over.
    repeats = 200
    compiled_s = min(run_games(tables, "random", 0, n_interpreted) for _ in range(repeats))
    interpreted_s = interpreted_seconds("random", n_interpreted)

    results = {
        "players": N_PLAYERS,
        "cores": 1,
        "cpu": cpu_model(),
        "numba": numba.__version__,
        "python": platform.python_version(),
        "catalog": tables.name,
        "warm_up_seconds": round(warm, 2),
        "replays": replays,
        "random_games": n_random,
        "random_games_per_second": round(random_best, 1),
        "random_games_per_second_median": round(random_median, 1),
        "greedy_games": n_greedy,
        "greedy_games_per_second": round(greedy_best, 2),
        "greedy_games_per_second_median": round(greedy_median, 2),
        "ratio_games": n_interpreted,
        "compiled_seconds_per_game": compiled_s / n_interpreted,
        "interpreted_seconds_per_game": interpreted_s / n_interpreted,
        "compiled_over_interpreted": round(interpreted_s / compiled_s, 1),
    }
    print(f"CPU: {results['cpu']}, 1 core, numba {results['numba']}")
    print(f"catalogue: {tables.name}")
    print(f"compile / cache load: {warm:.1f} s (once per machine)")
    print(
        f"{N_PLAYERS} players, random: {random_best:,.0f} games/s "
        f"(best of {replays} replays of {n_random} games; median {random_median:,.0f})"
    )
    print(
        f"{N_PLAYERS} players, greedy: {greedy_best:,.1f} games/s "
        f"(best of {replays} replays of {n_greedy} games; median {greedy_median:,.1f})"
    )
    print(
        f"compiled vs interpreted (random, same {n_interpreted} games): "
        f"{results['compiled_over_interpreted']:,.0f}x"
    )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(f"written: {RESULTS}")
    return 0


if __name__ == "__main__":
    from sim.core.cli import guarded

    sys.exit(guarded(main, "python -m sim.tools.bench"))
