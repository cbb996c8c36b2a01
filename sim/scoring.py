"""Final scoring of one city, compiled (rules 001 "Game End and Scoring"; readings in RULES.md).

``score_city`` is called at the end of every game and by greedy strategies for every candidate
move, so it allocates nothing but the road search's small stack.
"""

from sim import constants as K
from sim.effects import tile_variable_vp
from sim.grid import city_goods, is_orthogonal, popcount, road_component, surrounding_mask
from sim.jit import njit

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
def pollution_at(cell, cells, tiles):
    """VP lost by the Residential tile on ``cell``: 2 per orthogonally and 1 per diagonally
    adjacent Polluting tile (its own pollution does not count)."""
    around = surrounding_mask(cell)
    lost = 0
    for other in range(K.N_CELLS):
        if (around >> other) & 1 and cells[other] != K.EMPTY:
            if tiles[cells[other], K.C_POLLUTING]:
                if is_orthogonal(cell, other):
                    lost += POLLUTION_ORTHOGONAL
                else:
                    lost += POLLUTION_DIAGONAL
    return lost


@njit
def neighborhoods_vp(cells, tiles, residential_cells, through_any):
    """Sum of neighborhood values; a neighborhood is the Residential tiles of one road-linked
    component (chains through any tile, or only through Residential tiles)."""
    through_types = 0 if through_any else K.T_RESIDENTIAL
    remaining = residential_cells
    total = 0
    while remaining:
        start = 0
        while not (remaining >> start) & 1:
            start += 1
        component = road_component(cells, tiles, start, through_types)
        total += neighborhood_value(popcount(component & residential_cells))
        remaining &= ~component
    return total


@njit
def goods_vp(cells, tiles, goods_tier):
    """Each good the city produces scores once by its tier (TIER_VP)."""
    goods = city_goods(cells, tiles)
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
    no_disasters = rules[K.RO_VARIANT] == K.V_NO_DISASTERS
    tiles_vp = 0
    pollution = 0
    residential_cells = 0
    n_residential = 0
    has_power = False
    for cell in range(K.N_CELLS):
        tile = cells[cell]
        if tile == K.EMPTY:
            continue
        types = tiles[tile, K.C_TYPES]
        if tiles[tile, K.C_POWER]:
            has_power = True
        if types & VP_TYPES:
            tiles_vp += tiles[tile, K.C_VP]
            tiles_vp += tile_variable_vp(cell, cells, tiles, effects, goods_tier)
            if no_disasters:
                tiles_vp += tiles[tile, K.C_VP_NO_DISASTERS]
        if types & K.T_RESIDENTIAL:
            residential_cells |= 1 << cell
            n_residential += 1
            pollution -= pollution_at(cell, cells, tiles)

    out[K.S_TILES] = tiles_vp
    out[K.S_NEIGHBORHOODS] = neighborhoods_vp(
        cells, tiles, residential_cells, rules[K.RO_NEIGHBORHOOD_THROUGH_ANY] != 0
    )
    out[K.S_GOODS] = goods_vp(cells, tiles, goods_tier)
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
