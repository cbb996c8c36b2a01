"""What sim.core.jit does to Numba: inlining copies IR in linear time without changing the
compiled code, and ``has_cached_code`` tells a cold compile from a cache load; and which
functions of the compiled core are IR-inlined (``inline="always"``), each for a stated reason."""

import os
import subprocess
import sys
import textwrap

import numba
import pytest
from nrt_helpers import dispatchers

from sim.core import jit

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="compiles on purpose")

# A function with nested inline="always" callees, several blocks each.
INLINED = textwrap.dedent(
    """
    import numpy as np
    from numba import njit

    @njit(inline="always")
    def leaf(a, i):
        if a[i] > 0:
            return a[i] * 2
        for k in range(i):
            a[k] += 1
        return -a[i]

    @njit(inline="always")
    def middle(a, i):
        total = 0
        for k in range(i):
            if k % 2:
                total += leaf(a, k)
            else:
                total -= leaf(a, k)
        return total + leaf(a, i)

    @njit
    def outer(a, n):
        total = 0
        for i in range(n):
            total += middle(a, i) + middle(a, n - i)
        return total

    outer(np.ones(10, dtype=np.int64), 5)
    """
)


def llvm_of_outer(linear: bool) -> str:
    code = (
        "import sys\n"
        "from numba.core import inline_closurecall\n"
        + ("import sim.core.jit\n" if linear else "")
        + "print('linear', getattr(inline_closurecall.InlineWorker.inline_ir, '_linear_copy', "
        "False), file=sys.stderr)\n" + INLINED + "print(outer.inspect_llvm(outer.signatures[0]))\n"
    )
    env = dict(os.environ)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert f"linear {linear}" in done.stderr
    return done.stdout


def test_the_linear_inline_copy_is_in_place():
    assert jit.LINEAR_INLINE_COPY
    assert jit.linear_inline_copy()  # applying it again changes nothing


def test_the_linear_inline_copy_compiles_the_same_code():
    assert llvm_of_outer(linear=True) == llvm_of_outer(linear=False)


CACHED = textwrap.dedent(
    """
    from sim.core.jit import njit

    @njit
    def twice(x):
        return 2 * x
    """
)


def test_has_cached_code_tells_a_compile_from_a_cache_load(tmp_path):
    (tmp_path / "cached_module.py").write_text(CACHED)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]),
        NUMBA_CACHE_DIR=str(tmp_path / "cache"),
        NEOM_NUMBA_CACHE_BASE=str(tmp_path / "cache"),
    )
    check = (
        "from cached_module import twice\n"
        "from sim.core.jit import has_cached_code\n"
        "print(has_cached_code(twice))\n"
        "twice(3)\n"
        "print(has_cached_code(twice))\n"
    )

    def run() -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", check], capture_output=True, text=True, env=env, check=True
        )
        return done.stdout.split()

    # First process: nothing cached, then compiled (and cached).
    assert run() == ["False", "True"]
    # A fresh process finds it in the cache before calling anything.
    assert run() == ["True", "True"]


# Every inline="always" of the compiled core, by module (issue 36 item 7; docs/performance-log.md,
# "IR inlining measured again"). Each is inlined for one of these reasons, so a decorator losing
# it fails here, and one gaining it must say why:
# - it returns a view (memo_*, context_* of evaluate, try_move) to callers compiled _nrt=False,
#   which must make the view themselves (a called function would hand back a reference);
# - its call sites pass literal arguments (set_option, Tangram's fill_view: one body each);
# - the search entry calls it on the Game and the loop on the game's view (play's list_actions,
#   list_selections, step_seat, score_seat; search's unseen_cornerstones: two bodies, and the
#   Game's fields need reference counts the loop's _nrt=False code does not have);
# - every other group was measured slower without its inlining (python -m sim.bench_ab, best
#   new/old): evaluation and greedy (evaluate, basic) greedy 0.87, builder 0.87, merchant 0.86;
#   the option writers (engine, grid, effects) random 0.89, greedy 0.87; the loop's steps (play)
#   random 0.97; Tangram's engine and strategies greedy 0.61, the planner's lineup 0.63.
# - the action listing's layers (engine: fill_action_options_at, tile_placements_at,
#   placement_mask_at; one call per tile listed) random 1.10 inlined, and the effect kinds'
#   dispatchers (effects: effect_coins_on_placed, effect_income; a call per effect row of every
#   tile in the city on each placement) (eng36f, docs/performance-log.md).
# Removing it saved no compile time either (a body of its own costs more than a copy).
INLINED_FUNCTIONS = {
    "sim.neom.grid": "add_tile city_goods remove_tile",
    "sim.neom.effects": "effect_coins_on_placed effect_income effect_row holder_coins_on_placed "
    "tile_income tile_variable_vp vp_reads_change",
    "sim.neom.engine": "add_cornerstone_options add_placements cheapest_price disaster_striking "
    "fill_action_options_at has_prerequisites in_deck pass_left placement_mask_at plan_cost "
    "purchase_cost remove_slot set_option step_key tile_placements_at turn_disaster_of",
    "strategies.neom.evaluate": "base_price coins_on_placing context_placements context_req_costs "
    "context_score_out context_summary copy_cells game_best_placement goods_by_tier "
    "income_delta kind_bonus memo_cells memo_city memo_context memo_cs_options memo_ctx "
    "memo_floats memo_parts memo_values move_terms neighborhoods_after score_delta "
    "score_delta_and_neighborhoods terms_value try_move undo_move",
    "strategies.neom.basic": "choose_greedy coins_value greedy_values memo_change value_after",
    "strategies.neom.play": "act_seat decide disaster_selectable discard_hand end_turn "
    "forced_option list_actions list_selections load_pack pauses raise_refused record_result "
    "play_turns refresh_goods refuse release_pending resolve_disaster run_step score_seat searches "
    "select_tile step_seat",
    # its one caller is the step's C function: one body
    "strategies.neom.steps.once": "draft final_scoring keep_cornerstone record_generation_scores",
    "strategies.neom.steps.action": "pay_requirements placement_effects take_action",
    "strategies.neom.search": "unseen_cornerstones",
    "strategies.neom.dispatch": "",
    "sim.neom.scoring": "",
    "sim.tangram.engine": "_lowest_bit_compiled _popcount_compiled add_if_legal any_flags "
    "balance_bonus compress fits full_flags legal_by_blocks log_event lowest_bit markers "
    "misses planning_bonus popcount put word_colours word_full",
    "strategies.tangram.basic": "_best_option _order board_before board_value compare "
    "option_contact option_prefix rectangle",
    "strategies.tangram.view": "fill_view",
    "strategies.tangram.planner": "_ranked_before",
}


def inlined(module_name) -> set[str]:
    return {
        name
        for name, d in dispatchers(module_name).items()
        if d.targetoptions.get("inline") == "always"
    }


@pytest.mark.parametrize("module_name", sorted(INLINED_FUNCTIONS))
def test_the_inlined_functions_are_the_listed_ones(module_name):
    assert inlined(module_name) == set(INLINED_FUNCTIONS[module_name].split())
