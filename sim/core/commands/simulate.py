"""``neom simulate``: play many games in parallel into a Parquet run folder (docs/results.md)."""

import argparse
import sys
from pathlib import Path

from sim.core.commands.options import add_game_options, add_run_options, resolve_game_options
from sim.core.runner import BACKENDS, RunConfig, run_simulation
from sim.core.seeding import SEAT_MODES
from sim.core.strategies import split_strategies


def register(parser) -> None:
    parser.description = (
        "Play many games with one strategy per seat and write a run folder "
        "(manifest.json, the data file's copy, games/ players/ [events/] Parquet tables)."
    )
    add_run_options(
        parser,
        "--players",
        "--games",
        "--strategies",
        "--seed",
        "--workers",
        players={"default": RunConfig.players},
        seed={"default": RunConfig.seed},
        games={
            "default": RunConfig.games,
            "help": "games to play (a multiple of --players with --seats rotate)",
        },
        strategies={"help": "comma-separated strategies, one per seat (see neom strategies)"},
    )
    parser.add_argument(
        "--strategy-file",
        type=Path,
        help="TOML file of named parameter sets usable in --strategies (docs/strategies.md)",
    )
    parser.add_argument("--out", required=True, type=Path, help="run folder to write")
    parser.add_argument(
        "--seats",
        choices=SEAT_MODES,
        default=RunConfig.seats,
        help="fixed: strategy i in seat i; rotate: every deal once per seat rotation; "
        "shuffle: random seat order per game",
    )
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
    add_game_options(parser, "simulate")
    parser.set_defaults(func=run)


# The options that are RunConfig fields of the same name, passed on unchanged.
PASSED_AS_GIVEN = ("out", "players", "games", "seed", "strategy_file", "seats", "workers")
PASSED_AS_GIVEN += ("batch_size", "events", "backend", "scheduler", "resume", "overwrite")


def run(args: argparse.Namespace) -> int:
    game, data, rules = resolve_game_options(args, "simulate")
    config = RunConfig(
        strategies=split_strategies(args.strategies),
        game=game.name,
        data=data,
        command=args.command_line,
        rules=rules,
        data_warnings=True,
        **{name: getattr(args, name) for name in PASSED_AS_GIVEN},
    )
    result = run_simulation(config)
    if result.already_complete:
        print(
            f"neom: note: {result.path}: the run is already complete ({result.games} games); "
            "nothing to do",
            file=sys.stderr,
        )
        print(f"game: {game.title}\noutput: {result.path}\ndata: {result.data_label}")
        return 0
    resumed = f" ({result.games - result.games_played} resumed)" if result.batches_resumed else ""
    print(
        f"game: {game.title}\n"
        f"games: {result.games}{resumed}\n"
        f"wall time: {result.wall_s:.1f} s (+{result.warmup_s:.1f} s compile/warm-up)\n"
        f"games/s: {result.games_per_s:,.0f}\n"
        f"output: {result.path}\n"
        f"data: {result.data_label}"
    )
    return 0
