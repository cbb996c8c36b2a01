"""Which compiled ``play_batch`` plays a lineup (``sim.core.game.Game.play_batch_for``).

A compiled entry point compiles every strategy its dispatch can reach, whichever a run uses
(the game loop, ``strategies.neom.play``, reaches them all through ``dispatch.choose``). So a
lineup is played by the smallest of a few nested entries that holds all its strategies, and
only that entry is compiled (issue 28):

- ``basic``: random and miser (no evaluation at all);
- ``greedy``: those and greedy;
- ``full``: every strategy but the searches (``strategies.neom.play.play_batch`` itself);
- ``search``: the searches too (``strategies.neom.search.play_batch``; registry.SEARCH_IDS).

The ``basic`` and ``greedy`` entries are copies of the game loop (``loop_copy``): the loop
module's compiled functions that reach the dispatch, made again over a copy of its globals in
which ``choose`` is a copy of the dispatch with the families the entry leaves out switched off
(``dispatch.WITH_*`` False: Numba drops those branches before typing, so their code is never
compiled). Each copy's functions carry the entry's name in their qualified names, so each
entry has its own files in the compile cache and later runs load it. Three nested entries, not
one per set of strategies: each copy compiles the loop again, and a machine running many
lineups (``make test``) would pay that for every set.
"""

import types
from collections.abc import Iterable
from functools import cache

import numba
from numba.core.registry import CPUDispatcher

from sim.core.jit import njit
from strategies.neom.registry import GREEDY_ID, MISER_ID, RANDOM_ID, SEARCH_IDS

# name -> (the strategy ids it plays, the dispatch switches it turns off); smallest first
LOOP_COPIES = {
    "basic": ((RANDOM_ID, MISER_ID), ("WITH_GREEDY", "WITH_EVALUATED", "WITH_SEARCH")),
    "greedy": ((RANDOM_ID, MISER_ID, GREEDY_ID), ("WITH_EVALUATED", "WITH_SEARCH")),
}
# A cold compile of each entry, CPU seconds on the 2-core VM (python -m sim.tools.bench_compile
# --lineup random / greedy / make run's; the search entry's includes the full one's, a rough
# guess): what the compile notice says before this machine measured one.
COMPILE_SECONDS = {"basic": 35.0, "greedy": 52.0, "full": 78.0, "search": 120.0}


def entry_name(strategy_ids: Iterable[int]) -> str:
    """The name of the smallest entry that plays a lineup with these strategy ids."""
    ids = {int(i) for i in strategy_ids}
    if ids & set(SEARCH_IDS):
        return "search"
    for name, (plays, _) in LOOP_COPIES.items():
        if ids <= set(plays):
            return name
    return "full"


def play_batch_for(strategy_ids: Iterable[int]):
    """The compiled entry that plays a lineup with these strategy ids."""
    name = entry_name(strategy_ids)
    if name == "search":
        from strategies.neom import search

        return search.play_batch
    if name == "full":
        from strategies.neom import play

        return play.play_batch
    return loop_copy(name).play_batch


def compile_estimate(strategy_ids: Iterable[int]) -> tuple[str, float]:
    """The entry's name and the seconds a cold compile of it takes (the compile notice's
    estimate before this machine measured one)."""
    name = entry_name(strategy_ids)
    return name, COMPILE_SECONDS[name]


def _dispatchers(module) -> dict[str, CPUDispatcher]:
    return {
        name: value
        for name, value in vars(module).items()
        if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__
    }


def _reaching(functions: dict[str, CPUDispatcher], target: str) -> set[str]:
    """The names of ``functions`` that call ``target`` or one of them, read from their
    bytecode's global names (an unrelated name that happens to match only copies more)."""
    reach = {target}
    changed = True
    while changed:
        changed = False
        for name, dispatcher in functions.items():
            if name not in reach and reach & set(dispatcher.py_func.__code__.co_names):
                reach.add(name)
                changed = True
    reach.discard(target)
    return reach


def _copy(dispatcher: CPUDispatcher, namespace: dict, suffix: str) -> CPUDispatcher:
    """The dispatcher's function over ``namespace`` instead of its module's globals, compiled
    with the same options under a qualified name of its own (its own compile-cache files)."""
    func = dispatcher.py_func
    clone = types.FunctionType(
        func.__code__, namespace, func.__name__, func.__defaults__, func.__closure__
    )
    clone.__qualname__ = f"{func.__qualname__}__{suffix}"
    clone.__doc__ = func.__doc__
    clone.__kwdefaults__ = func.__kwdefaults__
    options = {k: v for k, v in dispatcher.targetoptions.items() if k != "nopython"}
    return njit(**options)(clone)


@cache
def loop_copy(name: str) -> types.SimpleNamespace:
    """The game loop's entry ``name`` of LOOP_COPIES: its ``play_batch`` and ``advance`` (and
    its ``choose``), compiled only for the strategies that entry plays."""
    from strategies.neom import dispatch, play

    if numba.config.DISABLE_JIT:  # interpreted: nothing compiles, the loop itself serves
        return types.SimpleNamespace(
            name=name, choose=dispatch.choose, advance=play.advance, play_batch=play.play_batch
        )
    _, off = LOOP_COPIES[name]
    dispatch_globals = dict(vars(dispatch))
    dispatch_globals.update(dict.fromkeys(off, False))
    choose = _copy(dispatch.choose, dispatch_globals, name)
    dispatch_globals["choose"] = choose

    functions = _dispatchers(play)
    loop_globals = dict(vars(play))
    loop_globals["choose"] = choose
    for function in _reaching(functions, "choose"):
        loop_globals[function] = _copy(functions[function], loop_globals, name)
    return types.SimpleNamespace(
        name=name,
        choose=choose,
        advance=loop_globals["advance"],
        play_batch=loop_globals["play_batch"],
    )
