"""Geometry of the 5x5 city grid: neighbours, road links and road-linked components.

Cells are numbered row * 5 + col, rows 0-4 top to bottom, columns 0-4 left to right. A city is an
``int16[25]`` array of tile indices (``EMPTY`` for an empty square). Sets of cells are int32 bit
masks (bit c = cell c).
"""

import numpy as np

from sim import constants as K
from sim.jit import njit

# Directions in the order of their road bits: N, E, S, W.
DIRECTION_BITS = (K.ROAD_N, K.ROAD_E, K.ROAD_S, K.ROAD_W)


@njit
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


@njit
def road_bit(direction):
    return 1 << direction


@njit
def opposite_road_bit(direction):
    return 1 << ((direction + 2) % 4)


@njit
def road_linked(roads_a, roads_b, direction):
    """Two tiles side by side (b in ``direction`` from a) are road-linked when both have a
    road on their shared edge."""
    return (roads_a & road_bit(direction)) != 0 and (roads_b & opposite_road_bit(direction)) != 0


@njit
def is_diagonal(a, b):
    return abs(a // K.GRID - b // K.GRID) == 1 and abs(a % K.GRID - b % K.GRID) == 1


@njit
def is_orthogonal(a, b):
    dr = abs(a // K.GRID - b // K.GRID)
    dc = abs(a % K.GRID - b % K.GRID)
    return dr + dc == 1


@njit
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


@njit
def road_component(cells, tiles, start, through_types):
    """Cells reachable from ``start`` by chains of road links.

    ``through_types``: 0 lets a chain pass through any tile; otherwise only through tiles with
    one of these type bits (the start tile is always included if occupied).
    Returns a cell mask (0 when ``start`` is empty).
    """
    if cells[start] == K.EMPTY:
        return 0
    seen = 1 << start
    stack = np.empty(K.N_CELLS, dtype=np.int32)
    stack[0] = start
    top = 1
    while top > 0:
        top -= 1
        cell = stack[top]
        roads = tiles[cells[cell], K.C_ROADS]
        for direction in range(4):
            other = neighbour(cell, direction)
            if other < 0 or (seen >> other) & 1 or cells[other] == K.EMPTY:
                continue
            other_tile = cells[other]
            if through_types != 0 and (tiles[other_tile, K.C_TYPES] & through_types) == 0:
                continue
            if road_linked(roads, tiles[other_tile, K.C_ROADS], direction):
                seen |= 1 << other
                stack[top] = other
                top += 1
    return seen


@njit
def city_goods(cells, tiles):
    """Goods mask of everything the city's tiles produce (its Good tokens)."""
    goods = 0
    for cell in range(K.N_CELLS):
        if cells[cell] != K.EMPTY:
            goods |= tiles[cells[cell], K.C_PRODUCES]
    return goods


@njit
def popcount(mask):
    count = 0
    while mask:
        mask &= mask - 1
        count += 1
    return count
