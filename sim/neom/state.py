"""One game's state as one bundle: what the compiled game loop hands the engine's steps and the
strategies, instead of some twenty arrays each.

``Game`` is a Numba structref, a reference to one struct of arrays: a call passes it as one
pointer, whatever it holds (twenty arrays passed one by one are some 140 machine words a call),
and a function reads by name what it needs (``game.cells``). The game loop builds one per game
(``strategies.neom.play``); a search (``strategies.neom.search``) builds one for its playouts,
with copies of the state and the same catalogue. The type lives in this module alone: Numba's
cache misses functions that use a structref defined in their own file.

Fields, by what they hold:

- the catalogue and the rules (read only): ``tiles``, ``req``, ``effects``, ``goods_tier``,
  ``board_center`` (``sim.neom.tables``), ``rules``;
- the game (layouts in ``sim.neom.engine``): ``gstate``, ``pstate``, ``cells``, ``hands``,
  ``cs_hands``, ``goods_of``, ``cs_pile``, ``cs_box``; the generation decks as shuffled at
  setup (``decks[g]``, ``deck_sizes[g]``: hands are dealt from their tops) and the solo packs
  of the current generation (``packs``, ``pack_sizes``), so that the state says everything
  the rest of the game needs: the game loop can resume from any step
  (``strategies.neom.play.advance``);
- the seats: ``seats`` (each seat's index into the run's strategies), ``strategy_ids``,
  ``strategy_params``, ``strategy_fns`` (the address of each strategy's compiled decision,
  ``strategies.neom.pointer``), ``step_fns`` (the address of each of the loop's steps compiled
  on their own: the draft, the scoring, a seat's action; ``strategies.neom.steps``),
  ``strat_rng`` (each seat's stream), ``memos`` (each seat's
  scratch);
- scratch and outputs: ``options`` (the decision's options), ``summaries`` (each seat's city
  summary), ``req_costs``, ``stats`` (the game's rows of the players table), ``events``.

The game loop and the strategies read it through a borrowed view (``view(game)``, below): the
same fields without the runtime's reference counts, so that they compile ``_nrt=False``
(docs/engine.md, "Compiled without reference counts").

Strategies get the whole bundle; by the rules they read only what a player sees: every city
and purse, their own hand and cornerstones, the random-disasters turns, and from their action on
every selection of the turn (``PS_SELECTED``, revealed before the actions; read through
``sim.neom.engine.disaster_striking``), never another seat's hand, the decks or the packs to
come (a search redraws them: ``strategies.neom.search.determinize``).
"""

from collections import namedtuple

import numba
from numba import types
from numba.core import cgutils, imputils
from numba.core.datamodel import models
from numba.core.extending import (
    infer_getattr,
    intrinsic,
    lower_getattr_generic,
    register_model,
)
from numba.core.runtime.nrtdynmod import _meminfo_struct_type
from numba.core.typing.templates import AttributeTemplate
from numba.experimental import structref

FIELDS = (
    "tiles",
    "req",
    "effects",
    "goods_tier",
    "board_center",
    "rules",
    "gstate",
    "pstate",
    "cells",
    "hands",
    "cs_hands",
    "goods_of",
    "cs_pile",
    "cs_box",
    "decks",
    "deck_sizes",
    "packs",
    "pack_sizes",
    "seats",
    "strategy_ids",
    "strategy_params",
    "strategy_fns",
    "step_fns",
    "strat_rng",
    "memos",
    "options",
    "summaries",
    "req_costs",
    "stats",
    "events",
)


@structref.register
class GameType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class GameRef(structref.StructRefProxy):
    """The Python side of a ``Game`` (tests build positions with it; tools drive the game
    loop with it): its fields are read as attributes, arrays sharing the game's memory."""


def _field_property(name: str) -> property:
    # A compiled getter per field, compiled on first use from Python (never from the loop).
    namespace = {}
    exec(f"def get(game):\n    return game.{name}\n", namespace)
    getter = numba.njit(namespace["get"])
    return property(lambda self: getter(self), doc=f"the game's ``{name}``")


structref.define_proxy(GameRef, GameType, list(FIELDS))
for _name in FIELDS:
    setattr(GameRef, _name, _field_property(_name))

GameTuple = namedtuple("GameTuple", FIELDS)

# Interpreted (NUMBA_DISABLE_JIT=1) a structref cannot be built: the same fields in a tuple.
Game = GameTuple if numba.config.DISABLE_JIT else GameRef


# --- a borrowed view of a Game, for code compiled without reference counts -----------------
# Reading a structref's field goes through its meminfo (an NRT call) and hands back a new
# reference to the array: a function compiled ``_nrt=False`` cannot read a ``Game`` at all,
# and every other function pays an incref/decref pair per field it binds, per call (issue 36:
# some 60% of a random game). A ``GameView`` is the address of the same struct of fields,
# without the meminfo: passed as one pointer, its fields read with one load, borrowed (the
# ``Game`` it was taken from keeps them alive: take the view where the ``Game`` lives, pass it
# down, never keep it). Under ``_nrt=False`` a field read then costs no reference count at all;
# with NRT it is counted like any borrowed array.


class GameViewType(types.Type):
    """The type of ``view(game)``: the fields of ``game_type`` (a ``GameType``), read only
    through the pointer (the fields themselves are arrays: their contents are writable)."""

    def __init__(self, game_type):
        self.game_type = game_type
        super().__init__(name=f"GameView({game_type.name})")

    @property
    def field_dict(self):
        return self.game_type.field_dict

    def payload_type(self):
        return self.game_type.get_data_type()


@register_model(GameViewType)
class GameViewModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        payload = dmm[fe_type.payload_type()].get_value_type()
        super().__init__(dmm, fe_type, payload.as_pointer())


@infer_getattr
class GameViewAttribute(AttributeTemplate):
    key = GameViewType

    def generic_resolve(self, typ, attr):
        return typ.field_dict.get(attr)


@lower_getattr_generic(GameViewType)
def _view_getattr(context, builder, typ, val, attr):
    payload = cgutils.create_struct_proxy(typ.payload_type())(context, builder, ref=val)
    return imputils.impl_ret_borrowed(
        context, builder, typ.field_dict[attr], getattr(payload, attr)
    )


@intrinsic
def _view(typingctx, game):
    """A borrowed ``GameView`` of ``game`` (a ``Game``, or a view: returned as is)."""
    if isinstance(game, GameViewType):
        return game(game), lambda context, builder, sig, args: args[0]
    if not isinstance(game, GameType):
        return None

    def codegen(context, builder, sig, args):
        meminfo = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0]).meminfo
        # The data pointer read as NRT_MemInfo_data_fast reads it, without that NRT call, so
        # that code compiled _nrt=False can take a view too.
        header = builder.bitcast(meminfo, _meminfo_struct_type.as_pointer())
        data = builder.load(cgutils.gep(builder, header, 0, 3))
        return builder.bitcast(data, context.get_value_type(sig.return_type))

    return GameViewType(game)(game), codegen


def _view_interpreted(game):
    return game


# Interpreted, a Game is a tuple and its view the tuple itself.
view = _view_interpreted if numba.config.DISABLE_JIT else _view
