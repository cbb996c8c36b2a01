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
  ``strategy_params``, ``strat_rng`` (each seat's stream), ``memos`` (each seat's scratch);
- scratch and outputs: ``options`` (the decision's options), ``summaries`` (each seat's city
  summary), ``req_costs``, ``stats`` (the game's rows of the players table), ``events``.

Strategies get the whole bundle; by the rules they read only what a player sees: every city
and purse, their own hand and cornerstones, the random-disasters turns, and from their action on
every selection of the turn (``PS_SELECTED``, revealed before the actions; read through
``sim.neom.engine.disaster_striking``), never another seat's hand, the decks or the packs to
come (a search redraws them: ``strategies.neom.search.determinize``).
"""

from collections import namedtuple

import numba
from numba import types
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
