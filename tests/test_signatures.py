"""No repeated signatures (issue 37): each compiled function of the game core compiles for one
set of argument types in a run. Compile time is linear in the (function x signature) bodies
compiled, and a second signature of a function is a second body for nothing (an int16 and an
int64 twin, a literal and a variable argument).

The functions that still compile twice are listed in ``tests/data/repeated_signatures.json``
(function -> how many signatures), data that the engine work shortens: a function that
gains a signature fails, and so does one listed that no longer repeats (take it off the list).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numba
import pytest

import sim

KNOWN = Path(__file__).parent / "data" / "repeated_signatures.json"

# A fresh process, an empty cache: the default lineup's pieces compiled (the loop and its
# families, as the first game of ``make run`` compiles them), each compile event's function
# and argument types printed.
RECORD = """
import json, sys
from numba.core import event
seen = {}
class Listener(event.Listener):
    def on_start(self, ev):
        func = ev.data["dispatcher"].py_func
        name = f"{func.__module__}.{func.__qualname__}"
        if name.startswith(("sim.", "strategies.")):  # not Numba's own (np.zeros, ...)
            seen.setdefault(name, set()).add(str(ev.data["args"]))
    def on_end(self, ev):
        pass
event.register("numba:compile", Listener())
from sim.core.strategies import resolve_strategy, split_strategies
from sim.core.registry import get_game
from sim.core.batch import play_arrays
from sim.tools.build_cache import Piece, _entry_and_args
game = get_game(sys.argv[1])
ids = tuple(resolve_strategy(game.strategies, s).id for s in split_strategies(sys.argv[2]))
_, args = _entry_and_args(Piece("lineup", game.name, ids, "", 0.0))
play_arrays(*args, events=True)  # the lineup's pieces, on zero games
print(json.dumps({name: sorted(sigs) for name, sigs in seen.items()}))
"""


def compiled_signatures(game: str, lineup: str, cache: Path) -> dict[str, list[str]]:
    env = dict(
        os.environ,
        NEOM_NUMBA_CACHE_BASE=str(cache),
        NUMBA_CACHE_DIR=str(cache),
        PYTHONPATH=str(sim.ROOT),
    )
    done = subprocess.run(
        [sys.executable, "-c", RECORD, game, lineup], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # a cold compile of a lineup's entry each: one to three minutes
@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="compiles on purpose")
@pytest.mark.parametrize(
    "game, lineup",
    [
        ("neom", "greedy,builder,merchant,industrialist"),
        ("neom", "expert,random,miser,denier"),  # the search entry, the basic family
        ("tangram", "greedy"),
    ],
)
def test_each_compiled_function_has_one_signature_but_the_known_repeats(game, lineup, tmp_path):
    signatures = compiled_signatures(game, lineup, tmp_path / "cache")
    assert signatures, "nothing compiled: the cache was not empty"
    repeated = {name: len(sigs) for name, sigs in signatures.items() if len(sigs) > 1}
    known = json.loads(KNOWN.read_text())["repeats"].get(game, {})
    new = {name: signatures[name] for name in repeated if repeated[name] > known.get(name, 1)}
    assert not new, f"compiled for more argument types than before: {json.dumps(new, indent=1)}"
    fixed = sorted(name for name in known if repeated.get(name, 1) < known[name])
    assert not fixed, f"fewer signatures than listed: lower their counts in {KNOWN.name}: {fixed}"
