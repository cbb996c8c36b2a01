"""Geometry of Tangram City: quarter triangles, halves, rotations and flips, placements, and the
compiled board functions checked against hand-made boards and the plain scorer. "004" is the
rules text (shared/rules/004_*.txt); TANGRAM_RULES.md gives the readings."""

import itertools
import random

import numpy as np
from test_tangram_support import (
    board_from_text,
    engine_board,
    plain_colours,
    plain_full,
    plain_rectangle,
)

from sim.tangram import constants as K
from sim.tangram import engine as E
from sim.tangram import geometry as G
from sim.tangram.tileset import M_COLOUR, M_TILE


def shape(*rows):
    out = set()
    for r, row in enumerate(rows):
        for c, token in enumerate(row.split()):
            if token != ".":
                out.update((r, c, q) for q in range(4) if G.TOKENS[token] >> q & 1)
    return G.normalize(out)


def test_halves_are_two_adjacent_quarters():
    """Reading G1: a half-square right triangle is two quarters sharing an edge, named by its
    right-angle corner: NE = N + E, SE = E + S, SW = S + W, NW = W + N."""
    assert K.HALVES == {"NE": 0b0011, "SE": 0b0110, "SW": 0b1100, "NW": 0b1001}
    for nibble in K.HALVES.values():
        quarters = [q for q in range(4) if nibble >> q & 1]
        assert len(quarters) == 2 and (quarters[1] - quarters[0]) in (1, 3)


def test_rotation_turns_halves_clockwise():
    """A quarter turn clockwise moves the NE half to SE, and a horizontal bar to a vertical
    one (004: "Rotate and flip the Tiles before placing them")."""
    assert G.rotate(shape("NE")) == shape("SE")
    assert G.rotate(shape("SE")) == shape("SW")
    assert G.rotate(shape("# NW")) == shape("#", "NE")
    assert G.rotate(shape("# # #")) == shape("#", "#", "#")
    s = shape("SE # NW")
    assert G.rotate(G.rotate(G.rotate(G.rotate(s)))) == s


def test_flipping_mirrors_the_shape():
    """Facts file: "the two sides of a tile are mirror images in different colours"."""
    assert G.mirror(shape("NE")) == shape("NW")
    assert G.mirror(shape("# NW")) == shape("NE #")
    # The Parallelogram is chiral: its mirror is no rotation of it.
    para = shape("SE # NW")
    assert all(G.oriented(para, o) != G.mirror(para) for o in range(4))


def test_orientations_give_each_footprint_once_per_colour():
    """A square has one footprint per side; the chiral Parallelogram 2 per side (its rotations
    by 180 degrees coincide), a symmetric Roof 4 per side."""
    counts = {
        "#": (1, 1),
        "SE # NW": (2, 2),
        "SE SW": (4, 4),
        "# NW": (4, 4),
    }
    for rows, (red, green) in counts.items():
        found = G.orientations(shape(*rows.split(" / ")))
        assert sum(1 for _, c, _ in found if c == K.RED) == red
        assert sum(1 for _, c, _ in found if c == K.GREEN) == green


def test_connected_needs_shared_edges():
    """Tiles are connected pieces: touching at a corner only does not count."""
    assert G.connected(shape("# NW"))
    assert G.connected(shape(". SW", "NE NW"))
    assert not G.connected(shape("# .", ". #"))
    assert not G.connected(shape("NE SE"))  # SE has no W quarter: they meet at a corner only
    assert G.connected(shape("NE NW"))


def test_canonical_is_the_same_for_rotations_and_flips():
    s = shape("# # NW")
    assert all(G.canonical(G.oriented(s, o)) == G.canonical(s) for o in range(8))
    assert G.canonical(shape("# # NW")) == G.canonical(shape("# # SW"))  # a vertical flip
    assert G.canonical(shape("SE # NW")) != G.canonical(shape("SE # SW"))


def test_placements_stay_on_the_board_and_cover_their_area(data):
    """004: players may not "Extend them beyond the edge of your City Board": every listed
    placement lies inside the board and covers exactly the tile's quarters."""
    place_mask, place_meta, _, tile_first, _ = data.arrays
    ts = data.content
    for tile in range(ts.n_tiles):
        rows = range(tile_first[tile], tile_first[tile + 1])
        assert len(rows) > 0
        for p in rows:
            quarters = G.from_words(place_mask[p])
            assert len(quarters) == len(ts.shapes[tile])
            assert G.normalize(quarters) in {G.oriented(ts.shapes[tile], o) for o in range(8)}
            assert place_meta[p, M_TILE] == tile
        # Both sides appear, in red and green.
        assert set(place_meta[rows.start : rows.stop, M_COLOUR]) == {K.RED, K.GREEN}
    fountain = range(tile_first[ts.n_tiles], tile_first[ts.n_tiles + 1])
    assert len(fountain) == 4 * K.N_SQUARES
    assert set(place_meta[fountain.start : fountain.stop, M_COLOUR]) == {K.FOUNTAIN}


def test_flipped_placements_are_green_mirror_images(data):
    """Reading G2: the drawn side is red; its mirror image is the green side."""
    place_mask, place_meta, _, tile_first, _ = data.arrays
    ts = data.content
    para = ts.tile_names.index("Parallelogram")
    red, green = set(), set()
    for p in range(tile_first[para], tile_first[para + 1]):
        image = G.normalize(G.from_words(place_mask[p]))
        (red if place_meta[p, M_COLOUR] == K.RED else green).add(image)
    assert G.normalize(shape("SE # NW")) in red
    assert G.mirror(shape("SE # NW")) in green
    assert not red & green  # chiral: no footprint on both sides


def test_the_footprint_scan_lists_the_same_placements(data):
    """engine.legal_placements_on (the planner's rollouts) drops placements over a fully built
    square before the mask test: on boards from empty to nearly full it lists exactly the rows
    of legal_placements, in the same order, and each footprint is its placement's squares,
    split into those it covers whole and those it covers part of (greedy's option values)."""
    place_mask, place_meta, _, tile_first, start_mask = data.arrays
    footprint = np.zeros(place_mask.shape[0], dtype=np.uint64)
    parts = np.zeros((place_mask.shape[0], 2), dtype=np.uint64)
    E.square_parts(place_mask, footprint, parts)
    with_whole = 0
    for p in range(0, place_mask.shape[0], 7):
        quarters = [K.SIZE * r + c for r, c, _ in G.from_words(place_mask[p])]
        assert int(footprint[p]) == sum(1 << s for s in set(quarters))
        whole = {s for s in quarters if quarters.count(s) == 4}
        assert int(parts[p, 0]) == sum(1 << s for s in whole)
        assert int(parts[p, 1]) == sum(1 << s for s in set(quarters) - whole)
        with_whole += bool(whole)
    assert with_whole > 100  # both kinds of square were checked
    rng = random.Random(5)
    n_tiles = tile_first.shape[0] - 1
    plain = np.zeros((1000, 2), dtype=np.int64)
    fast = np.zeros((1000, 2), dtype=np.int64)
    for game in range(6):
        board = np.zeros((E.N_LAYERS, K.N_WORDS), dtype=np.uint64)
        E.put_start(board, start_mask, game % K.N_BOARDS, K.RED)
        for _ in range(40):
            full = E.full_squares(board)
            for tile in range(n_tiles):
                n = E.legal_placements(board, place_mask, tile_first, tile, plain, E.ZERO)
                m = E.legal_placements_on(
                    board, full, place_mask, footprint, tile_first, tile, fast, E.ZERO
                )
                assert m == n and (fast[:m] == plain[:n]).all()
            tile = rng.randrange(n_tiles)
            n = E.legal_placements(board, place_mask, tile_first, tile, plain, E.ZERO)
            if n:
                E.put(board, place_mask, place_meta, plain[rng.randrange(n), 0])
        assert E.popcount(E.full_squares(board)) > 20  # the later boards are mostly full


def test_legality_is_one_mask_test(data):
    """004: players may not "Overlap or stack the Tiles": a placement fits exactly when it
    shares no quarter with the built ones, and two halves of one square can both be built."""
    place_mask, place_meta, _, tile_first, _ = data.arrays
    fountain = data.content.n_tiles
    board = np.zeros((E.N_LAYERS, K.N_WORDS), dtype=np.uint64)
    square = 3 * K.SIZE + 3
    halves = {
        int(place_meta[p, 1]): p
        for p in range(tile_first[fountain], tile_first[fountain + 1])
        if place_meta[p, 3] == 3 and place_meta[p, 4] == 3
    }
    ne, sw, nw = halves[0], halves[2], halves[3]
    assert E.fits(board, place_mask, ne)
    E.put(board, place_mask, place_meta, ne)
    assert not E.fits(board, place_mask, ne)
    assert not E.fits(board, place_mask, nw)  # shares the N quarter
    assert E.fits(board, place_mask, sw)  # the other half of the square
    E.put(board, place_mask, place_meta, sw)
    assert E.full_squares(board) == 1 << square


def test_full_squares_and_largest_rectangle_match_the_plain_scorer():
    """004 ROUND SCORING: "finds the largest fully built rectangle. Players earn as many points
    as the rectangle has squares"; checked on random boards against trying every rectangle."""
    rnd = random.Random(5)
    for trial in range(300):
        density = rnd.random()
        board = {
            (r, c, q): rnd.choice((K.RED, K.GREEN, K.FOUNTAIN))
            for r, c in itertools.product(range(7), range(7))
            if rnd.random() < density
            for q in range(4)
            if rnd.random() < 0.97
        }
        eb = engine_board(board)
        full = E.full_squares(eb)
        assert {(s // 7, s % 7) for s in range(49) if full >> s & 1} == plain_full(board)
        assert E.largest_rectangle(np.uint64(full)) == plain_rectangle(plain_full(board)), trial
        assert E.colour_counts(eb) == plain_colours(board)


def test_example_of_the_rules_scores_16():
    """004: "A City built as depicted would score you 16, as the biggest rectangle is 4x4
    squares. Anything outside of the biggest rectangle is not counted."""
    rows = ["rrrr rrrr gggg gggg .... .... ....",
            "rrrr rrrr gggg gggg rrrr rrrr ....",
            "rrrr rrrr gggg gggg .... .... ....",
            "rrgg ffgg ffff rrff .... .... ....",
            "rrrr rrrr rrrr .... .... .... ....",
            ".... .... .... .... .... .... ....",
            ".... .... .... .... .... .... rrrr"]  # fmt: skip
    full = E.full_squares(engine_board(board_from_text(rows)))
    assert E.largest_rectangle(np.uint64(full)) == 16


def test_colour_of_a_square():
    """004 ROUND END: "Squares that are fully built with both a Red and a Green Triangle do not
    count for either color. However, if a Red or Green Triangle is combined with a Fountain
    Tile on a square, that square counts for the corresponding color. If there are two
    Fountain Tiles on one square, it does not correspond to any color"; a half-built square
    counts for nothing."""
    board = engine_board(board_from_text(["rrgg rrff ffgg ffff rrrr gggg rr.."]))
    assert E.colour_counts(board) == (2, 2)  # rrff + rrrr red; ffgg + gggg green
    # Two fountains: fully built (counts for the rectangle) but no colour.
    assert E.largest_rectangle(np.uint64(E.full_squares(board))) == 6


def test_popcount_and_compress_on_edge_values():
    for value in (0, 1, (1 << 64) - 1, 0x8000000000000001, 0x1111111111111111):
        assert E.popcount(np.uint64(value)) == bin(value).count("1")
    assert E.compress(np.uint64(0x1111111111111111)) == 0xFFFF
    assert E.compress(np.uint64(1 << 60)) == 1 << 15
