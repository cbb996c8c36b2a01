"""Compiled evaluators of the tile-effect vocabulary (the ``EF_*`` kinds of ``sim.constants``).

An effect is a row ``(kind, a, b, c)`` of ``effects[tile, k]``. Every evaluator takes the city
(``cells``: int16[25] tile indices, ``EMPTY`` for an empty square, and its ``masks``:
``sim.grid.city_masks``), the tile table and the cell of the tile that owns the effect, so the
engine and the scorer share one meaning per kind.
Effects of tiles cut off from the City Center still count (rules 003: "you do not lose the
effects or victory points of cut-off tiles"), so nothing here looks at connectivity.

The evaluators read for every move a strategy tries (``tile_variable_vp``, ``vp_reads_change``,
``tile_income``) are inlined: a compiled call passing five arrays costs more than their work
(docs/performance-log.md, fifth round).

Adding an effect kind: one ``EF_*`` constant, one evaluator below wired into its dispatcher
(a VP kind also in ``vp_reads_change``), one test in tests/test_effects.py.

Kinds without a compiled meaning here are the engine's: ``EF_TAKE_DISCARDED_CORNERSTONE`` and
``EF_SWAP_CORNERSTONE`` act once at placement on the draft state.
"""

import numpy as np

from sim.core.jit import njit
from sim.neom import constants as K
from sim.neom.grid import (
    ALL_CELLS,
    M_GOODS,
    M_OCCUPIED,
    SURROUNDING_MASKS,
    cells_of_types,
    is_diagonal,
    is_orthogonal,
    neighbour,
    popcount,
    road_linked,
)


@njit(_nrt=False)
def count_tiles_of_types(masks, cell_mask, type_mask):
    """Tiles on the cells of ``cell_mask`` with at least one type of ``type_mask`` (a two-type
    tile matching both types counts once)."""
    # int64, not the effect table's int32: one cells_of_types for every caller
    return popcount(cell_mask & cells_of_types(masks, np.int64(type_mask)))


# --- VP effects ---------------------------------------------------------------------------


@njit(_nrt=False)
def vp_per_type_in_city(type_mask, vp, exclude_self, cell, masks):
    """EF_VP_PER_TYPE_CITY: ``vp`` per tile of these types anywhere in the city; the owner
    itself counts unless ``exclude_self``. The City Center counts as a Resource tile."""
    counted = ALL_CELLS
    if exclude_self:
        counted &= ~(1 << cell)
    return vp * count_tiles_of_types(masks, counted, type_mask)


@njit(_nrt=False)
def vp_per_type_adjacent(type_mask, vp, cell, masks):
    """EF_VP_PER_TYPE_ADJACENT: ``vp`` per tile of these types in the 8 surrounding squares
    (rules 002: "adjacent" on tiles means the 8 squares around, diagonals included)."""
    return vp * count_tiles_of_types(masks, SURROUNDING_MASKS[cell], type_mask)


@njit(_nrt=False)
def vp_per_good_tier(tier, vp, masks, goods_tier):
    """EF_VP_PER_GOOD_TIER: ``vp`` per Good token of ``tier`` the city holds (each good once,
    however many tiles produce it)."""
    goods = masks[M_GOODS]
    count = 0
    for good in range(goods_tier.shape[0]):
        if (goods >> good) & 1 and goods_tier[good] == tier:
            count += 1
    return vp * count


@njit(_nrt=False)
def road_linked_neighbours(cell, cells, tiles):
    """Cell mask of the orthogonal neighbours road-linked to the tile on ``cell``."""
    linked = 0
    roads = tiles[cells[cell], K.C_ROADS]
    for direction in range(4):
        other = neighbour(cell, direction)
        if other >= 0 and cells[other] != K.EMPTY:
            if road_linked(roads, tiles[cells[other], K.C_ROADS], direction):
                linked |= 1 << other
    return linked


@njit(_nrt=False)
def placement_holds(conditions, cell, cells, tiles, masks):
    """True when every PL_* condition of ``conditions`` holds for ``cell``.

    PL_NO_NEIGHBOURS reads "placed alone": no tile in the 8 surrounding squares except tiles
    road-linked to it, since a new tile must always be road-linked to a neighbour (RULES.md E4).
    """
    row = cell // K.GRID
    col = cell % K.GRID
    last = K.GRID - 1
    on_edge_row = row == 0 or row == last
    on_edge_col = col == 0 or col == last
    if conditions & K.PL_CORNER and not (on_edge_row and on_edge_col):
        return False
    if conditions & K.PL_EDGE and not (on_edge_row or on_edge_col):
        return False
    if conditions & K.PL_NO_NEIGHBOURS:
        others = SURROUNDING_MASKS[cell] & ~road_linked_neighbours(cell, cells, tiles)
        if others & masks[M_OCCUPIED]:
            return False
    return True


@njit(_nrt=False)
def vp_placement(conditions, vp, cell, cells, tiles, masks):
    """EF_VP_PLACEMENT: ``vp`` if all listed conditions hold for the owner's square (corner;
    edge = outer ring, corners included; alone = no tile around but road-linked ones)."""
    if placement_holds(conditions, cell, cells, tiles, masks):
        return vp
    return 0


@njit(inline="always")
def effect_row(effects, tile, k):
    """Effect row ``k`` of ``tile`` as the evaluators take it: ``(kind, a, b, c)``."""
    return effects[tile, k, 0], effects[tile, k, 1], effects[tile, k, 2], effects[tile, k, 3]


@njit(_nrt=False)
def effect_vp(kind, a, b, c, cell, cells, tiles, masks, goods_tier):
    """Variable VP of one effect row ``(kind, a, b, c)`` of the tile on ``cell``; 0 for kinds
    that do not give VP."""
    if kind == K.EF_VP_PER_TYPE_CITY:
        return vp_per_type_in_city(a, b, c, cell, masks)
    elif kind == K.EF_VP_PER_TYPE_ADJACENT:
        return vp_per_type_adjacent(a, b, cell, masks)
    elif kind == K.EF_VP_PER_GOOD_TIER:
        return vp_per_good_tier(a, b, masks, goods_tier)
    elif kind == K.EF_VP_PLACEMENT:
        return vp_placement(a, b, cell, cells, tiles, masks)
    return 0


@njit(inline="always")
def tile_variable_vp(cell, cells, tiles, masks, effects, goods_tier):
    """Sum of the VP effects of the tile on ``cell`` (0 for an empty square)."""
    tile = cells[cell]
    if tile == K.EMPTY:
        return 0
    total = 0
    for k in range(K.MAX_EFFECTS):
        if effects[tile, k, 0] == K.EF_NONE:
            continue  # most tiles have no VP effect: skip the call
        total += effect_vp(*effect_row(effects, tile, k), cell, cells, tiles, masks, goods_tier)
    return total


@njit(inline="always")
def vp_reads_change(holder, holder_cell, cell, changed_types, goods_may_change, effects):
    """Whether a VP effect of ``holder`` (on ``holder_cell``) can change when the tile on
    ``cell`` changes: a tile of ``changed_types`` leaves or arrives, the city's goods may
    change. What each VP kind above reads: matching tiles in the city or around, goods, the
    squares around (so an incremental score skips the holders this returns False for)."""
    around = is_orthogonal(holder_cell, cell) or is_diagonal(holder_cell, cell)
    for k in range(K.MAX_EFFECTS):
        kind = effects[holder, k, 0]
        a = effects[holder, k, 1]
        if kind == K.EF_VP_PER_TYPE_CITY and changed_types & a:
            return True
        if kind == K.EF_VP_PER_TYPE_ADJACENT and around and changed_types & a:
            return True
        if kind == K.EF_VP_PER_GOOD_TIER and goods_may_change:
            return True
        if kind == K.EF_VP_PLACEMENT and around and a & K.PL_NO_NEIGHBOURS:
            return True
    return False


# --- Money effects ------------------------------------------------------------------------


@njit(_nrt=False)
def income_per_type(type_mask, coins, masks):
    """EF_INCOME_PER_TYPE: ``coins`` per tile of these types in the city (the owner included
    when it matches) at each income."""
    return coins * count_tiles_of_types(masks, np.int64(ALL_CELLS), type_mask)  # not a literal


# The two dispatchers on an effect's kind are inlined: a tile's rows of other kinds (its VP
# effects) then cost one comparison each, not a call (place_tile reads every holder's rows).
@njit(inline="always")
def effect_income(kind, a, b, c, masks):
    """Extra income of one effect row; 0 for non-income kinds."""
    if kind == K.EF_INCOME_PER_TYPE:
        return income_per_type(a, b, masks)
    return 0


@njit(inline="always")
def tile_income(cell, cells, tiles, masks, effects):
    """Coins the tile on ``cell`` pays at an income: printed income plus income effects."""
    tile = cells[cell]
    if tile == K.EMPTY:
        return 0
    total = tiles[tile, K.C_INCOME]
    for k in range(K.MAX_EFFECTS):
        if effects[tile, k, 0] == K.EF_NONE:
            continue  # an unused row: skip the call, as tile_variable_vp does
        kind, a, b, c = effect_row(effects, tile, k)
        total += effect_income(kind, a, b, c, masks)
    return total


@njit(_nrt=False)
def city_income(cells, tiles, masks, effects):
    """Coins the whole city pays at an end-of-generation income."""
    total = 0
    for cell in range(K.N_CELLS):
        total += tile_income(cell, cells, tiles, masks, effects)
    return total


@njit(_nrt=False)
def coins_on_type_placed(type_mask, coins, placed_tile, tiles):
    """EF_COINS_ON_TYPE_PLACED: ``coins`` when the placed tile has one of these types."""
    if tiles[placed_tile, K.C_TYPES] & type_mask:
        return coins
    return 0


@njit(inline="always")
def effect_coins_on_placed(kind, a, b, c, placed_tile, tiles):
    """Coins one effect row of a tile already in the city gives when ``placed_tile`` is placed
    (Merchant Union). The caller applies it only to tiles placed after the effect's owner."""
    if kind == K.EF_COINS_ON_TYPE_PLACED:
        return coins_on_type_placed(a, b, placed_tile, tiles)
    return 0


@njit(inline="always")
def holder_coins_on_placed(holder, placed_tile, effects, tiles):
    """Coins the effects of ``holder``, a tile already in the city, give when
    ``placed_tile`` is placed (the engine's placement and the strategies' valuation)."""
    coins = 0
    for k in range(K.MAX_EFFECTS):
        if effects[holder, k, 0] == K.EF_NONE:
            continue  # an unused row: skip the call
        kind, a, b, c = effect_row(effects, holder, k)
        coins += effect_coins_on_placed(kind, a, b, c, placed_tile, tiles)
    return coins


# --- Disaster effects ---------------------------------------------------------------------


@njit(_nrt=False)
def insured_against(cells, effects, disaster):
    """True when a tile in the city has an EF_INSURANCE effect covering ``disaster`` (DIS_*)."""
    covered = 1 << disaster
    for cell in range(K.N_CELLS):
        tile = cells[cell]
        if tile == K.EMPTY:
            continue
        for k in range(K.MAX_EFFECTS):
            if effects[tile, k, 0] == K.EF_INSURANCE and effects[tile, k, 1] & covered:
                return True
    return False
