"""Tangram City's own command: ``tileset`` (``validate FILE``, ``template``, ``show [FILE]``,
``witness [FILE]``).

``register(parser)`` defines it for ``neom`` (``Game.commands``): ``neom tileset ...``.
"""

import sys
from pathlib import Path

from sim.core.errors import CatalogError
from sim.tangram import geometry as G
from sim.tangram.tileset import (
    TEMPLATE,
    load_tileset,
    read_toml,
    tile_letter,
    tileset_warnings,
    validate,
)


def register(parser) -> None:
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
    data, _, _ = read_toml(Path(args.file), source)
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
