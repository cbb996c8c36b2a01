"""Standalone Tangram City commands until the generic ``neom play/score/strategies --game
tangram`` are wired: ``python -m analysis.tangram.cli COMMAND`` with ``play``, ``score``,
``strategies`` and ``tileset``. Each prints the tile set's label (RECONSTRUCTION for the
default) first or, when stdout holds JSON, on stderr. It lives in analysis/tangram, the top
layer, because it plays games (strategies) and tells them (sim)."""

import argparse
import json
import sys

from sim.core.errors import UserError
from sim.tangram import GAME
from sim.tangram import commands as tileset_commands
from sim.tangram.rules import RULE_OPTIONS, make_rules
from sim.tangram.tileset import load_tileset


def _add_rule_options(parser, command: str) -> None:
    for option in RULE_OPTIONS:
        if command in option.commands:
            parser.add_argument(
                option.flag,
                dest=option.name,
                default=option.default,
                choices=list(option.choices),
                help=f"{option.help} (default {option.default})",
            )


def _rules(args, command: str):
    return make_rules(
        **{o.name: getattr(args, o.name) for o in RULE_OPTIONS if command in o.commands}
    )


def run_play(args) -> int:
    from strategies.tangram.registry import parse_strategy

    if not 1 <= args.players <= GAME.max_players:
        raise UserError(f"--players {args.players}: must be 1 to {GAME.max_players}")
    if args.seed < 0:
        raise UserError(f"--seed {args.seed}: must be 0 or more")
    specs = [parse_strategy(s) for s in _split(args.strategies)]
    if len(specs) == 1:
        specs *= args.players
    if len(specs) != args.players:
        raise UserError(
            f"--strategies: {len(specs)} strategies for {args.players} players (give one per "
            "seat, or one for all)"
        )
    from analysis.tangram.play_log import show_game

    return show_game(args, load_tileset(args.tileset), _rules(args, "play"), specs)


def _split(text: str) -> list[str]:
    """``a,b:x=1,y=2,c`` -> specs: a piece with ``=`` but no ``:`` continues the spec before."""
    specs: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if "=" in piece and ":" not in piece and specs:
            specs[-1] += "," + piece
        elif piece:
            specs.append(piece)
        else:
            raise UserError(f"--strategies {text!r}: empty strategy name")
    return specs


def run_score(args) -> int:
    from sim.tangram.score import score_file

    data = load_tileset(args.tileset)
    print(f"tile set: {data.label}", file=sys.stderr)
    print(json.dumps(score_file(args.board, data, _rules(args, "score"))))
    return 0


def run_strategies(args) -> int:
    registry = GAME.strategies
    for info in registry.strategies:
        print(f"{info.name} (id {info.id}): {info.description}")
        for name, default, (low, high) in zip(
            info.param_names, info.defaults, info.bounds, strict=True
        ):
            print(f"    {name} = {default:g}  (allowed {low:g} to {high:g})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m analysis.tangram.cli", description="Tangram City: play, score, tile sets."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    tileset_commands.register(subparsers)
    play = subparsers.add_parser("play", help="play one game and tell it turn by turn")
    play.add_argument("--players", type=int, required=True, metavar="P", help="1 to 5")
    play.add_argument(
        "--strategies", required=True, help="one strategy per seat (name or name:p=v,...)"
    )
    play.add_argument("--seed", type=int, default=0)
    play.add_argument("--tileset", metavar="FILE", help="tile-set file (default: packaged)")
    play.add_argument("--json", metavar="FILE", help="also write the game as JSON")
    _add_rule_options(play, "play")
    play.set_defaults(func=run_play)
    score = subparsers.add_parser("score", help="score one board (JSON) and print JSON")
    score.add_argument("board", metavar="BOARD.json")
    score.add_argument("--tileset", metavar="FILE", help="tile-set file (default: packaged)")
    _add_rule_options(score, "score")
    score.set_defaults(func=run_score)
    strategies = subparsers.add_parser("strategies", help="list the strategies")
    strategies.set_defaults(func=run_strategies)
    return parser


def main(argv=None) -> int:
    return tileset_commands.main(argv, build_parser())


if __name__ == "__main__":
    sys.exit(main())
