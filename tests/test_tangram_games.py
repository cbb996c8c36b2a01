"""Whole games of Tangram City: invariants over random playouts of every player count (boards
rebuilt from the events in plain Python: no overlap, every round score and balance equal to the
plain scorer's, totals = rounds + bonuses, fountains <= 6, the start-marker rule), determinism,
independence from the batch, and parity between compiled and interpreted (NUMBA_DISABLE_JIT=1).
"""

import time

import numpy as np
import pytest
from run_helpers import script_games
from test_tangram_support import Replay, run_batch

from sim.tangram import constants as K
from sim.tangram import records as R
from sim.tangram.rules import make_rules


def check_start_markers(events, n_players):
    """004 ROUND END start-marker rule, from the events alone."""
    totals = [0] * n_players
    start = None
    for e in events:
        if e["kind"] == R.EV_ROUND_SCORE:
            totals[int(e["player"])] = int(e["total"])
        elif e["kind"] == R.EV_START_MARKER:
            if start is not None:
                best = max(totals)
                order = [(start + k) % n_players for k in range(1, n_players + 1)]
                assert e["player"] == next(s for s in order if totals[s] == best)
            start = int(e["player"])


def check_games(data, games, players, events, rules=None):
    replay = Replay(data.content, rules)
    for g, pl, ev in zip(games, players, events, strict=True):
        replay.check(g, pl, ev)
        check_start_markers(ev, pl.shape[0])
        assert g["n_events"] == len(ev) <= R.EVENTS_PER_GAME


@pytest.mark.parametrize("n_players", [1, 2, 3, 4, 5])
def test_random_playout_invariants(data, n_players):
    """Random games of every player count: every invariant, on every game."""
    n = 60
    games, players, events, _ = run_batch(
        data, ["random"], np.zeros((n, n_players)), np.arange(n), seed=10 + n_players
    )
    check_games(data, games, players, events)


def test_strategy_playout_invariants(data):
    """Greedy and planner games (they build much more, so full boards and bonuses occur)."""
    games, players, events, _ = run_batch(
        data,
        ["greedy", "planner:samples=2,candidates=2", "random"],
        [[0, 1, 2]] * 4,
        np.arange(4),
        seed=2,
    )
    check_games(data, games, players, events)
    games, players, events, _ = run_batch(data, ["greedy"], np.zeros((40, 2)), np.arange(40))
    check_games(data, games, players, events)
    assert (players["balance_bonus"] > 0).any()


def test_invariants_under_every_reading(data):
    rules = make_rules(
        first_start="random",
        fountain_kept="yes",
        balance_cap="10",
        start_colour="green",
        boards="by_seat",
    )
    games, players, events, _ = run_batch(
        data, ["random", "greedy"], [[0, 1], [1, 0]] * 10, np.arange(20), rules=rules
    )
    check_games(data, games, players, events, rules)


def test_same_seed_same_tables(data):
    first = run_batch(data, ["random", "greedy", "random"], [[0, 1, 2]] * 8, np.arange(8))[3]
    again = run_batch(data, ["random", "greedy", "random"], [[0, 1, 2]] * 8, np.arange(8))[3]
    for a, b in zip(first, again, strict=True):
        assert (a == b).all()
    other = run_batch(data, ["random", "greedy", "random"], [[0, 1, 2]] * 8, np.arange(8), seed=2)[
        3
    ]
    assert not (other[0] == first[0]).all()


def test_a_game_does_not_depend_on_its_batch(data):
    """A game's rows depend only on the key, its id, its deal and its seats: played alone or in
    the middle of a batch of other games, with other strategies, game 7 is the same."""
    seats = [[0, 1]] * 12
    ids = np.arange(100, 112)
    _, _, _, (g, p, e) = run_batch(data, ["greedy", "random"], seats, ids)
    _, _, _, (g1, p1, e1) = run_batch(data, ["greedy", "random"], [[0, 1]], ids[7:8])
    assert (g[7] == g1[0]).all() and (p[7] == p1[0]).all()
    n = g[7, R.G_N_EVENTS]
    assert (e[7 * R.EVENTS_PER_GAME : 7 * R.EVENTS_PER_GAME + n] == e1[:n]).all()


def test_the_deal_does_not_depend_on_the_strategies(data):
    """Chance is drawn from the deal stream only: the same deal index gives the same cards,
    boards and first start player whoever plays (seat rotations meet the same deals)."""
    a = run_batch(data, ["random", "random"], [[0, 1]] * 6, np.arange(6), deal_ids=[3] * 6)
    b = run_batch(
        data, ["planner:samples=1", "greedy"], [[1, 0]] * 6, np.arange(6, 12), deal_ids=[3] * 6
    )
    cards = [f"card_{p}" for p in range(K.N_CARDS)]
    for games in (a[0], b[0]):
        assert all((games[c] == a[0][c][0]).all() for c in cards)
    assert (a[1]["board"] == b[1]["board"][0]).all()


PARITY_SCRIPT = """
import json, sys
sys.path.insert(0, {tests!r})
import numpy as np
from test_tangram_support import run_batch
from sim.tangram.tileset import load_tileset
data = load_tileset()
out = []
for n_players, strategies, seed in json.loads(sys.argv[1]):
    seats = [list(range(len(strategies)))[:n_players]] if len(strategies) == n_players else \\
        [[0] * n_players]
    _, _, _, (g, p, e) = run_batch(data, strategies, seats, [seed], seed=seed)
    out.append([g.tolist(), p.tolist(), e[: g[0, 4]].tolist()])
print(json.dumps(out))
"""
PARITY_GAMES = [
    [1, ["planner:samples=1,candidates=2"], 3],
    [2, ["greedy", "random"], 4],
    [3, ["random"], 5],
    [5, ["random"], 6],
]


def run_games(jit: bool):
    return script_games(PARITY_SCRIPT, PARITY_GAMES, jit)


def test_parity_compiled_and_interpreted():
    """The same games give identical rows compiled and with NUMBA_DISABLE_JIT=1 (no overflow
    warning either: -W error::RuntimeWarning)."""
    assert run_games(jit=True) == run_games(jit=False)


SLOW_GAMES = 100_000


@pytest.mark.slow
def test_invariants_over_100000_random_games(data):
    """Issue 17, done when: "invariants hold over 100,000 random games for 1-5 players":
    20,000 random games per player count, every game replayed and checked."""
    start = time.perf_counter()
    per_count = SLOW_GAMES // 5
    for n_players in range(1, 6):
        for first in range(0, per_count, 5000):
            ids = np.arange(first, first + 5000)
            games, players, events, _ = run_batch(
                data, ["random"], np.zeros((5000, n_players)), ids, seed=100 + n_players
            )
            check_games(data, games, players, events)
    print(f"\n{SLOW_GAMES} random games checked in {time.perf_counter() - start:.0f} s")
