"""The planner: greedy rollouts over random orders of the cards the seat has not seen.

From round ``first_round`` on (before it: greedy's choice), at a decision it ranks the options
by greedy's key and keeps the best ``candidates`` (plus declining, for a card or a fountain).
It draws ``samples`` completions of the deck consistent
with what the seat knows (view: the cards it saw stay where they are; the unseen tiles still to
come are shuffled into the other positions) and plays each candidate out on each completion to
the end of the game, every later decision made by greedy on its own board, summing the round
scores and the final bonuses still to come. It takes the candidate with the best mean (ties: the
better greedy key). All candidates meet the same completions and the same tie-break streams
(common random numbers), so their comparison is not blurred by the sampling.

Other players are not modelled: a seat's points depend only on its own board (the start marker
changes who sees which card, not which cards come).
"""

import numpy as np

from sim.core import rng
from sim.core.jit import njit
from sim.tangram import constants as K
from sim.tangram import engine as E
from strategies.tangram.basic import (
    N_KEY,
    compare,
    greedy_index,
    greedy_keys,
    greedy_pick,
    square_table,
)
from strategies.tangram.registry import MAX_CANDIDATES, MAX_SAMPLES
from strategies.tangram.view import (
    D_FINAL,
    D_FOUNTAIN,
    D_PLACE,
    V_DECISION,
    V_FINAL_LEFT,
    V_KNOWN,
    V_N_UNSEEN,
    V_ROUND,
    V_SUPPLY,
    V_TURN,
    V_UNSEEN,
)

STAGE_CARDS = 0  # the round's cards from ``pos`` (final round: those in ``final_left``)
STAGE_FOUNTAIN = 1  # the round's fountain step, ``supply`` including this round's fountain
STAGE_SCORE = 2  # the round's scoring
ONE = np.int64(1)  # a one-tile hand (a literal argument would compile the callee once more)


@njit
def make_scratch(max_options, place_mask, tile_first, planner):
    """The planner's work arrays, allocated once per batch (``planner``: a planner seat
    plays in it; without one, engine.legal_by_blocks' bit sets are left empty)."""
    return (
        np.zeros((max_options, N_KEY), dtype=np.float64),  # greedy keys of the options
        np.zeros(MAX_CANDIDATES + 1, dtype=np.int64),  # candidate option indices
        np.zeros(MAX_CANDIDATES + 1, dtype=np.float64),  # their summed rollout points
        np.zeros((MAX_SAMPLES, K.N_CARDS), dtype=np.int64),  # sampled deck completions
        np.zeros(MAX_SAMPLES, dtype=np.uint64),  # a tie-break seed per completion
        np.zeros((E.N_LAYERS, K.N_WORDS), dtype=np.uint64),  # the board being played out
        np.zeros((max_options, 2), dtype=np.int64),  # a rollout decision's legal placements
        np.zeros(2, dtype=np.uint64),  # rollout tie-break stream
        np.zeros(K.N_CARDS, dtype=np.int64),  # unseen tiles being shuffled; then a rollout
        # decision's tiles (the scratch goes through every call of the game loop: no slot more)
        E.placement_blocks(place_mask, tile_first, planner),  # engine.legal_by_blocks
        square_table(place_mask),  # greedy's squares (basic.square_table): keep it last
    )


@njit(_nrt=False)
def play_out(
    board,
    rnd,
    stage,
    pos,
    final_left,
    supply,
    seq,
    data,
    rules,
    bw,
    state,
    hand,
    opts,
    blocks,
    squares,
):
    """Points ``board`` still scores from the given point of round ``rnd`` when greedy plays
    the cards ``seq`` (tile at each deck position) to the end: round scores and bonuses."""
    place_mask, place_meta, _, tile_first, _ = data
    fountain = tile_first.shape[0] - 2
    kept = rules[K.RO_FOUNTAIN_KEPT] != 0
    points = 0
    r = rnd
    while r <= K.N_ROUNDS:
        if stage == STAGE_CARDS:
            if r < K.N_ROUNDS:
                for p in range(pos, K.ROUND_LAST_CARD[r - 1] + 1):
                    hand[0] = seq[p]
                    q, _ = greedy_pick(
                        board, hand, ONE, opts, data, squares, blocks, rules, bw, state
                    )
                    if q >= 0:
                        E.put(board, place_mask, place_meta, q)
            else:
                left = final_left
                while left != 0:
                    n = E.ZERO
                    for k in range(K.FINAL_CARDS):
                        if left >> k & 1:
                            hand[n] = seq[K.ROUND_FIRST_CARD[5] + k]
                            n += 1
                    q, tile = greedy_pick(
                        board, hand, n, opts, data, squares, blocks, rules, bw, state
                    )
                    if q >= 0:
                        E.put(board, place_mask, place_meta, q)
                    for k in range(K.FINAL_CARDS):
                        if left >> k & 1 and seq[K.ROUND_FIRST_CARD[5] + k] == tile:
                            left &= ~(1 << k)
                            break
            supply += 1
            stage = STAGE_FOUNTAIN
        if stage == STAGE_FOUNTAIN:
            hand[0] = fountain
            while supply > 0:
                q, _ = greedy_pick(board, hand, ONE, opts, data, squares, blocks, rules, bw, state)
                if q < 0:
                    break
                E.put(board, place_mask, place_meta, q)
                supply -= 1
            if not kept:
                supply = 0
        points += E.largest_rectangle(E.full_squares(board))
        r += 1
        stage = STAGE_CARDS
        if r <= K.N_ROUNDS:
            pos = K.ROUND_FIRST_CARD[r - 1]
            final_left = 0
            for k in range(K.FINAL_CARDS):
                if seq[K.ROUND_FIRST_CARD[5] + k] >= 0:  # a banned card's empty position: none
                    final_left |= 1 << k
    red, green = E.colour_counts(board)
    return (
        points + E.balance_bonus(red, green, rules) + E.planning_bonus(E.full_squares(board), rules)
    )


@njit(inline="always")
def _ranked_before(keys, i, j):
    """True if option i has a strictly better greedy key than option j."""
    return compare(keys, i, j) > 0


@njit(_nrt=False)
def _sample_completions(view, samples, seqs, seeds, pool, state):
    turn = view[V_TURN]
    m = view[V_N_UNSEEN]
    for s in range(samples):
        for k in range(m):
            pool[k] = view[V_UNSEEN + k]
        rng.shuffle(state, pool, m)
        k = 0
        for p in range(K.N_CARDS):
            tile = view[V_KNOWN + p]
            if tile < 0 and p > turn and k < m:  # past m: the empty position of a ban
                tile = pool[k]
                k += 1
            seqs[s, p] = tile
        seeds[s] = rng.next_u64(state)


@njit(_nrt=False)
def choose_planner(params, state, options, n, board, view, data, rules, scratch):
    """Index of the planner's option (see the module docstring)."""
    if n == 1:
        return 0
    keys, cand, total, seqs, seeds, tmp, opts, roll, pool, blocks, squares = scratch
    place_mask, place_meta, _, _, _ = data
    samples = min(max(np.int64(params[0]), 1), MAX_SAMPLES)
    wanted = min(max(np.int64(params[1]), 1), MAX_CANDIDATES)
    bw = params[2]
    decision = view[V_DECISION]
    searched = decision == D_PLACE or decision == D_FINAL or decision == D_FOUNTAIN
    # Before round ``first_round`` the rollouts (the longest of the game) hardly tell greedy's
    # best options apart (docs/performance-log.md, "The planner's budget"): take greedy's.
    if not searched or view[V_ROUND] < params[3]:
        return greedy_index(board, options, n, data, squares, rules, bw, state)

    # Candidates: the best options by greedy key (ties: first listed), then declining.
    greedy_keys(board, options, n, data, squares, rules, bw, keys)
    c = 0
    while c < wanted and c < n:
        best = -1
        for i in range(n):
            taken = False
            for j in range(c):
                if cand[j] == i:
                    taken = True
                    break
            if not taken and (best < 0 or _ranked_before(keys, i, best)):
                best = i
        cand[c] = best
        c += 1
    if decision != D_FINAL and options[n - 1, 0] < 0:
        has_decline = False
        for j in range(c):
            if cand[j] == n - 1:
                has_decline = True
        if not has_decline:
            cand[c] = n - 1
            c += 1
    if c == 1:
        return cand[0]

    _sample_completions(view, samples, seqs, seeds, pool, state)
    kept = rules[K.RO_FOUNTAIN_KEPT] != 0
    rnd = view[V_ROUND]
    for j in range(c):
        total[j] = 0.0
        p = options[cand[j], 0]
        tile = options[cand[j], 1]
        for s in range(samples):
            for layer in range(E.N_LAYERS):
                for w in range(K.N_WORDS):
                    tmp[layer, w] = board[layer, w]
            if p >= 0:
                E.put(tmp, place_mask, place_meta, p)
            rng.seed_state(roll, seeds[s])
            stage = STAGE_CARDS
            pos = view[V_TURN] + 1
            final_left = view[V_FINAL_LEFT]
            supply = view[V_SUPPLY]
            if decision == D_FINAL:
                for k in range(K.FINAL_CARDS):
                    if final_left >> k & 1 and seqs[s, K.ROUND_FIRST_CARD[5] + k] == tile:
                        final_left &= ~(1 << k)
                        break
            elif decision == D_FOUNTAIN:
                if p >= 0:
                    supply -= 1
                stage = STAGE_FOUNTAIN if (p >= 0 and kept and supply > 0) else STAGE_SCORE
                if not kept:
                    supply = 0
            total[j] += play_out(
                tmp,
                rnd,
                stage,
                pos,
                final_left,
                supply,
                seqs[s],
                data,
                rules,
                bw,
                roll,
                pool,
                opts,
                blocks,
                squares,
            )
    best = 0
    for j in range(1, c):
        if total[j] > total[best]:
            best = j
    return cand[best]
