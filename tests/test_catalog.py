"""The catalogue loader: validation messages, the compiled arrays, inline tiles, the default set."""

import hashlib
import tomllib

import numpy as np
import pytest
from catalog_fixture import tile, to_toml, valid_catalog

from sim.core.errors import CatalogError, UserError
from sim.neom import constants as K
from sim.neom.catalog import (
    DEFAULT_CATALOG,
    TEMPLATE,
    catalog_as_dict,
    catalog_warnings,
    compile_catalog,
    load_catalog,
    validate,
    with_extra_tiles,
)

SRC = "test.toml"


@pytest.fixture(scope="module")
def tables():
    return compile_catalog(valid_catalog(), SRC)


def problems_after(mutate) -> list[str]:
    data = valid_catalog()
    mutate(data)
    return validate(data, SRC)


def drop_tile(name):
    return lambda d: d["tiles"].remove(tile(d, name))


def set_tile(tile_name, **fields):
    return lambda d: tile(d, tile_name).update(fields)


def test_fixture_is_valid():
    assert validate(valid_catalog(), SRC) == []


# Each case: one mistake, and the exact message it must produce (file, tile/good/board, field).
BROKEN = {
    "catalog name missing": (
        lambda d: d["catalog"].pop("name"),
        'test.toml: [catalog]: field "name": missing',
    ),
    "catalog table missing": (
        lambda d: d.pop("catalog"),
        'test.toml: [catalog]: missing; the file starts with [catalog] name = "..."',
    ),
    "unknown top-level key": (
        lambda d: d.update(tile=[]),
        'test.toml: unknown top-level key "tile" (did you mean "tiles"?)',
    ),
    "unknown tile field": (
        set_tile("Treasury", cots=3),
        'test.toml: tile "Treasury": unknown field "cots" (did you mean "cost"?)',
    ),
    "unknown good field": (
        lambda d: d["goods"][0].update(colour="grey"),
        'test.toml: good "Ore": unknown field "colour" (valid: name, tier, invented)',
    ),
    "unknown board field": (
        lambda d: d["boards"][0].update(rods="NS"),
        'test.toml: board "Ore board": unknown field "rods" (did you mean "roads"?)',
    ),
    "wrong value type": (
        set_tile("Treasury", cost="5"),
        'test.toml: tile "Treasury": field "cost": expected an integer, got the string "5"',
    ),
    "wrong list item type": (
        set_tile("Treasury", requires=["Steel", 3]),
        'test.toml: tile "Treasury": field "requires": expected an array of strings, got an '
        "array containing the integer 3",
    ),
    "unknown good": (
        set_tile("Treasury", requires=["Stel"]),
        'test.toml: tile "Treasury": field "requires": unknown good "Stel" (did you mean "Steel"?)',
    ),
    "unknown good in alternative": (
        set_tile("Treasury", alternatives=[{"requires": ["Gold"], "cost": 1}]),
        'test.toml: tile "Treasury": field "alternatives": alternative 1: field "requires": '
        'unknown good "Gold" (valid: Ore, Natural Gas, Wood, Oil, Coal, Stone, Lumber, Glass, '
        "Steel, Jewels)",
    ),
    "unknown tier": (
        lambda d: d["goods"][6].update(tier="refined"),
        'test.toml: good "Lumber": field "tier": unknown tier "refined" (valid: raw, processed, '
        "luxury)",
    ),
    "bad road letter": (
        set_tile("Treasury", roads="NXS"),
        'test.toml: tile "Treasury": field "roads": "NXS" has "X"; use the letters N, E, S, W',
    ),
    "repeated road letter": (
        set_tile("Treasury", roads="NSN"),
        'test.toml: tile "Treasury": field "roads": "NSN" repeats "N"; each road letter at most '
        "once",
    ),
    "no roads on a building": (
        set_tile("Treasury", roads=""),
        'test.toml: tile "Treasury": field "roads": empty; only Disaster tiles may have no roads',
    ),
    "unknown type": (
        set_tile("Treasury", types=["pubic"]),
        'test.toml: tile "Treasury": field "types": unknown type "pubic" (did you mean "public"?)',
    ),
    "three types": (
        set_tile("Treasury", types=["public", "residential", "commercial"]),
        'test.toml: tile "Treasury": field "types": 3 types; a tile has 1 or 2',
    ),
    "disaster with another type": (
        set_tile("Flood", types=["disaster", "public"]),
        'test.toml: tile "Flood": field "types": "disaster" cannot be combined with another type',
    ),
    "unknown deck": (
        set_tile("Treasury", deck="gen4"),
        'test.toml: tile "Treasury": field "deck": unknown deck "gen4" (did you mean "gen3"?)',
    ),
    "players icon not 1/4/5": (
        set_tile("Treasury", players=3),
        'test.toml: tile "Treasury": field "players": 3 is not a players icon (valid: 1, 4, 5)',
    ),
    "cornerstone with players icon": (
        set_tile("Tower 1", players=1),
        'test.toml: tile "Tower 1": field "players": cornerstones have no players icon',
    ),
    "generation tile without players icon": (
        lambda d: tile(d, "Treasury").pop("players"),
        'test.toml: tile "Treasury": field "players": missing; generation tiles need a players '
        "icon: 1, 4 or 5",
    ),
    "too few 1+ tiles": (
        drop_tile("Gen2 House 1-0"),
        'test.toml: deck "gen2": 1+ tiles: 23, need 24 for 3 hands of 8 (substitutes not counted)',
    ),
    "too many 5+ tiles": (
        set_tile("Gen3 House 4-0", players=5),
        'test.toml: deck "gen3": 5+ tiles: 9, need 8 for the 5th player\'s hand of 8 '
        "(substitutes not counted)",
    ),
    "missing Disaster": (
        lambda d: tile(d, "Fire").update(types=["public"], disaster="", roads="NS"),
        'test.toml: deck "gen2": no Disaster tile; each generation has exactly one (gen2: fire)',
    ),
    "extra Disaster": (
        set_tile("Gen1 House 1-0", types=["disaster"], disaster="flood", roads=""),
        'test.toml: deck "gen1": 2 Disaster tiles ("Flood", "Gen1 House 1-0"); each generation '
        "has exactly one",
    ),
    "Disaster kind not the generation's": (
        set_tile("Fire", disaster="flood"),
        'test.toml: tile "Fire": field "disaster": "flood" in deck "gen2", whose Disaster is '
        '"fire" (printed order: gen1 flood, gen2 fire, gen3 crime)',
    ),
    "Disaster without kind": (
        lambda d: tile(d, "Fire").pop("disaster"),
        'test.toml: tile "Fire": field "disaster": missing; a Disaster tile names flood, fire or '
        "crime",
    ),
    "disaster kind on a non-disaster": (
        set_tile("Treasury", disaster="fire"),
        'test.toml: tile "Treasury": field "disaster": only Disaster tiles have a disaster kind',
    ),
    "Disaster with a 4+ icon": (
        set_tile("Flood", players=4),
        'test.toml: tile "Flood": field "players": a Disaster tile is dealt in every game: '
        "players = 1",
    ),
    "Disaster cornerstone": (
        set_tile("Tower 1", types=["disaster"], disaster="fire", roads=""),
        'test.toml: tile "Tower 1": field "types": cornerstones are never disasters',
    ),
    "unknown effect kind": (
        set_tile("Park", effects=[{"kind": "vp_per_type_near"}]),
        'test.toml: tile "Park": field "effects": effect 1: unknown kind "vp_per_type_near" '
        "(valid: vp_per_type_in_city, vp_per_type_adjacent, vp_per_good_tier, vp_placement, "
        "income_per_type, coins_on_type_placed, take_discarded_cornerstone, swap_cornerstone, "
        "insurance)",
    ),
    "missing effect parameter": (
        set_tile("Park", effects=[{"kind": "vp_per_type_adjacent", "types": ["residential"]}]),
        'test.toml: tile "Park": field "effects": effect 1 (vp_per_type_adjacent): parameter '
        '"vp": missing',
    ),
    "unknown effect parameter": (
        set_tile("Salvage Office", effects=[{"kind": "take_discarded_cornerstone", "vp": 1}]),
        'test.toml: tile "Salvage Office": field "effects": effect 1 (take_discarded_cornerstone): '
        'unknown parameter "vp" (none are allowed)',
    ),
    "unknown placement condition": (
        set_tile(
            "Hydro Plant", effects=[{"kind": "vp_placement", "conditions": ["centre"], "vp": 1}]
        ),
        'test.toml: tile "Hydro Plant": field "effects": effect 1 (vp_placement): parameter '
        '"conditions": unknown condition "centre" (valid: corner, edge, no_neighbours)',
    ),
    "duplicate tile name": (
        set_tile("Tower 2", name="Tower 1"),
        'test.toml: tile "Tower 1": duplicate name (tiles #11 and #12); tile names must be unique',
    ),
    "duplicate good name": (
        lambda d: d["goods"][1].update(name="Ore"),
        'test.toml: good "Ore": duplicate name (goods #1 and #2); good names must be unique',
    ),
    "duplicate board name": (
        lambda d: d["boards"][1].update(name="Ore board"),
        'test.toml: board "Ore board": duplicate name (boards #1 and #2); board names must be '
        "unique",
    ),
    "unknown prerequisite tile": (
        set_tile("Condos & Restaurant", requires_tiles=["Tresury"]),
        'test.toml: tile "Condos & Restaurant": field "requires_tiles": unknown tile "Tresury" '
        '(did you mean "Treasury"?)',
    ),
    "three prerequisite tiles": (
        set_tile("Condos & Restaurant", requires_tiles=["Treasury", "Sawmill", "Jeweller"]),
        'test.toml: tile "Condos & Restaurant": field "requires_tiles": 3 tiles, at most 2',
    ),
    "three alternatives": (
        set_tile("Treasury", alternatives=[{"cost": 5}, {"cost": 6}, {"cost": 7}]),
        'test.toml: tile "Treasury": field "alternatives": 3 alternatives, at most 2',
    ),
    "four effects": (
        set_tile("Salvage Office", effects=[{"kind": "take_discarded_cornerstone"}] * 4),
        'test.toml: tile "Salvage Office": field "effects": 4 effects, at most 3',
    ),
    "negative cost": (
        set_tile("Treasury", cost=-2),
        'test.toml: tile "Treasury": field "cost": must not be negative (got -2)',
    ),
    "negative vp": (
        set_tile("Treasury", vp=-1),
        'test.toml: tile "Treasury": field "vp": must not be negative (got -1)',
    ),
    "negative income": (
        set_tile("Postal Service", income=-3),
        'test.toml: tile "Postal Service": field "income": must not be negative (got -3)',
    ),
    "substitute of an unknown tile": (
        set_tile("Gen1 Shelter", replaces="Flod"),
        'test.toml: tile "Gen1 Shelter": field "replaces": unknown tile "Flod" (did you mean '
        '"Flood"?)',
    ),
    "substitute with another icon": (
        set_tile("Gen3 Shelter", players=4),
        'test.toml: tile "Gen3 Shelter": field "replaces": "Crime Spree" is in deck "gen3" with '
        "players 1; a substitute must have the same deck and players icon",
    ),
    "substitute of a tile no variant removes": (
        set_tile("Gen1 Shelter", replaces="Sawmill"),
        'test.toml: tile "Gen1 Shelter": field "replaces": "Sawmill" is neither a Disaster nor '
        "removed_no_disasters, so no variant takes it out",
    ),
    "Disaster without substitute": (
        drop_tile("Gen2 Shelter"),
        'test.toml: tile "Fire": no substitute; the no-disasters and random-disasters variants '
        'replace this Disaster, so one tile needs replaces = "Fire"',
    ),
    "removed tile without substitute": (
        drop_tile("Charity Office"),
        'test.toml: tile "Insurance Office": no substitute; the no-disasters variant removes this '
        'tile, so one tile needs replaces = "Insurance Office"',
    ),
    "two substitutes": (
        set_tile("Tower 11", replaces="Insurance Office"),
        'test.toml: tile "Insurance Office": 2 substitutes ("Tower 11", "Charity Office"); '
        "exactly one",
    ),
    "too few cornerstones": (
        lambda d: [d["tiles"].remove(tile(d, f"Tower {i}")) for i in (1, 2)],
        "test.toml: 19 cornerstones (substitutes not counted), need at least 20 for a 5-player "
        "draft of 4 each",
    ),
    "too few boards": (
        lambda d: d.update(boards=d["boards"][:4]),
        "test.toml: 4 boards, need at least 5 [[boards]]",
    ),
    "board good not raw": (
        lambda d: d["boards"][0].update(good="Steel"),
        'test.toml: board "Ore board": field "good": "Steel" is processed; a City Center produces '
        "a raw good",
    ),
    "good nobody produces": (
        set_tile("Jeweller", produces=[]),
        'test.toml: tile "Museum": field "requires": good "Jewels" is produced by no tile or '
        "board, so the tile can never be placed this way",
    ),
    "too many goods": (
        lambda d: d["goods"].extend({"name": f"Spice {i}", "tier": "luxury"} for i in range(21)),
        "test.toml: 31 goods; a catalogue has 1 to 30 [[goods]] entries",
    ),
    "tile not a table": (
        lambda d: d["tiles"].append("Park"),
        'test.toml: tile #146 (no name): expected a table, got the string "Park"',
    ),
}


@pytest.mark.parametrize("mutate, message", BROKEN.values(), ids=BROKEN.keys())
def test_broken_catalogue_message(mutate, message):
    assert message in problems_after(mutate)


def test_every_problem_is_reported_not_just_the_first():
    def two_mistakes(d):
        tile(d, "Treasury").update(cost=-1)
        tile(d, "Park").update(roads="Q")

    problems = problems_after(two_mistakes)
    assert len(problems) == 2
    assert any('"Treasury": field "cost"' in p for p in problems)
    assert any('"Park": field "roads"' in p for p in problems)


def test_processed_good_nobody_produces_is_fine_until_required():
    """Goods list may hold a processed good no tile produces; only requiring it is an error."""
    data = valid_catalog()
    data["goods"].append({"name": "Plastic", "tier": "processed"})
    assert validate(data, SRC) == []


def test_compile_raises_with_all_problems():
    data = valid_catalog()
    tile(data, "Treasury")["requires"] = ["Stel"]
    with pytest.raises(CatalogError) as caught:
        compile_catalog(data, SRC)
    assert caught.value.problems == [
        'test.toml: tile "Treasury": field "requires": unknown good "Stel" (did you mean "Steel"?)'
    ]


# --- compiled arrays ---------------------------------------------------------------------------


def test_shapes_and_dtypes(tables):
    n = len(valid_catalog()["tiles"]) + 6
    assert tables.tiles.shape == (n, K.N_TILE_COLS)
    assert tables.req.shape == (n, K.MAX_REQ_OPTIONS, 2)
    assert tables.effects.shape == (n, K.MAX_EFFECTS, 4)
    for array in (tables.tiles, tables.req, tables.effects, tables.goods_tier, tables.board_center):
        assert array.dtype == np.int32


def test_goods_are_bits_in_file_order(tables):
    assert tables.good_names[:7] == ("Ore", "Natural Gas", "Wood", "Oil", "Coal", "Stone", "Lumber")
    assert list(tables.goods_tier) == [0] * 6 + [1, 1, 1, 2]
    assert tables.invented_goods == (False,) * 9 + (True,)
    foundry = tables.tile_index("Steel Foundry")
    coal_ore = (1 << tables.good_index("Coal")) | (1 << tables.good_index("Ore"))
    assert tables.req[foundry, 0, K.R_GOODS] == coal_ore == 0b10001
    assert tables.tiles[foundry, K.C_PRODUCES] == 1 << 8  # Steel, the 9th good
    assert tables.tiles[foundry, K.C_POLLUTING] == 1


def test_road_bits(tables):
    assert tables.tiles[tables.tile_index("Hydro Plant"), K.C_ROADS] == K.ROAD_N | K.ROAD_E
    assert tables.tiles[tables.tile_index("Merchant Union"), K.C_ROADS] == K.ROAD_E | K.ROAD_W
    assert tables.tiles[tables.tile_index("Flood"), K.C_ROADS] == 0
    assert tables.tiles[tables.tile_index("Park"), K.C_ROADS] == 5


def test_type_masks_and_columns(tables):
    condos = tables.tiles[tables.tile_index("Condos & Restaurant")]
    assert condos[K.C_TYPES] == K.T_RESIDENTIAL | K.T_COMMERCIAL == 3
    assert (condos[K.C_DECK], condos[K.C_PLAYERS], condos[K.C_VP], condos[K.C_INCOME]) == (
        3,
        1,
        4,
        2,
    )
    flood = tables.tiles[tables.tile_index("Flood")]
    assert (flood[K.C_TYPES], flood[K.C_DISASTER]) == (K.T_DISASTER, K.DIS_FLOOD)
    safety = tables.tiles[tables.tile_index("Public Safety Department")]
    assert safety[K.C_PROTECTS] == K.PROT_FIRE | K.PROT_POLICE
    assert (safety[K.C_PLAYERS], safety[K.C_VP_NO_DISASTERS]) == (0, 5)
    market = tables.tiles[tables.tile_index("Gold Market")]
    assert (market[K.C_INCOME], market[K.C_COINS_ON_PLACE]) == (5, 3)
    assert tables.tiles[tables.tile_index("Hydro Plant"), K.C_POWER] == 1
    assert tables.tiles[tables.tile_index("Insurance Office"), K.C_REMOVED_NO_DISASTERS] == 1


def test_requirement_options(tables):
    treasury = tables.tile_index("Treasury")
    assert tables.tiles[treasury, K.C_N_REQ_OPTIONS] == 2
    assert tables.req[treasury].tolist() == [[1 << 8, 0], [0, 5], [0, 0]]
    jeweller = tables.tile_index("Jeweller")
    assert tables.tiles[jeweller, K.C_N_REQ_OPTIONS] == 1
    assert tables.req[jeweller, 0].tolist() == [(1 << 8) | (1 << 7), 2]


def test_prerequisites(tables):
    condos = tables.tiles[tables.tile_index("Condos & Restaurant")]
    assert condos[K.C_PREREQ0] == tables.tile_index("Treasury")
    assert condos[K.C_PREREQ1] == tables.tile_index("Sawmill")
    assert tables.tiles[tables.tile_index("Treasury"), K.C_PREREQ0] == -1


def test_effect_rows(tables):
    def effect(name):
        return tables.effects[tables.tile_index(name), 0].tolist()

    assert effect("Town Hall") == [K.EF_VP_PER_TYPE_CITY, K.T_PUBLIC, 2, 1]
    assert effect("Park") == [K.EF_VP_PER_TYPE_ADJACENT, K.T_RESIDENTIAL, 1, 0]
    assert effect("Resource Agency") == [K.EF_VP_PER_GOOD_TIER, K.TIER_RAW, 1, 0]
    assert effect("Hydro Plant") == [K.EF_VP_PLACEMENT, K.PL_CORNER | K.PL_NO_NEIGHBOURS, 10, 0]
    assert effect("Bank") == [K.EF_INCOME_PER_TYPE, K.T_COMMERCIAL | K.T_INDUSTRIAL, 1, 0]
    assert effect("Merchant Union") == [K.EF_COINS_ON_TYPE_PLACED, K.T_COMMERCIAL, 1, 0]
    assert effect("Salvage Office") == [K.EF_TAKE_DISCARDED_CORNERSTONE, 0, 0, 0]
    assert effect("Contract Office") == [K.EF_SWAP_CORNERSTONE, 0, 0, 0]
    assert effect("Insurance Office") == [
        K.EF_INSURANCE,
        (1 << K.DIS_FIRE) | (1 << K.DIS_CRIME),
        0,
        0,
    ]
    # Unused effect slots stay EF_NONE.
    assert tables.effects[tables.tile_index("Town Hall"), 1:].tolist() == [[0, 0, 0, 0]] * 2


def test_city_centers_appended_per_board(tables):
    n_file = len(valid_catalog()["tiles"])
    assert tables.board_center.tolist() == list(range(n_file, n_file + 6))
    assert tables.tile_names[n_file] == "City Center (Ore board)"
    assert tables.tile_names[-1] == "City Center (Stone board)"
    wood = tables.tiles[n_file + 2]
    assert wood[K.C_DECK] == K.DECK_CENTER
    assert wood[K.C_TYPES] == K.T_RESOURCE
    assert wood[K.C_PRODUCES] == 1 << tables.good_index("Wood")
    assert wood[K.C_ROADS] == K.ROAD_E | K.ROAD_S | K.ROAD_W
    assert (wood[K.C_PREREQ0], wood[K.C_REPLACES], wood[K.C_N_REQ_OPTIONS]) == (-1, -1, 1)


def test_substitutes_point_at_the_tile_they_replace(tables):
    shelter = tables.tile_index("Gen1 Shelter")
    assert tables.tiles[shelter, K.C_REPLACES] == tables.tile_index("Flood")
    charity = tables.tile_index("Charity Office")
    assert tables.tiles[charity, K.C_REPLACES] == tables.tile_index("Insurance Office")
    assert int((tables.tiles[:, K.C_REPLACES] >= 0).sum()) == 4
    # Substitutes are in their deck's tile list; the engine leaves them out of the standard deal.
    assert len(tables.deck(K.DECK_GEN1)) == 41


def test_json_form_recompiles_to_the_same_arrays(tables):
    """catalog_as_dict names every field, so it can be written back as a catalogue file."""
    as_dict = catalog_as_dict(tables)
    assert as_dict["catalog"]["reconstructed"] is True
    assert as_dict["tiles"][tables.tile_index("Treasury")]["alternatives"] == [
        {"requires": [], "cost": 5}
    ]
    file_tiles = []
    for entry in as_dict["tiles"]:
        if entry["deck"] == "center":
            continue
        entry = {k: v for k, v in entry.items() if k != "index" and v is not None}
        file_tiles.append(entry)
    data = {
        "catalog": {"name": tables.name, "reconstructed": tables.reconstructed},
        "goods": as_dict["goods"],
        "boards": [{k: b[k] for k in ("name", "good", "roads")} for b in as_dict["boards"]],
        "tiles": file_tiles,
    }
    again = compile_catalog(data, SRC)
    assert np.array_equal(again.tiles, tables.tiles)
    assert np.array_equal(again.req, tables.req)
    assert np.array_equal(again.effects, tables.effects)
    assert again.tile_names == tables.tile_names


# --- inline tiles ------------------------------------------------------------------------------

SHOP = {"name": "Corner Shop", "types": ["commercial"], "roads": "NS", "income": 2}


def test_with_extra_tiles_appends_after_centers(tables):
    extended = with_extra_tiles(
        tables, [SHOP, {**SHOP, "name": "Big Shop", "requires": ["Steel"]}], "inline"
    )
    assert extended.n_tiles == tables.n_tiles + 2
    shop = extended.tiles[tables.n_tiles]
    assert (shop[K.C_DECK], shop[K.C_TYPES], shop[K.C_INCOME]) == (K.DECK_NONE, K.T_COMMERCIAL, 2)
    assert extended.req[tables.n_tiles + 1, 0, K.R_GOODS] == 1 << 8
    assert extended.tile_names[-2:] == ("Corner Shop", "Big Shop")
    assert np.array_equal(extended.board_center, tables.board_center)
    assert extended.digest != tables.digest
    assert extended.source == "test.toml + inline"


def test_extra_tiles_may_name_catalogue_prerequisites_and_decks(tables):
    extra = {**SHOP, "deck": "gen3", "players": 1, "requires_tiles": ["Treasury"]}
    extended = with_extra_tiles(tables, [extra], "inline")
    row = extended.tiles[-1]
    assert (row[K.C_DECK], row[K.C_PLAYERS], row[K.C_PREREQ0]) == (
        3,
        1,
        tables.tile_index("Treasury"),
    )


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            {**SHOP, "name": "Treasury"},
            'inline: tile "Treasury": name already used by the catalogue',
        ),
        (
            {**SHOP, "requires": ["Stel"]},
            'inline: tile "Corner Shop": field "requires": unknown good "Stel"',
        ),
        ({**SHOP, "colour": "blue"}, 'inline: tile "Corner Shop": unknown field "colour"'),
        (
            {**SHOP, "roads": ""},
            'inline: tile "Corner Shop": field "roads": empty; only Disaster tiles may have no',
        ),
    ],
)
def test_extra_tiles_are_validated_field_by_field(tables, extra, message):
    with pytest.raises(CatalogError) as caught:
        with_extra_tiles(tables, [extra], "inline")
    assert any(p.startswith(message) for p in caught.value.problems), caught.value.problems


# --- files -------------------------------------------------------------------------------------


def test_load_from_file_records_digest_and_source(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(to_toml(valid_catalog()), encoding="utf-8")
    tables = load_catalog(path)
    assert tables.source == str(path)
    assert tables.digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert tables.name == "Test set"


def test_toml_syntax_error_names_the_line(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[catalog]\nname = "x"\nreconstructed = \n', encoding="utf-8")
    with pytest.raises(CatalogError) as caught:
        load_catalog(path)
    [problem] = caught.value.problems
    assert problem.startswith(f"{path}: TOML syntax error: ")
    assert "line 3" in problem


def test_missing_file_and_directory_are_user_errors(tmp_path):
    with pytest.raises(UserError, match=r"nope\.toml: catalogue file not found$"):
        load_catalog(tmp_path / "nope.toml")
    with pytest.raises(UserError, match="is a directory, not a catalogue file"):
        load_catalog(tmp_path)


def test_non_utf8_file(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes('[catalog]\nname = "Caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(CatalogError, match=r"latin1\.toml: not UTF-8 text \(line 2\)$"):
        load_catalog(path)


def test_template_parses_and_only_lacks_deck_sizes():
    """The template's tiles are each valid; only whole-deck rules (counts) fail."""
    problems = validate(tomllib.loads(TEMPLATE.read_text(encoding="utf-8")), "template.toml")
    assert problems
    assert all("field" not in p for p in problems), problems
    kinds = tomllib.loads(TEMPLATE.read_text(encoding="utf-8"))
    used = {e["kind"] for t in kinds["tiles"] for e in t.get("effects", [])}
    assert used == set(K.EFFECT_NAMES)


# --- the default catalogue ---------------------------------------------------------------------


def test_default_catalogue_is_valid():
    data = tomllib.loads(DEFAULT_CATALOG.read_text(encoding="utf-8"))
    assert validate(data, DEFAULT_CATALOG.name) == []


def test_default_catalogue_matches_the_known_counts():
    """Known facts: 30 cornerstones, 40 tiles per generation (24/8/8), 6 boards, 17 goods
    (6 raw, 8 processed, 3 luxury); the set is a reconstruction and says so."""
    tables = load_catalog()
    assert tables.reconstructed
    assert tables.source == "default_catalog.toml"
    standard = tables.tiles[tables.tiles[:, K.C_REPLACES] < 0]
    assert int((standard[:, K.C_DECK] == K.DECK_CORNERSTONE).sum()) == 30
    for deck in (K.DECK_GEN1, K.DECK_GEN2, K.DECK_GEN3):
        in_deck = standard[standard[:, K.C_DECK] == deck]
        assert np.bincount(in_deck[:, K.C_PLAYERS], minlength=6)[[1, 4, 5]].tolist() == [24, 8, 8]
    assert len(tables.board_names) == 6
    assert np.bincount(tables.goods_tier).tolist() == [6, 8, 3]


def glass_only_from_4_plus(data):
    """Glassworks, the only Glass producer, becomes a 4+ tile (a 4+ House becomes 1+ so the
    deck still holds 24/8/8 tiles by icon)."""
    tile(data, "Glassworks")["players"] = 4
    tile(data, "Gen1 House 4-0")["players"] = 1


FIXTURE_ORPHANS = [
    f'{SRC}: good "{good}": no tile requires it (printed or alternative), so it is never bought '
    "and feeds no other good"
    for good in ("Natural Gas", "Stone", "Lumber")
]


def test_the_fixture_warns_only_of_its_orphaned_goods_and_v1_of_nothing(tables):
    # The synthetic fixture never uses Natural Gas, Stone (its boards make them) or Lumber.
    assert catalog_warnings(tables) == FIXTURE_ORPHANS
    assert catalog_warnings(load_catalog("reconstruction_v1")) == []


def test_v2_warns_that_no_tile_needs_chemicals_and_v3_of_nothing():
    """Issue 38: the v2 rebalance cut Chemicals from its last consumer's requirements; v3 (the
    default) gives it back to the Hovercar Plant."""
    assert catalog_warnings(load_catalog("reconstruction_v2")) == [
        'catalog_reconstruction_v2.toml: good "Chemicals": no tile requires it (printed or '
        "alternative), so it is never bought and feeds no other good"
    ]
    assert catalog_warnings(load_catalog()) == []


def test_warns_of_a_good_no_tile_can_make():
    # A good in the list that nothing produces (legal while nothing requires it), and one
    # produced only by a Disaster (never in a city).
    data = valid_catalog()
    data["goods"] += [{"name": "Plastic", "tier": "processed"}, {"name": "Ash", "tier": "raw"}]
    next(t for t in data["tiles"] if "disaster" in t["types"])["produces"] = ["Ash"]
    assert validate(data, SRC) == []
    assert catalog_warnings(compile_catalog(data, SRC)) == [
        *FIXTURE_ORPHANS,
        f'{SRC}: good "Plastic": no tile or board produces it, so no city ever holds it',
        f'{SRC}: good "Ash": no tile or board produces it, so no city ever holds it',
    ]


def test_a_good_needed_only_by_an_alternative_is_not_orphaned_and_luxury_never_is():
    data = valid_catalog()
    tile(data, "Treasury")["alternatives"] = [{"requires": ["Lumber"], "cost": 0}]
    assert FIXTURE_ORPHANS[2] not in catalog_warnings(compile_catalog(data, SRC))
    # The luxury good is the end of the goods tree (scored 10 VP): nobody needing it is the
    # design. Museum is its only consumer.
    tile(data, "Museum").pop("requires")
    assert not any('"Jewels"' in w for w in catalog_warnings(compile_catalog(data, SRC)))


def test_warns_when_a_1_plus_tile_needs_a_good_only_4_plus_tiles_make():
    # The Jeweller (1+) needs Glass: in 1-3 player games no Glass is ever dealt.
    data = valid_catalog()
    glass_only_from_4_plus(data)
    assert validate(data, SRC) == []  # legal: a warning, not a problem
    assert catalog_warnings(compile_catalog(data, SRC)) == [
        *FIXTURE_ORPHANS,
        f'{SRC}: tile "Jeweller": field "requires": good "Glass" is produced only by tiles with '
        "a higher player-count icon, so with fewer than 4 players this requirement can never "
        "be met",
    ]


def test_a_cornerstone_producing_the_good_silences_the_warning():
    # Cornerstones are dealt at every player count.
    data = valid_catalog()
    glass_only_from_4_plus(data)
    tile(data, "Tower 1")["produces"] = ["Glass"]
    assert catalog_warnings(compile_catalog(data, SRC)) == FIXTURE_ORPHANS
