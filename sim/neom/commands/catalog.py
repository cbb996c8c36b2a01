"""``neom catalog``: check a catalogue file, show a tile set, print the template to start one."""

import sys

from sim.core.errors import CatalogError
from sim.neom import constants as K
from sim.neom.catalog import (
    DEFAULT_CATALOG,
    RECONSTRUCTED_BANNER,
    TEMPLATE,
    catalog_as_dict,
    catalog_as_json,
    catalog_warnings,
    load_catalog,
    tile_as_dict,
)
from sim.neom.tables import Tables

DECK_CHOICES = (*K.DECK_NAMES, "center")
DECK_COUNT_LABELS = {"cornerstone": "cornerstones"}
TYPE_ABBREVIATIONS = {
    "residential": "res",
    "commercial": "com",
    "industrial": "ind",
    "public": "pub",
    "resource": "rsc",
    "disaster": "DIS",
}


def register(parser) -> None:
    commands = parser.add_subparsers(dest="catalog_command", required=True, metavar="ACTION")

    validate = commands.add_parser("validate", help="check a catalogue file, list every problem")
    validate.add_argument("file", metavar="FILE", help="catalogue TOML file")
    validate.set_defaults(func=run_validate)

    show = commands.add_parser("show", help="print a catalogue's tiles as a table or JSON")
    show.add_argument(
        "file", metavar="FILE", nargs="?", help="catalogue (default: the packaged one)"
    )
    show.add_argument("--deck", choices=DECK_CHOICES, help="only the tiles of this deck")
    show.add_argument("--json", action="store_true", help="the whole catalogue as JSON")
    show.set_defaults(func=run_show)

    template = commands.add_parser("template", help="print a commented catalogue skeleton")
    template.set_defaults(func=run_template)


def _print_problems(error: CatalogError, source: str) -> int:
    for problem in error.problems:
        print(problem, file=sys.stderr)
    count = len(error.problems)
    print(f"{source}: invalid ({count} problem{'s' if count > 1 else ''})", file=sys.stderr)
    return 1


def summary(tables: Tables) -> str:
    """Tile counts of a compiled catalogue, e.g. for "FILE: valid (...)"."""
    tiles = tables.tiles
    standard = tiles[:, K.C_REPLACES] < 0
    counts = []
    for name, deck in K.DECK_NAMES.items():
        count = int((standard & (tiles[:, K.C_DECK] == deck)).sum())
        counts.append(f"{count} {DECK_COUNT_LABELS.get(name, name)}")
    n_file_tiles = tables.n_tiles - len(tables.board_names)
    n_substitutes = int((~standard).sum())
    return (
        f"{n_file_tiles} tiles: {', '.join(counts)}, {n_substitutes} substitutes; "
        f"{len(tables.good_names)} goods, {len(tables.board_names)} boards"
    )


def run_validate(args) -> int:
    try:
        tables = load_catalog(args.file)
    except CatalogError as error:
        return _print_problems(error, args.file)
    warnings = catalog_warnings(tables)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    noted = f"; {len(warnings)} warning{'s' if len(warnings) > 1 else ''}" if warnings else ""
    print(f"{args.file}: valid ({summary(tables)}{noted})")
    return 0


def _requirement_text(tile: dict) -> str:
    options = [{"requires": tile["requires"], "cost": tile["cost"]}, *tile["alternatives"]]
    texts = []
    for option in options:
        parts = list(option["requires"])
        if option["cost"]:
            parts.append(f"${option['cost']}")
        texts.append("+".join(parts) or "-")
    return " | ".join(texts) if len(texts) > 1 or texts[0] != "-" else ""


def _notes(tile: dict) -> str:
    notes = []
    if tile["power"]:
        notes.append("power")
    if tile["polluting"]:
        notes.append("polluting")
    if tile["protects"]:
        notes.append("protects " + "+".join(tile["protects"]))
    if tile["disaster"]:
        notes.append(f"disaster: {tile['disaster']}")
    if tile["coins_on_place"]:
        notes.append(f"${tile['coins_on_place']} on place")
    if tile["requires_tiles"]:
        notes.append("needs tiles " + " & ".join(tile["requires_tiles"]))
    if tile["vp_no_disasters"]:
        notes.append(f"+{tile['vp_no_disasters']} VP no-disasters")
    if tile["removed_no_disasters"]:
        notes.append("removed in no-disasters")
    if tile["replaces"]:
        notes.append(f"substitute for {tile['replaces']}")
    for effect in tile["effects"]:
        params = ", ".join(
            f"{key}={'+'.join(value) if isinstance(value, list) else value}"
            for key, value in effect.items()
            if key != "kind" and value is not False
        )
        notes.append(f"{effect['kind']}({params})")
    return "; ".join(notes)


def _table_lines(tables: Tables, deck: str | None) -> list[str]:
    header = ("#", "name", "deck", "icon", "types", "roads", "requires", "vp", "inc", "produces")
    rows = []
    for index in range(tables.n_tiles):
        tile = tile_as_dict(tables, index)
        if deck is not None and tile["deck"] != deck:
            continue
        rows.append(
            (
                str(index),
                tile["name"],
                tile["deck"] or "-",
                f"{tile['players']}+" if tile["players"] else "",
                "+".join(TYPE_ABBREVIATIONS[t] for t in tile["types"]),
                tile["roads"],
                _requirement_text(tile),
                str(tile["vp"]) if tile["vp"] else "",
                str(tile["income"]) if tile["income"] else "",
                "+".join(tile["produces"]),
                _notes(tile),
            )
        )
    widths = [max(len(row[c]) for row in [header, *rows]) for c in range(len(header))]
    numeric = {0, 7, 8}
    lines = []
    for row in [(*header, "notes"), *rows]:
        cells = [
            cell.rjust(width) if c in numeric else cell.ljust(width)
            for c, (cell, width) in enumerate(zip(row, widths, strict=False))
        ]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return lines


def run_show(args) -> int:
    source = args.file or DEFAULT_CATALOG.name
    try:
        tables = load_catalog(args.file)
    except CatalogError as error:
        return _print_problems(error, source)
    if args.json:
        print(catalog_as_json(tables))
        return 0
    banner = f" — {RECONSTRUCTED_BANNER}" if tables.reconstructed else ""
    print(f'Catalogue "{tables.name}"{banner}')
    print(f"{tables.source} (sha256 {tables.digest[:12]}): {summary(tables)}")
    print("Goods: " + ", ".join(_good_texts(tables)))
    print()
    print("\n".join(_table_lines(tables, args.deck)))
    return 0


def _good_texts(tables: Tables) -> list[str]:
    return [
        f"{good['name']} ({good['tier']}{', invented' if good['invented'] else ''})"
        for good in catalog_as_dict(tables)["goods"]
    ]


def run_template(args) -> int:
    print(TEMPLATE.read_text(encoding="utf-8"), end="")
    return 0
