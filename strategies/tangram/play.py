"""The compiled game loop of Tangram City: setup, five regular rounds, the final round, the end.

It sits above both the rules (:mod:`sim.tangram.engine`) and the strategies, so ``sim/tangram``
never imports ``strategies``. Chance comes only from the game's deal stream, drawn entirely at
setup (the play order of the 23 cards, the boards, the first start player), so no decision ever
changes which tiles come when; each seat's strategy draws from its own stream. Every decision
is a strategy's choice among the legal options the engine lists; a strategy sees its own board
and its view (what the seat knows), never the deck.

``play_batch`` has the signature of :mod:`sim.core.game`; ``play_one`` plays one game from
Python and returns a :class:`sim.core.game.GameRecord`.
"""

import numpy as np

from sim.core import rng
from sim.core.batch import STRATEGY_ID_DTYPE, play_arrays, records
from sim.core.game import GameRecord
from sim.core.jit import njit
from sim.tangram import constants as K
from sim.tangram import engine as E
from sim.tangram import records as R
from sim.tangram.tileset import M_COL, M_COLOUR, M_ORIENTATION, M_ROW
from strategies.tangram.dispatch import choose
from strategies.tangram.planner import make_scratch
from strategies.tangram.registry import PLANNER_ID, RANDOM_ID, as_spec
from strategies.tangram.view import (
    D_FINAL,
    D_FOUNTAIN,
    D_PLACE,
    D_START_COLOUR,
    N_VIEW,
    fill_view,
)

# Per-seat game state besides the board (int64[MAX_PLAYERS, N_PS]).
PS_TOTAL = 0  # running total of round scores
PS_SUPPLY = 1  # fountains in hand (kept from earlier rounds under fountain_kept = yes)
N_PS = 2
# The table's state (int64[N_GS]).
GS_ROUND = 0
GS_START = 1  # the start player
N_GS = 2

# The work bundle (make_work): one tuple of arrays, allocated once per batch, reset by each game.
W_OPTIONS = 0  # int64[max_options, 2]: the current decision's (placement, tile) rows
W_VIEW = 1  # int64[N_VIEW]: what the deciding seat knows (strategies.tangram.view)
W_BOARDS = 2  # uint64[MAX_PLAYERS, 3, 4]
W_PS = 3  # int64[MAX_PLAYERS, N_PS]
W_GS = 4  # int64[N_GS]
W_DECK = 5  # int64[23]: the tile at each deck position, in play order
W_HOLDERS = 6  # int64[23]: bit s set if seat s saw the card before it was played
W_BOARD_OF = 7  # int64[5]: the board each seat plays
W_SEAT_RNG = 8  # uint64[MAX_PLAYERS, 2]: each seat's strategy stream
W_DEAL_RNG = 9  # uint64[2]
W_TOTALS = 10  # int64[MAX_PLAYERS]: scratch for the start marker and ranks
W_HAND = 11  # int64[3]: tiles the random strategy draws among
W_LOG = 12  # int64[2]: the game's first event row and its events so far
W_BITS = 13  # uint64[1]: the deal seed, read back bit for bit as int64

ONE = np.int64(1)  # not literal arguments: see sim.tangram.engine.ZERO
TWO = np.int64(2)
RANDOM_TRIES = 8  # draws over all placements before the random strategy lists the legal ones


@njit
def make_work(max_options):
    return (
        np.zeros((max_options, 2), dtype=np.int64),
        np.zeros(N_VIEW, dtype=np.int64),
        np.zeros((K.MAX_PLAYERS, E.N_LAYERS, K.N_WORDS), dtype=np.uint64),
        np.zeros((K.MAX_PLAYERS, N_PS), dtype=np.int64),
        np.zeros(N_GS, dtype=np.int64),
        np.zeros(K.N_CARDS, dtype=np.int64),
        np.zeros(K.N_CARDS, dtype=np.int64),
        np.zeros(K.N_BOARDS, dtype=np.int64),
        np.zeros((K.MAX_PLAYERS, 2), dtype=np.uint64),
        np.zeros(2, dtype=np.uint64),
        np.zeros(K.MAX_PLAYERS, dtype=np.int64),
        np.zeros(K.FINAL_CARDS, dtype=np.int64),
        np.zeros(2, dtype=np.int64),
        np.zeros(1, dtype=np.uint64),
    )


@njit
def max_options(tile_first):
    """Rows a decision can need: the final round lists every placement of 3 tiles plus 3
    declines (the fountain's 196 placements plus none are fewer)."""
    top = np.zeros(K.FINAL_CARDS, dtype=np.int64)  # the largest counts, largest first
    for t in range(tile_first.shape[0] - 1):
        count = tile_first[t + 1] - tile_first[t]
        for k in range(K.FINAL_CARDS):
            if count > top[k]:
                for j in range(K.FINAL_CARDS - 1, k, -1):
                    top[j] = top[j - 1]
                top[k] = count
                break
    return top.sum() + K.FINAL_CARDS + 1


@njit(_nrt=False)
def int64_bits(value, box):
    """A uint64 stored bit for bit as int64 (the same compiled and interpreted), through
    ``box`` (uint64[1] scratch: nothing allocated)."""
    box[0] = value
    return box.view(np.int64)[0]


@njit(_nrt=False)
def random_option(board, place_mask, tile_first, hand, n_hand, state, options):
    """The random strategy's option: uniform over the legal placements of the ``n_hand`` tiles
    in ``hand`` plus one decline per tile (a fountain: one "none"). Returns (placement or -1,
    tile).

    Instead of listing every legal placement (a scan of all of them), it draws among all
    placements and declines and keeps the draw if it is legal: conditioned on being kept, a
    draw is uniform over the legal options, and after RANDOM_TRIES misses it lists the legal
    ones and draws among them, also uniformly; so the choice is uniform either way."""
    total = 0
    for h in range(n_hand):
        total += tile_first[hand[h] + 1] - tile_first[hand[h]]
    for _ in range(RANDOM_TRIES):
        r = rng.randint(state, total + n_hand)
        if r >= total:
            return -1, hand[r - total]
        for h in range(n_hand):
            count = tile_first[hand[h] + 1] - tile_first[hand[h]]
            if r < count:
                p = tile_first[hand[h]] + r
                if E.fits(board, place_mask, p):
                    return p, hand[h]
                break
            r -= count
    n = E.ZERO
    for h in range(n_hand):
        n = E.legal_placements(board, place_mask, tile_first, hand[h], options, n)
    for h in range(n_hand):
        options[n, 0] = -1
        options[n, 1] = hand[h]
        n += 1
    k = rng.randint(state, n)
    return options[k, 0], options[k, 1]


@njit(_nrt=False)
def decide(strategy_id, params, state, options, n, board, view, data, rules, scratch):
    """Index of the option the seat's strategy picks (no question asked with one option)."""
    if n == 1:
        return 0
    if strategy_id == RANDOM_ID:
        return rng.randint(state, n)
    k = choose(
        np.int64(strategy_id),
        params,
        state,
        options,
        np.int64(n),
        board,
        view,
        data,
        rules,
        scratch,
    )
    if k < 0 or k >= n:
        raise ValueError("a strategy chose an option that does not exist")
    return k


@njit(_nrt=False)
def apply_choice(seat, p, tile, turn, data, work, out, events):
    """Build placement p of ``tile`` on the seat's board, or decline the tile (p < 0)."""
    place_mask, place_meta, _, _, _ = data
    rnd = work[W_GS][GS_ROUND]
    if p >= 0:
        E.put(work[W_BOARDS][seat], place_mask, place_meta, p)
        out[seat, R.P_TILES_PLACED] += 1
        E.log_event(
            events,
            work[W_LOG],
            rnd,
            turn,
            seat,
            R.EV_PLACE,
            tile,
            place_meta[p, M_ORIENTATION],
            place_meta[p, M_ROW],
            place_meta[p, M_COL],
            place_meta[p, M_COLOUR],
            0,
            0,
            0,
        )
    else:
        out[seat, R.P_TILES_DECLINED] += 1
        out[seat, R.P_DECLINED_MASK] |= 1 << tile
        E.log_event(
            events, work[W_LOG], rnd, turn, seat, R.EV_DECLINE, tile, -1, -1, -1, -1, 0, 0, 0
        )


@njit(_nrt=False)
def place_card(seat, tile, turn, strategy_id, params, data, rules, work, scratch, out, events):
    """Text 004, PLAY CARDS: the seat places ``tile`` (the card at deck position ``turn``) or
    declines it for good ("players are allowed to refrain from placing Tiles")."""
    _, _, _, tile_first, _ = data
    options = work[W_OPTIONS]
    board = work[W_BOARDS][seat]
    state = work[W_SEAT_RNG][seat]
    # Reading X3 (an experiment's force): the seat may not decline the tile while it fits.
    forced = tile == rules[K.RO_FORCE_TILE] and seat == rules[K.RO_FORCE_SEAT]
    if strategy_id == RANDOM_ID and not forced:
        hand = work[W_HAND]
        hand[0] = tile
        p, _ = random_option(board, data[0], tile_first, hand, ONE, state, options)
    else:
        n = E.legal_placements(board, data[0], tile_first, tile, options, E.ZERO)
        if n == 0 or not forced:
            options[n, 0] = -1
            options[n, 1] = tile
            n += 1
        if n > 1:
            fill_view(
                work[W_VIEW],
                D_PLACE,
                seat,
                work[W_GS][GS_ROUND],
                turn,
                turn,
                work[W_PS][seat, PS_SUPPLY],
                E.ZERO,
                work[W_DECK],
                work[W_HOLDERS],
            )
        k = decide(
            strategy_id, params, state, options, n, board, work[W_VIEW], data, rules, scratch
        )
        p = options[k, 0]
    apply_choice(seat, p, tile, turn, data, work, out, events)


@njit(_nrt=False)
def final_cards(seat, strategy_id, params, data, rules, work, scratch, out, events):
    """Text 004, FINAL ROUND: the last 3 cards (2 when one is banned) are revealed together
    and the seat places them in any order it chooses: each decision lists every placement of
    every card still in hand and the declines; the chosen card leaves the hand."""
    _, _, _, tile_first, _ = data
    options = work[W_OPTIONS]
    board = work[W_BOARDS][seat]
    state = work[W_SEAT_RNG][seat]
    deck = work[W_DECK]
    first = K.ROUND_FIRST_CARD[K.N_ROUNDS - 1]
    left = 0
    for k in range(K.FINAL_CARDS):
        if deck[first + k] >= 0:  # a banned card leaves the last position empty
            left |= 1 << k
    force = rules[K.RO_FORCE_TILE] if seat == rules[K.RO_FORCE_SEAT] else K.NO_TILE
    while left != 0:
        # Reading X3: while the forced tile is in hand and fits, its decline is not offered.
        forced = False
        if force >= 0:
            for k in range(K.FINAL_CARDS):
                forced = forced or ((left >> k & 1) == 1 and deck[first + k] == force)
        if strategy_id == RANDOM_ID and not forced:
            hand = work[W_HAND]
            n_hand = E.ZERO
            for k in range(K.FINAL_CARDS):
                if left >> k & 1:
                    hand[n_hand] = deck[first + k]
                    n_hand += 1
            p, tile = random_option(board, data[0], tile_first, hand, n_hand, state, options)
        else:
            n = E.ZERO
            fits = False  # the forced tile has a placement
            for k in range(K.FINAL_CARDS):
                if left >> k & 1:
                    before = n
                    n = E.legal_placements(board, data[0], tile_first, deck[first + k], options, n)
                    fits = fits or (deck[first + k] == force and n > before)
            for k in range(K.FINAL_CARDS):
                if left >> k & 1 and not (fits and deck[first + k] == force):
                    options[n, 0] = -1
                    options[n, 1] = deck[first + k]
                    n += 1
            if n > 1:
                fill_view(
                    work[W_VIEW],
                    D_FINAL,
                    seat,
                    work[W_GS][GS_ROUND],
                    K.N_CARDS - 1,
                    K.N_CARDS - 1,
                    work[W_PS][seat, PS_SUPPLY],
                    left,
                    deck,
                    work[W_HOLDERS],
                )
            i = decide(
                strategy_id, params, state, options, n, board, work[W_VIEW], data, rules, scratch
            )
            p = options[i, 0]
            tile = options[i, 1]
        turn = first
        for k in range(K.FINAL_CARDS):
            if left >> k & 1 and deck[first + k] == tile:
                left &= ~(1 << k)
                turn = first + k
                break
        apply_choice(seat, p, tile, turn, data, work, out, events)


@njit(_nrt=False)
def fountain_step(seat, strategy_id, params, data, rules, work, scratch, out, events):
    """Text 004, PLACING FOUNTAIN TILES, read as optional (facts file: "may"): the seat gets
    this round's fountain and places it or not; under fountain_kept = yes unplaced fountains
    stay in hand and a later step may place several, otherwise an unplaced one is lost."""
    place_mask, place_meta, _, tile_first, _ = data
    options = work[W_OPTIONS]
    board = work[W_BOARDS][seat]
    state = work[W_SEAT_RNG][seat]
    ps = work[W_PS]
    rnd = work[W_GS][GS_ROUND]
    fountain = tile_first.shape[0] - 2
    turn = K.ROUND_LAST_CARD[rnd - 1]
    ps[seat, PS_SUPPLY] += 1
    while ps[seat, PS_SUPPLY] > 0:
        if strategy_id == RANDOM_ID:
            hand = work[W_HAND]
            hand[0] = fountain
            p, _ = random_option(board, place_mask, tile_first, hand, ONE, state, options)
        else:
            n = E.legal_placements(board, place_mask, tile_first, fountain, options, E.ZERO)
            options[n, 0] = -1
            options[n, 1] = fountain
            n += 1
            if n > 1:
                fill_view(
                    work[W_VIEW],
                    D_FOUNTAIN,
                    seat,
                    rnd,
                    turn,
                    turn,
                    ps[seat, PS_SUPPLY],
                    E.ZERO,
                    work[W_DECK],
                    work[W_HOLDERS],
                )
            k = decide(
                strategy_id, params, state, options, n, board, work[W_VIEW], data, rules, scratch
            )
            p = options[k, 0]
        if p < 0:
            break
        E.put(board, place_mask, place_meta, p)
        ps[seat, PS_SUPPLY] -= 1
        out[seat, R.P_FOUNTAINS] += 1
        E.log_event(
            events,
            work[W_LOG],
            rnd,
            turn,
            seat,
            R.EV_FOUNTAIN,
            -1,
            place_meta[p, M_ORIENTATION],
            place_meta[p, M_ROW],
            place_meta[p, M_COL],
            K.FOUNTAIN,
            0,
            0,
            0,
        )
    if rules[K.RO_FOUNTAIN_KEPT] == 0:
        ps[seat, PS_SUPPLY] = 0


@njit(_nrt=False)
def score_round(n_players, rules, work, out, events):
    """Text 004, ROUND SCORING and ROUND END: each seat scores its largest fully built
    rectangle, then sets its balance markers to its red and green squares."""
    rnd = work[W_GS][GS_ROUND]
    boards = work[W_BOARDS]
    ps = work[W_PS]
    turn = K.ROUND_LAST_CARD[rnd - 1]
    for s in range(n_players):
        points = E.largest_rectangle(E.full_squares(boards[s]))
        ps[s, PS_TOTAL] += points
        out[s, R.P_ROUND1 + rnd - 1] = points
        E.log_event(
            events,
            work[W_LOG],
            rnd,
            turn,
            s,
            R.EV_ROUND_SCORE,
            -1,
            -1,
            -1,
            -1,
            -1,
            points,
            ps[s, PS_TOTAL],
            0,
        )
    for s in range(n_players):
        red, green = E.colour_counts(boards[s])
        red, green = E.markers(red, green, rules)
        out[s, R.P_RED] = red
        out[s, R.P_GREEN] = green
        E.log_event(
            events, work[W_LOG], rnd, turn, s, R.EV_BALANCE, -1, -1, -1, -1, -1, red, green, 0
        )


@njit(_nrt=False)
def deal_round(n_players, work, out, events):
    """Text 004, DEAL CARDS: who sees which of the round's cards (engine.round_holders), noted
    per seat; then the cards are played in that order (PLAY CARDS)."""
    rnd = work[W_GS][GS_ROUND]
    start = work[W_GS][GS_START]
    holders = work[W_HOLDERS]
    first = K.ROUND_FIRST_CARD[rnd - 1]
    out[start, R.P_START_ROUNDS] |= 1 << (rnd - 1)
    everyone = (1 << n_players) - 1
    if rnd == K.N_ROUNDS:
        for k in range(K.FINAL_CARDS):  # FINAL ROUND: "Reveal these Cards"
            holders[first + k] = everyone
        return
    E.round_holders(n_players, start, first, holders)
    for j in range(1, K.CARDS_PER_ROUND):
        h = holders[first + j]
        if n_players == 1 or h == 0 or h == everyone:
            continue
        single = (h & (h - 1)) == 0
        for s in range(n_players):
            if h >> s & 1:
                if single:
                    out[s, R.P_HAND_ROUNDS] |= 1 << (rnd - 1)
                else:
                    out[s, R.P_SHARED_ROUNDS] |= 1 << (rnd - 1)


@njit(_nrt=False)
def setup(
    i,
    key,
    game_id,
    deal_index,
    seats,
    strategy_ids,
    strategy_params,
    data,
    rules,
    players_out,
    events_out,
    work,
    scratch,
):
    """Seed the streams, deal (everything chance decides, at once), reset the seats, build the
    start pieces (each seat choosing its board's side) and give out the start marker. Returns
    the deal stream's seed."""
    start_mask = data[4]
    n_players = seats.shape[0]
    log = work[W_LOG]
    log[0] = i * R.EVENTS_PER_GAME if events_out.shape[0] > 0 else 0
    log[1] = 0
    deal_seed = rng.stream_seed(key, deal_index, rng.DEAL_STREAM)
    rng.seed_state(work[W_DEAL_RNG], deal_seed)
    gs = work[W_GS]
    gs[GS_START] = E.deal(work[W_DEAL_RNG], work[W_DECK], work[W_BOARD_OF], n_players, rules)
    gs[GS_ROUND] = 0
    out = players_out[i]
    options = work[W_OPTIONS]
    for s in range(K.MAX_PLAYERS):
        for c in range(R.N_PLAYER_COLS):
            out[s, c] = -1 if s >= n_players else 0
    for p in range(K.N_CARDS):
        work[W_HOLDERS][p] = 0
    for s in range(n_players):
        rng.seed_state(work[W_SEAT_RNG][s], rng.stream_seed(key, game_id, 1 + s))
        work[W_PS][s, PS_TOTAL] = 0
        work[W_PS][s, PS_SUPPLY] = 0
        out[s, R.P_SEAT] = s
        out[s, R.P_STRATEGY] = seats[s]
        out[s, R.P_BOARD] = work[W_BOARD_OF][s]
        # Facts file: "the start piece is red on one side and green on the other; the player
        # chooses the side" (reading S2).
        colour = K.RED
        rule = rules[K.RO_START_COLOUR]
        if rule == K.START_COLOUR_GREEN:
            colour = K.GREEN
        elif rule == K.START_COLOUR_CHOOSE:
            options[0, 0] = -1
            options[0, 1] = K.RED
            options[1, 0] = -1
            options[1, 1] = K.GREEN
            sid = strategy_ids[seats[s]]
            if sid != RANDOM_ID:
                fill_view(
                    work[W_VIEW],
                    D_START_COLOUR,
                    s,
                    E.ZERO,
                    E.NONE,
                    E.NONE,
                    E.ZERO,
                    E.ZERO,
                    work[W_DECK],
                    work[W_HOLDERS],
                )
            k = decide(
                sid,
                strategy_params[seats[s]],
                work[W_SEAT_RNG][s],
                options,
                TWO,
                work[W_BOARDS][s],
                work[W_VIEW],
                data,
                rules,
                scratch,
            )
            colour = options[k, 1]
        E.put_start(work[W_BOARDS][s], start_mask, work[W_BOARD_OF][s], colour)
        out[s, R.P_START_COLOUR] = colour
        E.log_event(events_out, log, 0, -1, s, R.EV_START_PIECE, -1, -1, -1, -1, colour, 0, 0, 0)
    E.log_event(
        events_out, log, 0, -1, gs[GS_START], R.EV_START_MARKER, -1, -1, -1, -1, -1, 0, 0, 0
    )
    return deal_seed


@njit(_nrt=False)
def finish(i, game_id, deal_seed, first_start, n_players, rules, games_out, players_out, work):
    """Text 004, the end: planning and balance bonuses, totals, ranks, the game's row."""
    boards = work[W_BOARDS]
    totals = work[W_TOTALS]
    out = players_out[i]
    for s in range(n_players):
        full = E.full_squares(boards[s])
        red, green = E.colour_counts(boards[s])
        out[s, R.P_ROUNDS_TOTAL] = work[W_PS][s, PS_TOTAL]
        out[s, R.P_PLANNING_BONUS] = E.planning_bonus(full, rules)
        out[s, R.P_BALANCE_BONUS] = E.balance_bonus(red, green, rules)
        out[s, R.P_TOTAL] = (
            out[s, R.P_ROUNDS_TOTAL] + out[s, R.P_PLANNING_BONUS] + out[s, R.P_BALANCE_BONUS]
        )
        out[s, R.P_FULL_SQUARES] = E.popcount(full)
        out[s, R.P_QUARTERS] = E.quarters_built(boards[s])
        totals[s] = out[s, R.P_TOTAL]
    winners = E.rank_players(totals, n_players, out[:, R.P_RANK], out[:, R.P_WIN])
    best = 0
    mask = 0
    for s in range(n_players):
        if out[s, R.P_WIN] == 1:
            best = out[s, R.P_TOTAL]
            mask |= 1 << s
    g = games_out[i]
    g[R.G_GAME_ID] = game_id
    g[R.G_DEAL_SEED] = int64_bits(deal_seed, work[W_BITS])
    g[R.G_N_PLAYERS] = n_players
    g[R.G_N_WINNERS] = winners
    g[R.G_N_EVENTS] = work[W_LOG][1]
    g[R.G_WINNERS_MASK] = mask
    g[R.G_WINNING_SCORE] = best
    g[R.G_FIRST_START] = first_start
    for p in range(K.N_CARDS):
        g[R.G_CARD0 + p] = work[W_DECK][p]


@njit(_nrt=False)
def play_game(
    i,
    key,
    game_id,
    deal_index,
    seats,
    strategy_ids,
    strategy_params,
    data,
    rules,
    games_out,
    players_out,
    events_out,
    work,
    scratch,
):
    """Play game ``i`` of the batch into row i of the outputs."""
    n_players = seats.shape[0]
    deal_seed = setup(
        i,
        key,
        game_id,
        deal_index,
        seats,
        strategy_ids,
        strategy_params,
        data,
        rules,
        players_out,
        events_out,
        work,
        scratch,
    )
    gs = work[W_GS]
    first_start = gs[GS_START]
    out = players_out[i]
    deck = work[W_DECK]
    log = work[W_LOG]
    for rnd in range(1, K.N_ROUNDS + 1):
        gs[GS_ROUND] = rnd
        deal_round(n_players, work, out, events_out)
        first = K.ROUND_FIRST_CARD[rnd - 1]
        if rnd < K.N_ROUNDS:
            # Text 004, PLAY CARDS: every card, in play order, is placed by every player.
            for j in range(K.CARDS_PER_ROUND):
                p = first + j
                E.log_event(
                    events_out,
                    log,
                    rnd,
                    p,
                    -1,
                    R.EV_CARD,
                    deck[p],
                    -1,
                    -1,
                    -1,
                    -1,
                    0,
                    0,
                    work[W_HOLDERS][p],
                )
                for s in range(n_players):
                    place_card(
                        s,
                        deck[p],
                        p,
                        strategy_ids[seats[s]],
                        strategy_params[seats[s]],
                        data,
                        rules,
                        work,
                        scratch,
                        out,
                        events_out,
                    )
        else:
            for k in range(K.FINAL_CARDS):
                if deck[first + k] < 0:
                    continue  # the empty position a banned card leaves
                E.log_event(
                    events_out,
                    log,
                    rnd,
                    first + k,
                    -1,
                    R.EV_CARD,
                    deck[first + k],
                    -1,
                    -1,
                    -1,
                    -1,
                    0,
                    0,
                    work[W_HOLDERS][first + k],
                )
            for s in range(n_players):
                final_cards(
                    s,
                    strategy_ids[seats[s]],
                    strategy_params[seats[s]],
                    data,
                    rules,
                    work,
                    scratch,
                    out,
                    events_out,
                )
        for s in range(n_players):
            fountain_step(
                s,
                strategy_ids[seats[s]],
                strategy_params[seats[s]],
                data,
                rules,
                work,
                scratch,
                out,
                events_out,
            )
        score_round(n_players, rules, work, out, events_out)
        if rnd < K.N_ROUNDS:
            totals = work[W_TOTALS]
            for s in range(n_players):
                totals[s] = work[W_PS][s, PS_TOTAL]
            gs[GS_START] = E.next_start(totals, n_players, gs[GS_START])
            E.log_event(
                events_out,
                log,
                rnd,
                K.ROUND_LAST_CARD[rnd - 1],
                gs[GS_START],
                R.EV_START_MARKER,
                -1,
                -1,
                -1,
                -1,
                -1,
                0,
                0,
                0,
            )
    finish(i, game_id, deal_seed, first_start, n_players, rules, games_out, players_out, work)


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
    """Play ``len(game_ids)`` games (sim.core.game: the one play_batch signature). Game i's
    results depend only on the key, its game id and deal index, its seats' strategies, the
    data and the rules; the work arrays are allocated once per batch and reset by each game.
    Callers pass strategy ids as STRATEGY_ID_DTYPE so that it compiles once."""
    size = max_options(data[3])
    work = make_work(size)
    # The planner's bit sets take about 0.6 ms to build: a batch without a planner skips them.
    # Counted, not a flag started at False: a variable first typed as the literal False made
    # make_scratch compile twice (Literal[bool](False) and bool; tests/test_signatures.py).
    n_planners = 0
    for k in range(strategy_ids.shape[0]):
        n_planners += strategy_ids[k] == PLANNER_ID
    scratch = make_scratch(size, data[0], data[3], n_planners > 0)
    play_games(
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
        work,
        scratch,
    )


@njit(_nrt=False)
def play_games(
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
    work,
    scratch,
):
    """The batch's games, played on its work arrays: play_batch allocates, this counts no
    references (docs/engine.md, "Compiled without reference counts")."""
    for i in range(game_ids.shape[0]):
        play_game(
            i,
            key,
            game_ids[i],
            deal_indices[i],
            seat_strategy[i],
            strategy_ids,
            strategy_params,
            data,
            rules,
            games_out,
            players_out,
            events_out,
            work,
            scratch,
        )


# --- Python convenience -------------------------------------------------------------------------
def play_one(data, n_players, specs, seed, rules=None, events=True) -> GameRecord:
    """One game from master seed ``seed`` with one strategy per seat (spec strings or
    StrategySpec objects); game id and deal index 0."""
    from sim.tangram import GAME
    from sim.tangram.rules import make_rules

    specs = [as_spec(s) for s in specs]
    if len(specs) != n_players:
        raise ValueError(f"{n_players} players need {n_players} strategies, got {len(specs)}")
    rules = make_rules() if rules is None else rules
    ids = np.zeros(1, dtype=np.int64)
    out = play_arrays(
        GAME,
        rng.master_key(seed),
        ids,
        ids,
        np.arange(n_players, dtype=np.int32).reshape(1, n_players),
        np.array([s.id for s in specs], dtype=STRATEGY_ID_DTYPE),
        np.stack([s.params for s in specs]).astype(np.float64),
        data.arrays,
        rules,
        events,
    )
    n_events = int(out.games[0, R.G_N_EVENTS]) if events else 0
    event_rows = out.events if events else np.zeros((0, R.N_EVENT_COLS), dtype=np.int64)
    return GameRecord(
        game=records(out.games, R.GAMES, "games", ids).reshape(()),
        players=records(out.players[0, :n_players], R.PLAYERS, "players", ids.repeat(n_players)),
        events=records(event_rows[:n_events], R.EVENTS, "events", ids.repeat(n_events)),
        rules=rules,
        strategies=tuple(s.spec for s in specs),
        extra={"seed": seed, "data_label": data.label},
    )
