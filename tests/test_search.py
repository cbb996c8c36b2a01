"""The searches (strategies/neom/search.py) and the resumable game loop they play out on
(strategies.neom.play.advance): stopping and resuming changes no game, a playout is the real
loop's continuation, the redraw keeps what the seat knows, the value model's fit finds a
planted line, and a search finds the clearly better move. The leak test is tests/test_leaks.py.
"""

import numpy as np
import pytest
from test_leaks import copy_game

from sim.core import rng
from sim.core.batch import STRATEGY_ID_DTYPE
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom import records as R
from sim.neom.tables import make_rules
from strategies.neom import play as G
from strategies.neom import search as S
from strategies.neom.archetypes import N_WEIGHTS, PARAM_NAMES
from strategies.neom.dispatch import choose_in
from strategies.neom.entries import play_batch_for
from strategies.neom.pieces import addresses, new_memos
from strategies.neom.registry import (
    EXPERT_POLICY,
    EXPERT_POLICY_MANY,
    STRATEGIES,
    X_POLICY_MANY,
    parse_strategy,
    resolve_strategy,
)
from strategies.neom.steps import addresses as step_addresses
from strategies.tools.fit_value import fit


def start(tables, specs, seed, variant=K.V_STANDARD, events=True):
    """A game of ``specs`` (seat s plays specs[s]) set up and ready for ``advance``, with its
    players rows, events buffer and games row."""
    n_players = len(specs)
    ids = np.array([spec.id for spec in specs], dtype=STRATEGY_ID_DTYPE)
    params = np.stack([spec.params for spec in specs])
    batch = G.batch_scratch(
        ids, params, addresses(ids), step_addresses(), new_memos(tables.n_tiles)
    )
    players = np.zeros((1, R.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int64)
    events = np.zeros((R.MAX_EVENTS_PER_GAME if events else 0, R.N_EVENT_COLS), dtype=np.int64)
    seats = np.arange(n_players, dtype=np.int32)
    game, _ = G.new_game(
        0, rng.master_key(seed), 0, 0, seats, batch, tables.arrays, make_rules(variant),
        players, events,
    )  # fmt: skip
    return game, players, events, np.zeros(R.N_GAME_COLS, dtype=np.int64)


def play_through(tables, names, seed, variant=K.V_STANDARD):
    """A whole game in one call of the default entry: its players rows and events."""
    game, players, events, row = start(tables, [resolve_strategy(n) for n in names], seed,
                                       variant)  # fmt: skip
    assert G.advance(game, row) == G.DONE
    return players[0, : len(names)], events[: game.gstate[E.GS_N_EVENTS]]


def builder_as_expert():
    """An expert whose policy is the builder's weights: its own draft, purchases and disasters
    are then the builder's decisions."""
    builder = parse_strategy("builder")
    weights = [f"{k}={float(builder.params[i])!r}" for i, k in enumerate(PARAM_NAMES)]
    weights += [f"{k}_4p={float(builder.params[i])!r}" for i, k in enumerate(PARAM_NAMES)]
    return builder, parse_strategy(f"expert:{','.join(weights)}")


@pytest.mark.parametrize(
    ("n_players", "variant"), [(2, K.V_STANDARD), (4, K.V_RANDOM_DISASTERS), (1, K.V_STANDARD),
                               (3, K.V_BEGINNER)],
)  # fmt: skip
def test_stopping_and_resuming_changes_nothing(tables, n_players, variant):
    """A game whose seat 0 stops the loop before each of its selections and actions (a search
    seat), each decision taken outside with the builder's choice and handed back (force), is
    the game the builder plays in one go: the same events, the same players rows."""
    others = ["tuned_builder_2p", "merchant", "denier", "greedy"][: n_players - 1]
    expected_players, expected_events = play_through(tables, ["builder", *others], 4, variant)
    builder, expert = builder_as_expert()
    specs = [expert, *[resolve_strategy(n) for n in others]]
    game, players, events, row = start(tables, specs, 4, variant)
    stops = 0
    while G.advance(game, row) == G.PAUSED:
        seat, acting = G.step_seat(game.gstate[E.GS_STEP], game.gstate[E.GS_TURN], n_players)
        assert seat == 0
        n = G.list_actions(0, game) if acting else G.list_selections(0, game)
        decision = E.D_ACTION if acting else E.D_SELECT
        k = (
            -1
            if acting
            else E.forced_choice(0, decision, game.gstate, game.rules, game.tiles, game.options, n)
        )
        if k < 0:
            k = 0 if n == 1 else choose_in(
                builder.id, builder.params, game.strat_rng[0], decision, n, 0, game,
                game.memos[0],
            )  # fmt: skip
        G.force(game, k)
        stops += 1
    assert stops >= 30 if n_players > 1 else stops >= 20
    played = players[0, :n_players].copy()
    played[:, R.P_STRATEGY] = expected_players[:, R.P_STRATEGY]
    assert (played == expected_players).all()
    assert (events[: game.gstate[E.GS_N_EVENTS]] == expected_events).all()


def test_a_playout_from_a_copied_state_is_the_real_continuation(tables):
    """The loop resumed on a copy of a stopped game's state (``copy_state``, the playouts'
    bundle), with the same decision handed to the step and the same seat streams, finishes the
    game exactly as the original does: a playout runs the real loop, not a model of it."""
    builder, expert = builder_as_expert()
    policy = resolve_strategy("tuned_builder_2p")
    game, players, _, row = start(tables, [expert, policy], 6, events=False)
    scratch = S.new_scratch(game)
    playout = scratch[0]
    for _ in range(9):  # to the 5th stop, each decision the builder's choice
        assert G.advance(game, row) == G.PAUSED
        G.force(game, 0)
    S.copy_state(game, playout)
    playout.strategy_params[0] = policy.params
    playout.strat_rng[:] = game.strat_rng
    game.strategy_ids[0] = policy.id  # seat 0 too plays the policy from here, like a playout
    game.strategy_params[0] = policy.params
    G.force(game, 0)
    G.force(playout, 0)
    assert G.advance(game, row) == G.DONE
    copy_row = np.zeros_like(row)
    assert G.advance(playout, copy_row) == G.DONE
    assert (playout.stats[:2] == players[0, :2]).all()
    scored = [R.G_N_WINNERS, R.G_WINNERS_MASK, R.G_WINNING_SCORE]
    assert (copy_row[scored] == row[scored]).all()


def test_what_a_seat_knows_of_the_draft(tables):
    """RULES.md P2 (4 cornerstones each, keep one and pass the rest left, three times, the
    last one of each hand to the discard pile): with 2 players a seat knows the two later
    picks of the other; with 3-5 it knows the last pick of its left neighbour, the pair that
    left its first hand only as a pair, nothing else; beginner: nothing."""
    know = S.cornerstone_knowledge
    assert [know(0, 1, d, 2, False) for d in range(3)] == [S.CS_UNSEEN, S.CS_KNOWN, S.CS_KNOWN]
    assert [know(1, 0, d, 2, False) for d in range(3)] == [S.CS_UNSEEN, S.CS_KNOWN, S.CS_KNOWN]
    for n_players in (3, 4, 5):
        table = {(k, d): know(2, (2 + k) % n_players, d, n_players, False)
                 for k in range(1, n_players) for d in range(3)}  # fmt: skip
        assert table[(1, 2)] == S.CS_KNOWN
        assert table[(1, 1)] == table[(2, 2)] == S.CS_PAIR
        rest = {v for key, v in table.items() if key not in ((1, 2), (1, 1), (2, 2))}
        assert rest == {S.CS_UNSEEN}
    assert know(0, 1, 2, 2, True) == S.CS_UNSEEN


def test_the_redraw_keeps_what_the_seat_knows(tables):
    """The redraw of a stopped 4-player game for seat 0 keeps its hand, every city and purse,
    the hands that passed through it and every known cornerstone; the unseen tiles keep their
    multiset (nothing appears, nothing is lost)."""
    builder, expert = builder_as_expert()
    specs = [expert] + [resolve_strategy("tuned_denier_4p")] * 3
    game, _, _, row = start(tables, specs, 9, events=False)
    checked = 0
    stream = np.array([3, 4], dtype=np.uint64)
    pool = np.zeros(tables.n_tiles, dtype=np.int64)
    while G.advance(game, row) == G.PAUSED:
        seat, acting = G.step_seat(game.gstate[E.GS_STEP], game.gstate[E.GS_TURN], 4)
        copy = copy_game(game)
        S.determinize(0, acting, copy, pool, stream)
        t = game.gstate[E.GS_TURN] % E.TURNS_PER_GENERATION
        assert (copy.cells == game.cells).all() and (copy.hands[0] == game.hands[0]).all()
        assert (copy.pstate[:, E.PS_MONEY] == game.pstate[:, E.PS_MONEY]).all()
        for k in range(1, min(t, 3) + 1):
            assert (copy.hands[k] == game.hands[k]).all() or not acting
        if acting:
            held = np.sort(np.concatenate([game.hands[1:].ravel(), game.decks.ravel()]))
            redrawn = np.sort(np.concatenate([copy.hands[1:].ravel(), copy.decks.ravel()]))
            assert (held == redrawn).all()
        assert (copy.cs_hands[0] == game.cs_hands[0]).all()
        cornerstones = np.sort(np.concatenate([game.cs_hands[1:].ravel(), game.cs_box]))
        assert (np.sort(np.concatenate([copy.cs_hands[1:].ravel(), copy.cs_box])) ==
                cornerstones).all()  # fmt: skip
        for other in (1, 2, 3):
            for slot in range(game.pstate[other, E.PS_N_CS]):
                tile = game.cs_hands[other, slot]
                pick = S.drafted_pick(game, other, tile)
                if pick >= 0 and S.cornerstone_knowledge(0, other, pick, 4, False) == S.CS_KNOWN:
                    assert copy.cs_hands[other, slot] == tile
        checked += 1
        G.force(game, 0)
    assert checked > 30


def test_the_value_fit_finds_a_planted_line():
    """Known answer: final scores made from the features by a known line plus noise; the fit
    returns the line, a residual spread near the noise's, and a high held-out R^2."""
    generator = np.random.default_rng(1)
    n_games, n_players = 4000, 2
    x = generator.normal(10, 3, size=(2, n_games, n_players, S.N_FEATURES))
    x[..., S.F_ONE] = 1.0
    line = np.array([5.0, 1.2, 0.3, 2.0, -1.5, 0.7, 0.1])
    finals = x[1] @ line + generator.normal(0, 2, size=(n_games, n_players))
    weights, spreads, scores = fit(x, finals)
    assert np.allclose(weights[1], line, atol=0.1)
    assert scores[1] > 0.9 and scores[0] < 0.2  # generation end 1 here is unrelated noise
    assert 2.0 < spreads[1] < 3.3  # sd of the margin's residual: the noise's sd * sqrt(2)


def test_the_expert_policy_is_the_shipped_sets(tables):
    """The expert's playout policy is the shipped tuned sets it names: with 1-2 players
    EXPERT_POLICY, with 3-5 EXPERT_POLICY_MANY."""
    expert = STRATEGIES["expert"]
    assert expert.defaults[:N_WEIGHTS] == tuple(resolve_strategy(EXPERT_POLICY).params[:N_WEIGHTS])
    many = expert.defaults[X_POLICY_MANY : X_POLICY_MANY + N_WEIGHTS]
    assert many == tuple(resolve_strategy(EXPERT_POLICY_MANY).params[:N_WEIGHTS])


def test_only_a_lineup_with_a_search_uses_the_search_entry():
    """The default entry never compiles a search: a lineup naming one gets the search's own
    compiled entry, every other the default one."""
    default = play_batch_for([parse_strategy(n).id for n in ("greedy", "builder", "miser")])
    assert default.batch is G.play_batch
    assert play_batch_for([parse_strategy("greedy").id, parse_strategy("expert").id]).batch is (
        S.play_batch
    )
    assert play_batch_for([parse_strategy("rollout").id]).batch is S.play_batch


def test_the_default_entry_refuses_a_search_seat(tables):
    specs = [parse_strategy("expert:playouts=2"), parse_strategy("greedy")]
    ids = np.array([spec.id for spec in specs], dtype=STRATEGY_ID_DTYPE)
    with pytest.raises(ValueError, match="search"):
        G.play_batch(
            rng.master_key(1), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
            np.array([[0, 1]], dtype=np.int32), ids, np.stack([s.params for s in specs]),
            addresses(ids), step_addresses(), new_memos(tables.n_tiles), tables.arrays,
            make_rules(),
            np.zeros((1, R.N_GAME_COLS), dtype=np.int64),
            np.zeros((1, R.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int64),
            np.zeros((0, R.N_EVENT_COLS), dtype=np.int64),
        )  # fmt: skip
