"""Tangram City strategies: the registry and spec parsing, what a strategy is shown (only what
the seat knows), greedy's choice on hand-made boards, the planner's determinism and its greedy
rounds, and the ladder's first rung (greedy beats random)."""

from types import SimpleNamespace

import numpy as np
import pytest
from test_tangram_support import board_from_text, engine_board, run_batch

from sim.core import rng
from sim.core.errors import UserError
from sim.core.game import StrategyRegistry
from sim.tangram import constants as K
from sim.tangram import engine as E
from sim.tangram.rules import make_rules
from sim.tangram.tileset import M_COLOUR, M_TILE
from strategies.tangram import basic as B
from strategies.tangram import registry as REG
from strategies.tangram.planner import choose_planner, make_scratch
from strategies.tangram.play import max_options
from strategies.tangram.registry import parse_strategy
from strategies.tangram.view import D_PLACE, N_VIEW, V_KNOWN, V_UNSEEN, fill_view


@pytest.fixture(scope="module")
def scratch(data):
    return make_scratch(max_options(data.arrays[3]), data.arrays[0], data.arrays[3], True)


@pytest.fixture(scope="module")
def squares(scratch):
    return scratch[-1]  # greedy's squares (basic.square_table): the last of the scratch


def test_registry_lists_every_strategy_with_valid_defaults():
    assert isinstance(REG.STRATEGIES, StrategyRegistry)
    infos = REG.STRATEGIES.strategies
    assert [i.name for i in infos] == ["random", "greedy", "planner"]
    assert len({i.id for i in infos}) == len(infos)
    for info in infos:
        assert len(info.param_names) == len(info.defaults) == len(info.bounds)
        assert len(info.param_names) <= REG.STRATEGIES.n_params
        for value, (low, high) in zip(info.defaults, info.bounds, strict=True):
            assert low <= value <= high


def test_parse_strategy():
    spec = parse_strategy("planner:samples=8")
    assert spec.spec == "planner:samples=8" and spec.params[0] == 8
    assert parse_strategy("planner:samples=10,first_round=3").spec == "planner"  # the default
    for bad, message in [
        ("greedyy", "unknown strategy 'greedyy'"),
        ("greedy:weight=1", "bad parameter 'weight=1'"),
        ("planner:samples=x", "is not a number"),
        ("planner:samples=0", "must be between 1 and 64"),
        ("planner:samples=2.5", "must be a whole number"),
    ]:
        with pytest.raises(UserError, match=message.replace("[", r"\[")):
            parse_strategy(bad)


def test_a_strategy_choosing_a_missing_option_is_reported(data):
    """An id the dispatch does not know answers -1: the game raises, never plays it."""
    from strategies.tangram.play import STRATEGY_ID_DTYPE, play_batch

    with pytest.raises(ValueError, match="does not exist"):
        unknown = SimpleNamespace(id=99, params=np.zeros(REG.N_PARAMS))
        ids = np.zeros(1, dtype=np.int64)
        from sim.core import rng
        from sim.tangram import records as R

        play_batch(
            rng.master_key(1),
            ids,
            ids,
            np.zeros((1, 2), dtype=np.int32),
            np.array([unknown.id], dtype=STRATEGY_ID_DTYPE),
            unknown.params.reshape(1, -1),
            data.arrays,
            make_rules(),
            np.zeros((1, R.N_GAME_COLS), dtype=np.int64),
            np.zeros((1, 5, R.N_PLAYER_COLS), dtype=np.int64),
            np.zeros((0, R.N_EVENT_COLS), dtype=np.int64),
        )


def test_the_view_hides_the_order_of_unseen_cards():
    """004: a player may look at "the Card in your hand or the Card you are sharing": two decks
    that differ only in the order of cards seat 1 has not seen give seat 1 the same view, and
    a deck that differs in a card seat 1 holds does not."""
    holders = np.zeros(K.N_CARDS, dtype=np.int64)
    E.round_holders(3, 0, 8, holders)  # round 3, start player 0: seat 1 holds position 10
    deck = np.arange(K.N_CARDS, dtype=np.int64)
    shuffled = deck.copy()
    shuffled[[9, 11, 15, 22]] = shuffled[[22, 15, 11, 9]]  # unseen positions only
    held = deck.copy()
    held[[10, 12]] = held[[12, 10]]  # seat 1's own card moves
    views = []
    for d in (deck, shuffled, held):
        view = np.zeros(N_VIEW, dtype=np.int64)
        fill_view(view, D_PLACE, 1, 3, 8, 8, 0, 0, d, holders)
        views.append(view)
    assert (views[0] == views[1]).all()
    assert not (views[0] == views[2]).all()
    assert views[0][V_KNOWN + 10] == 10 and views[0][V_KNOWN + 9] == -1
    assert 10 not in views[0][V_UNSEEN : V_UNSEEN + 14]


def options_of(data, board, *tiles):
    """The options of a decision on ``tiles`` as the game lists them: each tile's legal
    placements, then declining each."""
    place_mask, _, _, tile_first, _ = data.arrays
    options = np.zeros((2000, 2), dtype=np.int64)
    n = 0
    for tile in tiles:
        n = E.legal_placements(board, place_mask, tile_first, tile, options, n)
    for tile in tiles:
        options[n] = (-1, tile)
        n += 1
    return options, n


def test_greedy_completes_the_largest_rectangle(data, squares):
    """Greedy takes the best immediate value: with a 2x3 block missing its right column, the
    Domino (1x2) placed upright there makes a 2x3 rectangle (score 6, up from 4)."""
    rows = ["rrrr rrrr .... .... .... .... ....",
            "rrrr rrrr .... .... .... .... ...."]  # fmt: skip
    board = engine_board(board_from_text(rows))
    domino = data.content.tile_names.index("Domino")
    options, n = options_of(data, board, domino)
    state = np.array([1, 2], dtype=np.uint64)
    for _ in range(5):
        k = B.greedy_index(board, options, n, data.arrays, squares, make_rules(), 0.0, state)
        after = board.copy()
        E.put(after, data.arrays[0], data.arrays[1], options[k, 0])
        assert E.largest_rectangle(np.uint64(E.full_squares(after))) == 6


def test_greedy_builds_rather_than_declines(data, squares):
    """Declining keeps the value but builds nothing: greedy declines only when every placement
    lowers the value; on an empty board it always builds."""
    board = np.zeros((E.N_LAYERS, K.N_WORDS), dtype=np.uint64)
    state = np.array([3, 4], dtype=np.uint64)
    for tile in range(data.content.n_tiles):
        options, n = options_of(data, board, tile)
        k = B.greedy_index(board, options, n, data.arrays, squares, make_rules(), 0.0, state)
        assert options[k, 0] >= 0 and data.arrays[1][options[k, 0], M_TILE] == tile


def reference_pick(keys, n, state):
    """Greedy's rule spelled out: the best key, ties drawn one at a time in listed order."""
    best, ties = 0, 1
    for i in range(1, n):
        a, b = tuple(keys[i]), tuple(keys[best])
        if a > b:
            best, ties = i, 1
        elif a == b:
            ties += 1
            if rng.randint(state, ties) == 0:
                best = i
    return best


@pytest.mark.parametrize("balance_weight", [0.0, 1.0])
def test_greedy_index_and_pick_are_the_best_key_with_the_same_tie_draws(
    data, scratch, balance_weight
):
    """greedy_index skips the contact of options already beaten and keeps no key array, and
    greedy_pick (the planner's rollouts) values the legal placements as its scan finds them,
    without listing them: on boards of random play, with hands of one to three tiles (the
    final round), both must pick what the full keys pick and draw the same numbers."""
    blocks, squares = scratch[-2], scratch[-1]
    found = np.zeros((2000, 2), dtype=np.int64)
    place_mask, place_meta, _, _, _ = data.arrays
    rules = make_rules()
    play = np.random.default_rng(5)
    keys = np.zeros((2000, B.N_KEY))
    checked = completing = 0
    for game in range(6):
        board = np.zeros((E.N_LAYERS, K.N_WORDS), dtype=np.uint64)
        E.put_start(board, data.arrays[4], game % K.N_BOARDS, K.RED)
        for turn in range(20):
            size = 1 if turn < 14 else 1 + turn % 3
            hand = play.choice(data.content.n_tiles + 1, size=size, replace=False)
            options, n = options_of(data, board, *hand)
            B.greedy_keys(board, options, n, data.arrays, squares, rules, balance_weight, keys)
            completing += int((keys[:n, 3] > keys[n - 1, 3]).sum())
            theirs = np.array([7, game], dtype=np.uint64)
            k = reference_pick(keys, n, theirs)
            ours = np.array([7, game], dtype=np.uint64)
            i = B.greedy_index(board, options, n, data.arrays, squares, rules, balance_weight, ours)
            assert i == k and (ours == theirs).all()
            ours = np.array([7, game], dtype=np.uint64)
            picked = B.greedy_pick(
                board, hand, len(hand), found, data.arrays, squares, blocks, rules,
                balance_weight, ours,
            )  # fmt: skip
            assert picked == tuple(options[k]) and (ours == theirs).all()
            checked += 1
            if n > len(hand):
                E.put(board, place_mask, place_meta, options[int(play.integers(n - len(hand))), 0])
    assert checked == 120 and completing > 100  # options completing squares were compared


def test_completed_squares_are_those_the_board_gains(data, squares):
    """basic.completed_squares tests only the partly built squares a placement covers part
    of: on boards of random play, for every legal placement of every tile and the fountain,
    its squares and colour counts must be what building it adds to the whole board's."""
    place_mask, place_meta, _, tile_first, start_mask = data.arrays
    play = np.random.default_rng(9)
    options = np.zeros((1000, 2), dtype=np.int64)
    checked = completing = 0
    for game in range(4):
        board = np.zeros((E.N_LAYERS, K.N_WORDS), dtype=np.uint64)
        E.put_start(board, start_mask, game % K.N_BOARDS, K.RED)
        for _ in range(30):
            full = int(E.full_squares(board))
            red, green = E.colour_counts(board)
            built = sum(
                1 << s
                for s in range(K.N_SQUARES)
                if int(board[E.OCC, s // 16]) >> (4 * (s % 16)) & 15
            )
            partial = np.uint64(built & ~full)
            for tile in range(tile_first.shape[0] - 1):
                n = E.legal_placements(board, place_mask, tile_first, tile, options, 0)
                for p in options[:n, 0]:
                    after = board.copy()
                    E.put(after, place_mask, place_meta, p)
                    red_after, green_after = E.colour_counts(after)
                    got = B.completed_squares(
                        board, place_mask, p, place_meta[p, M_COLOUR], squares[p, 0],
                        squares[p, 1] & partial,
                    )  # fmt: skip
                    gained = int(E.full_squares(after)) & ~full
                    assert got == (gained, red_after - red, green_after - green), p
                    checked += 1
                    completing += bool(int(squares[p, 1]) & int(partial) & gained)
            n = E.legal_placements(
                board, place_mask, tile_first, int(play.integers(24)), options, 0
            )
            if n:
                E.put(board, place_mask, place_meta, options[int(play.integers(n)), 0])
    assert checked > 10_000 and completing > 100  # partly built squares were completed


def test_the_rectangle_memo_gives_the_largest_rectangle(data):
    """basic.rectangle reads the largest rectangle of a full-square mask from a small table
    at the end of ``squares``: asked again and again, among masks that share table rows, it
    must give engine.largest_rectangle's answer every time, and leave the parts untouched."""
    squares = B.square_table(data.arrays[0])
    parts = squares[: -B.RECT_MEMO].copy()
    play = np.random.default_rng(3)
    masks = []
    for density in (0.2, 0.5, 0.8, 0.95):
        bits = play.random((400, K.N_SQUARES)) < density
        masks += [sum(1 << s for s in np.flatnonzero(row)) for row in bits]
    masks += [(1 << K.N_SQUARES) - 1, 0]
    hits = 0
    for mask in masks + masks[::3] + masks[::7]:
        expected = E.largest_rectangle(np.uint64(mask))
        before = squares[-B.RECT_MEMO :, 0].copy()
        assert B.rectangle(np.uint64(mask), squares) == expected
        hits += int((squares[-B.RECT_MEMO :, 0] == before).all())
    assert (squares[: -B.RECT_MEMO] == parts).all()
    assert 0 < hits < len(masks)  # both hits and misses (with evictions) were checked


def test_planner_is_deterministic_given_its_stream(data, scratch):
    board = engine_board(
        board_from_text(["rrrr rrrr gggg .... .... .... ...."] + [".... " * 6 + "...."] * 6)
    )
    holders = np.zeros(K.N_CARDS, dtype=np.int64)
    E.round_holders(2, 0, 0, holders)
    deck = np.arange(K.N_CARDS, dtype=np.int64)
    view = np.zeros(N_VIEW, dtype=np.int64)
    fill_view(view, D_PLACE, 0, 1, 0, 0, 0, 0, deck, holders)
    options, n = options_of(data, board, int(deck[0]))
    params = parse_strategy("planner:samples=3,candidates=3,first_round=1").params  # searches
    picks = []
    for _ in range(2):
        state = np.array([11, 12], dtype=np.uint64)
        picks.append(
            choose_planner(
                params, state, options, n, board, view, data.arrays, make_rules(), scratch
            )
        )
    assert picks[0] == picks[1] and 0 <= picks[0] < n


def test_greedy_beats_random(data):
    """The ladder's first rung, on 10 deals with the seats rotated: greedy wins every game."""
    _, players, _, _ = run_batch(
        data,
        ["greedy", "random"],
        [[0, 1], [1, 0]] * 10,
        np.arange(20),
        deal_ids=np.arange(20) // 2,
        events=False,
    )
    greedy = players["strategy"] == 0
    assert (players["win"][greedy] == 1).all()
    assert players["total"][greedy].mean() > 2 * players["total"][~greedy].mean()


def test_the_planner_takes_greedys_choices_before_its_first_round(data):
    """Known answer: before round ``first_round`` the planner takes greedy's option with
    greedy's tie draws, so 1-player games on the same deals and streams are move for move
    greedy's up to that round; from it on the planner searches and plays otherwise."""

    def events(strategy):
        _, players, events, _ = run_batch(data, [strategy], np.zeros((6, 1)), np.arange(6))
        return players, events

    greedy_players, greedy = events("greedy")
    for first_round in (2, 3):
        players, planner = events(f"planner:samples=4,first_round={first_round}")
        for mine, theirs in zip(planner, greedy, strict=True):
            before = mine[mine["round"] < first_round]
            assert len(before) > 0
            assert (before == theirs[: len(before)]).all()
        # later rounds: not greedy's games (on these deals the planner scores more)
        assert players["total"].sum() > greedy_players["total"].sum()
