"""The evaluated strategies' decisions (the archetypes, the tuned sets, the searches' playout
policy), compiled on their own (``strategies.neom.pieces``)."""

from sim.core.jit import cfunc
from strategies.neom.evaluate import choose_evaluated
from strategies.neom.pointer import DECISION


@cfunc(DECISION, _nrt=False)
def decide(game, which, seat, decision, n_options):
    params = game.strategy_params[which]
    memo = game.memos[seat]
    return choose_evaluated(params, game.strat_rng[seat], decision, n_options, seat, game, memo)
