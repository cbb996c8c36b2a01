"""Strategy names, integer ids and parameters.

The compiled game dispatches on an integer id (``strategies.dispatch.choose``); every strategy
gets a float64 parameter vector of N_PARAMS entries, filled from its defaults and the user's
``name:param=value,...`` spec.
"""

from dataclasses import dataclass

import numpy as np

from sim.core.errors import UserError
from strategies.neom.archetypes import ARCHETYPES, PARAM_NAMES

N_PARAMS = 16

RANDOM_ID = 0
GREEDY_ID = 1
EVALUATED_ID = 2  # the archetypes: strategies.evaluate with their own weights
ROLLOUT_ID = 3
MISER_ID = 4  # the worked example of docs/strategies.md

# Parameter slots of greedy.
GREEDY_MONEY_WEIGHT = 0


@dataclass(frozen=True)
class StrategyInfo:
    name: str
    id: int
    description: str
    param_names: tuple[str, ...] = ()
    defaults: tuple[float, ...] = ()


@dataclass(frozen=True)
class StrategySpec:
    name: str
    id: int
    params: np.ndarray  # float64[N_PARAMS]
    spec: str  # canonical: name, then every parameter that differs from its default


_STRATEGIES = (
    StrategyInfo("random", RANDOM_ID, "uniform choice among the legal options of every decision"),
    StrategyInfo(
        "greedy",
        GREEDY_ID,
        "best immediate gain in final score (the city scored as if the game ended now); "
        "money_weight scales the VP of money",
        ("money_weight",),
        (1.0,),
    ),
    *(
        StrategyInfo(a.name, EVALUATED_ID, a.description, PARAM_NAMES, a.defaults())
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
    ),
    StrategyInfo(
        "miser", MISER_ID, "never spends a coin it can keep (worked example of a new strategy)"
    ),
)
STRATEGIES = {info.name: info for info in _STRATEGIES}


def list_strategies() -> list[StrategyInfo]:
    return list(_STRATEGIES)


def parse_strategy(spec: str) -> StrategySpec:
    """``name`` or ``name:param=value,...`` -> StrategySpec; UserError on any mistake."""
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    info = STRATEGIES.get(name)
    if info is None:
        valid = ", ".join(STRATEGIES)
        raise UserError(f"unknown strategy {name!r} in {spec!r}; valid strategies: {valid}")
    params = np.zeros(N_PARAMS, dtype=np.float64)
    params[: len(info.defaults)] = info.defaults
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in info.param_names:
            known = ", ".join(info.param_names) or "none"
            raise UserError(
                f"bad parameter {item!r} for strategy {name!r} in {spec!r}; "
                f"expected param=value with param one of: {known}"
            )
        try:
            params[info.param_names.index(key)] = float(value)
        except ValueError:
            raise UserError(
                f"parameter {key!r} of strategy {name!r} in {spec!r} is not a number: {value!r}"
            ) from None
    changed = [
        f"{key}={params[k]:g}"
        for k, key in enumerate(info.param_names)
        if params[k] != info.defaults[k]
    ]
    canonical = name + (":" + ",".join(changed) if changed else "")
    return StrategySpec(name, info.id, params, canonical)
