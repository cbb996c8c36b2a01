"""Final scoring of one city, compiled (rules 001 "Game End and Scoring"; readings in RULES.md).

``score_masks`` scores a city from its squares and masks (``sim.grid.city_masks``), so callers
that keep a city's masks (the engine's summaries, the strategies' contexts) score it without a
walk per tile; ``score_city`` computes the masks first.
"""

import numpy as np

from sim.core.jit import njit
from sim.neom import constants as K
from sim.neom.effects import tile_variable_vp
from sim.neom.grid import (
    ALL_CELLS,
    DIAGONAL_MASKS,
    M_GOODS,
    M_POLLUTING,
    M_POWER,
    N_MASKS,
    ORTHOGONAL_MASKS,
    cells_of_types,
    city_masks,
    lowest_cell,
    popcount,
    road_flood,
)

VP_TYPES = K.T_RESIDENTIAL | K.T_PUBLIC  # only these tiles' VP values score
GHOST_TOWN_NONE = -10
GHOST_TOWN_ONE = -4
NO_POWER = -5
POLLUTION_ORTHOGONAL = 2
POLLUTION_DIAGONAL = 1


@njit
def neighborhood_value(size):
    """Triangular numbers up to 8 Residential tiles (36), then 4 VP per further tile."""
    if size <= 8:
        return size * (size + 1) // 2
    return 36 + 4 * (size - 8)


@njit
def pollution_at(cell, polluting):
    """VP lost by the Residential tile on ``cell``: 2 per orthogonally and 1 per diagonally
    adjacent Polluting tile (cell mask ``polluting``; its own pollution does not count)."""
    return POLLUTION_ORTHOGONAL * popcount(ORTHOGONAL_MASKS[cell] & polluting) + (
        POLLUTION_DIAGONAL * popcount(DIAGONAL_MASKS[cell] & polluting)
    )


@njit
def neighborhoods_vp(masks, residential_cells, through_any):
    """Sum of neighborhood values; a neighborhood is the Residential tiles of one road-linked
    component (chains through any tile, or only through Residential tiles)."""
    keep = ALL_CELLS if through_any else residential_cells
    remaining = residential_cells
    total = 0
    while remaining:
        start = remaining & -remaining
        component = road_flood(masks, start, keep)
        total += neighborhood_value(popcount(component & residential_cells))
        remaining &= ~component
    return total


@njit
def goods_vp(goods, goods_tier):
    """Each good of the mask ``goods`` (the city's Good tokens) scores once by its tier."""
    total = 0
    for good in range(goods_tier.shape[0]):
        if (goods >> good) & 1:
            total += K.TIER_VP[goods_tier[good]]
    return total


@njit
def score_city(cells, money, tiles, effects, goods_tier, rules, out):
    """Fill ``out[N_SCORE]`` (int32) with the score breakdown S_TILES..S_TOTAL of one city.

    ``cells``: int16[25] tile indices (EMPTY for empty squares); ``money``: coins left;
    ``tiles``/``effects``/``goods_tier``: the compiled catalogue; ``rules``: int32[N_RULES].
    Penalties (pollution, ghost town, power) are negative; S_TOTAL is the sum of the others.
    """
    masks = np.empty(N_MASKS, dtype=np.int64)
    city_masks(cells, tiles, masks)
    score_masks(cells, masks, money, tiles, effects, goods_tier, rules, out)


@njit
def score_masks(cells, masks, money, tiles, effects, goods_tier, rules, out):
    """``score_city`` of a city whose masks (``sim.grid.city_masks``) are ``masks``."""
    no_disasters = rules[K.RO_VARIANT] == K.V_NO_DISASTERS
    tiles_vp = 0
    scored = cells_of_types(masks, VP_TYPES)
    while scored:
        cell = lowest_cell(scored)
        scored &= scored - 1
        tile = cells[cell]
        tiles_vp += tiles[tile, K.C_VP]
        tiles_vp += tile_variable_vp(cell, cells, tiles, masks, effects, goods_tier)
        if no_disasters:
            tiles_vp += tiles[tile, K.C_VP_NO_DISASTERS]
    residential_cells = cells_of_types(masks, K.T_RESIDENTIAL)
    n_residential = popcount(residential_cells)
    pollution = 0
    if masks[M_POLLUTING]:
        remaining = residential_cells
        while remaining:
            pollution -= pollution_at(lowest_cell(remaining), masks[M_POLLUTING])
            remaining &= remaining - 1
    has_power = masks[M_POWER] != 0

    out[K.S_TILES] = tiles_vp
    out[K.S_NEIGHBORHOODS] = neighborhoods_vp(
        masks, residential_cells, rules[K.RO_NEIGHBORHOOD_THROUGH_ANY] != 0
    )
    out[K.S_GOODS] = goods_vp(masks[M_GOODS], goods_tier)
    out[K.S_MONEY] = money // 2
    out[K.S_POLLUTION] = pollution
    if n_residential == 0:
        out[K.S_GHOST_TOWN] = GHOST_TOWN_NONE
    elif n_residential == 1:
        out[K.S_GHOST_TOWN] = GHOST_TOWN_ONE
    else:
        out[K.S_GHOST_TOWN] = 0
    out[K.S_POWER] = 0 if has_power else NO_POWER
    total = 0
    for key in range(K.S_TOTAL):
        total += out[key]
    out[K.S_TOTAL] = total
