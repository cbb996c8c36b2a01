"""The compiled game loop: setup, cornerstone draft, three generations, final scoring.

The per-turn functions are inlined into their callers (``inline="always"``): a call passing
some twenty arrays costs atomic reference counting per array, and each call level makes Numba
optimize the whole linked subtree again at compile time.

Every choice is a strategy decision (``strategies.dispatch.choose``) among options that
``sim.engine`` lists; chance comes only from the game's deal stream, drawn entirely at setup,
so a strategy never changes which tiles are dealt. ``play_batch`` is the entry point of the
runner; ``play_one`` is the Python convenience behind ``neom play`` and the tests.
"""

import numpy as np

from sim.core import rng
from sim.core.jit import njit
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom import records as R
from sim.neom.effects import city_income, insured_against
from sim.neom.grid import M_GOODS, city_goods
from sim.neom.scoring import score_masks
from strategies.neom.basic import choose_random
from strategies.neom.dispatch import choose
from strategies.neom.evaluate import memo_size
from strategies.neom.registry import RANDOM_ID


# --- decisions -----------------------------------------------------------------------------
@njit(inline="always")
def decide(
    seat,
    decision,
    options,
    n,
    seats,
    strategy_ids,
    strategy_params,
    strat_rng,
    memos,
    gstate,
    pstate,
    cells,
    hands,
    cs_hands,
    goods_of,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
):
    """Index of the option the seat's strategy picks (no question asked with one option)."""
    if n == 1:
        return 0
    which = seats[seat]
    if strategy_ids[which] == RANDOM_ID:
        # Uniform choice needs no view of the state: skip the dispatch call and its arguments.
        return choose_random(strat_rng[seat], n)
    # One integer type for every call site, so the strategies compile once.
    k = choose(
        np.int64(strategy_ids[which]),
        strategy_params[which],
        strat_rng[seat],
        np.int64(decision),
        options,
        np.int64(n),
        np.int64(seat),
        gstate,
        pstate,
        cells,
        hands,
        cs_hands,
        goods_of,
        tiles,
        req,
        effects,
        goods_tier,
        rules,
        memos[seat],
    )
    if k < 0 or k >= n:
        raise ValueError("a strategy chose an option that does not exist")
    return k


@njit(inline="always")
def refresh_goods(cells, n_players, tiles, goods_of):
    for s in range(n_players):
        goods_of[s] = city_goods(cells[s], tiles)


@njit(inline="always")
def discard_hand(seat, hands, pstate, events, gstate, kind):
    for k in range(pstate[seat, E.PS_HAND_SIZE]):
        E.log_event(events, gstate, seat, kind, hands[seat, k], -1, 0, -1, -1)
        hands[seat, k] = -1
    pstate[seat, E.PS_HAND_SIZE] = 0


# --- the cornerstone draft -----------------------------------------------------------------
@njit(inline="always")
def keep_cornerstone(
    seat,
    pick,
    seats,
    strategy_ids,
    strategy_params,
    strat_rng,
    memos,
    gstate,
    pstate,
    cells,
    hands,
    cs_hands,
    goods_of,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
    options,
    stats,
    events,
):
    """The seat keeps one cornerstone of its draft hand (``hands``), which shrinks by one."""
    size = pstate[seat, E.PS_HAND_SIZE]
    for k in range(size):
        E.set_option(options, k, 0, hands[seat, k], -1, -1, k, -1, -1, 0)
    k = decide(
        seat,
        E.D_DRAFT,
        options,
        size,
        seats,
        strategy_ids,
        strategy_params,
        strat_rng,
        memos,
        gstate,
        pstate,
        cells,
        hands,
        cs_hands,
        goods_of,
        tiles,
        req,
        effects,
        goods_tier,
        rules,
    )
    tile = hands[seat, k]
    E.remove_slot(hands[seat], size, k)
    pstate[seat, E.PS_HAND_SIZE] = size - 1
    E.add_cornerstone(seat, tile, cs_hands, pstate)
    stats[seat, R.P_CS_DRAFTED0 + pick] = tile
    E.log_event(events, gstate, seat, R.EV_DRAFT_PICK, tile, -1, 0, pick, -1)


@njit
def deal_draft_hand(seat, size, hands, pstate, cs_box, gstate):
    for k in range(size):
        hands[seat, k] = E.draw_cornerstone(cs_box, gstate)
    pstate[seat, E.PS_HAND_SIZE] = size


@njit
def draft(
    n_players,
    seats,
    strategy_ids,
    strategy_params,
    strat_rng,
    memos,
    gstate,
    pstate,
    cells,
    hands,
    cs_hands,
    goods_of,
    cs_pile,
    cs_box,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
    options,
    stats,
    events,
):
    """Preliminary round: 4 cornerstones each, keep one and pass the rest left until each has
    3, the last of each hand to the discard pile. Solo: stacks of 4, 3 and 2, keep one of each.
    Beginner variant: one random cornerstone each, no draft."""
    gstate[E.GS_TURN] = E.DRAFT_TURN
    if rules[K.RO_VARIANT] == K.V_BEGINNER:
        for s in range(n_players):
            tile = E.draw_cornerstone(cs_box, gstate)
            E.add_cornerstone(s, tile, cs_hands, pstate)
            stats[s, R.P_CS_DRAFTED0] = tile
            E.log_event(events, gstate, s, R.EV_DRAFT_PICK, tile, -1, 0, 0, -1)
        return
    if n_players == 1:
        for pick in range(len(E.SOLO_STACKS)):
            deal_draft_hand(0, E.SOLO_STACKS[pick], hands, pstate, cs_box, gstate)
            keep_cornerstone(
                0,
                pick,
                seats,
                strategy_ids,
                strategy_params,
                strat_rng,
                memos,
                gstate,
                pstate,
                cells,
                hands,
                cs_hands,
                goods_of,
                tiles,
                req,
                effects,
                goods_tier,
                rules,
                options,
                stats,
                events,
            )
            for k in range(pstate[0, E.PS_HAND_SIZE]):
                E.add_to_pile(hands[0, k], cs_pile, gstate)
            pstate[0, E.PS_HAND_SIZE] = 0
        return
    for s in range(n_players):
        deal_draft_hand(s, E.DRAFT_HAND, hands, pstate, cs_box, gstate)
    for pick in range(E.DRAFT_PICKS):
        for s in range(n_players):
            keep_cornerstone(
                s,
                pick,
                seats,
                strategy_ids,
                strategy_params,
                strat_rng,
                memos,
                gstate,
                pstate,
                cells,
                hands,
                cs_hands,
                goods_of,
                tiles,
                req,
                effects,
                goods_tier,
                rules,
                options,
                stats,
                events,
            )
        if pick < E.DRAFT_PICKS - 1:
            E.pass_left(hands, pstate, n_players)
    for s in range(n_players):
        for k in range(pstate[s, E.PS_HAND_SIZE]):
            E.add_to_pile(hands[s, k], cs_pile, gstate)
        pstate[s, E.PS_HAND_SIZE] = 0


# --- a turn --------------------------------------------------------------------------------
@njit(inline="always")
def select_tile(
    seat,
    disaster_selectable,
    seats,
    strategy_ids,
    strategy_params,
    strat_rng,
    memos,
    gstate,
    pstate,
    cells,
    hands,
    cs_hands,
    goods_of,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
    options,
    events,
):
    """The seat selects a tile of its hand (kept secret: only PS_SELECTED holds it)."""
    size = pstate[seat, E.PS_HAND_SIZE]
    n = 0
    for k in range(size):
        tile = hands[seat, k]
        if not disaster_selectable and tiles[tile, K.C_DISASTER] != K.DIS_NONE:
            continue
        E.set_option(options, n, 0, tile, -1, -1, k, -1, -1, 0)
        n += 1
    k = decide(
        seat,
        E.D_SELECT,
        options,
        n,
        seats,
        strategy_ids,
        strategy_params,
        strat_rng,
        memos,
        gstate,
        pstate,
        cells,
        hands,
        cs_hands,
        goods_of,
        tiles,
        req,
        effects,
        goods_tier,
        rules,
    )
    slot = options[k, E.OPT_SLOT]
    tile = hands[seat, slot]
    E.remove_slot(hands[seat], size, slot)
    pstate[seat, E.PS_HAND_SIZE] = size - 1
    pstate[seat, E.PS_SELECTED] = tile
    E.log_event(events, gstate, seat, R.EV_SELECT, tile, -1, 0, size, -1)


@njit(inline="always")
def pay_requirements(
    seat,
    tile,
    option,
    seats,
    strategy_ids,
    strategy_params,
    strat_rng,
    memos,
    gstate,
    pstate,
    cells,
    hands,
    cs_hands,
    goods_of,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
    options,
    stats,
    events,
):
    """Pay the coin cost of requirement option ``option`` to the supply, then buy each missing
    good from a seller the player picks (sellers are paid in pending coins). Returns the coin
    cost paid to the supply."""
    n_players = gstate[E.GS_N_PLAYERS]
    cost = req[tile, option, K.R_COST]
    pstate[seat, E.PS_MONEY] -= cost
    missing = req[tile, option, K.R_GOODS] & ~goods_of[seat]
    routes = E.trade_routes(cells[seat], tiles)
    for good in range(goods_tier.shape[0]):
        if not (missing >> good) & 1:
            continue
        missing &= ~(1 << good)
        rest = E.purchase_cost(seat, missing, goods_of, n_players, goods_tier, routes)
        n = E.buy_options(
            seat,
            good,
            rest,
            pstate[seat, E.PS_MONEY],
            goods_of,
            routes,
            n_players,
            goods_tier,
            options,
        )
        k = decide(
            seat,
            E.D_BUY,
            options,
            n,
            seats,
            strategy_ids,
            strategy_params,
            strat_rng,
            memos,
            gstate,
            pstate,
            cells,
            hands,
            cs_hands,
            goods_of,
            tiles,
            req,
            effects,
            goods_tier,
            rules,
        )
        seller = options[k, E.OPT_SEAT]
        price = options[k, E.OPT_COST]
        pstate[seat, E.PS_MONEY] -= price
        pstate[seller, E.PS_PENDING] += price
        stats[seat, R.P_COINS_BUYING] += price
        stats[seller, R.P_COINS_SELLING] += price
        E.log_event(events, gstate, seat, R.EV_BUY, tile, -1, -price, seller, good)
        E.log_event(events, gstate, seller, R.EV_GOOD_SOLD, tile, -1, price, seat, good)
    return cost


@njit(inline="always")
def placement_effects(
    seat,
    tile,
    seats,
    strategy_ids,
    strategy_params,
    strat_rng,
    memos,
    gstate,
    pstate,
    cells,
    hands,
    cs_hands,
    goods_of,
    cs_pile,
    cs_box,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
    options,
    events,
):
    """Effects that act once when their tile is placed: take a cornerstone from the draft's
    discard pile; swap an unplaced cornerstone for a random one from the box."""
    if (
        E.has_effect(effects, tile, K.EF_TAKE_DISCARDED_CORNERSTONE)
        and gstate[E.GS_N_CS_PILE] > 0
        and pstate[seat, E.PS_N_CS] < E.MAX_CS_HAND
    ):
        n = E.take_options(cs_pile, gstate, options)
        k = decide(
            seat,
            E.D_TAKE_CS,
            options,
            n,
            seats,
            strategy_ids,
            strategy_params,
            strat_rng,
            memos,
            gstate,
            pstate,
            cells,
            hands,
            cs_hands,
            goods_of,
            tiles,
            req,
            effects,
            goods_tier,
            rules,
        )
        taken = cs_pile[k]
        E.remove_slot(cs_pile, n, k)
        gstate[E.GS_N_CS_PILE] = n - 1
        E.add_cornerstone(seat, taken, cs_hands, pstate)
        E.log_event(events, gstate, seat, R.EV_CS_TAKEN, taken, -1, 0, -1, -1)
    if (
        E.has_effect(effects, tile, K.EF_SWAP_CORNERSTONE)
        and pstate[seat, E.PS_N_CS] > 0
        and gstate[E.GS_CS_BOX_TOP] < gstate[E.GS_CS_BOX_SIZE]
    ):
        n = E.swap_options(seat, cs_hands, pstate, options)
        k = decide(
            seat,
            E.D_SWAP_CS,
            options,
            n,
            seats,
            strategy_ids,
            strategy_params,
            strat_rng,
            memos,
            gstate,
            pstate,
            cells,
            hands,
            cs_hands,
            goods_of,
            tiles,
            req,
            effects,
            goods_tier,
            rules,
        )
        slot = options[k, E.OPT_SLOT]
        if slot >= 0:
            old = cs_hands[seat, slot]
            new = E.draw_cornerstone(cs_box, gstate)
            cs_hands[seat, slot] = new
            E.log_event(events, gstate, seat, R.EV_CS_SWAPPED, new, -1, 0, old, -1)


@njit(inline="always")
def take_action(
    seat,
    seats,
    strategy_ids,
    strategy_params,
    strat_rng,
    memos,
    gstate,
    pstate,
    cells,
    hands,
    cs_hands,
    goods_of,
    cs_pile,
    cs_box,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
    options,
    summaries,
    req_costs,
    stats,
    events,
):
    """Place the selected tile, discard it to place a cornerstone, or sell it."""
    selected = pstate[seat, E.PS_SELECTED]
    summary = summaries[seat]
    E.refresh_summary(cells[seat], tiles, summary)
    n = E.fill_action_options(
        seat,
        selected,
        gstate[E.GS_GEN],
        cells,
        pstate,
        cs_hands,
        goods_of,
        gstate[E.GS_N_PLAYERS],
        tiles,
        req,
        goods_tier,
        options,
        summary,
        req_costs,
    )
    k = decide(
        seat,
        E.D_ACTION,
        options,
        n,
        seats,
        strategy_ids,
        strategy_params,
        strat_rng,
        memos,
        gstate,
        pstate,
        cells,
        hands,
        cs_hands,
        goods_of,
        tiles,
        req,
        effects,
        goods_tier,
        rules,
    )
    kind = options[k, E.OPT_KIND]
    if kind == E.A_SELL:
        pstate[seat, E.PS_MONEY] += E.SELL_COINS
        stats[seat, R.P_TILES_SOLD] += 1
        E.log_event(events, gstate, seat, R.EV_SELL, selected, -1, E.SELL_COINS, -1, -1)
        return
    tile = options[k, E.OPT_TILE]
    cell = options[k, E.OPT_CELL]
    option = options[k, E.OPT_REQ]
    slot = options[k, E.OPT_SLOT]
    cost = pay_requirements(
        seat,
        tile,
        option,
        seats,
        strategy_ids,
        strategy_params,
        strat_rng,
        memos,
        gstate,
        pstate,
        cells,
        hands,
        cs_hands,
        goods_of,
        tiles,
        req,
        effects,
        goods_tier,
        rules,
        options,
        stats,
        events,
    )
    if kind == E.A_CORNERSTONE:
        E.remove_slot(cs_hands[seat], pstate[seat, E.PS_N_CS], slot)
        pstate[seat, E.PS_N_CS] -= 1
        stats[seat, R.P_CS_PLACED] += 1
        for d in range(E.DRAFT_PICKS):
            if stats[seat, R.P_CS_DRAFTED0 + d] == tile and stats[seat, R.P_CS_GEN0 + d] == 0:
                stats[seat, R.P_CS_GEN0 + d] = gstate[E.GS_GEN]
                break
        E.log_event(events, gstate, seat, R.EV_CORNERSTONE, tile, cell, -cost, selected, -1)
    else:
        E.log_event(events, gstate, seat, R.EV_PLACE, tile, cell, -cost, option, -1)
    E.place_tile(seat, tile, cell, cells, pstate, stats[seat], tiles, effects, events, gstate)
    E.mark_stale(summary)
    placement_effects(
        seat,
        tile,
        seats,
        strategy_ids,
        strategy_params,
        strat_rng,
        memos,
        gstate,
        pstate,
        cells,
        hands,
        cs_hands,
        goods_of,
        cs_pile,
        cs_box,
        tiles,
        req,
        effects,
        goods_tier,
        rules,
        options,
        events,
    )


@njit(inline="always")
def resolve_disaster(
    spared,
    disaster,
    seats,
    strategy_ids,
    strategy_params,
    strat_rng,
    memos,
    gstate,
    pstate,
    cells,
    hands,
    cs_hands,
    goods_of,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
    options,
    summaries,
    stats,
    events,
):
    """Every player but ``spared`` (and the insured) pays the disaster off or sacrifices."""
    gstate[E.GS_DISASTERS] |= 1 << (gstate[E.GS_GEN] - 1)
    gstate[E.GS_RESOLVING] = disaster
    for s in range(gstate[E.GS_N_PLAYERS]):
        city = cells[s]
        if s == spared or insured_against(city, effects, disaster):
            continue
        n = E.disaster_options(city, pstate[s, E.PS_MONEY], tiles, disaster, options)
        k = decide(
            s,
            E.D_DISASTER,
            options,
            n,
            seats,
            strategy_ids,
            strategy_params,
            strat_rng,
            memos,
            gstate,
            pstate,
            cells,
            hands,
            cs_hands,
            goods_of,
            tiles,
            req,
            effects,
            goods_tier,
            rules,
        )
        if options[k, E.OPT_KIND] == E.DR_PAY:
            cost = options[k, E.OPT_COST]
            pstate[s, E.PS_MONEY] -= cost
            stats[s, R.P_DISASTERS_PAID] += 1
            stats[s, R.P_DISASTER_COINS] += cost
            E.log_event(events, gstate, s, R.EV_DISASTER_PAY, -1, -1, -cost, disaster, -1)
            continue
        stats[s, R.P_DISASTERS_SACRIFICED] += 1
        for step in range(E.sacrifice_steps(disaster)):
            n = E.sacrifice_options(city, tiles, disaster, step, options)
            if n == 0:
                continue
            k = decide(
                s,
                E.D_SACRIFICE,
                options,
                n,
                seats,
                strategy_ids,
                strategy_params,
                strat_rng,
                memos,
                gstate,
                pstate,
                cells,
                hands,
                cs_hands,
                goods_of,
                tiles,
                req,
                effects,
                goods_tier,
                rules,
            )
            cell = options[k, E.OPT_CELL]
            lost = city[cell]
            city[cell] = K.EMPTY
            E.mark_stale(summaries[s])
            stats[s, R.P_DISASTER_TILES_LOST] += 1
            E.log_event(events, gstate, s, R.EV_DISASTER_SACRIFICE, lost, cell, 0, disaster, -1)
    gstate[E.GS_RESOLVING] = K.DIS_NONE


@njit(inline="always")
def release_pending(pstate, n_players):
    """Coins from goods sold become spendable at the end of the turn."""
    for s in range(n_players):
        pstate[s, E.PS_MONEY] += pstate[s, E.PS_PENDING]
        pstate[s, E.PS_PENDING] = 0


@njit
def collect_income(n_players, pstate, cells, tiles, effects, summaries, stats, events, gstate):
    for s in range(n_players):
        E.refresh_summary(cells[s], tiles, summaries[s])
        income = city_income(cells[s], tiles, summaries[s], effects)
        if income != 0:
            pstate[s, E.PS_MONEY] += income
            stats[s, R.P_INCOME_TOTAL] += income
            E.log_event(events, gstate, s, R.EV_INCOME, -1, -1, income, -1, -1)


# --- generations ---------------------------------------------------------------------------
@njit
def deal_solo_packs(deck, n_deck, packs, pack_sizes):
    """Solo: 8 equal packs; 2 tiles of pack 8 go to pack 1, 1 of pack 7 to pack 2, 1 of pack 6
    to pack 3; the rest of pack 8 is boxed unseen (tiles past 8 equal packs too)."""
    size = n_deck // E.SOLO_PACKS
    for p in range(E.SOLO_PACKS):
        for k in range(size):
            packs[p, k] = deck[p * size + k]
        pack_sizes[p] = size
    moves = ((7, 0), (7, 0), (6, 1), (5, 2))
    for src, dst in moves:
        if pack_sizes[src] > 0:
            pack_sizes[src] -= 1
            packs[dst, pack_sizes[dst]] = packs[src, pack_sizes[src]]
            pack_sizes[dst] += 1


@njit
def play_generation(
    gen,
    deck,
    n_deck,
    random_turn,
    seats,
    strategy_ids,
    strategy_params,
    strat_rng,
    memos,
    gstate,
    pstate,
    cells,
    hands,
    cs_hands,
    goods_of,
    cs_pile,
    cs_box,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
    options,
    summaries,
    req_costs,
    stats,
    events,
):
    n_players = gstate[E.GS_N_PLAYERS]
    gstate[E.GS_GEN] = gen
    packs = np.full((E.SOLO_PACKS, E.HAND_SIZE), -1, dtype=np.int64)
    pack_sizes = np.zeros(E.SOLO_PACKS, dtype=np.int64)
    if n_players == 1:
        deal_solo_packs(deck, n_deck, packs, pack_sizes)
    else:
        # 8 each; with 2 players the 1+ deck's remaining tiles stay in the box.
        dealt = 0
        for s in range(n_players):
            size = min(E.HAND_SIZE, n_deck - dealt)
            for k in range(size):
                hands[s, k] = deck[dealt + k]
            dealt += size
            pstate[s, E.PS_HAND_SIZE] = size
    for t in range(E.TURNS_PER_GENERATION):
        gstate[E.GS_TURN] = (gen - 1) * E.TURNS_PER_GENERATION + t
        if n_players == 1:
            hands[0, : pack_sizes[t]] = packs[t, : pack_sizes[t]]
            pstate[0, E.PS_HAND_SIZE] = pack_sizes[t]
        # One call site each for selecting and acting (every inlined copy costs compile time):
        # 1-2 players select and act in turn, the 2-player start seat changing every turn; 3-5
        # all select, then act in seat order buying from the cities as they were before.
        for step in range(2 * n_players):
            if n_players <= 2:
                j = step // 2
                acting = step % 2 == 1
            else:
                j = step % n_players
                acting = step >= n_players
            seat = (gstate[E.GS_TURN] + j) % n_players if n_players == 2 else j
            if not acting:
                if pstate[seat, E.PS_HAND_SIZE] > 0:
                    select_tile(
                        seat,
                        n_players > 1 or t < 3,
                        seats,
                        strategy_ids,
                        strategy_params,
                        strat_rng,
                        memos,
                        gstate,
                        pstate,
                        cells,
                        hands,
                        cs_hands,
                        goods_of,
                        tiles,
                        req,
                        effects,
                        goods_tier,
                        rules,
                        options,
                        events,
                    )
                continue
            if n_players <= 2 and pstate[seat, E.PS_SELECTED] < 0:
                continue  # no tile left to select this turn
            if n_players <= 2 or j == 0:
                refresh_goods(cells, n_players, tiles, goods_of)
            act_seat(
                seat,
                seats,
                strategy_ids,
                strategy_params,
                strat_rng,
                memos,
                gstate,
                pstate,
                cells,
                hands,
                cs_hands,
                goods_of,
                cs_pile,
                cs_box,
                tiles,
                req,
                effects,
                goods_tier,
                rules,
                options,
                summaries,
                req_costs,
                stats,
                events,
            )
        # The disasters of the turn, in order: the one a player selected (its selector spared),
        # solo: the one revealed in packs 4-7, random-disasters variant: the generation's.
        selector = -1
        for seat in range(n_players):
            selected = pstate[seat, E.PS_SELECTED]
            if selected >= 0 and tiles[selected, K.C_DISASTER] != K.DIS_NONE:
                selector = seat
        for source in range(3):
            spared = -1
            disaster = K.DIS_NONE
            if source == 0:
                if selector >= 0 and n_players > 1:
                    spared = selector
                    disaster = tiles[pstate[selector, E.PS_SELECTED], K.C_DISASTER]
            elif source == 1:
                if n_players == 1:
                    # Solo: a Disaster revealed in packs 4-7 cannot be selected and strikes.
                    for k in range(pstate[0, E.PS_HAND_SIZE]):
                        tile = hands[0, k]
                        if tiles[tile, K.C_DISASTER] != K.DIS_NONE:
                            E.log_event(
                                events, gstate, -1, R.EV_DISASTER_SELECT, tile, -1, 0, -1, -1
                            )
                            E.remove_slot(hands[0], pstate[0, E.PS_HAND_SIZE], k)
                            pstate[0, E.PS_HAND_SIZE] -= 1
                            disaster = tiles[tile, K.C_DISASTER]
                            break
            elif t == random_turn:
                disaster = E.generation_disaster(gen, tiles)
                if disaster != K.DIS_NONE:
                    E.log_event(events, gstate, -1, R.EV_DISASTER_SELECT, -1, -1, 0, disaster, -1)
            if disaster != K.DIS_NONE:
                resolve_disaster(
                    spared,
                    disaster,
                    seats,
                    strategy_ids,
                    strategy_params,
                    strat_rng,
                    memos,
                    gstate,
                    pstate,
                    cells,
                    hands,
                    cs_hands,
                    goods_of,
                    tiles,
                    req,
                    effects,
                    goods_tier,
                    rules,
                    options,
                    summaries,
                    stats,
                    events,
                )
        for seat in range(n_players):
            pstate[seat, E.PS_SELECTED] = -1
        if n_players == 1 or t == E.TURNS_PER_GENERATION - 1:
            for seat in range(n_players):
                discard_hand(seat, hands, pstate, events, gstate, R.EV_DISCARD)
        else:
            E.pass_left(hands, pstate, n_players)
        release_pending(pstate, n_players)
    collect_income(n_players, pstate, cells, tiles, effects, summaries, stats, events, gstate)


@njit(inline="always")
def act_seat(
    seat,
    seats,
    strategy_ids,
    strategy_params,
    strat_rng,
    memos,
    gstate,
    pstate,
    cells,
    hands,
    cs_hands,
    goods_of,
    cs_pile,
    cs_box,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
    options,
    summaries,
    req_costs,
    stats,
    events,
):
    """The seat's action with its selected tile; selecting the Disaster gives none."""
    selected = pstate[seat, E.PS_SELECTED]
    if selected < 0:
        return
    if tiles[selected, K.C_DISASTER] != K.DIS_NONE:
        stats[seat, R.P_DISASTERS_SELECTED] += 1
        E.log_event(events, gstate, seat, R.EV_DISASTER_SELECT, selected, -1, 0, -1, -1)
        return
    take_action(
        seat,
        seats,
        strategy_ids,
        strategy_params,
        strat_rng,
        memos,
        gstate,
        pstate,
        cells,
        hands,
        cs_hands,
        goods_of,
        cs_pile,
        cs_box,
        tiles,
        req,
        effects,
        goods_tier,
        rules,
        options,
        summaries,
        req_costs,
        stats,
        events,
    )


# --- a whole game --------------------------------------------------------------------------
@njit
def final_scoring(
    n_players, pstate, cells, tiles, effects, goods_tier, rules, summaries, stats, game_row
):
    score = np.empty(K.N_SCORE, dtype=np.int32)
    totals = np.empty(n_players, dtype=np.int64)
    ranks = np.empty(n_players, dtype=np.int64)
    for s in range(n_players):
        money = pstate[s, E.PS_MONEY]
        E.refresh_summary(cells[s], tiles, summaries[s])
        score_masks(cells[s], summaries[s], money, tiles, effects, goods_tier, rules, score)
        for key in range(K.N_SCORE):
            stats[s, R.P_SCORE_TILES + key] = score[key]
        totals[s] = score[K.S_TOTAL]
        stats[s, R.P_MONEY] = money
        stats[s, R.P_GOODS_MASK] = summaries[s, M_GOODS]
        stats[s, R.P_TRADE_ROUTES] = E.trade_routes(cells[s], tiles)
    winners = E.ranks_and_winners(totals, n_players, ranks)
    best = totals[0]
    n_winners = 0
    for s in range(n_players):
        stats[s, R.P_RANK] = ranks[s]
        stats[s, R.P_WIN] = (winners >> s) & 1
        n_winners += (winners >> s) & 1
        best = max(best, totals[s])
    game_row[R.G_N_WINNERS] = n_winners
    game_row[R.G_WINNERS_MASK] = winners
    game_row[R.G_WINNING_SCORE] = best


@njit
def int64_bits(value):
    """A uint64 stored bit for bit as int64 (the same in compiled and plain Python)."""
    box = np.empty(1, dtype=np.uint64)
    box[0] = value
    return box.view(np.int64)[0]


@njit
def play_game(
    row,
    key,
    game_id,
    deal_index,
    seats,
    n_players,
    strategy_ids,
    strategy_params,
    tiles,
    req,
    effects,
    goods_tier,
    board_center,
    rules,
    games_out,
    players_out,
    events_out,
    options,
    summaries,
    req_costs,
    memos,
):
    """Play one whole game and write its row of ``games_out``/``players_out`` (and events)."""
    n_tiles = tiles.shape[0]
    gstate = np.zeros(E.N_GSTATE, dtype=np.int64)
    pstate = np.zeros((n_players, E.N_PSTATE), dtype=np.int64)
    cells = np.full((n_players, K.N_CELLS), K.EMPTY, dtype=np.int16)
    hands = np.full((n_players, E.HAND_SIZE), -1, dtype=np.int64)
    cs_hands = np.full((n_players, E.MAX_CS_HAND), -1, dtype=np.int64)
    goods_of = np.zeros(n_players, dtype=np.int64)
    cs_pile = np.full(E.MAX_CS_PILE, -1, dtype=np.int64)
    cs_box = np.full(n_tiles, -1, dtype=np.int64)
    decks = np.full((E.N_GENERATIONS, n_tiles), -1, dtype=np.int64)
    deck_sizes = np.zeros(E.N_GENERATIONS, dtype=np.int64)
    random_turns = np.full(E.N_GENERATIONS, -1, dtype=np.int64)
    deal = np.zeros(2, dtype=np.uint64)
    strat_rng = np.zeros((n_players, 2), dtype=np.uint64)
    stats = players_out[row]
    game_row = games_out[row]

    gstate[E.GS_N_PLAYERS] = n_players
    gstate[E.GS_GAME_ROW] = row
    for s in range(n_players):
        E.mark_stale(summaries[s])
    pstate[:, E.PS_SELECTED] = -1
    deal_seed = rng.stream_seed(key, deal_index, rng.DEAL_STREAM)
    rng.seed_state(deal, deal_seed)
    for s in range(n_players):
        rng.seed_state(strat_rng[s], rng.stream_seed(key, game_id, 1 + s))

    # All chance is drawn here, in a fixed order, before any decision.
    E.deal_boards(deal, board_center.shape[0], n_players, pstate, cells, board_center)
    E.shuffled_cornerstones(deal, n_players, tiles, rules, cs_box, gstate)
    for g in range(E.N_GENERATIONS):
        deck_sizes[g] = E.build_deck(g + 1, n_players, tiles, rules, decks[g])
        rng.shuffle(deal, decks[g], deck_sizes[g])
        if rules[K.RO_VARIANT] == K.V_RANDOM_DISASTERS:
            random_turns[g] = rng.randint(deal, E.TURNS_PER_GENERATION)
    E.apply_interventions(deal, n_players, tiles, rules, cs_box, gstate, decks, deck_sizes)

    stats[:, :] = -1
    stats[:n_players, :] = 0
    for s in range(n_players):
        stats[s, R.P_SEAT] = s
        stats[s, R.P_STRATEGY] = seats[s]
        stats[s, R.P_BOARD] = pstate[s, E.PS_BOARD]
        for d in range(E.DRAFT_PICKS):
            stats[s, R.P_CS_DRAFTED0 + d] = -1

    draft(
        n_players,
        seats,
        strategy_ids,
        strategy_params,
        strat_rng,
        memos,
        gstate,
        pstate,
        cells,
        hands,
        cs_hands,
        goods_of,
        cs_pile,
        cs_box,
        tiles,
        req,
        effects,
        goods_tier,
        rules,
        options,
        stats,
        events_out,
    )
    game_row[:] = -1
    for k in range(min(gstate[E.GS_N_CS_PILE], R.G_DISCARDED_CS4 - R.G_DISCARDED_CS0 + 1)):
        game_row[R.G_DISCARDED_CS0 + k] = cs_pile[k]
    for g in range(E.N_GENERATIONS):
        play_generation(
            g + 1,
            decks[g],
            deck_sizes[g],
            random_turns[g],
            seats,
            strategy_ids,
            strategy_params,
            strat_rng,
            memos,
            gstate,
            pstate,
            cells,
            hands,
            cs_hands,
            goods_of,
            cs_pile,
            cs_box,
            tiles,
            req,
            effects,
            goods_tier,
            rules,
            options,
            summaries,
            req_costs,
            stats,
            events_out,
        )

    final_scoring(
        n_players, pstate, cells, tiles, effects, goods_tier, rules, summaries, stats, game_row
    )
    game_row[R.G_GAME_ID] = game_id
    game_row[R.G_DEAL_SEED] = int64_bits(deal_seed)
    game_row[R.G_N_PLAYERS] = n_players
    game_row[R.G_VARIANT] = rules[K.RO_VARIANT]
    game_row[R.G_DISASTERS_MASK] = gstate[E.GS_DISASTERS]
    game_row[R.G_N_EVENTS] = gstate[E.GS_N_EVENTS]


@njit
def play_batch(
    key,
    game_ids,
    deal_indices,
    seat_strategy,
    strategy_ids,
    strategy_params,
    data,
    rules,
    games_out,
    players_out,
    events_out,
):
    """Play ``len(game_ids)`` games: the signature and the guarantees of ``sim.core.game``.

    ``data`` is the catalogue's ``(tiles, req, effects, goods_tier, board_center)``
    (``sim.neom.tables.Tables.arrays``); ``strategy_ids`` are STRATEGY_ID_DTYPE.
    """
    tiles, req, effects, goods_tier, board_center = data
    n_players = seat_strategy.shape[1]
    # Scratch of the decisions, allocated once: every row an option list uses is written first;
    # a memo is only read back for the city and money it was written for.
    options = np.zeros((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
    summaries = np.zeros((R.MAX_PLAYERS, E.N_SUMMARY), dtype=np.int64)
    req_costs = np.zeros(K.MAX_REQ_OPTIONS, dtype=np.int64)
    memos = np.zeros((R.MAX_PLAYERS, memo_size(tiles.shape[0])), dtype=np.int64)
    for i in range(game_ids.shape[0]):
        play_game(
            i,
            key,
            game_ids[i],
            deal_indices[i],
            seat_strategy[i],
            n_players,
            strategy_ids,
            strategy_params,
            tiles,
            req,
            effects,
            goods_tier,
            board_center,
            rules,
            games_out,
            players_out,
            events_out,
            options,
            summaries,
            req_costs,
            memos,
        )


# --- Python convenience --------------------------------------------------------------------
def play_one(
    tables,
    n_players,
    strategies,
    seed,
    variant=K.V_STANDARD,
    events=True,
    solo_tileset=1,
    neighborhood_through_any=True,
):
    """Play one game with ``strategies`` (StrategySpec per seat) from master seed ``seed``.

    Returns a dict: ``game`` (int64[N_GAME_COLS]), ``players`` (int64[n_players,
    N_PLAYER_COLS]), ``events`` (int64[n_events, N_EVENT_COLS]), ``rules``, ``strategies``.
    """
    from sim.core.batch import STRATEGY_ID_DTYPE, play_arrays
    from sim.neom import GAME
    from sim.neom.tables import make_rules

    if len(strategies) != n_players:
        raise ValueError(f"{n_players} players need {n_players} strategies, got {len(strategies)}")
    rules = make_rules(variant, neighborhood_through_any, solo_tileset)
    key = rng.master_key(seed)
    strategy_ids = np.array([spec.id for spec in strategies], dtype=STRATEGY_ID_DTYPE)
    strategy_params = np.stack([spec.params for spec in strategies]).astype(np.float64)
    seat_strategy = np.arange(n_players, dtype=np.int32).reshape(1, n_players)
    ids = np.zeros(1, dtype=np.int64)
    out = play_arrays(
        GAME,
        key,
        ids,
        ids,
        seat_strategy,
        strategy_ids,
        strategy_params,
        tables.arrays,
        rules,
        events,
    )
    return {
        "game": out.games[0],
        "players": out.players[0, :n_players],
        "events": out.events[: out.games[0, R.G_N_EVENTS]],
        "rules": rules,
        "strategies": list(strategies),
    }


def final_cities(tables, result):
    """The players' final cities (int16[P, 25]) rebuilt from a game's events."""
    players = result["players"]
    cells = np.full((players.shape[0], K.N_CELLS), K.EMPTY, dtype=np.int16)
    cells[:, K.CENTER_CELL] = tables.board_center[players[:, R.P_BOARD]]
    for event in result["events"]:
        kind = event[R.E_KIND]
        if kind in (R.EV_PLACE, R.EV_CORNERSTONE):
            cells[event[R.E_PLAYER], event[R.E_CELL]] = event[R.E_TILE]
        elif kind == R.EV_DISASTER_SACRIFICE:
            cells[event[R.E_PLAYER], event[R.E_CELL]] = K.EMPTY
    return cells
