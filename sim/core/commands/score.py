"""``neom score FILE``: score one position of a game (NEOM: a city; Tangram City: a board) and
print the breakdown as one JSON object (``Game.score_ref``)."""

import json
import sys
from pathlib import Path

from sim.core.commands.options import add_game_options, resolve_game_options
from sim.core.errors import UserError
from sim.core.game import resolve


def register(parser) -> None:
    parser.add_argument("position", metavar="FILE.json", type=Path, help="the city or board")
    add_game_options(parser, "score")
    parser.set_defaults(func=run)


def run(args) -> int:
    game, data_path, rules = resolve_game_options(args, "score")
    if not game.score_ref:
        raise UserError(f"--game {game.name} has no score command")
    data = game.load_data(data_path)
    result = resolve(game.score_ref)(args.position, data, rules)
    if data.reconstructed:
        print(f"neom score: {data.label}", file=sys.stderr)
    print(json.dumps(result))
    return 0
