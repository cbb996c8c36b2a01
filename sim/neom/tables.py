"""The compiled catalogue: what the compiled core sees of a tile set.

``sim.catalog`` turns a catalogue file into a :class:`Tables`; the compiled core takes its
arrays as arguments (never as globals, which Numba's cache would freeze).

Tile indices: generation and cornerstone tiles in file order, then one City Center tile per
board (deck ``DECK_CENTER``, a Resource tile producing the board's raw good with the board's
roads). A city is an ``int16[25]`` array of tile indices (``EMPTY`` for an empty square), so the
City Center is just a tile that can be replaced like any other Resource tile.
"""

from dataclasses import dataclass, field

import numpy as np

from sim.neom import constants as K


@dataclass(frozen=True)
class Tables:
    name: str
    reconstructed: bool
    source: str  # file the catalogue was read from
    digest: str  # sha256 of the file's bytes
    tiles: np.ndarray  # int32[n_tiles, N_TILE_COLS]
    req: np.ndarray  # int32[n_tiles, MAX_REQ_OPTIONS, 2]
    effects: np.ndarray  # int32[n_tiles, MAX_EFFECTS, 4]
    goods_tier: np.ndarray  # int32[n_goods]
    board_center: np.ndarray  # int32[n_boards]: tile index of each board's City Center
    tile_names: tuple[str, ...]
    good_names: tuple[str, ...]
    board_names: tuple[str, ...]
    invented_goods: tuple[bool, ...] = field(default=())

    @property
    def arrays(self) -> tuple:
        """What ``play_batch`` takes as ``data``."""
        return (self.tiles, self.req, self.effects, self.goods_tier, self.board_center)

    @property
    def n_tiles(self) -> int:
        return self.tiles.shape[0]

    def tile_index(self, name: str) -> int:
        return self.tile_names.index(name)

    def good_index(self, name: str) -> int:
        return self.good_names.index(name)

    def deck(self, deck: int) -> np.ndarray:
        """Indices of the tiles of one deck, in file order."""
        return np.flatnonzero(self.tiles[:, K.C_DECK] == deck).astype(np.int32)


def make_rules(
    variant: int = K.V_STANDARD,
    neighborhood_through_any: bool = True,
    solo_tileset: int = 1,
    force_tile: int = -1,
    force_seat: int = -1,
    ban_tile: int = -1,
) -> np.ndarray:
    """Rules options; ``force_*``/``ban_tile`` are experiment interventions (-1 = none)."""
    rules = np.zeros(K.N_RULES, dtype=np.int32)
    rules[K.RO_NEIGHBORHOOD_THROUGH_ANY] = 1 if neighborhood_through_any else 0
    rules[K.RO_VARIANT] = variant
    rules[K.RO_SOLO_TILESET] = solo_tileset
    rules[K.RO_FORCE_TILE] = force_tile
    rules[K.RO_FORCE_SEAT] = force_seat
    rules[K.RO_BAN_TILE] = ban_tile
    return rules


def rules_as_dict(rules: np.ndarray) -> dict[str, int]:
    """Every rules option by its constant's name (RO_VARIANT -> "variant"), for run records."""
    return {
        name[len("RO_") :].lower(): int(rules[index])
        for name, index in vars(K).items()
        if name.startswith("RO_")
    }
