"""Geometry of the 5x5 city grid: neighbours, road links, a city's cell masks and its
road-linked components.

Cells are numbered row * 5 + col, rows 0-4 top to bottom, columns 0-4 left to right. A city is an
``int16[25]`` array of tile indices (``EMPTY`` for an empty square). Sets of cells are int32 bit
masks (bit c = cell c).

A city's *masks* (``city_masks``: int64[N_MASKS], one pass over its squares) hold the cells of
each tile type, road edge and property, so that counting tiles around a square or tracing road
chains costs a few bit operations instead of a walk over the squares.
"""

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from sim.core.jit import njit
from sim.neom import constants as K

ALL_CELLS = (1 << K.N_CELLS) - 1
COL0_CELLS = sum(1 << (row * K.GRID) for row in range(K.GRID))
COL4_CELLS = COL0_CELLS << (K.GRID - 1)

# The layout of a city's masks (city_masks).
M_OCCUPIED = 0
M_TYPE = 1  # 6 masks: cells whose tile has type bit 1 << k (T_RESIDENTIAL .. T_DISASTER)
N_TYPE_BITS = 6
M_ROADS = M_TYPE + N_TYPE_BITS  # 4 masks (N, E, S, W): cells whose tile has a road on that edge
M_POLLUTING = M_ROADS + 4
M_POWER = M_POLLUTING + 1  # cells of power-generating tiles
M_CORNERSTONES = M_POWER + 1
M_GOODS = M_CORNERSTONES + 1  # goods mask (not a cell mask): what the city's tiles produce
N_MASKS = M_GOODS + 1


@njit(_nrt=False)
def neighbour(cell, direction):
    """The cell next to ``cell`` in direction 0..3 (N, E, S, W), or -1 off the board."""
    row = cell // K.GRID
    col = cell % K.GRID
    if direction == 0:
        row -= 1
    elif direction == 1:
        col += 1
    elif direction == 2:
        row += 1
    else:
        col -= 1
    if row < 0 or row >= K.GRID or col < 0 or col >= K.GRID:
        return -1
    return row * K.GRID + col


@njit(_nrt=False)
def road_bit(direction):
    return 1 << direction


@njit(_nrt=False)
def opposite_road_bit(direction):
    return 1 << ((direction + 2) % 4)


@njit(_nrt=False)
def road_linked(roads_a, roads_b, direction):
    """Two tiles side by side (b in ``direction`` from a) are road-linked when both have a
    road on their shared edge."""
    return (roads_a & road_bit(direction)) != 0 and (roads_b & opposite_road_bit(direction)) != 0


@njit(_nrt=False)
def is_diagonal(a, b):
    return abs(a // K.GRID - b // K.GRID) == 1 and abs(a % K.GRID - b % K.GRID) == 1


@njit(_nrt=False)
def is_orthogonal(a, b):
    dr = abs(a // K.GRID - b // K.GRID)
    dc = abs(a % K.GRID - b % K.GRID)
    return dr + dc == 1


@njit(_nrt=False)
def surrounding_mask(cell):
    """The (up to) 8 squares around ``cell``, as a cell mask (the cell itself excluded)."""
    row = cell // K.GRID
    col = cell % K.GRID
    mask = 0
    for dr in range(-1, 2):
        for dc in range(-1, 2):
            r = row + dr
            c = col + dc
            if (dr != 0 or dc != 0) and 0 <= r < K.GRID and 0 <= c < K.GRID:
                mask |= 1 << (r * K.GRID + c)
    return mask


def _table(mask_of):
    """One cell mask per square from a function of this module (its plain Python form), to be
    looked up in compiled loops instead of recomputed."""
    mask_of = getattr(mask_of, "py_func", mask_of)
    return np.array([mask_of(cell) for cell in range(K.N_CELLS)], dtype=np.int64)


def _orthogonal_mask(cell):
    step = getattr(neighbour, "py_func", neighbour)
    return sum(1 << other for other in (step(cell, d) for d in range(4)) if other >= 0)


ORTHOGONAL_MASKS = _table(_orthogonal_mask)
SURROUNDING_MASKS = _table(surrounding_mask)
DIAGONAL_MASKS = SURROUNDING_MASKS & ~ORTHOGONAL_MASKS


@njit(_nrt=False)
def city_masks(cells, tiles, masks):
    """Fill ``masks`` (int64[>= N_MASKS], layout M_*) for the city ``cells``."""
    for m in range(N_MASKS):
        masks[m] = 0
    for cell in range(K.N_CELLS):
        if cells[cell] != K.EMPTY:
            add_tile(masks, cell, cells[cell], tiles)


# add_tile and remove_tile are inlined: the strategies patch masks with them for every move
# they try (strategies.evaluate.try_move).
@njit(inline="always")
def add_tile(masks, cell, tile, tiles):
    """Add ``tile`` on the empty square ``cell`` to the masks."""
    bit = 1 << cell
    masks[M_OCCUPIED] |= bit
    types = tiles[tile, K.C_TYPES]
    for k in range(N_TYPE_BITS):
        if (types >> k) & 1:
            masks[M_TYPE + k] |= bit
    roads = tiles[tile, K.C_ROADS]
    for d in range(4):
        if (roads >> d) & 1:
            masks[M_ROADS + d] |= bit
    if tiles[tile, K.C_POLLUTING]:
        masks[M_POLLUTING] |= bit
    if tiles[tile, K.C_POWER]:
        masks[M_POWER] |= bit
    if tiles[tile, K.C_DECK] == K.DECK_CORNERSTONE:
        masks[M_CORNERSTONES] |= bit
    masks[M_GOODS] |= tiles[tile, K.C_PRODUCES]


@njit(inline="always")
def remove_tile(masks, cell, tile, cells, tiles):
    """Take ``tile`` on ``cell`` out of the masks; ``cells`` no longer holds it (the goods are
    then those of the remaining tiles)."""
    keep = ~(1 << cell)
    for m in range(M_GOODS):
        masks[m] &= keep
    if tiles[tile, K.C_PRODUCES]:
        masks[M_GOODS] = city_goods(cells, tiles)


@njit
def masks_of(cells, tiles):
    """A new masks array of ``cells`` (for callers outside the hot loops)."""
    masks = np.empty(N_MASKS, dtype=np.int64)
    city_masks(cells, tiles, masks)
    return masks


@njit(_nrt=False)
def cells_of_types(masks, type_mask):
    """Cells whose tile has at least one type of ``type_mask``."""
    cells = 0
    for k in range(N_TYPE_BITS):
        if (type_mask >> k) & 1:
            cells |= masks[M_TYPE + k]
    return cells


@njit(_nrt=False)
def road_flood(masks, start, keep):
    """Cells linked to the cells of ``start`` by chains of road links through the cells of
    ``keep`` (``start`` included): grows one road link at a time in all four directions."""
    road_n = masks[M_ROADS + 0] & keep
    road_e = masks[M_ROADS + 1] & keep
    road_s = masks[M_ROADS + 2] & keep
    road_w = masks[M_ROADS + 3] & keep
    component = start
    frontier = start
    while frontier:
        grow = ((frontier & road_n) >> K.GRID) & road_s
        grow |= ((frontier & road_e & ~COL4_CELLS) << 1) & road_w
        grow |= ((frontier & road_s) << K.GRID) & road_n
        grow |= ((frontier & road_w & ~COL0_CELLS) >> 1) & road_e
        frontier = grow & ~component
        component |= frontier
    return component


@njit(_nrt=False)
def component_of(masks, start, through_types):
    """Cells reachable from ``start`` by chains of road links.

    ``through_types``: 0 lets a chain pass through any tile; otherwise only through tiles with
    one of these type bits (the start tile is always included if occupied).
    Returns a cell mask (0 when ``start`` is empty).
    """
    bit = 1 << start
    if not masks[M_OCCUPIED] & bit:
        return 0
    keep = ALL_CELLS if through_types == 0 else cells_of_types(masks, through_types) | bit
    return road_flood(masks, bit, keep)


@njit
def road_component(cells, tiles, start, through_types):
    """``component_of`` for a city given by its squares."""
    return component_of(masks_of(cells, tiles), start, through_types)


@njit(inline="always")  # every seat's goods are refreshed every turn
def city_goods(cells, tiles):
    """Goods mask of everything the city's tiles produce (its Good tokens)."""
    goods = 0
    for cell in range(K.N_CELLS):
        if cells[cell] != K.EMPTY:
            goods |= tiles[cells[cell], K.C_PRODUCES]
    return goods


@njit(_nrt=False)
def popcount(mask):
    count = 0
    while mask:
        mask &= mask - 1
        count += 1
    return count


def _trailing_zeros_interpreted(mask):
    return popcount((mask & -mask) - 1)


# LLVM's count of trailing zeros (one instruction) compiled; the bit count where plain Python runs.
_trailing_zeros = _trailing_zeros_interpreted if numba.config.DISABLE_JIT else trailing_zeros


@njit(_nrt=False)
def lowest_cell(mask):
    """The cell of the lowest bit of a non-empty cell mask."""
    return _trailing_zeros(mask)
