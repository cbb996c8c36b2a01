"""The planner's rollouts list a tile's legal placements from bit sets (engine.placement_blocks,
engine.legal_by_blocks) instead of testing each placement's mask: on boards from empty to
nearly full, for every tile and the fountain, they must list exactly legal_placements' rows in
the same order (the planner's games, and their golden digests, depend on that order)."""

import random

import numpy as np

from sim.tangram import constants as K
from sim.tangram import engine as E


def partly_built(board, full):
    """The squares with some quarter built that are not fully built (49-bit mask)."""
    built = 0
    for s in range(K.N_SQUARES):
        if int(board[E.OCC, s // 16]) >> (4 * (s % 16)) & 15:
            built |= 1 << s
    return np.uint64(built & ~int(full))


def test_the_bit_sets_list_the_legal_placements_in_order(data):
    place_mask, place_meta, _, tile_first, start_mask = data.arrays
    blocks = E.placement_blocks(place_mask, tile_first, True)
    n_types = tile_first.shape[0] - 1  # the tiles and the fountain
    plain = np.zeros((1000, 2), dtype=np.int64)
    listed = np.zeros((1000, 2), dtype=np.int64)
    play = random.Random(11)
    counts = []
    for game in range(6):
        board = np.zeros((E.N_LAYERS, K.N_WORDS), dtype=np.uint64)
        E.put_start(board, start_mask, game % K.N_BOARDS, K.GREEN)
        for _ in range(40):
            full = np.uint64(E.full_squares(board))
            partial = partly_built(board, full)
            for tile in range(n_types):
                n = E.legal_placements(board, place_mask, tile_first, tile, plain, E.ZERO)
                m = E.legal_by_blocks(
                    board, full, partial, tile, tile_first, blocks, listed, E.ZERO
                )
                assert m == n and (listed[:m, 0] == plain[:n, 0]).all(), (game, tile)
                counts.append(n)
            tile = play.randrange(n_types)
            n = E.legal_placements(board, place_mask, tile_first, tile, plain, E.ZERO)
            if n:
                E.put(board, place_mask, place_meta, plain[play.randrange(n), 0])
        assert E.popcount(E.full_squares(board)) > 20  # the later boards are mostly full
    assert max(counts) > 200 and counts.count(0) > 100  # open and closed boards were checked
