"""A batch of games through a game's compiled ``play_batch``, and its outputs as record arrays.

``play_arrays`` allocates the int64 outputs the interface prescribes (``sim.core.game``) and
plays the games; ``records`` turns each output into rows of the game's record dtype, checking
every value against its field's type: a value that does not fit is an error naming the table,
column, game and value, never a silent wrap.
"""

from dataclasses import dataclass

import numpy as np

from sim.core.errors import UserError
from sim.core.game import Game

STRATEGY_ID_DTYPE = np.int32  # every caller passes strategy ids in this dtype: one compile


@dataclass(frozen=True)
class BatchOutput:
    games: np.ndarray  # int64[n, columns of games]
    players: np.ndarray  # int64[n, max_players, columns of players]; unused seats -1
    events: np.ndarray | None  # int64[n * events_per_game, columns of events]; None: not kept


def play_arrays(
    game: Game,
    key,
    game_ids,
    deal_indices,
    seat_strategy,
    strategy_ids,
    strategy_params,
    data,
    rules,
    events: bool,
) -> BatchOutput:
    """Play the games through ``game.play_batch`` (arguments as in ``sim.core.game``)."""
    n = len(game_ids)
    columns = {table: len(game.tables[table].names) for table in game.tables}
    games = np.empty((n, columns["games"]), dtype=np.int64)
    players = np.empty((n, game.max_players, columns["players"]), dtype=np.int64)
    event_rows = np.empty((n * game.events_per_game if events else 0, columns["events"]), np.int64)
    game.play_batch_for(strategy_ids)(
        key,
        np.asarray(game_ids, dtype=np.int64),
        np.asarray(deal_indices, dtype=np.int64),
        np.asarray(seat_strategy, dtype=np.int32),
        np.asarray(strategy_ids, dtype=STRATEGY_ID_DTYPE),
        np.asarray(strategy_params, dtype=np.float64),
        data,
        rules,
        games,
        players,
        event_rows,
    )
    return BatchOutput(games, players, event_rows if events else None)


class ValueOutOfRange(UserError):
    """A game computed a value its table's storage type cannot hold."""


def records(values: np.ndarray, dtype: np.dtype, table: str, game_ids) -> np.ndarray:
    """Rows of int64 ``values`` (columns = ``dtype``'s fields) as a record array of ``dtype``;
    ``game_ids[i]`` names row i's game in the error of a value that does not fit."""
    out = np.empty(values.shape[0], dtype=dtype)
    for col, name in enumerate(dtype.names):
        column = values[:, col]
        info = np.iinfo(dtype[name])
        bad = np.flatnonzero((column < info.min) | (column > info.max))
        if bad.size:
            row = bad[0]
            raise ValueOutOfRange(
                f"game {game_ids[row]}: {table} column {name!r} = {column[row]} does not fit "
                f"{info.dtype} ({info.min}..{info.max}); the data file's values are too large"
            )
        out[name] = column
    return out


def used_event_rows(games: np.ndarray, n_events_col: int, events_per_game: int) -> np.ndarray:
    """Indices of the event rows the games wrote: game i's block starts at i * events_per_game
    and holds ``games[i, n_events_col]`` rows."""
    counts = games[:, n_events_col]
    starts = np.arange(games.shape[0], dtype=np.int64) * events_per_game
    offsets = np.cumsum(counts) - counts
    return np.repeat(starts - offsets, counts) + np.arange(counts.sum(), dtype=np.int64)
