"""The searches' decisions inside the game loop (draft, purchases, disasters, cornerstone
effects: their playout policy's choice), compiled on their own (``strategies.neom.pieces``).
Counted (NRT): the policy's weights are allocated per decision (``choose_with_policy``)."""

import numpy as np

from sim.core.jit import cfunc
from strategies.neom.dispatch import choose_with_policy
from strategies.neom.pointer import DECISION


@cfunc(DECISION)
def decide(game, which, seat, decision, n_options):
    strategy_id = np.int64(game.strategy_ids[which])
    params = game.strategy_params[which]
    rng_state = game.strat_rng[seat]
    return choose_with_policy(
        strategy_id, params, rng_state, decision, n_options, seat, game, game.memos[seat]
    )
