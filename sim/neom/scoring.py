"""Final scoring of one city, compiled (rules 001 "Game End and Scoring"; readings in RULES.md).

``score_masks`` scores a city from its squares and masks (``sim.grid.city_masks``), so callers
that keep a city's masks (the engine's summaries, the strategies' contexts) score it without a
walk per tile; ``score_city`` computes the masks first.

Each scoring rule is written once, here, as a small function of what it reads (``money_vp``,
``printed_vp``, ``pollution_around``, ``ghost_town``, ``power_vp``): the strategies' incremental
score changes (``strategies.neom.evaluate``, ``strategies.neom.basic``) call the same ones.
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

# Only these tiles' VP values score. An int64, not a Python int: a compiled call passing a
# module-level int passes a Literal, and a callee then compiles once more for it.
VP_TYPES = np.int64(K.T_RESIDENTIAL | K.T_PUBLIC)
GHOST_TOWN_NONE = -10
GHOST_TOWN_ONE = -4
NO_POWER = -5
POLLUTION_ORTHOGONAL = 2
POLLUTION_DIAGONAL = 1


@njit(_nrt=False)
def neighborhood_value(size):
    """Triangular numbers up to 8 Residential tiles (36), then 4 VP per further tile."""
    if size <= 8:
        return size * (size + 1) // 2
    return 36 + 4 * (size - 8)


@njit(_nrt=False)
def pollution_around(cell, others):
    """The pollution rule: a Residential tile loses 2 VP per orthogonally and 1 VP per
    diagonally adjacent Polluting tile. Here for the square ``cell`` and the cell mask
    ``others`` (the Polluting tiles around a Residential one, or the Residential tiles around a
    Polluting one; a cell's own tile never counts): the VP lost, as a positive number."""
    return POLLUTION_ORTHOGONAL * popcount(ORTHOGONAL_MASKS[cell] & others) + (
        POLLUTION_DIAGONAL * popcount(DIAGONAL_MASKS[cell] & others)
    )


@njit(_nrt=False)
def money_vp(money):
    """1 VP per 2 coins left, rounded down."""
    return money // 2


# One signature: greedy and the evaluation pass a literal 0 for "no coins" at many call sites.
@njit("int64(int64, int64)", _nrt=False)
def money_vp_change(money, coins):
    """Change of ``money_vp`` when ``money`` changes by ``coins`` (negative: paid)."""
    return money_vp(money + coins) - money_vp(money)


@njit(_nrt=False)
def ghost_town(n_residential):
    """-10 VP for a city without a Residential tile, -4 with only one."""
    if n_residential == 0:
        return GHOST_TOWN_NONE
    if n_residential == 1:
        return GHOST_TOWN_ONE
    return 0


@njit(_nrt=False)
def power_vp(has_power):
    """-5 VP for a city without a tile that generates power."""
    return 0 if has_power else NO_POWER


@njit(_nrt=False)
def printed_vp(tile, tiles, no_disasters):
    """The VP printed on ``tile`` as final scoring counts it: Residential and Public tiles only,
    plus their extra VP in the no-disasters variant; 0 for an empty square (EMPTY)."""
    if tile == K.EMPTY or not tiles[tile, K.C_TYPES] & VP_TYPES:
        return 0
    vp = tiles[tile, K.C_VP]
    if no_disasters:
        vp += tiles[tile, K.C_VP_NO_DISASTERS]
    return vp


@njit(_nrt=False)
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


@njit(_nrt=False)
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


@njit(_nrt=False)
def score_masks(cells, masks, money, tiles, effects, goods_tier, rules, out):
    """``score_city`` of a city whose masks (``sim.grid.city_masks``) are ``masks``."""
    no_disasters = rules[K.RO_VARIANT] == K.V_NO_DISASTERS
    tiles_vp = 0
    scored = cells_of_types(masks, VP_TYPES)
    while scored:
        cell = lowest_cell(scored)
        scored &= scored - 1
        # int64 like the strategies' tiles: one printed_vp
        tiles_vp += printed_vp(np.int64(cells[cell]), tiles, no_disasters)
        tiles_vp += tile_variable_vp(cell, cells, tiles, masks, effects, goods_tier)
    residential_cells = cells_of_types(masks, K.T_RESIDENTIAL)
    n_residential = popcount(residential_cells)
    pollution = 0
    if masks[M_POLLUTING]:
        remaining = residential_cells
        while remaining:
            pollution -= pollution_around(lowest_cell(remaining), masks[M_POLLUTING])
            remaining &= remaining - 1

    out[K.S_TILES] = tiles_vp
    out[K.S_NEIGHBORHOODS] = neighborhoods_vp(
        masks, residential_cells, rules[K.RO_NEIGHBORHOOD_THROUGH_ANY] != 0
    )
    out[K.S_GOODS] = goods_vp(masks[M_GOODS], goods_tier)
    out[K.S_MONEY] = money_vp(money)
    out[K.S_POLLUTION] = pollution
    out[K.S_GHOST_TOWN] = ghost_town(n_residential)
    out[K.S_POWER] = power_vp(masks[M_POWER] != 0)
    total = 0
    for key in range(K.S_TOTAL):
        total += out[key]
    out[K.S_TOTAL] = total
