"""The shared compiled evaluation of every archetype: one weight vector, every decision kind.

A move (place a tile on a square, remove one, gain or pay coins) is valued as a weighted sum of
its features (weights: ``strategies.archetypes``). The first feature is the exact change of the
city's score as if the game ended now; it is computed incrementally from a per-decision
*context* (cell masks, road-linked components, per-cell VP and income) so that a candidate
costs a few bit operations instead of a full ``score_city`` (tests check it against
``score_city`` on random cities). The others are cheap proxies of the future: money, Good
tokens by tier, Neighborhood growth, pollution aimed at empty squares, power, protection and
exposure to the disasters still to come, squares left open for roads, cornerstone timing,
income, what the left neighbour would get from a tile we pass, money kept for disasters.
"""

import numpy as np

from sim.core import rng
from sim.core.jit import njit
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom.effects import (
    effect_vp,
    holder_coins_on_placed,
    insured_against,
    tile_income,
    tile_variable_vp,
    vp_placement,
    vp_reads_change,
)
from sim.neom.grid import (
    M_GOODS,
    M_POLLUTING,
    M_POWER,
    N_MASKS,
    SURROUNDING_MASKS,
    add_tile,
    cells_of_types,
    city_goods,
    component_of,
    lowest_cell,
    neighbour,
    popcount,
    remove_tile,
    road_linked,
)
from sim.neom.records import MAX_PLAYERS
from sim.neom.scoring import (
    VP_TYPES,
    ghost_town,
    goods_vp,
    money_vp,
    money_vp_change,
    neighborhood_value,
    neighborhoods_vp,
    pollution_around,
    power_vp,
    printed_vp,
    score_masks,
)
from sim.neom.state import view
from strategies.neom.archetypes import (
    N_WEIGHTS,
    W_BUILD,
    W_CORNERSTONE,
    W_DEMAND,
    W_DENY,
    W_DISASTER,
    W_FORESIGHT,
    W_FRONTIER,
    W_HURT,
    W_INCOME,
    W_LUXURY,
    W_MONEY,
    W_NEIGHBORHOOD,
    W_PLACE,
    W_POLLUTION,
    W_POWER,
    W_PROCESSED,
    W_PROTECTION,
    W_RAW,
    W_REQUIREMENTS,
    W_RESERVE,
    W_SYNERGY,
    W_VP,
)
from strategies.neom.registry import EVALUATED_ID

NO_VALUE = -1e18
TIE = 1e-9

# --- the context of one city: int64 ctx[N_CTX] ------------------------------------------------
CX_OCCUPIED = 0
CX_RESIDENTIAL = 1  # cell masks
CX_POLLUTING = 2
CX_FRONTIER = 3  # empty squares a tile with the right road could be attached to
CX_FIRE_COVER = 4  # cells protected from Fire / from Crime Spree
CX_POLICE_COVER = 5
CX_VP_HOLDERS = 6  # Residential/Public tiles whose VP depends on the rest of the city
CX_INCOME_HOLDERS = 7  # tiles whose income depends on the rest of the city
CX_COIN_HOLDERS = 8  # tiles paying coins when another tile is placed
CX_N_RESIDENTIAL = 9
CX_N_POWER = 10
CX_GOODS = 11
CX_NEIGHBORHOODS = 12  # Neighborhood VP of the city
CX_UPCOMING = 13  # bit k: disaster kind k may still strike
CX_EXPOSURE = 14  # coins the upcoming disasters would cost the city now
CX_MONEY = 15  # coins now (spendable + pending)
CX_SCORE = 16  # score as if the game ended now
CX_TURN = 17
CX_GEN = 18
CX_GOODS_VP = 19  # Goods VP of the city
CX_LABEL = 20  # 25 cells: road-linked component label (-1 empty or outside neighborhoods)
CX_LABEL_RES = CX_LABEL + K.N_CELLS  # 25 labels: Residential tiles in the component
CX_VAR_VP = CX_LABEL_RES + K.N_CELLS  # 25 cells: variable VP of VP holders
CX_INCOME = CX_VAR_VP + K.N_CELLS  # 25 cells: each tile's income
CX_ROUTES = CX_INCOME + K.N_CELLS  # active Trade Routes (sim.engine.trade_routes)
CX_SUMMARY = CX_ROUTES + 1  # the city's summary (sim.engine.summarize_city), once per decision
CX_SAVED_MASKS = CX_SUMMARY + E.N_SUMMARY  # the summary's masks while a move is tried (try_move)
# Scratch, so that building a context and valuing a placement allocate nothing: the score
# breakdown (int32[N_SCORE] as int64 words) and the requirement options' costs.
CX_SCORE_OUT = CX_SAVED_MASKS + N_MASKS
CX_REQ_COSTS = CX_SCORE_OUT + (K.N_SCORE + 1) // 2
N_CTX = CX_REQ_COSTS + K.MAX_REQ_OPTIONS

VP_EFFECT_KINDS_MAX = K.EF_VP_PLACEMENT  # kinds 1..4 give VP

# --- a seat's memo: int64[memo_size(n_tiles)], kept across the seat's decisions ------------------
# The value parts of a (tile, square) depend on the city, the generation and the disasters past,
# not on the money or the turn (those enter when the parts are added up). A seat's memo keeps
# the context and the parts of every (tile, square) it tried with the state they were computed
# for (its key): the action reuses its selection's, and so does every later decision while the
# city stays the same (a seat that sold or paid). A decision whose state differs from the key
# writes it afresh, so no value ever depends on what the memo held before.
MEMO_STRATEGY = 0  # id of the strategy that wrote it + 1 (0: empty)
MEMO_GEN = 1
MEMO_DISASTERS = 2
# The strategy's parameters (float64 bits): the first N_WEIGHTS, all that greedy and the
# evaluation read (a search's own parameters come after them).
MEMO_PARAMS = 3
# The key's city, int16 cells packed four to a word like the game's (``memo_city``): greedy tries
# its moves on it, so the functions it calls see the same city type as everyone else's.
CITY_WORDS = (K.N_CELLS + 3) // 4
MEMO_CITY = MEMO_PARAMS + N_WEIGHTS
MEMO_CTX = MEMO_CITY + CITY_WORDS
# Scratch for the values of one decision's options (float64 bits), so choosing allocates nothing.
MEMO_VALUES = MEMO_CTX + N_CTX
# Scratch of the evaluation's decisions (choose_evaluated, compiled without reference counts,
# allocates nothing): the copy of the seat's city it tries moves on and its left neighbour's
# (int16 cells packed four to a word), that neighbour's context, and the cornerstone actions a
# selection weighs with their values.
MEMO_OWN_CITY = MEMO_VALUES + E.MAX_OPTIONS
MEMO_LEFT_CITY = MEMO_OWN_CITY + CITY_WORDS
MEMO_LEFT_CTX = MEMO_LEFT_CITY + CITY_WORDS
MEMO_CS_VALUES = MEMO_LEFT_CTX + N_CTX
MEMO_CS_OPTIONS = MEMO_CS_VALUES + E.MAX_OPTIONS
# The seats' goods as a draft's synergy supposes them (chain_saving), so it never writes the game's.
MEMO_GOODS = MEMO_CS_OPTIONS + E.MAX_OPTIONS * E.N_OPT_COLS
MEMO_TRIED = MEMO_GOODS + MAX_PLAYERS  # per tile: cell mask of the squares whose parts are stored
# then per (tile, square), N_TERMS float64 (as int64 bits): its move_terms, or greedy's change
N_TERMS = 10  # len(move_terms(...))
ANY_STATE = np.int64(-1)  # a memo_holds key part the strategy's values do not depend on


@njit(_nrt=False)
def memo_size(n_tiles):
    return MEMO_TRIED + n_tiles * (1 + K.N_CELLS * N_TERMS)


@njit(_nrt=False)
def memo_holds(memo, strategy_id, params, city, gen, disasters, n_tiles):
    """Whether ``memo`` was written by this strategy for this city, generation and past
    disasters. If not, it is keyed to them with nothing tried, and the caller writes the
    context (``memo_context``). A strategy whose values do not depend on the generation or the
    disasters passes ``ANY_STATE`` for them, so its memo outlives their changes."""
    stored_params = memo[MEMO_PARAMS : MEMO_PARAMS + N_WEIGHTS].view(np.float64)
    stored_city = memo_city(memo)
    same = (
        memo[MEMO_STRATEGY] == strategy_id + 1
        and memo[MEMO_GEN] == gen
        and memo[MEMO_DISASTERS] == disasters
    )
    for k in range(N_WEIGHTS):
        if not same:
            break
        same = stored_params[k] == params[k]
    for cell in range(K.N_CELLS):
        if not same:
            break
        same = stored_city[cell] == city[cell]
    if not same:
        memo[MEMO_STRATEGY] = strategy_id + 1
        memo[MEMO_GEN] = gen
        memo[MEMO_DISASTERS] = disasters
        for k in range(N_WEIGHTS):
            stored_params[k] = params[k]
        for cell in range(K.N_CELLS):
            stored_city[cell] = city[cell]
        memo[MEMO_TRIED : MEMO_TRIED + n_tiles] = 0
    return same


@njit(_nrt=False)
def set_context_money(ctx, money):
    """Bring a kept context's money, and the score's money VP with it, up to ``money``."""
    ctx[CX_SCORE] += money_vp(money) - money_vp(ctx[CX_MONEY])
    ctx[CX_MONEY] = money


# The memo's parts: views at fixed words of it (inlined: no call layer). Cities are int16
# cells packed four to a word, values float64 bits.
@njit(inline="always")
def memo_cells(memo, at):
    """The int16[N_CELLS] city packed from word ``at`` of the memo: MEMO_CITY (the key's, see
    ``memo_city``), MEMO_OWN_CITY or MEMO_LEFT_CITY (scratch copies of the deciding seat's and
    its left neighbour's cities)."""
    return memo[at : at + CITY_WORDS].view(np.int16)[: K.N_CELLS]


@njit(inline="always")
def memo_floats(memo, at, n):
    """``n`` float64 from word ``at`` of the memo: MEMO_VALUES (``memo_values``) or
    MEMO_CS_VALUES (the values of the cornerstone actions a selection weighs)."""
    return memo[at : at + n].view(np.float64)


@njit(inline="always")
def memo_ctx(memo, at):
    """The context at word ``at`` of the memo: MEMO_CTX (``memo_context``) or MEMO_LEFT_CTX
    (scratch for the left neighbour's)."""
    return memo[at : at + N_CTX]


@njit(inline="always")
def memo_city(memo):
    """The city the memo is keyed to: after ``memo_holds``, a copy of the decision's city that
    a strategy may try moves on, as long as it undoes them."""
    return memo_cells(memo, MEMO_CITY)


@njit(inline="always")
def memo_context(memo):
    """The context the memo keeps for its city (``memo_holds``)."""
    return memo_ctx(memo, MEMO_CTX)


@njit(inline="always")
def memo_values(memo, n):
    """Scratch for the values of ``n`` options (n <= MAX_OPTIONS)."""
    return memo_floats(memo, MEMO_VALUES, n)


@njit(inline="always")  # returns a view: no call layer
def memo_cs_options(memo):
    """Scratch for the cornerstone actions a selection weighs (options rows, a view)."""
    rows = E.MAX_OPTIONS * E.N_OPT_COLS
    return memo[MEMO_CS_OPTIONS : MEMO_CS_OPTIONS + rows].reshape((E.MAX_OPTIONS, E.N_OPT_COLS))


@njit(inline="always")
def copy_cells(source, target):
    """``target[:] = source`` element by element (a slice copy may allocate)."""
    for cell in range(K.N_CELLS):
        target[cell] = source[cell]


@njit(inline="always")
def memo_parts(memo, n_tiles):
    """The memo's stored parts, one row of N_TERMS per (tile, square) (a view)."""
    rows = n_tiles * K.N_CELLS
    return (
        memo[MEMO_TRIED + n_tiles : MEMO_TRIED + n_tiles + rows * N_TERMS]
        .view(np.float64)
        .reshape((rows, N_TERMS))
    )


@njit(_nrt=False)
def has_effect_kinds(effects, tile, low, high):
    """Whether ``tile`` has an effect of kind low..high."""
    for k in range(K.MAX_EFFECTS):
        kind = effects[tile, k, 0]
        if low <= kind <= high:
            return True
    return False


@njit(_nrt=False)
def upcoming_disasters(gstate, tiles, rules):
    """Kinds (bit DIS_*) of the disasters that may still strike: those of this and later
    generations' decks that have not happened yet (none in the no-disasters variant)."""
    if rules[K.RO_VARIANT] == K.V_NO_DISASTERS:
        return 0
    gen = gstate[E.GS_GEN]
    happened = gstate[E.GS_DISASTERS]
    kinds = 0
    for t in range(tiles.shape[0]):
        deck = tiles[t, K.C_DECK]
        if tiles[t, K.C_DISASTER] == K.DIS_NONE or tiles[t, K.C_REPLACES] >= 0:
            continue
        if K.DECK_GEN1 <= deck <= K.DECK_GEN3 and deck >= gen and not (happened >> (deck - 1)) & 1:
            kinds |= 1 << tiles[t, K.C_DISASTER]
    return kinds


@njit(_nrt=False)
def exposure(ctx, kinds):
    """Coins the disasters of ``kinds`` would cost the city of ``ctx`` now (read from its
    summary's masks and its Fire and police covers, filled before)."""
    total = 0
    for kind in (K.DIS_FLOOD, K.DIS_FIRE, K.DIS_CRIME):
        if (kinds >> kind) & 1:
            total += E.disaster_cost_of(
                context_summary(ctx), ctx[CX_FIRE_COVER], ctx[CX_POLICE_COVER], kind
            )
    return total


@njit(_nrt=False)
def charge(tile, cell, kinds, fire_cover, police_cover, tiles):
    """Coins the tile on ``cell`` adds to the cost of the disasters of ``kinds`` (the engine's
    ``disaster_charge`` for one tile)."""
    if tile == K.EMPTY:
        return 0
    types = tiles[tile, K.C_TYPES]
    bit = 1 << cell
    total = 0
    for kind in (K.DIS_FLOOD, K.DIS_FIRE, K.DIS_CRIME):
        if (kinds >> kind) & 1:
            charged, spared, coins = E.disaster_charge(kind, fire_cover, police_cover)
            if types & charged and not spared & bit:
                total += coins
    return total


@njit(inline="always")  # returns a view: no call layer
def context_score_out(ctx):
    """Scratch for a score breakdown (int32[>= N_SCORE]) in ``ctx`` (a view)."""
    return ctx[CX_SCORE_OUT:CX_REQ_COSTS].view(np.int32)


@njit(inline="always")  # returns a view: no call layer
def context_req_costs(ctx):
    """Scratch for the requirement options' costs (int64[MAX_REQ_OPTIONS]) in ``ctx``."""
    return ctx[CX_REQ_COSTS : CX_REQ_COSTS + K.MAX_REQ_OPTIONS]


@njit(inline="always")  # returns a view: no call layer
def context_summary(ctx):
    """The city summary held in ``ctx`` (a view, no copy)."""
    return ctx[CX_SUMMARY : CX_SUMMARY + E.N_SUMMARY]


@njit(inline="always")
def context_placements(seat, tile, city, ctx, goods_of, n_players, money, tiles, req, goods_tier):
    """``sim.neom.engine.tile_placements`` of ``tile`` in ``city``, whose context is ``ctx``
    (its summary and Trade Routes; the requirement options' costs go to its scratch,
    ``context_req_costs``)."""
    return E.tile_placements(
        seat, tile, city, context_summary(ctx), goods_of, ctx[CX_ROUTES], n_players, money,
        tiles, req, goods_tier, context_req_costs(ctx),
    )  # fmt: skip


@njit(_nrt=False)
def build_score_context(city, money, tiles, effects, goods_tier, rules, ctx):
    """Fill the part of ``ctx`` that ``score_delta`` reads, the score itself, the city summary
    and its Trade Routes (all greedy needs)."""
    E.summarize_city(city, tiles, context_summary(ctx))
    score_context(city, money, tiles, effects, goods_tier, rules, ctx)


@njit(_nrt=False)
def kept_score_context(city, kept, money, tiles, effects, goods_tier, rules, ctx):
    """``build_score_context`` of a seat's city with the summary the game keeps of it
    (``kept``: ``game.summaries[seat]``, patched by the engine after every placement and
    removal) copied instead of summarized again, unless it is stale."""
    summary = context_summary(ctx)
    if kept[E.SM_OCCUPIED] == -1:
        E.summarize_city(city, tiles, summary)
    else:
        for k in range(E.N_SUMMARY):
            summary[k] = kept[k]
    score_context(city, money, tiles, effects, goods_tier, rules, ctx)


@njit(_nrt=False)
def score_context(city, money, tiles, effects, goods_tier, rules, ctx):
    """``build_score_context`` after the summary: what it reads is the context's summary."""
    summary = context_summary(ctx)
    score = context_score_out(ctx)
    score_masks(city, summary, money, tiles, effects, goods_tier, rules, score)
    residential = cells_of_types(summary, K.T_RESIDENTIAL)
    vp_holders = 0
    for cell in range(K.N_CELLS):
        ctx[CX_VAR_VP + cell] = 0
    scored = cells_of_types(summary, VP_TYPES)
    while scored:
        cell = lowest_cell(scored)
        scored &= scored - 1
        if has_effect_kinds(effects, city[cell], K.EF_VP_PER_TYPE_CITY, VP_EFFECT_KINDS_MAX):
            vp_holders |= 1 << cell
            ctx[CX_VAR_VP + cell] = tile_variable_vp(
                cell, city, tiles, summary, effects, goods_tier
            )
    ctx[CX_RESIDENTIAL] = residential
    ctx[CX_POLLUTING] = summary[M_POLLUTING]
    ctx[CX_VP_HOLDERS] = vp_holders
    ctx[CX_N_RESIDENTIAL] = popcount(residential)
    ctx[CX_N_POWER] = popcount(summary[M_POWER])
    ctx[CX_GOODS] = summary[M_GOODS]
    ctx[CX_NEIGHBORHOODS] = score[K.S_NEIGHBORHOODS]
    ctx[CX_GOODS_VP] = score[K.S_GOODS]
    ctx[CX_MONEY] = money
    ctx[CX_SCORE] = score[K.S_TOTAL]
    ctx[CX_ROUTES] = E.trade_routes(city, tiles)
    label_components(city, summary, rules, residential, ctx)


@njit(_nrt=False)
def build_context(city, money, gstate, tiles, effects, goods_tier, rules, ctx):
    """Fill ``ctx`` for ``city`` (one pass per decision; candidates then cost little)."""
    build_score_context(city, money, tiles, effects, goods_tier, rules, ctx)
    move_context(city, money, gstate, tiles, effects, goods_tier, rules, ctx)


@njit(_nrt=False)
def kept_context(city, kept, money, gstate, tiles, effects, goods_tier, rules, ctx):
    """``build_context`` of a seat's city with the game's summary of it (``kept``, see
    ``kept_score_context``)."""
    kept_score_context(city, kept, money, tiles, effects, goods_tier, rules, ctx)
    move_context(city, money, gstate, tiles, effects, goods_tier, rules, ctx)


@njit(_nrt=False)
def move_context(city, money, gstate, tiles, effects, goods_tier, rules, ctx):
    """The rest of ``build_context`` after the score context: frontier, covers, income and
    coin holders, the disasters to come."""
    summary = context_summary(ctx)
    occupied = summary[E.SM_OCCUPIED]
    ctx[CX_OCCUPIED] = occupied
    reach = 0
    for d in range(4):
        reach |= summary[E.SM_REACH + d]
    ctx[CX_FRONTIER] = reach & ~occupied
    ctx[CX_FIRE_COVER] = E.protected_cells(city, tiles, K.PROT_FIRE)
    ctx[CX_POLICE_COVER] = E.protected_cells(city, tiles, K.PROT_POLICE)
    income_holders = 0
    coin_holders = 0
    for cell in range(K.N_CELLS):
        ctx[CX_INCOME + cell] = 0
        tile = np.int64(city[cell])  # int64 like the game loop's tiles: one has_effect
        if tile == K.EMPTY:
            continue
        bit = 1 << cell
        if E.has_effect(effects, tile, K.EF_INCOME_PER_TYPE):
            income_holders |= bit
        if E.has_effect(effects, tile, K.EF_COINS_ON_TYPE_PLACED):
            coin_holders |= bit
        ctx[CX_INCOME + cell] = tile_income(cell, city, tiles, summary, effects)
    ctx[CX_INCOME_HOLDERS] = income_holders
    ctx[CX_COIN_HOLDERS] = coin_holders
    kinds = upcoming_disasters(gstate, tiles, rules)
    ctx[CX_UPCOMING] = kinds
    ctx[CX_EXPOSURE] = exposure(ctx, kinds)
    ctx[CX_TURN] = gstate[E.GS_TURN]
    ctx[CX_GEN] = gstate[E.GS_GEN]


@njit(_nrt=False)
def label_components(city, masks, rules, residential, ctx):
    """Label the road-linked components that make Neighborhoods, with their Residential
    counts: all tiles when chains may pass through any tile, else Residential tiles only."""
    through_any = rules[K.RO_NEIGHBORHOOD_THROUGH_ANY] != 0
    through_types = 0 if through_any else K.T_RESIDENTIAL
    candidates = 0
    for cell in range(K.N_CELLS):
        ctx[CX_LABEL + cell] = -1
        ctx[CX_LABEL_RES + cell] = 0
        if city[cell] != K.EMPTY and (through_any or (residential >> cell) & 1):
            candidates |= 1 << cell
    label = 0
    for cell in range(K.N_CELLS):
        if not (candidates >> cell) & 1 or ctx[CX_LABEL + cell] >= 0:
            continue
        component = component_of(masks, cell, through_types)
        for other in range(K.N_CELLS):
            if (component >> other) & 1:
                ctx[CX_LABEL + other] = label
        ctx[CX_LABEL_RES + label] = popcount(component & residential)
        label += 1


@njit(_nrt=False)
def remaining_share(ctx):
    """Share of the game's turns still to play, the current one included (1 in the draft)."""
    turn = max(ctx[CX_TURN], 0)
    return (E.N_TURNS - turn) / E.N_TURNS


@njit(_nrt=False)
def money_value(params, coins, ctx):
    """Value of gaining ``coins`` (negative: paying) with the city unchanged."""
    money = ctx[CX_MONEY]
    after = money + coins
    vp = money_vp_change(money, coins)
    shortfall = max(ctx[CX_EXPOSURE] - money, 0)
    shortfall_after = max(ctx[CX_EXPOSURE] - after, 0)
    return (
        params[W_VP] * vp
        + params[W_MONEY] * coins * remaining_share(ctx)
        - params[W_RESERVE] * (shortfall_after - shortfall)
    )


# The helpers of a candidate move's value (neighborhoods_after, score_delta_and_neighborhoods,
# try_move, undo_move, coins_on_placing, income_delta) are inlined: they run for every move
# tried, and a compiled call passing the context's arrays costs more than their work
# (docs/performance-log.md, fifth round).
@njit(inline="always")
def neighborhoods_after(new, cell, old, city, masks, tiles, rules, residential_after, ctx):
    """Neighborhood VP after putting ``new`` (EMPTY: nothing) on ``cell``; ``city`` and its
    ``masks`` already hold the change. Merging road-linked components of an empty square is
    read off the labels; a replaced or removed tile may split a component, so that case is
    recounted."""
    through_any = rules[K.RO_NEIGHBORHOOD_THROUGH_ANY] != 0
    if old != K.EMPTY or new == K.EMPTY:
        return neighborhoods_vp(masks, residential_after, through_any)
    new_residential = (tiles[new, K.C_TYPES] & K.T_RESIDENTIAL) != 0
    if not through_any and not new_residential:
        return ctx[CX_NEIGHBORHOODS]
    roads = tiles[new, K.C_ROADS]
    merged = 1 if new_residential else 0
    lost = 0
    seen0 = -1
    seen1 = -1
    seen2 = -1
    for direction in range(4):
        other = neighbour(cell, direction)
        if other < 0:
            continue
        label = ctx[CX_LABEL + other]
        if label < 0 or not road_linked(roads, tiles[city[other], K.C_ROADS], direction):
            continue
        if label == seen0 or label == seen1 or label == seen2:
            continue
        if seen0 < 0:
            seen0 = label
        elif seen1 < 0:
            seen1 = label
        else:
            seen2 = label
        size = ctx[CX_LABEL_RES + label]
        merged += size
        lost += neighborhood_value(size)
    return ctx[CX_NEIGHBORHOODS] - lost + neighborhood_value(merged)


@njit(_nrt=False)
def pollution_of(tile, cell, residential, polluting, tiles):
    """Pollution VP (negative) involving the tile on ``cell`` with the other cells' masks."""
    if tile == K.EMPTY:
        return 0
    lost = 0
    if tiles[tile, K.C_TYPES] & K.T_RESIDENTIAL:
        lost += pollution_around(cell, polluting)
    if tiles[tile, K.C_POLLUTING]:
        lost += pollution_around(cell, residential)
    return -lost


@njit(inline="always")
def goods_by_tier(goods, goods_tier, weights_raw, weights_processed, weights_luxury):
    total = 0.0
    for good in range(goods_tier.shape[0]):
        if (goods >> good) & 1:
            tier = goods_tier[good]
            if tier == K.TIER_RAW:
                total += weights_raw
            elif tier == K.TIER_PROCESSED:
                total += weights_processed
            else:
                total += weights_luxury
    return total


@njit(inline="always")
def score_delta(new, cell, coins, city, tiles, effects, goods_tier, rules, ctx):
    """Exact change of the score-as-if-the-game-ended-now when ``new`` (EMPTY: removal) goes
    on ``cell`` and the money changes by ``coins``. ``city`` is restored before returning."""
    return score_delta_and_neighborhoods(
        new, cell, coins, city, tiles, effects, goods_tier, rules, ctx
    )[0]


@njit(inline="always")
def score_delta_and_neighborhoods(new, cell, coins, city, tiles, effects, goods_tier, rules, ctx):
    """``score_delta`` and the city's Neighborhood VP after the move (move_value weighs both)."""
    old = np.int64(city[cell])  # int64 like ``new``: one signature of each function it meets
    bit = 1 << cell
    no_disasters = rules[K.RO_VARIANT] == K.V_NO_DISASTERS
    residential = ctx[CX_RESIDENTIAL] & ~bit
    polluting = ctx[CX_POLLUTING] & ~bit
    delta = printed_vp(new, tiles, no_disasters) - printed_vp(old, tiles, no_disasters)
    delta += pollution_of(new, cell, residential, polluting, tiles)
    delta -= pollution_of(old, cell, residential, polluting, tiles)
    n_res = ctx[CX_N_RESIDENTIAL]
    n_power = ctx[CX_N_POWER]
    if old != K.EMPTY:
        n_res -= (tiles[old, K.C_TYPES] & K.T_RESIDENTIAL) != 0
        n_power -= tiles[old, K.C_POWER] != 0
    if new != K.EMPTY:
        if tiles[new, K.C_TYPES] & K.T_RESIDENTIAL:
            n_res += 1
            residential |= bit
        n_power += tiles[new, K.C_POWER] != 0
    delta += ghost_town(n_res) - ghost_town(ctx[CX_N_RESIDENTIAL])
    delta += power_vp(n_power > 0) - power_vp(ctx[CX_N_POWER] > 0)
    delta += money_vp_change(ctx[CX_MONEY], coins)

    masks = try_move(new, cell, city, tiles, ctx)
    delta -= ctx[CX_VAR_VP + cell]
    if new != K.EMPTY and tiles[new, K.C_TYPES] & VP_TYPES:
        delta += tile_variable_vp(cell, city, tiles, masks, effects, goods_tier)
    goods_may_change = (old != K.EMPTY and tiles[old, K.C_PRODUCES] != 0) or (
        new != K.EMPTY and tiles[new, K.C_PRODUCES] & ~ctx[CX_GOODS]
    )
    changed_types = 0
    if old != K.EMPTY:
        changed_types |= tiles[old, K.C_TYPES]
    if new != K.EMPTY:
        changed_types |= tiles[new, K.C_TYPES]
    holders = ctx[CX_VP_HOLDERS] & ~bit
    while holders:
        other = 0
        while not (holders >> other) & 1:
            other += 1
        holders &= ~(1 << other)
        if vp_reads_change(city[other], other, cell, changed_types, goods_may_change, effects):
            delta += tile_variable_vp(other, city, tiles, masks, effects, goods_tier)
            delta -= ctx[CX_VAR_VP + other]
    if goods_may_change:
        delta += goods_vp(masks[M_GOODS], goods_tier) - ctx[CX_GOODS_VP]
    neighborhoods = neighborhoods_after(new, cell, old, city, masks, tiles, rules, residential, ctx)
    delta += neighborhoods - ctx[CX_NEIGHBORHOODS]
    undo_move(old, cell, city, ctx)
    return delta, neighborhoods


@njit(inline="always")
def try_move(new, cell, city, tiles, ctx):
    """Put ``new`` (EMPTY: nothing) on ``cell`` in ``city`` and in the masks of the context's
    summary, which it returns; ``undo_move`` puts both back."""
    masks = context_summary(ctx)
    for m in range(N_MASKS):
        ctx[CX_SAVED_MASKS + m] = masks[m]
    old = city[cell]
    city[cell] = new
    if old != K.EMPTY:
        remove_tile(masks, cell, old, city, tiles)
    if new != K.EMPTY:
        add_tile(masks, cell, new, tiles)
    return masks


@njit(inline="always")
def undo_move(old, cell, city, ctx):
    city[cell] = old
    for m in range(N_MASKS):
        ctx[CX_SUMMARY + m] = ctx[CX_SAVED_MASKS + m]


@njit(inline="always")
def coins_on_placing(tile, cell, city, tiles, effects, ctx):
    """Coins placing ``tile`` on ``cell`` pays at once: its own and other tiles' effects."""
    coins = tiles[tile, K.C_COINS_ON_PLACE]
    holders = ctx[CX_COIN_HOLDERS] & ~(1 << cell)
    while holders:
        other = lowest_cell(holders)
        holders &= holders - 1
        coins += holder_coins_on_placed(city[other], tile, effects, tiles)
    return coins


@njit(inline="always")
def income_delta(new, cell, city, tiles, effects, ctx):
    """Change of the city's income when ``new`` (EMPTY: removal) goes on ``cell``."""
    old = city[cell]
    changed_types = 0
    if old != K.EMPTY:
        changed_types |= tiles[old, K.C_TYPES]
    if new != K.EMPTY:
        changed_types |= tiles[new, K.C_TYPES]
    masks = try_move(new, cell, city, tiles, ctx)
    delta = tile_income(cell, city, tiles, masks, effects) - ctx[CX_INCOME + cell]
    holders = ctx[CX_INCOME_HOLDERS] & ~(1 << cell)
    while holders:
        other = lowest_cell(holders)
        holders &= holders - 1
        # EF_INCOME_PER_TYPE counts the city's tiles of its types: only those can change it.
        if counts_types(city[other], K.EF_INCOME_PER_TYPE, changed_types, effects):
            delta += tile_income(other, city, tiles, masks, effects) - ctx[CX_INCOME + other]
    undo_move(old, cell, city, ctx)
    return delta


@njit(_nrt=False)
def counts_types(holder, kind, changed_types, effects):
    """Whether an effect of ``kind`` of ``holder`` counts tiles of one of ``changed_types``."""
    for k in range(K.MAX_EFFECTS):
        if effects[holder, k, 0] == kind and effects[holder, k, 1] & changed_types:
            return True
    return False


@njit(_nrt=False)
def move_value(params, new, cell, coins, city, tiles, effects, goods_tier, rules, ctx):
    """Value of putting ``new`` on ``cell`` (EMPTY: removing the tile there) while paying
    ``-coins`` (a placement's one-off coins are added here). Rare decisions only: it goes
    through ``memo_move_terms`` without a memo, so the inlined move_terms is compiled once."""
    no_memo = ctx[:0]  # an empty memo: nothing kept (a view, nothing allocated)
    terms = memo_move_terms(
        params, new, cell, city, tiles, effects, goods_tier, rules, ctx, no_memo
    )
    return terms_value(params, coins, terms, ctx)


NO_TERMS = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@njit(inline="always")
def move_terms(params, new, cell, city, tiles, effects, goods_tier, rules, ctx):
    """The parts of ``move_value`` that do not depend on the coins paid nor on the turn, as a
    tuple of floats (integers held exactly): the score change without money, the coins the
    placement pays, the weighted income, goods, Neighborhood, pollution, power and frontier
    terms (goods, Neighborhood, pollution and frontier before ``terms_value`` scales them by
    the share of the game left), and the disaster cost the move adds and covers. Options that
    differ only in their cost (the requirement options of one square) share them, and so do
    later turns while the city stays the same (``memo_holds``)."""
    old = np.int64(city[cell])  # int64 like ``new``: one signature of each function it meets
    bit = 1 << cell
    placing = 0
    if new != K.EMPTY:
        placing = coins_on_placing(new, cell, city, tiles, effects, ctx)
    delta, neighborhoods = score_delta_and_neighborhoods(
        new, cell, 0, city, tiles, effects, goods_tier, rules, ctx
    )
    collections_left = E.N_GENERATIONS - max(ctx[CX_GEN], 1) + 1
    income = (
        params[W_INCOME] * collections_left * income_delta(new, cell, city, tiles, effects, ctx)
    )

    goods_term = 0.0
    if params[W_RAW] != 0 or params[W_PROCESSED] != 0 or params[W_LUXURY] != 0:
        gained = 0
        if new != K.EMPTY:
            gained = tiles[new, K.C_PRODUCES] & ~ctx[CX_GOODS]
        lost = 0
        if old != K.EMPTY and tiles[old, K.C_PRODUCES] != 0:
            city[cell] = new
            lost = ctx[CX_GOODS] & ~city_goods(city, tiles)
            city[cell] = old
        goods = goods_by_tier(
            gained, goods_tier, params[W_RAW], params[W_PROCESSED], params[W_LUXURY]
        )
        goods -= goods_by_tier(
            lost, goods_tier, params[W_RAW], params[W_PROCESSED], params[W_LUXURY]
        )
        goods_term = goods

    neighborhood_term = 0.0
    if params[W_NEIGHBORHOOD] != 0 and (new == K.EMPTY or tiles[new, K.C_TYPES] & K.T_RESIDENTIAL):
        neighborhood_term = params[W_NEIGHBORHOOD] * (neighborhoods - ctx[CX_NEIGHBORHOODS])

    empty = ~ctx[CX_OCCUPIED] & E.ALL_CELLS
    pollution_term = 0.0
    if new != K.EMPTY and tiles[new, K.C_POLLUTING]:
        pollution_term = params[W_POLLUTION] * pollution_around(cell, empty)

    power_term = 0.0
    if new != K.EMPTY and tiles[new, K.C_POWER] and ctx[CX_N_POWER] == 0:
        power_term = params[W_POWER]

    frontier_term = 0.0
    if new != K.EMPTY and old == K.EMPTY:
        frontier = ctx[CX_FRONTIER] & ~bit
        roads = tiles[new, K.C_ROADS]
        for direction in range(4):
            other = neighbour(cell, direction)
            if other >= 0 and (roads >> direction) & 1 and (empty >> other) & 1:
                frontier |= 1 << other
        frontier_term = params[W_FRONTIER] * (popcount(frontier) - popcount(ctx[CX_FRONTIER]))

    kinds = ctx[CX_UPCOMING]
    added = 0
    covered = 0
    if kinds != 0:
        fire = ctx[CX_FIRE_COVER]
        police = ctx[CX_POLICE_COVER]
        if new != K.EMPTY:
            protects = tiles[new, K.C_PROTECTS]
            around = SURROUNDING_MASKS[cell] | bit
            new_fire = fire
            new_police = police
            if (kinds >> K.DIS_FIRE) & 1 and protects & K.PROT_FIRE:
                new_fire |= around
            if (kinds >> K.DIS_CRIME) & 1 and protects & K.PROT_POLICE:
                new_police |= around
            added = charge(new, cell, kinds, new_fire, new_police, tiles)
            if new_fire != fire or new_police != police:
                for other in range(K.N_CELLS):
                    if other != cell and (around >> other) & 1:
                        neighbour_tile = np.int64(city[other])
                        covered += charge(neighbour_tile, other, kinds, fire, police, tiles)
                        covered -= charge(neighbour_tile, other, kinds, new_fire, new_police, tiles)
        added -= charge(old, cell, kinds, fire, police, tiles)
    return (
        float(delta),
        float(placing),
        income,
        goods_term,
        neighborhood_term,
        pollution_term,
        power_term,
        frontier_term,
        float(added),
        float(covered),
    )


@njit(_nrt=False)
def memo_move_terms(params, new, cell, city, tiles, effects, goods_tier, rules, ctx, memo):
    """``move_terms`` of placing ``new`` on ``cell``, computed once per memo state (``ctx``:
    the memo's context); an empty ``memo`` (another city's context) computes them each time."""
    kept = memo.shape[0] > 0
    if kept and (memo[MEMO_TRIED + new] >> cell) & 1:
        p = memo_parts(memo, tiles.shape[0])[new * K.N_CELLS + cell]
        return (p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9])
    # move_terms is inlined: this is its one call site (move_value comes here too).
    terms = move_terms(params, new, cell, city, tiles, effects, goods_tier, rules, ctx)
    if kept:
        parts = memo_parts(memo, tiles.shape[0])
        for q in range(N_TERMS):
            parts[new * K.N_CELLS + cell, q] = terms[q]
        memo[MEMO_TRIED + new] |= 1 << cell
    return terms


@njit(inline="always")
def terms_value(params, coins, terms, ctx):
    """``move_value`` from its ``move_terms`` when paying ``-coins``: the money parts, then the
    terms added in one fixed order (a skipped term adds 0.0), those that weigh the future
    scaled by the share of the game left (``remaining_share``)."""
    coins += int(terms[1])
    money = ctx[CX_MONEY]
    delta = int(terms[0]) + money_vp_change(money, coins)
    share = remaining_share(ctx)
    value = params[W_VP] * delta
    value += params[W_MONEY] * coins * share
    value += terms[2]
    value += terms[3] * share
    value += terms[4] * share
    value -= terms[5] * share
    value += terms[6]
    value += terms[7] * share
    if ctx[CX_UPCOMING] != 0:
        added = int(terms[8])
        covered = int(terms[9])
        value -= params[W_DISASTER] * added
        value += params[W_PROTECTION] * covered
        if params[W_RESERVE] != 0:
            shortfall = max(ctx[CX_EXPOSURE] - money, 0)
            after = max(ctx[CX_EXPOSURE] + added - covered - money - coins, 0)
            value -= params[W_RESERVE] * (after - shortfall)
    return value


# --- decisions ---------------------------------------------------------------------------------
SACRIFICE_STEP_VP = 3.0  # rough VP an opponent loses per tile a disaster makes them sacrifice
WORST_CORNERSTONE = -100.0  # value of a cornerstone that cannot be placed at all


@njit(_nrt=False)
def progress(ctx):
    """0 on the first generation turn (and in the draft), 1 on the last."""
    return max(ctx[CX_TURN], 0) / (E.N_TURNS - 1)


@njit(_nrt=False)
def pick_best(values, n, rng_state):
    """Index of the highest value; ties broken uniformly with the strategy's stream."""
    best = NO_VALUE
    pick = 0
    n_best = 0
    for k in range(n):
        value = values[k]
        if value > best + TIE:
            best = value
            pick = k
            n_best = 1
        elif value > best - TIE:
            n_best += 1
            if rng.randint(rng_state, n_best) == 0:
                pick = k
    return pick


@njit(inline="always")
def kind_bonus(params, kind, ctx):
    """What an action's kind adds to its move value: a cornerstone the ``cornerstone`` timing
    term plus ``build``, the selected tile placed ``place``. ``build`` stands for what the
    myopic move value leaves out of a cornerstone: it is built by giving up the selected tile
    (a sale's 5 coins at least), and one never built scores nothing (docs/strategies.md,
    "Why cornerstones go unbuilt"). Both are 0 by default; a 0 adds nothing (tested)."""
    if kind == E.A_CORNERSTONE:
        return params[W_CORNERSTONE] * progress(ctx) + params[W_BUILD]
    return params[W_PLACE]


@njit
def action_value(params, options, k, city, tiles, effects, goods_tier, rules, ctx):
    """Value of action option k: place the tile or a cornerstone (paying OPT_COST), or sell."""
    kind = options[k, E.OPT_KIND]
    if kind == E.A_SELL:
        return money_value(params, E.SELL_COINS, ctx)
    value = move_value(
        params,
        options[k, E.OPT_TILE],
        options[k, E.OPT_CELL],
        -options[k, E.OPT_COST],
        city,
        tiles,
        effects,
        goods_tier,
        rules,
        ctx,
    )
    return value + kind_bonus(params, kind, ctx)


@njit(_nrt=False)
def action_values(
    params,
    options,
    n_options,
    city,
    tiles,
    effects,
    goods_tier,
    rules,
    ctx,
    values,
    memo,
):
    """``action_value`` of every option into ``values``. The requirement options of one tile on
    one square (listed one after the other) differ only in cost: they share their move terms."""
    terms = NO_TERMS
    last_tile = -1
    last_cell = -1
    for k in range(n_options):
        kind = options[k, E.OPT_KIND]
        if kind == E.A_SELL:
            values[k] = money_value(params, E.SELL_COINS, ctx)
            continue
        tile = options[k, E.OPT_TILE]
        cell = options[k, E.OPT_CELL]
        if tile != last_tile or cell != last_cell:
            terms = memo_move_terms(
                params, tile, cell, city, tiles, effects, goods_tier, rules, ctx, memo
            )
            last_tile = tile
            last_cell = cell
        values[k] = terms_value(params, -options[k, E.OPT_COST], terms, ctx)
        values[k] += kind_bonus(params, kind, ctx)


# ``free`` for best_placement and denied_value as a run-time bool, not the literal True or
# False: one body each serves both uses (the literals compiled one per value).
FREE = np.bool_(True)
PRICED = np.bool_(False)


@njit(_nrt=False)
def best_placement(
    params, seat, tile, city, money, free, goods_of, n_players, tiles, req, effects, goods_tier,
    rules, ctx, memo,
):  # fmt: skip
    """Best value for ``seat`` of placing ``tile`` in ``city`` (whose context is ``ctx``:
    summary and Trade Routes come from it) at its cheapest requirement option, or NO_VALUE when
    it cannot go anywhere. ``free``: ignore requirements and prerequisites (cornerstones valued
    in the draft, before the goods they need can exist). Arrays in, a number out, nothing
    allocated: compiled without reference counts."""
    summary = context_summary(ctx)
    req_costs = context_req_costs(ctx)
    cost = -1
    if free:
        mask = E.placement_mask(city, tiles, tile, summary)
        for o in range(tiles[tile, K.C_N_REQ_OPTIONS]):
            if cost < 0 or req[tile, o, K.R_COST] < cost:
                cost = req[tile, o, K.R_COST]
    else:
        mask = context_placements(
            seat, tile, city, ctx, goods_of, n_players, money, tiles, req, goods_tier
        )
        for o in range(tiles[tile, K.C_N_REQ_OPTIONS]):
            if mask != 0 and req_costs[o] >= 0 and (cost < 0 or req_costs[o] < cost):
                cost = req_costs[o]
    best = NO_VALUE
    for cell in range(K.N_CELLS):
        if (mask >> cell) & 1:
            terms = memo_move_terms(
                params, tile, cell, city, tiles, effects, goods_tier, rules, ctx, memo
            )
            best = max(best, terms_value(params, -cost, terms, ctx))
    return best


@njit(inline="always")
def game_best_placement(params, seat, tile, city, money, free, game, ctx, memo):
    """``best_placement`` with the game's arrays (one place that reads them)."""
    return best_placement(
        params, seat, tile, city, money, free, game.goods_of, game.gstate[E.GS_N_PLAYERS],
        game.tiles, game.req, game.effects, game.goods_tier, game.rules, ctx, memo,
    )  # fmt: skip


@njit(_nrt=False)
def left_neighbour(seat, deny, game, memo):
    """The seat to the left (who gets the hand next), with a copy of its city in the memo
    (MEMO_LEFT_CITY) and, when the strategy weighs what it would pass them (``deny``), that
    city's context (MEMO_LEFT_CTX)."""
    left = (seat + 1) % game.gstate[E.GS_N_PLAYERS]
    city = memo_cells(memo, MEMO_LEFT_CITY)
    copy_cells(game.cells[left], city)
    ctx = memo_ctx(memo, MEMO_LEFT_CTX)
    if deny:
        kept_context(
            city,
            game.summaries[left],
            seat_money(game.pstate, left),
            game.gstate,
            game.tiles,
            game.effects,
            game.goods_tier,
            game.rules,
            ctx,
        )
    return left


@njit(_nrt=False)
def denied_value(params, left, tile, free, game, left_city, left_ctx):
    """W_DENY times the left neighbour's best use of ``tile`` (never below 0)."""
    money = seat_money(game.pstate, left)
    no_memo = left_ctx[:0]  # the neighbour's values computed afresh (a view: no allocation)
    gift = game_best_placement(params, left, tile, left_city, money, free, game, left_ctx, no_memo)
    return params[W_DENY] * max(gift, 0.0)


@njit
def disaster_loss(city, money, tiles, effects, disaster):
    """Rough VP a disaster costs a city: half its coin cost when it can pay, else a fixed
    loss per tile to sacrifice; nothing for an insured city."""
    if insured_against(city, effects, disaster):
        return 0.0
    cost = E.disaster_cost(city, tiles, disaster)
    if cost <= money:
        return cost / 2
    return SACRIFICE_STEP_VP * E.sacrifice_steps(disaster)


@njit(_nrt=False)
def pending_disaster(seat, city, game):
    """The disaster that strikes ``seat`` (its city ``city``) at the end of this turn as far as
    it is known now (``sim.neom.engine.disaster_striking``: the selections revealed before the
    actions, the solo pack, the random-disasters turn), DIS_NONE when none. For the action and
    the decisions inside it only (RULES.md P3)."""
    disaster, _ = E.disaster_striking(
        seat, city, game.gstate, game.pstate, game.hands, game.tiles, game.effects
    )
    return disaster


@njit
def subtract_disaster_losses(weight, options, n_options, city, money, disaster, tiles, effects,
                             values):  # fmt: skip
    """Take ``weight`` times ``disaster_loss`` of the city *after* each action option of
    ``options`` (placing the tile or a cornerstone, or selling it), with the money after it
    (``money``: coins that can pay the disaster, PS_MONEY: pending coins cannot), off
    ``values``: selling for coins, leaving out a tile the disaster would charge, building
    protection or insurance are worth what they save. Rare (a disaster is pending), so the
    city is copied and each option's disaster cost computed in full."""
    after = city.copy()
    for k in range(n_options):
        if options[k, E.OPT_KIND] == E.A_SELL:
            sold = money + E.SELL_COINS
            values[k] -= weight * disaster_loss(after, sold, tiles, effects, disaster)
            continue
        tile = options[k, E.OPT_TILE]
        cell = options[k, E.OPT_CELL]
        coins = money + tiles[tile, K.C_COINS_ON_PLACE] - options[k, E.OPT_COST]
        old = after[cell]
        after[cell] = tile
        values[k] -= weight * disaster_loss(after, coins, tiles, effects, disaster)
        after[cell] = old


@njit
def disaster_select_value(params, seat, disaster, game):
    """Selecting the Disaster: no action this turn, but it strikes every other player and
    spares us. Valued as W_HURT times the worst-hit opponent's loss plus our own avoided one."""
    worst = 0.0
    own = 0.0
    for s in range(game.gstate[E.GS_N_PLAYERS]):
        money = seat_money(game.pstate, s)
        # int64 (not the tile table's int32) like the action's: one signature down the chain
        loss = disaster_loss(game.cells[s], money, game.tiles, game.effects, np.int64(disaster))
        if s == seat:
            own = loss
        else:
            worst = max(worst, loss)
    return params[W_HURT] * (worst + own)


@njit
def sacrifice_value(params, city, disaster, gstate, money, tiles, effects, goods_tier, rules):
    """Value of sacrificing: each step removes the tile whose loss is valued least."""
    scratch = city.copy()
    ctx = np.empty(N_CTX, dtype=np.int64)
    options = np.empty((K.N_CELLS, E.N_OPT_COLS), dtype=np.int64)
    total = 0.0
    for step in range(E.sacrifice_steps(disaster)):
        n = E.sacrifice_options(scratch, tiles, disaster, step, options)
        if n == 0:
            continue
        build_context(scratch, money, gstate, tiles, effects, goods_tier, rules, ctx)
        best = NO_VALUE
        best_cell = -1
        for k in range(n):
            cell = options[k, E.OPT_CELL]
            value = move_value(
                params, K.EMPTY, cell, 0, scratch, tiles, effects, goods_tier, rules, ctx
            )
            if value > best:
                best = value
                best_cell = cell
        total += best
        scratch[best_cell] = K.EMPTY
    return total


@njit(_nrt=False)
def seat_money(pstate, seat):
    return pstate[seat, E.PS_MONEY] + pstate[seat, E.PS_PENDING]


@njit(_nrt=False)
def evaluated_context(memo, params, city, kept, money, gstate, tiles, effects, goods_tier, rules):
    """Brings the context of ``city`` kept in the seat's memo (``memo_context``) up to date:
    built there unless the memo holds it (``memo_holds``: same city, generation and disasters
    past), else brought up to the money and the turn. Returns nothing (a view handed back out
    of code compiled without reference counts would be released once too often)."""
    ctx = memo_context(memo)
    if not memo_holds(
        memo,
        np.int64(EVALUATED_ID),  # not a literal: one memo_holds for every strategy
        params,
        city,
        gstate[E.GS_GEN],
        gstate[E.GS_DISASTERS],
        tiles.shape[0],
    ):
        kept_context(city, kept, money, gstate, tiles, effects, goods_tier, rules, ctx)
    else:
        set_context_money(ctx, money)
        ctx[CX_TURN] = gstate[E.GS_TURN]


@njit(_nrt=False)
def choose_evaluated(params, rng_state, decision, n_options, seat, game, memo):
    """The option of ``game.options[:n_options]`` of highest value under the weights
    ``params`` (one entry per decision kind of sim.neom.engine; ties broken by the strategy's
    random stream). ``game``: a ``Game`` or its view; ``memo``: the seat's (see memo_holds;
    zeros: nothing kept)."""
    values = memo_values(memo, n_options)
    evaluated_values(params, decision, n_options, seat, view(game), memo, values)
    return pick_best(values, n_options, rng_state)


@njit(_nrt=False)
def evaluated_values(params, decision, n_options, seat, game, memo, values):
    """The value under the weights ``params`` of each option of ``game.options[:n_options]``
    into ``values`` (``choose_evaluated`` takes the best; a search ranks its candidates by
    them). ``game``: a view (``sim.neom.state.view``); ``memo``: the seat's, whose scratch
    this uses, so nothing is allocated but in rare decisions (disasters, sacrifices)."""
    gstate = game.gstate
    tiles = game.tiles
    effects = game.effects
    goods_tier = game.goods_tier
    rules = game.rules
    options = game.options
    city = memo_cells(memo, MEMO_OWN_CITY)
    copy_cells(game.cells[seat], city)
    money = seat_money(game.pstate, seat)
    evaluated_context(
        memo, params, city, game.summaries[seat], money, gstate, tiles, effects, goods_tier, rules
    )
    ctx = memo_context(memo)
    if decision == E.D_ACTION:
        action_values(
            params, options, n_options, city, tiles, effects, goods_tier, rules, ctx, values,
            memo,
        )  # fmt: skip
        if params[W_DEMAND] != 0:
            add_goods_demand(params, options, n_options, seat, game, ctx, memo, values)
        disaster = pending_disaster(seat, city, game)
        if disaster != K.DIS_NONE:
            subtract_disaster_losses(
                params[W_VP], options, n_options, city, game.pstate[seat, E.PS_MONEY], disaster,
                tiles, effects, values,
            )  # fmt: skip
    elif decision == E.D_SELECT:
        select_values(params, n_options, seat, game, city, ctx, values, memo)
    elif decision == E.D_DRAFT or decision == E.D_TAKE_CS:
        deny = decision == E.D_DRAFT and params[W_DENY] != 0 and gstate[E.GS_N_PLAYERS] > 1
        left = left_neighbour(seat, deny, game, memo)
        left_city = memo_cells(memo, MEMO_LEFT_CITY)
        left_ctx = memo_ctx(memo, MEMO_LEFT_CTX)
        for k in range(n_options):
            tile = options[k, E.OPT_TILE]
            values[k] = game_best_placement(params, seat, tile, city, money, FREE, game, ctx, memo)
            if params[W_FORESIGHT] != 0:
                values[k] += params[W_FORESIGHT] * vp_per_matching_tile(effects, tile)
            values[k] += params[W_VP] * placement_vp_out_of_reach(tile, city, tiles, effects, ctx)
            if params[W_SYNERGY] != 0 and decision == E.D_DRAFT:
                values[k] += params[W_SYNERGY] * kept_synergy(
                    params, tile, seat, game, city, ctx, memo
                )
            if params[W_REQUIREMENTS] != 0 and decision == E.D_DRAFT:
                values[k] += params[W_REQUIREMENTS] * money_value(
                    params, -requirement_price(seat, tile, game, ctx), ctx
                )
            if deny:
                values[k] += denied_value(params, left, tile, FREE, game, left_city, left_ctx)
    elif decision == E.D_SWAP_CS:
        values[0] = 0.0
        for k in range(1, n_options):
            tile = options[k, E.OPT_TILE]
            value = game_best_placement(params, seat, tile, city, money, FREE, game, ctx, memo)
            values[k] = -max(value, WORST_CORNERSTONE)
    elif decision == E.D_BUY:
        for k in range(n_options):
            # Cheapest first; between equal prices, pay the poorer seller.
            seller = options[k, E.OPT_SEAT]
            values[k] = -options[k, E.OPT_COST] - 1e-3 * seat_money(game.pstate, seller)
    elif decision == E.D_DISASTER:
        for k in range(n_options):
            if options[k, E.OPT_KIND] == E.DR_PAY:
                values[k] = money_value(params, -options[k, E.OPT_COST], ctx)
            else:
                values[k] = sacrifice_value(
                    params,
                    city,
                    gstate[E.GS_RESOLVING],
                    gstate,
                    money,
                    tiles,
                    effects,
                    goods_tier,
                    rules,
                )
    else:  # D_SACRIFICE
        for k in range(n_options):
            cell = options[k, E.OPT_CELL]
            values[k] = move_value(
                params, K.EMPTY, cell, 0, city, tiles, effects, goods_tier, rules, ctx
            )


@njit(_nrt=False)
def vp_per_matching_tile(effects, tile):
    """VP the tile's effects give per tile of their types (``EF_VP_PER_TYPE_CITY``,
    ``EF_VP_PER_TYPE_ADJACENT``): what the draft's ``foresight`` counts, per tile of those
    types the city will hold later, since the city of the draft holds none yet."""
    total = 0
    for k in range(K.MAX_EFFECTS):
        kind = effects[tile, k, 0]
        if kind == K.EF_VP_PER_TYPE_CITY or kind == K.EF_VP_PER_TYPE_ADJACENT:
            total += effects[tile, k, 2]
    return total


@njit(_nrt=False)
def placement_vp_out_of_reach(tile, city, tiles, effects, ctx):
    """VP of the tile's placement conditions (``EF_VP_PLACEMENT``: corner, edge, alone) at its
    best square of the grid beyond what they give on the squares it can go on now. The draft's
    city holds only the City Center, whose neighbours are neither edge nor corner, so
    ``best_placement`` cannot see an edge or corner bonus, though the city reaches the edge
    long before its cornerstones are built. Each condition is the engine's (``vp_placement``),
    read with the tile put on each square; ``city`` (a copy) is restored."""
    if not E.has_effect(effects, tile, K.EF_VP_PLACEMENT):
        return 0
    summary = context_summary(ctx)
    reachable = E.placement_mask(city, tiles, tile, summary)
    anywhere = 0
    in_reach = 0
    for cell in range(K.N_CELLS):
        in_mask = (reachable >> cell) & 1
        if city[cell] != K.EMPTY and not in_mask:
            continue
        old = city[cell]
        city[cell] = tile
        vp = 0
        for k in range(K.MAX_EFFECTS):
            if effects[tile, k, 0] == K.EF_VP_PLACEMENT:
                vp += vp_placement(effects[tile, k, 1], effects[tile, k, 2], cell, city, tiles,
                                   summary)  # fmt: skip
        city[cell] = old
        anywhere = max(anywhere, vp)
        if in_mask:
            in_reach = max(in_reach, vp)
    return anywhere - in_reach


# Where kept_synergy puts the cornerstones it weighs together: three mutually adjacent squares of
# a corner (8-neighbourhood), none next to the City Center, so only the cornerstones read each
# other. The candidate goes first; at most two kept ones fit, all a seat holds in a draft.
SYNERGY_CELLS = (0, 1, K.GRID)


@njit(_nrt=False)
def pair_vp_and_income(n, city, tiles, effects, goods_tier, masks):
    """VP of the effects (placement bonuses left out) and income of the tiles on the first
    ``n`` squares of SYNERGY_CELLS, each read with the engine's own evaluators."""
    vp = 0
    income = 0
    for j in range(n):
        cell = SYNERGY_CELLS[j]
        tile = city[cell]
        if tile == K.EMPTY:
            continue
        for k in range(K.MAX_EFFECTS):
            kind = effects[tile, k, 0]
            # A placement bonus depends on the square the seat will choose, not on the other
            # cornerstones (placement_vp_out_of_reach counts it).
            if kind == K.EF_NONE or kind == K.EF_VP_PLACEMENT:
                continue
            vp += effect_vp(kind, effects[tile, k, 1], effects[tile, k, 2], effects[tile, k, 3],
                            cell, city, tiles, masks, goods_tier)  # fmt: skip
        income += tile_income(cell, city, tiles, masks, effects)
    return vp, income


@njit(_nrt=False)
def cheapest_requirement(seat, tile, goods_of, routes, game):
    """Coins of the cheapest requirement option of ``tile`` for ``seat`` (the engine's
    ``plan_cost``, money unlimited), -1 if none can be met."""
    best = -1
    for option in range(game.tiles[tile, K.C_N_REQ_OPTIONS]):
        cost = E.plan_cost(seat, tile, option, goods_of, routes, game.gstate[E.GS_N_PLAYERS],
                           game.req, game.goods_tier, np.int64(1) << 40)  # fmt: skip
        if cost >= 0 and (best < 0 or cost < best):
            best = cost
    return best


@njit(_nrt=False)
def chain_saving(seat, producer, consumer, routes, game, memo):
    """Coins ``producer``'s goods save ``consumer``'s cheapest requirement option (a
    consumer unplaceable without them counts its dearest option's coins, 0 if it has none);
    the goods as the seat's city would hold them with the producer built (supposed in the
    memo's copy of the seats' goods: the game is only read)."""
    produces = game.tiles[producer, K.C_PRODUCES]
    goods_of = game.goods_of
    if produces & ~goods_of[seat] == 0:
        return 0
    before = cheapest_requirement(seat, consumer, goods_of, routes, game)
    supposed = memo[MEMO_GOODS : MEMO_GOODS + goods_of.shape[0]]
    for s in range(goods_of.shape[0]):  # a loop: an array copy would need NRT
        supposed[s] = goods_of[s]
    supposed[seat] |= produces
    after = cheapest_requirement(seat, consumer, supposed, routes, game)
    if after < 0:
        return 0
    if before < 0:
        before = 0
        for option in range(game.tiles[consumer, K.C_N_REQ_OPTIONS]):
            before = max(before, game.req[consumer, option, K.R_COST])
    return max(before - after, 0)


@njit(_nrt=False)
def demand_saving(seat, produces, consumer, supposed, routes, game):
    """Coins the goods ``produces`` (new to the seat; ``supposed``: the seats' goods with them)
    save ``consumer``'s cheapest requirement option, by the engine's ``plan_cost`` (money
    unlimited). A consumer unplaceable without them counts them at their base purchase price
    (``K.TIER_PRICE``): a good nobody sells is worth at least what it would cost to buy."""
    n_players = game.gstate[E.GS_N_PLAYERS]
    no_limit = np.int64(1) << 40
    before = -1
    after = -1
    option_after = -1
    for option in range(game.tiles[consumer, K.C_N_REQ_OPTIONS]):
        cost = E.plan_cost(seat, consumer, option, game.goods_of, routes, n_players, game.req,
                           game.goods_tier, no_limit)  # fmt: skip
        if cost >= 0 and (before < 0 or cost < before):
            before = cost
        cost = E.plan_cost(seat, consumer, option, supposed, routes, n_players, game.req,
                           game.goods_tier, no_limit)  # fmt: skip
        if cost >= 0 and (after < 0 or cost < after):
            after = cost
            option_after = option
    if after < 0:
        return 0
    if before < 0:
        before = after
        before += base_price(game.req[consumer, option_after, K.R_GOODS] & produces,
                             game.goods_tier)  # fmt: skip
    return max(before - after, 0)


@njit(inline="always")
def base_price(goods, goods_tier):
    """The base purchase prices (``K.TIER_PRICE``) of the goods in the bit set ``goods``: what
    the demand and requirement terms count a good nobody sells at (made later, it costs at
    least that)."""
    price = np.int64(0)
    for good in range(goods_tier.shape[0]):
        if (goods >> good) & 1:
            price += K.TIER_PRICE[goods_tier[good]]
    return price


@njit(_nrt=False)
def requirement_price(seat, tile, game, ctx):
    """Coins meeting ``tile``'s requirements costs ``seat`` beyond its cheapest printed coin
    cost (all the draft's ``FREE`` placement pays): the cheapest option by the engine's
    ``plan_cost`` with the goods the seats' cities make now (the seat's board among them; a
    good to buy at its seller's price), an option whose goods nobody sells at its coins plus
    their base purchase price (``K.TIER_PRICE``, as ``demand_saving`` counts them: made later,
    they cost at least that). The kept cornerstones' goods are left out: ``kept_synergy``
    counts what they save (``chain_saving``), so counting them here too would count them twice.
    0 for a tile whose cheapest printed option needs no goods the seat lacks."""
    tiles = game.tiles
    req = game.req
    goods_tier = game.goods_tier
    goods_of = game.goods_of
    n_players = game.gstate[E.GS_N_PLAYERS]
    no_limit = np.int64(1) << 40
    printed = -1
    priced = -1
    for option in range(tiles[tile, K.C_N_REQ_OPTIONS]):
        coins = req[tile, option, K.R_COST]
        if printed < 0 or coins < printed:
            printed = coins
        cost = E.plan_cost(seat, tile, option, goods_of, ctx[CX_ROUTES], n_players, req,
                           goods_tier, no_limit)  # fmt: skip
        if cost < 0:
            cost = coins + base_price(req[tile, option, K.R_GOODS] & ~goods_of[seat], goods_tier)
        if priced < 0 or cost < priced:
            priced = cost
    return np.int64(priced - printed)


@njit(_nrt=False)
def goods_demand(params, seat, producer, game, ctx, memo):
    """What the goods ``producer`` gives the seat (those its city lacks) are worth to the tiles
    still to come that need them: the coins they save (``demand_saving``) the seat's kept
    cornerstones, and each tile of the later generations' decks (their make-up, which is
    public: ``E.in_deck``) at 1 / the number of players, the seat's share of a deck. The goods
    are supposed in the memo's copy of the seats' goods (the game is only read). Valued as
    coins by ``money_value``; 0 for a tile that makes nothing new."""
    tiles = game.tiles
    goods_of = game.goods_of
    produces = tiles[producer, K.C_PRODUCES] & ~goods_of[seat]
    if produces == 0:
        return 0.0
    supposed = memo[MEMO_GOODS : MEMO_GOODS + goods_of.shape[0]]
    for s in range(goods_of.shape[0]):  # a loop: an array copy would need NRT
        supposed[s] = goods_of[s]
    supposed[seat] |= produces
    routes = ctx[CX_ROUTES]
    kept = np.int64(0)  # not literals: one signature of money_value (tests/test_signatures.py)
    for j in range(game.pstate[seat, E.PS_N_CS]):
        consumer = np.int64(game.cs_hands[seat, j])
        if consumer != producer:
            kept += demand_saving(seat, produces, consumer, supposed, routes, game)
    n_players = game.gstate[E.GS_N_PLAYERS]
    limit = E.icon_limit(n_players, game.rules)
    variant = game.rules[K.RO_VARIANT]
    later = np.int64(0)
    for consumer in range(tiles.shape[0]):
        wanted = 0
        for option in range(tiles[consumer, K.C_N_REQ_OPTIONS]):
            wanted |= game.req[consumer, option, K.R_GOODS]
        if wanted & produces == 0:
            continue
        for gen in range(max(game.gstate[E.GS_GEN], 0) + 1, E.N_GENERATIONS + 1):
            if E.in_deck(consumer, gen, limit, variant, tiles):
                later += demand_saving(seat, produces, consumer, supposed, routes, game)
    return money_value(params, kept, ctx) + money_value(params, later, ctx) / n_players


@njit(_nrt=False)
def add_goods_demand(params, options, n_options, seat, game, ctx, memo, values):
    """Add ``demand`` times ``goods_demand`` to each option placing a tile or a cornerstone
    (options of one tile, listed one after the other, share it)."""
    last_tile = -1
    demand = 0.0
    for k in range(n_options):
        if options[k, E.OPT_KIND] == E.A_SELL:
            continue
        tile = options[k, E.OPT_TILE]
        if tile != last_tile:
            demand = params[W_DEMAND] * goods_demand(params, seat, tile, game, ctx, memo)
            last_tile = tile
        values[k] += demand


@njit(_nrt=False)
def kept_synergy(params, tile, seat, game, city, ctx, memo):
    """What cornerstone ``tile`` is worth to ``seat`` beyond its own value because of the
    cornerstones the seat has kept (the draft): the VP and income their effects give each other
    (a kept City Hall counts a Public candidate, a candidate Resource Agency the raw goods a kept
    Energy Cooperative makes; adjacency effects as if placed side by side) and the coins one's
    goods save the other's requirements (Modular Factory's Concrete for Arcology). All read with
    the engine's rules on ``city`` (a copy, restored) with the cornerstones on SYNERGY_CELLS:
    their effects together, minus the kept ones' without the candidate, minus the candidate's
    alone. In VP-equivalents like a move's value; 0 with nothing kept."""
    n_kept = min(game.pstate[seat, E.PS_N_CS], len(SYNERGY_CELLS) - 1)
    if n_kept == 0:
        return 0.0
    for j in range(n_kept + 1):
        if city[SYNERGY_CELLS[j]] != K.EMPTY:
            return 0.0
    tiles = game.tiles
    effects = game.effects
    goods_tier = game.goods_tier
    masks = context_summary(ctx)
    for m in range(N_MASKS):
        ctx[CX_SAVED_MASKS + m] = masks[m]
    for j in range(1, n_kept + 1):
        kept = game.cs_hands[seat, j - 1]
        city[SYNERGY_CELLS[j]] = kept
        add_tile(masks, SYNERGY_CELLS[j], kept, tiles)
    kept_vp, kept_income = pair_vp_and_income(n_kept + 1, city, tiles, effects, goods_tier, masks)
    city[SYNERGY_CELLS[0]] = tile
    add_tile(masks, SYNERGY_CELLS[0], tile, tiles)
    all_vp, all_income = pair_vp_and_income(n_kept + 1, city, tiles, effects, goods_tier, masks)
    for j in range(1, n_kept + 1):
        city[SYNERGY_CELLS[j]] = K.EMPTY
    for m in range(N_MASKS):
        masks[m] = ctx[CX_SAVED_MASKS + m]
    add_tile(masks, SYNERGY_CELLS[0], tile, tiles)
    # np.int64, not literals: one signature of each helper (tests/test_signatures.py)
    own_vp, own_income = pair_vp_and_income(np.int64(1), city, tiles, effects, goods_tier, masks)
    city[SYNERGY_CELLS[0]] = K.EMPTY
    for m in range(N_MASKS):
        masks[m] = ctx[CX_SAVED_MASKS + m]
    saved = np.int64(0)
    for j in range(n_kept):
        kept = game.cs_hands[seat, j]
        routes = ctx[CX_ROUTES]
        saved += chain_saving(seat, tile, kept, routes, game, memo)
        saved += chain_saving(seat, kept, tile, routes, game, memo)
    collections_left = E.N_GENERATIONS - max(ctx[CX_GEN], 1) + 1
    income = all_income - kept_income - own_income
    return (
        params[W_VP] * (all_vp - kept_vp - own_vp)
        + params[W_INCOME] * collections_left * income
        + money_value(params, saved, ctx)
    )


@njit(_nrt=False)
def select_values(params, n_options, seat, game, city, ctx, values, memo):
    """Each selectable tile of ``game.options``: the best of placing it, selling it, or
    discarding it to place a cornerstone, plus W_DENY times the left neighbour's best use of
    it; the Disaster by ``disaster_select_value``. ``city``: a copy of the seat's."""
    options = game.options
    money = seat_money(game.pstate, seat)
    fallback = max(
        money_value(params, E.SELL_COINS, ctx),
        cornerstone_value(params, n_options, seat, game, city, ctx, memo),
    )
    deny = params[W_DENY] != 0 and game.gstate[E.GS_N_PLAYERS] > 1
    left = left_neighbour(seat, deny, game, memo)
    left_city = memo_cells(memo, MEMO_LEFT_CITY)
    left_ctx = memo_ctx(memo, MEMO_LEFT_CTX)
    for k in range(n_options):
        tile = options[k, E.OPT_TILE]
        disaster = game.tiles[tile, K.C_DISASTER]
        if disaster != K.DIS_NONE:
            values[k] = disaster_select_value(params, seat, disaster, game)
            continue
        place = game_best_placement(params, seat, tile, city, money, PRICED, game, ctx, memo)
        if place > NO_VALUE:
            place += params[W_PLACE]  # the action's own bonus (kind_bonus), so both agree
            if params[W_DEMAND] != 0:  # as the action adds it (add_goods_demand)
                place += params[W_DEMAND] * goods_demand(params, seat, tile, game, ctx, memo)
        values[k] = max(fallback, place)
        if deny:
            values[k] += denied_value(params, left, tile, PRICED, game, left_city, left_ctx)


@njit(_nrt=False)
def cornerstone_value(params, n_options, seat, game, city, ctx, memo):
    """Best value of discarding a selected tile of ``game.options`` to place a cornerstone (the
    same for every tile of the hand but the Disaster), from the engine's own list of those
    actions; NO_VALUE if none."""
    best = NO_VALUE
    pstate = game.pstate
    tiles = game.tiles
    if pstate[seat, E.PS_N_CS] == 0:
        return best
    any_tile = False  # a hand of only the Disaster gives no action
    for k in range(n_options):
        any_tile = any_tile or tiles[game.options[k, E.OPT_TILE], K.C_DISASTER] == K.DIS_NONE
    if not any_tile:
        return best
    actions = memo_cs_options(memo)
    n = E.add_cornerstone_options(
        seat,
        game.gstate[E.GS_GEN],
        city,
        pstate,
        game.cs_hands,
        game.goods_of,
        ctx[CX_ROUTES],
        game.gstate[E.GS_N_PLAYERS],
        pstate[seat, E.PS_MONEY],
        tiles,
        game.req,
        game.goods_tier,
        actions,
        np.int64(0),  # not a literal: the count handed on is then one type (one compile)
        context_summary(ctx),
        context_req_costs(ctx),
    )
    values = memo_floats(memo, MEMO_CS_VALUES, n)
    action_values(
        params, actions, n, city, tiles, game.effects, game.goods_tier, game.rules, ctx, values,
        memo,
    )  # fmt: skip
    if params[W_DEMAND] != 0:
        add_goods_demand(params, actions, n, seat, game, ctx, memo, values)
    for a in range(n):
        best = max(best, values[a])
    return best
