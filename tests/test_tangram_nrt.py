"""Reference counting in Tangram City's compiled core (issue 36 step 6; docs/engine.md
"Compiled without reference counts").

The game loop, the dispatch, the strategies and the rules that allocate nothing are compiled
``njit(_nrt=False)``; only what allocates (``play_batch`` and the work arrays it makes once a
batch: ``make_work``, ``max_options``, ``make_scratch``) counts. These tests pin which
functions are uncounted (a function losing the flag, or gaining it unlisted, fails), that none
hands an array argument back, that a batch of every strategy frees every allocation it
makes, and (slow) that a game counts no references but its batch entry's.
"""

import re
import subprocess
import sys

import numba
import pytest
from nrt_helpers import functions_returning_an_argument, without_nrt
from numba.core.runtime import _nrt_python, rtsys
from test_tangram_support import run_batch

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="compiled code only")

# Every Tangram City function compiled _nrt=False, by module. Adding one: list it here.
NO_NRT = {
    "sim.tangram.engine": "put_start full_squares largest_rectangle colour_counts "
    "quarters_built legal_placements square_parts legal_placements_on next_start "
    "rank_players round_holders seat_knowledge deal",
    "strategies.tangram.basic": "choose_random completed_squares greedy_keys greedy_index "
    "greedy_pick choose_greedy",
    "strategies.tangram.planner": "play_out _sample_completions choose_planner",
    "strategies.tangram.dispatch": "choose",
    # The game loop: everything under play_batch, which allocates the batch's work arrays.
    "strategies.tangram.play": "int64_bits random_option decide apply_choice place_card "
    "final_cards fountain_step score_round deal_round setup finish play_game play_games",
}


@pytest.mark.parametrize("module_name", sorted(NO_NRT))
def test_the_functions_compiled_without_reference_counts_are_the_listed_ones(module_name):
    assert without_nrt(module_name) == set(NO_NRT[module_name].split())


# Functions that hand back a parameter which is a number, not an array (checked by eye).
SCALAR_PARAMETERS_RETURNED = {
    "legal_placements": ("n",),
    "legal_placements_on": ("n",),
    "next_start": ("previous",),
}


def test_no_function_without_reference_counts_returns_an_array_argument():
    # An argument handed back uncounted would reach a counting caller (a test, score.py) as a
    # reference it then releases once too often.
    assert not functions_returning_an_argument(NO_NRT, SCALAR_PARAMETERS_RETURNED)


# Every strategy, and the player counts that take the loop's other paths (solo, 5 players).
LINEUPS = {
    "random": (["random"] * 4, [0, 1, 2, 3]),
    "greedy": (["greedy"] * 4, [0, 1, 2, 3]),
    "default-field": (["planner", "greedy", "greedy", "random"], [0, 1, 2, 3]),
    "solo-planner": (["planner:samples=2"], [0]),
    "five-mixed": (["random", "greedy"], [0, 1, 0, 1, 0]),
}


@pytest.mark.parametrize("lineup", sorted(LINEUPS))
def test_a_batch_frees_every_allocation_it_makes(data, lineup):
    strategies, seats = LINEUPS[lineup]
    run_batch(data, strategies, [seats], [0])  # compiled (or loaded) before counting
    _nrt_python.memsys_enable_stats()
    before = rtsys.get_allocation_stats()
    games, _, events, _ = run_batch(data, strategies, [seats] * 3, [5, 6, 7])
    after = rtsys.get_allocation_stats()
    assert games.shape[0] == 3 and all(len(e) > 0 for e in events)
    alloc, free = after.alloc - before.alloc, after.free - before.free
    mi_alloc, mi_free = after.mi_alloc - before.mi_alloc, after.mi_free - before.mi_free
    assert alloc > 0  # the counters see the batch (its work arrays)
    assert (alloc, mi_alloc) == (free, mi_free)


# --- increfs per game (slow: compiles the entry cold, with counting NRT functions) --------------
# Over 5 four-player games of sim.tangram.bench.play (seed 1), measured by
# strategies.tools.nrt_audit after issue 36 step 6: only play_batch, which allocates,
# counts (20 increfs a batch of 5; 25 since issue 40 item 4: the batch's setup also returns
# the planner's bit sets and greedy's square table, engine.placement_blocks and
# basic.square_table, one incref each a batch).
# Before: 5,789 random, 23,434 greedy, 3,426,687 planner (four planner seats) a game.
MOST_INCREFS_A_GAME = 5


@pytest.mark.slow
def test_a_game_counts_only_the_batch_entrys_references():
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "strategies.tools.nrt_audit",
            "--game",
            "tangram",
            "--strategy",
            "random,greedy,planner",
            "--games",
            "5",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    counts = [int(n) for n in re.findall(r"per game (\d+) increfs", done.stdout)]
    assert len(counts) == 3
    assert all(0 < n <= MOST_INCREFS_A_GAME for n in counts)
