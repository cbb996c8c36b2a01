"""``rollout``: choose a tile and an action by playing the rest of the game out, many times.

At a selection or action decision, the options are first ranked by the VP-only evaluation
(``strategies.evaluate`` with weight 1 on VP now); the best ``candidates`` of them are each
played out ``playouts`` times to the end of the game from a copy of the state, and the option
with the best mean final margin (own score minus the best other score) is taken. Every
candidate sees the same playout seeds (common random numbers). Other decisions use the
VP-only evaluation directly.

A playout is a fast, simplified game over the engine's own rule functions: what the player
cannot know is drawn anew (the other players' hands from the tiles of this generation not in
sight, later generations' decks from their tiles), the other players skip the rest of the
current turn, every player then selects a random tile and places it on a random legal square
(a cornerstone only when the tile cannot go anywhere, selling when nothing can), goods are
paid to the supply, a selected Disaster makes the others pay when they can and otherwise lose
a random tile, and placement effects that choose cornerstones are skipped.
"""

import numpy as np

from sim import constants as K
from sim import engine as E
from sim import records as R
from sim import rng
from sim.effects import city_income
from sim.grid import city_goods
from sim.jit import njit
from sim.scoring import score_city
from strategies.archetypes import N_WEIGHTS, W_VP
from strategies.evaluate import (
    N_CTX,
    action_value,
    build_context,
    choose_evaluated,
    pick_best,
    seat_money,
    select_values,
)

# Parameter slots of rollout.
R_PLAYOUTS = 0
R_CANDIDATES = 1


@njit
def vp_weights():
    weights = np.zeros(N_WEIGHTS, dtype=np.float64)
    weights[W_VP] = 1.0
    return weights


@njit
def random_action(
    seat,
    selected,
    gen,
    cells,
    pstate,
    cs_hands,
    goods_of,
    n_players,
    tiles,
    req,
    goods_tier,
    options,
    state,
):
    """A random placement of the selected tile; a random cornerstone placement when it has
    none; selling when neither exists. Returns the option row index."""
    n = E.action_options(
        seat,
        selected,
        gen,
        cells,
        pstate,
        cs_hands,
        goods_of,
        n_players,
        tiles,
        req,
        goods_tier,
        options,
    )
    n_place = 0
    n_cs = 0
    for k in range(n):
        if options[k, E.OPT_KIND] == E.A_PLACE:
            n_place += 1
        elif options[k, E.OPT_KIND] == E.A_CORNERSTONE:
            n_cs += 1
    if n_place > 0:
        return rng.randint(state, n_place)  # placements come first
    if n_cs > 0:
        return n_place + rng.randint(state, n_cs)
    return n - 1


@njit
def apply_action(
    seat, options, k, cells, pstate, cs_hands, stats, tiles, effects, no_events, gstate
):
    kind = options[k, E.OPT_KIND]
    if kind == E.A_SELL:
        pstate[seat, E.PS_MONEY] += E.SELL_COINS
        return
    pstate[seat, E.PS_MONEY] -= options[k, E.OPT_COST]
    if kind == E.A_CORNERSTONE:
        E.remove_slot(cs_hands[seat], pstate[seat, E.PS_N_CS], options[k, E.OPT_SLOT])
        pstate[seat, E.PS_N_CS] -= 1
    E.place_tile(
        seat,
        options[k, E.OPT_TILE],
        options[k, E.OPT_CELL],
        cells,
        pstate,
        stats,
        tiles,
        effects,
        no_events,
        gstate,
    )


@njit
def strike(selector, disaster, cells, pstate, n_players, tiles, effects, options, state):
    """Every other player pays the disaster off when they can, else loses a random tile of
    each sacrifice step."""
    for s in range(n_players):
        if s == selector:
            continue
        cost = E.disaster_cost(cells[s], tiles, disaster)
        if cost <= pstate[s, E.PS_MONEY]:
            pstate[s, E.PS_MONEY] -= cost
            continue
        for step in range(E.sacrifice_steps(disaster)):
            n = E.sacrifice_options(cells[s], tiles, disaster, step, options)
            if n > 0:
                cells[s, options[rng.randint(state, n), E.OPT_CELL]] = K.EMPTY


@njit
def deal_unseen(gen, seat, cells, hands, pstate, n_players, tiles, rules, state):
    """Fill the other players' hands (their sizes kept) with tiles of generation ``gen`` that
    are neither in a city nor in the seat's hand."""
    deck = np.empty(tiles.shape[0], dtype=np.int64)
    n_deck = E.build_deck(gen, n_players, tiles, rules, deck)
    pool = np.empty(n_deck, dtype=np.int64)
    n_pool = 0
    for k in range(n_deck):
        tile = deck[k]
        seen = False
        for s in range(n_players):
            for cell in range(K.N_CELLS):
                if cells[s, cell] == tile:
                    seen = True
            if s == seat:
                for h in range(pstate[s, E.PS_HAND_SIZE]):
                    if hands[s, h] == tile:
                        seen = True
        if not seen:
            pool[n_pool] = tile
            n_pool += 1
    rng.shuffle(state, pool, n_pool)
    top = 0
    for s in range(n_players):
        if s == seat:
            continue
        size = min(pstate[s, E.PS_HAND_SIZE], n_pool - top)
        for h in range(size):
            hands[s, h] = pool[top]
            top += 1
        pstate[s, E.PS_HAND_SIZE] = size


@njit
def deal_generation(gen, cells, hands, pstate, n_players, tiles, rules, state):
    deck = np.empty(tiles.shape[0], dtype=np.int64)
    n_deck = E.build_deck(gen, n_players, tiles, rules, deck)
    rng.shuffle(state, deck, n_deck)
    dealt = 0
    for s in range(n_players):
        size = min(E.HAND_SIZE, n_deck - dealt)
        for h in range(size):
            hands[s, h] = deck[dealt + h]
        dealt += size
        pstate[s, E.PS_HAND_SIZE] = size


@njit
def play_out(
    seat,
    first_turn,
    cells,
    hands,
    pstate,
    cs_hands,
    gstate,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
    state,
):
    """Play random turns from ``first_turn`` to the end of the game (hands already dealt for
    the current generation) and return the seat's final margin."""
    n_players = gstate[E.GS_N_PLAYERS]
    options = np.empty((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
    stats = np.zeros(R.N_PLAYER_COLS, dtype=np.int32)
    no_events = np.zeros((0, R.N_EVENT_COLS), dtype=np.int32)
    goods_of = np.zeros(n_players, dtype=np.int64)
    selected = np.empty(n_players, dtype=np.int64)
    for turn in range(first_turn, E.N_TURNS):
        gen = turn // E.TURNS_PER_GENERATION + 1
        t = turn % E.TURNS_PER_GENERATION
        if t == 0:
            deal_generation(gen, cells, hands, pstate, n_players, tiles, rules, state)
        for s in range(n_players):
            goods_of[s] = city_goods(cells[s], tiles)
        selector = -1
        for s in range(n_players):
            size = pstate[s, E.PS_HAND_SIZE]
            selected[s] = -1
            if size == 0:
                continue
            slot = rng.randint(state, size)
            selected[s] = hands[s, slot]
            E.remove_slot(hands[s], size, slot)
            pstate[s, E.PS_HAND_SIZE] = size - 1
            if tiles[selected[s], K.C_DISASTER] != K.DIS_NONE:
                selector = s
                continue
            k = random_action(
                s,
                selected[s],
                gen,
                cells,
                pstate,
                cs_hands,
                goods_of,
                n_players,
                tiles,
                req,
                goods_tier,
                options,
                state,
            )
            apply_action(
                s, options, k, cells, pstate, cs_hands, stats, tiles, effects, no_events, gstate
            )
        if selector >= 0:
            strike(
                selector,
                tiles[selected[selector], K.C_DISASTER],
                cells,
                pstate,
                n_players,
                tiles,
                effects,
                options,
                state,
            )
        if t == E.TURNS_PER_GENERATION - 1:
            for s in range(n_players):
                pstate[s, E.PS_HAND_SIZE] = 0
                pstate[s, E.PS_MONEY] += city_income(cells[s], tiles, effects)
        else:
            E.pass_left(hands, pstate, n_players)
    return margin(seat, cells, pstate, n_players, tiles, effects, goods_tier, rules)


@njit
def margin(seat, cells, pstate, n_players, tiles, effects, goods_tier, rules):
    """Seat's final score minus the best other score (its own score when playing alone)."""
    out = np.empty(K.N_SCORE, dtype=np.int32)
    mine = 0
    best_other = -1 << 30
    for s in range(n_players):
        money = pstate[s, E.PS_MONEY] + pstate[s, E.PS_PENDING]
        score_city(cells[s], money, tiles, effects, goods_tier, rules, out)
        if s == seat:
            mine = out[K.S_TOTAL]
        else:
            best_other = max(best_other, out[K.S_TOTAL])
    return float(mine) if n_players == 1 else float(mine - best_other)


@njit
def candidate_value(
    params,
    seat,
    decision,
    options,
    k,
    base_seed,
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
    """Mean final margin of option k over the playouts."""
    n_players = gstate[E.GS_N_PLAYERS]
    weights = vp_weights()
    actions = np.empty((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
    stats = np.zeros(R.N_PLAYER_COLS, dtype=np.int32)
    no_events = np.zeros((0, R.N_EVENT_COLS), dtype=np.int32)
    ctx = np.empty(N_CTX, dtype=np.int64)
    state = np.zeros(2, dtype=np.uint64)
    n_playouts = max(int(params[R_PLAYOUTS]), 1)
    total = 0.0
    for p in range(n_playouts):
        rng.seed_state(state, base_seed + np.uint64(p))
        my_cells = cells.copy()
        my_hands = hands.copy()
        my_pstate = pstate.copy()
        my_cs = cs_hands.copy()
        gen = max(gstate[E.GS_GEN], 1)
        deal_unseen(gen, seat, my_cells, my_hands, my_pstate, n_players, tiles, rules, state)
        if decision == E.D_ACTION:
            apply_action(
                seat,
                options,
                k,
                my_cells,
                my_pstate,
                my_cs,
                stats,
                tiles,
                effects,
                no_events,
                gstate,
            )
        else:
            tile = options[k, E.OPT_TILE]
            E.remove_slot(my_hands[seat], my_pstate[seat, E.PS_HAND_SIZE], options[k, E.OPT_SLOT])
            my_pstate[seat, E.PS_HAND_SIZE] -= 1
            if tiles[tile, K.C_DISASTER] != K.DIS_NONE:
                strike(
                    seat,
                    tiles[tile, K.C_DISASTER],
                    my_cells,
                    my_pstate,
                    n_players,
                    tiles,
                    effects,
                    actions,
                    state,
                )
            else:
                n = E.action_options(
                    seat,
                    tile,
                    gen,
                    my_cells,
                    my_pstate,
                    my_cs,
                    goods_of,
                    n_players,
                    tiles,
                    req,
                    goods_tier,
                    actions,
                )
                build_context(
                    my_cells[seat].copy(),
                    seat_money(my_pstate, seat),
                    gstate,
                    tiles,
                    effects,
                    goods_tier,
                    rules,
                    ctx,
                )
                best = 0
                best_value = -1e18
                for a in range(n):
                    value = action_value(
                        weights, actions, a, my_cells[seat], tiles, effects, goods_tier, rules, ctx
                    )
                    if value > best_value:
                        best_value = value
                        best = a
                apply_action(
                    seat,
                    actions,
                    best,
                    my_cells,
                    my_pstate,
                    my_cs,
                    stats,
                    tiles,
                    effects,
                    no_events,
                    gstate,
                )
        turn = gstate[E.GS_TURN]
        if turn % E.TURNS_PER_GENERATION == E.TURNS_PER_GENERATION - 1:
            for s in range(n_players):
                my_pstate[s, E.PS_HAND_SIZE] = 0
                my_pstate[s, E.PS_MONEY] += city_income(my_cells[s], tiles, effects)
        else:
            E.pass_left(my_hands, my_pstate, n_players)
        total += play_out(
            seat,
            turn + 1,
            my_cells,
            my_hands,
            my_pstate,
            my_cs,
            gstate,
            tiles,
            req,
            effects,
            goods_tier,
            rules,
            state,
        )
    return total / n_playouts


@njit
def choose_rollout(
    params,
    rng_state,
    decision,
    options,
    n_options,
    seat,
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
    weights = vp_weights()
    if (decision != E.D_SELECT and decision != E.D_ACTION) or gstate[E.GS_TURN] < 0:
        return choose_evaluated(
            weights,
            rng_state,
            decision,
            options,
            n_options,
            seat,
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
    city = cells[seat].copy()
    ctx = np.empty(N_CTX, dtype=np.int64)
    build_context(city, seat_money(pstate, seat), gstate, tiles, effects, goods_tier, rules, ctx)
    ranked = np.empty(n_options, dtype=np.float64)
    if decision == E.D_ACTION:
        for k in range(n_options):
            ranked[k] = action_value(
                weights, options, k, city, tiles, effects, goods_tier, rules, ctx
            )
    else:
        select_values(
            weights,
            options,
            n_options,
            seat,
            gstate,
            pstate,
            cells,
            cs_hands,
            goods_of,
            tiles,
            req,
            effects,
            goods_tier,
            rules,
            city,
            ctx,
            ranked,
        )
    order = np.argsort(-ranked)
    n_candidates = min(max(int(params[R_CANDIDATES]), 1), n_options)
    base_seed = rng.next_u64(rng_state)
    values = np.full(n_options, -1e18)
    for c in range(n_candidates):
        k = order[c]
        values[k] = candidate_value(
            params,
            seat,
            decision,
            options,
            k,
            base_seed,
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
    return pick_best(values, n_options, rng_state)
