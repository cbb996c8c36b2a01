"""``rollout``: choose a tile and an action by playing the rest of the game out, many times.

At a selection or action decision, the options are ranked by the builder archetype's
evaluation (``strategies.evaluate``); the best ``candidates`` of them are each played out
``playouts`` times to the end of the game from a copy of the state, and the option with the
best mean final margin (own score minus the best other score) is taken. Every candidate sees
the same playout seeds (common random numbers). With one candidate, rollout plays as the
builder; other decisions (draft, buying, disasters, cornerstones) are the builder's.

A playout is a fast, simplified game over the engine's own rule functions, played by
competent players: every player, the rollout's own seat included, selects and acts with the
builder's evaluation (ties broken at random). What the player cannot know is drawn anew: the
other players' hands from the tiles of this generation not in sight, later generations' decks
from their tiles, and in the random-disasters variant the turn of each generation's disaster
among the turns still possible. These draws come from a stream of their own, so that every
candidate meets the same deals however its playout unfolds (common random numbers). The other
players skip the rest of the current turn; then each turn everyone selects, then acts in seat
order with the goods of the cities as they were at the start of the turn; goods are paid to
the supply (sellers get nothing), a Disaster strikes at the end of the turn (pay or
sacrifice, the builder's choice, the insured spared), and placement effects that choose
cornerstones are skipped. Opponents' unplaced cornerstones are used as they are (a
simplification: they are hidden).
"""

import numpy as np

from sim.core import rng
from sim.core.jit import njit
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom import records as R
from sim.neom.effects import city_income, insured_against
from sim.neom.grid import city_goods, masks_of
from sim.neom.scoring import score_city
from strategies.neom.archetypes import ARCHETYPES
from strategies.neom.evaluate import (
    N_CTX,
    action_values,
    build_context,
    choose_evaluated,
    pick_best,
    seat_money,
    select_values,
)

# Parameter slots of rollout.
R_PLAYOUTS = 0
R_CANDIDATES = 1

# The weights of the builder archetype: candidate ranking, playout players, other decisions.
# Numba freezes a global array as a read-only constant, and a read-only array is another type:
# handed to the shared evaluation as is, it would compile that whole evaluation a second time
# (minutes). The kernels pass ``policy_weights()``, a writable copy.
POLICY = np.array(next(a for a in ARCHETYPES if a.name == "builder").defaults())


@njit
def policy_weights():
    return POLICY.copy()


NO_TURN = -1
# No seat: nobody selected the Disaster, or a random disaster spares nobody. A NumPy scalar, not
# a literal -1: Numba compiles a callee again for a literal argument (even one a loop later
# replaces), and finish_turn and strike are large.
NO_SEAT = np.int64(-1)


@njit
def draw_random_turns(turn, gstate, rules, state, random_turns):
    """Random-disasters variant: for each generation whose disaster has not struck, a turn
    (0..6) drawn uniformly among those still possible; NO_TURN otherwise."""
    random_turns[:] = NO_TURN
    if rules[K.RO_VARIANT] != K.V_RANDOM_DISASTERS:
        return
    current = turn // E.TURNS_PER_GENERATION
    for g in range(current, E.N_GENERATIONS):
        if (gstate[E.GS_DISASTERS] >> g) & 1:
            continue
        first = turn % E.TURNS_PER_GENERATION if g == current else 0
        random_turns[g] = first + rng.randint(state, E.TURNS_PER_GENERATION - first)


@njit
def policy(
    decision,
    options,
    n,
    seat,
    state,
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
    """The playout players' choice: the builder's evaluation."""
    return choose_evaluated(
        policy_weights(),
        state,
        decision,
        options,
        n,
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
        np.empty(0, dtype=np.int64),
    )


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
def act(
    seat,
    tile,
    state,
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
    no_events,
):
    """The seat's action with its selected (non-Disaster) tile, chosen by the policy."""
    n = E.action_options(
        seat,
        tile,
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
    )
    k = policy(
        E.D_ACTION,
        options,
        n,
        seat,
        state,
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
    apply_action(
        seat, options, k, cells, pstate, cs_hands, stats, tiles, effects, no_events, gstate
    )


@njit
def strike(
    spared,
    disaster,
    state,
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
):
    """Every player but ``spared`` and the insured pays the disaster off or sacrifices
    tiles, as the policy chooses."""
    gstate[E.GS_DISASTERS] |= 1 << (gstate[E.GS_GEN] - 1)
    gstate[E.GS_RESOLVING] = disaster
    for s in range(gstate[E.GS_N_PLAYERS]):
        if s == spared or insured_against(cells[s], effects, disaster):
            continue
        n = E.disaster_options(cells[s], pstate[s, E.PS_MONEY], tiles, disaster, options)
        k = policy(
            E.D_DISASTER,
            options,
            n,
            s,
            state,
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
            pstate[s, E.PS_MONEY] -= options[k, E.OPT_COST]
            continue
        for step in range(E.sacrifice_steps(disaster)):
            n = E.sacrifice_options(cells[s], tiles, disaster, step, options)
            if n == 0:
                continue
            k = policy(
                E.D_SACRIFICE,
                options,
                n,
                s,
                state,
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
            cells[s, options[k, E.OPT_CELL]] = K.EMPTY
    gstate[E.GS_RESOLVING] = K.DIS_NONE


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
def finish_turn(
    selector,
    disaster,
    random_turns,
    state,
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
):
    """End of turn ``gstate[GS_TURN]``: a selected Disaster strikes, then the generation's
    random disaster when this is its turn; hands pass left, or income at a generation's end."""
    n_players = gstate[E.GS_N_PLAYERS]
    turn = gstate[E.GS_TURN]
    gen = gstate[E.GS_GEN]
    t = turn % E.TURNS_PER_GENERATION
    if selector >= 0 and n_players > 1:
        strike(
            selector,
            disaster,
            state,
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
        )
    if random_turns[gen - 1] == t:
        kind = E.generation_disaster(gen, tiles)
        if kind != K.DIS_NONE:
            strike(
                NO_SEAT,
                kind,
                state,
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
            )
    if t == E.TURNS_PER_GENERATION - 1:
        for s in range(n_players):
            pstate[s, E.PS_HAND_SIZE] = 0
            pstate[s, E.PS_MONEY] += city_income(
                cells[s], tiles, masks_of(cells[s], tiles), effects
            )
    else:
        E.pass_left(hands, pstate, n_players)


@njit
def play_out(
    seat,
    random_turns,
    deals,
    state,
    gstate,
    pstate,
    cells,
    hands,
    cs_hands,
    tiles,
    req,
    effects,
    goods_tier,
    rules,
):
    """Play the turns after ``gstate[GS_TURN]`` to the end of the game (the arrays are the
    playout's own copies) and return the seat's final margin. ``deals`` draws the hidden
    tiles, ``state`` breaks the players' ties."""
    n_players = gstate[E.GS_N_PLAYERS]
    options = np.empty((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
    stats = np.zeros(R.N_PLAYER_COLS, dtype=np.int64)
    no_events = np.zeros((0, R.N_EVENT_COLS), dtype=np.int64)
    goods_of = np.zeros(n_players, dtype=np.int64)
    selected = np.empty(n_players, dtype=np.int64)
    for turn in range(gstate[E.GS_TURN] + 1, E.N_TURNS):
        gen = turn // E.TURNS_PER_GENERATION + 1
        gstate[E.GS_TURN] = turn
        gstate[E.GS_GEN] = gen
        if turn % E.TURNS_PER_GENERATION == 0:
            deal_generation(gen, cells, hands, pstate, n_players, tiles, rules, deals)
        for s in range(n_players):
            goods_of[s] = city_goods(cells[s], tiles)
        selector = NO_SEAT
        for s in range(n_players):
            size = pstate[s, E.PS_HAND_SIZE]
            selected[s] = -1
            if size == 0:
                continue
            for h in range(size):
                E.set_option(options, h, 0, hands[s, h], -1, -1, h, -1, -1, 0)
            slot = policy(
                E.D_SELECT,
                options,
                size,
                s,
                state,
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
            selected[s] = hands[s, slot]
            E.remove_slot(hands[s], size, slot)
            pstate[s, E.PS_HAND_SIZE] = size - 1
            if tiles[selected[s], K.C_DISASTER] != K.DIS_NONE:
                selector = s
        for s in range(n_players):
            if selected[s] < 0 or s == selector:
                continue
            act(
                s,
                selected[s],
                state,
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
                no_events,
            )
        disaster = tiles[selected[selector], K.C_DISASTER] if selector >= 0 else K.DIS_NONE
        finish_turn(
            selector,
            disaster,
            random_turns,
            state,
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
        )
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
    actions = np.empty((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
    stats = np.zeros(R.N_PLAYER_COLS, dtype=np.int64)
    no_events = np.zeros((0, R.N_EVENT_COLS), dtype=np.int64)
    random_turns = np.empty(E.N_GENERATIONS, dtype=np.int64)
    deals = np.zeros(2, dtype=np.uint64)
    state = np.zeros(2, dtype=np.uint64)
    n_playouts = max(int(params[R_PLAYOUTS]), 1)
    turn = gstate[E.GS_TURN]
    total = 0.0
    for p in range(n_playouts):
        rng.seed_state(deals, base_seed + np.uint64(2 * p))
        rng.seed_state(state, base_seed + np.uint64(2 * p + 1))
        my_gstate = gstate.copy()
        my_cells = cells.copy()
        my_hands = hands.copy()
        my_pstate = pstate.copy()
        my_cs = cs_hands.copy()
        deal_unseen(
            my_gstate[E.GS_GEN],
            seat,
            my_cells,
            my_hands,
            my_pstate,
            my_gstate[E.GS_N_PLAYERS],
            tiles,
            rules,
            deals,
        )
        draw_random_turns(turn, my_gstate, rules, deals, random_turns)
        selector = NO_SEAT
        disaster = K.DIS_NONE
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
                my_gstate,
            )
        else:
            tile = options[k, E.OPT_TILE]
            E.remove_slot(my_hands[seat], my_pstate[seat, E.PS_HAND_SIZE], options[k, E.OPT_SLOT])
            my_pstate[seat, E.PS_HAND_SIZE] -= 1
            if tiles[tile, K.C_DISASTER] != K.DIS_NONE:
                selector = seat
                disaster = tiles[tile, K.C_DISASTER]
            else:
                act(
                    seat,
                    tile,
                    state,
                    my_gstate,
                    my_pstate,
                    my_cells,
                    my_hands,
                    my_cs,
                    goods_of,
                    tiles,
                    req,
                    effects,
                    goods_tier,
                    rules,
                    actions,
                    stats,
                    no_events,
                )
        finish_turn(
            selector,
            disaster,
            random_turns,
            state,
            my_gstate,
            my_pstate,
            my_cells,
            my_hands,
            my_cs,
            goods_of,
            tiles,
            req,
            effects,
            goods_tier,
            rules,
            actions,
        )
        total += play_out(
            seat,
            random_turns,
            deals,
            state,
            my_gstate,
            my_pstate,
            my_cells,
            my_hands,
            my_cs,
            tiles,
            req,
            effects,
            goods_tier,
            rules,
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
    n_candidates = min(max(int(params[R_CANDIDATES]), 1), n_options)
    if (
        (decision != E.D_SELECT and decision != E.D_ACTION)
        or gstate[E.GS_TURN] < 0
        or n_candidates == 1
    ):
        return policy(
            decision,
            options,
            n_options,
            seat,
            rng_state,
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
    no_memo = np.empty(0, dtype=np.int64)
    if decision == E.D_ACTION:
        action_values(
            policy_weights(),
            options,
            n_options,
            city,
            tiles,
            effects,
            goods_tier,
            rules,
            ctx,
            ranked,
            no_memo,
        )
    else:
        select_values(
            policy_weights(),
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
            no_memo,
        )
    order = np.argsort(-ranked, kind="mergesort")
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
