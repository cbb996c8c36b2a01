"""Matches between strategies of any game, straight on its compiled ``play_batch`` (no files):
the engine of ``neom tune`` and ``neom verify`` (and NEOM's arena).

Seats rotate so that every strategy sits in every seat equally often, and game i always uses
deal i of the master seed: two calls with the same seed play the same deals (common random
numbers), whatever strategies sit at the table. Only the Game interface is used: its entry for
the lineup, its default rules and the players table's required columns.
"""

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from sim.core import rng
from sim.core.batch import STRATEGY_ID_DTYPE
from sim.core.game import Game


@dataclass(frozen=True)
class MatchResult:
    players: np.ndarray  # int64[n_games, n_players, the players table's columns]
    games: np.ndarray  # int64[n_games, the games table's columns]
    seconds: float  # wall time of play_batch calls
    columns: tuple[str, ...]  # the players table's column names, in order

    def column(self, name: str) -> np.ndarray:
        """int64[n_games, n_players]: the players table's column ``name``."""
        return self.players[:, :, self.columns.index(name)]

    def strategy_column(self, name: str, which: int) -> np.ndarray:
        """Column ``name`` of every seat played by strategy ``which`` (its index in the list)."""
        return self.column(name)[self.column("strategy") == which]

    def game_shares(self, which: int) -> np.ndarray:
        """Strategy ``which``'s win share in each game (a k-way shared win counts 1/k)."""
        wins = self.column("win").astype(np.float64)
        share = wins / np.maximum(wins.sum(axis=1, keepdims=True), 1.0)
        return (share * (self.column("strategy") == which)).sum(axis=1)

    def win_share(self, which: int) -> float:
        """Wins of strategy ``which`` per game, shared wins split between the winners."""
        return float(self.game_shares(which).mean())


def rotated_seats(n_games: int, lineup: list[int]) -> np.ndarray:
    """Seat assignment int32[n_games, n_players]: game i shifts ``lineup`` by i seats."""
    lineup = np.asarray(lineup, dtype=np.int32)
    shifts = np.arange(n_games)[:, None]
    return lineup[(np.arange(lineup.size)[None, :] + shifts) % lineup.size]


def play_match(
    game: Game,
    data,
    specs,
    lineup: list[int],
    n_games: int,
    seed: int,
    rules: np.ndarray | None = None,
    workers: int = 1,
    first_deal: int = 0,
) -> MatchResult:
    """Play ``n_games`` of ``game`` with seat strategies ``specs[lineup[s]]`` rotated game by
    game, on deals ``first_deal ...`` of ``seed``. ``data``: anything with the compiled
    ``arrays`` (:class:`sim.core.game.GameData`); ``rules``: the game's default when None.

    ``workers`` > 1 splits the games over threads (the compiled game releases the GIL)."""
    n_players = len(lineup)
    rules = game.make_rules() if rules is None else rules
    key = rng.master_key(seed)
    ids = np.array([spec.id for spec in specs], dtype=STRATEGY_ID_DTYPE)
    params = np.stack([spec.params for spec in specs]).astype(np.float64)
    seats = rotated_seats(n_games, lineup)
    deals = np.arange(first_deal, first_deal + n_games, dtype=np.int64)
    columns = game.columns("players")
    games = np.zeros((n_games, len(game.columns("games"))), dtype=np.int64)
    players = np.zeros((n_games, game.max_players, len(columns)), dtype=np.int64)
    no_events = np.zeros((0, len(game.columns("events"))), dtype=np.int64)
    play_batch = game.play_batch_for(ids)

    def run(part: slice) -> None:
        play_batch(
            key,
            deals[part],
            deals[part],
            seats[part],
            ids,
            params,
            data.arrays,
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
    return MatchResult(players[:, :n_players], games, seconds, columns)
