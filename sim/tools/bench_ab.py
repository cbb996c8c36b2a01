"""Paired speed comparison of two checkouts of the project: the same games, timed in turns.

On a shared VM one timing varies by a quarter, more than most changes are worth, and the noise
comes in phases of seconds. So each checkout gets its own worker process (its sources on
``PYTHONPATH``), both pinned to the same core, and the driver asks them
in turns, round after round, for short batches of the same games (``sim.bench.run_games``, CPU
seconds). Both see the same phases; the best and the median of each side are compared.

    python -m sim.bench_ab OLD_CHECKOUT NEW_CHECKOUT [--jobs random:500,greedy:60] [--rounds 20]
    python -m sim.bench_ab OLD NEW --game tangram --jobs greedy:300,planner+greedy+greedy+random:10

For Tangram City a job's strategy is one name (4 seats of it) or a lineup joined by ``+`` (one
seat each); each side also reports a digest of the games it played, and a difference between
the two sides stops the comparison (they did not play the same games).

A checkout is a folder holding ``sim/`` (a git worktree of an older commit works). Both
compile into the driver's compile cache, whose entries are keyed on each module's sources
(``sim.cache_key``), so a checkout loads what any other checkout of the same code compiled and
compiles only the modules that differ (a checkout from before those keys files its cache
under a folder of its own version there). The games played depend only on
the seed, so both sides play the same games if their rules agree.
"""

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
from pathlib import Path

from sim.core.machine import cache_env

# Runs inside each checkout: only run_games and load_catalog, which every version of the
# project has (in sim/ before the Game interface, in sim/tools and sim/neom since).
WORKER = """
import os, sys
core = int(os.environ["NEOM_AB_CORE"])
if core >= 0:
    os.sched_setaffinity(0, {core})
try:
    from sim.tools.bench import run_games
    from sim.neom.catalog import load_catalog
except ImportError:
    from sim.bench import run_games
    from sim.catalog import load_catalog
tables = load_catalog()
for strategy in sys.argv[1:]:
    run_games(tables, strategy, 0, 2)
print("ready", flush=True)
for line in sys.stdin:
    strategy, n = line.split()
    print(int(n) / run_games(tables, strategy, 1000, int(n)), flush=True)
"""


NEOM_JOBS = "random:500,greedy:60,builder:30"
TANGRAM_JOBS = "random:2000,greedy:300,planner+greedy+greedy+random:10"

# Tangram City's worker: only what every version since the game's first has (sim.tangram, its
# tile set and rules, strategies.tangram's registry), so an old checkout runs it too.
TANGRAM_WORKER = """
import hashlib, os, sys, time
import numpy as np
core = int(os.environ["NEOM_AB_CORE"])
if core >= 0:
    os.sched_setaffinity(0, {core})
from sim.core import rng
from sim.tangram import GAME
from sim.tangram import constants as K
from sim.tangram import records as R
from sim.tangram.rules import make_rules
from sim.tangram.tileset import load_tileset
from strategies.tangram.registry import parse_strategy
data = load_tileset()
rules = make_rules()

def play(lineup, first, n):
    names = lineup.split("+")
    specs = [parse_strategy(s) for s in (names * 4 if len(names) == 1 else names)]
    ids = np.arange(first, first + n, dtype=np.int64)
    seats = np.tile(np.arange(len(specs), dtype=np.int32), (n, 1))
    games = np.zeros((n, R.N_GAME_COLS), dtype=np.int64)
    players = np.zeros((n, K.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int64)
    start = time.thread_time()
    GAME.play_batch(rng.master_key(1), ids, ids, seats,
                    np.array([s.id for s in specs], dtype=np.int32),
                    np.stack([s.params for s in specs]).astype(np.float64), data.arrays, rules,
                    games, players, np.zeros((0, R.N_EVENT_COLS), dtype=np.int64))
    seconds = time.thread_time() - start
    digest = hashlib.sha256(games.tobytes() + players.tobytes()).hexdigest()[:16]
    return n / seconds, digest

for lineup in sys.argv[1:]:
    play(lineup, 0, 1)
print("ready", flush=True)
for line in sys.stdin:
    lineup, n = line.split()
    print(*play(lineup, 1000, int(n)), flush=True)
"""


def parse_jobs(text: str) -> list[tuple[str, int]]:
    jobs = []
    for item in text.split(","):
        name, _, count = item.rpartition(":")  # a Tangram lineup may hold "planner:samples=2"
        if not name or not count.isdigit() or int(count) < 1:
            raise SystemExit(f"bench_ab: --jobs item {item!r} is not STRATEGY:GAMES")
        jobs.append((name, int(count)))
    return jobs


def start_worker(
    checkout: Path, strategies: list[str], core: int, game: str = "neom"
) -> subprocess.Popen:
    if not any((checkout / "sim" / p).is_file() for p in ("tools/bench.py", "bench.py")):
        raise SystemExit(f"bench_ab: {checkout} holds no sim/tools/bench.py (not a checkout)")
    # The driver's cache (sim set NEOM_NUMBA_CACHE_BASE): keyed on the sources, never stale.
    cache = os.environ["NEOM_NUMBA_CACHE_BASE"]
    env = cache_env(cache, checkout, NEOM_AB_CORE=str(core))
    return subprocess.Popen(
        [sys.executable, "-c", TANGRAM_WORKER if game == "tangram" else WORKER, *strategies],
        env=env,
        cwd=checkout,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def ask(worker: subprocess.Popen, strategy: str, n: int) -> tuple[float, str]:
    """(games/s, digest of the games played; "" from a worker that gives none)."""
    worker.stdin.write(f"{strategy} {n}\n")
    worker.stdin.flush()
    line = worker.stdout.readline()
    if not line:
        raise SystemExit("bench_ab: a worker stopped (its error is above)")
    rate, _, digest = line.strip().partition(" ")
    return float(rate), digest


def compare(
    checkouts: list[Path],
    jobs: list[tuple[str, int]],
    rounds: int,
    core: int,
    game: str = "neom",
) -> dict[tuple[int, str], list[float]]:
    """Games/s of every (checkout index, strategy), one entry per round."""
    strategies = sorted({name for name, _ in jobs})
    workers = [start_worker(c, strategies, core, game) for c in checkouts]
    try:
        for worker, checkout in zip(workers, checkouts, strict=True):
            if worker.stdout.readline().strip() != "ready":
                raise SystemExit(f"bench_ab: the worker of {checkout} did not start")
        rates = {(i, name): [] for i in range(len(checkouts)) for name, _ in jobs}
        order = list(range(len(checkouts)))
        for r in range(rounds):
            for name, n in jobs:
                # Alternate who goes first, so neither side always follows the other.
                digests = set()
                for i in order if r % 2 == 0 else order[::-1]:
                    rate, digest = ask(workers[i], name, n)
                    rates[(i, name)].append(rate)
                    digests.add(digest)
                if len(digests) > 1:
                    raise SystemExit(f"bench_ab: the checkouts played different {name} games")
        return rates
    finally:
        for worker in workers:
            with contextlib.suppress(BrokenPipeError):  # a worker that stopped on an error
                worker.stdin.close()
            worker.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.bench_ab", description=__doc__)
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument(
        "--jobs",
        help="STRATEGY:GAMES,... (default: random:500,greedy:60,builder:30; Tangram City: "
        f"{TANGRAM_JOBS})",
    )
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--game", choices=("neom", "tangram"), default="neom")
    parser.add_argument(
        "--core", type=int, default=1, help="core both workers are pinned to (-1: none)"
    )
    args = parser.parse_args(argv)
    if args.rounds < 1:
        raise SystemExit("bench_ab: --rounds must be at least 1")
    jobs = parse_jobs(args.jobs or (TANGRAM_JOBS if args.game == "tangram" else NEOM_JOBS))
    checkouts = [args.old.resolve(), args.new.resolve()]
    rates = compare(checkouts, jobs, args.rounds, args.core, args.game)
    print(
        f"{args.game}: 4-player games/s on one core, {args.rounds} alternated rounds"
        " (best / median):"
    )
    for name, n in jobs:
        old = rates[(0, name)]
        new = rates[(1, name)]
        print(
            f"  {name:14s} ({n} games) old {max(old):8.0f} / {statistics.median(old):8.0f}"
            f"   new {max(new):8.0f} / {statistics.median(new):8.0f}"
            f"   new/old {max(new) / max(old):5.2f} / "
            f"{statistics.median(new) / statistics.median(old):5.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
