"""The game loop's steps compiled on their own, called by the loop at their address
(``game.step_fns``, ``strategies.neom.pointer.call_step``), the way it calls the strategies.

The loop (``strategies.neom.play``) imports none of these modules, so they compile (and cache)
in a process of their own, beside the loop's (``sim.tools.build_cache``: piece ``steps``), and
an edit of one recompiles only it. Each step is a C function of one signature
(``pointer.STEP``: the game's view and one int64) at a fixed slot of ``step_fns``:

- ``once.py``, the steps taken once a game: ``draft_step`` (``STEP_DRAFT``), ``scoring`` (the
  final scoring and the VP by generation, ``STEP_SCORING``), ``generation_step`` (a
  generation's end and the next one dealt, ``STEP_GENERATION``: moved out of the loop piece to
  balance the two pieces' compile, branch loop37p);
- ``action.py``: a seat's action with its selected tile (``STEP_ACTION``).

The split is the compile's, measured (docs/performance-log.md, branch split37g): the loop with
the setup is one half of the random lineup's cold compile, these steps the other half.
"""

import importlib

import numpy as np

from strategies.neom.pointer import (
    N_STEPS,
    STEP_ACTION,
    STEP_DRAFT,
    STEP_GENERATION,
    STEP_RUN,
    STEP_SCORING,
)

# Each slot's module (of this package) and function.
SLOTS = {
    STEP_DRAFT: ("once", "draft_step"),
    STEP_SCORING: ("once", "scoring"),
    STEP_ACTION: ("action", "action"),
    STEP_GENERATION: ("once", "generation_step"),
}
# The pieces (one compile process each) and their modules.
PIECES = {"steps": ("once", "action")}
# The last slot is the loop's own (``play.run_fn``, the loop piece's), which play_batch calls.
assert sorted([*SLOTS, STEP_RUN]) == list(range(N_STEPS)), "a step slot without its function"


def _function(module: str, name: str):
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def functions(piece: str) -> dict:
    """The piece's C functions by name (``sim.core.jit.LazyCFunc``: compiled or loaded on
    first use)."""
    return {
        name: _function(module, name) for module, name in SLOTS.values() if module in PIECES[piece]
    }


def addresses() -> np.ndarray:
    """``game.step_fns``: each step's address at its slot (compiling or loading its piece),
    and the loop's (``play.run_fn``, of the loop piece) at ``STEP_RUN``."""
    out = np.zeros(N_STEPS, dtype=np.int64)
    for slot, (module, name) in SLOTS.items():
        out[slot] = _function(module, name).address
    from strategies.neom import play

    out[STEP_RUN] = play.run_fn.address
    return out
