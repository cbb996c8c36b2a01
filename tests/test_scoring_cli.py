"""``neom score CITY.json``: catalogue tiles, inline tiles, the center, variants, and errors."""

import json
import subprocess
import sys

import pytest
from catalog_fixture import to_toml, valid_catalog
from plain_scoring import plain_score

from sim.core.cli import main
from sim.neom import constants as K
from sim.neom.catalog import load_catalog
from sim.neom.tables import make_rules


@pytest.fixture
def city_file(tmp_path):
    def write(data, name="city.json"):
        path = tmp_path / name
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
        return str(path)

    return write


def run_score(capsys, *argv):
    code = main(["score", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def scored(capsys, *argv) -> dict:
    return scored_with_notice(capsys, *argv)[0]


def scored_with_notice(capsys, *argv) -> tuple[dict, str]:
    """The breakdown printed on stdout, and stderr."""
    code, out, err = run_score(capsys, *argv)
    assert code == 0, err
    result = json.loads(out)  # stdout holds exactly one JSON object
    assert list(result) == list(K.SCORE_KEYS)
    return result, err


def expected_score(tables, placements, money, variant=K.V_STANDARD):
    """plain_score of a city given as {(row, col): tile index}."""
    cells = [K.EMPTY] * K.N_CELLS
    for (row, col), index in placements.items():
        cells[row * K.GRID + col] = index
    return plain_score(
        cells, money, tables.tiles, tables.effects, tables.goods_tier, make_rules(variant)
    )


def names_of(tables, type_bit, deck, count):
    """The first ``count`` tile names of a deck with a type bit (not substitutes)."""
    rows = tables.tiles
    return [
        tables.tile_names[i]
        for i in range(tables.n_tiles)
        if rows[i, K.C_TYPES] & type_bit and rows[i, K.C_DECK] == deck and rows[i, K.C_REPLACES] < 0
    ][:count]


def inline(types, roads="NESW", **fields):
    return {"types": types, "roads": roads, **fields}


def test_default_catalogue_tiles_by_name(capsys, city_file):
    """Catalogue tiles named in CITY.json score as the independent scorer says, around the City
    Center of the board whose good is center_good; the reconstruction notice is on stderr."""
    tables = load_catalog()
    homes = names_of(tables, K.T_RESIDENTIAL, K.DECK_GEN1, 3)
    public = names_of(tables, K.T_PUBLIC, K.DECK_CORNERSTONE, 2)
    industry = names_of(tables, K.T_INDUSTRIAL, K.DECK_GEN1, 1)
    layout = {(1, 2): homes[0], (2, 1): homes[1], (3, 2): homes[2], (0, 0): public[0]}
    layout |= {(4, 4): public[1], (2, 3): industry[0]}
    stone = tables.good_names.index("Stone")
    center = next(int(c) for c in tables.board_center if tables.tiles[c, K.C_PRODUCES] >> stone & 1)
    data = {
        "money": 13,
        "center_good": "Stone",
        "cells": [{"row": r, "col": c, "tile": name} for (r, c), name in layout.items()],
    }
    result, notice = scored_with_notice(capsys, city_file(data))
    placements = {pos: tables.tile_index(name) for pos, name in layout.items()}
    assert result == expected_score(tables, placements | {(2, 2): center}, 13)
    assert ("RECONSTRUCTED" in notice) == tables.reconstructed


def test_inline_tiles_replacing_the_center(capsys, city_file):
    """Inline tiles (catalogue tile fields, no name needed) score like catalogue tiles; a tile on
    row 2, col 2 replaces the City Center, so center_good may be left out."""
    data = {
        "money": 7,
        "cells": [
            {"row": 2, "col": 2, "tile": inline(["public"], vp=4, power=True)},
            {"row": 1, "col": 2, "tile": inline(["residential"], vp=2)},
            {"row": 0, "col": 2, "tile": inline(["residential"], vp=1)},
            {"row": 2, "col": 3, "tile": inline(["industrial"], polluting=True)},
        ],
    }
    result = scored(capsys, city_file(data))
    assert result == {
        "tiles": 4 + 2 + 1,
        "neighborhoods": 3,
        "goods": 0,
        "money": 3,
        "pollution": -1,
        "ghost_town": 0,
        "power": 0,
        "total": 7 + 3 + 3 - 1,
    }


def test_center_good_scores_until_the_center_is_replaced(capsys, city_file):
    """The City Center produces its board's raw good (1 VP); replaced, the good is gone."""
    with_center = {"center_good": "Wood"}
    assert scored(capsys, city_file(with_center, "a.json"))["goods"] == 1
    replaced = {"center_good": "Wood", "cells": [{"row": 2, "col": 2, "tile": inline(["public"])}]}
    assert scored(capsys, city_file(replaced, "b.json"))["goods"] == 0


def test_variant_no_disasters(capsys, city_file):
    """ "variant": "no-disasters" adds the tiles' no-disasters VP (Fire Department +2)."""
    cells = [{"row": 0, "col": 0, "tile": inline(["public"], vp=2, vp_no_disasters=2)}]
    standard = scored(capsys, city_file({"center_good": "Ore", "cells": cells}, "a.json"))
    variant = {"center_good": "Ore", "variant": "no-disasters", "cells": cells}
    assert scored(capsys, city_file(variant, "b.json"))["tiles"] == standard["tiles"] + 2


def test_catalog_option_uses_that_catalogue(capsys, city_file, tmp_path):
    """--catalog FILE scores with another tile set (here a small synthetic one)."""
    path = tmp_path / "mine.toml"
    path.write_text(to_toml(valid_catalog()), encoding="utf-8")
    tables = load_catalog(path)
    public = names_of(tables, K.T_PUBLIC, K.DECK_CORNERSTONE, 2)
    data = {
        "money": 5,
        "center_good": "Coal",
        "cells": [
            {"row": 0, "col": 0, "tile": public[0]},
            {"row": 0, "col": 1, "tile": public[1]},
        ],
    }
    result = scored(capsys, city_file(data), "--catalog", str(path))
    coal = tables.good_names.index("Coal")
    center = next(int(c) for c in tables.board_center if tables.tiles[c, K.C_PRODUCES] >> coal & 1)
    placements = {(0, 0): tables.tile_index(public[0]), (0, 1): tables.tile_index(public[1])}
    assert result == expected_score(tables, placements | {(2, 2): center}, 5)


def cell(row=0, col=0, tile=None):
    return {"row": row, "col": col, "tile": tile or inline(["public"])}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ('{"money": 3,', "not valid JSON: Expecting property name"),
        ("[1, 2]", "the city must be a JSON object"),
        ({"center_good": "Stone", "monney": 3}, 'unknown key "monney"'),
        ({"center_good": "Stone", "money": -2}, "money -2 is negative"),
        ({"center_good": "Stone", "money": 2.5}, "money must be an integer, not 2.5"),
        ({"center_good": "Stome"}, 'center_good: unknown good "Stome"; did you mean "Stone"?'),
        ({"center_good": "Steel"}, 'center_good "Steel": no City board has it'),
        ({}, '"center_good" missing'),
        ({"center_good": "Ore", "variant": "hard"}, 'variant: unknown variant "hard"'),
        ({"center_good": "Ore", "cells": {}}, '"cells" must be an array'),
        ({"center_good": "Ore", "cells": [cell(row=5)]}, "cells[0]: row 5 out of range (0-4)"),
        ({"center_good": "Ore", "cells": [cell(col=-1)]}, "cells[0]: col -1 out of range"),
        ({"center_good": "Ore", "cells": [cell(row="1")]}, 'row must be an integer, not "1"'),
        (
            {"center_good": "Ore", "cells": [cell(1, 1), cell(1, 1)]},
            "cells[1]: square (row 1, col 1) already given by cells[0]",
        ),
        ({"center_good": "Ore", "cells": [{"row": 1, "col": 1}]}, 'cells[0]: "tile" missing'),
        ({"center_good": "Ore", "cells": [cell(tile="Nowhere Tower")]}, 'unknown tile "Nowhere'),
        ({"center_good": "Ore", "cells": [cell(tile=7)]}, "tile must be a tile name or an inline"),
        ({"center_good": "Ore", "cells": [cell(tile="Flood")]}, '"Flood" is a Disaster tile'),
        (
            {"center_good": "Ore", "cells": [cell(tile=inline(["pubic"]))]},
            'field "types": unknown type "pubic"',
        ),
    ],
)
def test_bad_city_files_fail_with_one_clear_message(capsys, city_file, data, message):
    """Bad input: exit 1, the message names the problem and where (file, cell), no traceback,
    nothing on stdout."""
    path = city_file(data)
    code, out, err = run_score(capsys, path)
    assert code == 1
    assert out == ""
    first = err.splitlines()[0]
    assert first.startswith(f"neom: error: {path}")
    assert message in first
    assert "Traceback" not in err


def test_missing_city_file(capsys, tmp_path):
    path = str(tmp_path / "nope.json")
    code, out, err = run_score(capsys, path)
    assert (code, out) == (1, "")
    assert err.strip() == f"neom: error: {path}: city file not found"


def test_neom_score_command_prints_only_json(city_file):
    """The installed command: stdout is one JSON object, exit 0."""
    path = city_file({"money": 4, "center_good": "Oil"})
    result = subprocess.run(
        [sys.executable, "-m", "sim.core.cli", "score", path], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["money"] == 2


def test_neighborhoods_flag_selects_the_residential_only_reading(capsys, city_file):
    """RULES.md S3: by default a Neighborhood's road chain may pass through any tile (here a
    Commercial tile joins two Residential tiles: one Neighborhood of 2, 3 VP); with
    ``--neighborhoods residential`` the chain breaks there (two Neighborhoods of 1, 2 VP)."""
    data = {
        "money": 0,
        "cells": [
            {"row": 2, "col": 2, "tile": inline(["residential"], roads="EW")},
            {"row": 2, "col": 3, "tile": inline(["commercial"], roads="EW")},
            {"row": 2, "col": 4, "tile": inline(["residential"], roads="EW")},
        ],
    }
    path = city_file(data)
    assert scored(capsys, path)["neighborhoods"] == 3
    assert scored(capsys, path, "--neighborhoods", "residential")["neighborhoods"] == 2
