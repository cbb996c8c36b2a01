"""The basic strategies: ``random`` (uniform over legal options) and ``greedy`` (best immediate
gain in final score).

Greedy scores a city as if the game ended now (``sim.scoring.score_city``, money included)
after each candidate choice and takes the best; ties are broken by the strategy's own random
stream. It looks only at its own city, hand and cornerstones. For speed the city is scored
once per decision and each candidate adds its exact score change
(``strategies.evaluate.score_delta``, tested equal to the difference of two ``score_city``).
Both are kept in the seat's memo, keyed on the city alone (``greedy_context``): the action
reuses its selection's context and changes, and so does every later decision of the seat
while its city stays the same (selling, paying, a new turn).
"""

import numpy as np

from sim.core import rng
from sim.core.jit import njit
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom.grid import lowest_cell
from sim.neom.scoring import money_vp, money_vp_change, score_city
from strategies.neom.evaluate import (
    ANY_STATE,
    CX_MONEY,
    CX_SCORE,
    MEMO_TRIED,
    context_placements,
    context_req_costs,
    kept_score_context,
    memo_city,
    memo_context,
    memo_holds,
    memo_values,
    pending_disaster,
    pick_best,
    score_delta,
    set_context_money,
    subtract_disaster_losses,
)
from strategies.neom.registry import GREEDY_ID, GREEDY_MONEY_WEIGHT

NO_VALUE = -1e18
NO_CHANGE = np.int64(-(1 << 62))


@njit(_nrt=False)
def greedy_context(memo, params, city, summary, money, tiles, effects, goods_tier, rules):
    """Brings the score context of ``city`` with ``money``, kept in the seat's memo
    (``memo_context``), up to date (returns nothing: a view handed back out of code
    compiled without reference counts would be released once too often).

    Greedy's score changes without coins depend on the city alone (the batch's tables and
    rules are fixed), so the memo is keyed on the city only (``memo_holds``): it outlives
    the turn, and a seat that sold or paid keeps its context and every square it valued, with
    only the money brought up to date. ``summary``: the game's summary of ``city``, copied
    (``kept_score_context``)."""
    ctx = memo_context(memo)
    strategy_id = np.int64(GREEDY_ID)  # not a literal: one memo_holds for every strategy
    if not memo_holds(memo, strategy_id, params, city, ANY_STATE, ANY_STATE, tiles.shape[0]):
        kept_score_context(city, summary, money, tiles, effects, goods_tier, rules, ctx)
    else:
        set_context_money(ctx, money)


# memo_change, score_delta and the value helpers are inlined: they run for every
# square greedy tries, and a compiled call passing their arrays costs more than their work.
@njit(inline="always")
def memo_change(memo, tile, cell, city, tiles, effects, goods_tier, rules, ctx):
    """``score_delta`` of ``tile`` on ``cell`` without coins, for the memo's city (``ctx``
    from ``greedy_context``), computed once. Greedy keeps one integer per (tile, square), packed
    at the start of the memo's parts: the squares of a tile share cache lines."""
    stored = MEMO_TRIED + tiles.shape[0] + tile * K.N_CELLS + cell
    if not (memo[MEMO_TRIED + tile] >> cell) & 1:
        memo[stored] = score_delta(tile, cell, 0, city, tiles, effects, goods_tier, rules, ctx)
        memo[MEMO_TRIED + tile] |= 1 << cell
    return memo[stored]


@njit(_nrt=False)
def choose_random(rng_state, n_options):
    return rng.randint(rng_state, n_options)


@njit
def city_value(city, money, params, tiles, effects, goods_tier, rules, score):
    """Final score of the city if the game ended now, money VP scaled by money_weight."""
    score_city(city, money, tiles, effects, goods_tier, rules, score)
    return score[K.S_TOTAL] + (params[GREEDY_MONEY_WEIGHT] - 1.0) * score[K.S_MONEY]


@njit(inline="always")
def value_after(params, delta, coins, ctx):
    """``city_value`` after a move that changes the score of the decision's city (``ctx``) by
    ``delta``, money included, and its money by ``coins``."""
    after = money_vp(ctx[CX_MONEY] + coins)
    return (ctx[CX_SCORE] + delta) + (params[GREEDY_MONEY_WEIGHT] - 1.0) * after


@njit(inline="always")
def coins_value(params, coins, ctx):
    """Value of the city unchanged with ``coins`` more (negative: paid)."""
    return value_after(params, money_vp_change(ctx[CX_MONEY], coins), coins, ctx)


@njit(_nrt=False)
def best_placement_value(
    params, seat, tile, city, money, goods_of, n_players, tiles, req, effects, goods_tier, rules,
    ctx, memo,
):  # fmt: skip
    """Best value of placing ``tile`` anywhere legal at its cheapest requirement option, or
    NO_VALUE when it cannot be placed (``ctx``: the city's context, from ``greedy_context``)."""
    mask = context_placements(
        seat, tile, city, ctx, goods_of, n_players, money, tiles, req, goods_tier
    )
    req_costs = context_req_costs(ctx)  # the costs context_placements found
    if mask == 0:
        return NO_VALUE
    cost = -1
    for o in range(tiles[tile, K.C_N_REQ_OPTIONS]):
        if req_costs[o] >= 0 and (cost < 0 or req_costs[o] < cost):
            cost = req_costs[o]
    # A value is the score change plus the same coins for every square (value_after, a float
    # of an integer plus a constant, never smaller for a larger change): the best square's
    # value is that of the largest change.
    best = NO_CHANGE  # below any change: the mask holds a square
    left = mask
    while left:
        cell = lowest_cell(left)
        left &= left - 1
        change = memo_change(memo, tile, cell, city, tiles, effects, goods_tier, rules, ctx)
        best = max(best, change)
    coins = tiles[tile, K.C_COINS_ON_PLACE] - cost
    return value_after(params, best + money_vp_change(ctx[CX_MONEY], coins), coins, ctx)


@njit
def sacrifice_value(city, money, disaster, params, tiles, effects, goods_tier, rules, score):
    """Value after sacrificing, each step removing the tile whose loss costs least (rare:
    scored in full)."""
    options = np.empty((K.N_CELLS, E.N_OPT_COLS), dtype=np.int64)
    for step in range(E.sacrifice_steps(disaster)):
        n = E.sacrifice_options(city, tiles, disaster, step, options)
        best_cell = -1
        best = NO_VALUE
        for k in range(n):
            cell = options[k, E.OPT_CELL]
            old = city[cell]
            city[cell] = K.EMPTY
            value = city_value(city, money, params, tiles, effects, goods_tier, rules, score)
            city[cell] = old
            if value > best:
                best = value
                best_cell = cell
        if best_cell >= 0:
            city[best_cell] = K.EMPTY
    return city_value(city, money, params, tiles, effects, goods_tier, rules, score)


@njit
def disaster_values(
    params, options, n_options, city, money, disaster, tiles, effects, goods_tier, rules, ctx,
    values,
):  # fmt: skip
    """Greedy's value of paying for or sacrificing to a disaster (rare: scratch allocated
    here, out of the greedy decision compiled without reference counts)."""
    score = np.empty(K.N_SCORE, dtype=np.int32)
    for k in range(n_options):
        if options[k, E.OPT_KIND] == E.DR_PAY:
            values[k] = coins_value(params, -options[k, E.OPT_COST], ctx)
        else:
            values[k] = sacrifice_value(
                city.copy(), money, disaster, params, tiles, effects, goods_tier, rules, score
            )


# greedy_values and choose_greedy are inlined (one call site each): the call layers with their
# sixteen arrays cost about 5% of a greedy game.
@njit(inline="always")
def greedy_values(
    params,
    decision,
    options,
    n_options,
    seat,
    gstate,
    pstate,
    goods_of,
    city,
    summary,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
    values,
    memo,
):
    """Greedy's value of each option into ``values`` (``city``: the seat's city, only read,
    ``summary`` the game's summary of it; ``memo``: the seat's, see memo_context)."""
    money = pstate[seat, E.PS_MONEY]
    if decision == E.D_BUY:
        for k in range(n_options):
            values[k] = -options[k, E.OPT_COST]
        return
    if decision == E.D_SWAP_CS:
        # A random cornerstone is no immediate gain, keep them (option 0).
        for k in range(n_options):
            values[k] = 1.0 if k == 0 else 0.0
        return
    greedy_context(memo, params, city, summary, money, tiles, effects, goods_tier, rules)
    ctx = memo_context(memo)
    city = memo_city(memo)  # moves are tried on the memo's copy: the game's city is never written
    n_players = gstate[E.GS_N_PLAYERS]
    if decision == E.D_SELECT or decision == E.D_DRAFT or decision == E.D_TAKE_CS:
        # A selected tile is worth the better of placing and selling it (the Disaster: the
        # coins as they are); a cornerstone, placing it.
        selecting = decision == E.D_SELECT
        sell = coins_value(params, E.SELL_COINS, ctx)
        for k in range(n_options):
            tile = options[k, E.OPT_TILE]
            if selecting and tiles[tile, K.C_DISASTER] != K.DIS_NONE:
                values[k] = coins_value(params, 0, ctx)
                continue
            place = best_placement_value(
                params, seat, tile, city, money, goods_of, n_players, tiles, req, effects,
                goods_tier, rules, ctx, memo,
            )  # fmt: skip
            values[k] = max(sell, place) if selecting else place
    elif decision == E.D_ACTION:
        # The requirement options of one tile on one square differ only in cost: their score
        # change without money is computed once.
        last_tile = -1
        last_cell = -1
        change = 0
        for k in range(n_options):
            if options[k, E.OPT_KIND] == E.A_SELL:
                values[k] = coins_value(params, E.SELL_COINS, ctx)
                continue
            tile = options[k, E.OPT_TILE]
            cell = options[k, E.OPT_CELL]
            if tile != last_tile or cell != last_cell:
                change = memo_change(memo, tile, cell, city, tiles, effects, goods_tier, rules, ctx)
                last_tile = tile
                last_cell = cell
            coins = tiles[tile, K.C_COINS_ON_PLACE] - options[k, E.OPT_COST]
            money_change = money_vp_change(ctx[CX_MONEY], coins)
            values[k] = value_after(params, change + money_change, coins, ctx)
    elif decision == E.D_DISASTER:
        disaster_values(
            params, options, n_options, city, money, gstate[E.GS_RESOLVING], tiles, effects,
            goods_tier, rules, ctx, values,
        )  # fmt: skip
    else:  # D_SACRIFICE
        for k in range(n_options):
            delta = score_delta(
                K.EMPTY, options[k, E.OPT_CELL], 0, city, tiles, effects, goods_tier, rules, ctx
            )
            values[k] = value_after(params, delta, 0, ctx)


@njit(inline="always")
def choose_greedy(params, rng_state, decision, n_options, seat, game, memo):
    values = memo_values(memo, n_options)
    greedy_values(
        params,
        decision,
        game.options,
        n_options,
        seat,
        game.gstate,
        game.pstate,
        game.goods_of,
        game.cells[seat],
        game.summaries[seat],
        game.tiles,
        game.req,
        game.effects,
        game.goods_tier,
        game.rules,
        values,
        memo,
    )
    if decision == E.D_ACTION:
        # A disaster known to strike at the end of the turn (a Disaster another seat selected,
        # revealed before the actions; the solo pack; the random-disasters turn): each action
        # is valued with what it will cost the city after it (rare: only then computed).
        city = game.cells[seat]
        disaster = pending_disaster(seat, city, game)
        if disaster != K.DIS_NONE:
            subtract_disaster_losses(
                1.0, game.options, n_options, city, game.pstate[seat, E.PS_MONEY], disaster,
                game.tiles, game.effects, values,
            )  # fmt: skip
    return pick_best(values, n_options, rng_state)
