"""Test helpers: small tile tables built by hand, and an independent plain-Python scorer.

``plain_score`` is written from the rules texts (001 "Game End and Scoring", 000, 002), not
from sim.neom.scoring: it has its own geometry (row/column pairs) and its own breadth-first search,
and imports nothing from sim.neom.scoring, sim.effects or sim.grid, so the property test comparing
the two catches a mistake in either. It reads the compiled table layout from sim.constants.
"""

from collections import deque

import numpy as np

from sim.neom import constants as K

ROAD_LETTERS = "NESW"
STEPS = {"N": (-1, 0), "E": (0, 1), "S": (1, 0), "W": (0, -1)}
OPPOSITE = {"N": "S", "E": "W", "S": "N", "W": "E"}


# --- Building tables by hand --------------------------------------------------------------


def tile(
    types="resource",
    roads="NESW",
    vp=0,
    income=0,
    produces=(),
    power=False,
    polluting=False,
    vp_no_disasters=0,
    effects=(),
):
    """One tile spec. ``types``: a type name or a tuple of names; ``produces``: good indices;
    ``effects``: up to MAX_EFFECTS tuples ``(kind, a, b, c)``."""
    names = (types,) if isinstance(types, str) else tuple(types)
    return {
        "types": sum(K.TYPE_NAMES[n] for n in names),
        "roads": sum(K.ROAD_LETTERS[r] for r in roads),
        "vp": vp,
        "income": income,
        "produces": sum(1 << g for g in produces),
        "power": int(power),
        "polluting": int(polluting),
        "vp_no_disasters": vp_no_disasters,
        "effects": tuple(effects),
    }


def build_tables(specs, goods_tier=(K.TIER_RAW, K.TIER_PROCESSED, K.TIER_LUXURY)):
    """(tiles, effects, goods_tier) arrays for a list of ``tile()`` specs, in order."""
    n = len(specs)
    tiles = np.zeros((n, K.N_TILE_COLS), dtype=np.int32)
    tiles[:, [K.C_PREREQ0, K.C_PREREQ1, K.C_REPLACES]] = -1
    tiles[:, K.C_N_REQ_OPTIONS] = 1
    tiles[:, K.C_DECK] = K.DECK_GEN1
    tiles[:, K.C_PLAYERS] = 1
    effects = np.zeros((n, K.MAX_EFFECTS, 4), dtype=np.int32)
    for i, spec in enumerate(specs):
        tiles[i, K.C_TYPES] = spec["types"]
        tiles[i, K.C_ROADS] = spec["roads"]
        tiles[i, K.C_VP] = spec["vp"]
        tiles[i, K.C_INCOME] = spec["income"]
        tiles[i, K.C_PRODUCES] = spec["produces"]
        tiles[i, K.C_POWER] = spec["power"]
        tiles[i, K.C_POLLUTING] = spec["polluting"]
        tiles[i, K.C_VP_NO_DISASTERS] = spec["vp_no_disasters"]
        for k, row in enumerate(spec["effects"]):
            effects[i, k] = row
    return tiles, effects, np.asarray(goods_tier, dtype=np.int32)


def city(placements):
    """int16[25] city from ``{(row, col): tile index}``."""
    cells = np.full(K.N_CELLS, K.EMPTY, dtype=np.int16)
    for (row, col), index in placements.items():
        cells[row * K.GRID + col] = index
    return cells


# --- The independent scorer ---------------------------------------------------------------


def _grid(cells):
    """{(row, col): tile index} of the occupied squares."""
    return {(i // K.GRID, i % K.GRID): int(t) for i, t in enumerate(cells) if int(t) != K.EMPTY}


def _has_type(tiles, t, type_mask):
    return (int(tiles[t, K.C_TYPES]) & type_mask) != 0


def _around(pos):
    """The up to 8 squares around ``pos`` on the 5x5 board."""
    r, c = pos
    return [
        (r + dr, c + dc)
        for dr in (-1, 0, 1)
        for dc in (-1, 0, 1)
        if (dr or dc) and 0 <= r + dr < 5 and 0 <= c + dc < 5
    ]


def _roads(tiles, t):
    mask = int(tiles[t, K.C_ROADS])
    return {letter for letter in ROAD_LETTERS if mask & K.ROAD_LETTERS[letter]}


def _linked(tiles, grid, pos, other):
    """Whether the tiles on two squares share a road on their common edge."""
    for letter in _roads(tiles, grid[pos]):
        dr, dc = STEPS[letter]
        if (pos[0] + dr, pos[1] + dc) == other:
            return OPPOSITE[letter] in _roads(tiles, grid[other])
    return False


def _goods(grid, tiles):
    produced = set()
    for t in grid.values():
        mask = int(tiles[t, K.C_PRODUCES])
        produced |= {g for g in range(32) if mask >> g & 1}
    return produced


def _effect_vp(row, pos, grid, tiles, goods_tier):
    kind, a, b, c = (int(x) for x in row)
    if kind == K.EF_VP_PER_TYPE_CITY:
        return b * sum(
            1 for p, t in grid.items() if _has_type(tiles, t, a) and not (c and p == pos)
        )
    if kind == K.EF_VP_PER_TYPE_ADJACENT:
        return b * sum(1 for p in _around(pos) if p in grid and _has_type(tiles, grid[p], a))
    if kind == K.EF_VP_PER_GOOD_TIER:
        return b * sum(1 for g in _goods(grid, tiles) if goods_tier[g] == a)
    if kind == K.EF_VP_PLACEMENT:
        r, col = pos
        corner = r in (0, 4) and col in (0, 4)
        edge = r in (0, 4) or col in (0, 4)
        # "Alone": nothing around but the neighbours it is road-linked to.
        alone = not any(p in grid and not _linked(tiles, grid, pos, p) for p in _around(pos))
        ok = (
            (not a & K.PL_CORNER or corner)
            and (not a & K.PL_EDGE or edge)
            and (not a & K.PL_NO_NEIGHBOURS or alone)
        )
        return b if ok else 0
    return 0


def _neighborhood_sizes(grid, tiles, through_any):
    residential = {p for p, t in grid.items() if _has_type(tiles, t, K.T_RESIDENTIAL)}
    passable = set(grid) if through_any else residential
    sizes = []
    seen = set()
    for start in sorted(residential):
        if start in seen:
            continue
        seen.add(start)
        queue = deque([start])
        size = 0
        while queue:
            pos = queue.popleft()
            size += pos in residential
            for letter in _roads(tiles, grid[pos]):
                dr, dc = STEPS[letter]
                nxt = (pos[0] + dr, pos[1] + dc)
                if nxt in passable and nxt not in seen:
                    if OPPOSITE[letter] in _roads(tiles, grid[nxt]):
                        seen.add(nxt)
                        queue.append(nxt)
        sizes.append(size)
    return sizes


def plain_score(cells, money, tiles, effects, goods_tier, rules):
    """The score breakdown as a dict keyed by SCORE_KEYS."""
    grid = _grid(cells)
    residential = [p for p, t in grid.items() if _has_type(tiles, t, K.T_RESIDENTIAL)]

    tiles_vp = 0
    for pos, t in grid.items():
        if _has_type(tiles, t, K.T_RESIDENTIAL | K.T_PUBLIC):
            tiles_vp += int(tiles[t, K.C_VP])
            tiles_vp += sum(_effect_vp(row, pos, grid, tiles, goods_tier) for row in effects[t])
            if rules[K.RO_VARIANT] == K.V_NO_DISASTERS:
                tiles_vp += int(tiles[t, K.C_VP_NO_DISASTERS])

    neighborhoods = 0
    for n in _neighborhood_sizes(grid, tiles, bool(rules[K.RO_NEIGHBORHOOD_THROUGH_ANY])):
        neighborhoods += sum(range(1, n + 1)) if n <= 8 else 36 + 4 * (n - 8)

    goods = sum((1, 2, 10)[goods_tier[g]] for g in _goods(grid, tiles))

    pollution = 0
    for r, c in residential:
        for p in _around((r, c)):
            if p in grid and tiles[grid[p], K.C_POLLUTING]:
                pollution -= 2 if (p[0] == r or p[1] == c) else 1

    ghost_town = {0: -10, 1: -4}.get(len(residential), 0)
    power = 0 if any(tiles[t, K.C_POWER] for t in grid.values()) else -5
    score = {
        "tiles": tiles_vp,
        "neighborhoods": neighborhoods,
        "goods": goods,
        "money": money // 2,
        "pollution": pollution,
        "ghost_town": ghost_town,
        "power": power,
    }
    score["total"] = sum(score.values())
    return score
