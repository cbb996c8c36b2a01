"""Each NEOM strategy family compiled on its own, called by the game loop through its address
(``strategies.neom.pointer``).

A family is a module of this package holding one C function, ``decide`` (the ``DECISION``
signature, ``sim.core.jit.cfunc``), compiled and cached on its own the first time its address
is asked for: a lineup compiles or loads only the families it plays. ``addresses`` gives
``play_batch`` the address of each of a run's strategies (``game.strategy_fns``).

- random: no function; the loop draws the uniform choice itself (address 0, never called);
- ``basic``: miser;
- ``greedy``: greedy;
- ``evaluated``: the archetypes and the tuned sets (the searches' playout policy too);
- ``search_policy``: the searches' decisions taken inside the loop (draft, purchases, disasters,
  cornerstone effects) with their playout policy; their selections and actions are taken
  outside the loop (``strategies.neom.search``).
"""

import importlib

import numpy as np

from strategies.neom.registry import (
    EVALUATED_ID,
    EXPERT_ID,
    GREEDY_ID,
    MISER_ID,
    RANDOM_ID,
    ROLLOUT_ID,
    SEARCH_IDS,
)

FAMILIES = ("basic", "greedy", "evaluated", "search_policy")
FAMILY_OF = {
    MISER_ID: "basic",
    GREEDY_ID: "greedy",
    EVALUATED_ID: "evaluated",
    EXPERT_ID: "search_policy",
    ROLLOUT_ID: "search_policy",
}


def family_of(strategy_id: int) -> str | None:
    """The family whose function decides for ``strategy_id`` (None: the loop's random)."""
    if int(strategy_id) == RANDOM_ID:
        return None
    try:
        return FAMILY_OF[int(strategy_id)]
    except KeyError:
        raise ValueError(f"no compiled NEOM strategy has the id {strategy_id}") from None


def families_of(strategy_ids) -> list[str]:
    """The families a lineup with these ids compiles (the searches' playouts: evaluated)."""
    names = {family_of(i) for i in strategy_ids} - {None}
    if "search_policy" in names:
        names.add("evaluated")
    return sorted(names, key=FAMILIES.index)


def piece(family: str):
    """The family's decision (a ``sim.core.jit.LazyCFunc``: compiled on first use of its
    ``address``)."""
    return importlib.import_module(f"{__name__}.{family}").decide


def new_memos(n_tiles: int) -> np.ndarray:
    """The seats' scratch of a batch (``game.memos``): its width is the strategies' business
    (``strategies.neom.evaluate.memo_size``), so the loop takes it as it comes."""
    from sim.neom.records import MAX_PLAYERS
    from strategies.neom.evaluate import memo_size

    width = getattr(memo_size, "py_func", memo_size)(n_tiles)
    return np.zeros((MAX_PLAYERS, width), dtype=np.int64)


def addresses(strategy_ids) -> np.ndarray:
    """``game.strategy_fns`` of a run: the address of each strategy's decision, then (last
    slot) the playout policy's for a lineup with a search (0 when none)."""
    ids = [int(i) for i in strategy_ids]
    out = np.zeros(len(ids) + 1, dtype=np.int64)
    for k, strategy_id in enumerate(ids):
        family = family_of(strategy_id)
        if family is not None:
            out[k] = piece(family).address
    if set(ids) & set(SEARCH_IDS):
        out[-1] = piece("evaluated").address
    return out
