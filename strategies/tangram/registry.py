"""Tangram City strategies: names, the integer ids the compiled dispatch switches on, and
their parameters (name, default, allowed range).

Every strategy gets a float64 vector of ``N_PARAMS`` entries, filled from its defaults and a
``name:param=value,...`` spec (``sim.core.strategies``).
"""

from functools import partial
from pathlib import Path

import numpy as np

from sim.core import strategies as core
from sim.core.game import StrategyInfo, StrategyRegistry
from sim.core.strategies import StrategySpec
from sim.tangram.constants import N_ROUNDS

N_PARAMS = 4

RANDOM_ID = 0
GREEDY_ID = 1
PLANNER_ID = 2

# Parameter slots.
GREEDY_BALANCE_WEIGHT = 0
PLANNER_SAMPLES = 0
PLANNER_CANDIDATES = 1
PLANNER_BALANCE_WEIGHT = 2
PLANNER_FIRST_ROUND = 3

MAX_SAMPLES = 64
MAX_CANDIDATES = 32

STRATEGIES = StrategyRegistry(
    strategies=(
        StrategyInfo(
            "random",
            RANDOM_ID,
            "uniform choice among the legal options of every decision (placements of the card's "
            "tile in every orientation, colour and position, or declining it; fountains or none)",
        ),
        StrategyInfo(
            "greedy",
            GREEDY_ID,
            "best immediate value: the points the board would score if the round ended now "
            "(largest rectangle, planning bonus, plus balance_weight times the balance bonus of "
            "the current counts); then building over declining, then the better balance bonus, "
            "the most fully built squares, the most edges touching built quarters or the "
            "border, and at random",
            ("balance_weight",),
            (0.0,),
            ((0.0, 10.0),),
        ),
        StrategyInfo(
            "planner",
            PLANNER_ID,
            "looks ahead with what the seat knows (its hand or shared card, the face-up cards, "
            "the exact set of tiles still to come): greedy's best `candidates` options are each "
            "played to the end of the game on `samples` random orders of the unseen cards, "
            "every later decision made by greedy; takes the best mean of the points still to "
            "score. It searches from round `first_round` on; before, it plays greedy's choice",
            ("samples", "candidates", "balance_weight", "first_round"),
            (10.0, 4.0, 0.0, 3.0),
            (
                (1.0, float(MAX_SAMPLES)),
                (1.0, float(MAX_CANDIDATES)),
                (0.0, 10.0),
                (1.0, float(N_ROUNDS)),
            ),
            ("samples", "candidates", "first_round"),
        ),
    ),
    n_params=N_PARAMS,
    # the tuned planner sets (neom tune/verify --game tangram) and the named field `strong`
    # (for each player count its verified set in every seat), the check field of report --check
    named_sets=Path(__file__).with_name("tuned.toml"),
    # weakest first (``neom ladder --game tangram``); each rung won >= 0.6 of 600 2-player games
    # against the one below (docs/tangram.md)
    ladder=("random", "greedy", "planner", "planner:samples=16,candidates=8"),
)

# The generic spec functions of sim.core.strategies, bound to Tangram City's strategies.
parse_strategy = partial(core.parse_strategy, STRATEGIES)


def as_spec(strategy) -> StrategySpec:
    """A StrategySpec from a spec string or anything with ``id``, ``params`` (and ``spec``)."""
    if isinstance(strategy, str):
        return parse_strategy(strategy)
    if isinstance(strategy, StrategySpec):
        return strategy
    params = np.zeros(N_PARAMS, dtype=np.float64)
    given = np.asarray(strategy.params, dtype=np.float64)[:N_PARAMS]
    params[: given.shape[0]] = given
    name = getattr(strategy, "name", str(strategy.id))
    return StrategySpec(name, int(strategy.id), params, getattr(strategy, "spec", name))
