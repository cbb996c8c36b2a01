"""Find a witness tiling of each board: every tile once, the 6 fountains, the start piece.

``python -m sim.tangram.witness [TILESET]`` prints, for each board of the tile set, a
``witness = [...]`` drawing to paste into the file (format: :func:`sim.tangram.tileset.
check_witness`). The default tile set's witnesses were found this way.

Method: exact cover of the 196 quarters by depth-first search. The first empty quarter (in
bit order) must be covered by a piece whose lowest quarter it is, so only those placements are
tried; candidate lists are shuffled with a seeded generator and the search restarts with the
next seed after a node budget, which avoids the long dead ends of a fixed order. Plain Python
integers serve as 196-bit boards; it is a design tool, not part of the game.
"""

import argparse
import random
import sys

from sim.core.errors import UserError
from sim.tangram import constants as K
from sim.tangram import geometry as G
from sim.tangram.tileset import (
    WITNESS_FOUNTAIN,
    WITNESS_START,
    fill_problem,
    load_tileset,
    tile_letter,
    witness_rows,
)

FULL_BOARD = (1 << K.N_QUARTERS) - 1
FOUNTAIN_PIECE = -1


def _bits(quarters) -> int:
    value = 0
    for r, c, q in quarters:
        value |= 1 << (4 * (r * K.SIZE + c) + q)
    return value


def _lowest(value: int) -> int:
    return (value & -value).bit_length() - 1


def _candidates(shapes) -> list[list[tuple[int, int]]]:
    """For each quarter, the (piece, bits) placements whose lowest quarter it is."""
    by_lowest: list[list[tuple[int, int]]] = [[] for _ in range(K.N_QUARTERS)]
    for tile, shape in enumerate(shapes):
        seen = set()
        for orientation in range(G.N_ORIENTATIONS):
            image = G.oriented(shape, orientation)
            for dr in range(K.SIZE - G.height(image) + 1):
                for dc in range(K.SIZE - G.width(image) + 1):
                    bits = _bits((r + dr, c + dc, q) for r, c, q in image)
                    if bits not in seen:
                        seen.add(bits)
                        by_lowest[_lowest(bits)].append((tile, bits))
    for square in range(K.N_SQUARES):
        for nibble in K.HALVES.values():
            bits = sum(1 << (4 * square + q) for q in range(4) if nibble >> q & 1)
            by_lowest[_lowest(bits)].append((FOUNTAIN_PIECE, bits))
    return by_lowest


def find_tiling(shapes, start, seeds=range(200), budget: int = 300_000):
    """[(piece, bits), ...] covering the board exactly (piece -1: a fountain), or None."""
    base = _candidates(shapes)
    for seed in seeds:
        rng = random.Random(seed)
        by_lowest = [rng.sample(options, len(options)) for options in base]
        tiling = _search(by_lowest, len(shapes), _bits(start), budget)
        if tiling is not None:
            return tiling
    return None


def _search(by_lowest, n_tiles: int, start_bits: int, budget: int):
    """One depth-first search with a node budget: the tiling or None."""
    used = [False] * n_tiles
    chosen: list[tuple[int, int]] = []
    nodes = 0

    def search(filled: int, fountains: int) -> bool:
        nonlocal nodes
        if filled == FULL_BOARD:
            return all(used)
        nodes += 1
        if nodes > budget:
            return False
        for piece, bits in by_lowest[_lowest(~filled & FULL_BOARD)]:
            if bits & filled:
                continue
            if piece == FOUNTAIN_PIECE:
                if fountains == K.N_FOUNTAINS:
                    continue
                chosen.append((piece, bits))
                if search(filled | bits, fountains + 1):
                    return True
                chosen.pop()
            elif not used[piece]:
                used[piece] = True
                chosen.append((piece, bits))
                if search(filled | bits, fountains):
                    return True
                chosen.pop()
                used[piece] = False
        return False

    return chosen if search(start_bits, 0) else None


def tiling_rows(tiling, start) -> list[str]:
    owner = {quarter: WITNESS_START for quarter in start}
    for piece, bits in tiling:
        letter = WITNESS_FOUNTAIN if piece == FOUNTAIN_PIECE else tile_letter(piece)
        for bit in range(K.N_QUARTERS):
            if bits >> bit & 1:
                s, q = divmod(bit, 4)
                owner[(s // K.SIZE, s % K.SIZE, q)] = letter
    return witness_rows(owner)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tileset", nargs="?", help="tile-set file (default: packaged)")
    args = parser.parse_args(argv)
    try:
        data = load_tileset(args.tileset)
    except UserError as exc:
        print(exc, file=sys.stderr)
        return 1
    ts = data.content
    problem = fill_problem(ts)
    if problem:
        print(problem, file=sys.stderr)
        return 1
    print(f"# tile set: {data.label}")
    status = 0
    for board in ts.boards:
        tiling = find_tiling(ts.shapes, board.start)
        print(f"# board {board.name!r}")
        if tiling is None:
            print("# no tiling found within the search budget")
            status = 1
            continue
        print("witness = [")
        for row in tiling_rows(tiling, board.start):
            print(f'  "{row}",')
        print("]")
    return status


if __name__ == "__main__":
    from sim.core.cli import guarded

    sys.exit(guarded(main, "python -m sim.tangram.witness"))
