"""Which compiled ``play_batch`` plays a lineup (``sim.core.game.Game.play_batch_for``).

The game loop calls each seat's strategy at an address (``strategies.neom.pointer``), so it
compiles once for every lineup, and each strategy family compiles (and caches) on its own
(``strategies.neom.pieces``). Two loop entries remain:

- ``loop``: ``strategies.neom.play.play_batch``, every lineup without a search;
- ``search``: ``strategies.neom.search.play_batch``, lineups with a search
  (``registry.SEARCH_IDS``): the same loop, stopped before a search seat's selection or
  action, which the search decides outside it.

The loop's draft, scoring and a seat's action (piece ``steps``) are compiled on their own too
and called at their addresses (``strategies.neom.steps``), so the loop compiles in two
processes side by side.

``play_batch_for`` returns a ``LineupEntry``: the Game interface's ``play_batch`` (its
arguments), which imports the lineup's families (compiling only those not yet cached) and
hands the loop their addresses and the steps'.
"""

from collections.abc import Iterable

import numpy as np

from strategies.neom import pieces, steps
from strategies.neom.registry import SEARCH_IDS

# The compiled pieces (sim.tools.build_cache): name -> (cold compile alone, CPU seconds on
# the 2-core VM, what the compile notice says before this machine measured one; the pieces
# whose code it calls, built first so that it loads theirs). The loop entries and the
# strategy families (strategies.neom.pieces) compile independently of one another.
PIECES = {
    # the loop's setup and turns; its draft, scoring and actions (strategies.neom.steps)
    "loop": (17.0, ()),  # measured: 17 s CPU alone at load 4-7 (performance-log, split37g)
    "steps": (14.0, ()),  # 13-15 s CPU alone, 9-10 s after the loop (its engine calls loaded)
    "search": (60.0, ("loop",)),  # rough: 134 s wall at load 6, the loop's functions loaded
    "basic": (5.0, ()),
    "greedy": (30.0, ()),  # 19 s CPU beside the loop; alone it compiles its engine calls too
    "evaluated": (45.0, ()),  # 34 s CPU beside the loop and greedy
    "search_policy": (15.0, ("evaluated",)),
}
COMPILE_SECONDS = {name: seconds for name, (seconds, _) in PIECES.items()}


def entry_name(strategy_ids: Iterable[int]) -> str:
    """The name of the loop entry that plays a lineup with these strategy ids."""
    return "search" if {int(i) for i in strategy_ids} & set(SEARCH_IDS) else "loop"


class LineupEntry:
    """``play_batch`` of the Game interface for a lineup: the loop entry, called with the
    address of each strategy's compiled decision (``game.strategy_fns``)."""

    def __init__(self, name: str, strategy_ids: Iterable[int]):
        self.name = name
        self.families = pieces.families_of(strategy_ids)
        self.batch = _loop_entry(name)

    def compiled_parts(self) -> list:
        """The loop entry and the lineup's families (``sim.core.jit.has_cached_code``)."""
        return [
            self.batch,
            *self.loop_parts(),
            *(step for piece in steps.PIECES for step in steps.functions(piece).values()),
            *(pieces.piece(family) for family in self.families),
        ]

    def loop_parts(self) -> list:
        """The loop's C function ``play_batch`` calls at its address (none for the search)."""
        return _loop_parts(self.name)

    def __call__(
        self, key, game_ids, deal_indices, seat_strategy, strategy_ids, strategy_params, *rest
    ):
        """``play_batch`` of the Game interface (``rest``: data, rules, games_out, players_out,
        events_out), the loop entry given the lineup's addresses, the steps' and fresh memos."""
        addresses = pieces.addresses(np.asarray(strategy_ids))
        step_fns = steps.addresses()
        memos = pieces.new_memos(rest[0][0].shape[0])  # data[0]: the tiles
        lineup = (key, game_ids, deal_indices, seat_strategy, strategy_ids, strategy_params)
        return self.batch(*lineup, addresses, step_fns, memos, *rest)


def play_batch_for(strategy_ids: Iterable[int]) -> LineupEntry:
    """The compiled entry that plays a lineup with these strategy ids."""
    ids = [int(i) for i in strategy_ids]
    return LineupEntry(entry_name(ids), ids)


def lineup_pieces(strategy_ids: Iterable[int]) -> list[str]:
    """The pieces a lineup with these strategy ids calls: its loop entry, the loop's steps and
    its families."""
    ids = [int(i) for i in strategy_ids]
    return [entry_name(ids), *steps.PIECES, *pieces.families_of(ids)]


def compile_estimate(strategy_ids: Iterable[int]) -> tuple[str, float]:
    """The lineup's pieces not in the compile cache (all of them when every one is) and the
    seconds a cold compile of them takes (the compile notice's estimate before this machine
    measured one)."""
    names = lineup_pieces(strategy_ids)
    missing = [name for name in names if not is_piece_cached(name)] or names
    return "+".join(missing) + " pieces", sum(COMPILE_SECONDS[name] for name in missing)


def _loop_entry(name: str):
    # Imported on demand: a lineup without the expert never imports (or compiles) the search.
    if name == "search":
        from strategies.neom import search

        return search.play_batch
    from strategies.neom import play

    return play.play_batch


def _loop_parts(name: str) -> list:
    """The C functions the loop entry calls at their addresses and its piece compiles: the
    loop itself for ``play.play_batch`` (``play.run_fn``)."""
    if name == "search":
        return []
    from strategies.neom import play

    return [play.run_fn]


def _piece_sources(name: str) -> list[str]:
    """The modules (paths relative to the checkout) holding the piece's compiled entries."""
    if name in steps.PIECES:
        return [f"strategies/neom/steps/{module}.py" for module in steps.PIECES[name]]
    if name in pieces.FAMILIES:
        return [f"strategies/neom/pieces/{name}.py"]
    return [f"strategies/neom/{'search' if name == 'search' else 'play'}.py"]


def _never_built(name: str) -> bool:
    """Whether a module of the piece has no compile-cache index at all for the current
    sources, so the piece is certainly not cached: answered from the cache folders alone, so
    that a cold ``build_cache`` starts compiling without first importing (and so compiling
    the import-time signatures of) the loop's modules in its parent (about 1.3 s)."""
    import glob
    import os

    from sim.core import cache_keys

    base = os.environ.get("NEOM_NUMBA_CACHE_BASE")
    if not base:
        return False
    for source in _piece_sources(name):
        key = cache_keys.cache_key(str(cache_keys.ROOT / source))
        if key is not None and not glob.glob(os.path.join(base, key[0], "*.nbi")):
            return True
    return False


def is_piece_cached(name: str) -> bool:
    """Whether the piece would load from the compile cache (nothing compiled to ask)."""
    from sim.core import jit

    if _never_built(name):
        return False
    if name in steps.PIECES:
        return all(jit.has_cached_code(step) for step in steps.functions(name).values())
    if name in pieces.FAMILIES:
        return jit.has_cached_code(pieces.piece(name))
    return all(jit.has_cached_code(part) for part in [_loop_entry(name), *_loop_parts(name)])


def compile_piece(name: str) -> None:
    """Compile the piece in this process (or load it): a family's or the loop's steps' C
    functions, or a loop entry called on zero games with no strategy and no step (so nothing
    but the loop compiles)."""
    if name in pieces.FAMILIES:
        pieces.piece(name).compile()
        return
    if name in steps.PIECES:
        for step in steps.functions(name).values():
            step.compile()
        return
    for part in _loop_parts(name):
        part.compile()
    from sim.core import rng
    from sim.neom import GAME, records

    data = GAME.load_data(None).arrays
    ids = np.zeros(0, dtype=np.int64)
    _loop_entry(name)(
        rng.master_key(1),
        ids,
        ids,
        np.zeros((0, GAME.max_players), dtype=np.int32),
        np.zeros(1, dtype=np.int32),
        np.zeros((1, GAME.strategies.n_params)),
        np.zeros(2, dtype=np.int64),
        np.zeros(steps.N_STEPS, dtype=np.int64),
        pieces.new_memos(data[0].shape[0]),
        data,
        GAME.make_rules(),
        np.zeros((0, records.N_GAME_COLS), dtype=np.int64),
        np.zeros((0, GAME.max_players, records.N_PLAYER_COLS), dtype=np.int64),
        np.zeros((0, records.N_EVENT_COLS), dtype=np.int64),
    )


def play_batch(key, game_ids, deal_indices, seat_strategy, strategy_ids, *rest):
    """The Game interface's default ``play_batch`` (``GAME.play_batch``): any lineup, through
    its entry (``rest``: strategy_params, data, rules, games_out, players_out, events_out)."""
    entry = play_batch_for(np.asarray(strategy_ids))
    return entry(key, game_ids, deal_indices, seat_strategy, strategy_ids, *rest)
