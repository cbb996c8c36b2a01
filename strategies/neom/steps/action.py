"""A seat's action (``strategies.neom.steps``), compiled on its own and called by the loop at
its address (``game.step_fns``) once a seat acts with a tile: its options listed, the seat's
decision, the requirements paid (goods bought), the tile placed or sold and what its placement
sets off.
"""

import numpy as np

from sim.core.jit import cfunc, njit
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom import records as R
from strategies.neom.play import decide, forced_option, list_actions, log
from strategies.neom.pointer import STEP


@njit(inline="always")
def pay_requirements(seat, tile, option, game):
    """Pay the coin cost of requirement option ``option`` to the supply, then buy each missing
    good from a seller the player picks (sellers are paid in pending coins). Returns the coin
    cost paid to the supply."""
    gstate = game.gstate
    pstate = game.pstate
    goods_of = game.goods_of
    goods_tier = game.goods_tier
    options = game.options
    stats = game.stats
    n_players = gstate[E.GS_N_PLAYERS]
    cost = game.req[tile, option, K.R_COST]
    pstate[seat, E.PS_MONEY] -= cost
    missing = game.req[tile, option, K.R_GOODS] & ~goods_of[seat]
    routes = E.trade_routes(game.cells[seat], game.tiles)
    for good in range(goods_tier.shape[0]):
        if not (missing >> good) & 1:
            continue
        missing &= ~(1 << good)
        rest = E.purchase_cost(seat, missing, goods_of, n_players, goods_tier, routes)
        money = pstate[seat, E.PS_MONEY]
        n = E.buy_options(seat, good, rest, money, goods_of, routes, n_players, goods_tier, options)
        k = decide(seat, E.D_BUY, n, game)
        seller = options[k, E.OPT_SEAT]
        price = options[k, E.OPT_COST]
        pstate[seat, E.PS_MONEY] -= price
        pstate[seller, E.PS_PENDING] += price
        stats[seat, R.P_COINS_BUYING] += price
        stats[seller, R.P_COINS_SELLING] += price
        log(game, seat, R.EV_BUY, tile, -1, -price, seller, good)
        log(game, seller, R.EV_GOOD_SOLD, tile, -1, price, seat, good)
    return cost


@njit(inline="always")
def placement_effects(seat, tile, game):
    """Effects that act once when their tile is placed: take a cornerstone from the draft's
    discard pile; in the beginner variant only (000/003: the swap is offered to those who skip
    the draft), swap an unplaced cornerstone for a random one from the box. A drafted
    cornerstone swapped away before it was placed gets cs_gen = -1 (not "unplaced")."""
    gstate = game.gstate
    pstate = game.pstate
    cs_pile = game.cs_pile
    cs_hands = game.cs_hands
    if (
        E.has_effect(game.effects, tile, K.EF_TAKE_DISCARDED_CORNERSTONE)
        and gstate[E.GS_N_CS_PILE] > 0
        and pstate[seat, E.PS_N_CS] < E.MAX_CS_HAND
    ):
        n = E.take_options(cs_pile, gstate, game.options)
        k = decide(seat, E.D_TAKE_CS, n, game)
        taken = cs_pile[k]
        E.remove_slot(cs_pile, n, k)
        gstate[E.GS_N_CS_PILE] = n - 1
        E.add_cornerstone(seat, taken, cs_hands, pstate)
        log(game, seat, R.EV_CS_TAKEN, taken, -1, 0, -1, -1)
    if (
        game.rules[K.RO_VARIANT] == K.V_BEGINNER
        and E.has_effect(game.effects, tile, K.EF_SWAP_CORNERSTONE)
        and pstate[seat, E.PS_N_CS] > 0
        and gstate[E.GS_CS_BOX_TOP] < gstate[E.GS_CS_BOX_SIZE]
    ):
        n = E.swap_options(seat, cs_hands, pstate, game.options)
        k = decide(seat, E.D_SWAP_CS, n, game)
        slot = game.options[k, E.OPT_SLOT]
        if slot >= 0:
            old = cs_hands[seat, slot]
            new = E.draw_cornerstone(game.cs_box, gstate)
            cs_hands[seat, slot] = new
            for d in range(E.DRAFT_PICKS):
                drafted = game.stats[seat, R.P_CS_DRAFTED0 + d]
                if drafted == old and game.stats[seat, R.P_CS_GEN0 + d] == 0:
                    game.stats[seat, R.P_CS_GEN0 + d] = R.CS_SWAPPED_AWAY
                    break
            log(game, seat, R.EV_CS_SWAPPED, new, -1, 0, old, -1)


@njit(inline="always")
def take_action(seat, game):
    """Place the selected tile, discard it to place a cornerstone, or sell it."""
    gstate = game.gstate
    pstate = game.pstate
    stats = game.stats
    options = game.options
    selected = pstate[seat, E.PS_SELECTED]
    summary = game.summaries[seat]
    n = list_actions(seat, game)
    k = forced_option(game)
    if k < 0:
        k = decide(seat, E.D_ACTION, n, game)
    kind = options[k, E.OPT_KIND]
    if kind == E.A_SELL:
        pstate[seat, E.PS_MONEY] += E.SELL_COINS
        stats[seat, R.P_TILES_SOLD] += 1
        log(game, seat, R.EV_SELL, selected, -1, E.SELL_COINS, -1, -1)
        return
    tile = options[k, E.OPT_TILE]
    cell = options[k, E.OPT_CELL]
    option = options[k, E.OPT_REQ]
    slot = options[k, E.OPT_SLOT]
    cost = pay_requirements(seat, tile, option, game)
    if kind == E.A_CORNERSTONE:
        E.remove_slot(game.cs_hands[seat], pstate[seat, E.PS_N_CS], slot)
        pstate[seat, E.PS_N_CS] -= 1
        stats[seat, R.P_CS_PLACED] += 1
        for d in range(E.DRAFT_PICKS):
            if stats[seat, R.P_CS_DRAFTED0 + d] == tile and stats[seat, R.P_CS_GEN0 + d] == 0:
                stats[seat, R.P_CS_GEN0 + d] = gstate[E.GS_GEN]
                break
        log(game, seat, R.EV_CORNERSTONE, tile, cell, -cost, selected, -1)
    else:
        log(game, seat, R.EV_PLACE, tile, cell, -cost, option, -1)
    old = E.place_tile(
        seat, tile, cell, game.cells, pstate, stats[seat], game.tiles, game.effects,
        game.events, gstate, summary,
    )  # fmt: skip
    E.update_summary(summary, cell, np.int64(old), tile, game.cells[seat], game.tiles)
    placement_effects(seat, tile, game)


@cfunc(STEP, _nrt=False)
def action(game, seat):
    """``take_action`` of ``seat``, for the loop (``run``)."""
    take_action(seat, game)
    return 0
