"""Layout of what the compiled game writes: preallocated integer arrays with named columns.

The engine fills ``games[n_games, N_GAME_COLS]`` (int64), ``players[n_games, MAX_PLAYERS,
N_PLAYER_COLS]`` (int32; rows past the game's player count stay -1) and, optionally, an event
buffer ``events[max_events, N_EVENT_COLS]`` (int32). The runner turns them into Parquet tables
whose column names are the ``*_COLUMNS`` tuples below, in order, so adding a column means adding
one constant here and one name to the tuple.
"""

MAX_PLAYERS = 5
MAX_EVENTS_PER_GAME = 1024  # each game's block of rows in the event buffer

# --- games: one row per game (int64) ----------------------------------------------------------
G_GAME_ID = 0
G_DEAL_SEED = 1  # the deal stream's seed (uint64 bits stored as int64)
G_N_PLAYERS = 2
G_VARIANT = 3
G_N_WINNERS = 4
G_WINNERS_MASK = 5  # bit s set: seat s shares the win
G_WINNING_SCORE = 6
G_DISASTERS_MASK = 7  # bit g-1 set: generation g's disaster happened
G_DISCARDED_CS0 = 8  # cornerstones left over from the draft (tile index, -1 if none)
G_DISCARDED_CS1 = 9
G_DISCARDED_CS2 = 10
G_DISCARDED_CS3 = 11
G_DISCARDED_CS4 = 12
G_N_EVENTS = 13  # events this game wrote (0 without an event buffer)
N_GAME_COLS = 14
GAME_COLUMNS = (
    "game_id",
    "deal_seed",
    "n_players",
    "variant",
    "n_winners",
    "winners_mask",
    "winning_score",
    "disasters_mask",
    "discarded_cs0",
    "discarded_cs1",
    "discarded_cs2",
    "discarded_cs3",
    "discarded_cs4",
    "n_events",
)

# --- players: one row per seat (int32) --------------------------------------------------------
P_SEAT = 0
P_STRATEGY = 1  # index into the run's strategy list
P_BOARD = 2
P_SCORE_TILES = 3  # the score breakdown, same order as constants.SCORE_KEYS
P_SCORE_NEIGHBORHOODS = 4
P_SCORE_GOODS = 5
P_SCORE_MONEY = 6
P_SCORE_POLLUTION = 7
P_SCORE_GHOST_TOWN = 8
P_SCORE_POWER = 9
P_SCORE_TOTAL = 10
P_RANK = 11  # 1 = best; tied players share the better rank
P_WIN = 12  # 1 if this seat shares the win
P_MONEY = 13  # final money
P_CS_DRAFTED0 = 14  # cornerstones drafted (tile index, -1 if none)
P_CS_DRAFTED1 = 15
P_CS_DRAFTED2 = 16
P_CS_GEN0 = 17  # generation in which drafted cornerstone k was placed, 0 if never
P_CS_GEN1 = 18
P_CS_GEN2 = 19
P_CS_PLACED = 20
P_PLACED_RESIDENTIAL = 21  # tiles placed over the game, by type (a two-type tile counts twice)
P_PLACED_COMMERCIAL = 22
P_PLACED_INDUSTRIAL = 23
P_PLACED_PUBLIC = 24
P_PLACED_RESOURCE = 25
P_TILES_SOLD = 26
P_DISASTERS_SELECTED = 27
P_DISASTERS_PAID = 28  # disasters resolved by paying
P_DISASTERS_SACRIFICED = 29  # disasters resolved by sacrificing tiles
P_DISASTER_COINS = 30  # coins paid to disasters
P_DISASTER_TILES_LOST = 31
P_GOODS_MASK = 32  # goods the final city produces
P_TRADE_ROUTES = 33  # bit 0 left, bit 1 right, at the end of the game
P_COINS_BUYING = 34  # coins paid to other players for goods
P_COINS_SELLING = 35  # coins received from other players for goods
P_INCOME_TOTAL = 36  # coins received as income over the game
N_PLAYER_COLS = 37
PLAYER_COLUMNS = (
    "seat",
    "strategy",
    "board",
    "tiles",
    "neighborhoods",
    "goods",
    "money_vp",
    "pollution",
    "ghost_town",
    "power",
    "total",
    "rank",
    "win",
    "money",
    "cs_drafted0",
    "cs_drafted1",
    "cs_drafted2",
    "cs_gen0",
    "cs_gen1",
    "cs_gen2",
    "cs_placed",
    "placed_residential",
    "placed_commercial",
    "placed_industrial",
    "placed_public",
    "placed_resource",
    "tiles_sold",
    "disasters_selected",
    "disasters_paid",
    "disasters_sacrificed",
    "disaster_coins",
    "disaster_tiles_lost",
    "goods_mask",
    "trade_routes",
    "coins_buying",
    "coins_selling",
    "income_total",
)

# --- events: one row per decision or money change (int32) ---------------------------------------
E_GAME_ROW = 0  # row of the game in the batch
E_TURN = 1  # 0..20 for generation turns (gen = turn // 7 + 1); -1 for the cornerstone draft
E_PLAYER = 2
E_KIND = 3  # EV_*
E_TILE = 4  # tile index, -1 if none
E_CELL = 5  # cell 0..24, -1 if none
E_COINS = 6  # the player's money change (negative: paid)
E_OTHER = 7  # seller for purchases, buyer for sales of goods, option/choice index otherwise
E_GOOD = 8  # good index for purchases, -1 otherwise
N_EVENT_COLS = 9
EVENT_COLUMNS = ("game_row", "turn", "player", "kind", "tile", "cell", "coins", "other", "good")

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
