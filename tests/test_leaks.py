"""No NEOM strategy reads what its seat cannot know (issue 30; the test Tangram has for its
view, tests/test_tangram_strategies.py::test_the_view_hides_the_order_of_unseen_cards).

States come from real games, stopped before each selection and action of seat 0 (a search
seat makes the loop stop there: strategies.neom.play.advance). At each stop, what the seat
cannot know is scrambled in a copy of the state, by the rules (RULES.md P1-P3, P12) and
independently of the search's own redrawing: the hands that never passed through the seat
(at turn t of a generation, all but those of seats seat + 1 .. seat + t) together with the
generation's undealt tiles, the secret selections made before the seat's this turn (3-5
players), the later generations' decks, solo the packs to come, every other seat's first
draft pick (the seat never sees the hand it was picked from whole) with the undrawn
cornerstones, and with 3-5 players the two tiles of the seat's first draft hand that the
next two seats picked (it knows the pair, not who has which). Every strategy then decides on
the state and on its scrambled copy, from the same stream: the decisions must be identical.
"""

import numpy as np
import pytest

from sim.core import rng
from sim.core.batch import STRATEGY_ID_DTYPE
from sim.core.strategies import shipped_sets
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom import records as R
from sim.neom.state import FIELDS, Game
from sim.neom.tables import make_rules
from strategies.neom import play as G
from strategies.neom import search as S
from strategies.neom.dispatch import choose_in
from strategies.neom.evaluate import memo_size
from strategies.neom.pieces import addresses, new_memos
from strategies.neom.registry import (
    REGISTRY,
    SEARCH_IDS,
    list_strategies,
    parse_strategy,
    resolve_strategy,
)
from strategies.neom.steps import addresses as step_addresses

# Every strategy and every shipped tuned set; the searches with small budgets.
SEARCHES = {"rollout": "rollout:playouts=2,candidates=3", "expert": "expert:playouts=6"}
EVERY_STRATEGY = [SEARCHES.get(info.name, info.name) for info in list_strategies()] + sorted(
    shipped_sets(REGISTRY)
)
SHARED = ("tiles", "req", "effects", "goods_tier", "board_center", "rules")


def fields_of(game) -> dict:
    """A game's fields by name: arrays sharing its memory. Read once per state by the checks
    below, which copy each state many times (each read from Python is a compiled call)."""
    return {f: getattr(game, f) for f in FIELDS}


def copied_fields(fields: dict) -> dict:
    """Copies of ``fields`` (the catalogue and rules shared)."""
    return {f: a if f in SHARED else a.copy() for f, a in fields.items()}


def copy_game(game):
    """A deep copy of a game bundle (the catalogue and rules shared)."""
    return Game(*copied_fields(fields_of(game)).values())


def stops(tables, n_players, seed, variant=K.V_STANDARD):
    """The states of a game stopped before each selection and action of seat 0 (played by the
    expert, whose decisions the builder takes here to go fast; the others tuned sets), as
    (game, acting) pairs, copies."""
    lineup = ["expert", "tuned_builder_2p", "tuned_builder_4p", "denier", "merchant"]
    specs = [resolve_strategy(name) for name in lineup[:n_players]]
    ids = np.array([spec.id for spec in specs], dtype=STRATEGY_ID_DTYPE)
    params = np.stack([spec.params for spec in specs])
    batch = G.batch_scratch(
        ids, params, addresses(ids), step_addresses(), new_memos(tables.n_tiles)
    )
    players = np.zeros((1, R.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int64)
    row = np.zeros(R.N_GAME_COLS, dtype=np.int64)
    seats = np.arange(n_players, dtype=np.int32)
    key = rng.master_key(seed)
    no_events = np.zeros((0, R.N_EVENT_COLS), dtype=np.int64)
    game, _ = G.new_game(
        0, key, 0, 0, seats, batch, tables.arrays, make_rules(variant), players, no_events
    )
    builder = parse_strategy("builder")
    states = []
    while G.advance(game, row) == G.PAUSED:
        seat, acting = G.step_seat(
            game.gstate[E.GS_STEP], game.gstate[E.GS_TURN], game.gstate[E.GS_N_PLAYERS]
        )
        assert seat == 0
        states.append((copy_game(game), acting))
        n = G.list_actions(0, game) if acting else G.list_selections(0, game)
        memo = np.zeros(memo_size(tables.n_tiles), dtype=np.int64)
        state = np.array([seed, 1], dtype=np.uint64)
        decision = E.D_ACTION if acting else E.D_SELECT
        G.force(game, choose_in(builder.id, builder.params, state, decision, n, 0, game, memo))
    return states


def scramble(game, acting, seat, generator):
    """What ``seat`` cannot know in ``game`` (at its selection or action), redrawn in place
    (see the module docstring)."""
    gstate, pstate, hands = game.gstate, game.pstate, game.hands
    n_players = int(gstate[E.GS_N_PLAYERS])
    gen = int(gstate[E.GS_GEN])
    t = int(gstate[E.GS_TURN]) % E.TURNS_PER_GENERATION
    if n_players >= 3 and not acting:
        for j in range(n_players):
            size = int(pstate[j, E.PS_HAND_SIZE])
            if j != seat and pstate[j, E.PS_SELECTED] >= 0 and size > 0:
                k = generator.integers(size)
                hands[j, k], pstate[j, E.PS_SELECTED] = pstate[j, E.PS_SELECTED], hands[j, k]
    if n_players == 1:
        slots = [(p, k) for p in range(t + 1, E.SOLO_PACKS) for k in range(game.pack_sizes[p])]
        tiles = generator.permutation([game.packs[p, k] for p, k in slots])
        for (p, k), tile in zip(slots, tiles, strict=True):
            game.packs[p, k] = tile
    else:
        unseen = [(seat + k) % n_players for k in range(min(t, n_players - 1) + 1, n_players)]
        slots = [(hands, o, h) for o in unseen for h in range(pstate[o, E.PS_HAND_SIZE])]
        dealt = min(E.HAND_SIZE * n_players, int(game.deck_sizes[gen - 1]))
        slots += [(game.decks, gen - 1, k) for k in range(dealt, game.deck_sizes[gen - 1])]
        tiles = generator.permutation([array[i, j] for array, i, j in slots])
        for (array, i, j), tile in zip(slots, tiles, strict=True):
            array[i, j] = tile
    for g in range(gen, E.N_GENERATIONS):
        size = int(game.deck_sizes[g])
        game.decks[g, :size] = generator.permutation(game.decks[g, :size])
    if game.rules[K.RO_VARIANT] == K.V_BEGINNER or n_players == 1:
        return
    stats, cs_hands, box = game.stats, game.cs_hands, game.cs_box
    top, size = int(gstate[E.GS_CS_BOX_TOP]), int(gstate[E.GS_CS_BOX_SIZE])
    box[top:size] = generator.permutation(box[top:size])
    for other in range(n_players):
        first = stats[other, R.P_CS_DRAFTED0]
        slot = np.flatnonzero(cs_hands[other, : pstate[other, E.PS_N_CS]] == first)
        if other == seat or slot.size == 0 or size == top:
            continue
        k = top + generator.integers(size - top)
        cs_hands[other, slot[0]], box[k] = box[k], first
        stats[other, R.P_CS_DRAFTED0] = cs_hands[other, slot[0]]
    if n_players >= 3:
        one, two = (seat + 1) % n_players, (seat + 2) % n_players
        x, y = stats[one, R.P_CS_DRAFTED0 + 1], stats[two, R.P_CS_DRAFTED0 + 2]
        at_x = np.flatnonzero(cs_hands[one, : pstate[one, E.PS_N_CS]] == x)
        at_y = np.flatnonzero(cs_hands[two, : pstate[two, E.PS_N_CS]] == y)
        if at_x.size and at_y.size and generator.integers(2):
            cs_hands[one, at_x[0]], cs_hands[two, at_y[0]] = y, x
            stats[one, R.P_CS_DRAFTED0 + 1], stats[two, R.P_CS_DRAFTED0 + 2] = y, x


def decision_of(spec, fields, acting, seed):
    """The option ``spec`` takes for seat 0 at the stop whose ``fields_of`` are ``fields`` (on a
    copy)."""
    f = copied_fields(fields)
    game = Game(*f.values())
    f["memos"][:] = 0
    state = np.array([seed, 99], dtype=np.uint64)
    if spec.id in SEARCH_IDS:
        f["strategy_ids"][f["seats"][0]] = spec.id
        f["strategy_params"][f["seats"][0]] = spec.params
        f["strat_rng"][0] = state
        return S.choose_paused(game, S.new_scratch(game))
    n = G.list_actions(0, game) if acting else G.list_selections(0, game)
    decision = E.D_ACTION if acting else E.D_SELECT
    return choose_in(spec.id, spec.params, state, decision, n, 0, game, f["memos"][0])


def disaster_decision_of(spec, fields, seed):
    """The option ``spec`` takes for seat 0 if a Fire struck it now (pay or sacrifice)."""
    f = copied_fields(fields)
    game = Game(*f.values())
    f["memos"][:] = 0
    f["gstate"][E.GS_RESOLVING] = K.DIS_FIRE
    n = E.disaster_options(
        f["cells"][0], f["pstate"][0, E.PS_MONEY], f["tiles"], K.DIS_FIRE, f["options"]
    )
    state = np.array([seed, 98], dtype=np.uint64)
    return choose_in(spec.id, spec.params, state, E.D_DISASTER, n, 0, game, f["memos"][0])


def leaks(tables, n_players, seed, decide, variant=K.V_STANDARD, every=1):
    """How many stops of a game ``decide(game, acting, seed)`` decides differently once what
    seat 0 cannot know is scrambled."""
    generator = np.random.default_rng(seed)
    states = stops(tables, n_players, seed, variant)[::every]
    assert len(states) >= 8
    differ = 0
    for game, acting in states:
        hidden = copy_game(game)
        scramble(hidden, acting, 0, generator)
        differ += decide(game, acting, 1) != decide(hidden, acting, 1)
    return differ


def test_the_check_catches_a_strategy_that_peeks(tables):
    """Known answer: a decision that reads another seat's hand, a later deck or another
    seat's cornerstones changes once they are scrambled."""

    def peek_hand(game, acting, seed):
        return int(game.hands[1, : game.pstate[1, E.PS_HAND_SIZE]].sum())

    def peek_deck(game, acting, seed):
        return int(game.decks[2, 0])

    def peek_cornerstones(game, acting, seed):
        return int(game.cs_hands[1, : game.pstate[1, E.PS_N_CS]].sum())

    assert leaks(tables, 4, 3, peek_hand) > 0
    assert leaks(tables, 2, 3, peek_deck) > 0
    assert leaks(tables, 2, 3, peek_cornerstones) > 0
    assert leaks(tables, 4, 3, lambda game, acting, seed: int(game.hands[0].sum())) == 0


def check_no_leak(tables, n_players, seed, names, variant=K.V_STANDARD, every=1):
    specs = [resolve_strategy(name) for name in names]
    generator = np.random.default_rng(seed)
    states = stops(tables, n_players, seed, variant)[::every]
    assert len(states) >= 8
    for game, acting in states:
        hidden = copy_game(game)
        scramble(hidden, acting, 0, generator)
        seen, unseen = fields_of(game), fields_of(hidden)
        for spec in specs:
            for s in (1, 2):
                assert decision_of(spec, seen, acting, s) == decision_of(spec, unseen, acting, s), (
                    spec.spec,
                    int(seen["gstate"][E.GS_TURN]),
                    acting,
                )
            if spec.id not in SEARCH_IDS and n_players > 1:
                assert disaster_decision_of(spec, seen, 3) == disaster_decision_of(
                    spec, unseen, 3
                ), spec.spec


def test_the_scramble_changes_what_the_seat_cannot_know(tables):
    """The check below would pass vacuously if nothing changed: the scramble moves hidden
    tiles at most stops, and never the seat's own hand, city or cornerstones, nor any city."""
    generator = np.random.default_rng(5)
    changed = 0
    for n_players in (2, 4):
        for game, acting in stops(tables, n_players, 5):
            hidden = copy_game(game)
            scramble(hidden, acting, 0, generator)
            assert (hidden.hands[0] == game.hands[0]).all()
            assert (hidden.cs_hands[0] == game.cs_hands[0]).all()
            assert (hidden.cells == game.cells).all()
            changed += not (
                (hidden.hands == game.hands).all() and (hidden.decks == game.decks).all()
            )
    assert changed > 20


@pytest.mark.parametrize("n_players", [2, 4])
def test_no_heuristic_or_tuned_set_reads_what_its_seat_cannot_know(tables, n_players):
    names = [name for name in EVERY_STRATEGY if resolve_strategy(name).id not in SEARCH_IDS]
    check_no_leak(tables, n_players, 10 + n_players, names)


@pytest.mark.parametrize(
    ("n_players", "variant"),
    [(2, K.V_STANDARD), (3, K.V_STANDARD), (4, K.V_STANDARD), (1, K.V_STANDARD),
     (4, K.V_BEGINNER)],
)  # fmt: skip
def test_no_search_reads_what_its_seat_cannot_know(tables, n_players, variant):
    """The searches redraw the hidden part of the state for their playouts: the redraw must
    depend on what the seat knows only (and its stream), not on the hidden tiles' places."""
    check_no_leak(tables, n_players, 20 + n_players, list(SEARCHES.values()), variant, every=3)


def test_the_expert_is_deterministic_for_its_seed(tables):
    """The same stop, the same stream: the same decision (and the whole game: the same
    result); another stream may decide otherwise but stays legal."""
    spec = parse_strategy("expert:playouts=6")
    for game, acting in stops(tables, 2, 31)[::4]:
        seen = fields_of(game)
        assert decision_of(spec, seen, acting, 1) == decision_of(spec, seen, acting, 1)
    from strategies.tools.arena import play_match

    specs = [spec, resolve_strategy("tuned_builder_2p")]
    one = play_match(tables, specs, [0, 1], 2, seed=8)
    two = play_match(tables, specs, [0, 1], 2, seed=8, workers=2)
    assert (one.players == two.players).all()
