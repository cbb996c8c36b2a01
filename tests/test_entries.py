"""A lineup compiles only the pieces it plays (issue 36 item 4): the game loop, compiled once for
every lineup, and the families of its strategies (strategies.neom.pieces), each on its own;
what a fresh process with an empty compile cache compiles and writes for a lineup."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sim
from sim.core.machine import cache_env
from sim.neom.tables import make_rules
from strategies.neom import pieces, play, search
from strategies.neom.entries import entry_name, lineup_pieces, play_batch_for
from strategies.neom.registry import N_PARAMS, resolve_strategy

ROOT = Path(sim.__file__).resolve().parent.parent


def ids(*names):
    return [resolve_strategy(name).id for name in names]


def test_each_lineup_gets_the_loop_entry_and_only_its_strategies_families():
    assert entry_name(ids("random")) == "loop"
    assert entry_name(ids("greedy", "builder", "merchant", "industrialist")) == "loop"
    assert entry_name(ids("expert", "greedy")) == "search"
    assert entry_name(ids("rollout")) == "search"
    steps = ["steps"]  # the loop's own steps, compiled beside it (strategies.neom.steps)
    assert lineup_pieces(ids("random")) == ["loop", *steps]  # random: drawn by the loop itself
    assert lineup_pieces(ids("random", "miser")) == ["loop", *steps, "basic"]
    assert lineup_pieces(ids("greedy:money_weight=0", "random")) == ["loop", *steps, "greedy"]
    assert lineup_pieces(ids("greedy", "builder", "merchant", "industrialist")) == [
        "loop",
        *steps,
        "greedy",
        "evaluated",
    ]
    assert lineup_pieces(ids("tuned_denier_2p")) == ["loop", *steps, "evaluated"]
    # the searches' playouts are the evaluated family's
    assert lineup_pieces(ids("expert")) == ["search", *steps, "evaluated", "search_policy"]
    assert play_batch_for(ids("builder")).batch is play.play_batch
    assert play_batch_for(ids("random")).batch is play.play_batch  # one loop for every lineup
    assert play_batch_for(ids("expert")).batch is search.play_batch


def test_a_run_hands_the_loop_each_strategys_address_and_the_playout_policys_last():
    lineup = ids("random", "greedy", "builder", "expert")
    fns = pieces.addresses(lineup)
    assert fns.shape == (5,)
    assert fns[0] == 0  # random: never called
    assert fns[1] == pieces.piece("greedy").address
    assert fns[2] == pieces.piece("evaluated").address
    assert fns[3] == pieces.piece("search_policy").address
    assert fns[4] == pieces.piece("evaluated").address
    assert pieces.addresses(ids("greedy"))[-1] == 0  # no search: no playout policy
    with pytest.raises(ValueError, match="no compiled NEOM strategy"):
        pieces.addresses([999])


def test_a_run_hands_the_loop_each_of_its_steps_address_at_its_slot():
    from strategies.neom import pointer, steps

    fns = steps.addresses()
    assert fns.shape == (pointer.N_STEPS,)
    assert fns[pointer.STEP_DRAFT] == steps.once.draft_step.address
    assert fns[pointer.STEP_SCORING] == steps.once.scoring.address
    assert fns[pointer.STEP_ACTION] == steps.action.action.address
    assert fns[pointer.STEP_GENERATION] == steps.once.generation_step.address
    assert fns[pointer.STEP_RUN] == play.run_fn.address
    assert len(set(fns)) == pointer.N_STEPS and 0 not in fns


def test_a_game_without_its_steps_addresses_is_an_error_not_a_crash(tables):
    """The loop calls its steps at their addresses (game.step_fns); a batch handed none
    (address 0) raises a ValueError where a call to address 0 would kill the process."""
    from sim.core import rng
    from sim.neom import records as R
    from strategies.neom import pointer

    ids_ = np.zeros(1, dtype=np.int64)
    with pytest.raises(ValueError, match="no compiled loop step"):
        play.play_batch(
            rng.master_key(1), ids_, ids_, np.zeros((1, 2), dtype=np.int32),
            np.zeros(1, dtype=np.int32), np.zeros((1, N_PARAMS)),
            np.zeros(2, dtype=np.int64), np.zeros(pointer.N_STEPS, dtype=np.int64),
            pieces.new_memos(tables.n_tiles), tables.arrays, make_rules(),
            np.zeros((1, R.N_GAME_COLS), dtype=np.int64),
            np.zeros((1, R.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int64),
            np.zeros((0, R.N_EVENT_COLS), dtype=np.int64),
        )  # fmt: skip


# Runs in a fresh process whose compile cache is an empty folder: plays one game of LINEUP,
# then says which strategy functions this process compiled, which pieces it loaded or
# compiled, and which modules it imported.
CHILD = r"""
import json, sys
from sim.neom.catalog import load_catalog
from strategies.neom import basic, evaluate, play, pieces
from strategies.neom.play import play_one
from strategies.neom.registry import parse_strategy

lineup = sys.argv[1].split(",")
result = play_one(load_catalog(), len(lineup), [parse_strategy(s) for s in lineup], seed=3)
compiled = {
    name: len(function.signatures)
    for name, function in (
        ("choose_evaluated", evaluate.choose_evaluated),
        ("evaluated_values", evaluate.evaluated_values),
        ("greedy_context", basic.greedy_context),
    )
}
families = {}
for family in pieces.FAMILIES:
    lazy = pieces.piece(family)
    if lazy.cache_hits or lazy.cache_misses:
        families[family] = {"loaded": lazy.cache_hits, "compiled": lazy.cache_misses}
print(json.dumps({
    "compiled": compiled,
    "families": families,
    "loop_loaded": sum(play.play_batch._cache_hits.values()),
    "loop_compiled": sum(play.play_batch._cache_misses.values()),
    "game": [int(x) for x in result["game"]],
    "search_imported": "strategies.neom.search" in sys.modules,
}))
"""


def run_fresh(lineup: str, cache: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, lineup],
        env=cache_env(cache, ROOT),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def cached_functions(cache: Path) -> set[str]:
    """The qualified names of the functions with an index in the compile cache."""
    return {path.name.split("-")[0] for path in cache.rglob("*.nbi")}


@pytest.mark.parametrize(
    ("lineup", "families"),
    [
        # slow: a cold compile into an empty cache (about 40 s); the fast path is covered by
        # test_each_lineup_gets_the_loop_entry_and_only_its_strategies_families and
        # test_build_cache.py::test_after_the_build_a_fresh_process_compiles_nothing
        pytest.param("random", [], marks=pytest.mark.slow),
        # slow: the loop again and greedy's family (about 60 s CPU)
        pytest.param("greedy", ["greedy"], marks=pytest.mark.slow),
    ],
)
def test_a_fresh_process_compiles_only_the_lineups_pieces_and_a_second_one_loads_them(
    tmp_path, lineup, families
):
    first = run_fresh(lineup, tmp_path)
    assert first["loop_compiled"] == 1 and first["loop_loaded"] == 0
    assert sorted(first["families"]) == families
    assert all(f == {"loaded": 0, "compiled": 1} for f in first["families"].values())
    assert first["compiled"]["choose_evaluated"] == 0
    assert first["compiled"]["evaluated_values"] == 0
    assert not first["search_imported"]  # the expert adds nothing to a lineup without it
    assert first["compiled"]["greedy_context"] == (1 if lineup == "greedy" else 0)
    cached = cached_functions(tmp_path)
    assert "play.play_batch" in cached
    assert not any(name.startswith("evaluate.choose_evaluated") for name in cached)
    assert ("basic.greedy_context" in cached) == (lineup == "greedy")
    assert ("greedy.decide" in cached) == (lineup == "greedy")

    second = run_fresh(lineup, tmp_path)  # the same code: loaded, not compiled again
    assert second["loop_loaded"] == 1 and second["loop_compiled"] == 0
    assert all(f == {"loaded": 1, "compiled": 0} for f in second["families"].values())
    assert second["game"] == first["game"]
    assert cached_functions(tmp_path) == cached


def test_the_compile_notice_names_the_lineups_missing_pieces_and_their_estimate(monkeypatch):
    from sim.neom import GAME
    from strategies.neom import entries
    from strategies.neom.entries import COMPILE_SECONDS

    monkeypatch.setattr(entries, "is_piece_cached", lambda name: name != "loop")
    assert GAME.compile_estimate(ids("random")) == ("NEOM (loop pieces)", COMPILE_SECONDS["loop"])
    monkeypatch.setattr(entries, "is_piece_cached", lambda name: name == "loop")
    assert GAME.compile_estimate(ids("random")) == ("NEOM (steps pieces)", COMPILE_SECONDS["steps"])
    steps_cached = ("loop", "steps")
    monkeypatch.setattr(entries, "is_piece_cached", lambda name: name in steps_cached)
    title, seconds = GAME.compile_estimate(ids("greedy", "builder"))
    assert title == "NEOM (greedy+evaluated pieces)"
    assert seconds == COMPILE_SECONDS["greedy"] + COMPILE_SECONDS["evaluated"]
    monkeypatch.setattr(entries, "is_piece_cached", lambda name: False)
    assert GAME.compile_estimate(ids("greedy"))[0] == "NEOM (loop+steps+greedy pieces)"
