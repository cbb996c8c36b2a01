"""``python -m strategies.tools.bench``: games per second of greedy and the archetypes.

First one core: 4-player games with every seat on the same strategy, played by
``sim.bench.run_games`` (no events, no files) in one process, after a warm-up that loads (or
pays) the compile cache; the best of a few replays of the same games is reported, the median
beside it. Then every core: the runner (``neom simulate``, one worker per core)
on ``--field`` (default greedy and three archetypes, seats rotated) writing a scratch run
folder. Prints one line each and writes bench/strategies.json.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from sim.core.runner import RunConfig, run_simulation
from sim.neom.catalog import load_catalog
from sim.tools.bench import N_PLAYERS, batch_rates, best_and_median, cpu_model, run_games
from strategies.neom.archetypes import ARCHETYPES

STRATEGIES = ("greedy", *(archetype.name for archetype in ARCHETYPES))
RESULTS = Path("bench") / "strategies.json"
FIRST_GAME = 1000  # the timed games: the same ids for every strategy and every run
FIELD = "greedy,builder,merchant,industrialist"  # the make run field


def all_cores_rate(field: str, n_games: int, workers: int) -> float:
    """Games/s of the runner with one worker per core, compile cache already warm."""
    with tempfile.TemporaryDirectory(prefix="neom-bench-") as scratch:
        config = RunConfig(
            out=Path(scratch) / "run",
            strategies=tuple(field.split(",")),
            games=n_games,
            workers=workers,
            progress=False,
        )
        return run_simulation(config).games_per_s


def main(argv=None, pin: bool = False) -> int:
    """``pin``: time the single-core part on one core (the command does; tests do not)."""
    parser = argparse.ArgumentParser(prog="python -m strategies.tools.bench", description=__doc__)
    parser.add_argument("--games", type=int, default=600, help="games per strategy and replay")
    parser.add_argument("--replays", type=int, default=3, help="timed replays of those games")
    parser.add_argument("--quick", action="store_true", help="a short run (200 games each)")
    parser.add_argument(
        "--strategies", default=",".join(STRATEGIES), help="comma-separated strategy names"
    )
    parser.add_argument("--field", default=FIELD, help="4 seats played on every core")
    parser.add_argument(
        "--field-games", type=int, default=8000, help="games of the all-cores run (0: skip it)"
    )
    args = parser.parse_args(argv)
    if args.games < 1 or args.replays < 1:
        parser.error("--games and --replays must be at least 1")
    n_games = 200 if args.quick else args.games
    replays = 1 if args.quick else args.replays
    n_field = 800 if args.quick else args.field_games
    names = [name.strip() for name in args.strategies.split(",") if name.strip()]

    tables = load_catalog()
    start = time.perf_counter()
    for name in names:
        run_games(tables, name, 0, 1)
    warm = time.perf_counter() - start

    rates = {}
    print(f"CPU: {cpu_model()}; {N_PLAYERS} players, every seat the same strategy")
    print(f"compile / cache load: {warm:.1f} s (once per machine)")
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    if pin and cores:
        os.sched_setaffinity(0, {min(cores)})
    medians = {}
    for name in names:
        best, median = best_and_median(batch_rates(tables, name, FIRST_GAME, n_games, replays))
        rates[name] = round(best, 1)
        medians[name] = round(median, 1)
        print(
            f"{name:>14}: {best:8,.1f} games/s (best of {replays} replays of {n_games} games, "
            f"1 core; median {median:,.1f})",
            flush=True,
        )
    if pin and cores:
        os.sched_setaffinity(0, cores)
    workers = len(cores) if cores else os.cpu_count()
    field_rate = all_cores_rate(args.field, n_field, workers) if n_field else None
    if n_field:
        print(f"{args.field}: {field_rate:,.1f} games/s ({n_field} games, {workers} workers)")
    results = {
        "players": N_PLAYERS,
        "cpu": cpu_model(),
        "catalog": tables.name,
        "games": n_games,
        "replays": replays,
        "warm_up_seconds": round(warm, 2),
        "games_per_second": rates,
        "games_per_second_median": medians,
        "field": args.field,
        "field_games": n_field,
        "field_workers": workers,
        "field_games_per_second": None if field_rate is None else round(field_rate, 1),
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(f"written: {RESULTS}")
    return 0


if __name__ == "__main__":
    from sim.core.cli import guarded

    sys.exit(guarded(lambda: main(pin=True), "python -m strategies.tools.bench"))
