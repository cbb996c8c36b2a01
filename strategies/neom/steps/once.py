"""The loop's steps taken once a game (``strategies.neom.steps``), compiled on their own and
called by the loop at their address (``game.step_fns``): the cornerstone draft, the final
scoring (and the VP by generation the event log records). Moved out of the loop's compile, not
its run time: a call a game each.
"""

import numpy as np

from sim.core.jit import cfunc, njit
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom import records as R
from sim.neom.grid import M_GOODS
from strategies.neom.play import (
    collect_income,
    decide,
    log,
    run_step,
    score_seat,
    start_generation,
)
from strategies.neom.pointer import STEP, STEP_SCORING


# --- the cornerstone draft -----------------------------------------------------------------
@njit(inline="always")
def keep_cornerstone(seat, pick, game):
    """The seat keeps one cornerstone of its draft hand (``hands``), which shrinks by one."""
    hands = game.hands
    pstate = game.pstate
    size = pstate[seat, E.PS_HAND_SIZE]
    for k in range(size):
        E.set_option(game.options, k, 0, hands[seat, k], -1, -1, k, -1, -1, 0)
    k = -1
    if game.rules[K.RO_FORCE_TILE] >= 0:  # an experiment's forced tile (rare: checked inline)
        k = E.forced_choice(
            seat, E.D_DRAFT, game.gstate, game.rules, game.tiles, game.options, size
        )
    if k < 0:
        k = decide(seat, E.D_DRAFT, size, game)
    tile = hands[seat, k]
    E.remove_slot(hands[seat], size, k)
    pstate[seat, E.PS_HAND_SIZE] = size - 1
    E.add_cornerstone(seat, tile, game.cs_hands, pstate)
    game.stats[seat, R.P_CS_DRAFTED0 + pick] = tile
    log(game, seat, R.EV_DRAFT_PICK, tile, -1, 0, pick, -1)


@njit(_nrt=False)
def deal_draft_hand(seat, size, game):
    for k in range(size):
        game.hands[seat, k] = E.draw_cornerstone(game.cs_box, game.gstate)
    game.pstate[seat, E.PS_HAND_SIZE] = size


@njit(_nrt=False)
def discard_draft_hand(seat, game):
    """What is left of the seat's draft hand goes to the discard pile."""
    for k in range(game.pstate[seat, E.PS_HAND_SIZE]):
        E.add_to_pile(game.hands[seat, k], game.cs_pile, game.gstate)
    game.pstate[seat, E.PS_HAND_SIZE] = 0


@njit(inline="always")
def draft(game):
    """Preliminary round: 4 cornerstones each, keep one and pass the rest left until each has
    3, the last of each hand to the discard pile. Solo: stacks of 4, 3 and 2, keep one of each.
    Beginner variant: one random cornerstone each, no draft."""
    gstate = game.gstate
    n_players = gstate[E.GS_N_PLAYERS]
    gstate[E.GS_TURN] = E.DRAFT_TURN
    if game.rules[K.RO_VARIANT] == K.V_BEGINNER:
        for s in range(n_players):
            tile = E.draw_cornerstone(game.cs_box, gstate)
            E.add_cornerstone(s, tile, game.cs_hands, game.pstate)
            game.stats[s, R.P_CS_DRAFTED0] = tile
            log(game, s, R.EV_DRAFT_PICK, tile, -1, 0, 0, -1)
        return
    # One call site of keep_cornerstone (every inlined copy costs compile time): solo, the
    # stacks one after the other; else every seat picks from its hand, then hands pass left.
    solo = n_players == 1
    if not solo:
        for s in range(n_players):
            deal_draft_hand(s, E.DRAFT_HAND, game)
    n_picks = len(E.SOLO_STACKS) if solo else E.DRAFT_PICKS
    for pick in range(n_picks):
        if solo:  # seat 0 as int64, like the other seats: one body of each
            deal_draft_hand(np.int64(0), E.SOLO_STACKS[pick], game)
        for s in range(n_players):
            keep_cornerstone(s, pick, game)
        if solo:
            discard_draft_hand(np.int64(0), game)
        elif pick < E.DRAFT_PICKS - 1:
            E.pass_left(game.hands, game.pstate, n_players)
    if not solo:
        for s in range(n_players):
            discard_draft_hand(s, game)


@cfunc(STEP, _nrt=False)
def draft_step(game, unused):
    """``draft``, for the loop (``run``) at the draft."""
    draft(game)
    return 0


# --- a generation's end --------------------------------------------------------------------
@cfunc(STEP, _nrt=False)
def generation_step(game, gen):
    """The end of the last turn of generation ``gen`` (1-3; ``play.end_turn``): income, the
    generation's VP record (with the event log only, so that runs without it pay nothing), the
    turn count on and the next generation dealt; with ``gen`` 0 (after the draft) generation 1
    dealt. A step of its own, not the loop's, to balance the two pieces' cold compile."""
    if gen > 0:
        collect_income(game)
        if gen < E.N_GENERATIONS and game.events.shape[0] > 0:
            run_step(game, STEP_SCORING, gen)  # record_generation_scores
        game.gstate[E.GS_TURN] += 1
    if gen < E.N_GENERATIONS:
        start_generation(gen + 1, game)
    return 0


# --- scoring -------------------------------------------------------------------------------
@njit(inline="always")  # its one caller is the C function below: one body
def record_generation_scores(gen, game):
    """Each seat's VP as if the game ended at the end of generation ``gen`` (allocates its
    scratch: called twice a game, and only with the event log)."""
    score = np.empty(K.N_SCORE, dtype=np.int32)
    for s in range(game.gstate[E.GS_N_PLAYERS]):
        score_seat(s, game, score)
        game.stats[s, R.P_SCORE_GEN1 + gen - 1] = score[K.S_TOTAL]


@njit(inline="always")  # its one caller is the C function below: one body
def final_scoring(game):
    """Every seat scored, ranked and its stats written; returns the winners (bit mask)."""
    n_players = game.gstate[E.GS_N_PLAYERS]
    pstate = game.pstate
    stats = game.stats
    score = np.empty(K.N_SCORE, dtype=np.int32)
    totals = np.empty(n_players, dtype=np.int64)
    ranks = np.empty(n_players, dtype=np.int64)
    for s in range(n_players):
        money = pstate[s, E.PS_MONEY]
        city = game.cells[s]
        summary = game.summaries[s]
        score_seat(s, game, score)
        for key in range(K.N_SCORE):
            stats[s, R.P_SCORE_TILES + key] = score[key]
        totals[s] = score[K.S_TOTAL]
        stats[s, R.P_MONEY] = money
        stats[s, R.P_GOODS_MASK] = summary[M_GOODS]
        stats[s, R.P_TRADE_ROUTES] = E.trade_routes(city, game.tiles)
    winners = E.ranks_and_winners(totals, n_players, ranks)
    for s in range(n_players):
        stats[s, R.P_RANK] = ranks[s]
        stats[s, R.P_WIN] = (winners >> s) & 1
    return winners


@cfunc(STEP)  # counted: the scores' scratch is allocated a call each
def scoring(game, gen):
    """Generation ``gen``'s VP record (``gen`` 1-2: the event log's), or with ``gen`` 0 the
    final scoring (returns the winners' bit mask)."""
    if gen == 0:
        return final_scoring(game)
    record_generation_scores(gen, game)
    return 0
