"""A lineup compiles only the strategies it names (issue 28): the entry it is played by, and
what a fresh process with an empty compile cache compiles and writes for it."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import sim
from sim.core.machine import cache_env
from strategies.neom import play, search
from strategies.neom.entries import entry_name, play_batch_for
from strategies.neom.registry import resolve_strategy

ROOT = Path(sim.__file__).resolve().parent.parent


def ids(*names):
    return [resolve_strategy(name).id for name in names]


def test_each_lineup_gets_the_smallest_entry_holding_its_strategies():
    assert entry_name(ids("random")) == "basic"
    assert entry_name(ids("random", "miser")) == "basic"
    assert entry_name(ids("greedy")) == "greedy"
    assert entry_name(ids("greedy:money_weight=0", "random")) == "greedy"
    assert entry_name(ids("greedy", "builder", "merchant", "industrialist")) == "full"
    assert entry_name(ids("tuned_denier_2p")) == "full"
    assert entry_name(ids("expert", "greedy")) == "search"
    assert entry_name(ids("rollout")) == "search"
    assert play_batch_for(ids("builder")) is play.play_batch
    assert play_batch_for(ids("expert")) is search.play_batch
    basic = play_batch_for(ids("random"))
    assert basic is play_batch_for(ids("miser", "random"))  # one copy per entry, made once
    assert basic is not play.play_batch and basic is not play_batch_for(ids("greedy"))


# Runs in a fresh process whose compile cache is an empty folder: plays one game of LINEUP,
# then says which strategy functions this process compiled and which entry it used, and
# whether the entry was compiled or loaded from the cache.
CHILD = r"""
import json, sys
from sim.neom.catalog import load_catalog
from strategies.neom import basic, entries, evaluate, play
from strategies.neom.play import play_one
from strategies.neom.registry import parse_strategy

lineup = sys.argv[1].split(",")
result = play_one(load_catalog(), len(lineup), [parse_strategy(s) for s in lineup], seed=3)
entry = entries.play_batch_for([parse_strategy(s).id for s in lineup])
compiled = {
    name: len(function.signatures)
    for name, function in (
        ("choose_evaluated", evaluate.choose_evaluated),
        ("evaluated_values", evaluate.evaluated_values),
        ("greedy_context", basic.greedy_context),
        ("full play_batch", play.play_batch),
    )
}
print(json.dumps({
    "compiled": compiled,
    "entry": entry.py_func.__qualname__,
    "entry_loaded": sum(entry._cache_hits.values()),
    "entry_compiled": sum(entry._cache_misses.values()),
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
    ("lineup", "entry"),
    [
        # slow: a cold compile into an empty cache (about 40 s); the fast path is covered by
        # test_each_lineup_gets_the_smallest_entry_holding_its_strategies (the entry a lineup
        # gets) and test_build_cache.py::test_after_the_build_a_fresh_process_compiles_nothing
        pytest.param("random", "play_batch__basic", marks=pytest.mark.slow),
        # slow: one more cold compile (about 40 s CPU) for what the random case already shows
        pytest.param("greedy", "play_batch__greedy", marks=pytest.mark.slow),
    ],
)
def test_a_fresh_process_compiles_only_the_lineups_strategies_and_a_second_one_loads_them(
    tmp_path, lineup, entry
):
    first = run_fresh(lineup, tmp_path)
    assert first["entry"] == entry
    assert first["entry_compiled"] == 1 and first["entry_loaded"] == 0
    assert first["compiled"]["choose_evaluated"] == 0
    assert first["compiled"]["evaluated_values"] == 0
    assert first["compiled"]["full play_batch"] == 0
    assert not first["search_imported"]  # the expert adds nothing to a lineup without it
    assert first["compiled"]["greedy_context"] == (1 if lineup == "greedy" else 0)
    cached = cached_functions(tmp_path)
    assert f"play.{entry}" in cached
    assert not any(name.startswith("evaluate.choose_evaluated") for name in cached)
    assert ("basic.greedy_context" in cached) == (lineup == "greedy")
    assert "play.play_batch" not in cached

    second = run_fresh(lineup, tmp_path)  # the same code: loaded, not compiled again
    assert second["entry_loaded"] == 1 and second["entry_compiled"] == 0
    assert second["game"] == first["game"]
    assert cached_functions(tmp_path) == cached


def test_the_compile_notice_names_the_lineups_entry_and_its_estimate():
    from sim.neom import GAME
    from strategies.neom.entries import COMPILE_SECONDS

    assert GAME.compile_estimate(ids("random")) == ("NEOM (basic entry)", COMPILE_SECONDS["basic"])
    assert GAME.compile_estimate(ids("greedy", "builder"))[0] == "NEOM (full entry)"
    assert COMPILE_SECONDS["basic"] < COMPILE_SECONDS["greedy"] < COMPILE_SECONDS["full"]
