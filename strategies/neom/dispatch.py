"""Every strategy's decision for Python callers holding a ``Game`` (tests, tools), dispatching
on the strategy's id. The game loop does not come here: it calls each strategy family compiled
on its own at its address (``strategies.neom.pieces``), and each family's ``decide`` calls the
same choice functions as the branches below.

``choose`` gets the legal options of one decision (see the D_* and OPT_* constants of
``sim.neom.engine``) in ``game.options`` and the game (``sim.neom.state.Game``), which it only
reads: the game counters, every player's public state and city, the goods each city offers,
and the deciding seat's own hand and cornerstones.
``memo`` is the seat's scratch kept across its decisions (``strategies.evaluate.memo_holds``):
a strategy may keep there what it computed for a state, and recomputes whatever the state no
longer matches. It returns the index of the chosen option. Add a strategy: an id in
``strategies.registry``, its family's ``decide`` (docs/engine.md, "Strategies plugged in by
address") and one ``elif`` here. ``game`` is the game's view
(``sim.neom.state.view``): ``choose`` is compiled without reference counts, and Python callers
holding a ``Game`` go through ``choose_in``.

The searches (``registry.SEARCH_IDS``) take their selections and actions outside the game loop
(``strategies.neom.search``); here they take every other decision (draft, purchases, disasters,
cornerstone effects) with their playout policy (the expert's weights for the table size,
``expert_policy``; rollout's is the builder).
"""

import numpy as np

from sim.core.jit import njit
from sim.neom import engine as E
from sim.neom.state import view
from strategies.neom import basic
from strategies.neom.archetypes import ARCHETYPES, N_WEIGHTS
from strategies.neom.evaluate import choose_evaluated, evaluated_values
from strategies.neom.example import choose_miser
from strategies.neom.registry import (
    EVALUATED_ID,
    EXPERT_ID,
    GREEDY_ID,
    MISER_ID,
    N_PARAMS,
    RANDOM_ID,
    ROLLOUT_ID,
    X_POLICY_MANY,
)

# Rollout's policy, the builder's weights. Numba freezes a global array as a read-only
# constant, and a read-only array is another type: handed to the shared evaluation as is, it
# would compile that whole evaluation a second time (minutes). Callers take a writable copy.
ROLLOUT_POLICY = np.zeros(N_PARAMS)
ROLLOUT_POLICY[: len(ARCHETYPES[0].defaults())] = next(
    a for a in ARCHETYPES if a.name == "builder"
).defaults()


@njit
def rollout_policy():
    return ROLLOUT_POLICY.copy()


@njit
def expert_policy(params, n_players):
    """The expert's policy weights at this table size (its first weights with 1-2 players,
    its *_4p ones with 3-5), as the evaluation reads them (the other slots 0)."""
    policy = np.zeros(N_PARAMS)
    first = 0 if n_players <= 2 else X_POLICY_MANY
    policy[:N_WEIGHTS] = params[first : first + N_WEIGHTS]
    return policy


@njit
def choose_with_policy(strategy_id, params, rng_state, decision, n_options, seat, game, memo):
    """A search's decision taken in the loop: its playout policy's choice (allocates the
    policy's weights, so it stays out of ``choose``, which is compiled without NRT)."""
    if strategy_id == ROLLOUT_ID:
        policy = rollout_policy()
    else:
        policy = expert_policy(params, game.gstate[E.GS_N_PLAYERS])
    return choose_evaluated(policy, rng_state, decision, n_options, seat, game, memo)


@njit(_nrt=False)
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
    elif strategy_id == EXPERT_ID or strategy_id == ROLLOUT_ID:
        return choose_with_policy(
            strategy_id, params, rng_state, decision, n_options, seat, game, memo
        )
    elif strategy_id == MISER_ID:
        return choose_miser(rng_state, game.options, n_options)
    return -1


@njit
def choose_in(strategy_id, params, rng_state, decision, n_options, seat, game, memo):
    """``choose`` for a ``Game`` held in Python (tests, tools): the loop hands ``choose`` a
    view (``sim.neom.state.view``), and so does this, so that ``choose`` and every strategy
    under it compile for one type."""
    return choose(strategy_id, params, rng_state, decision, n_options, seat, view(game), memo)


@njit
def values_in(params, decision, n_options, seat, game, memo, values):
    """``evaluate.evaluated_values`` for a ``Game`` held in Python (tools such as
    ``analysis.neom.cornerstone_why``): the option values an evaluated strategy would choose
    from, written into ``values``. A module-level function, so the compile cache keeps it (a
    function compiled inside another is compiled again by every process)."""
    evaluated_values(params, decision, n_options, seat, view(game), memo, values)
