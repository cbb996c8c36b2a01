"""The tables a NEOM game writes: one numpy record dtype per table.

Each dtype is both the layout the compiled game writes (``games_out``, ``players_out``,
``events_out`` of ``play_batch`` are int64 arrays whose columns are the dtype's fields, in
order: see ``sim.core.game``) and the Parquet schema of the stored table (the core checks every
value against its field's type). The column constants below are looked up in the dtypes, so the
compiled code and the stored tables cannot disagree; adding a column means adding one field.

Storage types: values a catalogue can scale (scores, coins, money) are int32 (the catalogue
validator bounds every value so that no game total can leave that range); tile ids int16; small
counts and masks int8.
"""

import numpy as np

MAX_PLAYERS = 5
MAX_EVENTS_PER_GAME = 1024  # each game's block of rows in the event buffer

GAMES = np.dtype(
    [
        ("game_id", np.int64),
        ("deal_seed", np.int64),  # the deal stream's seed (uint64 bits stored as int64)
        ("n_players", np.int8),
        ("variant", np.int8),
        ("n_winners", np.int8),
        ("winners_mask", np.int8),  # bit s set: seat s shares the win
        ("winning_score", np.int32),
        ("disasters_mask", np.int8),  # bit g-1 set: generation g's disaster happened
        # cornerstones left over from the draft (tile index, -1 if none)
        ("discarded_cs0", np.int16),
        ("discarded_cs1", np.int16),
        ("discarded_cs2", np.int16),
        ("discarded_cs3", np.int16),
        ("discarded_cs4", np.int16),
        ("n_events", np.int32),  # events this game wrote (0 without an event buffer)
    ]
)

PLAYERS = np.dtype(
    [
        ("seat", np.int8),
        ("strategy", np.int8),  # index into the run's strategy list
        ("board", np.int8),
        # the score breakdown, same order as constants.SCORE_KEYS
        ("tiles", np.int32),
        ("neighborhoods", np.int32),
        ("goods", np.int32),
        ("money_vp", np.int32),
        ("pollution", np.int32),
        ("ghost_town", np.int32),
        ("power", np.int32),
        ("total", np.int32),
        ("rank", np.int8),  # 1 = best; tied players share the better rank
        ("win", np.int8),  # 1 if this seat shares the win
        ("money", np.int32),  # final money
        # cornerstones drafted (tile index, -1 if none)
        ("cs_drafted0", np.int16),
        ("cs_drafted1", np.int16),
        ("cs_drafted2", np.int16),
        # generation in which drafted cornerstone k was placed, 0 if never, CS_SWAPPED_AWAY
        # (-1) if swapped away unplaced (Contract Office, beginner variant)
        ("cs_gen0", np.int8),
        ("cs_gen1", np.int8),
        ("cs_gen2", np.int8),
        ("cs_placed", np.int8),
        # tiles placed over the game, by type (a two-type tile counts twice)
        ("placed_residential", np.int8),
        ("placed_commercial", np.int8),
        ("placed_industrial", np.int8),
        ("placed_public", np.int8),
        ("placed_resource", np.int8),
        ("tiles_sold", np.int8),
        ("disasters_selected", np.int8),
        ("disasters_paid", np.int8),  # disasters resolved by paying
        ("disasters_sacrificed", np.int8),  # disasters resolved by sacrificing tiles
        ("disaster_coins", np.int32),  # coins paid to disasters
        ("disaster_tiles_lost", np.int8),
        ("goods_mask", np.int32),  # goods the final city produces
        ("trade_routes", np.int8),  # bit 0 left, bit 1 right, at the end of the game
        ("coins_buying", np.int32),  # coins paid to other players for goods
        ("coins_selling", np.int32),  # coins received from other players for goods
        ("income_total", np.int32),  # coins received as income over the game
        # score (total, money included) as if the game ended after generation 1 / 2's income;
        # recorded with the event log (the game-flow section reads both), else
        # SCORE_NOT_RECORDED (a score can be negative: no small sentinel will do)
        ("score_gen1", np.int32),
        ("score_gen2", np.int32),
    ]
)

# One row per decision or money change; the core adds the game id and the kind's name.
EVENTS = np.dtype(
    [
        ("turn", np.int8),  # 0..20 for generation turns (gen = turn // 7 + 1); -1: the draft
        ("player", np.int8),
        ("kind", np.int8),  # EV_*
        ("tile", np.int16),  # tile index, -1 if none
        ("cell", np.int8),  # cell 0..24, -1 if none
        ("coins", np.int32),  # the player's money change (negative: paid)
        ("other", np.int16),  # seller / buyer of goods, option or choice index otherwise
        ("good", np.int8),  # good index for purchases, -1 otherwise
    ]
)
TABLES = {"games": GAMES, "players": PLAYERS, "events": EVENTS}

G_GAME_ID = GAMES.names.index("game_id")
G_DEAL_SEED = GAMES.names.index("deal_seed")
G_N_PLAYERS = GAMES.names.index("n_players")
G_VARIANT = GAMES.names.index("variant")
G_N_WINNERS = GAMES.names.index("n_winners")
G_WINNERS_MASK = GAMES.names.index("winners_mask")
G_WINNING_SCORE = GAMES.names.index("winning_score")
G_DISASTERS_MASK = GAMES.names.index("disasters_mask")
G_DISCARDED_CS0 = GAMES.names.index("discarded_cs0")  # then cs1..cs4
G_DISCARDED_CS4 = GAMES.names.index("discarded_cs4")
G_N_EVENTS = GAMES.names.index("n_events")
N_GAME_COLS = len(GAMES.names)

P_SEAT = PLAYERS.names.index("seat")
P_STRATEGY = PLAYERS.names.index("strategy")
P_BOARD = PLAYERS.names.index("board")
P_SCORE_TILES = PLAYERS.names.index("tiles")  # then the other score categories, in order
P_SCORE_TOTAL = PLAYERS.names.index("total")
P_RANK = PLAYERS.names.index("rank")
P_WIN = PLAYERS.names.index("win")
P_MONEY = PLAYERS.names.index("money")
P_CS_DRAFTED0 = PLAYERS.names.index("cs_drafted0")  # then cs_drafted1, cs_drafted2
P_CS_DRAFTED1 = PLAYERS.names.index("cs_drafted1")
P_CS_DRAFTED2 = PLAYERS.names.index("cs_drafted2")
P_CS_GEN0 = PLAYERS.names.index("cs_gen0")  # then cs_gen1, cs_gen2
P_CS_GEN2 = PLAYERS.names.index("cs_gen2")
CS_SWAPPED_AWAY = -1  # cs_gen of a drafted cornerstone swapped away before it was placed
P_CS_PLACED = PLAYERS.names.index("cs_placed")
P_PLACED_RESIDENTIAL = PLAYERS.names.index("placed_residential")
P_PLACED_COMMERCIAL = PLAYERS.names.index("placed_commercial")
P_PLACED_INDUSTRIAL = PLAYERS.names.index("placed_industrial")
P_PLACED_PUBLIC = PLAYERS.names.index("placed_public")
P_PLACED_RESOURCE = PLAYERS.names.index("placed_resource")
P_TILES_SOLD = PLAYERS.names.index("tiles_sold")
P_DISASTERS_SELECTED = PLAYERS.names.index("disasters_selected")
P_DISASTERS_PAID = PLAYERS.names.index("disasters_paid")
P_DISASTERS_SACRIFICED = PLAYERS.names.index("disasters_sacrificed")
P_DISASTER_COINS = PLAYERS.names.index("disaster_coins")
P_DISASTER_TILES_LOST = PLAYERS.names.index("disaster_tiles_lost")
P_GOODS_MASK = PLAYERS.names.index("goods_mask")
P_TRADE_ROUTES = PLAYERS.names.index("trade_routes")
P_COINS_BUYING = PLAYERS.names.index("coins_buying")
P_COINS_SELLING = PLAYERS.names.index("coins_selling")
P_INCOME_TOTAL = PLAYERS.names.index("income_total")
P_SCORE_GEN1 = PLAYERS.names.index("score_gen1")  # then score_gen2
SCORE_NOT_RECORDED = int(np.iinfo(np.int32).min)
N_PLAYER_COLS = len(PLAYERS.names)

E_TURN = EVENTS.names.index("turn")
E_PLAYER = EVENTS.names.index("player")
E_KIND = EVENTS.names.index("kind")
E_TILE = EVENTS.names.index("tile")
E_CELL = EVENTS.names.index("cell")
E_COINS = EVENTS.names.index("coins")
E_OTHER = EVENTS.names.index("other")
E_GOOD = EVENTS.names.index("good")
N_EVENT_COLS = len(EVENTS.names)

EV_DRAFT_PICK = 0  # E_TILE: cornerstone kept; E_OTHER: pick number 0..2
EV_SELECT = 1  # tile selected from the hand (E_OTHER: hand size it was chosen from)
EV_PLACE = 2  # selected tile placed (E_COINS: coin cost paid, negative)
EV_CORNERSTONE = 3  # cornerstone placed (E_TILE: the cornerstone; E_OTHER: the discarded tile)
EV_SELL = 4
EV_DISASTER_SELECT = 5
EV_BUY = 6  # good bought (E_OTHER: seller)
EV_GOOD_SOLD = 7  # good sold to another player (E_OTHER: buyer)
EV_DISASTER_PAY = 8
EV_DISASTER_SACRIFICE = 9  # one row per tile sacrificed
EV_INCOME = 10
EV_EFFECT_COINS = 11  # coins from a tile effect (Merchant Union, coins on place)
EV_DISCARD = 12  # 7th-turn leftover tile returned to the box
EV_REPLACED = 13  # tile removed by a replacement (E_TILE: removed tile)
EV_CS_TAKEN = 14  # discarded cornerstone taken (effect)
EV_CS_SWAPPED = 15  # cornerstone swapped (E_TILE: new one, E_OTHER: old one)
EVENT_KIND_NAMES = (
    "draft_pick",
    "select",
    "place",
    "cornerstone",
    "sell",
    "disaster_select",
    "buy",
    "good_sold",
    "disaster_pay",
    "disaster_sacrifice",
    "income",
    "effect_coins",
    "discard",
    "replaced",
    "cornerstone_taken",
    "cornerstone_swapped",
)
