"""What the compiled game writes: int64 rows whose columns are the fields of the record dtypes.

``play_batch`` fills ``games_out[n, len(GAMES)]``, ``players_out[n, MAX_PLAYERS,
len(PLAYERS)]`` (rows of unused seats -1) and ``events_out[n * EVENTS_PER_GAME, len(EVENTS)]``.
The core stores each column with its field's type, after checking every value fits; the bounds
below say why each type is wide enough. Column index constants (``G_*``, ``P_*``, ``E_*``) are
what the compiled code uses; ``tests/test_tangram_records.py`` checks them against the dtypes.
"""

import numpy as np

from sim.tangram import constants as K

# --- games: one row per game ------------------------------------------------------------------
G_GAME_ID = 0
G_DEAL_SEED = 1  # the deal stream's seed (uint64 bits as int64)
G_N_PLAYERS = 2
G_N_WINNERS = 3
G_N_EVENTS = 4
G_WINNERS_MASK = 5  # bit s: seat s shares the win
G_WINNING_SCORE = 6
G_FIRST_START = 7  # the start player of round 1
G_CARD0 = 8  # card_0 .. card_22: the tile played at each deck position, in play order
N_GAME_COLS = G_CARD0 + K.N_CARDS

GAMES = np.dtype(
    [
        ("game_id", np.int64),
        ("deal_seed", np.int64),
        ("n_players", np.int8),
        ("n_winners", np.int8),
        ("n_events", np.int16),  # <= EVENTS_PER_GAME (256)
        ("winners_mask", np.int8),  # 5 bits
        ("winning_score", np.int16),  # <= 6 * 49 + 15 + 20
        ("first_start", np.int8),
        *((f"card_{p}", np.int8) for p in range(K.N_CARDS)),  # tile index < 64 (file limit)
    ]
)

# --- players: one row per seat -----------------------------------------------------------------
P_SEAT = 0
P_STRATEGY = 1  # index into the run's strategy list
P_BOARD = 2  # index of the City Board played (its start piece)
P_START_COLOUR = 3  # 0 red, 1 green
P_ROUND1 = 4  # round_1 .. round_6: each round's score (largest rectangle, <= 49)
P_ROUNDS_TOTAL = P_ROUND1 + K.N_ROUNDS
P_PLANNING_BONUS = P_ROUNDS_TOTAL + 1
P_BALANCE_BONUS = P_ROUNDS_TOTAL + 2
P_RED = P_ROUNDS_TOTAL + 3  # final red balance marker
P_GREEN = P_ROUNDS_TOTAL + 4
P_TOTAL = P_ROUNDS_TOTAL + 5
P_RANK = P_ROUNDS_TOTAL + 6  # 1 = best; tied players share the better rank
P_WIN = P_ROUNDS_TOTAL + 7  # 1 if the seat shares the victory
P_TILES_PLACED = P_ROUNDS_TOTAL + 8
P_TILES_DECLINED = P_ROUNDS_TOTAL + 9
P_FOUNTAINS = P_ROUNDS_TOTAL + 10  # fountains placed
P_FULL_SQUARES = P_ROUNDS_TOTAL + 11  # squares fully built at the end
P_QUARTERS = P_ROUNDS_TOTAL + 12  # quarter triangles built at the end (<= 196)
P_DECLINED_MASK = P_ROUNDS_TOTAL + 13  # bit t: tile t declined (23 bits)
P_HAND_ROUNDS = P_ROUNDS_TOTAL + 14  # bit r-1: held a card of its own in round r
P_SHARED_ROUNDS = P_ROUNDS_TOTAL + 15  # bit r-1: shared a hand card in round r
P_START_ROUNDS = P_ROUNDS_TOTAL + 16  # bit r-1: held the start marker in round r
N_PLAYER_COLS = P_ROUNDS_TOTAL + 17

PLAYERS = np.dtype(
    [
        ("seat", np.int8),
        ("strategy", np.int16),
        ("board", np.int8),
        ("start_colour", np.int8),
        *((f"round_{r}", np.int8) for r in range(1, K.N_ROUNDS + 1)),
        ("rounds_total", np.int16),  # <= 6 * 49
        ("planning_bonus", np.int16),  # rules value (printed 15)
        ("balance_bonus", np.int16),  # rules value (printed 20 at most)
        ("red", np.int8),  # <= 49
        ("green", np.int8),
        ("total", np.int16),  # <= 294 + bonuses (rules values are at most 1000 each)
        ("rank", np.int8),
        ("win", np.int8),
        ("tiles_placed", np.int8),  # <= 23
        ("tiles_declined", np.int8),
        ("fountains", np.int8),  # <= 6
        ("full_squares", np.int8),  # <= 49
        ("quarters", np.int16),  # <= 196
        ("declined_mask", np.int32),  # 23 bits
        ("hand_rounds", np.int8),  # 6 bits
        ("shared_rounds", np.int8),
        ("start_rounds", np.int8),
    ]
)

# --- events ------------------------------------------------------------------------------------
E_ROUND = 0  # 0 = setup, 1..6
E_TURN = 1  # deck position of the card (0..22); round events: the round's last card; setup -1
E_PLAYER = 2  # seat, -1 for events of the table (card)
E_KIND = 3
E_TILE = 4  # tile index, -1 if none
E_ORIENTATION = 5  # place: 0-7 (4 * flipped + quarter turns); fountain: half 0-3 (NE SE SW NW)
E_ROW = 6  # place: top-left of the oriented shape's box; fountain: its square
E_COL = 7
E_COLOUR = 8  # 0 red, 1 green, 2 fountain; start_piece: the side chosen
E_POINTS = 9  # round_score: the round's points; balance: red marker
E_TOTAL = 10  # round_score: running total; balance: green marker
E_KNOWN = 11  # card: bit s set if seat s saw the card before it was played
N_EVENT_COLS = 12

EVENTS = np.dtype(
    [
        ("round", np.int8),
        ("turn", np.int8),
        ("player", np.int8),
        ("kind", np.int8),
        ("tile", np.int8),
        ("orientation", np.int8),
        ("row", np.int8),
        ("col", np.int8),
        ("colour", np.int8),
        ("points", np.int16),
        ("total", np.int16),
        ("known", np.int8),  # 5 bits
    ]
)

EV_START_PIECE = 0  # a seat's start piece side (colour)
EV_CARD = 1  # a card revealed (tile, known)
EV_PLACE = 2  # a seat placed the card's tile
EV_DECLINE = 3  # a seat set the card's tile aside for good
EV_FOUNTAIN = 4  # a seat placed a fountain
EV_ROUND_SCORE = 5  # points = largest fully built rectangle, total = running total
EV_BALANCE = 6  # the balance markers set: points = red, total = green
EV_START_MARKER = 7  # the start marker given to ``player`` (setup: the first start player)
EVENT_KINDS = (
    "start_piece",
    "card",
    "place",
    "decline",
    "fountain",
    "round_score",
    "balance",
    "start_marker",
)

# Rows reserved per game. At most, with 5 players: 5 start pieces + 6 start markers + 23 cards
# + 23 * 5 placements or declines + 6 * 5 fountains + 6 * 5 scores + 6 * 5 balances = 239.
EVENTS_PER_GAME = 256
TABLES = {"games": GAMES, "players": PLAYERS, "events": EVENTS}
