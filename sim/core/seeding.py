"""Which deal each game of a run plays, and which strategy sits in which seat.

A run has one strategy per seat (its strategy list has ``n_players`` entries) and numbers its
games 0..n_games-1. A game's outcome depends only on the run key, its deal index and its seat
assignment, all computed here from the game id alone, so a batch of games can be played anywhere
and in any order.

- ``fixed``: game g plays deal g; seat s plays strategy s.
- ``rotate``: each deal is played once per rotation of the seats: game g = d * P + r plays
  deal d with seat s playing strategy (s + r) % P, so every strategy meets the same deals from
  every seat.
- ``shuffle``: game g plays deal g with a random seat order drawn from (key, g).
"""

import numpy as np

from sim.core.errors import UserError
from sim.core.jit import njit
from sim.core.rng import seed_state, shuffle, stream_seed

SEAT_MODES = ("fixed", "rotate", "shuffle")

# Streams 0 (deal) and 1..MAX_SEATS (seats' strategies) belong to the games' engines; every
# game seats at most MAX_SEATS players (the registry's games: 5).
MAX_SEATS = 5
SEAT_ORDER_STREAM = 1 + MAX_SEATS


def check_game_count(seats: str, n_games: int, n_players: int) -> None:
    """Reject a game count the seat mode cannot honour (rotate needs whole rotations)."""
    if seats == "rotate" and n_games % n_players:
        lower = n_games - n_games % n_players
        use = f"{lower} or {lower + n_players}" if lower else f"{n_players} or more"
        raise UserError(
            f"--games {n_games} is not a multiple of --players {n_players}: with --seats rotate "
            f"each deal is played once per seat rotation (use {use})"
        )


def assign_seats(
    key: np.ndarray, seats: str, game_ids: np.ndarray, n_players: int
) -> tuple[np.ndarray, np.ndarray]:
    """Deal indices (int64[n]) and seat strategies (int32[n, n_players]) of the given games."""
    game_ids = np.asarray(game_ids, dtype=np.int64)
    seat = np.arange(n_players, dtype=np.int32)
    if seats == "fixed":
        return game_ids.copy(), np.tile(seat, (game_ids.shape[0], 1))
    if seats == "rotate":
        rotation = (game_ids % n_players).astype(np.int32)
        seat_strategy = (seat[None, :] + rotation[:, None]) % n_players
        return game_ids // n_players, seat_strategy.astype(np.int32)
    if seats == "shuffle":
        seat_strategy = np.empty((game_ids.shape[0], n_players), dtype=np.int32)
        _shuffled_seats(key, game_ids, seat_strategy)
        return game_ids.copy(), seat_strategy
    raise ValueError(f"unknown seat mode {seats!r}")


@njit
def _shuffled_seats(key, game_ids, seat_strategy):
    state = np.zeros(2, dtype=np.uint64)
    n_players = seat_strategy.shape[1]
    for i in range(game_ids.shape[0]):
        seed_state(state, stream_seed(key, game_ids[i], SEAT_ORDER_STREAM))
        for s in range(n_players):
            seat_strategy[i, s] = s
        shuffle(state, seat_strategy[i], n_players)
