"""The shared evaluation: its exact score change against ``score_city``, and the archetypes'
decisions on hand-made positions where the right choice is clear."""

import re
from dataclasses import replace

import numpy as np
import pytest
from strategy_positions import VICTIM_CELLS, disaster_position, empty_position, grow_city

from sim.core.jit import njit
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom.catalog import load_catalog
from sim.neom.effects import city_income
from sim.neom.grid import masks_of
from sim.neom.scoring import score_city
from sim.neom.state import view
from sim.neom.tables import make_rules
from strategies.neom.archetypes import W_VP
from strategies.neom.evaluate import (
    CX_EXPOSURE,
    N_CTX,
    action_values,
    build_context,
    choose_evaluated,
    evaluated_values,
    income_delta,
    memo_size,
    placement_vp_out_of_reach,
    score_delta,
    select_values,
)
from strategies.neom.registry import parse_strategy

ARCHETYPES = ("builder", "industrialist", "merchant", "denier")

# The Modular Factory as v3 had it before mf38p (Stone -> Concrete for 5 coins, else 6 coins):
# the producer the synergy, demand and requirements known answers plant beside the Arcology.
# The shipped Factory makes Plastic since mf38p; those tests are about the terms, not the card.
STONE_FACTORY = """name = "Modular Factory"
deck = "cornerstone"
types = ["industrial"]
roads = "NESW"
requires = ["Stone"]
alternatives = [{ requires = [], cost = 6 }]
income = 1
produces = ["Concrete"]
polluting = true
known = ["income >= 1"]
cost = 5

"""


def edited_block(text, name, drop, cost):
    """``text`` with the lines of the fields ``drop`` removed from the tile ``name``, which
    then costs ``cost`` coins."""
    start = text.index(f'name = "{name}"')
    end = text.index("[[tiles]]", start)
    block = re.sub(rf"(?m)^({'|'.join(drop)}) = .*\n", "", text[start:end])
    block = re.sub(r"(?m)^cost = .*$", f"cost = {cost}", block)
    return text[:start] + block + text[end:]


@pytest.fixture(scope="module")
def concrete_tables(tmp_path_factory):
    """The default catalogue as the synergy, demand and requirements known answers were planted
    on (before mf38p): the Concrete-making Modular Factory (``STONE_FACTORY``), the Cement Plant
    needing Stone (nobody makes Concrete without Stone) and the Energy Cooperative at 6 coins."""
    from sim.neom.catalog import DEFAULT_CATALOG

    text = DEFAULT_CATALOG.read_text()
    start = text.index('name = "Modular Factory"')
    text = text[:start] + STONE_FACTORY + text[text.index("[[tiles]]", start) :]
    text = edited_block(text, "Cement Plant", ("alternatives",), 4)
    text = edited_block(text, "Energy Cooperative", ("requires", "alternatives"), 6)
    path = tmp_path_factory.mktemp("catalog") / "before_mf38p.toml"
    path.write_text(text)
    return load_catalog(path)


def total(city, money, tables, rules):
    out = np.empty(K.N_SCORE, dtype=np.int32)
    score_city(city, money, tables.tiles, tables.effects, tables.goods_tier, rules, out)
    return int(out[K.S_TOTAL])


@pytest.mark.parametrize(
    "rules",
    [make_rules(), make_rules(neighborhood_through_any=False), make_rules(K.V_NO_DISASTERS)],
    ids=["through-any", "residential-only", "no-disasters"],
)
def test_score_delta_is_the_exact_change_of_score_city(tables, rules):
    """The incremental score change of placing, replacing or removing a tile equals the
    difference of two full ``score_city`` calls, on random legal cities."""
    rng = np.random.default_rng(5)
    gstate = np.zeros(E.N_GSTATE, dtype=np.int64)
    ctx = np.empty(N_CTX, dtype=np.int64)
    summary = np.empty(E.N_SUMMARY, dtype=np.int64)
    playable = np.flatnonzero(tables.tiles[:, K.C_DISASTER] == K.DIS_NONE)
    checked = 0
    for trial in range(60):
        city = np.full(K.N_CELLS, K.EMPTY, dtype=np.int16)
        city[K.CENTER_CELL] = tables.board_center[trial % len(tables.board_center)]
        grow_city(tables, city, int(rng.integers(0, 16)), rng)
        money = int(rng.integers(0, 20))
        build_context(
            city, money, gstate, tables.tiles, tables.effects, tables.goods_tier, rules, ctx
        )
        before = total(city, money, tables, rules)
        for _ in range(8):
            coins = int(rng.integers(-5, 6))
            if rng.random() < 0.25:
                occupied = np.flatnonzero(city != K.EMPTY)
                tile, cell = K.EMPTY, int(rng.choice(occupied))
            else:
                tile = int(rng.choice(playable))
                E.summarize_city(city, tables.tiles, summary)
                mask = E.placement_mask(city, tables.tiles, tile, summary)
                cells = [c for c in range(K.N_CELLS) if (mask >> c) & 1]
                if not cells:
                    continue
                cell = int(rng.choice(cells))
            got = score_delta(
                tile, cell, coins, city, tables.tiles, tables.effects, tables.goods_tier, rules, ctx
            )
            after_city = city.copy()
            after_city[cell] = tile
            assert got == total(after_city, money + coins, tables, rules) - before
            checked += 1
    assert checked > 300


def income(city, tables):
    return city_income(city, tables.tiles, masks_of(city, tables.tiles), tables.effects)


def test_income_delta_is_the_exact_change_of_city_income(tables):
    rng = np.random.default_rng(9)
    rules = make_rules()
    gstate = np.zeros(E.N_GSTATE, dtype=np.int64)
    ctx = np.empty(N_CTX, dtype=np.int64)
    playable = np.flatnonzero(tables.tiles[:, K.C_DISASTER] == K.DIS_NONE)
    for trial in range(40):
        city = np.full(K.N_CELLS, K.EMPTY, dtype=np.int16)
        city[K.CENTER_CELL] = tables.board_center[trial % len(tables.board_center)]
        grow_city(tables, city, int(rng.integers(0, 16)), rng)
        build_context(city, 0, gstate, tables.tiles, tables.effects, tables.goods_tier, rules, ctx)
        for _ in range(5):
            tile = int(rng.choice(playable)) if rng.random() < 0.8 else K.EMPTY
            cell = int(rng.integers(0, K.N_CELLS))
            after = city.copy()
            after[cell] = tile
            expected = income(after, tables) - income(city, tables)
            assert income_delta(tile, cell, city, tables.tiles, tables.effects, ctx) == expected


def plain_disaster_cost(city, tables, disaster):
    """The rule, square by square: Flood 1 coin per Residential, Commercial, Industrial or
    Public tile; Fire 1 per such tile outside the 3x3 square of every Fire-protecting tile;
    Crime Spree 2 per Residential, Commercial or Industrial tile outside every police one."""
    tiles = tables.tiles
    charged = K.T_BUILDING if disaster != K.DIS_CRIME else E.CRIME_TYPES
    protection = {K.DIS_FIRE: K.PROT_FIRE, K.DIS_CRIME: K.PROT_POLICE}.get(disaster, 0)
    guards = [
        c
        for c in range(K.N_CELLS)
        if city[c] != K.EMPTY and tiles[city[c], K.C_PROTECTS] & protection
    ]
    cost = 0
    for cell in range(K.N_CELLS):
        if city[cell] == K.EMPTY or not tiles[city[cell], K.C_TYPES] & charged:
            continue
        covered = any(abs(cell // 5 - g // 5) <= 1 and abs(cell % 5 - g % 5) <= 1 for g in guards)
        if not covered:
            cost += 2 if disaster == K.DIS_CRIME else 1
    return cost


def test_context_exposure_is_what_the_disasters_to_come_would_cost(tables):
    """A context's disaster exposure (read from its masks and covers) is the coins the
    disasters still to come would cost the city now, counted square by square."""
    rng = np.random.default_rng(4)
    rules = make_rules()
    gstate = np.zeros(E.N_GSTATE, dtype=np.int64)
    gstate[E.GS_GEN] = 1
    ctx = np.empty(N_CTX, dtype=np.int64)
    decks = (tables.tiles[:, K.C_DECK] >= K.DECK_GEN1) & (tables.tiles[:, K.C_DECK] <= K.DECK_GEN3)
    kinds = set(tables.tiles[decks & (tables.tiles[:, K.C_REPLACES] < 0), K.C_DISASTER]) - {
        K.DIS_NONE
    }
    assert kinds, "the default catalogue deals disasters"
    costs = []
    for trial in range(60):
        city = np.full(K.N_CELLS, K.EMPTY, dtype=np.int16)
        city[K.CENTER_CELL] = tables.board_center[trial % len(tables.board_center)]
        grow_city(tables, city, int(rng.integers(0, 19)), rng)
        build_context(city, 0, gstate, tables.tiles, tables.effects, tables.goods_tier, rules, ctx)
        expected = sum(plain_disaster_cost(city, tables, kind) for kind in kinds)
        assert ctx[CX_EXPOSURE] == expected
        costs.append(expected)
    assert max(costs) > min(costs)


def grown_positions(tables, rng, n_positions):
    """4-player positions with grown cities, a random cornerstone hand and money."""
    playable = np.flatnonzero(
        (tables.tiles[:, K.C_DECK] >= K.DECK_GEN1)
        & (tables.tiles[:, K.C_DECK] <= K.DECK_GEN3)
        & (tables.tiles[:, K.C_DISASTER] == K.DIS_NONE)
    )
    cornerstones = np.flatnonzero(tables.tiles[:, K.C_DECK] == K.DECK_CORNERSTONE)
    for _ in range(n_positions):
        turn = int(rng.integers(0, E.N_TURNS))
        pos = empty_position(tables, 4, turn=turn, money=int(rng.integers(0, 16)))
        for seat in range(4):
            grow_city(tables, pos.cells[seat], int(rng.integers(0, 16)), rng)
        pos.give_cornerstones(
            0, [tables.tile_names[t] for t in rng.choice(cornerstones, 2, replace=False)]
        )
        yield pos, int(rng.choice(playable))


def test_greedy_values_equal_scoring_the_city_after_the_move(tables):
    """Greedy's value is the city's score as if the game ended now after the move (money VP
    scaled by money_weight): its incremental form equals a full ``score_city`` of the city
    after each listed action, and after selling."""
    from strategies.neom import basic

    params = parse_strategy("greedy:money_weight=0.5").params
    rules = make_rules()
    score = np.empty(K.N_SCORE, dtype=np.int32)
    values = np.empty(E.MAX_OPTIONS, dtype=np.float64)
    memo = np.zeros(memo_size(len(tables.tiles)), dtype=np.int64)
    args = (tables.tiles, tables.effects, tables.goods_tier, rules)
    checked = 0
    summary = np.empty(E.N_SUMMARY, dtype=np.int64)
    for i, (pos, selected) in enumerate(grown_positions(tables, np.random.default_rng(12), 30)):
        options, n = pos.action_options(0, selected)
        city = pos.cells[0].copy()
        money = int(pos.pstate[0, E.PS_MONEY])
        # The game's summary of the city, copied into greedy's context; or a stale one, which
        # greedy summarizes again: both give the same values.
        if i % 2:
            E.summarize_city(city, tables.tiles, summary)
        else:
            E.mark_stale(summary)
        basic.greedy_values(
            params, E.D_ACTION, options, n, 0, pos.gstate, pos.pstate, pos.goods_of, city,
            summary, tables.tiles, tables.req, tables.effects, tables.goods_tier, rules, values,
            memo,
        )  # fmt: skip
        for k in range(n):
            after = city.copy()
            coins = -int(options[k, E.OPT_COST])
            if options[k, E.OPT_KIND] != E.A_SELL:
                tile = int(options[k, E.OPT_TILE])
                after[options[k, E.OPT_CELL]] = tile
                coins += int(tables.tiles[tile, K.C_COINS_ON_PLACE])
            assert values[k] == basic.city_value(after, money + coins, params, *args, score)
            checked += 1
    assert checked > 100


@njit
def select_values_of_game(params, n_options, seat, game, city, ctx, values, memo):
    """``select_values`` (which reads the game through its view) for a ``Game`` held here."""
    select_values(params, n_options, seat, view(game), city, ctx, values, memo)


def test_a_memo_serves_only_the_state_it_was_written_for(tables):
    """A seat's memo (``memo_holds``): the action reuses what the selection computed for the
    same city, and so does a later turn with other money while the city stays the same; any
    other city (or, for the archetypes, generation or disasters past) starts afresh. So the
    values of greedy and of every archetype never depend on what the memo held before: an
    action valued with a memo carried over from earlier decisions equals one valued afresh."""
    from strategies.neom import basic
    from strategies.neom.evaluate import (
        ANY_STATE,
        MEMO_TRIED,
        evaluated_context,
        memo_context,
        memo_holds,
    )

    rules = make_rules()
    n_tiles = len(tables.tiles)
    tried = slice(MEMO_TRIED, MEMO_TRIED + n_tiles)
    fresh_values = np.empty(E.MAX_OPTIONS, dtype=np.float64)
    values = np.empty(E.MAX_OPTIONS, dtype=np.float64)
    scratch = np.empty(E.MAX_OPTIONS, dtype=np.float64)
    no_memo = np.empty(0, dtype=np.int64)
    ctx = np.empty(N_CTX, dtype=np.int64)
    args = (tables.tiles, tables.effects, tables.goods_tier, rules)

    def select_then_act(spec, pos, selected, memo):
        """Value the selection, then the action with ``memo`` into ``values`` and afresh
        into ``fresh_values``; returns the number of action options."""
        hand, n_hand = pos.select_options(0)
        options, n = pos.action_options(0, selected)
        city = pos.cells[0].copy()
        summary = np.empty(E.N_SUMMARY, dtype=np.int64)  # the game's summary of the city
        E.summarize_city(city, tables.tiles, summary)
        if spec.id == basic.GREEDY_ID:
            state = (0, pos.gstate, pos.pstate, pos.goods_of, city, summary, tables.tiles,
                     tables.req)  # fmt: skip
            for decision, opts, count, out, m in (
                (E.D_SELECT, hand, n_hand, scratch, memo),
                (E.D_ACTION, options, n, values, memo),
                (E.D_ACTION, options, n, fresh_values, np.zeros_like(memo)),
            ):
                basic.greedy_values(spec.params, decision, opts, count, *state, *args[1:], out, m)
            return n
        money = int(pos.pstate[0, E.PS_MONEY] + pos.pstate[0, E.PS_PENDING])
        evaluated_context(memo, spec.params, city, summary, money, pos.gstate, *args)
        kept = memo_context(memo)
        select_values_of_game(spec.params, n_hand, 0, pos.game(hand), city, kept, scratch, memo)
        action_values(spec.params, options, n, city, *args, kept, values, memo)
        build_context(city, money, pos.gstate, *args[:3], rules, ctx)
        action_values(spec.params, options, n, city, *args, ctx, fresh_values, no_memo)
        return n

    reused = 0
    for name in ("greedy",) + ARCHETYPES:
        spec = parse_strategy(name)
        memo = np.zeros(memo_size(n_tiles), dtype=np.int64)
        for pos, selected in grown_positions(tables, np.random.default_rng(14), 12):
            city = pos.cells[0].copy()
            if name == "greedy":
                key = (ANY_STATE, ANY_STATE)
            else:
                key = (pos.gstate[E.GS_GEN], pos.gstate[E.GS_DISASTERS])
            n = select_then_act(spec, pos, selected, memo)
            assert values[:n].tolist() == fresh_values[:n].tolist()
            stored = memo[tried].copy()
            if not stored.any():
                continue  # nothing but selling to value
            reused += 1
            # A later turn, the same city, other money: the memo is kept and still exact.
            pos.pstate[0, E.PS_MONEY] += 5
            pos.gstate[E.GS_TURN] = min(pos.gstate[E.GS_TURN] + 1, E.N_TURNS - 1)
            n = select_then_act(spec, pos, selected, memo)
            assert values[:n].tolist() == fresh_values[:n].tolist()
            assert memo_holds(memo, spec.id, spec.params, city, *key, n_tiles)
            assert (memo[tried] & stored).tolist() == stored.tolist()  # the same city: kept
            other = city.copy()
            other[np.flatnonzero(other == K.EMPTY)[0]] = selected
            assert not memo_holds(memo, spec.id, spec.params, other, *key, n_tiles)
            assert not memo[tried].any()  # another city: forgotten
    assert reused > 20


def action_positions(tables, seed: int):
    """Seat 0's action options on ``grown_positions`` with its context built: (options, n,
    city, the evaluation's table arguments)."""
    rules = make_rules()
    ctx = np.empty(N_CTX, dtype=np.int64)
    for pos, selected in grown_positions(tables, np.random.default_rng(seed), 20):
        options, n = pos.action_options(0, selected)
        city = pos.cells[0].copy()
        money = int(pos.pstate[0, E.PS_MONEY])
        args = (tables.tiles, tables.effects, tables.goods_tier, rules, ctx)
        build_context(city, money, pos.gstate, tables.tiles, *args[1:3], rules, ctx)
        yield options, n, city, args


def test_action_values_share_terms_without_changing_a_value(tables):
    """The requirement options of one square share their move terms: every option's value
    is bit-identical to valuing it alone (``action_value``)."""
    from strategies.neom.evaluate import action_value, action_values

    values = np.empty(E.MAX_OPTIONS, dtype=np.float64)
    shared = 0
    for name in ARCHETYPES:
        params = parse_strategy(name).params
        for options, n, city, args in action_positions(tables, 13):
            action_values(params, options, n, city, *args, values, np.empty(0, np.int64))
            for k in range(n):
                assert values[k] == action_value(params, options, k, city, *args)
                same_square = (
                    options[k, E.OPT_TILE : E.OPT_CELL + 1]
                    == options[k - 1, E.OPT_TILE : E.OPT_CELL + 1]
                )
                if k and same_square.all():
                    shared += 1
    assert shared > 0


def test_build_and_place_add_exactly_their_value_to_their_actions(tables):
    """``build`` raises every cornerstone action by its value, ``place`` every placement of
    the selected tile, and neither touches a sale (issue 38); at 0 each option's value is
    bit-identical to the archetype's without them."""
    plain = np.empty(E.MAX_OPTIONS, dtype=np.float64)
    shifted = np.empty(E.MAX_OPTIONS, dtype=np.float64)
    kinds_seen = set()
    for name in ARCHETYPES:
        params = parse_strategy(name).params
        zeros = parse_strategy(f"{name}:build=0,place=0").params
        with_both = parse_strategy(f"{name}:build=2.5,place=0.75").params
        assert (zeros == params).all()
        for options, n, city, args in action_positions(tables, 38):
            action_values(params, options, n, city, *args, plain, np.empty(0, np.int64))
            action_values(with_both, options, n, city, *args, shifted, np.empty(0, np.int64))
            for k in range(n):
                kind = int(options[k, E.OPT_KIND])
                kinds_seen.add(kind)
                added = {E.A_CORNERSTONE: 2.5, E.A_PLACE: 0.75, E.A_SELL: 0.0}[kind]
                assert shifted[k] == pytest.approx(plain[k] + added, abs=1e-9)
    assert kinds_seen == {E.A_CORNERSTONE, E.A_PLACE, E.A_SELL}


@pytest.mark.parametrize("name", ("greedy", *ARCHETYPES))
def test_residential_tile_goes_where_no_polluting_tile_is_near(tables, name):
    """Rules 001 "Pollution": a Residential tile loses 2 VP per orthogonally and 1 VP per
    diagonally adjacent Polluting tile. With a Cement Plant east of the center, the Villas
    (roads on all sides) can go north, south, west or east of it: only the west square is
    free of pollution, and every strategy takes it."""
    pos = empty_position(tables, 2, turn=3, money=10, boards=[5, 0])  # Stone board, NESW
    pos.place(0, "Cement Plant", 13)
    options, n = pos.action_options(0, tables.tile_index("Villas"))
    placements = {int(options[k, E.OPT_CELL]) for k in range(n) if options[k, E.OPT_KIND] == 0}
    assert {7, 11, 14, 17} <= placements
    for seed in range(5):
        k = pos.decide(name, E.D_ACTION, options, n, seed=seed)
        assert options[k, E.OPT_KIND] == E.A_PLACE and options[k, E.OPT_CELL] == 11


@pytest.mark.parametrize("name", ("greedy", *ARCHETYPES))
def test_selects_the_tile_that_grows_the_neighborhood(tables, name):
    """Rules 001 "Neighborhoods": road-linked Residential tiles form a Neighborhood worth a
    triangular number of VP. With two Row Houses linked through the center, a third
    Residential tile is worth far more than a Pawn Shop paying 1 coin of income."""
    pos = empty_position(tables, 2, turn=2, money=6, boards=[2, 0])  # Wood board, NESW
    pos.place(0, "Row Houses", 11)
    pos.place(0, "Row Houses", 13)
    pos.give(0, ["Pawn Shop", "Duplexes"])
    options, n = pos.select_options(0)
    for seed in range(5):
        k = pos.decide(name, E.D_SELECT, options, n, seed=seed)
        assert tables.tile_names[options[k, E.OPT_TILE]] == "Duplexes"


def test_merchant_prefers_income_and_builder_the_vp_now(tables):
    """Early in the game a Shopping Mall (4 coins of income at each of the three incomes,
    4 coins to build) against an Elementary School (3 VP, 2 coins): the merchant takes the
    income, the builder the VP."""
    pos = empty_position(tables, 2, turn=1, money=8, boards=[2, 0])
    pos.place(0, "Row Houses", 11)
    pos.place(0, "Row Houses", 13)
    pos.give(0, ["Shopping Mall", "Elementary School"])
    options, n = pos.select_options(0)
    names = {
        who: tables.tile_names[options[pos.decide(who, E.D_SELECT, options, n), E.OPT_TILE]]
        for who in ("merchant", "builder")
    }
    assert names == {"merchant": "Shopping Mall", "builder": "Elementary School"}


@pytest.mark.parametrize("name", ARCHETYPES)
def test_disaster_is_selected_when_it_hurts_the_opponent_most(tables, name):
    """Rules 001 "Resolving a Disaster": selecting the Disaster spares you and costs every
    other player money or tiles, and you take no action. Against a broke opponent with a
    city full of buildings the Fire is taken; against an opponent it cannot hurt (no
    building to pay for) the Pawn Shop is taken instead."""
    pos, options, n = disaster_position(tables)
    assert tables.tile_names[options[pos.decide(name, E.D_SELECT, options, n), 1]] == "Fire"
    for cell in VICTIM_CELLS:
        pos.cells[1, cell] = K.EMPTY
    assert tables.tile_names[options[pos.decide(name, E.D_SELECT, options, n), 1]] == "Pawn Shop"


@pytest.mark.parametrize("name", ARCHETYPES)
def test_disaster_sacrifice_takes_the_cheapest_tile(tables, name):
    """Rules 001: instead of paying, a player may sacrifice tiles. The Flood takes one
    building: a Pawn Shop goes before a Neighborhood's Residential tile."""
    pos = empty_position(tables, 2, turn=4, money=0, boards=[2, 0])
    pos.place(0, "Row Houses", 11)
    pos.place(0, "Row Houses", 13)
    pos.place(0, "Pawn Shop", 14)
    options = np.zeros((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
    n = E.sacrifice_options(pos.cells[0], tables.tiles, K.DIS_FLOOD, 0, options)
    k = pos.decide(name, E.D_SACRIFICE, options, n)
    assert options[k, E.OPT_CELL] == 14


def test_choose_evaluated_is_deterministic_for_a_stream(tables):
    pos = empty_position(tables, 3, turn=5, money=9)
    rng = np.random.default_rng(2)
    for s in range(3):
        grow_city(tables, pos.cells[s], 6, rng)
    pos.give(0, ["Apartments", "Food Court", "Hotel", "Fire"])
    options, n = pos.select_options(0)
    spec = parse_strategy("denier")
    picks = set()
    for _ in range(3):
        state = np.array([3, 4], dtype=np.uint64)
        game = pos.game(options)
        fresh_memo = np.zeros(memo_size(len(tables.tiles)), dtype=np.int64)  # nothing kept
        picks.add(choose_evaluated(spec.params, state, E.D_SELECT, n, 0, game, fresh_memo))
    assert len(picks) == 1


def twin_cornerstones(tables):
    """A copy of the catalogue where the Lighthouse (an edge bonus, the outer ring: RULES.md
    G5) prints no VP and City Hall becomes its twin without the bonus (same columns and
    requirement options, no effect): the bonus is the only difference. (tables, lighthouse, twin)"""
    lighthouse = tables.tile_index("Lighthouse")
    twin = tables.tile_index("City Hall")
    tiles = tables.tiles.copy()
    req = tables.req.copy()
    effects = tables.effects.copy()
    tiles[lighthouse, K.C_VP] = 0
    tiles[twin] = tiles[lighthouse]
    req[twin] = req[lighthouse]
    effects[twin] = K.EF_NONE
    return replace(tables, tiles=tiles, req=req, effects=effects), lighthouse, twin


@njit
def draft_values_of_game(params, n_options, game, memo, values):
    """Seat 0's ``evaluated_values`` of a draft for a ``Game`` held here."""
    evaluated_values(params, E.D_DRAFT, n_options, 0, view(game), memo, values)


@pytest.mark.parametrize("name", ("builder", "merchant", "denier:foresight=2"))
def test_the_draft_sees_a_placement_bonus_the_empty_city_cannot_hold(tables, name):
    """Issue 38: a cornerstone whose only value is its edge bonus (3 VP) is drafted over an
    otherwise equal one without it, by exactly ``vp`` x 3 more, though the draft's city holds
    only the City Center, whose neighbours are not on the edge."""
    twins, lighthouse, twin = twin_cornerstones(tables)
    pos = empty_position(twins, 4, turn=-1, money=5)
    options = np.zeros((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
    options[0, E.OPT_TILE] = twin
    options[1, E.OPT_TILE], options[1, E.OPT_SLOT] = lighthouse, 1
    spec = parse_strategy(name)
    values = np.zeros(2)
    memo = np.zeros(memo_size(len(twins.tiles)), dtype=np.int64)
    draft_values_of_game(spec.params, 2, pos.game(options), memo, values)
    assert values[1] - values[0] == pytest.approx(3 * spec.params[W_VP], abs=1e-9)
    for seed in range(5):
        assert pos.decide(name, E.D_DRAFT, options, 2, seed=seed) == 1


def out_of_reach(tables, name, city):
    ctx = np.zeros(N_CTX, dtype=np.int64)
    gstate = np.zeros(E.N_GSTATE, dtype=np.int64)
    build_context(city, 5, gstate, tables.tiles, tables.effects, tables.goods_tier, make_rules(),
                  ctx)  # fmt: skip
    before = city.copy()
    vp = placement_vp_out_of_reach(tables.tile_index(name), city, tables.tiles, tables.effects,
                                   ctx)  # fmt: skip
    assert (city == before).all()
    return vp


def test_placement_vp_out_of_reach_is_the_bonus_the_reachable_squares_miss(tables):
    """The draft's city (the City Center alone): the Lighthouse's and the Wind Park's edge
    bonus (3 VP) and the Hydroelectric Dam's "alone in a corner" (10 VP) lie out of reach; a
    tile without a placement bonus has none. Once a tile south of the center makes an
    edge square reachable, ``best_placement`` sees the bonus and nothing is added twice."""
    city = empty_position(tables, 1).cells[0].copy()
    assert out_of_reach(tables, "Lighthouse", city) == 3
    assert out_of_reach(tables, "Wind Park", city) == 3
    assert out_of_reach(tables, "Hydroelectric Dam", city) == 10
    assert out_of_reach(tables, "City Hall", city) == 0
    city[17] = tables.tile_index("Villas")  # south of the center; square 22 is on the edge
    assert E.placement_mask(city, tables.tiles, tables.tile_index("Wind Park"),
                            summary_of(city, tables)) >> 22 & 1  # fmt: skip
    assert out_of_reach(tables, "Wind Park", city) == 0


def summary_of(city, tables):
    summary = np.zeros(E.N_SUMMARY, dtype=np.int64)
    E.summarize_city(city, tables.tiles, summary)
    return summary


def kept_draft_values(tables, name, kept, offered):
    """Seat 0's draft values of the cornerstones ``offered`` (names) holding ``kept``, and the
    index it picks on 5 streams (a set of picks)."""
    pos = empty_position(tables, 4, turn=-1, money=5)
    pos.give_cornerstones(0, kept)
    values, options = seat0_draft_values(tables, pos, name, offered)
    picks = {pos.decide(name, E.D_DRAFT, options, len(offered), seed=s) for s in range(5)}
    return values, picks


def seat0_draft_values(tables, pos, name, offered):
    """Seat 0's draft values in ``pos`` of the cornerstones ``offered`` (names), and the options
    offered; the draft leaves the game's cells and goods as they were."""
    options = np.zeros((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
    for k, offer in enumerate(offered):
        options[k, E.OPT_TILE], options[k, E.OPT_SLOT] = tables.tile_index(offer), k
    values = np.zeros(len(offered))
    memo = np.zeros(memo_size(len(tables.tiles)), dtype=np.int64)
    game = pos.game(options)
    before = (game.cells.copy(), game.goods_of.copy())
    draft_values_of_game(parse_strategy(name).params, len(offered), game, memo, values)
    assert (game.cells == before[0]).all() and (game.goods_of == before[1]).all()
    return values, options


@pytest.mark.parametrize("base", ("builder", "merchant", "denier:foresight=2"))
def test_synergy_values_a_cornerstone_by_the_ones_the_seat_kept(concrete_tables, base):
    """Issue 38: the draft's ``synergy`` prices what a cornerstone is worth beside the seat's
    kept ones, read with the engine's rules. Planted cases, each `vp` x the known VP:
    - a kept Resource Agency (2 VP per raw good, 1 VP per Resource tile) makes the Energy
      Cooperative (a Resource tile making Oil and Natural Gas) worth 2 x 2 + 1 = 5 VP more, less
      2 per good the seat's own City Center already makes (board 0's);
    - two kept Public cornerstones make City Hall (1 VP per other Public tile) worth 2 VP more,
      and the Community Center (1 VP per adjacent Public or Residential tile) too;
    and the pick changes: without the term seat 0 keeps the Lighthouse over the Energy
    Cooperative (and over City Hall), with it the other way round. Nothing kept: no change."""
    tables = concrete_tables
    on = f"{base},synergy=1" if ":" in base else f"{base}:synergy=1"
    vp = parse_strategy(on).params[W_VP]
    board_goods = int(tables.tiles[tables.board_center[0], K.C_PRODUCES])
    coop = tables.tile_index("Energy Cooperative")
    new_raw = bin(int(tables.tiles[coop, K.C_PRODUCES]) & ~board_goods).count("1")
    offered = ["Lighthouse", "Energy Cooperative"]
    off, off_picks = kept_draft_values(tables, base, ["Resource Agency"], offered)
    with_, on_picks = kept_draft_values(tables, on, ["Resource Agency"], offered)
    assert with_[0] == pytest.approx(off[0], abs=1e-9)
    assert with_[1] - off[1] == pytest.approx(vp * (2 * new_raw + 1), abs=1e-9)
    assert off_picks == {0} and on_picks == {1}

    publics = ["Medical Campus", "Solar Tower"]
    offered = ["Lighthouse", "City Hall", "Community Center"]
    off, _ = kept_draft_values(tables, base, publics, offered)
    with_, _ = kept_draft_values(tables, on, publics, offered)
    assert list(with_ - off) == pytest.approx([0.0, 2 * vp, 2 * vp], abs=1e-9)

    alone, _ = kept_draft_values(tables, base, [], offered)
    alone_on, _ = kept_draft_values(tables, on, [], offered)
    assert list(alone_on) == pytest.approx(list(alone), abs=1e-12)


def test_synergy_counts_the_coins_a_kept_producer_saves(concrete_tables):
    """Modular Factory's Concrete meets the Arcology's requirement (else 8 coins): with a kept
    Arcology the Factory is worth the value of 8 coins more, and the other way round."""
    tables = concrete_tables
    from strategies.neom.evaluate import money_value

    name = "builder:synergy=1"
    spec = parse_strategy(name)
    off, _ = kept_draft_values(tables, "builder", ["Arcology"], ["Modular Factory"])
    on, _ = kept_draft_values(tables, name, ["Arcology"], ["Modular Factory"])
    ctx = np.zeros(N_CTX, dtype=np.int64)
    pos = empty_position(tables, 4, turn=-1, money=5)
    gstate = pos.game().gstate
    build_context(pos.cells[0].copy(), 5, gstate, tables.tiles, tables.effects,
                  tables.goods_tier, make_rules(), ctx)  # fmt: skip
    eight = money_value(spec.params, 8, ctx)
    assert eight > 0
    assert on[0] - off[0] == pytest.approx(eight, abs=1e-9)
    off, _ = kept_draft_values(tables, "builder", ["Modular Factory"], ["Arcology"])
    on, _ = kept_draft_values(tables, name, ["Modular Factory"], ["Arcology"])
    assert on[0] - off[0] == pytest.approx(eight, abs=1e-9)


@njit
def action_values_of_game(params, n_options, game, memo, values):
    """Seat 0's ``evaluated_values`` of an action for a ``Game`` held here."""
    evaluated_values(params, E.D_ACTION, n_options, 0, view(game), memo, values)


def demand_shift(tables, base, pos, selected):
    """Seat 0's action options and what ``demand=1`` adds to each of their values."""
    options, n = pos.action_options(0, selected)
    memo_len = memo_size(len(tables.tiles))
    values = {}
    for name in (base, with_demand(base)):
        values[name] = np.zeros(n)
        memo = np.zeros(memo_len, dtype=np.int64)
        action_values_of_game(parse_strategy(name).params, n, pos.game(options), memo, values[name])
    return options, n, values[with_demand(base)] - values[base]


def with_demand(base):
    return f"{base}{',' if ':' in base else ':'}demand=1"


@pytest.mark.parametrize("base", ("builder", "merchant", "denier:foresight=2"))
def test_demand_values_new_goods_by_the_tiles_still_to_come(concrete_tables, base):
    """Issue 38 (the Modular Factory, built by 9.5% of its drafters): ``demand`` adds to a
    placement the coins its new goods save the tiles still to come, by the engine's
    ``plan_cost``. Planted: generation 1 of a 4-player game, nobody makes Concrete, seat 0 (on the
    Stone board) holds the Modular Factory (Stone -> Concrete) and the Arcology (Concrete, else
    8 coins). The later
    decks hold four tiles that need Concrete (Condominiums cost 0, Mid-rise Flats and High-rise
    Tower cost 1, Apartments & Retail else 4 coins), each saved Concrete's base price, 4 coins
    (unbuyable, it is counted at that price; Apartments & Retail's alternative costs 4 too), at a
    quarter each (the seat's share of a deck); the kept Arcology is saved its 8 coins. So
    building the Factory gains exactly money_value(8) + money_value(16) / 4; the Arcology, the
    selected Row Houses and the sale make nothing and gain nothing. A city that already makes
    Concrete gains nothing from the Factory."""
    tables = concrete_tables
    from strategies.neom.evaluate import money_value

    concrete = tables.good_names.index("Concrete")
    factory = tables.tile_index("Modular Factory")
    assert K.TIER_PRICE[tables.goods_tier[concrete]] == 4
    rules = make_rules()
    deck = np.empty(len(tables.tiles), dtype=np.int64)
    later = set()
    for gen in (2, 3):
        for t in deck[: E.build_deck(gen, 4, tables.tiles, rules, deck)]:
            wanted = 0
            for o in range(tables.tiles[t, K.C_N_REQ_OPTIONS]):
                wanted |= tables.req[t, o, K.R_GOODS]
            if (wanted >> concrete) & 1:
                later.add(tables.tile_names[t])
    assert later == {"Condominiums", "Mid-rise Flats", "High-rise Tower", "Apartments & Retail"}

    stone_board = tables.board_names.index("Stone board")
    pos = empty_position(tables, 4, turn=0, money=20, boards=[stone_board, 0, 1, 2])
    pos.give_cornerstones(0, ["Modular Factory", "Arcology"])
    options, n, shift = demand_shift(tables, base, pos, tables.tile_index("Row Houses"))
    ctx = np.zeros(N_CTX, dtype=np.int64)
    build_context(pos.cells[0].copy(), 20, pos.gstate, tables.tiles, tables.effects,
                  tables.goods_tier, rules, ctx)  # fmt: skip
    params = parse_strategy(with_demand(base)).params
    expected = money_value(params, 8, ctx) + money_value(params, 16, ctx) / 4
    assert expected > 0
    kinds = set()
    for k in range(n):
        kind, tile = int(options[k, E.OPT_KIND]), int(options[k, E.OPT_TILE])
        kinds.add((kind, tile == factory))
        if kind == E.A_CORNERSTONE and tile == factory:
            assert shift[k] == pytest.approx(expected, abs=1e-9)
        else:
            assert shift[k] == 0.0
    assert kinds == {(E.A_CORNERSTONE, True), (E.A_CORNERSTONE, False), (E.A_PLACE, False),
                     (E.A_SELL, False)}  # fmt: skip

    pos.place(0, "Cement Plant", 0)  # the seat makes Concrete already
    options, n, shift = demand_shift(tables, base, pos, tables.tile_index("Row Houses"))
    assert any(options[k, E.OPT_TILE] == factory for k in range(n))
    assert (shift == 0.0).all()


def board_draft_values(tables, name, board, offered):
    """Seat 0's draft values of the cornerstones ``offered`` (names) on ``board``, the other
    seats on boards 0, 1, 2 (Ore, Natural Gas, Wood: nobody else makes Stone), nothing kept."""
    pos = empty_position(tables, 4, turn=-1, money=5, boards=[board, 0, 1, 2])
    return seat0_draft_values(tables, pos, name, offered)[0]


@pytest.mark.parametrize("base", ("builder", "merchant", "denier:foresight=2"))
def test_requirements_price_a_cornerstone_by_the_goods_the_seat_can_get(concrete_tables, base):
    """Issue 38 (the Modular Factory, drafted alike on every board): ``requirements`` takes from
    a cornerstone's draft value the coins meeting its requirements costs the seat beyond the
    cheapest printed cost, by the engine's ``plan_cost``. Planted: a 4-player draft, nothing
    kept, nobody but (perhaps) seat 0 on the Stone board. The Modular Factory (Stone and 5
    coins, else 6 coins): on the Stone board it costs 5, the printed cost, so nothing changes;
    on the Ore board Stone has no seller, so the 6-coin alternative is the cheapest and the
    Factory loses exactly money_value(-1). The Arcology (Concrete and 0 coins, else 8), Concrete
    made by nobody: counted at Concrete's base price, 4 coins, so it loses money_value(-4) on
    both boards. The Lighthouse (1 coin, no goods) never changes."""
    tables = concrete_tables
    from strategies.neom.evaluate import money_value

    on = f"{base},requirements=1" if ":" in base else f"{base}:requirements=1"
    params = parse_strategy(on).params
    concrete = tables.good_names.index("Concrete")
    assert K.TIER_PRICE[tables.goods_tier[concrete]] == 4
    stone_board = tables.board_names.index("Stone board")
    ore_board = tables.board_names.index("Ore board")
    offered = ["Modular Factory", "Arcology", "Lighthouse"]
    ctx = np.zeros(N_CTX, dtype=np.int64)
    pos = empty_position(tables, 4, turn=-1, money=5)
    build_context(pos.cells[0].copy(), 5, pos.game().gstate, tables.tiles, tables.effects,
                  tables.goods_tier, make_rules(), ctx)  # fmt: skip
    one, four = money_value(params, -1, ctx), money_value(params, -4, ctx)
    assert one < 0 and four < one
    shifts = {}
    for board in (stone_board, ore_board):
        off = board_draft_values(tables, base, board, offered)
        with_ = board_draft_values(tables, on, board, offered)
        shifts[board] = list(with_ - off)
    assert shifts[stone_board] == pytest.approx([0.0, four, 0.0], abs=1e-9)
    assert shifts[ore_board] == pytest.approx([one, four, 0.0], abs=1e-9)
