"""Matches between strategies straight on the compiled ``play_batch`` of their lineup
(``strategies.neom.entries``; no files): the shared helper of ``neom tune``, the ladder and the
tests.

Seats rotate so that every strategy sits in every seat equally often, and game i always uses
deal i of the master seed: two calls with the same seed play the same deals (common random
numbers), whatever strategies sit at the table.
"""

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from sim.core import rng
from sim.core.batch import STRATEGY_ID_DTYPE
from sim.neom import constants as K
from sim.neom import records as R
from sim.neom.tables import make_rules
from strategies.neom.entries import play_batch_for


@dataclass(frozen=True)
class MatchResult:
    players: np.ndarray  # int64[n_games, n_players, N_PLAYER_COLS]
    games: np.ndarray  # int64[n_games, N_GAME_COLS]
    seconds: float  # wall time of play_batch calls

    def strategy_column(self, column: int, which: int) -> np.ndarray:
        """``column`` of every seat played by strategy ``which`` (index in the match's list)."""
        mask = self.players[:, :, R.P_STRATEGY] == which
        return self.players[:, :, column][mask]

    def win_share(self, which: int) -> float:
        """Wins of strategy ``which`` per game, shared wins split between the winners."""
        wins = self.players[:, :, R.P_WIN].astype(np.float64)
        share = wins / np.maximum(wins.sum(axis=1, keepdims=True), 1)
        mask = self.players[:, :, R.P_STRATEGY] == which
        return float(share[mask].sum() / self.players.shape[0])


def rotated_seats(n_games: int, lineup: list[int]) -> np.ndarray:
    """Seat assignment int32[n_games, n_players]: game i shifts ``lineup`` by i seats."""
    lineup = np.asarray(lineup, dtype=np.int32)
    shifts = np.arange(n_games)[:, None]
    return lineup[(np.arange(lineup.size)[None, :] + shifts) % lineup.size]


def play_match(
    tables,
    specs,
    lineup: list[int],
    n_games: int,
    seed: int,
    variant: int = K.V_STANDARD,
    workers: int = 1,
    first_deal: int = 0,
) -> MatchResult:
    """Play ``n_games`` with seat strategies ``specs[lineup[s]]`` rotated game by game.

    ``workers`` > 1 splits the games over threads (the compiled game releases the GIL)."""
    import time

    n_players = len(lineup)
    rules = make_rules(variant)
    key = rng.master_key(seed)
    ids = np.array([spec.id for spec in specs], dtype=STRATEGY_ID_DTYPE)
    params = np.stack([spec.params for spec in specs]).astype(np.float64)
    seats = rotated_seats(n_games, lineup)
    deals = np.arange(first_deal, first_deal + n_games, dtype=np.int64)
    games = np.zeros((n_games, R.N_GAME_COLS), dtype=np.int64)
    players = np.zeros((n_games, R.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int64)
    no_events = np.zeros((0, R.N_EVENT_COLS), dtype=np.int64)
    play_batch = play_batch_for(ids)

    def run(part: slice) -> None:
        play_batch(
            key,
            deals[part],
            deals[part],
            seats[part],
            ids,
            params,
            tables.arrays,
            rules,
            games[part],
            players[part],
            no_events,
        )

    workers = max(1, min(workers, n_games, os.cpu_count() or 1))
    bounds = np.linspace(0, n_games, workers + 1).astype(int)
    parts = [slice(bounds[k], bounds[k + 1]) for k in range(workers)]
    start = time.perf_counter()
    if workers == 1:
        run(parts[0])
    else:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(run, parts))
    seconds = time.perf_counter() - start
    return MatchResult(players[:, :n_players], games, seconds)
