"""Strategies plugged into the game loop by address (issue 36 item 4).

Each strategy family is compiled on its own, as a C function with one signature
(``DECISION``): the game's view (``sim.neom.state.view``, passed as the address of the game's
struct of fields), the index of the seat's strategy in the run (``which``: its id is
``game.strategy_ids[which]``, its parameters ``game.strategy_params[which]``), the seat, the
decision and the number of options; it returns the chosen option's index. The game loop
(``strategies.neom.play``) reads the address of the seat's strategy from
``game.strategy_fns[which]`` and calls it (``call_strategy``): the loop never imports a
strategy, so it compiles once for every lineup, and a strategy compiles (and caches) alone.
The families and their addresses: ``strategies.neom.pieces``.

The view's type is fixed here (``GAME_VIEW``: the array types ``play_batch`` builds a game
from); ``call_strategy`` refuses, while typing, a view of any other type, so a caller cannot
hand a strategy a struct laid out otherwise.
"""

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import errors
from numba.core.extending import intrinsic

from sim.core.jit import INTERPRETED_CFUNCS
from sim.neom.state import FIELDS, GameType, GameViewType


def _array(dtype, ndim):
    return types.Array(numba.from_dtype(np.dtype(dtype)), ndim, "C")


_i4, _i8, _i2, _u8, _f8 = "int32", "int64", "int16", "uint64", "float64"
# The type of each field of a game of play_batch (strategies.neom.play.new_game): the
# catalogue and rules as sim.neom.tables gives them, the state, the run's strategies, scratch.
_FIELD_TYPES = {
    "tiles": (_i4, 2),
    "req": (_i4, 3),
    "effects": (_i4, 3),
    "goods_tier": (_i4, 1),
    "board_center": (_i4, 1),
    "rules": (_i4, 1),
    "gstate": (_i8, 1),
    "pstate": (_i8, 2),
    "cells": (_i2, 2),
    "hands": (_i8, 2),
    "cs_hands": (_i8, 2),
    "goods_of": (_i8, 1),
    "cs_pile": (_i8, 1),
    "cs_box": (_i8, 1),
    "decks": (_i8, 2),
    "deck_sizes": (_i8, 1),
    "packs": (_i8, 2),
    "pack_sizes": (_i8, 1),
    "seats": (_i4, 1),
    "strategy_ids": (_i4, 1),  # sim.core.batch.STRATEGY_ID_DTYPE
    "strategy_params": (_f8, 2),
    "strategy_fns": (_i8, 1),
    "step_fns": (_i8, 1),
    "strat_rng": (_u8, 2),
    "memos": (_i8, 2),
    "options": (_i8, 2),
    "summaries": (_i8, 2),
    "req_costs": (_i8, 1),
    "stats": (_i8, 2),
    "events": (_i8, 2),
}
assert tuple(_FIELD_TYPES) == FIELDS, "a Game field without its type here"

GAME_TYPE = GameType([(name, _array(*_FIELD_TYPES[name])) for name in FIELDS])
GAME_VIEW = GameViewType(GAME_TYPE)
# A strategy's decision: (game view, which, seat, decision, n_options) -> option index.
DECISION = types.int64(GAME_VIEW, types.int64, types.int64, types.int64, types.int64)


# The loop's steps compiled on their own (``strategies.neom.steps``), each at its slot of
# ``game.step_fns``: one signature for all, (game view, int64) -> int64.
STEP_DRAFT = 0  # the cornerstone draft (once a game; the number unused)
STEP_SCORING = 1  # final scoring (0: returns the winners), a generation's VP record (1-2)
STEP_ACTION = 2  # the seat's (the number) action with its selected tile
STEP_GENERATION = 3  # the next generation (the number: the one ending, 0 after the draft)
# Not a step: the loop itself (``strategies.neom.play.run_fn``), which ``play_batch`` calls at
# its address so that the entry's library does not link, optimise and emit the loop again.
STEP_RUN = 4
N_STEPS = 5
STEP = types.int64(GAME_VIEW, types.int64)
GAME_ROW = types.Array(types.int64, 1, "C")  # a row of play_batch's games_out
# The loop's signature: (game view, the game's row) -> DONE / PAUSED / STOPPED / REFUSED (play.py).
RUN = types.int64(GAME_VIEW, GAME_ROW)


def _indirect_call(n_numbers: int, what: str):
    """An intrinsic ``f(address, game, *numbers)``: the C function at ``address`` (a game's
    view and ``n_numbers`` int64 -> int64) called with the view passed as its address."""

    def typer(typingctx, address, game, *numbers):
        if not isinstance(game, GameViewType) or len(numbers) != n_numbers:
            return None
        if game != GAME_VIEW:
            raise errors.TypingError(
                f"{what} takes a view of {GAME_TYPE}; this game is a {game.game_type}"
            )
        sig = types.int64(address, game, *numbers)

        def codegen(context, builder, sig, args):
            i64 = ir.IntType(64)
            address, view, *numbers = (
                value if k == 1 else context.cast(builder, value, typ, types.int64)
                for k, (value, typ) in enumerate(zip(args, sig.args, strict=True))
            )
            view_type = context.get_value_type(GAME_VIEW)
            function_type = ir.FunctionType(i64, [view_type] + [i64] * n_numbers)
            function = builder.inttoptr(address, function_type.as_pointer())
            return builder.call(function, [view, *numbers])

        return sig, codegen

    # intrinsic reads the typer's parameters: spell them out for the arity.
    names = ", ".join(f"n{k}" for k in range(n_numbers))
    namespace = {"typer": typer}
    exec(
        f"def call(typingctx, address, game, {names}):\n"
        f"    return typer(typingctx, address, game, {names})\n",
        namespace,
    )
    return intrinsic(namespace["call"])


_call_strategy = _indirect_call(4, "a strategy")
_call_step = _indirect_call(1, "a loop step")


@intrinsic
def _call_run(typingctx, address, game, game_row):
    """``run(address, game, game_row)``: the loop (``RUN``) at ``address``, the view and the
    row passed as the values the C function takes."""
    if game != GAME_VIEW or game_row != GAME_ROW:
        return None

    def codegen(context, builder, sig, args):
        address, view, row = args
        address = context.cast(builder, address, sig.args[0], types.int64)
        function_type = ir.FunctionType(
            ir.IntType(64), [context.get_value_type(GAME_VIEW), context.get_value_type(GAME_ROW)]
        )
        return builder.call(builder.inttoptr(address, function_type.as_pointer()), [view, row])

    return types.int64(address, game, game_row), codegen


def _call_interpreted(address, game, *numbers):
    # Interpreted (NUMBA_DISABLE_JIT=1) a compiled function's address is a key (sim.core.jit.cfunc).
    return INTERPRETED_CFUNCS[int(address)](game, *numbers)


call_strategy = _call_interpreted if numba.config.DISABLE_JIT else _call_strategy
call_step = _call_interpreted if numba.config.DISABLE_JIT else _call_step
call_run = _call_interpreted if numba.config.DISABLE_JIT else _call_run
