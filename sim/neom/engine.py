"""The rules of NEOM as compiled functions over fixed-shape arrays.

No decision is taken here: the game loop (``sim.game``) asks a strategy to pick one row of an
options array that these functions fill with legal choices only, then applies the choice with
the functions below. The state of a game is a handful of arrays (int64 but for the cities, so
that every call site passes one integer type and each function compiles once):

- ``cells[P, 25]`` int16: each player's city (tile index or ``EMPTY``);
- ``pstate[P, N_PSTATE]``: per-player counters (``PS_*`` columns);
- ``cs_hands[P, MAX_CS_HAND]``: each player's unplaced cornerstones (``PS_N_CS`` used);
- ``hands[P, HAND_SIZE]``: generation tiles in hand (``PS_HAND_SIZE`` used);
- ``gstate[N_GSTATE]``: game-wide counters (``GS_*``);
- ``cs_pile[MAX_CS_PILE]``: cornerstones discarded in the draft (``GS_N_CS_PILE`` used);
- ``cs_box[n_tiles]``: shuffled cornerstones never dealt (``GS_CS_BOX_TOP`` = next one).

Seats: "left" is the next seat. Hands pass from seat s to seat (s + 1) % P, and a seller at
k seats to the buyer's left is reached through the buyer's left Trade Route.

Small functions called several times a turn (a listing's prerequisites, requirement costs and
rows, ``remove_slot``) are inlined: a compiled call passing their arrays costs more than their
work (docs/performance-log.md, fifth round).
"""

import numpy as np

from sim.core import rng
from sim.core.jit import njit
from sim.neom import constants as K
from sim.neom import grid as G
from sim.neom import records as R

# The game's structure, kept in the numba-free constants module for the analysis; re-exported
# here (``as``) because the game loop, strategies and tests read it as ``E.HAND_SIZE`` etc.
from sim.neom.constants import DRAFT_HAND as DRAFT_HAND
from sim.neom.constants import DRAFT_PICKS as DRAFT_PICKS
from sim.neom.constants import HAND_SIZE as HAND_SIZE
from sim.neom.constants import N_GENERATIONS as N_GENERATIONS
from sim.neom.constants import N_TURNS as N_TURNS
from sim.neom.constants import SELL_COINS as SELL_COINS
from sim.neom.constants import START_MONEY as START_MONEY
from sim.neom.constants import TURNS_PER_GENERATION as TURNS_PER_GENERATION
from sim.neom.effects import holder_coins_on_placed, insured_against
from sim.neom.grid import (
    ALL_CELLS,
    COL0_CELLS,
    COL4_CELLS,
    popcount,
    road_component,
)

SOLO_STACKS = (4, 3, 2)  # solo draft: keep one of each face-down stack
SOLO_PACKS = 8
MAX_CS_HAND = 6  # 3 drafted + cornerstones taken by effects
MAX_CS_PILE = 8  # the draft's discard pile (5 players: 5; solo: 3 + 2 + 1)
DRAFT_TURN = -1  # event turn of the cornerstone draft

# --- per-player state: pstate[P, N_PSTATE] -------------------------------------------
PS_MONEY = 0  # coins the player can spend now
PS_PENDING = 1  # coins received from goods sold this turn: spendable from the next turn on
PS_BOARD = 2
PS_N_CS = 3  # unplaced cornerstones held (used slots of cs_hands)
PS_HAND_SIZE = 4
PS_SELECTED = 5  # tile selected this turn, -1 if none: revealed before the actions (RULES.md P3)
N_PSTATE = 6

# --- game state: gstate[N_GSTATE] ----------------------------------------------------
GS_N_PLAYERS = 0
GS_GEN = 1  # 1..3 (0 during the draft)
GS_TURN = 2  # 0..20, DRAFT_TURN during the draft
GS_N_CS_PILE = 3
GS_CS_BOX_TOP = 4
GS_CS_BOX_SIZE = 5
GS_N_EVENTS = 6
GS_GAME_ROW = 7  # row of the game in the batch (events block)
GS_DISASTERS = 8  # bit g-1: generation g's disaster happened
GS_RESOLVING = 9  # DIS_* being resolved (context of D_DISASTER / D_SACRIFICE), else DIS_NONE
# Random-disasters variant: generation g's strike turn (0..6 within the generation) at
# GS_RANDOM_TURN + g - 1, drawn at setup and shown (002: the turns left are shown under the
# player panel); -1 in the other variants.
GS_RANDOM_TURN = 10
# Where the game loop is (strategies.neom.play.advance resumes there): the step of the turn
# GS_TURN (0 .. 2P - 1: each seat's selection, then each seat's action; with 1-2 players a
# seat's selection and action are consecutive steps).
GS_STEP = GS_RANDOM_TURN + 3
# A decision taken outside the loop for one step (a search's: strategies.neom.play.force):
# the step's key (step_key) and the option the step's first decision takes; key 0 = none.
GS_FORCED_KEY = GS_STEP + 1
GS_FORCED_OPTION = GS_FORCED_KEY + 1
# advance stops at the start of this turn (a search's truncated playout); 0 = at the end.
GS_STOP_TURN = GS_FORCED_OPTION + 1
# A decision refused (strategies.neom.play.decide: REFUSED_*), 0 = none: the loop raises it on
# return from the step that took it (an exception raised in a C function called by address,
# such as the loop's steps, would be printed and lost there).
GS_REFUSED = GS_STOP_TURN + 1
N_GSTATE = GS_REFUSED + 1
STEPS_PER_TURN = 16  # more than 2 * MAX_PLAYERS: a step's key is unique over the game


@njit(inline="always")
def step_key(turn, step):
    """A step's key for GS_FORCED_KEY: never 0, the draft (DRAFT_TURN) included."""
    return (turn + 2) * STEPS_PER_TURN + step


# --- decisions and their options: options[MAX_OPTIONS, N_OPT_COLS] --------------------
D_DRAFT = 0  # keep a cornerstone: OPT_TILE, OPT_SLOT = its index in the draft hand
D_SELECT = 1  # select a tile: OPT_TILE, OPT_SLOT = its index in the hand
D_ACTION = 2  # OPT_KIND = A_*, OPT_TILE, OPT_CELL, OPT_REQ, OPT_SLOT (cornerstone), OPT_COST
D_BUY = 3  # buy OPT_GOOD from OPT_SEAT for OPT_COST coins
D_DISASTER = 4  # OPT_KIND = DR_PAY (OPT_COST coins) or DR_SACRIFICE
D_SACRIFICE = 5  # sacrifice the tile on OPT_CELL (OPT_TILE)
D_TAKE_CS = 6  # take OPT_TILE (OPT_SLOT = index in the draft discard pile)
D_SWAP_CS = 7  # OPT_SLOT = cornerstone slot to swap, -1 = keep them all

OPT_KIND = 0
OPT_TILE = 1
OPT_CELL = 2
OPT_REQ = 3
OPT_SLOT = 4
OPT_SEAT = 5
OPT_GOOD = 6
OPT_COST = 7  # coins the choice costs in all (coin cost plus cheapest purchases, or price)
N_OPT_COLS = 8
# An action lists the selected tile on each legal square per requirement option, each unplaced
# cornerstone likewise, and selling: at most 25 * 3 * (1 + MAX_CS_HAND) + 1.
MAX_OPTIONS = K.N_CELLS * K.MAX_REQ_OPTIONS * (1 + MAX_CS_HAND) + 1


# Inlined, so no body of its own: the listings pass literal constants, int16 tiles and int32
# requirement indices, and each mix compiled one (16 of them); one explicit int64 signature
# instead cost random games 2% (sim.bench_ab, docs/performance-log.md).
@njit(inline="always", _nrt=False)
def set_option(options, n, kind, tile, cell, req, slot, seat, good, cost):
    """Write row ``n`` of ``options``, every column (no row keeps what an earlier listing left
    there): the one writer of option rows."""
    options[n, OPT_KIND] = kind
    options[n, OPT_TILE] = tile
    options[n, OPT_CELL] = cell
    options[n, OPT_REQ] = req
    options[n, OPT_SLOT] = slot
    options[n, OPT_SEAT] = seat
    options[n, OPT_GOOD] = good
    options[n, OPT_COST] = cost


A_PLACE = 0
A_CORNERSTONE = 1
A_SELL = 2
DR_PAY = 0
DR_SACRIFICE = 1

# Crime Spree takes one tile of each of these types, in this order.
CRIME_CATEGORIES = (K.T_RESIDENTIAL, K.T_COMMERCIAL, K.T_INDUSTRIAL)
CRIME_TYPES = K.T_RESIDENTIAL | K.T_COMMERCIAL | K.T_INDUSTRIAL


# --- events --------------------------------------------------------------------------------
# One signature (integers widened at the call) instead of one compilation per argument mix.
@njit("void(int64[:, :], int64[:], int64, int64, int64, int64, int64, int64, int64)", _nrt=False)
def log_event(events, gstate, player, kind, tile, cell, coins, other, good):
    """Append one event to the game's block of ``events`` (no-op without a buffer; events past
    MAX_EVENTS_PER_GAME are dropped and G_N_EVENTS stays at the block size)."""
    count = gstate[GS_N_EVENTS]
    if events.shape[0] == 0 or count >= R.MAX_EVENTS_PER_GAME:
        return
    row = gstate[GS_GAME_ROW] * R.MAX_EVENTS_PER_GAME + count
    events[row, R.E_TURN] = gstate[GS_TURN]
    events[row, R.E_PLAYER] = player
    events[row, R.E_KIND] = kind
    events[row, R.E_TILE] = tile
    events[row, R.E_CELL] = cell
    events[row, R.E_COINS] = coins
    events[row, R.E_OTHER] = other
    events[row, R.E_GOOD] = good
    gstate[GS_N_EVENTS] = count + 1


@njit(inline="always")
def pass_left(hands, pstate, n_players):
    """Hands pass left: seat s's hand goes to seat (s + 1) % P (rotated in place, no copy)."""
    for k in range(hands.shape[1]):
        last = hands[n_players - 1, k]
        for s in range(n_players - 1, 0, -1):
            hands[s, k] = hands[s - 1, k]
        hands[0, k] = last
    last_size = pstate[n_players - 1, PS_HAND_SIZE]
    for s in range(n_players - 1, 0, -1):
        pstate[s, PS_HAND_SIZE] = pstate[s - 1, PS_HAND_SIZE]
    pstate[0, PS_HAND_SIZE] = last_size


# --- decks and setup -----------------------------------------------------------------------
@njit(_nrt=False)
def icon_limit(n_players, rules):
    """Highest player-count icon (1, 4 or 5) in the generation decks."""
    if n_players == 1:
        return rules[K.RO_SOLO_TILESET]
    if n_players <= 3:
        return 1  # 3 players by the rules; 2 players: our reading, see RULES.md
    return n_players


@njit(_nrt=False)
def taken_out(tile, tiles, variant):
    """Whether a standard tile is taken out of its deck by the variant."""
    if variant == K.V_NO_DISASTERS:
        return tiles[tile, K.C_DISASTER] != K.DIS_NONE or tiles[tile, K.C_REMOVED_NO_DISASTERS] != 0
    if variant == K.V_RANDOM_DISASTERS:
        return tiles[tile, K.C_DISASTER] != K.DIS_NONE
    return False


@njit(_nrt=False)
def build_deck(deck, n_players, tiles, rules, out):
    """The tiles of ``deck`` (a generation or DECK_CORNERSTONE) for this player count and variant,
    in catalogue order, into ``out``; returns how many. Substitutes come in only for tiles the
    variant takes out."""
    limit = icon_limit(n_players, rules)
    variant = rules[K.RO_VARIANT]
    n = 0
    for t in range(tiles.shape[0]):
        if in_deck(t, deck, limit, variant, tiles):
            out[n] = t
            n += 1
    return n


@njit(inline="always")
def in_deck(tile, deck, limit, variant, tiles):
    """Whether ``tile`` is in ``deck`` for the icon ``limit`` (``icon_limit``) and ``variant``
    (``build_deck``'s rule; the strategies read a deck's make-up, public, never its order)."""
    if tiles[tile, K.C_DECK] != deck or tiles[tile, K.C_PLAYERS] > limit:
        return False
    replaced = tiles[tile, K.C_REPLACES]
    if replaced >= 0:
        return taken_out(np.int64(replaced), tiles, variant)  # int64 like tile
    return not taken_out(tile, tiles, variant)


@njit(_nrt=False)
def generation_disaster(gen, tiles):
    """The Disaster kind printed in this generation's deck (DIS_NONE if it has none)."""
    for t in range(tiles.shape[0]):
        if tiles[t, K.C_DECK] == gen and tiles[t, K.C_REPLACES] < 0:
            if tiles[t, K.C_DISASTER] != K.DIS_NONE:
                return tiles[t, K.C_DISASTER]
    return K.DIS_NONE


@njit(_nrt=False)
def draw_random_turn(deal, gen, rules, gstate):
    """Random-disasters variant: the turn (0..6) of generation ``gen``'s disaster, drawn from
    the deal stream at setup into the visible ``GS_RANDOM_TURN`` fields (-1 otherwise)."""
    turn = -1
    if rules[K.RO_VARIANT] == K.V_RANDOM_DISASTERS:
        turn = rng.randint(deal, np.int64(TURNS_PER_GENERATION))  # not a literal: one randint
    gstate[GS_RANDOM_TURN + gen - 1] = turn


@njit(_nrt=False)
def random_disaster_turns_left(gstate, gen):
    """Turns from the current one until generation ``gen``'s random disaster strikes (0: at
    the end of this turn), as shown to every player; -1 when none is to come (another
    variant, or it struck already)."""
    turn = gstate[GS_RANDOM_TURN + gen - 1]
    if turn < 0 or (gstate[GS_DISASTERS] >> (gen - 1)) & 1:
        return -1
    left = (gen - 1) * TURNS_PER_GENERATION + turn - gstate[GS_TURN]
    return left if left >= 0 else -1


# Where the disaster of a turn comes from (RULES.md P10, P12, P13), in the order they resolve.
SRC_SELECTED = 0  # a Disaster a player selected: strikes every other player
SRC_SOLO_PACK = 1  # solo: the Disaster left in the pack (packs 4-7 cannot select it)
SRC_RANDOM = 2  # random-disasters variant: the generation's disaster on its drawn turn
N_DISASTER_SOURCES = 3


@njit(inline="always")  # small, called every turn of every game: no call layer
def turn_disaster_of(source, gstate, pstate, hands, tiles):
    """The disaster of this turn from ``source`` (SRC_*) as (spared seat, DIS_*, hand slot of
    the solo Disaster): DIS_NONE when that source has none. The one rule for the game loop
    (which resolves it) and for ``disaster_striking`` (what a seat knows is coming): it reads
    only what is shown, the selections revealed so far (PS_SELECTED), the solo pack and the
    random turn."""
    n_players = gstate[GS_N_PLAYERS]
    if source == SRC_SELECTED:
        if n_players > 1:
            for seat in range(n_players - 1, -1, -1):
                selected = pstate[seat, PS_SELECTED]
                if selected >= 0 and tiles[selected, K.C_DISASTER] != K.DIS_NONE:
                    return seat, tiles[selected, K.C_DISASTER], -1
    elif source == SRC_SOLO_PACK:
        if n_players == 1:
            for k in range(pstate[0, PS_HAND_SIZE]):
                tile = hands[0, k]
                if tiles[tile, K.C_DISASTER] != K.DIS_NONE:
                    return -1, tiles[tile, K.C_DISASTER], k
    else:
        gen = gstate[GS_GEN]
        if gen >= 1 and gstate[GS_TURN] % TURNS_PER_GENERATION == gstate[GS_RANDOM_TURN + gen - 1]:
            return -1, generation_disaster(gen, tiles), -1
    return -1, K.DIS_NONE, -1


@njit(inline="always")  # one call site (evaluate.pending_disaster): no 7-array call layer
def disaster_striking(seat, city, gstate, pstate, hands, tiles, effects):
    """The disaster that will strike ``seat`` (whose city is ``city``) at the end of this turn,
    as far as it is known now, and its source: (DIS_*, SRC_*), (DIS_NONE, -1) when none. The
    selector of a Disaster is spared, and so is a city insured against it (``insured_against``).
    Selections are revealed before the actions (000, 003): from its action on, a seat knows
    every selection of the turn; with 2 players the first seat acts before the second selects
    (RULES.md P3). Strategies call it for their action and the decisions inside it only: in the
    selection step of 3-5 players the selections made so far are still secret."""
    for source in range(N_DISASTER_SOURCES):
        spared, disaster, _ = turn_disaster_of(source, gstate, pstate, hands, tiles)
        if disaster == K.DIS_NONE or spared == seat:
            continue
        if insured_against(city, effects, disaster):
            continue
        return disaster, source
    return K.DIS_NONE, -1


@njit
def deal_boards(deal, n_boards, n_players, pstate, cells, board_center):
    """Each player gets a distinct random board; its City Center goes on the center square."""
    order = np.arange(n_boards)
    rng.shuffle(deal, order, n_boards)
    for s in range(n_players):
        board = order[s]
        pstate[s, PS_BOARD] = board
        pstate[s, PS_MONEY] = START_MONEY
        cells[s, K.CENTER_CELL] = board_center[board]


@njit(_nrt=False)
def shuffled_cornerstones(deal, n_players, tiles, rules, cs_box, gstate):
    """The cornerstones of this variant shuffled into ``cs_box``; dealing draws from the top."""
    n = build_deck(K.DECK_CORNERSTONE, n_players, tiles, rules, cs_box)
    rng.shuffle(deal, cs_box, n)
    gstate[GS_CS_BOX_TOP] = 0
    gstate[GS_CS_BOX_SIZE] = n


@njit(_nrt=False)
def draw_cornerstone(cs_box, gstate):
    """The next cornerstone of the box, or -1 when it is empty."""
    top = gstate[GS_CS_BOX_TOP]
    if top >= gstate[GS_CS_BOX_SIZE]:
        return -1
    gstate[GS_CS_BOX_TOP] = top + 1
    return cs_box[top]


@njit(_nrt=False)
def add_cornerstone(seat, tile, cs_hands, pstate):
    """Put a cornerstone among the player's unplaced ones; False when the hand is full."""
    n = pstate[seat, PS_N_CS]
    if n >= MAX_CS_HAND:
        return False
    cs_hands[seat, n] = tile
    pstate[seat, PS_N_CS] = n + 1
    return True


@njit(inline="always")
def remove_slot(row, n, slot):
    """Remove row[slot] from the first n entries, keeping the order of the others."""
    for k in range(slot, n - 1):
        row[k] = row[k + 1]
    row[n - 1] = -1


@njit(_nrt=False)
def add_to_pile(tile, cs_pile, gstate):
    n = gstate[GS_N_CS_PILE]
    if n < MAX_CS_PILE:
        cs_pile[n] = tile
        gstate[GS_N_CS_PILE] = n + 1


# --- interventions (paired experiments) ----------------------------------------------------
# Applied once the whole deal is drawn, with the deal stream's next numbers: a game with an
# intervention keeps every other tile of the deal it has without one.
SOLO_CS_DEALT = sum(SOLO_STACKS)


@njit(_nrt=False)
def position_of(row, n, tile):
    for k in range(n):
        if row[k] == tile:
            return k
    return -1


@njit(_nrt=False)
def swap_entries(row, i, j):
    tmp = row[i]
    row[i] = row[j]
    row[j] = tmp


@njit(_nrt=False)
def cornerstone_hand_size(n_players, rules):
    """Cornerstones the draft deals each seat from the top of the box, seat after seat."""
    if rules[K.RO_VARIANT] == K.V_BEGINNER:
        return 1
    if n_players == 1:
        return SOLO_CS_DEALT
    return DRAFT_HAND


@njit(_nrt=False)
def force_into_hand(deal, row, n, tile, start, size):
    """Unless row[start:start + size] (a hand) holds ``tile``, the tile changes places with a
    deal-chosen tile of that hand, wherever it was among row[:n] (another hand or the box)."""
    pos = position_of(row, n, tile)
    if pos < 0 or start <= pos < start + size:
        return
    swap_entries(row, pos, start + rng.randint(deal, size))


@njit(_nrt=False)
def forced_choice(seat, decision, gstate, rules, tiles, options, n):
    """The option a forced seat must take (RO_FORCE_TILE, ``neom experiment --mode force``), -1
    when the seat chooses freely: a forced cornerstone is its first draft pick (the deal put it
    in the seat's first draft hand, so it is kept and always owned); a forced generation tile is
    its selection on the first turn of the tile's generation (what to do with it, place or sell,
    stays the seat's choice)."""
    force = rules[K.RO_FORCE_TILE]
    if force < 0 or seat != rules[K.RO_FORCE_SEAT]:
        return -1
    deck = tiles[force, K.C_DECK]
    if deck == K.DECK_CORNERSTONE:
        if decision != D_DRAFT:
            return -1
    elif decision != D_SELECT or gstate[GS_TURN] != (deck - 1) * TURNS_PER_GENERATION:
        return -1
    for k in range(n):
        if options[k, OPT_TILE] == force:
            return k
    return -1


@njit(_nrt=False)
def ban_cornerstone(deal, tile, n_players, rules, cs_box, gstate):
    """A dealt banned cornerstone changes places with a deal-chosen undealt one; then it leaves
    the box (its last tile takes its place) so that no effect can draw it."""
    size = gstate[GS_CS_BOX_SIZE]
    dealt = n_players * cornerstone_hand_size(n_players, rules)
    pos = position_of(cs_box, size, tile)
    if pos < 0 or size <= dealt:  # checked before a run: a ban needs an undealt cornerstone
        return
    if pos < dealt:
        spare = dealt + rng.randint(deal, size - dealt)
        swap_entries(cs_box, pos, spare)
        pos = spare
    swap_entries(cs_box, pos, size - 1)
    gstate[GS_CS_BOX_SIZE] = size - 1


@njit
def ban_generation_tile(deal, tile, n_players, tiles, rules, deck, n_deck):
    """A dealt banned tile is exchanged for a deal-chosen unused tile of its generation: one
    left undealt in the deck, or one the player-count icons leave out."""
    dealt = min(HAND_SIZE * n_players, n_deck)
    pos = position_of(deck, dealt, tile)
    if pos < 0:
        return
    full_deck = np.empty(tiles.shape[0], dtype=np.int64)
    n_full = build_deck(np.int64(tiles[tile, K.C_DECK]), R.MAX_PLAYERS, tiles, rules, full_deck)
    limit = icon_limit(n_players, rules)
    n_left_out = 0
    for k in range(n_full):
        if tiles[full_deck[k], K.C_PLAYERS] > limit:
            full_deck[n_left_out] = full_deck[k]
            n_left_out += 1
    n_undealt = n_deck - dealt
    if n_undealt + n_left_out == 0:  # checked before a run: the deck is dealt out exactly
        return
    pick = rng.randint(deal, n_undealt + n_left_out)
    if pick < n_undealt:
        swap_entries(deck, pos, dealt + pick)
    else:
        deck[pos] = full_deck[pick - n_undealt]


@njit
def apply_interventions(deal, n_players, tiles, rules, cs_box, gstate, decks, deck_sizes):
    """RO_FORCE_TILE into RO_FORCE_SEAT's hand (the draft hand of a cornerstone, solo: its first
    stack; the generation's hand of a generation tile), then RO_BAN_TILE. Generation tiles need
    2+ players (solo packs are not hands; checked before a run). The game loop then makes the
    forced tile the seat's first pick or first selection (``forced_choice``)."""
    # The rules' tiles as int64, like the dealt ones: one position_of for both.
    force = np.int64(rules[K.RO_FORCE_TILE])
    if force >= 0:
        seat = rules[K.RO_FORCE_SEAT]
        gen = tiles[force, K.C_DECK]
        if gen == K.DECK_CORNERSTONE:
            size = cornerstone_hand_size(n_players, rules)
            if size == SOLO_CS_DEALT:
                size = SOLO_STACKS[0]  # solo: the first stack, the one of the first pick
            force_into_hand(deal, cs_box, gstate[GS_CS_BOX_SIZE], force, seat * size, size)
        elif n_players > 1:
            start = seat * HAND_SIZE
            size = min(HAND_SIZE, deck_sizes[gen - 1] - start)
            force_into_hand(deal, decks[gen - 1], deck_sizes[gen - 1], force, start, size)
    ban = np.int64(rules[K.RO_BAN_TILE])
    if ban >= 0:
        gen = tiles[ban, K.C_DECK]
        if gen == K.DECK_CORNERSTONE:
            ban_cornerstone(deal, ban, n_players, rules, cs_box, gstate)
        elif n_players > 1:
            ban_generation_tile(
                deal, ban, n_players, tiles, rules, decks[gen - 1], deck_sizes[gen - 1]
            )


# --- city geometry -------------------------------------------------------------------------
# A city summary: int64[N_SUMMARY], the city's masks (sim.grid.city_masks) followed by the masks
# of its road chains, so that the squares where a tile may go are a few bit operations per tile
# (no search, no allocation).
SM_OCCUPIED = G.M_OCCUPIED
SM_TYPE = G.M_TYPE
SM_ROADS = G.M_ROADS
SM_CORNERSTONES = G.M_CORNERSTONES
SM_COMPONENT = G.N_MASKS  # cells road-linked to the tile on the center square (connected_cells)
SM_REACH = SM_COMPONENT + 1  # 4 masks (N, E, S, W): squares a road on that edge links to it
# placement_mask's cache of SM_COMPONENT traced again without one cell (a replaced tile in the
# chain): SM_FLOOD_KNOWN = cells whose trace is in SM_FLOOD_WITHOUT + cell, shared by every tile
# listed against the same summary.
SM_FLOOD_KNOWN = SM_REACH + 4
SM_FLOOD_WITHOUT = SM_FLOOD_KNOWN + 1
# Cells that may hold a tile paying coins on later placements (EF_COINS_ON_TYPE_PLACED): all
# cells after summarize_city (which does not read effects), then exactly the holders, kept by
# place_tile (a removal leaves a superset; a city changed by hand is marked stale).
SM_COIN_HOLDERS = SM_FLOOD_WITHOUT + K.N_CELLS
N_SUMMARY = SM_COIN_HOLDERS + 1
RESOURCE_BIT = 4  # K.T_RESOURCE == 1 << RESOURCE_BIT
CENTER_BIT = 1 << K.CENTER_CELL


@njit
def connected_cells(cells, tiles):
    """Cells linked by roads to the tile on the center square (0 if the square is empty)."""
    return road_component(cells, tiles, K.CENTER_CELL, 0)


@njit(_nrt=False)
def flood_from_center(summary, removed):
    """connected_cells from the summary's road masks, with the cells of ``removed`` taken out."""
    keep = ~removed
    if not summary[SM_OCCUPIED] & keep & CENTER_BIT:
        return 0
    return G.road_flood(summary, np.int64(CENTER_BIT), keep)  # int64 like scoring's calls


@njit(_nrt=False)
def reach_mask(summary, component, direction):
    """Squares where a new tile's road in ``direction`` (N, E, S, W) would link to a tile of
    ``component``."""
    if direction == 0:
        return ((component & summary[SM_ROADS + 2]) << K.GRID) & ALL_CELLS
    if direction == 1:
        return (component & summary[SM_ROADS + 3] & ~COL0_CELLS) >> 1
    if direction == 2:
        return (component & summary[SM_ROADS + 0]) >> K.GRID
    return ((component & summary[SM_ROADS + 1] & ~COL4_CELLS) << 1) & ALL_CELLS


@njit(_nrt=False)
def reach_masks(summary, component, out, at):
    """reach_mask of the 4 directions into out[at .. at + 3]."""
    for d in range(4):
        out[at + d] = reach_mask(summary, component, d)


@njit(_nrt=False)
def link_summary(summary):
    """The road chains of a summary whose masks are up to date (its cache of traced chains
    emptied)."""
    summary[SM_FLOOD_KNOWN] = 0
    component = flood_from_center(summary, np.int64(0))  # int64 like placement_mask's calls
    summary[SM_COMPONENT] = component
    reach_masks(summary, component, summary, SM_REACH)


@njit(_nrt=False)
def summarize_city(cells, tiles, summary):
    G.city_masks(cells, tiles, summary)
    link_summary(summary)
    summary[SM_COIN_HOLDERS] = ALL_CELLS  # not known here: place_tile looks at every square once


@njit(_nrt=False)
def update_summary(summary, cell, old, new, city, tiles):
    """``city`` changed on ``cell`` from ``old`` to ``new`` (either EMPTY; ``city`` already
    holds ``new``): its summary patched for that one square, the same masks as summarizing the
    whole city again at a tenth of the cost (a stale summary stays stale)."""
    if summary[SM_OCCUPIED] == -1:
        return
    if old != K.EMPTY:
        G.remove_tile(summary, cell, old, city, tiles)
    if new != K.EMPTY:
        G.add_tile(summary, cell, new, tiles)
    link_summary(summary)


@njit(_nrt=False)
def mark_stale(summary):
    """The summarized city changed: refresh_summary will summarize it again."""
    summary[SM_OCCUPIED] = -1  # never a city's mask (25 bits)


@njit(_nrt=False)
def refresh_summary(city, tiles, summary):
    """Summarize ``city`` again if it changed since (mark_stale); else keep the summary and its
    cache of traced chains."""
    if summary[SM_OCCUPIED] == -1:
        summarize_city(city, tiles, summary)


@njit(_nrt=False)
def trade_routes(cells, tiles):
    """Bit 0: left Trade Route (tile at (2,0) with a west road); bit 1: right ((2,4), east)."""
    routes = 0
    left = cells[K.LEFT_ROUTE_CELL]
    if left != K.EMPTY and tiles[left, K.C_ROADS] & K.ROAD_W:
        routes |= 1
    right = cells[K.RIGHT_ROUTE_CELL]
    if right != K.EMPTY and tiles[right, K.C_ROADS] & K.ROAD_E:
        routes |= 2
    return routes


@njit(_nrt=False)
def replaceable_cells(types, summary):
    """Occupied squares a tile of ``types`` may replace: Resource tiles (the City Center is
    one) and tiles sharing one of its types."""
    return summary[SM_TYPE + RESOURCE_BIT] | G.cells_of_types(summary, np.int64(types))


@njit(_nrt=False)
def placement_mask(cells, tiles, tile, summary):
    """placement_mask_at, called (the strategies' and the tests' entry)."""
    return placement_mask_at(cells, tiles, tile, summary)


@njit(inline="always")  # the listing's copy: no call layer per tile listed
def placement_mask_at(cells, tiles, tile, summary):
    """Cell mask of the squares where ``tile`` may go: empty, or holding a Resource tile (the
    City Center is one) or a tile sharing a type with it; and the center square itself, or
    road-linked to a tile connected through road links to the center square. A replaced tile
    that is part of that chain is taken out and the chain traced again without it."""
    roads = tiles[tile, K.C_ROADS]
    replaceable = replaceable_cells(tiles[tile, K.C_TYPES], summary)
    mask = CENTER_BIT
    for d in range(4):
        if (roads >> d) & 1:
            mask |= summary[SM_REACH + d]
    mask &= (ALL_CELLS & ~summary[SM_OCCUPIED]) | replaceable
    in_chain = mask & summary[SM_COMPONENT] & ~CENTER_BIT
    while in_chain:
        cell = G.lowest_cell(in_chain)
        bit = 1 << cell
        in_chain &= ~bit
        if not summary[SM_FLOOD_KNOWN] & bit:
            summary[SM_FLOOD_WITHOUT + cell] = flood_from_center(summary, bit)
            summary[SM_FLOOD_KNOWN] |= bit
        without = summary[SM_FLOOD_WITHOUT + cell]
        linked = False
        for d in range(4):
            if (roads >> d) & 1 and reach_mask(summary, without, d) & bit:
                linked = True
        if not linked:
            mask &= ~bit
    return mask


@njit(inline="always")
def has_prerequisites(cells, tiles, tile):
    for k in range(K.MAX_PREREQS):
        needed = tiles[tile, K.C_PREREQ0 + k]
        if needed < 0:
            continue
        found = False
        for cell in range(K.N_CELLS):
            if cells[cell] == needed:
                found = True
                break
        if not found:
            return False
    return True


# --- buying goods --------------------------------------------------------------------------
@njit(_nrt=False)
def purchase_price(buyer, seller, n_players, base, routes):
    """Base price + 1 per player seated between, counted the way the buyer chooses, - 1 when
    the buyer's Trade Route on that side is active (so never more than 1 off)."""
    seats_left = seller - buyer  # seats from the buyer to the seller, counted to the left
    if seats_left < 0:
        seats_left += n_players
    to_left = seats_left - 1
    to_right = n_players - seats_left - 1
    left_price = base + to_left - (routes & 1)
    right_price = base + to_right - ((routes >> 1) & 1)
    return min(left_price, right_price)


@njit(inline="always")
def cheapest_price(buyer, good, goods_of, n_players, goods_tier, routes):
    """Lowest price of ``good`` among the other players producing it, -1 if none does."""
    best = -1
    base = K.TIER_PRICE[goods_tier[good]]
    for seller in range(n_players):
        if seller == buyer or not (goods_of[seller] >> good) & 1:
            continue
        price = purchase_price(buyer, seller, n_players, base, routes)
        if best < 0 or price < best:
            best = price
    return best


@njit(inline="always")
def purchase_cost(buyer, missing, goods_of, n_players, goods_tier, routes):
    """Coins to buy every good of the mask ``missing`` at its cheapest, -1 if one is unsold."""
    total = 0
    for good in range(goods_tier.shape[0]):
        if (missing >> good) & 1:
            price = cheapest_price(buyer, good, goods_of, n_players, goods_tier, routes)
            if price < 0:
                return -1
            total += price
    return total


@njit(inline="always")
def plan_cost(seat, tile, option, goods_of, routes, n_players, req, goods_tier, money):
    """Coins needed to meet requirement option ``option`` of ``tile``: its coin cost plus the
    cheapest purchase of each good the city lacks. -1 if a good has no seller or the total
    exceeds ``money``. ``goods_of[s]``: goods of player s's city as the buyer sees them."""
    total = req[tile, option, K.R_COST]
    missing = req[tile, option, K.R_GOODS] & ~goods_of[seat]
    if missing != 0:
        bought = purchase_cost(seat, missing, goods_of, n_players, goods_tier, routes)
        if bought < 0:
            return -1
        total += bought
    if total > money:
        return -1
    return total


@njit(inline="always")
def add_placements(options, n, kind, tile, slot, cells_mask, req_costs, n_req):
    """Append one option per legal square and affordable requirement option."""
    while cells_mask:
        cell = G.lowest_cell(cells_mask)
        cells_mask &= cells_mask - 1
        for o in range(n_req):
            if req_costs[o] < 0:
                continue
            set_option(options, n, kind, tile, cell, o, slot, -1, -1, req_costs[o])
            n += 1
    return n


@njit(_nrt=False)
def tile_placements(
    seat, tile, city, summary, goods_of, routes, n_players, money, tiles, req, goods_tier, req_costs
):
    """tile_placements_at, called (the strategies' entry)."""
    return tile_placements_at(
        seat, tile, city, summary, goods_of, routes, n_players, money, tiles, req, goods_tier,
        req_costs,
    )  # fmt: skip


@njit(inline="always")  # the listing's copy: no call layer per tile listed
def tile_placements_at(
    seat, tile, city, summary, goods_of, routes, n_players, money, tiles, req, goods_tier, req_costs
):
    """Cell mask where ``tile`` may be placed, with ``req_costs[o]`` the coins option o needs
    (-1 when not met); 0 when no option can be met or a prerequisite tile is missing."""
    if not has_prerequisites(city, tiles, tile):
        return 0
    any_met = False
    for o in range(tiles[tile, K.C_N_REQ_OPTIONS]):
        req_costs[o] = plan_cost(seat, tile, o, goods_of, routes, n_players, req, goods_tier, money)
        if req_costs[o] >= 0:
            any_met = True
    if not any_met:
        return 0
    return placement_mask_at(city, tiles, tile, summary)


@njit
def action_options(
    seat,
    selected,
    gen,
    cells,
    pstate,
    cs_hands,
    goods_of,
    n_players,
    tiles,
    req,
    goods_tier,
    options,
):
    """All legal actions with the selected (non-Disaster) tile: place it, discard it to place
    a cornerstone (never more cornerstones in the city than the generation number; replacing
    one keeps the count), or sell it. Returns the number of options (selling is always one)."""
    summary = np.empty(N_SUMMARY, dtype=np.int64)
    summarize_city(cells[seat], tiles, summary)
    req_costs = np.empty(K.MAX_REQ_OPTIONS, dtype=np.int64)
    return fill_action_options(
        seat,
        selected,
        gen,
        cells,
        pstate,
        cs_hands,
        goods_of,
        n_players,
        tiles,
        req,
        goods_tier,
        options,
        summary,
        req_costs,
    )


@njit(inline="always")  # the game loop's listing and cornerstone_options: one rule, two callers
def add_cornerstone_options(
    seat,
    gen,
    city,
    pstate,
    cs_hands,
    goods_of,
    routes,
    n_players,
    money,
    tiles,
    req,
    goods_tier,
    options,
    n,
    summary,
    req_costs,
):
    """Append to ``options`` (``n`` rows so far) each legal placement of a cornerstone in the
    seat's hand: never more cornerstones in the city than the generation number (at the limit
    one may only replace a cornerstone). Returns the new number of rows."""
    cornerstone_cells = summary[SM_CORNERSTONES]
    at_limit = popcount(cornerstone_cells) >= gen
    allowed = cornerstone_cells if at_limit else ALL_CELLS
    for slot in range(pstate[seat, PS_N_CS]):
        if allowed == 0:
            break
        cs = cs_hands[seat, slot]
        # At the limit a cornerstone may only replace one (the allowed squares are then all
        # occupied): skip the full listing when it can replace none of them.
        if at_limit and (replaceable_cells(tiles[cs, K.C_TYPES], summary) & allowed) == 0:
            continue
        mask = (
            tile_placements_at(
                seat,
                cs,
                city,
                summary,
                goods_of,
                routes,
                n_players,
                money,
                tiles,
                req,
                goods_tier,
                req_costs,
            )
            & allowed
        )
        if mask != 0:
            n = add_placements(
                options, n, A_CORNERSTONE, cs, slot, mask, req_costs, tiles[cs, K.C_N_REQ_OPTIONS]
            )
    return n


@njit
def cornerstone_options(
    seat, gen, city, pstate, cs_hands, goods_of, routes, n_players, tiles, req, goods_tier, summary
):
    """The actions placing a cornerstone of the seat's hand (the part of ``action_options`` that
    does not depend on the selected tile) into a new options array; returns it and their number.
    ``summary`` and ``routes``: the city's (summarize_city, trade_routes)."""
    options = np.empty((MAX_OPTIONS, N_OPT_COLS), dtype=np.int64)
    req_costs = np.empty(K.MAX_REQ_OPTIONS, dtype=np.int64)
    n = add_cornerstone_options(
        seat,
        gen,
        city,
        pstate,
        cs_hands,
        goods_of,
        routes,
        n_players,
        pstate[seat, PS_MONEY],
        tiles,
        req,
        goods_tier,
        options,
        0,
        summary,
        req_costs,
    )
    return options, n


@njit(_nrt=False)
def fill_action_options(
    seat,
    selected,
    gen,
    cells,
    pstate,
    cs_hands,
    goods_of,
    n_players,
    tiles,
    req,
    goods_tier,
    options,
    summary,
    req_costs,
):
    """action_options given the seat's city summary (``summary``, see refresh_summary) and a
    scratch ``req_costs`` (int64[MAX_REQ_OPTIONS]): the game loop allocates both once per batch
    and summarizes a city again only after it changed."""
    return fill_action_options_at(
        seat, selected, gen, cells, pstate, cs_hands, goods_of, n_players, tiles, req,
        goods_tier, options, summary, req_costs,
    )  # fmt: skip


@njit(_nrt=False)
def list_actions(game, seat):
    """The seat's action options with its selected (non-Disaster) tile into ``game.options``
    (``game``: a view of the game, ``sim.neom.state.view``); returns their number. The game
    loop's listing: one pointer and one integer passed, the rule's layers inlined below."""
    summary = game.summaries[seat]
    refresh_summary(game.cells[seat], game.tiles, summary)
    gstate = game.gstate
    return fill_action_options_at(
        seat, game.pstate[seat, PS_SELECTED], gstate[GS_GEN], game.cells, game.pstate,
        game.cs_hands, game.goods_of, gstate[GS_N_PLAYERS], game.tiles, game.req,
        game.goods_tier, game.options, summary, game.req_costs,
    )  # fmt: skip


@njit(inline="always")  # fill_action_options and list_actions: one rule, two entries
def fill_action_options_at(
    seat,
    selected,
    gen,
    cells,
    pstate,
    cs_hands,
    goods_of,
    n_players,
    tiles,
    req,
    goods_tier,
    options,
    summary,
    req_costs,
):
    """fill_action_options' body."""
    city = cells[seat]
    money = pstate[seat, PS_MONEY]
    routes = trade_routes(city, tiles)
    n = 0
    mask = tile_placements_at(
        seat,
        selected,
        city,
        summary,
        goods_of,
        routes,
        n_players,
        money,
        tiles,
        req,
        goods_tier,
        req_costs,
    )
    if mask != 0:
        n = add_placements(
            options, n, A_PLACE, selected, -1, mask, req_costs, tiles[selected, K.C_N_REQ_OPTIONS]
        )
    n = add_cornerstone_options(
        seat,
        gen,
        city,
        pstate,
        cs_hands,
        goods_of,
        routes,
        n_players,
        money,
        tiles,
        req,
        goods_tier,
        options,
        n,
        summary,
        req_costs,
    )
    set_option(options, n, A_SELL, selected, -1, -1, -1, -1, -1, -SELL_COINS)
    return n + 1


@njit(_nrt=False)
def buy_options(seat, good, rest_cost, money, goods_of, routes, n_players, goods_tier, options):
    """Sellers of ``good`` whose price still leaves ``rest_cost`` coins (the coin cost and the
    cheapest price of each good still to buy) affordable."""
    base = K.TIER_PRICE[goods_tier[good]]
    n = 0
    for seller in range(n_players):
        if seller == seat or not (goods_of[seller] >> good) & 1:
            continue
        price = purchase_price(seat, seller, n_players, base, routes)
        if price + rest_cost > money:
            continue
        set_option(options, n, 0, -1, -1, -1, -1, seller, good, price)
        n += 1
    return n


# --- placing and removing tiles ------------------------------------------------------------
@njit(_nrt=False)
def count_placed(stats, tile, tiles):
    types = tiles[tile, K.C_TYPES]
    if types & K.T_RESIDENTIAL:
        stats[R.P_PLACED_RESIDENTIAL] += 1
    if types & K.T_COMMERCIAL:
        stats[R.P_PLACED_COMMERCIAL] += 1
    if types & K.T_INDUSTRIAL:
        stats[R.P_PLACED_INDUSTRIAL] += 1
    if types & K.T_PUBLIC:
        stats[R.P_PLACED_PUBLIC] += 1
    if types & K.T_RESOURCE:
        stats[R.P_PLACED_RESOURCE] += 1


@njit(_nrt=False)
def pays_on_placements(tile, effects):
    """Whether ``tile`` has an effect paying coins when later tiles are placed."""
    for k in range(K.MAX_EFFECTS):
        if effects[tile, k, 0] == K.EF_COINS_ON_TYPE_PLACED:
            return True
    return False


@njit(_nrt=False)
def place_tile(seat, tile, cell, cells, pstate, stats, tiles, effects, events, gstate, summary):
    """Put ``tile`` on ``cell`` (the replaced tile goes to the box and its effects end), then
    pay its one-off coins and the coins of tiles rewarding later placements (Merchant Union).
    Requirements must have been paid already. Returns the replaced tile or EMPTY.
    ``summary``: the seat's (its SM_COIN_HOLDERS is read and kept; a stale one is not read)."""
    city = cells[seat]
    old = city[cell]
    if old != K.EMPTY:
        log_event(events, gstate, seat, R.EV_REPLACED, old, cell, 0, tile, -1)
    city[cell] = tile
    count_placed(stats, tile, tiles)
    coins = tiles[tile, K.C_COINS_ON_PLACE]
    bit = 1 << cell
    candidates = ALL_CELLS if summary[SM_OCCUPIED] == -1 else summary[SM_COIN_HOLDERS]
    candidates &= ~bit
    holders = bit if pays_on_placements(tile, effects) else 0
    while candidates:
        other = G.lowest_cell(candidates)
        candidates &= candidates - 1
        holder = city[other]
        if holder == K.EMPTY:
            continue
        if pays_on_placements(np.int64(holder), effects):  # int64 like the placed tile
            holders |= 1 << other
            coins += holder_coins_on_placed(holder, tile, effects, tiles)
    summary[SM_COIN_HOLDERS] = holders
    if coins != 0:
        pstate[seat, PS_MONEY] += coins
        log_event(events, gstate, seat, R.EV_EFFECT_COINS, tile, cell, coins, -1, -1)
    return old


@njit(_nrt=False)
def has_effect(effects, tile, kind):
    for k in range(K.MAX_EFFECTS):
        if effects[tile, k, 0] == kind:
            return True
    return False


@njit(_nrt=False)
def take_options(cs_pile, gstate, options):
    """Cornerstones of the draft's discard pile that a take effect may claim."""
    n = gstate[GS_N_CS_PILE]
    for k in range(n):
        set_option(options, k, 0, cs_pile[k], -1, -1, k, -1, -1, 0)
    return n


@njit(_nrt=False)
def swap_options(seat, cs_hands, pstate, options):
    """Keep every cornerstone (slot -1), or swap the one in a slot for a random one."""
    n = pstate[seat, PS_N_CS] + 1
    for k in range(n):
        tile = -1 if k == 0 else cs_hands[seat, k - 1]
        set_option(options, k, 0, tile, -1, -1, k - 1, -1, -1, 0)
    return n


# --- disasters -----------------------------------------------------------------------------
@njit(_nrt=False)
def protected_cells(city, tiles, protection):
    """Cells covered by tiles protecting against ``protection`` (PROT_*): each such tile
    covers its own square and the 8 surrounding ones."""
    mask = 0
    for cell in range(K.N_CELLS):
        tile = city[cell]
        if tile != K.EMPTY and tiles[tile, K.C_PROTECTS] & protection:
            mask |= (1 << cell) | G.SURROUNDING_MASKS[cell]
    return mask


@njit
def disaster_cost(city, tiles, disaster):
    """Coins to pay a disaster off (``disaster_cost_of`` for a city given by its squares)."""
    return disaster_cost_of(
        G.masks_of(city, tiles),
        protected_cells(city, tiles, K.PROT_FIRE),
        protected_cells(city, tiles, K.PROT_POLICE),
        disaster,
    )


@njit(_nrt=False)
def disaster_charge(disaster, fire_cover, police_cover):
    """The rule of a disaster's cost, as (tile types charged, cells spared, coins per tile):
    Flood 1 per Residential/Commercial/Industrial/Public tile; Fire 1 per such tile not
    protected from Fire; Crime Spree 2 per Residential/Commercial/Industrial tile not protected
    by police. The covers: the city's ``protected_cells``."""
    if disaster == K.DIS_FLOOD:
        return K.T_BUILDING, 0, 1
    if disaster == K.DIS_FIRE:
        return K.T_BUILDING, fire_cover, 1
    return CRIME_TYPES, police_cover, 2


@njit(_nrt=False)
def disaster_cost_of(masks, fire_cover, police_cover, disaster):
    """Coins to pay a disaster off (``disaster_charge``) for a city whose masks
    (sim.grid.city_masks) and covers (``protected_cells``) are given."""
    charged, spared, coins = disaster_charge(disaster, fire_cover, police_cover)
    return coins * popcount(G.cells_of_types(masks, charged) & ~spared)


@njit
def disaster_options(city, money, tiles, disaster, options):
    """Pay (when affordable; the only option when it costs nothing) or sacrifice tiles."""
    return pay_or_sacrifice(disaster_cost(city, tiles, disaster), money, options)


@njit(_nrt=False)
def summary_disaster_options(summary, city, money, tiles, disaster, options):
    """disaster_options with the city's masks read from its summary (up to date: see
    refresh_summary) instead of allocated and computed again (the game loop's)."""
    cost = disaster_cost_of(
        summary,
        protected_cells(city, tiles, K.PROT_FIRE),
        protected_cells(city, tiles, K.PROT_POLICE),
        disaster,
    )
    return pay_or_sacrifice(cost, money, options)


@njit(_nrt=False)
def pay_or_sacrifice(cost, money, options):
    """The options of a disaster costing ``cost`` coins: pay (when affordable; the only option
    when it costs nothing) or sacrifice tiles."""
    n = 0
    if cost <= money:
        set_option(options, n, DR_PAY, -1, -1, -1, -1, -1, -1, cost)
        n += 1
    if cost > 0:
        set_option(options, n, DR_SACRIFICE, -1, -1, -1, -1, -1, -1, 0)
        n += 1
    return n


@njit(_nrt=False)
def sacrifice_steps(disaster):
    """How many tiles a sacrifice asks for (each step may find none to take)."""
    if disaster == K.DIS_FLOOD:
        return 1
    if disaster == K.DIS_FIRE:
        return 2
    return len(CRIME_CATEGORIES)


@njit(_nrt=False)
def sacrifice_types(disaster, step):
    """Type mask a tile must have to be sacrificed at ``step``; 0 = any tile."""
    if disaster == K.DIS_FLOOD:
        return K.T_BUILDING
    if disaster == K.DIS_FIRE:
        return 0
    return CRIME_CATEGORIES[step]


@njit(_nrt=False)
def sacrifice_options(city, tiles, disaster, step, options):
    """Tiles that may be sacrificed at ``step`` (tiles already taken are gone from the city,
    so a two-type tile satisfies one Crime Spree category only)."""
    wanted = sacrifice_types(disaster, step)
    n = 0
    for cell in range(K.N_CELLS):
        tile = city[cell]
        if tile == K.EMPTY or (wanted != 0 and not tiles[tile, K.C_TYPES] & wanted):
            continue
        set_option(options, n, 0, tile, cell, -1, -1, -1, -1, 0)
        n += 1
    return n


# --- end of game ---------------------------------------------------------------------------
@njit(_nrt=False)
def ranks_and_winners(totals, n_players, ranks):
    """Rank 1 = best, tied players share the better rank. Returns the winners' seat mask."""
    best = totals[0]
    for s in range(1, n_players):
        best = max(best, totals[s])
    winners = 0
    for s in range(n_players):
        better = 0
        for o in range(n_players):
            if totals[o] > totals[s]:
                better += 1
        ranks[s] = better + 1
        if totals[s] == best:
            winners |= 1 << s
    return winners
