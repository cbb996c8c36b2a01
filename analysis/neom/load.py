"""Column groups of NEOM's stored tables the analysis reads (no compiled code imported)."""

from sim.neom import constants as K
from sim.neom.records import GAMES, PLAYERS

# Score categories as the players table names them, in SCORE_KEYS order.
SCORE_COLUMNS = PLAYERS.names[PLAYERS.names.index("tiles") :][: K.N_SCORE]
DRAFTED_COLUMNS = tuple(c for c in PLAYERS.names if c.startswith("cs_drafted"))
CS_GEN_COLUMNS = tuple(c for c in PLAYERS.names if c.startswith("cs_gen"))
DISCARDED_CS_COLUMNS = tuple(c for c in GAMES.names if c.startswith("discarded_cs"))
