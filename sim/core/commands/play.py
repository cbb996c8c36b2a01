"""``neom play``: one game, told turn by turn by the game's own log (``Game.play_ref``),
optionally written as JSON."""

import numpy as np

from sim.core.batch import play_arrays
from sim.core.commands.options import (
    add_game_options,
    add_json_file_option,
    check_players,
    resolve_game_options,
)
from sim.core.compile_notice import compile_notice
from sim.core.errors import UserError
from sim.core.game import resolve
from sim.core.outputs import claim_file
from sim.core.rng import master_key
from sim.core.runner import rules_array as rules_array_of
from sim.core.strategies import seat_strategies, split_strategies


def register(parser) -> None:
    parser.add_argument("--players", type=int, required=True, metavar="P", help="players")
    parser.add_argument(
        "--strategies",
        required=True,
        metavar="S1,S2,...",
        help="one strategy per seat (name or name:param=value,...), or one for all seats",
    )
    parser.add_argument("--strategy-file", metavar="FILE", help="named sets usable as strategies")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="master seed")
    add_json_file_option(parser, "also write the game as JSON events")
    add_game_options(parser, "play")
    parser.set_defaults(func=run)


def run(args) -> int:
    game, data_path, rules = resolve_game_options(args, "play")
    check_players(args.players, game.name)
    if args.seed < 0:
        raise UserError(f"--seed {args.seed}: must be 0 or more")
    if args.json:
        claim_file(args.json, "--json", args.overwrite)  # before the game is played
    specs = seat_strategies(
        game.strategies,
        split_strategies(args.strategies),
        args.players,
        args.strategy_file,
        one_for_all=True,
    )
    data = game.load_data(data_path)
    entry = game.play_batch_for([spec.id for spec in specs])
    with compile_notice(*game.compile_estimate([spec.id for spec in specs]), code=entry):
        warm_up(game, data, rules, specs)
    return resolve(game.play_ref)(args, data, rules, specs)


def warm_up(game, data, rules: dict, specs) -> None:
    """One game with these strategies, played for nothing but to compile (or load) the code."""
    seats = np.arange(len(specs), dtype=np.int32).reshape(1, -1)
    ids = np.zeros(1, dtype=np.int64)
    strategy_ids = [spec.id for spec in specs]
    params = np.stack([spec.params for spec in specs])
    rules_array = rules_array_of(game, rules)
    play_arrays(
        game, master_key(0), ids, ids, seats, strategy_ids, params, data.arrays, rules_array, False
    )
