"""Tangram City's commands.

``register(subparsers)`` (``Game.commands_ref``) adds the game's own command to ``neom``:
``tileset`` (``validate FILE``, ``template``, ``show [FILE]``, ``witness [FILE]``).

Until the generic ``neom play/score/strategies --game tangram`` are wired, ``python -m
sim.tangram COMMAND`` offers ``tileset``, ``play``, ``score`` and ``strategies`` for this game
alone. Each prints the tile set's label (RECONSTRUCTION for the default) first or, for JSON on
stdout, on stderr.
"""

import argparse
import json
import sys
from pathlib import Path

from sim.core.errors import CatalogError, UserError
from sim.tangram import GAME
from sim.tangram import geometry as G
from sim.tangram.rules import RULE_OPTIONS, make_rules
from sim.tangram.tileset import (
    TEMPLATE,
    load_tileset,
    read_toml,
    tile_letter,
    tileset_warnings,
    validate,
)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "tileset", help="Tangram City tile sets: validate, template, show, witness"
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = actions.add_parser("validate", help="check a tile-set file; every problem listed")
    check.add_argument("file")
    check.set_defaults(func=run_validate)
    actions.add_parser("template", help="print a commented tile-set skeleton").set_defaults(
        func=lambda args: print(TEMPLATE.read_text(encoding="utf-8"), end="") or 0
    )
    show = actions.add_parser("show", help="the tiles, their areas and placements")
    show.add_argument("file", nargs="?", help="tile-set file (default: packaged)")
    show.set_defaults(func=run_show)
    witness = actions.add_parser("witness", help="find a full tiling of each board")
    witness.add_argument("file", nargs="?", help="tile-set file (default: packaged)")
    witness.set_defaults(func=run_witness)


def run_validate(args) -> int:
    source = args.file
    data, _ = read_toml(Path(args.file), source)
    problems = validate(data, source)
    if problems:
        raise CatalogError(problems)
    loaded = load_tileset(args.file)
    for warning in tileset_warnings(loaded):
        print(f"warning: {warning}", file=sys.stderr)
    ts = loaded.content
    print(
        f"{source}: valid ({ts.n_tiles} tiles, {len(ts.boards)} boards, "
        f"{sum(len(s) for s in ts.shapes) / 4:g} squares of tiles); {loaded.label}"
    )
    return 0


def run_show(args) -> int:
    data = load_tileset(args.file)
    ts = data.content
    print(f"Tile set: {data.label}")
    for index, name in enumerate(ts.tile_names):
        mark = " !" if ts.marked(index) else ""
        print(
            f"{tile_letter(index)}  {name}{mark}: {ts.area(index):g} squares, "
            f"{ts.placement_counts[index]} placements"
        )
        for row in G.render(ts.shapes[index]):
            print(f"     {row}")
    for board in ts.boards:
        print(
            f"board {board.name}: start square {list(board.square)}, triangle "
            f"{list(board.triangle)}{', witness given' if board.witness else ''}"
        )
    return 0


def run_witness(args) -> int:
    from sim.tangram import witness

    return witness.main([args.file] if args.file else [])


# --- the standalone command line -----------------------------------------------------------------
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
    from sim.tangram.story import record_json, record_lines
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
    data = load_tileset(args.tileset)
    record = GAME.play_one(data, args.players, specs, args.seed, _rules(args, "play"), True)
    for line in record_lines(record, data):
        print(line)
    if args.json:
        try:
            with open(args.json, "w", encoding="utf-8") as handle:
                json.dump(record_json(record, data), handle, indent=1)
        except OSError as exc:
            raise UserError(f"--json {args.json}: cannot write: {exc.strerror}") from None
    return 0


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
        prog="python -m sim.tangram", description="Tangram City: play, score, tile sets."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    register(subparsers)
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
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"tangram: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        sys.stderr.close()
        return 0
