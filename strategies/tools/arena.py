"""NEOM matches on the game-generic match player (:mod:`sim.core.match`): the shared helper
of NEOM's ladder tests and benchmarks, with NEOM's variant as a rules shorthand.

Seats rotate so that every strategy sits in every seat equally often, and game i always uses
deal i of the master seed: two calls with the same seed play the same deals (common random
numbers), whatever strategies sit at the table.
"""

from sim.core import match
from sim.core.registry import get_game
from sim.neom import constants as K
from sim.neom.tables import make_rules

MatchResult = match.MatchResult
rotated_seats = match.rotated_seats


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
    """Play ``n_games`` of NEOM with seat strategies ``specs[lineup[s]]`` rotated game by game
    (``variant``: NEOM's rules variant; ``workers`` > 1 splits the games over threads)."""
    return match.play_match(
        get_game("neom"),
        tables,
        specs,
        lineup,
        n_games,
        seed,
        rules=make_rules(variant),
        workers=workers,
        first_deal=first_deal,
    )
