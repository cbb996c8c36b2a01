"""``neom simulate``: play many games in parallel into a Parquet run folder (docs/results.md)."""

import argparse
import shlex
import sys
from pathlib import Path

from sim.core.runner import BACKENDS, RunConfig, run_simulation
from sim.core.seeding import SEAT_MODES
from sim.neom.commands.readings import (
    add_neighborhoods_argument,
    add_solo_tileset_argument,
    through_any,
)
from sim.neom.constants import VARIANT_NAMES
from strategies.neom.params import split_strategies


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="play many games and write Parquet tables",
        description="Play many games with one strategy per seat and write a run folder "
        "(manifest.json, catalog.toml, games/ players/ [events/] Parquet tables).",
    )
    parser.add_argument(
        "--players", type=int, default=RunConfig.players, help="players per game (1-5)"
    )
    parser.add_argument(
        "--games",
        type=int,
        default=RunConfig.games,
        help="games to play (a multiple of --players with --seats rotate)",
    )
    parser.add_argument(
        "--strategies",
        required=True,
        help="comma-separated strategies, one per seat (see neom strategies)",
    )
    parser.add_argument(
        "--strategy-file",
        type=Path,
        help="TOML file of named parameter sets usable in --strategies (docs/strategies.md)",
    )
    parser.add_argument("--seed", type=int, default=RunConfig.seed, help="master seed")
    parser.add_argument("--out", required=True, type=Path, help="run folder to write")
    parser.add_argument("--catalog", type=Path, help="catalogue file (default: the built-in one)")
    parser.add_argument("--variant", choices=tuple(VARIANT_NAMES), default=RunConfig.variant)
    add_neighborhoods_argument(parser)
    add_solo_tileset_argument(parser)
    parser.add_argument(
        "--seats",
        choices=SEAT_MODES,
        default=RunConfig.seats,
        help="fixed: strategy i in seat i; rotate: every deal once per seat rotation; "
        "shuffle: random seat order per game",
    )
    parser.add_argument("--workers", type=int, help="worker processes (default: all cores)")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=RunConfig.batch_size,
        help="games per batch and Parquet file",
    )
    parser.add_argument("--events", action="store_true", help="also write the events table")
    parser.add_argument("--backend", choices=BACKENDS, default=RunConfig.backend)
    parser.add_argument(
        "--scheduler", help="Dask scheduler address (default: a local cluster of --workers)"
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--resume", action="store_true", help="continue an interrupted run")
    group.add_argument("--overwrite", action="store_true", help="replace an existing run")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    strategies = split_strategies(args.strategies)
    config = RunConfig(
        out=args.out,
        strategies=strategies,
        players=args.players,
        games=args.games,
        seed=args.seed,
        catalog=args.catalog,
        strategy_file=args.strategy_file,
        variant=args.variant,
        seats=args.seats,
        workers=args.workers,
        batch_size=args.batch_size,
        events=args.events,
        backend=args.backend,
        scheduler=args.scheduler,
        resume=args.resume,
        overwrite=args.overwrite,
        command=shlex.join(["neom", *sys.argv[1:]]),
        rules_options={
            "neighborhood_through_any": through_any(args),
            "solo_tileset": args.solo_tileset,
        },
    )
    result = run_simulation(config)
    reconstruction = "yes" if result.reconstructed else "no"
    resumed = f" ({result.games - result.games_played} resumed)" if result.batches_resumed else ""
    print(
        f"games: {result.games}{resumed}\n"
        f"wall time: {result.wall_s:.1f} s (+{result.warmup_s:.1f} s compile/warm-up)\n"
        f"games/s: {result.games_per_s:,.0f}\n"
        f"output: {result.path}\n"
        f"catalogue: {result.catalog_name} (reconstruction: {reconstruction})"
    )
    return 0
