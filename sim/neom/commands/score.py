"""``neom score CITY.json``: score one city with the compiled scorer, print the breakdown as JSON.

CITY.json::

    {"money": 13, "center_good": "Stone", "variant": "standard",
     "cells": [{"row": 0, "col": 1, "tile": "Row Houses"},
               {"row": 1, "col": 1, "tile": {"name": "My Park", "types": ["public"], "vp": 4}}]}

``tile`` is a catalogue tile name or an inline tile (catalogue tile fields; ``name`` and ``deck``
may be left out). A cell at row 2, col 2 replaces the City Center; without one the center is
the City Center of the board whose raw good is ``center_good``. ``money`` defaults to 0,
``variant`` to standard, ``cells`` to none. Stdout holds only the JSON object (SCORE_KEYS);
the reconstructed-catalogue notice goes to stderr.
"""

import difflib
import json

import numpy as np

from sim.core.errors import UserError, check_text, decode_text, read_input
from sim.neom import constants as K
from sim.neom.catalog import with_extra_tiles
from sim.neom.scoring import score_city
from sim.neom.tables import Tables, make_rules

CITY_KEYS = ("money", "center_good", "variant", "cells")
CELL_KEYS = ("row", "col", "tile")
MAX_CITY_BYTES = 1_000_000  # 25 cells with inline tiles fit in a few kB
# The scorer sums in int32: money // 2 plus 25 tiles of at most 2 x MAX_AMOUNT printed VP and
# 3 effects of MAX_AMOUNT x 30 (docs/catalog.md "Bounds") stays far below 2**31 - 1.
MAX_MONEY = 100_000_000


def score_file(path, data, rules: dict) -> dict:
    """``neom score CITY.json``: the city's score breakdown (``Game.score_ref``)."""
    tables = data.content
    city = read_city_file(str(path))
    through_any = bool(rules["neighborhood_through_any"])
    cells, money, rules_array, tables = compile_city(city, tables, str(path), through_any)
    out = np.zeros(K.N_SCORE, dtype=np.int32)
    score_city(cells, money, tables.tiles, tables.effects, tables.goods_tier, rules_array, out)
    return dict(zip(K.SCORE_KEYS, out.tolist(), strict=True))


def read_city_file(path: str) -> dict:
    content = read_input(path, "city file", MAX_CITY_BYTES)  # size before reading
    text = decode_text(content, path)
    check_text(text, "json", path)  # depth and numbers before parsing
    try:
        data = json.loads(text)
    except RecursionError:
        raise UserError(f"{path}: nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{path}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: the city must be a JSON object with keys {', '.join(CITY_KEYS)}")
    return data


def _check_keys(obj: dict, allowed: tuple, where: str) -> None:
    for key in obj:
        if key not in allowed:
            raise UserError(f'{where}: unknown key "{key}" (expected: {", ".join(allowed)})')


def _integer(value, where: str, what: str) -> int:
    # bool is an int subclass in Python; true/false is never a valid count or coordinate.
    if not isinstance(value, int) or isinstance(value, bool):
        raise UserError(f"{where}: {what} must be an integer, not {json.dumps(value)}")
    return value


def _unknown(kind: str, name, known, where: str) -> UserError:
    close = difflib.get_close_matches(str(name), list(known), n=1)
    hint = f'; did you mean "{close[0]}"?' if close else ""
    return UserError(f'{where}: unknown {kind} "{name}"{hint}')


def _center_tile(data: dict, tables: Tables, path: str, needed: bool) -> int:
    """Tile index of the City Center of the board whose good is ``center_good`` (-1 if the
    city replaces its center and gives no ``center_good``)."""
    if "center_good" not in data:
        if needed:
            raise UserError(
                f'{path}: "center_good" missing: name the raw good of your City Center '
                "(or give a cell at row 2, col 2)"
            )
        return -1
    good = data["center_good"]
    if good not in tables.good_names:
        raise _unknown("good", good, tables.good_names, f"{path}: center_good")
    bit = 1 << tables.good_index(good)
    for center in tables.board_center:
        if tables.tiles[center, K.C_PRODUCES] & bit:
            return int(center)
    boards = ", ".join(tables.good_names[int(g)] for g in _board_goods(tables))
    raise UserError(f'{path}: center_good "{good}": no City board has it (boards: {boards})')


def _board_goods(tables: Tables) -> list[int]:
    goods = []
    for center in tables.board_center:
        mask = int(tables.tiles[center, K.C_PRODUCES])
        goods.append(mask.bit_length() - 1)
    return goods


def _read_cells(data: dict, path: str) -> list[tuple[int, object, str]]:
    """(cell, tile name or inline dict, where) per entry of "cells", positions checked."""
    raw_cells = data.get("cells", [])
    if not isinstance(raw_cells, list):
        raise UserError(f'{path}: "cells" must be an array of {{"row", "col", "tile"}} objects')
    seen: dict[int, int] = {}
    read = []
    for i, raw in enumerate(raw_cells):
        where = f"{path}: cells[{i}]"
        if not isinstance(raw, dict):
            raise UserError(f'{where}: must be an object {{"row": R, "col": C, "tile": ...}}')
        _check_keys(raw, CELL_KEYS, where)
        for key in CELL_KEYS:
            if key not in raw:
                raise UserError(f'{where}: "{key}" missing')
        row = _integer(raw["row"], where, "row")
        col = _integer(raw["col"], where, "col")
        for what, value in (("row", row), ("col", col)):
            if not 0 <= value < K.GRID:
                raise UserError(f"{where}: {what} {value} out of range (0-{K.GRID - 1})")
        cell = row * K.GRID + col
        if cell in seen:
            raise UserError(
                f"{where}: square (row {row}, col {col}) already given by cells[{seen[cell]}]"
            )
        seen[cell] = i
        tile = raw["tile"]
        if isinstance(tile, dict):
            tile = {"name": f"inline tile at row {row}, col {col}", **tile}
        elif not isinstance(tile, str):
            raise UserError(f"{where}: tile must be a tile name or an inline tile object")
        read.append((cell, tile, where))
    return read


def compile_city(data: dict, tables: Tables, path: str, neighborhood_through_any: bool = True):
    """(cells int16[25], money, rules, tables incl. inline tiles) from a parsed CITY.json."""
    _check_keys(data, CITY_KEYS, path)
    money = _integer(data.get("money", 0), path, "money")
    if money < 0:
        raise UserError(f"{path}: money {money} is negative")
    if money > MAX_MONEY:
        raise UserError(f"{path}: money {money} is too large (at most {MAX_MONEY:,})")
    variant = data.get("variant", "standard")
    if variant not in K.VARIANT_NAMES:
        raise _unknown("variant", variant, K.VARIANT_NAMES, f"{path}: variant")

    read = _read_cells(data, path)
    inline = [tile for _, tile, _ in read if isinstance(tile, dict)]
    if inline:
        tables = with_extra_tiles(tables, inline, f"{path}: cells")
    cells = np.full(K.N_CELLS, K.EMPTY, dtype=np.int16)
    for cell, tile, where in read:
        name = tile["name"] if isinstance(tile, dict) else tile
        if name not in tables.tile_names:
            raise _unknown("tile", name, tables.tile_names, where)
        index = tables.tile_index(name)
        if tables.tiles[index, K.C_TYPES] & K.T_DISASTER:
            raise UserError(f'{where}: "{name}" is a Disaster tile; Disasters are never placed')
        cells[cell] = index
    center = _center_tile(data, tables, path, needed=cells[K.CENTER_CELL] == K.EMPTY)
    if cells[K.CENTER_CELL] == K.EMPTY:
        cells[K.CENTER_CELL] = center
    return cells, money, make_rules(K.VARIANT_NAMES[variant], neighborhood_through_any), tables
