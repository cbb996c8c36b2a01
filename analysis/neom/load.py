"""Column groups of NEOM's stored tables the analysis reads, and a chunk's events as arrays (no
compiled code imported)."""

from dataclasses import dataclass

import numpy as np

from analysis.core.tabulate import game_rows
from sim.neom import constants as K
from sim.neom.records import GAMES, PLAYERS

# Score categories as the players table names them, in SCORE_KEYS order.
SCORE_COLUMNS = PLAYERS.names[PLAYERS.names.index("tiles") :][: K.N_SCORE]
DRAFTED_COLUMNS = tuple(c for c in PLAYERS.names if c.startswith("cs_drafted"))
CS_GEN_COLUMNS = tuple(c for c in PLAYERS.names if c.startswith("cs_gen"))
DISCARDED_CS_COLUMNS = tuple(c for c in GAMES.names if c.startswith("discarded_cs"))


@dataclass(frozen=True)
class EventArrays:
    """A chunk's events table as int64 arrays, one entry per event; ``g``: the row of its game
    in the chunk's games table."""

    g: np.ndarray
    kind: np.ndarray
    turn: np.ndarray
    player: np.ndarray
    tile: np.ndarray
    other: np.ndarray
    coins: np.ndarray


def event_arrays(chunk) -> EventArrays:
    """The events of ``chunk`` (which has an events table) as :class:`EventArrays`."""
    events = chunk.events
    columns = ("kind", "turn", "player", "tile", "other", "coins")
    return EventArrays(
        g=game_rows(chunk, events["game_id"].to_numpy()).astype(np.int64),
        **{c: events[c].to_numpy().astype(np.int64) for c in columns},
    )
