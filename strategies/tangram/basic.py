"""The basic strategies: ``random`` and ``greedy``, and greedy's evaluation (also the planner's
rollout policy).

Greedy values a board by what it would score if the round ended now: the largest fully built
rectangle, plus the planning bonus if the board is complete, plus ``balance_weight`` times the
balance bonus of the current counts (0 by default: the balance is settled at the end of the
game, and weighing it now makes every new square that tips the balance look like a loss). It
compares options lexicographically by that value, then building over declining, then the
balance bonus of the current counts, then the number of fully built squares, then contact
(edges of the piece touching built quarters or the border: compact building), then at random
(the seat's own stream). Declining (or placing no fountain) keeps the current value and builds
nothing, so greedy declines only when every placement lowers the value.

Each option is evaluated incrementally from its placement's squares (engine.square_parts): a
placement that meets no partly built square completes exactly the squares it covers whole, so
only the others test the words they touch, and the rectangle is measured only when a square
becomes fully built (through a memo by full-square mask). greedy_index picks without storing the
keys and counts an option's contact only when the rest of its key does not already lose;
greedy_pick does the same for a hand of tiles, finding their legal placements from bit sets
rather than testing each placement (the planner's rollouts: about 50 options a decision, 12,000
decisions a game of the default field).
"""

import numpy as np

from sim.core import rng
from sim.core.jit import njit
from sim.tangram import constants as K
from sim.tangram import engine as E
from sim.tangram.engine import U0, U1
from sim.tangram.tileset import M_COLOUR, M_EDGES

K_VALUE = 0
K_BUILD = 1
K_BALANCE = 2
K_FULL = 3
K_CONTACT = 4
N_KEY = 5
_NIBBLE = np.uint64(15)  # one square's 4 quarter bits


@njit(_nrt=False)
def choose_random(state, n):
    return rng.randint(state, n)


@njit(inline="always")
def board_value(board, rules, balance_weight):
    """(full-square mask, value, red squares, green squares) of a board as greedy sees it."""
    full = E.full_squares(board)
    red, green = E.colour_counts(board)
    value = (
        E.largest_rectangle(full)
        + balance_weight * E.balance_bonus(red, green, rules)
        + E.planning_bonus(full, rules)
    )
    return full, value, red, green


@njit(inline="always")
def board_before(board, rules, balance_weight):
    """What every option of a decision starts from: the board's (full squares, value, red,
    green, full count, partly built squares, balance bonus)."""
    full, value, red, green = board_value(board, rules, balance_weight)
    built = U0
    for w in range(K.N_WORDS):
        built |= E.compress(E.any_flags(board[E.OCC, w])) << E.WORD_SHIFT[w]
    bonus = E.balance_bonus(red, green, rules)
    return full, value, red, green, E.popcount(full), built & ~full, bonus


@njit(_nrt=False)
def completed_squares(board, place_mask, p, colour, whole, candidates):
    """(squares placement p completes, red squares gained, green squares gained): its
    ``whole`` squares, in its colour, and those of the partly built ``candidates`` (the
    squares it covers part of) whose quarters it completes, each counted red or green as
    engine.word_colours counts a full square (that colour and not the other). The option
    values' rarer case, a placement meeting a partly built square (not inlined: option_prefix
    is inlined twice, and this would double its compile)."""
    k = E.popcount(whole)
    new = whole
    d_red = k if colour == K.RED else 0
    d_green = k if colour == K.GREEN else 0
    while candidates != U0:
        s = E.lowest_bit(candidates)
        candidates &= candidates - U1
        w = s >> 4
        shift = np.uint64(4 * (s & 15))
        m = (place_mask[p, w] >> shift) & _NIBBLE
        if ((board[E.OCC, w] >> shift) & _NIBBLE) | m == _NIBBLE:
            new |= U1 << np.uint64(s)
            r = (board[E.RED, w] >> shift) & _NIBBLE
            g = (board[E.GREEN, w] >> shift) & _NIBBLE
            if colour == K.RED:
                r |= m
            elif colour == K.GREEN:
                g |= m
            if r != U0 and g == U0:
                d_red += 1
            elif g != U0 and r == U0:
                d_green += 1
    return new, d_red, d_green


# The largest rectangle is memoized by full-square mask in the last RECT_MEMO rows of
# ``squares`` (square_table): one multiply and one compared load instead of up to 28 bands;
# about half the options that complete a square find their mask there (profile: the
# rectangle's share of a planner game 14% -> 7%).
RECT_MEMO_BITS = 8
RECT_MEMO = 1 << RECT_MEMO_BITS
_HASH = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the top bits of mask * 2^64/phi
_HASH_SHIFT = np.uint64(64 - RECT_MEMO_BITS)
_NO_KEY = ~np.uint64(0)  # no full-square mask has bits above the 49th


@njit
def square_table(place_mask):
    """engine.square_parts' parts of each placement (its whole and partly covered squares),
    then RECT_MEMO empty rows of the rectangle memo (:func:`rectangle`): greedy's
    ``squares``, allocated once per batch."""
    n = place_mask.shape[0]
    squares = np.zeros((n + RECT_MEMO, 2), dtype=np.uint64)
    E.square_parts(place_mask, np.zeros(n, dtype=np.uint64), squares)
    for h in range(n, n + RECT_MEMO):
        squares[h, 0] = _NO_KEY
    return squares


@rng.wraps_silently  # the hash's multiply wraps by design (interpreted, numpy warns)
@njit(inline="always")
def rectangle(full, squares):
    """engine.largest_rectangle(full), through the memo at the end of ``squares``: row
    (key, squares), replaced on a miss."""
    h = squares.shape[0] - RECT_MEMO + np.int64((full * _HASH) >> _HASH_SHIFT)
    if squares[h, 0] == full:
        return np.int64(squares[h, 1])
    r = E.largest_rectangle(full)
    squares[h, 0] = full
    squares[h, 1] = np.uint64(r)
    return r


@njit(inline="always")
def option_prefix(board, p, place_mask, place_meta, squares, rules, balance_weight, before):
    """The key's first four fields (value, builds, balance bonus, full squares) after
    placement p (p < 0: nothing placed); ``before``: board_before; ``squares``:
    :func:`square_table`."""
    full, value, red, green, n_full, partial, bonus = before
    if p < 0:
        return value, 0, bonus, n_full
    whole = squares[p, 0]
    colour = place_meta[p, M_COLOUR]
    if squares[p, 1] & partial == U0:
        # The usual case: it completes no partly built square, so exactly its whole squares
        # become fully built, all in its own colour (no per-word test).
        if whole == U0:
            return value, 1, bonus, n_full
        new_full = full | whole
        k = E.popcount(whole)
        d_red = k if colour == K.RED else 0
        d_green = k if colour == K.GREEN else 0
    else:
        new, d_red, d_green = completed_squares(
            board, place_mask, p, colour, whole, squares[p, 1] & partial
        )
        if new == U0:
            return value, 1, bonus, n_full
        new_full = full | new
    new_bonus = E.balance_bonus(red + d_red, green + d_green, rules)
    new_value = (
        rectangle(new_full, squares)
        + balance_weight * new_bonus
        + E.planning_bonus(new_full, rules)
    )
    return new_value, 1, new_bonus, E.popcount(new_full)


@njit(inline="always")
def option_contact(board, p, place_meta, place_near):
    """The key's last field: edges of placement p touching built quarters or the border
    (-1 for nothing placed)."""
    if p < 0:
        return -1
    contact = place_meta[p, M_EDGES]
    for w in range(K.N_WORDS):
        contact += E.popcount(place_near[p, w] & board[E.OCC, w])
    return contact


@njit(_nrt=False)
def greedy_keys(board, options, n, data, squares, rules, balance_weight, keys):
    """Every option's key into ``keys[:n]`` (``squares``: engine.square_parts' parts of the
    placements)."""
    place_mask, place_meta, place_near, _, _ = data
    before = board_before(board, rules, balance_weight)
    for i in range(n):
        p = options[i, 0]
        v, u, b, f = option_prefix(
            board, p, place_mask, place_meta, squares, rules, balance_weight, before
        )
        keys[i, K_VALUE] = v
        keys[i, K_BUILD] = u
        keys[i, K_BALANCE] = b
        keys[i, K_FULL] = f
        keys[i, K_CONTACT] = option_contact(board, p, place_meta, place_near)


@njit(inline="always")
def _order(a, b):
    return 1 if a > b else (0 if a == b else -1)


@njit(inline="always")
def compare(keys, i, j):
    """1 if option i's key beats option j's, 0 if equal, -1 if worse (lexicographic)."""
    for f in range(N_KEY):
        if keys[i, f] != keys[j, f]:
            return 1 if keys[i, f] > keys[j, f] else -1
    return 0


@njit(inline="always")
def _best_option(
    board, options, n, hand, n_hand, listed, data, squares, blocks, rules, balance_weight, state
):
    """Greedy's pick: the best key of greedy_keys, ties drawn from ``state`` in the order the
    options are listed (each option equal to the best so far draws once). ``listed``: the
    options are ``options[:n]``, and the result is (its row, -1); else they are the legal
    placements of each of the ``n_hand`` tiles of ``hand`` in order, then declining each,
    listed tile by tile into ``options`` from their bit sets (engine.legal_by_blocks,
    ``blocks``), and the result is (placement or -1, its tile). An option whose first four
    fields already lose to the best so far can neither win nor draw, so its contact is not
    counted: the same choice and the same draws as with every key
    (tests/test_tangram_strategies.py). Inlined into
    both wrappers with ``listed`` constant: one source, each copy without the other's
    branches."""
    place_mask, place_meta, place_near, tile_first, _ = data
    before = board_before(board, rules, balance_weight)
    best = -1
    best_tile = -1
    ties = 0
    bv = 0.0
    bu = bb = bf = bc = 0
    for i in range(1 if listed else 2 * n_hand):
        if listed:
            tile, lo, hi = -1, 0, n
        elif i < n_hand:
            tile = hand[i]
            lo = 0
            hi = E.legal_by_blocks(
                board, before[0], before[5], tile, tile_first, blocks, options, E.ZERO
            )
        else:
            tile, lo, hi = hand[i - n_hand], -1, 0  # one option: declining the tile
        for j in range(lo, hi):
            p = options[j, 0] if j >= 0 else E.NONE
            # One call site of each part of the key (each is inlined: its copies cost
            # compile time).
            v, u, b, f = option_prefix(
                board, p, place_mask, place_meta, squares, rules, balance_weight, before
            )
            k = 1 if ties == 0 else _order(v, bv)
            if k == 0:
                k = _order(u, bu)
                if k == 0:
                    k = _order(b, bb)
                    if k == 0:
                        k = _order(f, bf)
            if k < 0:
                continue
            c = option_contact(board, p, place_meta, place_near)
            if k == 0:
                k = _order(c, bc)
            if k > 0:
                best, best_tile = j if listed else p, tile
                ties = 1
                bv, bu, bb, bf, bc = v, u, b, f, c
            elif k == 0:
                ties += 1
                if rng.randint(state, ties) == 0:
                    best, best_tile = j if listed else p, tile
    return best, best_tile


@njit(_nrt=False)
def greedy_index(board, options, n, data, squares, rules, balance_weight, state):
    """Greedy's option among ``options[:n]`` (its row; :func:`_best_option`)."""
    return _best_option(
        board,
        options,
        n,
        options[0],
        E.ZERO,
        True,
        data,
        squares,
        squares[:, 0],  # unused: the options are listed
        rules,
        balance_weight,
        state,
    )[0]


@njit(_nrt=False)
def greedy_pick(board, hand, n_hand, found, data, squares, blocks, rules, balance_weight, state):
    """Greedy's option among the legal placements of the ``n_hand`` tiles of ``hand`` and
    declining each (the planner's rollouts): (placement or -1, its tile). ``found``: scratch
    of max_options rows for a tile's legal placements; ``blocks``: engine.legal_by_blocks'.
    A tile with no legal placement and one decline makes no draw, as a decision it skips
    (:func:`_best_option`)."""
    return _best_option(
        board,
        found,
        E.ZERO,
        hand,
        n_hand,
        False,
        data,
        squares,
        blocks,
        rules,
        balance_weight,
        state,
    )


@njit(_nrt=False)
def choose_greedy(params, state, options, n, board, data, squares, rules):
    return greedy_index(board, options, n, data, squares, rules, params[0], state)
