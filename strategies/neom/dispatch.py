"""One compiled entry point for every strategy decision, dispatching on the strategy's id.

``choose`` gets the legal options of one decision (see the D_* and OPT_* constants of
``sim.neom.engine``) in ``game.options`` and the game (``sim.neom.state.Game``), which it only
reads: the game counters, every player's public state and city, the goods each city offers,
and the deciding seat's own hand and cornerstones.
``memo`` is the seat's scratch kept across its decisions (``strategies.evaluate.memo_holds``):
a strategy may keep there what it computed for a state, and recomputes whatever the state no
longer matches. It returns the index of the chosen option. Add a strategy: an id in
``strategies.registry`` and one ``elif`` here.
"""

from sim.core.jit import njit
from strategies.neom import basic
from strategies.neom.evaluate import choose_evaluated
from strategies.neom.example import choose_miser
from strategies.neom.registry import EVALUATED_ID, GREEDY_ID, MISER_ID, RANDOM_ID, ROLLOUT_ID
from strategies.neom.rollout import choose_rollout


@njit
def choose(strategy_id, params, rng_state, decision, n_options, seat, game, memo):
    """The index of the option of ``game.options[:n_options]`` the strategy picks for
    ``seat``; ``params``: its parameters, ``rng_state``: the seat's stream, ``game``: the
    bundle (``sim.neom.state``), ``memo``: the seat's scratch."""
    if strategy_id == RANDOM_ID:
        return basic.choose_random(rng_state, n_options)
    elif strategy_id == GREEDY_ID:
        return basic.choose_greedy(params, rng_state, decision, n_options, seat, game, memo)
    elif strategy_id == EVALUATED_ID:
        return choose_evaluated(params, rng_state, decision, n_options, seat, game, memo)
    elif strategy_id == ROLLOUT_ID:
        return choose_rollout(params, rng_state, decision, n_options, seat, game)
    elif strategy_id == MISER_ID:
        return choose_miser(rng_state, game.options, n_options)
    return -1
