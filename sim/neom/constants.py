"""Named constants shared by the catalogue compiler, the compiled core and the analysis layer.

The compiled catalogue is a handful of fixed-shape int32 arrays (see ``sim.tables``); the
column and code numbers below are the only way code addresses them.
"""

# --- The game's structure (texts 000/001); the engine and the analysis read them here -------
START_MONEY = 6
SELL_COINS = 5
HAND_SIZE = 8  # "deal each player a hand of 8 tiles"
TURNS_PER_GENERATION = 7
N_GENERATIONS = 3
N_TURNS = N_GENERATIONS * TURNS_PER_GENERATION
DRAFT_HAND = 4  # cornerstones dealt to each player for the draft
DRAFT_PICKS = 3

# --- City grid ---------------------------------------------------------------------------
GRID = 5
N_CELLS = GRID * GRID
CENTER_CELL = 2 * GRID + 2  # (row 2, col 2)
LEFT_ROUTE_CELL = 2 * GRID + 0  # (2,0): its west road is the left Trade Route
RIGHT_ROUTE_CELL = 2 * GRID + 4  # (2,4): its east road is the right Trade Route
EMPTY = -1  # cell value of an empty square

# --- Road edges (bit mask) -----------------------------------------------------------------
ROAD_N = 1
ROAD_E = 2
ROAD_S = 4
ROAD_W = 8
ROAD_LETTERS = {"N": ROAD_N, "E": ROAD_E, "S": ROAD_S, "W": ROAD_W}

# --- Tile types (bit mask: a tile may have two types) ---------------------------------------
T_RESIDENTIAL = 1
T_COMMERCIAL = 2
T_INDUSTRIAL = 4
T_PUBLIC = 8
T_RESOURCE = 16
T_DISASTER = 32
TYPE_NAMES = {
    "residential": T_RESIDENTIAL,
    "commercial": T_COMMERCIAL,
    "industrial": T_INDUSTRIAL,
    "public": T_PUBLIC,
    "resource": T_RESOURCE,
    "disaster": T_DISASTER,
}
# Tiles that Flood and Fire charge for (everything but Resource tiles).
T_BUILDING = T_RESIDENTIAL | T_COMMERCIAL | T_INDUSTRIAL | T_PUBLIC

# --- Goods --------------------------------------------------------------------------------
TIER_RAW = 0
TIER_PROCESSED = 1
TIER_LUXURY = 2
TIER_NAMES = {"raw": TIER_RAW, "processed": TIER_PROCESSED, "luxury": TIER_LUXURY}
TIER_PRICE = (2, 4, 10)  # base purchase price
TIER_VP = (1, 2, 10)  # final scoring value of one Good token
MAX_GOODS = 30  # goods are bits of an int32 mask

# --- Decks --------------------------------------------------------------------------------
DECK_CORNERSTONE = 0
DECK_GEN1 = 1
DECK_GEN2 = 2
DECK_GEN3 = 3
DECK_CENTER = 4  # the six City Centers, compiled as Resource tiles
DECK_NONE = -1  # inline tiles added for `neom score` (sim.catalog.with_extra_tiles): in no deck
DECK_NAMES = {
    "cornerstone": DECK_CORNERSTONE,
    "gen1": DECK_GEN1,
    "gen2": DECK_GEN2,
    "gen3": DECK_GEN3,
}

# --- Disasters ----------------------------------------------------------------------------
DIS_NONE = 0
DIS_FLOOD = 1
DIS_FIRE = 2
DIS_CRIME = 3
DISASTER_NAMES = {"flood": DIS_FLOOD, "fire": DIS_FIRE, "crime": DIS_CRIME}

# --- Protection (bit mask) ----------------------------------------------------------------
PROT_FIRE = 1
PROT_POLICE = 2
PROTECTION_NAMES = {"fire": PROT_FIRE, "police": PROT_POLICE}

# --- Compiled tile table: columns of the int32 array ``tiles[n_tiles, N_TILE_COLS]`` ---------
C_DECK = 0
C_PLAYERS = 1  # 1, 4 or 5 (player-count icon); 0 for cornerstones and centers
C_TYPES = 2  # T_* mask
C_ROADS = 3  # ROAD_* mask
C_VP = 4  # printed VP
C_INCOME = 5  # coins at each end of generation
C_COINS_ON_PLACE = 6
C_PRODUCES = 7  # goods mask
C_POWER = 8  # 1 if the tile generates power
C_POLLUTING = 9  # 1 if polluting
C_PROTECTS = 10  # PROT_* mask (tile itself and its 8 surrounding squares)
C_DISASTER = 11  # DIS_* for disaster tiles
C_PREREQ0 = 12  # tile index required in the city, or -1
C_PREREQ1 = 13
C_N_REQ_OPTIONS = 14  # number of requirement options in ``req`` (>= 1)
C_VP_NO_DISASTERS = 15  # extra VP in the no-disasters variant
C_REMOVED_NO_DISASTERS = 16  # 1 if removed from the deck in the no-disasters variant
C_REPLACES = 17  # substitute tile: index of the tile it stands in for, or -1
N_TILE_COLS = 18
MAX_PREREQS = 2

# Requirement options: ``req[n_tiles, MAX_REQ_OPTIONS, 2]``; option o is (goods mask, coin cost).
# Option 0 is the printed requirement; further options are printed alternatives.
MAX_REQ_OPTIONS = 3
R_GOODS = 0
R_COST = 1

# --- Effects: ``effects[n_tiles, MAX_EFFECTS, 4]`` rows of (kind, a, b, c); kind EF_NONE = unused
MAX_EFFECTS = 3
EF_NONE = 0
EF_VP_PER_TYPE_CITY = 1  # a=type mask, b=VP per matching tile in the city (c=1: exclude self)
EF_VP_PER_TYPE_ADJACENT = 2  # a=type mask, b=VP per matching tile in the 8 surrounding squares
EF_VP_PER_GOOD_TIER = 3  # a=tier, b=VP per good of that tier the city produces
EF_VP_PLACEMENT = 4  # a=condition mask (PL_*), b=VP if all conditions hold
EF_INCOME_PER_TYPE = 5  # a=type mask, b=extra coins per matching tile at each income
EF_COINS_ON_TYPE_PLACED = 6  # a=type mask, b=coins whenever you later place such a tile
EF_TAKE_DISCARDED_CORNERSTONE = 7  # on placement, take a cornerstone from the draft discard pile
EF_SWAP_CORNERSTONE = 8  # on placement, swap an unplaced cornerstone for a random one
EF_INSURANCE = 9  # a=disaster mask (1 << DIS_*): the owner is spared those disasters
N_EFFECT_KINDS = 10
EFFECT_NAMES = {
    "vp_per_type_in_city": EF_VP_PER_TYPE_CITY,
    "vp_per_type_adjacent": EF_VP_PER_TYPE_ADJACENT,
    "vp_per_good_tier": EF_VP_PER_GOOD_TIER,
    "vp_placement": EF_VP_PLACEMENT,
    "income_per_type": EF_INCOME_PER_TYPE,
    "coins_on_type_placed": EF_COINS_ON_TYPE_PLACED,
    "take_discarded_cornerstone": EF_TAKE_DISCARDED_CORNERSTONE,
    "swap_cornerstone": EF_SWAP_CORNERSTONE,
    "insurance": EF_INSURANCE,
}
PL_CORNER = 1
PL_EDGE = 2  # on the outer ring (corners included)
PL_NO_NEIGHBOURS = 4  # "alone": no tile in the 8 surrounding squares but road-linked ones
PLACEMENT_NAMES = {"corner": PL_CORNER, "edge": PL_EDGE, "no_neighbours": PL_NO_NEIGHBOURS}

# --- Rules options: int32 array ``rules[N_RULES]`` ----------------------------------------
RO_NEIGHBORHOOD_THROUGH_ANY = 0  # 1: road chains may pass through any tile; 0: Residential only
RO_VARIANT = 1  # V_*
RO_SOLO_TILESET = 2  # solo games: highest player-count icon in the decks (1, 4 or 5)
# Interventions for paired experiments (tile index / seat, -1 = none), applied after the deal.
RO_FORCE_TILE = 3  # this tile is swapped into RO_FORCE_SEAT's dealt hand
RO_FORCE_SEAT = 4
RO_BAN_TILE = 5  # this tile, if dealt, is exchanged for an unused tile of its deck
N_RULES = 6
V_STANDARD = 0
V_NO_DISASTERS = 1
V_RANDOM_DISASTERS = 2
V_BEGINNER = 3
VARIANT_NAMES = {
    "standard": V_STANDARD,
    "no-disasters": V_NO_DISASTERS,
    "random-disasters": V_RANDOM_DISASTERS,
    "beginner": V_BEGINNER,
}

# --- Score breakdown: int32 array ``[N_SCORE]`` (keys as printed by ``neom score``) -----------
S_TILES = 0
S_NEIGHBORHOODS = 1
S_GOODS = 2
S_MONEY = 3
S_POLLUTION = 4
S_GHOST_TOWN = 5
S_POWER = 6
S_TOTAL = 7
N_SCORE = 8
SCORE_KEYS = (
    "tiles",
    "neighborhoods",
    "goods",
    "money",
    "pollution",
    "ghost_town",
    "power",
    "total",
)
