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

Each option is evaluated incrementally: only the words the placement touches are recomputed,
and the rectangle and colours only when a square becomes fully built.
"""

from sim.core import rng
from sim.core.jit import njit
from sim.tangram import constants as K
from sim.tangram import engine as E
from sim.tangram.tileset import M_COLOUR, M_EDGES

K_VALUE = 0
K_BUILD = 1
K_BALANCE = 2
K_FULL = 3
K_CONTACT = 4
N_KEY = 5


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
def option_key(board, p, place_mask, place_meta, place_near, rules, balance_weight, before):
    """(value, builds, balance bonus, full squares, contact) after placement p (p < 0:
    nothing placed); ``before``: the board's (full squares, value, red, green, full count)."""
    full, value, red, green, n_full = before
    if p < 0:
        return value, 0, E.balance_bonus(red, green, rules), n_full, -1
    colour = place_meta[p, M_COLOUR]
    new_full = full
    d_red = 0
    d_green = 0
    contact = place_meta[p, M_EDGES]
    for w in range(4):
        m = place_mask[p, w]
        occ = board[E.OCC, w]
        contact += E.popcount(place_near[p, w] & occ)
        if m == E.U0:
            continue
        before = E.word_full(occ)
        after = E.word_full(occ | m)
        if after != before:
            new_full |= after << E.WORD_SHIFT[w]
            r = board[E.RED, w]
            g = board[E.GREEN, w]
            r0, g0 = E.word_colours(occ, r, g)
            if colour == K.RED:
                r = r | m
            elif colour == K.GREEN:
                g = g | m
            r1, g1 = E.word_colours(occ | m, r, g)
            d_red += r1 - r0
            d_green += g1 - g0
    if new_full == full:
        return value, 1, E.balance_bonus(red, green, rules), n_full, contact
    bonus = E.balance_bonus(red + d_red, green + d_green, rules)
    new_value = (
        E.largest_rectangle(new_full) + balance_weight * bonus + E.planning_bonus(new_full, rules)
    )
    return new_value, 1, bonus, E.popcount(new_full), contact


@njit(_nrt=False)
def greedy_keys(board, options, n, data, rules, balance_weight, keys):
    """Every option's key into ``keys[:n]``."""
    place_mask, place_meta, place_near, _, _ = data
    full, value, red, green = board_value(board, rules, balance_weight)
    before = (full, value, red, green, E.popcount(full))
    for i in range(n):
        v, u, b, f, c = option_key(
            board, options[i, 0], place_mask, place_meta, place_near, rules, balance_weight, before
        )
        keys[i, K_VALUE] = v
        keys[i, K_BUILD] = u
        keys[i, K_BALANCE] = b
        keys[i, K_FULL] = f
        keys[i, K_CONTACT] = c


@njit(inline="always")
def compare(keys, i, j):
    """1 if option i's key beats option j's, 0 if equal, -1 if worse (lexicographic)."""
    for f in range(N_KEY):
        if keys[i, f] != keys[j, f]:
            return 1 if keys[i, f] > keys[j, f] else -1
    return 0


@njit(_nrt=False)
def pick_best(keys, n, state):
    """The option with the best key among ``keys[:n]``, ties at random from ``state``."""
    best = 0
    ties = 1
    for i in range(1, n):
        k = compare(keys, i, best)
        if k > 0:
            best = i
            ties = 1
        elif k == 0:
            ties += 1
            if rng.randint(state, ties) == 0:
                best = i
    return best


@njit(_nrt=False)
def greedy_index(board, options, n, data, rules, balance_weight, state, keys):
    """Greedy's option among ``options[:n]`` (``keys``: float64[>= n, N_KEY] scratch)."""
    greedy_keys(board, options, n, data, rules, balance_weight, keys)
    return pick_best(keys, n, state)


@njit(_nrt=False)
def choose_greedy(params, state, options, n, board, data, rules, keys):
    return greedy_index(board, options, n, data, rules, params[0], state, keys)
