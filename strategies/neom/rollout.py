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
other players' hands from the tiles of this generation not in sight and later generations'
decks from their tiles (the random-disasters variant's turns are shown, ``GS_RANDOM_TURN``, and
used as they are). These draws come from a stream of their own, so that every candidate meets
the same deals however its playout unfolds (common random numbers). The other players skip the
rest of the current turn, but the selections revealed before the actions (RULES.md P3) stand:
a Disaster another seat selected this turn strikes at its end. Then each turn everyone selects,
the selections are revealed (``PS_SELECTED``) and everyone acts in seat order with the goods of
the cities as they were at the start of the turn; goods are paid to the supply (sellers get
nothing), the turn's disasters strike at its end as the game loop finds them
(``sim.neom.engine.turn_disaster_of``: the selected Disaster, the random-disasters turn; pay or
sacrifice, the builder's choice, the insured spared; solo playouts leave the pack's Disaster
out), and placement effects that choose cornerstones are skipped. Opponents' unplaced
cornerstones are used as they are (a simplification: they are hidden).
"""

import numpy as np

from sim.core import rng
from sim.core.jit import njit
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom.effects import city_income, insured_against
from sim.neom.grid import city_goods, masks_of
from sim.neom.scoring import score_city
from sim.neom.state import Game
from strategies.neom.archetypes import ARCHETYPES, W_VP
from strategies.neom.evaluate import (
    N_CTX,
    action_values,
    build_context,
    choose_evaluated,
    memo_none,
    pending_disaster,
    pick_best,
    seat_money,
    select_values,
    subtract_disaster_losses,
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


# No seat: nobody selected the Disaster. A NumPy scalar, not a literal -1: Numba compiles a
# callee again for a literal argument (even one a loop later replaces).
NO_SEAT = np.int64(-1)


@njit(inline="always")
def policy(decision, n, seat, state, game):
    """The playout players' choice among ``game.options[:n]``: the builder's evaluation."""
    return choose_evaluated(policy_weights(), state, decision, n, seat, game, memo_none())


@njit(inline="always")
def apply_action(seat, options, k, game):
    """Apply action option k of ``options`` for ``seat`` to the playout ``game``."""
    pstate = game.pstate
    kind = options[k, E.OPT_KIND]
    if kind == E.A_SELL:
        pstate[seat, E.PS_MONEY] += E.SELL_COINS
        return
    pstate[seat, E.PS_MONEY] -= options[k, E.OPT_COST]
    if kind == E.A_CORNERSTONE:
        E.remove_slot(game.cs_hands[seat], pstate[seat, E.PS_N_CS], options[k, E.OPT_SLOT])
        pstate[seat, E.PS_N_CS] -= 1
    E.place_tile(
        seat,
        options[k, E.OPT_TILE],
        options[k, E.OPT_CELL],
        game.cells,
        pstate,
        game.stats[0],
        game.tiles,
        game.effects,
        game.events,
        game.gstate,
    )


@njit(inline="always")
def act(seat, tile, state, game):
    """The seat's action with its selected (non-Disaster) tile, chosen by the policy."""
    n = E.action_options(
        seat,
        tile,
        game.gstate[E.GS_GEN],
        game.cells,
        game.pstate,
        game.cs_hands,
        game.goods_of,
        game.gstate[E.GS_N_PLAYERS],
        game.tiles,
        game.req,
        game.goods_tier,
        game.options,
    )
    k = policy(E.D_ACTION, n, seat, state, game)
    apply_action(seat, game.options, k, game)


@njit(inline="always")
def strike(spared, disaster, state, game):
    """Every player but ``spared`` and the insured pays the disaster off or sacrifices
    tiles, as the policy chooses."""
    gstate = game.gstate
    pstate = game.pstate
    options = game.options
    gstate[E.GS_DISASTERS] |= 1 << (gstate[E.GS_GEN] - 1)
    gstate[E.GS_RESOLVING] = disaster
    for s in range(gstate[E.GS_N_PLAYERS]):
        city = game.cells[s]
        if s == spared or insured_against(city, game.effects, disaster):
            continue
        n = E.disaster_options(city, pstate[s, E.PS_MONEY], game.tiles, disaster, options)
        k = policy(E.D_DISASTER, n, s, state, game)
        if options[k, E.OPT_KIND] == E.DR_PAY:
            pstate[s, E.PS_MONEY] -= options[k, E.OPT_COST]
            continue
        for step in range(E.sacrifice_steps(disaster)):
            n = E.sacrifice_options(city, game.tiles, disaster, step, options)
            if n == 0:
                continue
            k = policy(E.D_SACRIFICE, n, s, state, game)
            city[options[k, E.OPT_CELL]] = K.EMPTY
    gstate[E.GS_RESOLVING] = K.DIS_NONE


@njit
def deal_unseen(gen, seat, game, state):
    """Fill the other players' hands (their sizes kept) with tiles of generation ``gen`` that
    are neither in a city nor in the seat's hand."""
    n_players = game.gstate[E.GS_N_PLAYERS]
    cells = game.cells
    hands = game.hands
    pstate = game.pstate
    deck = np.empty(game.tiles.shape[0], dtype=np.int64)
    n_deck = E.build_deck(gen, n_players, game.tiles, game.rules, deck)
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
def deal_generation(gen, game, state):
    n_players = game.gstate[E.GS_N_PLAYERS]
    deck = np.empty(game.tiles.shape[0], dtype=np.int64)
    n_deck = E.build_deck(gen, n_players, game.tiles, game.rules, deck)
    rng.shuffle(state, deck, n_deck)
    dealt = 0
    for s in range(n_players):
        size = min(E.HAND_SIZE, n_deck - dealt)
        for h in range(size):
            game.hands[s, h] = deck[dealt + h]
        dealt += size
        game.pstate[s, E.PS_HAND_SIZE] = size


@njit(inline="always")
def finish_turn(state, game):
    """End of turn ``gstate[GS_TURN]``: its disasters strike as the game loop finds them (the
    Disaster a seat selected, from the revealed PS_SELECTED; the random-disasters variant's on
    its shown turn), the selections are cleared; hands pass left, or income at a generation's
    end."""
    gstate = game.gstate
    pstate = game.pstate
    n_players = gstate[E.GS_N_PLAYERS]
    t = gstate[E.GS_TURN] % E.TURNS_PER_GENERATION
    # One call site of strike (each is a large compiled copy).
    for k in range(2):
        source = E.SRC_SELECTED if k == 0 else E.SRC_RANDOM
        spared, kind, _ = E.turn_disaster_of(source, gstate, pstate, game.hands, game.tiles)
        if kind != K.DIS_NONE:
            strike(spared, kind, state, game)
    for s in range(n_players):
        pstate[s, E.PS_SELECTED] = -1
    if t == E.TURNS_PER_GENERATION - 1:
        for s in range(n_players):
            city = game.cells[s]
            pstate[s, E.PS_HAND_SIZE] = 0
            pstate[s, E.PS_MONEY] += city_income(
                city, game.tiles, masks_of(city, game.tiles), game.effects
            )
    else:
        E.pass_left(game.hands, pstate, n_players)


@njit(inline="always")
def play_out(seat, deals, state, game):
    """Play the turns after ``gstate[GS_TURN]`` to the end of the game (``game``: the playout's
    own copy) and return the seat's final margin. ``deals`` draws the hidden tiles, ``state``
    breaks the players' ties."""
    gstate = game.gstate
    pstate = game.pstate
    hands = game.hands
    tiles = game.tiles
    n_players = gstate[E.GS_N_PLAYERS]
    selected = np.empty(n_players, dtype=np.int64)
    for turn in range(gstate[E.GS_TURN] + 1, E.N_TURNS):
        gen = turn // E.TURNS_PER_GENERATION + 1
        gstate[E.GS_TURN] = turn
        gstate[E.GS_GEN] = gen
        if turn % E.TURNS_PER_GENERATION == 0:
            deal_generation(gen, game, deals)
        for s in range(n_players):
            game.goods_of[s] = city_goods(game.cells[s], tiles)
        selector = NO_SEAT
        for s in range(n_players):
            size = pstate[s, E.PS_HAND_SIZE]
            selected[s] = -1
            if size == 0:
                continue
            for h in range(size):
                E.set_option(game.options, h, 0, hands[s, h], -1, -1, h, -1, -1, 0)
            slot = policy(E.D_SELECT, size, s, state, game)
            selected[s] = hands[s, slot]
            E.remove_slot(hands[s], size, slot)
            pstate[s, E.PS_HAND_SIZE] = size - 1
            if tiles[selected[s], K.C_DISASTER] != K.DIS_NONE:
                selector = s
        # Revealed before the actions: the policy's action sees a Disaster selected this turn.
        for s in range(n_players):
            pstate[s, E.PS_SELECTED] = selected[s]
        for s in range(n_players):
            if selected[s] < 0 or s == selector:
                continue
            act(s, selected[s], state, game)
        finish_turn(state, game)
    return margin(seat, game)


@njit
def margin(seat, game):
    """Seat's final score minus the best other score (its own score when playing alone)."""
    n_players = game.gstate[E.GS_N_PLAYERS]
    out = np.empty(K.N_SCORE, dtype=np.int32)
    mine = 0
    best_other = -1 << 30
    for s in range(n_players):
        money = seat_money(game.pstate, s)
        score_city(game.cells[s], money, game.tiles, game.effects, game.goods_tier, game.rules, out)
        if s == seat:
            mine = out[K.S_TOTAL]
        else:
            best_other = max(best_other, out[K.S_TOTAL])
    return float(mine) if n_players == 1 else float(mine - best_other)


@njit
def new_playout(game):
    """A game for playouts from ``game``: the same catalogue, rules and seats, room for its
    own copy of the state (``start_playout``), its own scratch, no events."""
    return Game(
        game.tiles,
        game.req,
        game.effects,
        game.goods_tier,
        game.board_center,
        game.rules,
        np.empty_like(game.gstate),
        np.empty_like(game.pstate),
        np.empty_like(game.cells),
        np.empty_like(game.hands),
        np.empty_like(game.cs_hands),
        np.empty_like(game.goods_of),
        np.empty_like(game.cs_pile),
        np.empty_like(game.cs_box),
        game.seats,
        game.strategy_ids,
        game.strategy_params,
        game.strat_rng,
        game.memos,
        np.empty_like(game.options),
        np.empty_like(game.summaries),
        np.empty_like(game.req_costs),
        np.zeros((1, game.stats.shape[1]), dtype=np.int64),
        np.zeros((0, game.events.shape[1]), dtype=np.int64),
    )


@njit
def start_playout(game, playout):
    """Copy the state of ``game`` into ``playout`` (``new_playout``)."""
    playout.gstate[:] = game.gstate
    playout.pstate[:, :] = game.pstate
    playout.cells[:, :] = game.cells
    playout.hands[:, :] = game.hands
    playout.cs_hands[:, :] = game.cs_hands
    playout.goods_of[:] = game.goods_of
    playout.cs_pile[:] = game.cs_pile
    playout.cs_box[:] = game.cs_box


@njit(inline="always")
def candidate_value(params, seat, decision, k, base_seed, game, playout):
    """Mean final margin of option k of ``game.options`` over the playouts (each played in
    ``playout``, a copy of ``game``)."""
    deals = np.zeros(2, dtype=np.uint64)
    state = np.zeros(2, dtype=np.uint64)
    options = game.options
    tiles = game.tiles
    n_playouts = max(int(params[R_PLAYOUTS]), 1)
    n_players = game.gstate[E.GS_N_PLAYERS]
    total = 0.0
    for p in range(n_playouts):
        rng.seed_state(deals, base_seed + np.uint64(2 * p))
        rng.seed_state(state, base_seed + np.uint64(2 * p + 1))
        start_playout(game, playout)
        deal_unseen(playout.gstate[E.GS_GEN], seat, playout, deals)
        if decision == E.D_ACTION:
            # Every selection of the turn is revealed by now (PS_SELECTED, copied).
            apply_action(seat, options, k, playout)
        else:
            # Selecting: with 3-5 players the others' selections are still secret; with 2 the
            # first seat's (set only if it played before us this turn) is known.
            if n_players > 2:
                for s in range(n_players):
                    if s != seat:
                        playout.pstate[s, E.PS_SELECTED] = -1
            tile = options[k, E.OPT_TILE]
            hand_size = playout.pstate[seat, E.PS_HAND_SIZE]
            E.remove_slot(playout.hands[seat], hand_size, options[k, E.OPT_SLOT])
            playout.pstate[seat, E.PS_HAND_SIZE] -= 1
            playout.pstate[seat, E.PS_SELECTED] = tile
            if tiles[tile, K.C_DISASTER] == K.DIS_NONE:
                act(seat, tile, state, playout)
        finish_turn(state, playout)
        total += play_out(seat, deals, state, playout)
    return total / n_playouts


@njit
def choose_rollout(params, rng_state, decision, n_options, seat, game):
    n_candidates = min(max(int(params[R_CANDIDATES]), 1), n_options)
    gstate = game.gstate
    if (
        (decision != E.D_SELECT and decision != E.D_ACTION)
        or gstate[E.GS_TURN] < 0
        or n_candidates == 1
    ):
        return policy(decision, n_options, seat, rng_state, game)
    city = game.cells[seat].copy()
    ctx = np.empty(N_CTX, dtype=np.int64)
    money = seat_money(game.pstate, seat)
    build_context(city, money, gstate, game.tiles, game.effects, game.goods_tier, game.rules, ctx)
    ranked = np.empty(n_options, dtype=np.float64)
    if decision == E.D_ACTION:
        weights = policy_weights()
        action_values(
            weights, game.options, n_options, city, game.tiles, game.effects,
            game.goods_tier, game.rules, ctx, ranked, memo_none(),
        )  # fmt: skip
        disaster = pending_disaster(seat, city, game)
        if disaster != K.DIS_NONE:
            subtract_disaster_losses(
                weights[W_VP], game.options, n_options, city, game.pstate[seat, E.PS_MONEY],
                disaster, game.tiles, game.effects, ranked,
            )  # fmt: skip
    else:
        select_values(policy_weights(), n_options, seat, game, city, ctx, ranked, memo_none())
    order = np.argsort(-ranked, kind="mergesort")
    base_seed = rng.next_u64(rng_state)
    values = np.full(n_options, -1e18)
    playout = new_playout(game)
    for c in range(n_candidates):
        k = order[c]
        values[k] = candidate_value(params, seat, decision, k, base_seed, game, playout)
    return pick_best(values, n_options, rng_state)
