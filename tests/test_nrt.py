"""Reference counting in the compiled NEOM core (issue 36, docs/engine.md "Compiled without
reference counts").

Functions that allocate nothing are compiled ``njit(_nrt=False)``: no incref/decref at all.
These tests pin which ones are (a function losing the flag fails here), that none of them
hands an array back (a reference its caller would release once too often), that a batch frees
every allocation it makes, and the Numba behaviour the rules rely on (an allocation under
``_nrt=False`` does not compile; views and calls compile without a single ``NRT_incref``), so
that a Numba upgrade that changes it fails loudly.
"""

import ast
import importlib
import inspect
import os
import re
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest
from numba.core.registry import CPUDispatcher
from numba.core.runtime import _nrt_python, rtsys

from sim.core import rng
from sim.core.batch import STRATEGY_ID_DTYPE, play_arrays
from sim.neom import GAME
from sim.neom.catalog import load_catalog
from sim.neom.tables import make_rules
from strategies.neom.registry import parse_strategy

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="compiled code only")

# Every function compiled _nrt=False, by module (docs/engine.md). Adding one: list it here.
NO_NRT = {
    "sim.core.rng": "splitmix64 stream_seed seed_state _rotl next_u64 randint shuffle",
    "sim.neom.grid": "neighbour road_bit opposite_road_bit road_linked is_diagonal is_orthogonal "
    "surrounding_mask city_masks cells_of_types road_flood component_of popcount lowest_cell",
    "sim.neom.effects": "count_tiles_of_types vp_per_type_in_city vp_per_type_adjacent "
    "vp_per_good_tier road_linked_neighbours placement_holds vp_placement effect_vp "
    "income_per_type effect_income city_income coins_on_type_placed effect_coins_on_placed "
    "insured_against",
    "sim.neom.scoring": "neighborhood_value pollution_around money_vp money_vp_change ghost_town "
    "power_vp printed_vp neighborhoods_vp goods_vp score_masks",
    "sim.neom.engine": "set_option log_event icon_limit taken_out build_deck generation_disaster "
    "draw_random_turn random_disaster_turns_left shuffled_cornerstones draw_cornerstone "
    "add_cornerstone add_to_pile position_of swap_entries cornerstone_hand_size "
    "force_into_hand forced_choice ban_cornerstone flood_from_center reach_mask reach_masks "
    "summarize_city mark_stale refresh_summary trade_routes replaceable_cells placement_mask "
    "purchase_price tile_placements fill_action_options buy_options count_placed place_tile "
    "has_effect take_options swap_options protected_cells disaster_charge disaster_cost_of "
    "sacrifice_steps sacrifice_types sacrifice_options ranks_and_winners",
    "strategies.neom.evaluate": "memo_size memo_holds set_context_money has_effect_kinds "
    "upcoming_disasters exposure charge build_score_context build_context label_components "
    "remaining_share money_value pollution_of counts_types memo_move_terms progress pick_best "
    "action_values seat_money best_placement",
    "strategies.neom.basic": "choose_random best_placement_value",
}


def dispatchers(module_name):
    module = importlib.import_module(module_name)
    return {
        name: value
        for name, value in vars(module).items()
        if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module_name
    }


def without_nrt(module_name):
    return {
        name for name, d in dispatchers(module_name).items() if d.targetoptions.get("_nrt") is False
    }


@pytest.mark.parametrize("module_name", sorted(NO_NRT))
def test_the_functions_compiled_without_reference_counts_are_the_listed_ones(module_name):
    assert without_nrt(module_name) == set(NO_NRT[module_name].split())


@pytest.fixture(scope="module")
def tables():
    return load_catalog()


def play(tables, lineup, n_games, events=True):
    specs = [parse_strategy(s) for s in lineup]
    ids = np.arange(1000, 1000 + n_games, dtype=np.int64)
    return play_arrays(
        GAME,
        rng.master_key(7),
        ids,
        ids,
        np.tile(np.arange(len(specs), dtype=np.int32), (n_games, 1)),
        np.array([s.id for s in specs], dtype=STRATEGY_ID_DTYPE),
        np.stack([s.params for s in specs]),
        tables.arrays,
        make_rules(),
        events,
    )


LINEUPS = {
    "random": ["random"] * 4,
    "greedy": ["greedy", "greedy", "random", "miser"],
    "archetypes": ["builder", "merchant", "industrialist", "denier"],
}


@pytest.mark.parametrize("lineup", sorted(LINEUPS))
def test_a_batch_frees_every_allocation_it_makes(tables, lineup):
    play(tables, LINEUPS[lineup], 1)  # compiled (or loaded) before counting
    _nrt_python.memsys_enable_stats()
    before = rtsys.get_allocation_stats()
    out = play(tables, LINEUPS[lineup], 3)
    after = rtsys.get_allocation_stats()
    assert out.games.shape[0] == 3
    alloc, free = after.alloc - before.alloc, after.free - before.free
    mi_alloc, mi_free = after.mi_alloc - before.mi_alloc, after.mi_free - before.mi_free
    assert alloc > 0  # the counters see the batch (its scratch and its games)
    assert (alloc, mi_alloc) == (free, mi_free)


def returned_arguments(function) -> list[str]:
    """The parameters of ``function`` that one of its ``return`` statements hands back."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    definition = tree.body[0]
    params = {a.arg for a in definition.args.args}
    found = []
    for node in ast.walk(definition):
        if isinstance(node, ast.Return) and node.value is not None:
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            found += [v.id for v in values if isinstance(v, ast.Name) and v.id in params]
    return found


# Functions that hand back a parameter which is a number, not an array (checked by eye).
SCALAR_PARAMETERS_RETURNED = {
    "vp_placement": ("vp",),
    "coins_on_type_placed": ("coins",),
    "icon_limit": ("n_players",),
    "disaster_charge": ("fire_cover", "police_cover"),
}


def test_no_function_without_reference_counts_returns_an_array_argument():
    # Numba refuses any other array returned under _nrt=False (the test below); an argument
    # handed back would reach a counting caller as a new reference it then releases once too
    # often. The functions' own sources: no return of a parameter (all take scalars back).
    returning = []
    for module_name, names in NO_NRT.items():
        functions = dispatchers(module_name)
        for name in names.split():
            scalars = SCALAR_PARAMETERS_RETURNED.get(name, ())
            if set(returned_arguments(functions[name].py_func)) - set(scalars):
                returning.append(f"{module_name}.{name}")
    assert not returning
    assert sorted(returned_arguments(lambda_returning_its_argument)) == ["n", "row"]


def lambda_returning_its_argument(row, n):
    if n:
        return n
    return row


# --- the Numba behaviour the rules rely on (fresh compiles of small functions, no cache) ----
SOURCE = textwrap.dedent(
    """
    import numpy as np
    from numba import njit

    @njit(_nrt=False)
    def leaf(row, other):
        if other[0] < 0:  # may raise: its caller checks a status after every call
            raise ValueError("negative")
        row[0] += other[0]
        return row[1]

    def caller(a, b, n):
        t = 0
        for i in range(n):
            r = a[i % 4]  # a row view, passed across a call
            t += leaf(r, b)
            t += leaf(r[1:], b)
        return t

    counted = njit(caller)
    uncounted = njit(_nrt=False)(caller)
    a = np.ones((4, 8), dtype=np.int64)
    b = np.ones(3, dtype=np.int64)
    assert counted(a.copy(), b, 10) == uncounted(a.copy(), b, 10)
    for f in (counted, uncounted):
        ir = f.inspect_llvm(f.signatures[0])
        print(f is uncounted, len(re.findall(r"call void @NRT_incref", ir)))

    @njit(_nrt=False)
    def allocates(n):
        return np.empty(n).sum()

    try:
        allocates(3)
        print("allocation compiled")
    except Exception as error:
        print("allocation refused:", " ".join(str(error).split()))

    # A view handed back by a callee would be a reference the uncounted caller never releases:
    # Numba types the callee under the caller's flags and refuses it (loud, not a leak).
    @njit
    def view_of(a):
        return a[1:]

    @njit(_nrt=False)
    def takes_view(a):
        return view_of(a)[0]

    try:
        takes_view(np.zeros(3))
        print("view compiled")
    except Exception as error:
        print("view refused:", " ".join(str(error).split()))
    """
)


def test_numba_compiles_views_and_calls_without_counts_and_refuses_an_allocation(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-c", "import re\n" + SOURCE],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    lines = done.stdout.splitlines()
    counted = int(lines[0].split()[1])
    uncounted = int(lines[1].split()[1])
    assert lines[0].startswith("False") and lines[1].startswith("True")
    assert counted > 0  # with reference counts, the view passed across a call is counted
    assert uncounted == 0
    # Numba 0.68 refuses it while typing np.empty (it may not return a new array): loud.
    assert lines[2].startswith("allocation refused:")
    assert "empty" in lines[2]
    assert lines[3].startswith("view refused:")
    assert "Only accept returning of array passed into the function as argument" in lines[3]


# --- increfs per game (slow: compiles the basic and greedy entries cold, with counting) ----
# Increfs per 4-player game of games 1000.. of sim.tools.bench.run_games (seed 1), measured
# after issue 36's step 0 (a gdb breakpoint on NRT_incref, the same as strategies.tools.nrt_audit
# counts; docs/performance-log.md): a game may not count more references again. Before:
# 9,030 random, 67,633 greedy on these games.
MAX_INCREFS = {"random": (5, 4112), "greedy": (2, 19017)}


@pytest.mark.slow
@pytest.mark.parametrize("strategy", sorted(MAX_INCREFS))
def test_a_game_counts_no_more_references_than_pinned(strategy):
    games, most = MAX_INCREFS[strategy]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "strategies.tools.nrt_audit",
            "--strategy",
            strategy,
            "--games",
            str(games),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    increfs = int(re.search(r"per game (\d+) increfs", done.stdout).group(1))
    assert 0 < increfs <= most
