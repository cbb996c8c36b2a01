"""Strategy names, integer ids and parameters.

The compiled game dispatches on an integer id (``strategies.dispatch.choose``); every strategy
gets a float64 parameter vector of N_PARAMS entries, filled from its defaults and the user's
``name:param=value,...`` spec.
"""

from functools import partial
from pathlib import Path

from sim.core import strategies as core
from sim.core.game import StrategyInfo, StrategyRegistry
from strategies.neom.archetypes import ARCHETYPES, PARAM_NAMES

N_PARAMS = 16

RANDOM_ID = 0
GREEDY_ID = 1
EVALUATED_ID = 2  # the archetypes: strategies.neom.evaluate with their own weights
ROLLOUT_ID = 3
MISER_ID = 4  # the worked example of docs/strategies.md

# Parameter slots of greedy.
GREEDY_MONEY_WEIGHT = 0

# Allowed ranges: weights far beyond these only make a strategy degenerate, and the compiled
# code turns rollout's counts into integers.
WEIGHT_BOUNDS = (-1000.0, 1000.0)
MAX_PLAYOUTS = 10_000

_STRATEGIES = (
    StrategyInfo("random", RANDOM_ID, "uniform choice among the legal options of every decision"),
    StrategyInfo(
        "greedy",
        GREEDY_ID,
        "best immediate gain in final score (the city scored as if the game ended now); "
        "money_weight scales the VP of money",
        ("money_weight",),
        (1.0,),
        (WEIGHT_BOUNDS,),
    ),
    *(
        StrategyInfo(
            a.name,
            EVALUATED_ID,
            a.description,
            PARAM_NAMES,
            a.defaults(),
            (WEIGHT_BOUNDS,) * len(PARAM_NAMES),
        )
        for a in ARCHETYPES
    ),
    StrategyInfo(
        "rollout",
        ROLLOUT_ID,
        "plays the builder's best few tile and action options out to the end of the game "
        "many times (every playout player chooses like the builder) and takes the best mean "
        "final margin; slow",
        ("playouts", "candidates"),
        (8.0, 4.0),
        ((1.0, MAX_PLAYOUTS), (1.0, 100.0)),
        ("playouts", "candidates"),
    ),
    StrategyInfo(
        "miser", MISER_ID, "never spends a coin it can keep (worked example of a new strategy)"
    ),
)
REGISTRY = StrategyRegistry(
    _STRATEGIES,
    N_PARAMS,
    Path(__file__).with_name("tuned.toml"),
    # weakest first; each rung won >= 0.6 of 2,000 2-player games against the one below
    # (docs/strategies.md, "The default ladder"); the top is the strong field's best 2p set
    ladder=("random", "miser", "greedy:money_weight=0", "greedy", "tuned_denier_2p"),
)
STRATEGIES = REGISTRY.by_name()


def list_strategies() -> list[StrategyInfo]:
    return list(_STRATEGIES)


# The generic spec functions of sim.core.strategies, bound to NEOM's strategies.
parse_strategy = partial(core.parse_strategy, REGISTRY)
load_strategy_file = partial(core.load_strategy_file, REGISTRY)
resolve_strategy = partial(core.resolve_strategy, REGISTRY)
