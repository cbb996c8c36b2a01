"""The search strategies, ``expert`` and ``rollout``: each selection and action chosen by playing
the game out from it many times, on the real game loop.

A seat played by a search stops the game loop before each of its selections and actions
(``strategies.neom.play.advance`` returns PAUSED). ``choose_paused`` lists that step's options
with the loop's own listing, ranks them with the seat's playout policy (the evaluation of
``strategies.neom.evaluate`` with the policy's weights) and plays its best ``candidates`` out:

- a playout copies the state into a second bundle (``new_playout``), redraws there what the
  seat cannot know (``determinize``), hands the candidate to the step (``play.force``) and runs
  ``play.advance`` from that step to the end of the game: the same compiled loop and rule
  functions as a real game, every seat played by the policy with a stream of its own;
- playout j of every candidate uses the same determinization and the same seat streams
  (common random numbers): candidates differ by their move, not by their luck;
- the expert spends ``playouts`` playouts per decision on its candidates by UCB1 (exploration
  constant ``explore``, values in [0, 1]: a mix of the win and the score margin, ``margin``)
  and takes the best mean value; rollout plays each candidate ``playouts`` times and takes the
  best mean final margin (own score minus the best other score).

Its other decisions (draft, purchases, disasters, cornerstone effects) are its policy's, taken
in the loop by the ``search_policy`` family (``strategies.neom.pieces``). All of this lives in
this module's own ``play_batch``: a lineup without a search never compiles it
(``strategies.neom.entries``).
"""

import numpy as np

from sim.core import rng
from sim.core.jit import njit
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom import records as R
from sim.neom.effects import city_income
from sim.neom.grid import popcount
from sim.neom.state import Game, view
from strategies.neom import play as G
from strategies.neom.dispatch import expert_policy, rollout_policy
from strategies.neom.evaluate import evaluated_values, memo_size
from strategies.neom.registry import (
    EVALUATED_ID,
    EXPERT_ID,
    N_PARAMS,
    R_CANDIDATES,
    R_PLAYOUTS,
    X_ACTIONS,
    X_CANDIDATES,
    X_EXPLORE,
    X_MARGIN,
    X_PLAYOUTS,
    X_TRUNCATE,
)

# A playout's value: 0.5 + 0.5 tanh(margin / MARGIN_SCALE) mixed with the win (expert).
MARGIN_SCALE = 20.0
# Playout j's streams: its determinization; seat s's is 1 + s. An np.int64, not a Python int:
# a compiled call passing a module-level int passes a Literal (one more body of the callee).
DETERMINIZE_STREAM = np.int64(0)

# What a seat knows of another seat's drafted cornerstone (``cornerstone_knowledge``).
CS_KNOWN = 0
CS_UNSEEN = 1
CS_PAIR = 2  # 3-5 players: one of the two tiles of the seat's first draft hand passed on


# --- what the seat cannot know -------------------------------------------------------------
@njit
def cornerstone_knowledge(seat, other, pick, n_players, beginner):
    """What ``seat`` knows of ``other``'s draft pick ``pick`` (RULES.md P2: 4 each, keep one
    and pass the rest left, three times; the last of each hand to the discard pile, which is
    seen). Hand h is picked by seats h, h + 1, h + 2 and its last tile discarded: the seat
    saw its own hand whole, the hand of seat - 1 after that seat's pick, the hand of seat - 2
    after two picks. So it knows the pick of seat + 1 from the hand of seat - 1 (what it
    passed, minus the discard); with 2 players both picks the other made after its first;
    with 3-5 players the picks of seat + 1 and seat + 2 from its own first hand only as a
    pair; every other pick it never saw (beginner: no draft, nothing seen)."""
    if beginner:
        return CS_UNSEEN
    k = (other - seat) % n_players
    if n_players == 2:
        return CS_KNOWN if pick >= 1 else CS_UNSEEN
    if k == 1 and pick == 2:
        return CS_KNOWN
    if (k == 1 and pick == 1) or (k == 2 and pick == 2):
        return CS_PAIR
    return CS_UNSEEN


@njit
def drafted_pick(game, other, tile):
    """Which of ``other``'s draft picks ``tile`` is, -1 if none (taken from the discard pile,
    which everyone sees, or swapped in from the box)."""
    for d in range(E.DRAFT_PICKS):
        if game.stats[other, R.P_CS_DRAFTED0 + d] == tile:
            return d
    return -1


@njit
def redraw(pool, n, stream):
    """Shuffle the ``n`` tiles of ``pool`` in a canonical order (sorted first: the order they
    were gathered in may say where they were) and return them."""
    pool[:n] = np.sort(pool[:n])
    rng.shuffle(stream, pool, n)
    return pool


@njit
def determinize(seat, acting, game, pool, stream):
    """Redraw in ``game`` (a copy of the real state at ``seat``'s selection, ``acting`` False,
    or action) what ``seat`` cannot know, consistently with what it has seen, from ``stream``:

    - hands: at turn t of a generation the seats seat + 1 .. seat + t hold hands that passed
      through the seat (it saw them; what was taken from them since was revealed), the others
      are redrawn together with the generation's undealt tiles (2 players: the 8 boxed);
      with 3-5 players a selection made before the seat's this turn is secret: it goes back
      to its hand (redrawn, or sorted if the hand is known) and the playout starts the turn
      again (``GS_STEP`` 0), each such seat selecting with the policy;
    - solo: the packs of the turns to come, with the boxed one;
    - the later generations' decks, shuffled;
    - the cornerstones the seat never saw in the draft (``cornerstone_knowledge``: others'
      unplaced picks and the box's undrawn ones, redrawn together), and the pair it saw go
      one each way between seat + 1 and seat + 2 (while both are unplaced).

    The result depends on what the seat knows and on ``stream`` only: every pool is sorted
    before it is shuffled."""
    gstate = game.gstate
    pstate = game.pstate
    hands = game.hands
    n_players = gstate[E.GS_N_PLAYERS]
    gen = gstate[E.GS_GEN]
    t = gstate[E.GS_TURN] % E.TURNS_PER_GENERATION
    deck = game.decks[gen - 1]
    n_deck = game.deck_sizes[gen - 1]
    # Secret selections of this turn (3-5 players select at once): undone, selected again.
    if n_players >= 3 and not acting:
        for j in range(n_players):
            tile = pstate[j, E.PS_SELECTED]
            if j == seat or tile < 0:
                continue
            size = pstate[j, E.PS_HAND_SIZE]
            hands[j, size] = tile
            pstate[j, E.PS_HAND_SIZE] = size + 1
            pstate[j, E.PS_SELECTED] = -1
            hands[j, : size + 1] = np.sort(hands[j, : size + 1])
        gstate[E.GS_STEP] = 0
    # This generation's unseen tiles. Counters start as np.int64(0): from a literal 0, Numba's
    # type inference first types a call passing the counter with Literal[int](0), and compiles
    # the callee (redraw) for it too, before the loop's n + 1 widens it to int64.
    n = np.int64(0)
    if n_players == 1:
        for p in range(t + 1, E.SOLO_PACKS):
            for k in range(game.pack_sizes[p]):
                pool[n] = game.packs[p, k]
                n += 1
        redraw(pool, n, stream)
        n = np.int64(0)
        for p in range(t + 1, E.SOLO_PACKS):
            for k in range(game.pack_sizes[p]):
                game.packs[p, k] = pool[n]
                n += 1
    else:
        known = min(t, n_players - 1)
        dealt = min(E.HAND_SIZE * n_players, n_deck)
        for k in range(known + 1, n_players):
            other = (seat + k) % n_players
            for h in range(pstate[other, E.PS_HAND_SIZE]):
                pool[n] = hands[other, h]
                n += 1
        for k in range(dealt, n_deck):
            pool[n] = deck[k]
            n += 1
        redraw(pool, n, stream)
        n = np.int64(0)
        for k in range(known + 1, n_players):
            other = (seat + k) % n_players
            for h in range(pstate[other, E.PS_HAND_SIZE]):
                hands[other, h] = pool[n]
                n += 1
        for k in range(dealt, n_deck):
            deck[k] = pool[n]
            n += 1
    # Later generations: nothing of them is seen.
    for g in range(gen, E.N_GENERATIONS):
        n = game.deck_sizes[g]
        pool[:n] = game.decks[g, :n]
        redraw(pool, n, stream)
        game.decks[g, :n] = pool[:n]
    # Cornerstones.
    beginner = game.rules[K.RO_VARIANT] == K.V_BEGINNER
    n = unseen_cornerstones(seat, game, beginner, pool, True)
    for k in range(gstate[E.GS_CS_BOX_TOP], gstate[E.GS_CS_BOX_SIZE]):
        pool[n] = game.cs_box[k]
        n += 1
    redraw(pool, n, stream)
    n = unseen_cornerstones(seat, game, beginner, pool, False)
    for k in range(gstate[E.GS_CS_BOX_TOP], gstate[E.GS_CS_BOX_SIZE]):
        game.cs_box[k] = pool[n]
        n += 1
    if n_players >= 3 and not beginner:
        swap_pair(seat, game, stream)


@njit(inline="always")
def unseen_cornerstones(seat, game, beginner, pool, gather):
    """The other seats' cornerstones that ``seat`` has not seen (all of them in the beginner
    variant), in seat and slot order: copied to the start of ``pool`` (``gather``), or written
    back from it in the same order; returns how many."""
    n_players = game.gstate[E.GS_N_PLAYERS]
    n = np.int64(0)
    for other in range(n_players):
        if other == seat:
            continue
        for slot in range(game.pstate[other, E.PS_N_CS]):
            tile = game.cs_hands[other, slot]
            pick = drafted_pick(game, other, tile)
            if beginner or (
                pick >= 0
                and cornerstone_knowledge(seat, other, pick, n_players, beginner) == CS_UNSEEN
            ):
                if gather:
                    pool[n] = tile
                else:
                    game.cs_hands[other, slot] = pool[n]
                n += 1
    return n


@njit
def swap_pair(seat, game, stream):
    """3-5 players: the two tiles of the seat's first draft hand that seat + 1 and seat + 2
    picked (it knows the pair, not who has which), while both are unplaced: one each way,
    drawn (the lower tile to seat + 1 with probability 1/2)."""
    n_players = game.gstate[E.GS_N_PLAYERS]
    first = (seat + 1) % n_players
    second = (seat + 2) % n_players
    x = game.stats[first, R.P_CS_DRAFTED0 + 1]
    y = game.stats[second, R.P_CS_DRAFTED0 + 2]
    slot_x = E.position_of(game.cs_hands[first], game.pstate[first, E.PS_N_CS], x)
    slot_y = E.position_of(game.cs_hands[second], game.pstate[second, E.PS_N_CS], y)
    if slot_x < 0 or slot_y < 0:
        return
    low = min(x, y)
    high = max(x, y)
    if rng.randint(stream, np.int64(2)) == 0:  # not a literal: the one randint body
        game.cs_hands[first, slot_x] = low
        game.cs_hands[second, slot_y] = high
    else:
        game.cs_hands[first, slot_x] = high
        game.cs_hands[second, slot_y] = low


# --- the value of a state at a generation's end ---------------------------------------------
# A truncated playout stops at the start of the next generation (income collected, hands
# dealt) and predicts each seat's final score from the features of its city (``features``),
# one linear model per generation end, fitted by ``python -m strategies.tools.fit_value`` on
# games of the 2-player strong field.
F_ONE = 0
F_SCORE = 1  # score as if the game ended now
F_MONEY = 2
F_INCOME = 3  # coins of the city's next incomes
F_CORNERSTONES = 4  # unplaced cornerstones held
F_TILES = 5  # tiles in the city
F_OPEN = 6  # empty squares a tile could be attached to by road
N_FEATURES = 7
# [generation end (1, 2), feature]: python -m strategies.tools.fit_value --games 3000 --seed 11
# (tuned_builder_2p twice): held-out R^2 of a seat's final score 0.206 after generation 1,
# 0.588 after 2. It serves 3-5 players too: the same fit on the four tuned 4-player sets (R^2
# 0.252, 0.575; income weighs 2.3 VP a coin there) played worse in 4-player games on the same
# deals (win share 0.305 against 0.405 with this one; full playouts 0.410): a fit predicts the
# final score, a search compares moves, and a weight that is correlation, not cause, misleads it.
VALUE_WEIGHTS = np.array([
    [50.44, 0.6426, 0.1491, 0.0, -2.594, 0.8359, 0.0314],
    [23.4, 0.9622, 0.01079, 0.3636, -0.6915, 0.2162, 0.02038],
])  # fmt: skip
VALUE_SPREAD = np.array([4.96, 3.33])  # residual sd of a final margin (seat - best other seat)


@njit
def features(seat, game, out):
    """The value model's features of ``seat``'s city (``out``: float64[N_FEATURES])."""
    score = np.empty(K.N_SCORE, dtype=np.int32)
    G.score_seat(seat, game, score)
    summary = game.summaries[seat]  # fresh: score_seat refreshed it
    reach = 0
    for d in range(4):
        reach |= summary[E.SM_REACH + d]
    out[F_ONE] = 1.0
    out[F_SCORE] = score[K.S_TOTAL]
    out[F_MONEY] = game.pstate[seat, E.PS_MONEY] + game.pstate[seat, E.PS_PENDING]
    out[F_INCOME] = city_income(game.cells[seat], game.tiles, summary, game.effects)
    out[F_CORNERSTONES] = game.pstate[seat, E.PS_N_CS]
    out[F_TILES] = popcount(summary[E.SM_OCCUPIED])
    out[F_OPEN] = popcount(reach & ~summary[E.SM_OCCUPIED])


@njit
def predicted_finals(game, finals):
    """Each seat's final score as the value model predicts it from the state at the start of
    generation 2 or 3 (``finals``: float64[P])."""
    ended = game.gstate[E.GS_GEN] - 2  # the generation end the state is at (0 or 1)
    x = np.empty(N_FEATURES, dtype=np.float64)
    for s in range(game.gstate[E.GS_N_PLAYERS]):
        features(s, game, x)
        total = 0.0
        for f in range(N_FEATURES):
            total += VALUE_WEIGHTS[ended, f] * x[f]
        finals[s] = total


@njit
def shaped_value(win, margin, margin_weight):
    """A playout's value in [0, 1]: the win (share) mixed with a squashed margin."""
    return (1.0 - margin_weight) * win + margin_weight * (
        0.5 + 0.5 * np.tanh(margin / MARGIN_SCALE)
    )


@njit
def estimated_value(seat, game, margin_weight):
    """A truncated playout for ``seat``, as (value, margin) from the predicted final scores:
    the margin against the best other seat, the win its probability under the model's
    spread (logistic approximation of the normal)."""
    n_players = game.gstate[E.GS_N_PLAYERS]
    finals = np.empty(n_players, dtype=np.float64)
    predicted_finals(game, finals)
    best_other = -1e18
    for s in range(n_players):
        if s != seat:
            best_other = max(best_other, finals[s])
    margin = finals[seat] if n_players == 1 else finals[seat] - best_other
    win = 1.0
    if n_players > 1:
        spread = VALUE_SPREAD[game.gstate[E.GS_GEN] - 2]
        win = 1.0 / (1.0 + np.exp(-1.7 * margin / spread))
    return shaped_value(win, margin, margin_weight), margin


# --- playouts ------------------------------------------------------------------------------
@njit
def new_playout(game):
    """A bundle for playouts from ``game``: the same catalogue and rules, room for a copy of
    its state (``copy_state``), every seat played by one strategy (row 0 of its
    ``strategy_params``: the searching seat's policy), streams, memos and scratch of its own,
    no events."""
    n_players = game.gstate[E.GS_N_PLAYERS]
    n_tiles = game.tiles.shape[0]
    return Game(
        game.tiles,
        game.req,
        game.effects,
        game.goods_tier,
        game.board_center,
        game.rules,
        np.zeros_like(game.gstate),
        np.zeros_like(game.pstate),
        np.zeros_like(game.cells),
        np.zeros_like(game.hands),
        np.zeros_like(game.cs_hands),
        np.zeros_like(game.goods_of),
        np.zeros_like(game.cs_pile),
        np.zeros_like(game.cs_box),
        np.zeros_like(game.decks),
        np.zeros_like(game.deck_sizes),
        np.zeros_like(game.packs),
        np.zeros_like(game.pack_sizes),
        np.zeros(n_players, dtype=game.seats.dtype),
        np.full(1, EVALUATED_ID, dtype=game.strategy_ids.dtype),
        np.zeros((1, game.strategy_params.shape[1]), dtype=np.float64),
        # the playout policy's address: the last slot of the run's (pieces.addresses)
        np.full(1, game.strategy_fns[game.strategy_fns.shape[0] - 1], dtype=np.int64),
        game.step_fns,  # the loop's steps: the same for every game
        np.zeros_like(game.strat_rng),
        np.zeros((R.MAX_PLAYERS, memo_size(n_tiles)), dtype=np.int64),
        np.zeros_like(game.options),
        np.zeros_like(game.summaries),
        np.zeros_like(game.req_costs),
        np.zeros_like(game.stats),
        np.zeros((0, game.events.shape[1]), dtype=game.events.dtype),
    )


@njit
def copy_state(game, playout):
    """The state of ``game`` into ``playout`` (``new_playout``); its summaries too (caches of
    the same cities)."""
    playout.gstate[:] = game.gstate
    playout.pstate[:, :] = game.pstate
    playout.cells[:, :] = game.cells
    playout.hands[:, :] = game.hands
    playout.cs_hands[:, :] = game.cs_hands
    playout.goods_of[:] = game.goods_of
    playout.cs_pile[:] = game.cs_pile
    playout.cs_box[:] = game.cs_box
    playout.decks[:, :] = game.decks
    playout.deck_sizes[:] = game.deck_sizes
    playout.packs[:, :] = game.packs
    playout.pack_sizes[:] = game.pack_sizes
    playout.summaries[:, :] = game.summaries
    playout.stats[:, :] = game.stats


@njit
def playout_value(seat, playout, margin_weight):
    """A finished playout for ``seat``: its win share (ties shared) and its margin (score minus
    the best other score; solo: the score), as (value in [0, 1], margin)."""
    stats = playout.stats
    n_players = playout.gstate[E.GS_N_PLAYERS]
    mine = stats[seat, R.P_SCORE_TILES + K.S_TOTAL]
    best_other = -(1 << 30)
    winners = 0
    for s in range(n_players):
        winners += stats[s, R.P_WIN]
        if s != seat:
            best_other = max(best_other, stats[s, R.P_SCORE_TILES + K.S_TOTAL])
    margin = float(mine) if n_players == 1 else float(mine - best_other)
    win = stats[seat, R.P_WIN] / max(winners, 1)
    return shaped_value(win, margin, margin_weight), margin


@njit
def play_out(seat, acting, option, j, base, game, scratch):
    """Playout ``j`` of the decision (the step ``game`` is paused at) with ``option``: the
    state copied, determinized from playout j's own stream, the option handed to the step,
    the game played to its end by the policy. Returns (value, margin) as playout_value."""
    playout, row, pool, stream, settings = scratch
    copy_state(game, playout)
    key = np.empty(2, dtype=np.uint64)
    key[0] = base
    key[1] = np.uint64(seat)
    rng.seed_state(stream, rng.stream_seed(key, j, DETERMINIZE_STREAM))
    for s in range(game.gstate[E.GS_N_PLAYERS]):
        rng.seed_state(playout.strat_rng[s], rng.stream_seed(key, j, 1 + s))
    step = game.gstate[E.GS_STEP]
    determinize(seat, acting, playout, pool, stream)
    gstate = playout.gstate
    gstate[E.GS_FORCED_KEY] = E.step_key(gstate[E.GS_TURN], step)
    gstate[E.GS_FORCED_OPTION] = option
    gen = gstate[E.GS_GEN]
    if settings[S_TRUNCATE] != 0.0 and gen < E.N_GENERATIONS:
        gstate[E.GS_STOP_TURN] = gen * E.TURNS_PER_GENERATION
    if G.advance(playout, row) == G.STOPPED:
        return estimated_value(seat, playout, settings[S_MARGIN])
    return playout_value(seat, playout, settings[S_MARGIN])


# The settings of one search (``search_settings``), float64[N_SETTINGS].
S_PLAYOUTS = 0  # playouts in all
S_CANDIDATES = 1
S_EXPLORE = 2  # UCB1 constant; negative: every candidate the same number of playouts
S_MARGIN = 3  # weight of the margin in a playout's value
S_LINEAR = 4  # 1: the value is the mean final margin (rollout)
S_TRUNCATE = 5  # 1: playouts stop at the generation's end (estimated_value)
S_ACTIONS = 6  # 1: actions are searched (else taken by the policy)
N_SETTINGS = 7


@njit
def search_settings(strategy_id, params, n_players, settings, policy):
    """The search's settings and its playout policy's weights (``policy``) from a search
    strategy's parameters, at this table size."""
    if strategy_id == EXPERT_ID:
        settings[S_PLAYOUTS] = max(int(params[X_PLAYOUTS]), 1)
        settings[S_CANDIDATES] = max(int(params[X_CANDIDATES]), 1)
        settings[S_EXPLORE] = params[X_EXPLORE]
        settings[S_MARGIN] = params[X_MARGIN]
        settings[S_LINEAR] = 0.0
        settings[S_TRUNCATE] = params[X_TRUNCATE]
        settings[S_ACTIONS] = params[X_ACTIONS]
        policy[:] = expert_policy(params, n_players)
    else:  # rollout: each candidate `playouts` times, the mean final margin
        candidates = max(int(params[R_CANDIDATES]), 1)
        settings[S_PLAYOUTS] = max(int(params[R_PLAYOUTS]), 1) * candidates
        settings[S_CANDIDATES] = candidates
        settings[S_EXPLORE] = -1.0
        settings[S_MARGIN] = 1.0
        settings[S_LINEAR] = 1.0
        settings[S_TRUNCATE] = 0.0
        settings[S_ACTIONS] = 1.0
        policy[:] = rollout_policy()


@njit
def search(seat, acting, n, game, scratch, rng_state):
    """The option of ``game.options[:n]`` the search takes for ``seat`` at the step ``game`` is
    paused at (its settings and policy already in ``scratch``)."""
    playout, row, pool, stream, settings = scratch
    decision = E.D_ACTION if acting else E.D_SELECT
    policy = playout.strategy_params[0]
    values = np.empty(n, dtype=np.float64)
    evaluated_values(policy, decision, n, seat, view(game), game.memos[seat], values)
    order = np.argsort(-values, kind="mergesort")
    n_candidates = min(int(settings[S_CANDIDATES]), n)
    if acting and settings[S_ACTIONS] == 0.0:
        n_candidates = 1
    if n_candidates == 1:
        return order[0]
    base = rng.next_u64(rng_state)
    visits = np.zeros(n_candidates, dtype=np.int64)
    totals = np.zeros(n_candidates, dtype=np.float64)
    explore = settings[S_EXPLORE]
    linear = settings[S_LINEAR] != 0.0
    for i in range(int(settings[S_PLAYOUTS])):
        if i < n_candidates or explore < 0:
            c = i % n_candidates
        else:
            c = 0
            best = -np.inf
            log_i = np.log(i)
            for k in range(n_candidates):
                bound = totals[k] / visits[k] + explore * np.sqrt(log_i / visits[k])
                if bound > best:
                    best = bound
                    c = k
        value, margin = play_out(seat, acting, order[c], visits[c], base, game, scratch)
        totals[c] += margin if linear else value
        visits[c] += 1
    pick = 0
    best = -np.inf
    for k in range(n_candidates):
        if visits[k] > 0 and totals[k] / visits[k] > best:
            best = totals[k] / visits[k]
            pick = k
    return order[pick]


@njit
def choose_paused(game, scratch):
    """The option the search seat ``game`` is paused before (``play.advance`` returned PAUSED)
    takes at that step, among the options the step lists (``play.list_selections``,
    ``play.list_actions``, into ``game.options``)."""
    playout, row, pool, stream, settings = scratch
    gstate = game.gstate
    seat, acting = G.step_seat(gstate[E.GS_STEP], gstate[E.GS_TURN], gstate[E.GS_N_PLAYERS])
    k = -1
    if acting:
        n = G.list_actions(seat, game)
    else:
        n = G.list_selections(seat, game)
        if game.rules[K.RO_FORCE_TILE] >= 0:  # an experiment's forced tile (rare)
            k = E.forced_choice(seat, E.D_SELECT, gstate, game.rules, game.tiles, game.options, n)
    if k < 0 and n == 1:
        k = 0
    if k < 0:
        which = game.seats[seat]
        search_settings(
            game.strategy_ids[which], game.strategy_params[which], gstate[E.GS_N_PLAYERS],
            settings, playout.strategy_params[0],
        )  # fmt: skip
        k = search(seat, acting, n, game, scratch, game.strat_rng[seat])
    return k


@njit
def new_scratch(game):
    """A search's scratch for the games of a batch like ``game``: (playout bundle, its games
    row, a tile pool, the determinization stream, the settings)."""
    return (
        new_playout(game),
        np.zeros(R.N_GAME_COLS, dtype=np.int64),
        np.zeros(game.tiles.shape[0], dtype=np.int64),
        np.zeros(2, dtype=np.uint64),
        np.zeros(N_SETTINGS, dtype=np.float64),
    )


@njit
def play_batch(
    key,
    game_ids,
    deal_indices,
    seat_strategy,
    strategy_ids,
    strategy_params,
    strategy_fns,
    step_fns,
    memos,
    data,
    rules,
    games_out,
    players_out,
    events_out,
):
    """``strategies.neom.play.play_batch`` for lineups with a search: the same games (the same
    loop, ``play.advance``), each stop before a search seat's selection or action decided by
    ``choose_paused``."""
    batch = G.batch_scratch(strategy_ids, strategy_params, strategy_fns, step_fns, memos)
    for i in range(game_ids.shape[0]):
        game, deal_seed = G.new_game(
            i, key, game_ids[i], deal_indices[i], seat_strategy[i], batch, data, rules,
            players_out, events_out,
        )  # fmt: skip
        scratch = new_scratch(game)
        while G.advance(game, games_out[i]) == G.PAUSED:
            G.force(game, choose_paused(game, scratch))
        G.finish_game(game, games_out[i], game_ids[i], deal_seed)


assert N_PARAMS > X_MARGIN
