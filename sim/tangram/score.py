"""``score --game tangram BOARD.json``: score one City Board with the compiled scorer.

BOARD.json (issue 17)::

    {"rows": [[".", "R", "G|F", ...7 squares...], ...7 rows...]}

A square is ``"."`` (empty), ``"R"`` or ``"G"`` (fully built red / green), or two halves
``"a|b"``, each ``R``, ``G``, ``F`` (fountain) or ``.`` (empty): ``"R|F"``, ``"R|G"``,
``"F|F"``, ``"G|."``. Which diagonal splits the square does not change any score, so the first
half is taken as the NW half and the second as the SE half. The result holds ``rectangle``
(the largest fully built rectangle: the round score), ``red`` and ``green`` (the balance
markers), ``balance_bonus`` and ``planning_bonus``. A bad board raises one UserError naming
the square (``rows[r][c]``, counted from 0) and the problem; so does a board no game can
reach (more fountain halves than the 6 Fountain Tiles a player has).
"""

import json
from pathlib import Path

import numpy as np

from sim.core.errors import UserError, check_text, decode_text
from sim.core.game import GameData
from sim.tangram import constants as K
from sim.tangram import engine as E

MAX_BOARD_BYTES = 64 * 1024
HALF_CODES = {"R": K.RED, "G": K.GREEN, "F": K.FOUNTAIN}
FIRST_HALF = K.HALVES["NW"]
SECOND_HALF = K.HALVES["SE"]
SQUARE_HELP = 'use ".", "R", "G" or two halves "a|b", each R, G, F or . (e.g. "R|F", "F|F", "G|.")'


def parse_square(text, at: str) -> list[tuple[int, int]]:
    """(nibble, colour) pieces of one square."""
    if not isinstance(text, str):
        raise UserError(f"{at}: {json.dumps(text)[:40]} is not a square; {SQUARE_HELP}")
    if text == ".":
        return []
    if text in ("R", "G"):
        return [(K.FULL, HALF_CODES[text])]
    halves = text.split("|")
    if len(halves) != 2 or not all(h in ("R", "G", "F", ".") for h in halves):
        hint = ' (two fountains are "F|F")' if text == "F" else ""
        raise UserError(f"{at}: {json.dumps(text)[:40]} is not a square{hint}; {SQUARE_HELP}")
    return [
        (nibble, HALF_CODES[h])
        for h, nibble in zip(halves, (FIRST_HALF, SECOND_HALF), strict=True)
        if h != "."
    ]


def board_from_rows(rows, source: str) -> np.ndarray:
    """The engine's board (uint64[3, 4]) from the ``rows`` of a BOARD.json."""
    if not isinstance(rows, list) or len(rows) != K.SIZE:
        shown = f"{len(rows)} row(s)" if isinstance(rows, list) else "not a list"
        raise UserError(f'{source}: "rows": {shown}; need {K.SIZE} lists of {K.SIZE} squares')
    board = np.zeros((E.N_LAYERS, K.N_WORDS), dtype=np.uint64)
    fountains = 0
    for r, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != K.SIZE:
            shown = f"{len(row)} square(s)" if isinstance(row, list) else "not a list"
            raise UserError(f"{source}: rows[{r}]: {shown}; need {K.SIZE} squares")
        for c, text in enumerate(row):
            square = r * K.SIZE + c
            word, shift = divmod(4 * square, 64)
            for nibble, colour in parse_square(text, f"{source}: rows[{r}][{c}]"):
                fountains += colour == K.FOUNTAIN
                bits = np.uint64(nibble << shift)
                board[E.OCC, word] |= bits
                if colour == K.RED:
                    board[E.RED, word] |= bits
                elif colour == K.GREEN:
                    board[E.GREEN, word] |= bits
    if fountains > K.N_FOUNTAINS:
        # Components (facts file): 6 triangular Fountain Tiles per player, half a square each.
        raise UserError(
            f"{source}: {fountains} fountain halves; a player has only {K.N_FOUNTAINS} Fountain "
            "Tiles (half a square each), so no board holds more: not a board of the game"
        )
    return board


def score_board(board: np.ndarray, rules: np.ndarray) -> dict:
    full = np.uint64(E.full_squares(board))  # Numba hands uint64 back as a Python int
    red, green = E.colour_counts(board)
    red_marker, green_marker = E.markers(red, green, rules)
    return {
        "rectangle": int(E.largest_rectangle(full)),
        "red": int(red_marker),
        "green": int(green_marker),
        "balance_bonus": int(E.balance_bonus(red, green, rules)),
        "planning_bonus": int(E.planning_bonus(full, rules)),
    }


def score_file(path, data: GameData | None = None, rules=None) -> dict:
    """Score the board in ``path`` (the tile set plays no part in scoring a drawn board).
    ``rules``: the rules array, or the rules options by name (as ``neom score`` passes them),
    or None for the defaults."""
    from sim.tangram.rules import make_rules

    path = Path(path)
    source = str(path)
    try:
        with open(path, "rb") as handle:
            content = handle.read(MAX_BOARD_BYTES + 1)
    except FileNotFoundError:
        raise UserError(f"{source}: board file not found") from None
    except OSError as exc:
        raise UserError(f"{source}: cannot read the board file ({exc.strerror})") from None
    if len(content) > MAX_BOARD_BYTES:
        raise UserError(f"{source}: larger than {MAX_BOARD_BYTES} bytes; not a board file")
    text = decode_text(content, source)
    check_text(text, "json", source)  # depth and numbers before parsing
    try:
        board = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{source}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise UserError(f"{source}: nested too deeply; not a board file") from None
    if not isinstance(board, dict) or "rows" not in board:
        raise UserError(f'{source}: expected an object {{"rows": [{K.SIZE} rows]}}')
    unknown = sorted(set(board) - {"rows"})
    if unknown:
        raise UserError(f'{source}: unknown key "{unknown[0]}"; a board has only "rows"')
    if rules is None:
        rules = make_rules()
    elif isinstance(rules, dict):
        rules = make_rules(**rules)
    return score_board(board_from_rows(board["rows"], source), rules)
