"""One test per effect kind evaluator of sim.effects (tables built by hand, no catalogue)."""

import numpy as np
import pytest
from plain_scoring import build_tables, city, tile

from sim.neom import constants as K
from sim.neom.effects import (
    city_income,
    effect_coins_on_placed,
    effect_income,
    effect_vp,
    insured_against,
    tile_income,
    tile_variable_vp,
    vp_reads_change,
)
from sim.neom.grid import masks_of

RES, COM, IND, PUB, RSC = 0, 1, 2, 3, 4  # tile indices of the table below
SHOP_EW = 5  # the first extra tile of tables_with in the placement test
SHOP_INCOME = 3


def base_specs():
    return [
        tile("residential"),
        tile("commercial", income=SHOP_INCOME),
        tile("industrial", produces=(1,), polluting=True),
        tile("public"),
        tile("resource", produces=(0,)),
    ]


def tables_with(*extra):
    """The base table plus extra tiles (indices 5, 6, ...)."""
    return build_tables(base_specs() + list(extra))


def vp_of(row, cell, cells, tables):
    tiles, _effects, goods_tier = tables
    masks = masks_of(cells, tiles)
    return effect_vp(row[0], row[1], row[2], row[3], cell, cells, tiles, masks, goods_tier)


def test_vp_per_type_in_city_counts_every_matching_tile():
    """Kind vp_per_type_in_city: "N VP per tile of one of these types in the city"; a tile of
    two matching types counts once, and the owner counts unless exclude_self."""
    both = tile(("residential", "commercial"))
    tables = tables_with(both)  # index 5
    cells = city({(0, 0): RES, (0, 1): COM, (4, 4): 5, (2, 2): RSC, (1, 1): PUB})
    types = K.T_RESIDENTIAL | K.T_COMMERCIAL
    row = (K.EF_VP_PER_TYPE_CITY, types, 2, 0)
    assert vp_of(row, 12, cells, tables) == 2 * 3
    # The owner on (0,0) is Residential: exclude_self drops it; on (1,1) (Public) it does not.
    assert vp_of((K.EF_VP_PER_TYPE_CITY, types, 2, 1), 0, cells, tables) == 2 * 2
    assert vp_of((K.EF_VP_PER_TYPE_CITY, types, 2, 1), 6, cells, tables) == 2 * 3


def test_vp_per_type_adjacent_counts_the_8_surrounding_squares():
    """Kind vp_per_type_adjacent (rules 002: "adjacent" on tiles means the 8 squares around,
    diagonals included): N VP per matching tile around the owner, not further away."""
    tables = tables_with()
    owner = 2 * K.GRID + 2
    cells = city(
        {(2, 2): PUB, (1, 1): RES, (1, 2): RES, (3, 3): RES, (2, 3): COM, (0, 0): RES, (4, 2): RES}
    )
    row = (K.EF_VP_PER_TYPE_ADJACENT, K.T_RESIDENTIAL, 3, 0)
    assert vp_of(row, owner, cells, tables) == 3 * 3
    corner = city({(0, 0): PUB, (0, 1): RES, (1, 0): RES, (1, 1): RES, (0, 2): RES})
    assert vp_of(row, 0, corner, tables) == 3 * 3


def test_vp_per_good_tier_counts_each_good_token_once():
    """Kind vp_per_good_tier: N VP per good of that tier the city produces (its Good tokens:
    two tiles producing the same good give one token)."""
    tables = build_tables(
        [tile("public"), tile("resource", produces=(0,)), tile("resource", produces=(0, 3))],
        goods_tier=(K.TIER_RAW, K.TIER_PROCESSED, K.TIER_LUXURY, K.TIER_RAW),
    )
    cells = city({(2, 2): 1, (2, 3): 1, (1, 2): 2, (0, 0): 0})
    assert vp_of((K.EF_VP_PER_GOOD_TIER, K.TIER_RAW, 2, 0), 0, cells, tables) == 2 * 2
    assert vp_of((K.EF_VP_PER_GOOD_TIER, K.TIER_PROCESSED, 2, 0), 0, cells, tables) == 0


@pytest.mark.parametrize(
    ("conditions", "cell", "neighbour", "expected", "neighbour_tile"),
    [
        (K.PL_CORNER, 0, None, 10, COM),
        (K.PL_CORNER, 24, 12, 10, COM),
        (K.PL_CORNER, 2, None, 0, COM),  # edge, not a corner
        (K.PL_EDGE, 2, None, 10, COM),
        (K.PL_EDGE, 20, None, 10, COM),  # corners are on the outer ring
        (K.PL_EDGE, 6, None, 0, COM),
        (K.PL_NO_NEIGHBOURS, 6, 18, 10, COM),  # (3,3) is two squares away
        (K.PL_NO_NEIGHBOURS, 6, 12, 0, COM),  # (2,2) is diagonal to (1,1)
        (K.PL_CORNER | K.PL_NO_NEIGHBOURS, 4, 12, 10, COM),
        (K.PL_CORNER | K.PL_NO_NEIGHBOURS, 4, 9, 10, COM),  # (1,4) is road-linked to (0,4)
        (K.PL_CORNER | K.PL_NO_NEIGHBOURS, 4, 9, 0, SHOP_EW),  # (1,4) touches, no shared road
        (K.PL_CORNER | K.PL_NO_NEIGHBOURS, 4, 8, 0, COM),  # (1,3) is diagonal to (0,4)
    ],
)
def test_vp_placement_needs_every_listed_condition(
    conditions, cell, neighbour, expected, neighbour_tile
):
    """Kind vp_placement: N VP if all listed conditions hold for the tile's square (corner;
    edge = outer ring incl. corners; alone = no tile in the 8 surrounding squares but the ones
    road-linked to it), e.g. the power plant worth 10 VP "when placed alone in a corner": a
    placed tile is always road-linked to a neighbour, so that neighbour does not count."""
    tables = tables_with(tile("commercial", roads="EW"))  # SHOP_EW: no N/S roads
    placements = {(cell // K.GRID, cell % K.GRID): PUB}
    if neighbour is not None:
        placements[(neighbour // K.GRID, neighbour % K.GRID)] = neighbour_tile
    row = (K.EF_VP_PLACEMENT, conditions, 10, 0)
    assert vp_of(row, cell, city(placements), tables) == expected


def test_tile_variable_vp_sums_the_tiles_effect_rows():
    """A tile's variable VP is the sum of its VP effects (up to 3 rows)."""
    park = tile(
        "public",
        effects=[
            (K.EF_VP_PER_TYPE_ADJACENT, K.T_RESIDENTIAL, 1, 0),
            (K.EF_VP_PLACEMENT, K.PL_EDGE, 4, 0),
            (K.EF_INCOME_PER_TYPE, K.T_RESIDENTIAL, 5, 0),  # money, not VP
        ],
    )
    tiles, effects, goods_tier = tables_with(park)
    cells = city({(0, 2): 5, (0, 1): RES, (1, 3): RES})
    masks = masks_of(cells, tiles)
    assert tile_variable_vp(2, cells, tiles, masks, effects, goods_tier) == 2 + 4
    assert tile_variable_vp(3, cells, tiles, masks, effects, goods_tier) == 0  # empty square


def test_income_per_type_adds_coins_per_matching_tile():
    """Kind income_per_type: N extra coins per tile of these types at each income, on top of
    the printed income (the Postal Service "adds money to your income")."""
    postal = tile("public", income=1, effects=[(K.EF_INCOME_PER_TYPE, K.T_COMMERCIAL, 2, 0)])
    tiles, effects, _ = tables_with(postal)
    cells = city({(2, 2): RSC, (2, 1): COM, (2, 3): COM, (1, 2): 5})
    row = (K.EF_INCOME_PER_TYPE, K.T_COMMERCIAL, 2, 0)
    masks = masks_of(cells, tiles)
    assert effect_income(*row, masks) == 2 * 2
    assert effect_income(K.EF_VP_PER_TYPE_CITY, K.T_COMMERCIAL, 2, 0, masks) == 0
    assert tile_income(7, cells, tiles, masks, effects) == 1 + 2 * 2
    assert city_income(cells, tiles, masks, effects) == 2 * SHOP_INCOME + 1 + 2 * 2


def test_coins_on_type_placed_pays_for_matching_placed_tiles():
    """Kind coins_on_type_placed (Merchant Union: "gives 1 coin whenever you place a Commercial
    tile"): N coins when the placed tile has one of the types, else nothing."""
    both = tile(("residential", "commercial"))
    tiles, _effects, _ = tables_with(both)
    row = (K.EF_COINS_ON_TYPE_PLACED, K.T_COMMERCIAL, 1, 0)
    assert effect_coins_on_placed(*row, COM, tiles) == 1
    assert effect_coins_on_placed(*row, 5, tiles) == 1  # a two-type tile counts as both
    assert effect_coins_on_placed(*row, RES, tiles) == 0
    assert effect_coins_on_placed(K.EF_INCOME_PER_TYPE, K.T_COMMERCIAL, 1, 0, COM, tiles) == 0


def test_insurance_spares_only_the_listed_disasters():
    """Kind insurance: the owner is spared these disasters (a = mask of 1 << DIS_*), while the
    insuring tile is in the city."""
    insurer = tile("commercial", effects=[(K.EF_INSURANCE, 1 << K.DIS_FIRE, 0, 0)])
    tiles, effects, _ = tables_with(insurer)
    insured = city({(2, 2): RSC, (2, 3): 5})
    assert insured_against(insured, effects, K.DIS_FIRE)
    assert not insured_against(insured, effects, K.DIS_CRIME)
    assert not insured_against(city({(2, 2): RSC}), effects, K.DIS_FIRE)


@pytest.mark.parametrize("kind", [K.EF_TAKE_DISCARDED_CORNERSTONE, K.EF_SWAP_CORNERSTONE])
def test_placement_time_kinds_give_no_vp_income_or_coins(kind):
    """Kinds take_discarded_cornerstone and swap_cornerstone act once when placed (the
    engine's job); at scoring and income they are worth nothing."""
    tiles, _effects, goods_tier = tables_with()
    cells = city({(2, 2): RSC, (2, 3): COM})
    masks = masks_of(cells, tiles)
    assert effect_vp(kind, 0, 0, 0, 12, cells, tiles, masks, goods_tier) == 0
    assert effect_income(kind, 0, 0, 0, masks) == 0
    assert effect_coins_on_placed(kind, 0, 0, 0, COM, tiles) == 0


def test_every_effect_kind_is_covered_by_a_test():
    """Adding a kind means adding its test: this list must name every EF_* kind."""
    tested = {
        K.EF_VP_PER_TYPE_CITY,
        K.EF_VP_PER_TYPE_ADJACENT,
        K.EF_VP_PER_GOOD_TIER,
        K.EF_VP_PLACEMENT,
        K.EF_INCOME_PER_TYPE,
        K.EF_COINS_ON_TYPE_PLACED,
        K.EF_TAKE_DISCARDED_CORNERSTONE,
        K.EF_SWAP_CORNERSTONE,
        K.EF_INSURANCE,
    }
    assert tested == set(K.EFFECT_NAMES.values())
    assert np.arange(1, K.N_EFFECT_KINDS).tolist() == sorted(tested)


def test_vp_reads_change_names_what_each_vp_kind_reads():
    """What an incremental score may skip: a VP effect counting tiles "in the city" reads a
    change of its types anywhere, one counting "adjacent" tiles only on the 8 squares around
    its owner; one per Good tier reads the goods; "alone" reads the squares around."""
    in_city = tile("public", effects=[(K.EF_VP_PER_TYPE_CITY, K.T_RESIDENTIAL, 1, 0)])
    adjacent = tile("public", effects=[(K.EF_VP_PER_TYPE_ADJACENT, K.T_RESIDENTIAL, 1, 0)])
    per_tier = tile("public", effects=[(K.EF_VP_PER_GOOD_TIER, K.TIER_RAW, 1, 0)])
    alone = tile("public", effects=[(K.EF_VP_PLACEMENT, K.PL_NO_NEIGHBOURS, 3, 0)])
    _tiles, effects, _tier = tables_with(in_city, adjacent, per_tier, alone)  # 5, 6, 7, 8
    owner, near, diagonal, far = 12, 13, 18, 0
    res, com = K.T_RESIDENTIAL, K.T_COMMERCIAL

    def reads(holder, cell, types, goods=False):
        return vp_reads_change(holder, owner, cell, types, goods, effects)

    assert reads(5, far, res) and not reads(5, far, com)
    assert reads(6, near, res) and reads(6, diagonal, res)
    assert not reads(6, far, res) and not reads(6, near, com)
    assert reads(7, far, com, goods=True) and not reads(7, far, res)
    assert reads(8, diagonal, com) and not reads(8, far, res)
