"""The basic strategies: ``random`` (uniform over legal options) and ``greedy`` (best immediate
gain in final score).

Greedy scores a city as if the game ended now (``sim.scoring.score_city``, money included)
after each candidate choice and takes the best; ties are broken by the strategy's own random
stream. It looks only at its own city, hand and cornerstones.
"""

import numpy as np

from sim import constants as K
from sim import engine as E
from sim import rng
from sim.jit import njit
from sim.scoring import score_city
from strategies.registry import GREEDY_MONEY_WEIGHT

NO_VALUE = -1e18


@njit
def choose_random(rng_state, n_options):
    return rng.randint(rng_state, n_options)


@njit
def city_value(city, money, params, tiles, effects, goods_tier, rules, score):
    """Final score of the city if the game ended now, money VP scaled by money_weight."""
    score_city(city, money, tiles, effects, goods_tier, rules, score)
    return score[K.S_TOTAL] + (params[GREEDY_MONEY_WEIGHT] - 1.0) * score[K.S_MONEY]


@njit
def placed_value(city, tile, cell, money_left, params, tiles, effects, goods_tier, rules, score):
    """Value of the city with ``tile`` on ``cell`` (its one-off coins included)."""
    old = city[cell]
    city[cell] = tile
    money = money_left + tiles[tile, K.C_COINS_ON_PLACE]
    value = city_value(city, money, params, tiles, effects, goods_tier, rules, score)
    city[cell] = old
    return value


@njit
def best_placement_value(
    seat,
    tile,
    city,
    money,
    goods_of,
    n_players,
    params,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
    score,
):
    """Best value of placing ``tile`` anywhere legal at its cheapest requirement option, or
    NO_VALUE when it cannot be placed."""
    req_costs = np.empty(K.MAX_REQ_OPTIONS, dtype=np.int64)
    summary = np.empty(E.N_SUMMARY, dtype=np.int64)
    E.summarize_city(city, tiles, summary)
    routes = E.trade_routes(city, tiles)
    mask = E.tile_placements(
        seat,
        tile,
        city,
        summary,
        goods_of,
        routes,
        n_players,
        money,
        tiles,
        req,
        goods_tier,
        req_costs,
    )
    if mask == 0:
        return NO_VALUE
    cost = -1
    for o in range(tiles[tile, K.C_N_REQ_OPTIONS]):
        if req_costs[o] >= 0 and (cost < 0 or req_costs[o] < cost):
            cost = req_costs[o]
    best = NO_VALUE
    for cell in range(K.N_CELLS):
        if (mask >> cell) & 1:
            value = placed_value(
                city, tile, cell, money - cost, params, tiles, effects, goods_tier, rules, score
            )
            best = max(best, value)
    return best


@njit
def sacrifice_value(city, money, disaster, params, tiles, effects, goods_tier, rules, score):
    """Value after sacrificing, each step removing the tile whose loss costs least."""
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
def option_value(
    decision,
    k,
    options,
    seat,
    gstate,
    pstate,
    cells,
    goods_of,
    params,
    city,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
    score,
):
    """Greedy's value of option k (``city`` is a scratch copy of the seat's city)."""
    money = pstate[seat, E.PS_MONEY]
    n_players = gstate[E.GS_N_PLAYERS]
    tile = options[k, E.OPT_TILE]
    if decision == E.D_SELECT:
        if tiles[tile, K.C_DISASTER] != K.DIS_NONE:
            return city_value(city, money, params, tiles, effects, goods_tier, rules, score)
        sell = city_value(
            city, money + E.SELL_COINS, params, tiles, effects, goods_tier, rules, score
        )
        place = best_placement_value(
            seat,
            tile,
            city,
            money,
            goods_of,
            n_players,
            params,
            tiles,
            req,
            effects,
            goods_tier,
            rules,
            score,
        )
        return max(sell, place)
    if decision == E.D_DRAFT or decision == E.D_TAKE_CS:
        return best_placement_value(
            seat,
            tile,
            city,
            money,
            goods_of,
            n_players,
            params,
            tiles,
            req,
            effects,
            goods_tier,
            rules,
            score,
        )
    if decision == E.D_ACTION:
        if options[k, E.OPT_KIND] == E.A_SELL:
            return city_value(
                city, money + E.SELL_COINS, params, tiles, effects, goods_tier, rules, score
            )
        return placed_value(
            city,
            tile,
            options[k, E.OPT_CELL],
            money - options[k, E.OPT_COST],
            params,
            tiles,
            effects,
            goods_tier,
            rules,
            score,
        )
    if decision == E.D_BUY:
        return -options[k, E.OPT_COST]
    if decision == E.D_DISASTER:
        if options[k, E.OPT_KIND] == E.DR_PAY:
            return city_value(
                city,
                money - options[k, E.OPT_COST],
                params,
                tiles,
                effects,
                goods_tier,
                rules,
                score,
            )
        return sacrifice_value(
            city, money, gstate[E.GS_RESOLVING], params, tiles, effects, goods_tier, rules, score
        )
    if decision == E.D_SACRIFICE:
        cell = options[k, E.OPT_CELL]
        old = city[cell]
        city[cell] = K.EMPTY
        value = city_value(city, money, params, tiles, effects, goods_tier, rules, score)
        city[cell] = old
        return value
    # D_SWAP_CS: a random cornerstone is no immediate gain, keep them (option 0).
    return 1.0 if k == 0 else 0.0


@njit
def choose_greedy(
    params,
    rng_state,
    decision,
    options,
    n_options,
    seat,
    gstate,
    pstate,
    cells,
    goods_of,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
):
    city = cells[seat].copy()
    score = np.empty(K.N_SCORE, dtype=np.int32)
    best = NO_VALUE
    pick = 0
    n_best = 0
    for k in range(n_options):
        value = option_value(
            decision,
            k,
            options,
            seat,
            gstate,
            pstate,
            cells,
            goods_of,
            params,
            city,
            tiles,
            req,
            effects,
            goods_tier,
            rules,
            score,
        )
        if value > best + 1e-9:
            best = value
            pick = k
            n_best = 1
        elif value > best - 1e-9:
            # Uniform among ties: keep the k-th tie with probability 1/k.
            n_best += 1
            if rng.randint(rng_state, n_best) == 0:
                pick = k
    return pick
