"""Miser's decisions, compiled on their own (``strategies.neom.pieces``)."""

from sim.core.jit import cfunc
from strategies.neom.example import choose_miser
from strategies.neom.pointer import DECISION
from strategies.neom.registry import MISER_ID


@cfunc(DECISION, _nrt=False)
def decide(game, which, seat, decision, n_options):
    if game.strategy_ids[which] == MISER_ID:
        return choose_miser(game.strat_rng[seat], game.options, n_options)
    return -1
