"""Shapes made of quarter triangles, their orientations and their placements on the board.

A shape is a frozenset of quarters ``(row, col, q)`` (q in N, E, S, W; see
:mod:`sim.tangram.constants`), translated so that its smallest row and column are 0. Every
square of a shape holds either a half (two adjacent quarters) or the full square. Plain Python:
this runs once when a tile set is compiled, never in the game loop.
"""

from collections.abc import Iterable

from sim.tangram import constants as K

Shape = frozenset  # of (row, col, quarter)

TOKENS = {"#": K.FULL, **K.HALVES}  # a square of a drawn shape; "." is empty
NIBBLE_TOKENS = {nibble: token for token, nibble in TOKENS.items()}
# Quarter rotated 90 degrees clockwise, and mirrored left-right.
_ROTATE_Q = (K.Q_E, K.Q_S, K.Q_W, K.Q_N)
_MIRROR_Q = (K.Q_N, K.Q_W, K.Q_S, K.Q_E)
# Orientation index: 4 * flipped + clockwise quarter turns. Flipped = the green side.
N_ORIENTATIONS = 8


def normalize(quarters: Iterable) -> Shape:
    quarters = list(quarters)
    if not quarters:
        return frozenset()
    r0 = min(r for r, _, _ in quarters)
    c0 = min(c for _, c, _ in quarters)
    return frozenset((r - r0, c - c0, q) for r, c, q in quarters)


def height(shape: Shape) -> int:
    return max(r for r, _, _ in shape) + 1 if shape else 0


def width(shape: Shape) -> int:
    return max(c for _, c, _ in shape) + 1 if shape else 0


def rotate(shape: Shape) -> Shape:
    """The shape turned 90 degrees clockwise: (row, col) -> (col, height - 1 - row)."""
    h = height(shape)
    return normalize((c, h - 1 - r, _ROTATE_Q[q]) for r, c, q in shape)


def mirror(shape: Shape) -> Shape:
    """The shape's other side: mirrored left-right (E and W quarters swap)."""
    w = width(shape)
    return normalize((r, w - 1 - c, _MIRROR_Q[q]) for r, c, q in shape)


def oriented(shape: Shape, orientation: int) -> Shape:
    out = mirror(shape) if orientation >= 4 else shape
    for _ in range(orientation % 4):
        out = rotate(out)
    return out


def orientations(shape: Shape) -> list[tuple[int, int, Shape]]:
    """(orientation, colour, shape) for each distinct footprint of each side: the drawn side is
    red, the flipped side green. A footprint both sides share appears once per colour."""
    seen = set()
    out = []
    for orientation in range(N_ORIENTATIONS):
        image = oriented(shape, orientation)
        colour = K.GREEN if orientation >= 4 else K.RED
        if (colour, image) in seen:
            continue
        seen.add((colour, image))
        out.append((orientation, colour, image))
    return out


def canonical(shape: Shape) -> tuple:
    """The same tuple for two shapes exactly when one is a rotation or flip of the other."""
    return min(tuple(sorted(oriented(shape, o))) for o in range(N_ORIENTATIONS))


def squares(shape: Shape) -> dict[tuple[int, int], int]:
    """(row, col) -> nibble of the quarters the shape covers there."""
    out: dict[tuple[int, int], int] = {}
    for r, c, q in shape:
        out[(r, c)] = out.get((r, c), 0) | (1 << q)
    return out


def area_quarters(shape: Shape) -> int:
    return len(shape)


def neighbours(r: int, c: int, q: int):
    """Quarters sharing an edge with quarter (r, c, q): the two beside it in its square and the
    one across the square's edge (which may be off the board)."""
    yield (r, c, (q + 1) % 4)
    yield (r, c, (q + 3) % 4)
    if q == K.Q_N:
        yield (r - 1, c, K.Q_S)
    elif q == K.Q_E:
        yield (r, c + 1, K.Q_W)
    elif q == K.Q_S:
        yield (r + 1, c, K.Q_N)
    else:
        yield (r, c - 1, K.Q_E)


def connected(shape: Shape) -> bool:
    """True if every quarter can be reached from every other through shared edges (touching
    at a corner only does not connect)."""
    if not shape:
        return False
    start = next(iter(shape))
    seen = {start}
    todo = [start]
    while todo:
        for n in neighbours(*todo.pop()):
            if n in shape and n not in seen:
                seen.add(n)
                todo.append(n)
    return len(seen) == len(shape)


def bad_squares(shape: Shape) -> list[tuple[int, int, int]]:
    """(row, col, nibble) of squares covered by something other than a half or the whole."""
    valid = set(TOKENS.values())
    return [(r, c, n) for (r, c), n in sorted(squares(shape).items()) if n not in valid]


def words(quarters: Iterable, dr: int = 0, dc: int = 0) -> list[int]:
    """The board's 4 words (Python ints) with the given quarters set, shifted by (dr, dc)."""
    out = [0] * K.N_WORDS
    for r, c, q in quarters:
        bit = 4 * ((r + dr) * K.SIZE + (c + dc)) + q
        out[bit // 64] |= 1 << (bit % 64)
    return out


def from_words(board_words) -> Shape:
    """The quarters set in a board's 4 words (not normalized: board coordinates)."""
    out = set()
    for bit in range(K.N_QUARTERS):
        if (int(board_words[bit // 64]) >> (bit % 64)) & 1:
            s, q = divmod(bit, 4)
            out.add((s // K.SIZE, s % K.SIZE, q))
    return frozenset(out)


def render(shape: Shape) -> list[str]:
    """The shape drawn as rows of tokens (``#``, ``NE``, ``SE``, ``SW``, ``NW``, ``.``)."""
    cells = squares(shape)
    return [
        " ".join(
            NIBBLE_TOKENS.get(cells.get((r, c), 0), "?") if (r, c) in cells else "."
            for c in range(width(shape))
        )
        for r in range(height(shape))
    ]
