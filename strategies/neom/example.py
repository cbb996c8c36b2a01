"""A worked example of a new strategy (docs/strategies.md, "Writing your own"): ``miser``
never spends a coin it can keep. One compiled function here, one registry entry, a branch in
its family's ``decide`` (``strategies.neom.pieces.basic``) and one ``elif`` in
``strategies.neom.dispatch`` (Python callers); the engine is untouched."""

import numpy as np

from sim.core.jit import njit
from sim.neom import engine as E
from strategies.neom.evaluate import pick_best


@njit
def choose_miser(rng_state, options, n_options):
    """The option that costs the fewest coins (selling a tile earns 5, so it sells whenever
    it may); ties broken by the strategy's random stream."""
    values = -options[:n_options, E.OPT_COST].astype(np.float64)
    return pick_best(values, n_options, rng_state)
