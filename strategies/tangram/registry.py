"""Tangram City strategies: names, the integer ids the compiled dispatch switches on, and
their parameters (name, default, allowed range).

Every strategy gets a float64 vector of ``N_PARAMS`` entries, filled from its defaults and a
``name:param=value,...`` spec (:func:`parse_strategy`).
"""

from dataclasses import dataclass

import numpy as np

from sim.core.errors import UserError
from sim.core.game import StrategyInfo, StrategyRegistry

N_PARAMS = 3

RANDOM_ID = 0
GREEDY_ID = 1
PLANNER_ID = 2

# Parameter slots.
GREEDY_BALANCE_WEIGHT = 0
PLANNER_SAMPLES = 0
PLANNER_CANDIDATES = 1
PLANNER_BALANCE_WEIGHT = 2

MAX_SAMPLES = 64
MAX_CANDIDATES = 32

_REGISTRY = dict(
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
            "score",
            ("samples", "candidates", "balance_weight"),
            (6.0, 4.0, 0.0),
            ((1.0, float(MAX_SAMPLES)), (1.0, float(MAX_CANDIDATES)), (0.0, 10.0)),
        ),
    ),
    n_params=N_PARAMS,
    ladder=("random", "greedy", "planner"),  # weakest first (main's ``neom ladder``)
)
# main's StrategyRegistry has grown ``ladder``: give the fields this core's registry has.
STRATEGIES = StrategyRegistry(
    **{k: v for k, v in _REGISTRY.items() if k in StrategyRegistry.__dataclass_fields__}
)
BY_NAME = STRATEGIES.by_name()
INTEGER_PARAMS = {("planner", "samples"), ("planner", "candidates")}


@dataclass(frozen=True)
class StrategySpec:
    name: str
    id: int
    params: np.ndarray  # float64[N_PARAMS]
    spec: str  # canonical: the name, then every parameter that differs from its default


def parse_strategy(spec: str) -> StrategySpec:
    """``name`` or ``name:param=value,...``; UserError naming the mistake."""
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    info = BY_NAME.get(name)
    if info is None:
        raise UserError(
            f"unknown strategy {name!r} in {spec!r}; valid Tangram City strategies: "
            f"{', '.join(BY_NAME)}"
        )
    params = np.zeros(N_PARAMS, dtype=np.float64)
    params[: len(info.defaults)] = info.defaults
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in info.param_names:
            known = ", ".join(info.param_names) or "none"
            raise UserError(
                f"bad parameter {item!r} for strategy {name!r} in {spec!r}; expected "
                f"param=value with param one of: {known}"
            )
        try:
            number = float(value)
        except ValueError:
            raise UserError(
                f"parameter {key!r} of strategy {name!r} in {spec!r} is not a number: {value!r}"
            ) from None
        k = info.param_names.index(key)
        low, high = info.bounds[k]
        if not low <= number <= high:
            raise UserError(
                f"parameter {key!r} of strategy {name!r} in {spec!r}: {number:g} is outside "
                f"[{low:g}, {high:g}]"
            )
        if (name, key) in INTEGER_PARAMS and number != int(number):
            raise UserError(
                f"parameter {key!r} of strategy {name!r} in {spec!r}: must be a whole number"
            )
        params[k] = number
    changed = [
        f"{key}={params[k]:g}"
        for k, key in enumerate(info.param_names)
        if params[k] != info.defaults[k]
    ]
    return StrategySpec(name, info.id, params, name + (":" + ",".join(changed) if changed else ""))


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
