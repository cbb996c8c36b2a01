"""The compiled rules: boards as bit masks, legality, scoring, the deal, who knows which card.

A player's board is ``uint64[3, 4]``: layer OCC holds every built quarter, RED and GREEN the
quarters of red and green tiles (a fountain's quarters are in OCC only). Quarter q of square s is
bit ``(4 * s + q) % 64`` of word ``s // 16`` (sim.tangram.constants). A placement is one row of
the tile set's placement table; it is legal exactly when its 4 mask words miss OCC.

All bit arithmetic stays in uint64 (mixing signed and unsigned integers makes Numba use floats)
and never wraps: shifts only move bits down and masks are ANDed; bits are counted by LLVM's
``ctpop``.
"""

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

from sim.core import rng
from sim.core.jit import njit
from sim.tangram import constants as K
from sim.tangram import records as R
from sim.tangram.tileset import M_COLOUR

OCC = 0
RED = 1
GREEN = 2
N_LAYERS = 3

ZERO = np.int64(0)  # int64 constants for arguments: a literal 0 or -1 argument would compile
NONE = np.int64(-1)  # the callee once more for that literal
U0, U1, U2, U3, U4, U6, U12, U24 = (np.uint64(k) for k in (0, 1, 2, 3, 4, 6, 12, 24))
NIB_LOW = np.uint64(0x1111111111111111)  # bit 0 of every nibble (square)
C1 = np.uint64(0x0303030303030303)
C2 = np.uint64(0x000F000F000F000F)
C3 = np.uint64(0x000000FF000000FF)
C4 = np.uint64(0xFFFF)
ROW_MASK = np.uint64(0x7F)  # one row of the 49-bit full-square mask
ALL_SQUARES = np.uint64((1 << K.N_SQUARES) - 1)
WORD_SHIFT = np.array([0, 16, 32, 48], dtype=np.uint64)  # word w's squares in the 49-bit mask
ROW_SHIFT = np.array([7 * r for r in range(K.SIZE)], dtype=np.uint64)


def _longest_runs() -> np.ndarray:
    out = np.zeros(1 << K.SIZE, dtype=np.int64)
    for m in range(1 << K.SIZE):
        best = run = 0
        for c in range(K.SIZE):
            run = run + 1 if m >> c & 1 else 0
            best = max(best, run)
        out[m] = best
    return out


LONGEST_RUN = _longest_runs()  # row bits -> longest run of consecutive set bits


# --- bits ---------------------------------------------------------------------------------------
@intrinsic
def _ctpop(typingctx, x):
    """LLVM's population count of an integer's 64 bits (a signed one read as unsigned, as
    a caller from Python passes): one instruction where the CPU has one (the option values
    count contact and squares with it about 3 times an option)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, [context.cast(builder, args[0], x, types.uint64)])

    return types.int64(x), codegen


@intrinsic
def _cttz(typingctx, x):
    """LLVM's count of trailing zero bits of a nonzero uint64 (one instruction)."""
    if x != types.uint64:
        return None

    def codegen(context, builder, sig, args):
        fn = builder.module.declare_intrinsic("llvm.cttz", [ir.IntType(64), ir.IntType(1)])
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 1)])

    return types.int64(types.uint64), codegen


def _lowest_bit_interpreted(x):
    x = int(x)
    return np.int64((x & -x).bit_length() - 1)


@njit(inline="always")
def _lowest_bit_compiled(x):
    """Index of the lowest set bit of a nonzero uint64."""
    return _cttz(x)


lowest_bit = _lowest_bit_interpreted if numba.config.DISABLE_JIT else _lowest_bit_compiled


def _popcount_interpreted(x):
    return np.int64(int(x).bit_count())


@njit(inline="always")
def _popcount_compiled(x):
    """Number of set bits of a uint64."""
    return _ctpop(x)


popcount = _popcount_interpreted if numba.config.DISABLE_JIT else _popcount_compiled


@njit(inline="always")
def full_flags(x):
    """Bit 4k set where nibble k (square k of the word) has all 4 quarters."""
    return x & (x >> U1) & (x >> U2) & (x >> U3) & NIB_LOW


@njit(inline="always")
def any_flags(x):
    """Bit 4k set where nibble k has any quarter."""
    return (x | (x >> U1) | (x >> U2) | (x >> U3)) & NIB_LOW


@njit(inline="always")
def compress(f):
    """The 16 nibble flags at bits 0, 4, ..., 60 gathered into bits 0..15."""
    f = (f | (f >> U3)) & C1
    f = (f | (f >> U6)) & C2
    f = (f | (f >> U12)) & C3
    f = (f | (f >> U24)) & C4
    return f


# --- one board ----------------------------------------------------------------------------------
@njit(inline="always")
def fits(board, place_mask, p):
    """True if placement p covers no built quarter."""
    return (
        (board[OCC, 0] & place_mask[p, 0])
        | (board[OCC, 1] & place_mask[p, 1])
        | (board[OCC, 2] & place_mask[p, 2])
        | (board[OCC, 3] & place_mask[p, 3])
    ) == U0


@njit(inline="always")
def put(board, place_mask, place_meta, p):
    """Build placement p (tile in its colour, or a fountain)."""
    colour = place_meta[p, M_COLOUR]
    for w in range(K.N_WORDS):
        board[OCC, w] |= place_mask[p, w]
        if colour == K.RED:
            board[RED, w] |= place_mask[p, w]
        elif colour == K.GREEN:
            board[GREEN, w] |= place_mask[p, w]


@njit(_nrt=False)
def put_start(board, start_mask, b, colour):
    """An empty board with board b's printed start piece, on its red or green side."""
    layer = RED if colour == K.RED else GREEN
    for w in range(K.N_WORDS):
        board[OCC, w] = start_mask[b, w]
        board[RED, w] = U0
        board[GREEN, w] = U0
        board[layer, w] = start_mask[b, w]


@njit(inline="always")
def word_full(x):
    """The word's fully built squares as 16 bits."""
    return compress(full_flags(x))


@njit(_nrt=False)
def full_squares(board):
    """The fully built squares as a 49-bit mask (bit r * 7 + c)."""
    out = U0
    for w in range(K.N_WORDS):
        out |= word_full(board[OCC, w]) << WORD_SHIFT[w]
    return out


@njit(_nrt=False)
def largest_rectangle(full):
    """Squares in the largest axis-aligned rectangle of fully built squares (text 004: "the
    largest fully built rectangle"). For each band of rows, the columns built in all of them
    are ANDed; the band's best rectangle is its height times their longest run."""
    best = 0
    for top in range(K.SIZE):
        if (K.SIZE - top) * K.SIZE <= best:
            break
        m = ROW_MASK
        for bottom in range(top, K.SIZE):
            m &= (full >> ROW_SHIFT[bottom]) & ROW_MASK
            if m == U0:
                break
            area = (bottom - top + 1) * LONGEST_RUN[np.int64(m)]
            if area > best:
                best = area
    return best


@njit(inline="always")
def word_colours(occ, red, green):
    """(red, green) fully built squares of one word: a full square counts for a colour when it
    holds that colour and not the other (fountains add no colour)."""
    f = full_flags(occ)
    r = any_flags(red)
    g = any_flags(green)
    return popcount(f & r & ~g), popcount(f & g & ~r)


@njit(_nrt=False)
def colour_counts(board):
    """Squares fully built red and fully built green (text 004, ROUND END)."""
    red = 0
    green = 0
    for w in range(K.N_WORDS):
        r, g = word_colours(board[OCC, w], board[RED, w], board[GREEN, w])
        red += r
        green += g
    return red, green


@njit(_nrt=False)
def quarters_built(board):
    n = 0
    for w in range(K.N_WORDS):
        n += popcount(board[OCC, w])
    return n


@njit(inline="always")
def markers(red, green, rules):
    """The balance markers: the counts, stopped at the scale's last space."""
    cap = rules[K.RO_BALANCE_CAP]
    return min(red, cap), min(green, cap)


@njit(inline="always")
def balance_bonus(red, green, rules):
    """Bonus for the distance between the markers (printed: 0 -> 20, 1-2 -> 10, 3-4 -> 5,
    5+ -> 0)."""
    r, g = markers(red, green, rules)
    d = abs(r - g)
    if d > K.N_BALANCE_DISTANCES - 1:
        d = K.N_BALANCE_DISTANCES - 1
    return rules[K.RO_BALANCE_BONUS0 + d]


@njit(inline="always")
def planning_bonus(full, rules):
    return rules[K.RO_PLANNING_BONUS] if full == ALL_SQUARES else 0


@njit(inline="always")
def misses(occupancy, place_mask, p):
    """True if placement p misses the board's 4 occupancy words (read once a scan into
    ``occupancy``: held in registers, since the scan's stores may alias the board as far as
    the compiler knows)."""
    o0, o1, o2, o3 = occupancy
    return (
        (o0 & place_mask[p, 0])
        | (o1 & place_mask[p, 1])
        | (o2 & place_mask[p, 2])
        | (o3 & place_mask[p, 3])
    ) == U0


@njit(inline="always")
def add_if_legal(occupancy, place_mask, p, tile, options, n):
    """Row n of ``options`` becomes (p, tile) and the count grows if placement p is legal
    (:func:`misses`)."""
    if misses(occupancy, place_mask, p):
        options[n, 0] = p
        options[n, 1] = tile
        n += 1
    return n


@njit(_nrt=False)
def legal_placements(board, place_mask, tile_first, tile, options, n):
    """Append the legal placements of ``tile`` (n_tiles: the fountain) to ``options`` (column
    0: placement, column 1: tile) from row n; return the new row count."""
    occupancy = (board[OCC, 0], board[OCC, 1], board[OCC, 2], board[OCC, 3])
    for p in range(tile_first[tile], tile_first[tile + 1]):
        n = add_if_legal(occupancy, place_mask, p, tile, options, n)
    return n


@njit(_nrt=False)
def square_parts(place_mask, footprint, parts):
    """Into ``footprint[p]``: the squares placement p covers a quarter of (49-bit mask, bit
    r * 7 + c; a placement over a fully built square cannot be legal); into ``parts[p, 0]``
    those it covers whole (all 4 quarters), into ``parts[p, 1]`` those it covers part of. A
    legal placement makes its whole squares fully built and can complete no other square
    but a partly built one of ``parts[p, 1]`` (greedy's option values: basic.option_prefix)."""
    for p in range(place_mask.shape[0]):
        whole = U0
        part = U0
        for w in range(K.N_WORDS):
            m = place_mask[p, w]
            f = full_flags(m)
            whole |= compress(f) << WORD_SHIFT[w]
            part |= compress(any_flags(m) & ~f) << WORD_SHIFT[w]
        footprint[p] = whole | part
        parts[p, 0] = whole
        parts[p, 1] = part


@njit(_nrt=False)
def legal_placements_on(board, full, place_mask, footprint, tile_first, tile, options, n):
    """:func:`legal_placements` (the same rows in the same order), first dropping the
    placements over a fully built square (``full``: the board's :func:`full_squares`) by one
    word of ``footprint`` (:func:`square_parts`): its 8 bytes a placement are a quarter of
    the mask's 32, so late in a game, when most placements meet a full square, the scan
    reads far less memory (the planner's rollouts scan the placements of every card)."""
    occupancy = (board[OCC, 0], board[OCC, 1], board[OCC, 2], board[OCC, 3])
    for p in range(tile_first[tile], tile_first[tile + 1]):
        if footprint[p] & full == U0:
            n = add_if_legal(occupancy, place_mask, p, tile, options, n)
    return n


BLOCK_SCRATCH = 64  # the last words of placement_blocks' array: legal_by_blocks' union


@njit
def placement_blocks(place_mask, tile_first, planner):
    """One uint64 array (one array: it travels in the planner's scratch through every call of
    the game loop): words 0..n_types, ``words[t]``, the running count of set words, tile t's
    sets being ``nw = words[t + 1] - words[t]`` words each; from word n_types + 1 (``W0``) on,
    for each tile (the fountain included) and each square s, bit sets over the tile's
    placements (bit i: placement ``tile_first[t] + i``): those covering any quarter of s at
    ``W0 + words[t] * N_SQUARES + s * nw`` (all of a tile's together, so a board's fully built
    squares read a few kilobytes in order), then, past every tile's, those covering quarter q
    of s at ``W0 + words[-1] * N_SQUARES + (words[t] * N_SQUARES + s * nw) * 4 + q * nw``; last,
    BLOCK_SCRATCH words of scratch. Without a planner in the batch (``planner`` False) no set is
    built (0.6 ms a batch)."""
    n_types = tile_first.shape[0] - 1
    top = 0
    for t in range(n_types):
        top = max(top, (tile_first[t + 1] - tile_first[t] + 63) // 64)
    if top > BLOCK_SCRATCH:
        raise ValueError("a tile has more placements than the bit sets' scratch holds")
    w0 = n_types + 1
    if not planner:
        return np.zeros(w0 + BLOCK_SCRATCH, dtype=np.uint64)
    words = np.zeros(n_types + 1, dtype=np.int64)
    for t in range(n_types):
        words[t + 1] = words[t] + (tile_first[t + 1] - tile_first[t] + 63) // 64
    quarters = words[n_types] * K.N_SQUARES
    out = np.zeros(w0 + quarters * 5 + BLOCK_SCRATCH, dtype=np.uint64)
    for t in range(n_types + 1):
        out[t] = np.uint64(words[t])
    for t in range(n_types):
        nw = words[t + 1] - words[t]
        for p in range(tile_first[t], tile_first[t + 1]):
            i = p - tile_first[t]
            bit = U1 << np.uint64(i % 64)
            for w in range(K.N_WORDS):
                m = place_mask[p, w]
                touched = compress(any_flags(m))  # only the squares it covers
                while touched != U0:
                    k = lowest_bit(touched)
                    touched &= touched - U1
                    nibble = (m >> np.uint64(4 * k)) & np.uint64(15)
                    row = words[t] * K.N_SQUARES + (16 * w + k) * nw
                    out[w0 + row + i // 64] |= bit
                    while nibble != U0:
                        q = lowest_bit(nibble)
                        nibble &= nibble - U1
                        out[w0 + quarters + row * 4 + q * nw + i // 64] |= bit
    return out


@njit(inline="always")
def legal_by_blocks(board, full, partial, tile, tile_first, blocks, options, n):
    """:func:`legal_placements` (the same rows in the same order) without visiting the
    placements: the tile's placements blocked by the board are the union of the sets of
    :func:`placement_blocks` for each fully built square (any quarter) and each built quarter
    of a partly built square (``full``, ``partial``: 49-bit square masks); the rest are
    legal, listed by their bits (a few dozen set unions instead of a test of each of the
    tile's 100-400 placements; the planner's rollouts)."""
    w0 = tile_first.shape[0]
    acc = blocks.shape[0] - BLOCK_SCRATCH
    first = tile_first[tile]
    count = tile_first[tile + 1] - first
    wt = np.int64(blocks[tile])
    nw = np.int64(blocks[tile + 1]) - wt
    base = w0 + wt * K.N_SQUARES
    quarters = w0 + np.int64(blocks[w0 - 1]) * K.N_SQUARES
    for w in range(nw):
        blocks[acc + w] = U0
    f = full
    while f != U0:
        row = base + lowest_bit(f) * nw
        f &= f - U1
        for w in range(nw):
            blocks[acc + w] |= blocks[row + w]
    f = partial
    while f != U0:
        s = lowest_bit(f)
        f &= f - U1
        nibble = (board[OCC, s >> 4] >> np.uint64(4 * (s & 15))) & np.uint64(15)
        while nibble != U0:
            row = quarters + (wt * K.N_SQUARES + s * nw) * 4 + lowest_bit(nibble) * nw
            nibble &= nibble - U1
            for w in range(nw):
                blocks[acc + w] |= blocks[row + w]
    for w in range(nw):
        legal = ~blocks[acc + w]
        if w == nw - 1 and count % 64 != 0:
            legal &= (U1 << np.uint64(count % 64)) - U1
        while legal != U0:
            options[n, 0] = first + 64 * w + lowest_bit(legal)
            legal &= legal - U1
            n += 1
    return n


# --- the table ----------------------------------------------------------------------------------
@njit(_nrt=False)
def next_start(totals, n_players, previous):
    """Text 004: the start marker goes to the highest score; among tied leaders to the next one
    clockwise from the previous start player, who comes last even when tied."""
    best = totals[0]
    for s in range(1, n_players):
        if totals[s] > best:
            best = totals[s]
    for k in range(1, n_players + 1):
        s = (previous + k) % n_players
        if totals[s] == best:
            return s
    return previous


@njit(_nrt=False)
def rank_players(totals, n_players, ranks, wins):
    """Text 004: "The player with the highest score wins the game. If players tie for first
    place, they share the victory." Rank 1 is best; tied players share the better rank.
    Returns the number of winners."""
    best = totals[0]
    for s in range(1, n_players):
        best = max(best, totals[s])
    winners = 0
    for s in range(n_players):
        above = 0
        for t in range(n_players):
            if totals[t] > totals[s]:
                above += 1
        ranks[s] = above + 1
        wins[s] = 1 if totals[s] == best else 0
        winners += wins[s]
    return winners


@njit(_nrt=False)
def round_holders(n_players, start, first, holders):
    """Who sees each of the round's 4 cards before it is played (bit s: seat s), with the cards
    in play order (text 004, DEAL CARDS and PLAY CARDS):

    - solo: a row of 4, the first 2 face-up, the last 2 face-down;
    - 2: the face-up middle card, the face-down middle card, the start player's, the other's;
    - 3: the face-up middle card, then the start player's and clockwise;
    - 4: face-up, the start player's, the next player's, the card the last two share;
    - 5: face-up, the start player's, the card the next two share, the last two's.

    Seats are numbered clockwise ("to the left" = the next seat). Returns nothing; fills
    ``holders[first:first + 4]``."""
    everyone = (1 << n_players) - 1
    holders[first] = everyone  # the face-up middle card (solo: the first face-up card)
    if n_players == 1:
        holders[first + 1] = 1
        holders[first + 2] = 0
        holders[first + 3] = 0
    elif n_players == 2:
        holders[first + 1] = 0
        holders[first + 2] = 1 << start
        holders[first + 3] = 1 << ((start + 1) % 2)
    elif n_players == 3:
        for k in range(3):
            holders[first + 1 + k] = 1 << ((start + k) % 3)
    elif n_players == 4:
        holders[first + 1] = 1 << start
        holders[first + 2] = 1 << ((start + 1) % 4)
        holders[first + 3] = (1 << ((start + 2) % 4)) | (1 << ((start + 3) % 4))
    else:
        holders[first + 1] = 1 << start
        holders[first + 2] = (1 << ((start + 1) % 5)) | (1 << ((start + 2) % 5))
        holders[first + 3] = (1 << ((start + 3) % 5)) | (1 << ((start + 4) % 5))


@njit(_nrt=False)
def seat_knowledge(seat, turn, revealed, deck, holders, known, unseen):
    """What ``seat`` knows of the cards still to come after deck position ``turn``: ``known[p]``
    is the tile at position p if the seat saw it (its own or shared card, a face-up card, a card
    already revealed: ``revealed`` is the last revealed position), else -1; ``unseen`` lists
    the tiles still to come that the seat has not seen. Returns their count. The multiset of
    tiles still to come is public (every card is played once); only their order is hidden."""
    n = 0
    bit = 1 << seat
    for p in range(K.N_CARDS):
        if p <= revealed or (p > turn and (holders[p] & bit) != 0):
            known[p] = deck[p]
        else:
            known[p] = -1
            if p > turn and deck[p] >= 0:  # a banned card's empty last position: no tile
                unseen[n] = deck[p]
                n += 1
    # The seat may not learn the hidden order from the list: sort it.
    for i in range(1, n):
        v = unseen[i]
        j = i - 1
        while j >= 0 and unseen[j] > v:
            unseen[j + 1] = unseen[j]
            j -= 1
        unseen[j + 1] = v
    return n


@njit(_nrt=False)
def deal(state, deck, board_of, n_players, rules):
    """Everything chance decides, drawn from the deal stream in a fixed order: the deck (the
    play order of the 23 cards; a banned one taken out), the boards, the first start player.
    Returns the latter."""
    for p in range(K.N_CARDS):
        deck[p] = p
    rng.shuffle(state, deck, K.N_CARDS)
    ban = rules[K.RO_BAN_TILE]
    if ban >= 0:
        # Reading X3: the banned card is taken out of the shuffled deck before the deal, so the
        # other cards keep their order, the regular rounds keep 4 cards and the final round
        # plays the 2 left; its last position is empty (-1). The same draws are made either way.
        gone = False
        for p in range(K.N_CARDS - 1):
            gone = gone or deck[p] == ban
            if gone:
                deck[p] = deck[p + 1]
        deck[K.N_CARDS - 1] = K.NO_TILE
    for b in range(K.N_BOARDS):
        board_of[b] = b
    rng.shuffle(state, board_of, K.N_BOARDS)  # drawn under every reading: streams stay aligned
    if rules[K.RO_BOARDS] == K.BOARDS_BY_SEAT:
        for b in range(K.N_BOARDS):
            board_of[b] = b
    first = rng.randint(state, n_players)
    if rules[K.RO_FIRST_START] == K.FIRST_START_SEAT0:
        first = 0
    return first


# --- events -------------------------------------------------------------------------------------
# Inlined: its call sites pass literal constants, and a separately compiled function would be
# compiled once per combination of literal arguments (10 times).
@njit(inline="always")
def log_event(
    events,
    log,
    rnd,
    turn,
    player,
    kind,
    tile,
    orientation,
    row,
    col,
    colour,
    points,
    total,
    known,
):
    """Write one event row if events are kept: ``log`` holds the game's first row and its count
    of events so far (incremented)."""
    if events.shape[0] == 0:
        return
    i = log[0] + log[1]
    log[1] += 1
    events[i, R.E_ROUND] = rnd
    events[i, R.E_TURN] = turn
    events[i, R.E_PLAYER] = player
    events[i, R.E_KIND] = kind
    events[i, R.E_TILE] = tile
    events[i, R.E_ORIENTATION] = orientation
    events[i, R.E_ROW] = row
    events[i, R.E_COL] = col
    events[i, R.E_COLOUR] = colour
    events[i, R.E_POINTS] = points
    events[i, R.E_TOTAL] = total
    events[i, R.E_KNOWN] = known
