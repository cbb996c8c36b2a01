"""The game loop's steps compiled on their own, called by the loop at their address
(``game.step_fns``, ``strategies.neom.pointer.call_step``), the way it calls the strategies.

The loop (``strategies.neom.play``) imports none of these modules, so each compiles (and
caches) in a process of its own, beside the loop (``sim.tools.build_cache``), and an edit of one
recompiles only it. Each step is a C function of one signature (``pointer.STEP``: the game's
view and five int64; those a step does not use are 0) at a fixed slot of ``step_fns``:

- piece ``once`` (``once.py``), the steps of a game taken once: ``setup`` (the deal and the
  state, ``STEP_SETUP``), ``draft_step`` (``STEP_DRAFT``), ``scoring`` (the final scoring and
  the VP by generation, ``STEP_SCORING``);
- piece ``action`` (``action.py``): a seat's action with its tile (``STEP_ACTION``).
"""

import importlib

import numpy as np

from strategies.neom.pointer import N_STEPS, STEP_ACTION, STEP_DRAFT, STEP_SCORING, STEP_SETUP

# Each slot's piece (module of this package) and function.
SLOTS = {
    STEP_SETUP: ("once", "setup"),
    STEP_DRAFT: ("once", "draft_step"),
    STEP_SCORING: ("once", "scoring"),
    STEP_ACTION: ("action", "action"),
}
PIECES = ("once", "action")
assert sorted(SLOTS) == list(range(N_STEPS)), "a step slot without its function"


def functions(piece: str) -> list:
    """The piece's C functions (``sim.core.jit.LazyCFunc``: compiled or loaded on first use)."""
    module = importlib.import_module(f"{__name__}.{piece}")
    return [getattr(module, name) for own, name in SLOTS.values() if own == piece]


def addresses() -> np.ndarray:
    """``game.step_fns``: each step's address at its slot (compiling or loading its piece)."""
    out = np.zeros(N_STEPS, dtype=np.int64)
    for slot, (piece, name) in SLOTS.items():
        out[slot] = getattr(importlib.import_module(f"{__name__}.{piece}"), name).address
    return out
