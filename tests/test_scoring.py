"""Final scoring (sim.scoring.score_city): one test per rule, quoting the rule, on tables built
by hand; a property test against the independent plain scorer; and a no-JIT parity run."""

import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plain_scoring import build_tables, city, plain_score, tile

from sim.neom import constants as K
from sim.neom.grid import (
    M_GOODS,
    N_MASKS,
    add_tile,
    city_goods,
    masks_of,
    popcount,
    remove_tile,
    road_component,
    surrounding_mask,
)
from sim.neom.scoring import neighborhood_value, score_city
from sim.neom.tables import make_rules

TESTS = Path(__file__).resolve().parent


def score(cells, tables, money=0, rules=None):
    """score_city's breakdown as a dict keyed by SCORE_KEYS."""
    tiles, effects, goods_tier = tables
    out = np.zeros(K.N_SCORE, dtype=np.int32)
    rules = make_rules() if rules is None else rules
    score_city(cells, money, tiles, effects, goods_tier, rules, out)
    return dict(zip(K.SCORE_KEYS, out.tolist(), strict=True))


def snake(n, index, start_row=0):
    """Placements of ``index`` on the first ``n`` squares, row by row from ``start_row``."""
    cells = [(start_row + i // K.GRID, i % K.GRID) for i in range(n)]
    return {pos: index for pos in cells}


# --- Grid ---------------------------------------------------------------------------------


def test_grid_reading():
    """The City board is a 5x5 grid with the City Center in the middle square (rows 0-4 top to
    bottom, so (2,2) is cell 12); "adjacent" means the 8 surrounding squares (002), fewer on
    the edge; a road link needs a road on both sides of the shared edge, N meaning up."""
    assert K.CENTER_CELL == 2 * K.GRID + 2
    assert [popcount(surrounding_mask(c)) for c in (0, 2, 12)] == [3, 5, 8]
    tables = build_tables([tile(roads="N"), tile(roads="S"), tile(roads="E")])
    tiles = tables[0]
    linked = city({(2, 2): 0, (1, 2): 1})
    assert road_component(linked, tiles, K.CENTER_CELL, 0) == (1 << 12) | (1 << 7)
    one_sided = city({(2, 2): 0, (1, 2): 2})
    assert road_component(one_sided, tiles, K.CENTER_CELL, 0) == 1 << 12


def test_masks_follow_each_placement_and_removal():
    """A city's masks kept up to date tile by tile (add_tile, remove_tile: what a strategy does
    to try a move) equal the masks computed afresh from its squares, goods included."""
    tables = build_tables(
        [
            tile("residential", roads="NS"),
            tile(("commercial", "industrial"), roads="EW", produces=(1,), polluting=True),
            tile("public", roads="NESW", power=True),
            tile("resource", roads="N", produces=(0,)),
        ]
    )
    tiles = tables[0]
    rng = np.random.default_rng(5)
    cells = np.full(K.N_CELLS, K.EMPTY, dtype=np.int16)
    kept = masks_of(cells, tiles)
    for _ in range(300):
        cell = int(rng.integers(K.N_CELLS))
        old = cells[cell]
        new = K.EMPTY if rng.random() < 0.3 else int(rng.integers(len(tiles)))
        cells[cell] = new
        if old != K.EMPTY:
            remove_tile(kept, cell, old, cells, tiles)
        if new != K.EMPTY:
            add_tile(kept, cell, new, tiles)
        assert kept.tolist() == masks_of(cells, tiles).tolist()
        assert kept[M_GOODS] == city_goods(cells, tiles)
    assert len(kept) == N_MASKS


# --- Tiles --------------------------------------------------------------------------------


def test_only_residential_and_public_tiles_score_their_vp():
    """001 Tiles: "Add up the Victory Point values on the (Residential and Public) tiles in
    your City": printed VP on Commercial, Industrial or Resource tiles does not score."""
    tables = build_tables(
        [
            tile("residential", vp=3),
            tile("public", vp=5),
            tile("commercial", vp=7),
            tile("industrial", vp=11),
            tile("resource", vp=13),
        ]
    )
    cells = city({(0, 0): 0, (0, 2): 1, (0, 4): 2, (4, 0): 3, (4, 4): 4})
    assert score(cells, tables)["tiles"] == 3 + 5


def test_variable_vp_scores_on_residential_and_public_tiles_only():
    """000 Tiles: "If a tile has a variable number of VP, make sure to assess its current
    value" -- on the Residential and Public tiles that score VP."""
    per_resource = (K.EF_VP_PER_TYPE_CITY, K.T_RESOURCE, 2, 0)
    tables = build_tables(
        [
            tile("public", vp=1, effects=[per_resource]),
            tile("commercial", vp=1, effects=[per_resource]),
            tile("resource"),
        ]
    )
    cells = city({(2, 2): 2, (0, 0): 2, (0, 4): 2, (4, 0): 0, (4, 4): 1})
    assert score(cells, tables)["tiles"] == 1 + 2 * 3


def test_cornerstone_tiles_score_like_generation_tiles():
    """000: "Cornerstone and Generation tiles should be treated equally" at scoring."""
    tables = build_tables([tile("public", vp=4), tile("public", vp=4)])
    tables[0][1, K.C_DECK] = K.DECK_CORNERSTONE
    tables[0][1, K.C_PLAYERS] = 0
    both = score(city({(0, 0): 0, (4, 4): 1}), tables)
    assert both["tiles"] == 8


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        (K.V_STANDARD, 4),
        (K.V_NO_DISASTERS, 4 + 2 + 3),
        (K.V_RANDOM_DISASTERS, 4),
        (K.V_BEGINNER, 4),
    ],
)
def test_no_disasters_variant_adds_the_updated_vp(variant, expected):
    """001 No disasters variant: "Updated victory points: Fire Department +2 VP, Police
    Department +3 VP" -- only in that variant."""
    tables = build_tables(
        [
            tile("public", vp=2, vp_no_disasters=2),
            tile("public", vp=2, vp_no_disasters=3),
        ]
    )
    cells = city({(0, 0): 0, (4, 4): 1})
    assert score(cells, tables, rules=make_rules(variant))["tiles"] == expected


def test_cut_off_tiles_still_score():
    """003: "you lose neither the effects nor the victory points of cut-off tiles": tiles with
    no road chain to the City Center score their VP, variable VP and goods like any other."""
    tables = build_tables(
        [
            tile("resource", roads="", produces=(0,)),
            tile("public", roads="S", vp=3, effects=[(K.EF_VP_PLACEMENT, K.PL_CORNER, 2, 0)]),
            tile("industrial", roads="N", produces=(1,)),
        ]
    )
    result = score(city({(2, 2): 0, (0, 0): 1, (1, 0): 2}), tables)
    assert (result["tiles"], result["goods"]) == (3 + 2, 1 + 2)


# --- Neighborhoods ------------------------------------------------------------------------


@pytest.mark.parametrize(("size", "value"), [(1, 1), (2, 3), (8, 36), (9, 40), (12, 52)])
def test_neighborhood_value_by_size(size, value):
    """001 Neighborhoods: "The value of a Neighborhood depends on its size" (002: triangular
    numbers up to 8); "Each tile beyond the 8th increases the value of its Neighborhood by a
    constant 4 VP": sizes 1, 8, 9, 12 are worth 1, 36, 40, 52."""
    assert neighborhood_value(size) == value
    tables = build_tables([tile("residential", roads="NESW")])
    assert score(city(snake(size, 0)), tables)["neighborhoods"] == value


def test_residential_tiles_without_a_road_link_are_separate_neighborhoods():
    """001: Residential tiles form Neighborhoods "by themselves or with other Residential tiles,
    if they are directly connected by Roads": side by side without a road on both sides of the
    shared edge, they are two Neighborhoods of 1."""
    tables = build_tables(
        [
            tile("residential", roads="E"),
            tile("residential", roads="N"),
            tile("residential", roads="W"),
        ]
    )
    assert score(city({(0, 0): 0, (0, 1): 1}), tables)["neighborhoods"] == 1 + 1
    assert score(city({(0, 0): 0, (0, 1): 2}), tables)["neighborhoods"] == 3


def test_neighborhood_chain_through_other_tiles():
    """002 Neighborhoods: Residential tiles connected by roads form a Neighborhood "even if
    they are not adjacent"; by default the road chain may pass through any tile (here a
    Commercial tile and the City Center), and only Residential tiles count toward its size."""
    tables = build_tables(
        [
            tile("residential", roads="EW"),
            tile("commercial", roads="EW"),
            tile("resource", roads="EW"),
        ]
    )
    cells = city({(2, 0): 0, (2, 1): 1, (2, 2): 2, (2, 3): 0, (2, 4): 0})
    assert score(cells, tables)["neighborhoods"] == neighborhood_value(3)


def test_residential_only_option_breaks_chains_at_other_tiles():
    """Rules option RO_NEIGHBORHOOD_THROUGH_ANY = 0 (the reading of 000 "connected to each
    other ... through roads" as Residential-to-Residential only): a Commercial tile in the
    chain splits the Neighborhood."""
    tables = build_tables([tile("residential", roads="EW"), tile("commercial", roads="EW")])
    cells = city({(2, 0): 0, (2, 1): 0, (2, 2): 1, (2, 3): 0})
    rules = make_rules(neighborhood_through_any=False)
    assert score(cells, tables, rules=rules)["neighborhoods"] == 3 + 1
    assert score(cells, tables)["neighborhoods"] == 6


def test_neighborhood_chain_stops_at_an_empty_square():
    """Roads link tiles only where both tiles have a road on the shared edge: an empty square
    in the row breaks the chain."""
    tables = build_tables([tile("residential", roads="EW")])
    cells = city({(2, 0): 0, (2, 1): 0, (2, 3): 0, (2, 4): 0})
    assert score(cells, tables)["neighborhoods"] == 3 + 3


# --- Goods ----------------------------------------------------------------------------------


def test_each_good_scores_once_by_tier():
    """001 Goods: "each Raw Good is worth 1 VP, each Processed Good 2 VP, and each Luxury Good
    10 VP. Each Good is scored only once, regardless of how many tiles in your City show that
    Good." The City Center's raw good counts while the center is in the city."""
    center = tile("resource", produces=(0,))
    tables = build_tables(
        [center, tile("resource", produces=(0,)), tile("industrial", produces=(1, 2))]
    )
    cells = city({(2, 2): 0, (2, 3): 1, (1, 2): 2, (3, 2): 2})
    assert score(cells, tables)["goods"] == 1 + 2 + 10


def test_replacing_the_city_center_loses_its_good():
    """000: "If you replace or lose a Good-producing tile, you must immediately return the
    corresponding Good token ... unless you already have another tile in your City that
    produces that Good" -- the City Center is such a tile."""
    tables = build_tables(
        [tile("resource", produces=(0,)), tile("public"), tile("resource", produces=(0,))]
    )
    assert score(city({(2, 2): 0}), tables)["goods"] == 1
    assert score(city({(2, 2): 1}), tables)["goods"] == 0
    assert score(city({(2, 2): 1, (2, 3): 2}), tables)["goods"] == 1


# --- Money ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("money", "vp"), [(0, 0), (1, 0), (2, 1), (13, 6), (14, 7)])
def test_money_scores_one_vp_per_two_coins_rounded_down(money, vp):
    """001 Money: "Score 1 VP for every 2 you have left, rounded down.\""""
    tables = build_tables([tile("resource")])
    assert score(city({(2, 2): 0}), tables, money=money)["money"] == vp


# --- Pollution ------------------------------------------------------------------------------


def test_pollution_example_from_the_rules():
    """000: "three Residential tiles and an Industrial tile ... two of the Residential tiles are
    diagonally adjacent [to the Industrial tile] (top left and top right), the third
    orthogonally adjacent ... you end up losing 1+1+2 = 4 VP"."""
    tables = build_tables(
        [tile("residential", roads=""), tile("industrial", roads="", polluting=True)]
    )
    cells = city({(1, 1): 0, (1, 3): 0, (2, 1): 0, (2, 2): 1})
    assert score(cells, tables)["pollution"] == -4


def test_one_polluting_tile_costs_at_every_residential_tile_near_it():
    """001 Pollution: "You lose 2 VP for each orthogonally adjacent and 1 VP for each diagonally
    adjacent Polluting tile. (You can lose points for the same Polluting tile more than once, if
    it is nearby multiple Residential tiles.)" Tiles two squares away do not pollute."""
    tables = build_tables(
        [tile("residential"), tile("industrial", polluting=True), tile("industrial")]
    )
    cells = city({(2, 2): 1, (1, 2): 0, (3, 2): 0, (1, 1): 0, (0, 2): 0, (2, 4): 0, (4, 4): 1})
    # (1,2) and (3,2) orthogonal: 2+2; (1,1) diagonal: 1; (0,2), (2,4) two away: 0.
    assert score(cells, tables)["pollution"] == -5
    not_polluting = city({(2, 2): 2, (1, 2): 0, (3, 2): 0})
    assert score(not_polluting, tables)["pollution"] == 0


def test_residential_polluting_tile_does_not_pollute_itself():
    """Pollution counts the Polluting tiles around a Residential tile: a tile that is both
    Residential and Polluting costs its neighbours, not itself."""
    tables = build_tables([tile("residential", polluting=True), tile("residential")])
    assert score(city({(0, 0): 0}), tables)["pollution"] == 0
    assert score(city({(0, 0): 0, (0, 1): 1}), tables)["pollution"] == -2
    assert score(city({(0, 0): 0, (1, 1): 0}), tables)["pollution"] == -2


def test_several_polluting_tiles_add_up_at_one_residential_tile():
    """001 Pollution: "for each orthogonally adjacent and ... each diagonally adjacent
    Polluting tile": all 8 surrounding squares count."""
    tables = build_tables([tile("residential"), tile("industrial", polluting=True)])
    ring = {(r, c): 1 for r in range(3) for c in range(3) if (r, c) != (1, 1)}
    cells = city({(1, 1): 0, **ring})
    assert score(cells, tables)["pollution"] == -(4 * 2 + 4 * 1)


# --- Ghost town, power, totals ----------------------------------------------------------------


@pytest.mark.parametrize(("n_residential", "penalty"), [(0, -10), (1, -4), (2, 0), (3, 0)])
def test_ghost_town(n_residential, penalty):
    """001 Ghost Town: "You lose 10 VP if you do not have any Residential tiles in your City.
    You lose 4 VP if you have only 1 Residential tile.\""""
    tables = build_tables([tile("residential"), tile("public")])
    placements = {(2, 2): 1, **{(0, c): 0 for c in range(n_residential)}}
    assert score(city(placements), tables)["ghost_town"] == penalty


def test_power():
    """001 Power: "You lose 5 VP if you do not have at least one Power-generating tile in your
    City" -- whatever the power tile's type."""
    tables = build_tables([tile("public"), tile("industrial", power=True)])
    assert score(city({(2, 2): 0}), tables)["power"] == -5
    assert score(city({(2, 2): 0, (0, 0): 1}), tables)["power"] == 0


def test_two_type_tile_counts_as_both_types():
    """000: Condos & Restaurant and Apartments & Retail "are considered both Residential and
    Commercial": such a tile scores its VP, joins Neighborhoods, suffers pollution and counts
    against the ghost town like any Residential tile."""
    condos = tile(("residential", "commercial"), vp=2, roads="EW")
    tables = build_tables([condos, tile("industrial", roads="EW", polluting=True, power=True)])
    cells = city({(0, 0): 0, (0, 1): 0, (0, 2): 1})
    result = score(cells, tables)
    assert result["tiles"] == 4
    assert result["neighborhoods"] == 3
    assert result["pollution"] == -2
    assert result["ghost_town"] == 0


def test_total_is_the_sum_of_the_categories():
    """001 Final Score: "Total these values to determine your final score.\""""
    tables = build_tables(
        [
            tile("residential", vp=2, roads="EW"),
            tile("industrial", roads="EW", produces=(1,), polluting=True),
            tile("resource", roads="EW", produces=(0,)),
        ]
    )
    cells = city({(2, 2): 2, (2, 1): 0, (2, 0): 1})
    result = score(cells, tables, money=9)
    expected = {
        "tiles": 2,
        "neighborhoods": 1,
        "goods": 1 + 2,
        "money": 4,
        "pollution": -2,
        "ghost_town": -4,
        "power": -5,
    }
    expected["total"] = sum(expected.values())
    assert result == expected


# --- Property test against the independent scorer -------------------------------------------

TYPE_CHOICES = ("residential", "commercial", "industrial", "public", "resource")


@st.composite
def effect_rows(draw):
    kind = draw(st.integers(K.EF_NONE, K.N_EFFECT_KINDS - 1))
    if kind == K.EF_VP_PER_GOOD_TIER:
        a = draw(st.sampled_from(sorted(K.TIER_NAMES.values())))
    elif kind == K.EF_VP_PLACEMENT:
        a = draw(st.integers(0, K.PL_CORNER | K.PL_EDGE | K.PL_NO_NEIGHBOURS))
    else:
        a = draw(st.integers(1, 31))
    return (kind, a, draw(st.integers(0, 6)), draw(st.integers(0, 1)))


@st.composite
def tile_specs(draw, n_goods):
    types = draw(st.lists(st.sampled_from(TYPE_CHOICES), min_size=1, max_size=2, unique=True))
    roads = "".join(draw(st.sets(st.sampled_from("NESW"))))
    return tile(
        tuple(types),
        roads=roads,
        vp=draw(st.integers(0, 10)),
        produces=draw(st.sets(st.integers(0, n_goods - 1), max_size=3)),
        power=draw(st.integers(0, 5)) == 0,
        polluting=draw(st.booleans()),
        vp_no_disasters=draw(st.integers(0, 5)),
        effects=draw(st.lists(effect_rows(), max_size=K.MAX_EFFECTS)),
    )


@st.composite
def random_cities(draw):
    n_goods = draw(st.integers(1, 8))
    goods_tier = draw(st.lists(st.integers(0, 2), min_size=n_goods, max_size=n_goods))
    specs = draw(st.lists(tile_specs(n_goods), min_size=1, max_size=10))
    # Negative draws are empty squares: cities are mostly full, so neighborhoods grow large.
    squares = draw(st.lists(st.integers(-3, len(specs) - 1), min_size=25, max_size=25))
    cells = np.array([max(s, K.EMPTY) for s in squares], dtype=np.int16)
    rules = make_rules(
        variant=draw(st.sampled_from(sorted(K.VARIANT_NAMES.values()))),
        neighborhood_through_any=draw(st.booleans()),
    )
    money = draw(st.integers(0, 150))
    return cells, money, build_tables(specs, goods_tier), rules


# The no-JIT parity run (below) replays this file interpreted: its aim there is that the
# scorer runs as plain Python at all, which 50 cities show; 300 is for the compiled code.
@settings(max_examples=50 if numba.config.DISABLE_JIT else 300, deadline=None)
@given(random_cities())
def test_compiled_scoring_matches_the_plain_scorer(case):
    """On random cities (random types, roads, flags, effects, money, rules options), every
    score key of score_city equals the independent plain-Python scorer's."""
    cells, money, tables, rules = case
    assert score(cells, tables, money, rules) == plain_score(cells, money, *tables, rules)


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="this is the no-JIT run itself")
def test_scoring_and_effects_tests_pass_without_jit():
    """Parity: the same scoring and effect tests pass with NUMBA_DISABLE_JIT=1 (plain Python)."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(TESTS / "test_scoring.py"),
            str(TESTS / "test_effects.py"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
