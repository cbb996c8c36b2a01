"""Which compiled ``play_batch`` plays a lineup (``sim.core.game.Game.play_batch_for``).

A compiled entry point compiles every strategy its dispatch can reach, whichever a run uses, so
NEOM has a family of entries and the lineup picks one: ``strategies.neom.play.play_batch``
(every strategy but the searches) and ``strategies.neom.search.play_batch`` (the same loop,
plus the searches of ``registry.SEARCH_IDS``). A run of the default field never imports the
search module, so it never compiles it. Compiling only the strategies a lineup names (issue
28) extends this: one entry per family of strategies, chosen here from the lineup's ids.
"""

from collections.abc import Iterable

from strategies.neom.registry import SEARCH_IDS


def play_batch_for(strategy_ids: Iterable[int]):
    """The compiled entry that plays a lineup with these strategy ids."""
    if any(int(i) in SEARCH_IDS for i in strategy_ids):
        from strategies.neom import search

        return search.play_batch
    from strategies.neom import play

    return play.play_batch
