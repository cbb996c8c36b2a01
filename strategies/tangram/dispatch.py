"""One compiled entry point for every strategy decision, dispatching on the strategy's id.

``choose`` gets the legal options of one decision (:mod:`strategies.tangram.view`), the seat's
own board, its view (what it knows) and returns the index of the chosen option, or -1 for an
unknown id (the game loop then raises). Add a strategy: an id in
``strategies.tangram.registry`` and one ``elif`` here.
"""

from sim.core.jit import njit
from strategies.tangram.basic import choose_greedy, choose_random
from strategies.tangram.planner import choose_planner
from strategies.tangram.registry import GREEDY_ID, PLANNER_ID, RANDOM_ID


@njit(_nrt=False)
def choose(strategy_id, params, state, options, n, board, view, data, rules, scratch):
    if strategy_id == RANDOM_ID:
        return choose_random(state, n)
    elif strategy_id == GREEDY_ID:
        return choose_greedy(params, state, options, n, board, data, scratch[-1], rules)
    elif strategy_id == PLANNER_ID:
        return choose_planner(params, state, options, n, board, view, data, rules, scratch)
    return -1
