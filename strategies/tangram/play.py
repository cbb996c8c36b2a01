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
from sim.core.game import GameRecord
from sim.core.jit import njit
from sim.tangram import constants as K
from sim.tangram import engine as E
from sim.tangram import records as R
from sim.tangram.tileset import M_COL, M_COLOUR, M_ORIENTATION, M_ROW
from strategies.tangram.dispatch import choose
from strategies.tangram.planner import make_scratch
from strategies.tangram.registry import RANDOM_ID, as_spec
from strategies.tangram.view import (
    D_FINAL,
    D_FOUNTAIN,
    D_PLACE,
    D_START_COLOUR,
    N_VIEW,
    fill_view,
)

# Every caller passes strategy ids in this dtype, so play_batch compiles once.
STRATEGY_ID_DTYPE = np.int32

# Per-seat game state besides the board (int64[MAX_PLAYERS, N_PS]).
PS_TOTAL = 0  # running total of round scores
PS_SUPPLY = 1  # fountains in hand (kept from earlier rounds under fountain_kept = yes)
N_PS = 2


@njit
def make_work(max_options):
    """The game loop's arrays, allocated once per batch and reset by every game."""
    return (
        np.zeros((max_options, 2), dtype=np.int64),  # options of the current decision
        np.zeros(N_VIEW, dtype=np.int64),
        np.zeros((K.MAX_PLAYERS, E.N_LAYERS, K.N_WORDS), dtype=np.uint64),  # boards
        np.zeros((K.MAX_PLAYERS, N_PS), dtype=np.int64),
        np.zeros(K.N_CARDS, dtype=np.int64),  # deck: tile at each position, in play order
        np.zeros(K.N_CARDS, dtype=np.int64),  # holders: seats that saw each card beforehand
        np.zeros(K.N_BOARDS, dtype=np.int64),  # board of each seat
        np.zeros((K.MAX_PLAYERS, 2), dtype=np.uint64),  # seat streams
        np.zeros(2, dtype=np.uint64),  # deal stream
        np.zeros(K.MAX_PLAYERS, dtype=np.int64),  # totals for the start marker
        np.zeros(K.FINAL_CARDS, dtype=np.int64),  # tiles in hand (random_option)
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


@njit
def int64_bits(value):
    """A uint64 stored bit for bit as int64 (the same compiled and interpreted)."""
    box = np.empty(1, dtype=np.uint64)
    box[0] = value
    return box.view(np.int64)[0]


ONE = np.int64(1)  # not literal arguments: see sim.tangram.engine.ZERO
TWO = np.int64(2)
RANDOM_TRIES = 8  # draws over all placements before the random strategy lists the legal ones


@njit
def random_option(board, place_mask, tile_first, hand, n_hand, with_none, state, options):
    """The random strategy's option: uniform over the legal placements of the ``n_hand`` tiles
    in ``hand`` plus one decline per tile (``with_none``; fountains: one "none"). Returns
    (placement or -1, tile).

    Instead of listing every legal placement (a scan of all of them), it draws among all
    placements and declines and keeps the draw if it is legal: conditioned on being kept, a
    draw is uniform over the legal options, and after RANDOM_TRIES misses it lists the legal
    ones and draws among them, also uniformly; so the choice is uniform either way."""
    total = 0
    for h in range(n_hand):
        total += tile_first[hand[h] + 1] - tile_first[hand[h]]
    declines = n_hand if with_none else 0
    for _ in range(RANDOM_TRIES):
        r = rng.randint(state, total + declines)
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
    if with_none:
        for h in range(n_hand):
            options[n, 0] = -1
            options[n, 1] = hand[h]
            n += 1
    if n == 0:
        return -1, hand[0]
    k = rng.randint(state, n)
    return options[k, 0], options[k, 1]


@njit
def decide(strategy_id, params, state, options, n, board, view, data, rules, scratch):
    """Index of the option the seat's strategy picks (no question asked with one option)."""
    if n == 1:
        return 0
    if strategy_id == RANDOM_ID:
        return rng.randint(state, n)  # uniform needs no view: skip the dispatch
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


@njit
def place_card(
    seat,
    tile,
    turn,
    rnd,
    strategy_id,
    params,
    state,
    board,
    out,
    ps,
    deck,
    holders,
    data,
    rules,
    work,
    scratch,
    events,
    base,
    ne,
):
    """The seat places ``tile`` (card at deck position ``turn``) or declines it for good."""
    place_mask, place_meta, _, tile_first, _ = data
    options = work[0]
    view = work[1]
    hand = work[10]
    if strategy_id == RANDOM_ID:
        hand[0] = tile
        p, _ = random_option(board, place_mask, tile_first, hand, ONE, True, state, options)
    else:
        n = E.legal_placements(board, place_mask, tile_first, tile, options, E.ZERO)
        options[n, 0] = -1  # text 004: "players are allowed to refrain from placing Tiles"
        options[n, 1] = tile
        n += 1
        if n > 1:
            fill_view(view, D_PLACE, seat, rnd, turn, turn, ps[seat, PS_SUPPLY], 0, deck, holders)
        p = options[
            decide(strategy_id, params, state, options, n, board, view, data, rules, scratch), 0
        ]
    return apply_choice(
        seat, p, tile, turn, rnd, board, out, place_meta, place_mask, events, base, ne
    )


@njit
def apply_choice(seat, p, tile, turn, rnd, board, out, place_meta, place_mask, events, base, ne):
    if p >= 0:
        E.put(board, place_mask, place_meta, p)
        out[seat, R.P_TILES_PLACED] += 1
        return E.log_event(
            events,
            base,
            ne,
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
    out[seat, R.P_TILES_DECLINED] += 1
    out[seat, R.P_DECLINED_MASK] |= 1 << tile
    return E.log_event(
        events, base, ne, rnd, turn, seat, R.EV_DECLINE, tile, -1, -1, -1, -1, 0, 0, 0
    )


@njit
def final_cards(
    seat,
    rnd,
    strategy_id,
    params,
    state,
    board,
    out,
    ps,
    deck,
    holders,
    data,
    rules,
    work,
    scratch,
    events,
    base,
    ne,
):
    """Text 004, FINAL ROUND: the last 3 cards are revealed together and the seat places them
    in any order it chooses: each decision lists every placement of every card still in hand
    and the declines; the chosen card leaves the hand."""
    place_mask, place_meta, _, tile_first, _ = data
    options = work[0]
    view = work[1]
    hand = work[10]
    first = K.ROUND_FIRST_CARD[K.N_ROUNDS - 1]
    left = (1 << K.FINAL_CARDS) - 1
    while left != 0:
        if strategy_id == RANDOM_ID:
            n_hand = E.ZERO
            for k in range(K.FINAL_CARDS):
                if left >> k & 1:
                    hand[n_hand] = deck[first + k]
                    n_hand += 1
            p, tile = random_option(
                board, place_mask, tile_first, hand, n_hand, True, state, options
            )
        else:
            n = E.ZERO
            for k in range(K.FINAL_CARDS):
                if left >> k & 1:
                    n = E.legal_placements(
                        board, place_mask, tile_first, deck[first + k], options, n
                    )
            for k in range(K.FINAL_CARDS):
                if left >> k & 1:
                    options[n, 0] = -1
                    options[n, 1] = deck[first + k]
                    n += 1
            if n > 1:
                fill_view(
                    view,
                    D_FINAL,
                    seat,
                    rnd,
                    K.N_CARDS - 1,
                    K.N_CARDS - 1,
                    ps[seat, PS_SUPPLY],
                    left,
                    deck,
                    holders,
                )
            i = decide(strategy_id, params, state, options, n, board, view, data, rules, scratch)
            p = options[i, 0]
            tile = options[i, 1]
        turn = first
        for k in range(K.FINAL_CARDS):
            if left >> k & 1 and deck[first + k] == tile:
                left &= ~(1 << k)
                turn = first + k
                break
        ne = apply_choice(
            seat, p, tile, turn, rnd, board, out, place_meta, place_mask, events, base, ne
        )
    return ne


@njit
def fountain_step(
    seat,
    rnd,
    strategy_id,
    params,
    state,
    board,
    out,
    ps,
    deck,
    holders,
    data,
    rules,
    work,
    scratch,
    events,
    base,
    ne,
):
    """Text 004, PLACING FOUNTAIN TILES, read as optional (facts file: "may"): the seat gets
    this round's fountain and places it or not; under fountain_kept = yes unplaced fountains
    stay in hand and a later step may place several, otherwise an unplaced one is lost."""
    place_mask, place_meta, _, tile_first, _ = data
    options = work[0]
    view = work[1]
    fountain = tile_first.shape[0] - 2
    turn = K.ROUND_LAST_CARD[rnd - 1]
    ps[seat, PS_SUPPLY] += 1
    hand = work[10]
    hand[0] = fountain
    while ps[seat, PS_SUPPLY] > 0:
        if strategy_id == RANDOM_ID:
            p, _ = random_option(board, place_mask, tile_first, hand, ONE, True, state, options)
        else:
            n = E.legal_placements(board, place_mask, tile_first, fountain, options, E.ZERO)
            options[n, 0] = -1
            options[n, 1] = fountain
            n += 1
            if n > 1:
                fill_view(
                    view, D_FOUNTAIN, seat, rnd, turn, turn, ps[seat, PS_SUPPLY], 0, deck, holders
                )
            k = decide(strategy_id, params, state, options, n, board, view, data, rules, scratch)
            p = options[k, 0]
        if p < 0:
            break
        E.put(board, place_mask, place_meta, p)
        ps[seat, PS_SUPPLY] -= 1
        out[seat, R.P_FOUNTAINS] += 1
        ne = E.log_event(
            events,
            base,
            ne,
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
    return ne


@njit
def score_round(rnd, n_players, boards, out, ps, rules, events, base, ne):
    """Text 004, ROUND SCORING and ROUND END: each seat scores its largest fully built
    rectangle, then sets its balance markers to its red and green squares."""
    turn = K.ROUND_LAST_CARD[rnd - 1]
    for s in range(n_players):
        points = E.largest_rectangle(E.full_squares(boards[s]))
        ps[s, PS_TOTAL] += points
        out[s, R.P_ROUND1 + rnd - 1] = points
        ne = E.log_event(
            events,
            base,
            ne,
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
        ne = E.log_event(
            events, base, ne, rnd, turn, s, R.EV_BALANCE, -1, -1, -1, -1, -1, red, green, 0
        )
    return ne


@njit
def note_holders(rnd, n_players, first, holders, out):
    """Record who held a card of their own or a shared card in this round."""
    everyone = (1 << n_players) - 1
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


@njit
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
    _, _, _, tile_first, start_mask = data
    _, view, boards, ps, deck, holders, board_of, srng, dstate, totals, _ = work
    options = work[0]
    n_players = seats.shape[0]
    base = i * R.EVENTS_PER_GAME if events_out.shape[0] > 0 else 0
    ne = 0
    deal_seed = rng.stream_seed(key, deal_index, rng.DEAL_STREAM)
    rng.seed_state(dstate, deal_seed)
    start = E.deal(dstate, deck, board_of, n_players, rules)
    first_start = start
    out = players_out[i]
    for s in range(K.MAX_PLAYERS):
        for c in range(R.N_PLAYER_COLS):
            out[s, c] = -1 if s >= n_players else 0
    for s in range(n_players):
        rng.seed_state(srng[s], rng.stream_seed(key, game_id, 1 + s))
        ps[s, PS_TOTAL] = 0
        ps[s, PS_SUPPLY] = 0
        out[s, R.P_SEAT] = s
        out[s, R.P_STRATEGY] = seats[s]
        out[s, R.P_BOARD] = board_of[s]
    for p in range(K.N_CARDS):
        holders[p] = 0

    # Setup: each seat's board side (the start piece's colour), then the start marker.
    for s in range(n_players):
        sid = strategy_ids[seats[s]]
        colour = K.RED
        rule = rules[K.RO_START_COLOUR]
        if rule == K.START_COLOUR_GREEN:
            colour = K.GREEN
        elif rule == K.START_COLOUR_CHOOSE:
            options[0, 0] = -1
            options[0, 1] = K.RED
            options[1, 0] = -1
            options[1, 1] = K.GREEN
            if sid != RANDOM_ID:
                fill_view(
                    view, D_START_COLOUR, s, E.ZERO, E.NONE, E.NONE, E.ZERO, E.ZERO, deck, holders
                )
            k = decide(
                sid,
                strategy_params[seats[s]],
                srng[s],
                options,
                TWO,
                boards[s],
                view,
                data,
                rules,
                scratch,
            )
            colour = options[k, 1]
        E.put_start(boards[s], start_mask, board_of[s], colour)
        out[s, R.P_START_COLOUR] = colour
        ne = E.log_event(
            events_out, base, ne, 0, -1, s, R.EV_START_PIECE, -1, -1, -1, -1, colour, 0, 0, 0
        )
    ne = E.log_event(
        events_out, base, ne, 0, -1, start, R.EV_START_MARKER, -1, -1, -1, -1, -1, 0, 0, 0
    )

    everyone = (1 << n_players) - 1
    for rnd in range(1, K.N_ROUNDS + 1):
        first = K.ROUND_FIRST_CARD[rnd - 1]
        out[start, R.P_START_ROUNDS] |= 1 << (rnd - 1)
        if rnd < K.N_ROUNDS:
            E.round_holders(n_players, start, first, holders)
            note_holders(rnd, n_players, first, holders, out)
            # Text 004, PLAY CARDS: every card, in play order, is placed by every player.
            for j in range(K.CARDS_PER_ROUND):
                p = first + j
                tile = deck[p]
                ne = E.log_event(
                    events_out,
                    base,
                    ne,
                    rnd,
                    p,
                    -1,
                    R.EV_CARD,
                    tile,
                    -1,
                    -1,
                    -1,
                    -1,
                    0,
                    0,
                    holders[p],
                )
                for s in range(n_players):
                    ne = place_card(
                        s,
                        tile,
                        p,
                        rnd,
                        strategy_ids[seats[s]],
                        strategy_params[seats[s]],
                        srng[s],
                        boards[s],
                        out,
                        ps,
                        deck,
                        holders,
                        data,
                        rules,
                        work,
                        scratch,
                        events_out,
                        base,
                        ne,
                    )
        else:
            for k in range(K.FINAL_CARDS):
                holders[first + k] = everyone
                ne = E.log_event(
                    events_out,
                    base,
                    ne,
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
                    everyone,
                )
            for s in range(n_players):
                ne = final_cards(
                    s,
                    rnd,
                    strategy_ids[seats[s]],
                    strategy_params[seats[s]],
                    srng[s],
                    boards[s],
                    out,
                    ps,
                    deck,
                    holders,
                    data,
                    rules,
                    work,
                    scratch,
                    events_out,
                    base,
                    ne,
                )
        for s in range(n_players):
            ne = fountain_step(
                s,
                rnd,
                strategy_ids[seats[s]],
                strategy_params[seats[s]],
                srng[s],
                boards[s],
                out,
                ps,
                deck,
                holders,
                data,
                rules,
                work,
                scratch,
                events_out,
                base,
                ne,
            )
        ne = score_round(rnd, n_players, boards, out, ps, rules, events_out, base, ne)
        if rnd < K.N_ROUNDS:
            for s in range(n_players):
                totals[s] = ps[s, PS_TOTAL]
            start = E.next_start(totals, n_players, start)
            ne = E.log_event(
                events_out,
                base,
                ne,
                rnd,
                K.ROUND_LAST_CARD[rnd - 1],
                start,
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

    # End of the game: bonuses, totals, ranks.
    for s in range(n_players):
        full = E.full_squares(boards[s])
        red, green = E.colour_counts(boards[s])
        out[s, R.P_ROUNDS_TOTAL] = ps[s, PS_TOTAL]
        out[s, R.P_PLANNING_BONUS] = E.planning_bonus(full, rules)
        out[s, R.P_BALANCE_BONUS] = E.balance_bonus(red, green, rules)
        out[s, R.P_TOTAL] = ps[s, PS_TOTAL] + out[s, R.P_PLANNING_BONUS] + out[s, R.P_BALANCE_BONUS]
        out[s, R.P_FULL_SQUARES] = E.popcount(full)
        out[s, R.P_QUARTERS] = E.quarters_built(boards[s])
    for s in range(n_players):
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
    g[R.G_DEAL_SEED] = int64_bits(deal_seed)
    g[R.G_N_PLAYERS] = n_players
    g[R.G_N_WINNERS] = winners
    g[R.G_N_EVENTS] = ne
    g[R.G_WINNERS_MASK] = mask
    g[R.G_WINNING_SCORE] = best
    g[R.G_FIRST_START] = first_start
    for p in range(K.N_CARDS):
        g[R.G_CARD0 + p] = deck[p]


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
    scratch = make_scratch(size)
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
    from sim.tangram.rules import make_rules

    specs = [as_spec(s) for s in specs]
    if len(specs) != n_players:
        raise ValueError(f"{n_players} players need {n_players} strategies, got {len(specs)}")
    rules = make_rules() if rules is None else rules
    key = rng.master_key(seed)
    games = np.zeros((1, R.N_GAME_COLS), dtype=np.int64)
    players = np.zeros((1, K.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int64)
    event_rows = np.zeros((R.EVENTS_PER_GAME if events else 0, R.N_EVENT_COLS), dtype=np.int64)
    ids = np.zeros(1, dtype=np.int64)
    play_batch(
        key,
        ids,
        ids,
        np.arange(n_players, dtype=np.int32).reshape(1, n_players),
        np.array([s.id for s in specs], dtype=STRATEGY_ID_DTYPE),
        np.stack([s.params for s in specs]).astype(np.float64),
        data.arrays,
        rules,
        games,
        players,
        event_rows,
    )
    n_events = int(games[0, R.G_N_EVENTS])
    return GameRecord(
        game=_records(games[0], R.GAMES)[()],
        players=_records(players[0, :n_players], R.PLAYERS),
        events=_records(event_rows[:n_events], R.EVENTS),
        rules=rules,
        strategies=tuple(s.spec for s in specs),
        extra={"seed": seed, "data_label": data.label},
    )


def _records(rows: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """int64 rows (or one row) as records of ``dtype``, each value checked to fit."""
    rows = np.asarray(rows)
    single = rows.ndim == 1
    rows = rows.reshape(-1, len(dtype.names))
    out = np.zeros(rows.shape[0], dtype=dtype)
    for c, name in enumerate(dtype.names):
        info = np.iinfo(dtype[name])
        column = rows[:, c]
        if column.size and (column.min() < info.min or column.max() > info.max):
            raise OverflowError(f"column {name!r} does not fit {dtype[name]}")
        out[name] = column
    return out.reshape(()) if single else out
