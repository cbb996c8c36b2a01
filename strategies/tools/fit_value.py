"""``python -m strategies.tools.fit_value``: the expert's value model of a state at a
generation's end, fitted on games of the strong field.

Plays ``--games`` games of ``--strategies`` (one per seat, seats rotated) with the game loop
stopped at the start of generations 2 and 3 (``GS_STOP_TURN``), records each seat's features
there (``strategies.neom.search.features``) and its final score, and fits one least-squares
line per generation end: final score ~ features. Prints the weights and the residual spread
of a final margin as the constants of ``strategies/neom/search.py`` (VALUE_WEIGHTS,
VALUE_SPREAD), and the fit's R^2 on held-out games.
"""

import argparse
import sys

import numpy as np

from sim.core import rng
from sim.core.batch import STRATEGY_ID_DTYPE
from sim.core.strategies import split_strategies
from sim.neom import engine as E
from sim.neom import records as R
from sim.neom.catalog import load_catalog
from sim.neom.tables import make_rules
from strategies.neom import play as G
from strategies.neom import search as S
from strategies.neom.pieces import addresses, new_memos
from strategies.neom.registry import resolve_strategy
from strategies.neom.steps import addresses as step_addresses


def collect(tables, specs, n_games: int, seed: int):
    """Features at the two generation ends, float64[2, games, P, N_FEATURES], and the final
    scores, float64[games, P]."""
    n_players = len(specs)
    ids = np.array([spec.id for spec in specs], dtype=STRATEGY_ID_DTYPE)
    params = np.stack([spec.params for spec in specs])
    batch = G.batch_scratch(
        ids, params, addresses(ids), step_addresses(), new_memos(tables.n_tiles)
    )
    key = rng.master_key(seed)
    rules = make_rules()
    players = np.zeros((1, R.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int64)
    row = np.zeros(R.N_GAME_COLS, dtype=np.int64)
    no_events = np.zeros((0, R.N_EVENT_COLS), dtype=np.int64)
    x = np.zeros((E.N_GENERATIONS - 1, n_games, n_players, S.N_FEATURES))
    finals = np.zeros((n_games, n_players))
    for i in range(n_games):
        seats = np.roll(np.arange(n_players, dtype=np.int32), i)
        game, _ = G.new_game(0, key, i, i, seats, batch, tables.arrays, rules, players, no_events)
        for ended in range(E.N_GENERATIONS - 1):
            game.gstate[E.GS_STOP_TURN] = (ended + 1) * E.TURNS_PER_GENERATION
            if G.advance(game, row) != G.STOPPED:
                raise RuntimeError("the game did not stop at a generation's end")
            for s in range(n_players):
                S.features(s, game, x[ended, i, s])
        game.gstate[E.GS_STOP_TURN] = 0
        if G.advance(game, row) != G.DONE:
            raise RuntimeError("a search seat in the fitting field")
        finals[i] = players[0, :n_players, R.P_SCORE_TOTAL]
    return x, finals


def fit(x: np.ndarray, finals: np.ndarray, held_out: float = 0.2):
    """Per generation end: least-squares weights (final ~ features), the sd of the margin's
    residual (seat 0 minus the best other), and R^2 on the last ``held_out`` share of games."""
    n_games, n_players = finals.shape
    cut = int(n_games * (1 - held_out))
    weights, spreads, scores = [], [], []
    for ended in range(x.shape[0]):
        a = x[ended, :cut].reshape(-1, x.shape[-1])
        b = finals[:cut].reshape(-1)
        w, *_ = np.linalg.lstsq(a, b, rcond=None)
        test_x = x[ended, cut:].reshape(-1, x.shape[-1])
        test_y = finals[cut:].reshape(-1)
        predicted = test_x @ w
        scores.append(1 - ((test_y - predicted) ** 2).mean() / test_y.var())
        guess = (x[ended] @ w).reshape(n_games, n_players)
        if n_players > 1:
            margin = finals[:, 0] - finals[:, 1:].max(axis=1)
            guessed = guess[:, 0] - guess[:, 1:].max(axis=1)
            spreads.append(float((margin - guessed).std()))
        else:
            spreads.append(float((finals[:, 0] - guess[:, 0]).std()))
        weights.append(w)
    return np.array(weights), np.array(spreads), np.array(scores)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategies", default="tuned_builder_2p,tuned_builder_2p")
    parser.add_argument("--games", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    specs = [resolve_strategy(name) for name in split_strategies(args.strategies)]
    x, finals = collect(load_catalog(), specs, args.games, args.seed)
    weights, spreads, scores = fit(x, finals)
    print(f"# {args.games} games of {args.strategies}, seed {args.seed}: held-out R^2 "
          + ", ".join(f"{s:.3f}" for s in scores))  # fmt: skip
    table = "1-2" if len(specs) <= 2 else "3-5"
    print(f"# VALUE_WEIGHTS[{table} players]:")
    print(
        "    ["
        + ",\n     ".join("[" + ", ".join(f"{v:.4g}" for v in w) + "]" for w in weights)
        + "],"
    )
    print(f"# VALUE_SPREAD[{table} players]: [" + ", ".join(f"{v:.3g}" for v in spreads) + "]")
    return 0


if __name__ == "__main__":
    from sim.core.cli import guarded

    sys.exit(guarded(main, "python -m strategies.tools.fit_value"))
