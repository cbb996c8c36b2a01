"""The compile cache is keyed on the sources compiled code depends on, and on nothing else:
not on where the checkout is (clones and worktrees of the same code share it), not on drivers,
and an edit recompiles the modules that depend on the edited one, and only those."""

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numba
import pytest
from run_helpers import COMPILE_LISTENER

import sim

ROOT = Path(sim.__file__).resolve().parent.parent
needs_jit = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="compiles on purpose")


def copy_packages(tmp_path):
    tmp_path.mkdir(parents=True, exist_ok=True)
    for package in sim.PACKAGES:
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    return tmp_path


def keys_changed_by_editing(tmp_path, module: str, line: str) -> set[str]:
    """The module keys that differ after ``line`` is appended to ``module`` (a path under the
    checkout) in a copy of the checkout."""
    root = copy_packages(tmp_path)
    before = sim._module_digests(root)
    with open(root / module, "a") as f:
        f.write(f"\n{line}\n")
    sim._module_digests.cache_clear()
    after = sim._module_digests(root)
    return {name for name in before if before[name] != after[name]}


def relative(paths):
    return {p.relative_to(ROOT).as_posix() for p in paths}


def test_the_key_covers_the_compiled_modules_and_what_they_import():
    sources = relative(sim._compiled_sources(ROOT))
    # Compiled modules, and the constants and registries their compiled code reads.
    for needed in (
        "sim/neom/engine.py",
        "strategies/neom/play.py",
        "sim/neom/constants.py",
        "sim/neom/records.py",
        "sim/core/rng.py",
        "strategies/neom/evaluate.py",
        "strategies/neom/registry.py",
        "strategies/neom/archetypes.py",
    ):
        assert needed in sources
    # Drivers run only in Python.
    for driver in (
        "sim/core/cli.py",
        "sim/core/runner.py",
        "sim/tools/bench.py",
        "sim/tools/bench_ab.py",
        "sim/tools/build_cache.py",
        "strategies/tools/tune.py",
        "analysis/core/ladder.py",
    ):
        assert driver not in sources


def test_editing_a_driver_keeps_the_cache_and_editing_a_constant_starts_a_new_one(tmp_path):
    root = copy_packages(tmp_path)
    before = sim._sources_digest(root)
    with open(root / "sim" / "tools" / "bench_ab.py", "a") as f:
        f.write("\n# a driver edited\n")
    assert sim._sources_digest(root) == before
    with open(root / "sim" / "neom" / "constants.py", "a") as f:
        f.write("\nNEW_CONSTANT = 1\n")
    assert sim._sources_digest(root) != before


def test_a_copy_of_the_checkout_elsewhere_has_the_same_keys(tmp_path):
    copy = copy_packages(tmp_path / "elsewhere" / "clone")
    assert sim._module_digests(copy) == sim._module_digests(ROOT)


def test_editing_a_strategy_changes_the_keys_of_the_modules_that_import_it_and_no_other(
    tmp_path,
):
    changed = keys_changed_by_editing(tmp_path, "strategies/neom/basic.py", "# a strategy edited")
    # What compiles the edited strategy into its code: the strategy, its family's piece, the
    # dispatch (Python callers' choose_in and the searches' policy) and the pieces and the
    # search entry built on it, and the whole-checkout key.
    assert changed == {
        "strategies.neom.basic",
        "strategies.neom.pieces.greedy",
        "strategies.neom.dispatch",
        "strategies.neom.pieces.search_policy",
        "strategies.neom.search",
        "*",
    }
    # The game loop calls strategies by address (issue 36 item 4): it keeps its cache, as do
    # its steps, the engine, the other families, the evaluation and the other game.
    for kept in (
        "strategies.neom.play",
        "strategies.neom.steps.once",
        "strategies.neom.steps.action",
        "strategies.neom.pieces.evaluated",
        "strategies.neom.pieces.basic",
        "sim.neom.engine",
        "sim.neom.scoring",
        "strategies.neom.evaluate",
        "strategies.neom.archetypes",
        "sim.tangram.engine",
        "strategies.tangram.play",
        "sim.core.rng",
    ):
        assert kept not in changed, kept


@pytest.mark.parametrize("module", ["once", "action"])
def test_editing_one_of_the_loops_steps_recompiles_that_step_only(tmp_path, module):
    """The loop calls its steps by address (strategies.neom.steps): an edit of a step's module
    recompiles that module's functions (the steps piece loads the other's), never the loop,
    the search entry or a strategy family."""
    changed = keys_changed_by_editing(
        tmp_path, f"strategies/neom/steps/{module}.py", "# a loop step edited"
    )
    assert changed == {f"strategies.neom.steps.{module}", "*"}


def test_editing_the_loop_keeps_the_strategies_cache(tmp_path):
    """The steps import the loop's helpers (decide, log): an edit of the loop recompiles the
    loop, its steps and the search entry, never a strategy family."""
    changed = keys_changed_by_editing(tmp_path, "strategies/neom/play.py", "# the loop edited")
    assert changed >= {
        "strategies.neom.play",
        "strategies.neom.steps.once",
        "strategies.neom.steps.action",
    }
    for kept in ("strategies.neom.pieces.greedy", "strategies.neom.pieces.evaluated"):
        assert kept not in changed, kept


def test_editing_the_evaluation_keeps_the_game_loops_cache(tmp_path):
    edit = "# the archetypes' evaluation edited"
    changed = keys_changed_by_editing(tmp_path, "strategies/neom/evaluate.py", edit)
    assert "strategies.neom.pieces.evaluated" in changed
    assert "strategies.neom.play" not in changed
    assert "sim.neom.engine" not in changed


def test_a_key_is_a_folder_relative_to_the_cache_base_and_its_digest():
    folder, digest = sim.cache_key(str(ROOT / "strategies" / "neom" / "play.py"))
    assert folder == f"strategies/neom/play-{digest}"
    assert digest == sim._module_digests(ROOT)["strategies.neom.play"]
    # A copy over other globals (a function rebuilt elsewhere) may read any compiled module's.
    folder, digest = sim.cache_key(str(ROOT / "strategies" / "neom" / "play.py"), False)
    assert digest == sim._module_digests(ROOT)["*"]
    assert sim.cache_key(str(ROOT / "tests" / "test_jit.py")) is None
    assert sim.cache_key("/elsewhere/sim/neom/engine.py") is None


def test_only_the_most_recently_used_caches_of_other_versions_are_kept(tmp_path):
    """Each edit of a compiled module starts a cache folder for it: its older ones beyond the
    few most recently used are deleted when a new one starts; other folders stay."""
    for age, digest in enumerate(["a" * 16, "b" * 16, "c" * 16, "d" * 16, "e" * 16]):
        folder = tmp_path / f"play-{digest}"
        folder.mkdir()
        (folder / "index.nbi").write_text("x")
        os.utime(folder, (1000 - age, 1000 - age))  # "a" used last, "e" first
    (tmp_path / "my-notes").mkdir()
    (tmp_path / f"dispatch-{'e' * 16}").mkdir()  # another module's
    sim._prune_stale_caches(tmp_path, f"play-{'f' * 16}", keep=3, prefix="play-")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"dispatch-{'e' * 16}",
        "my-notes",
        *(f"play-{d * 16}" for d in "abc"),
    ]
    # the current folder is never counted
    sim._prune_stale_caches(tmp_path, f"play-{'a' * 16}", keep=1, prefix="play-")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"dispatch-{'e' * 16}",
        "my-notes",
        *(f"play-{d * 16}" for d in "ab"),
    ]


def test_a_folder_pruned_by_another_process_meanwhile_is_passed_over(tmp_path, monkeypatch):
    """Two processes starting at once prune the same base: a folder listed by one and deleted
    by the other before it is read must not fail the start (it did: FileNotFoundError)."""
    for age, digest in enumerate(["a" * 16, "b" * 16]):
        (tmp_path / f"play-{digest}").mkdir()
        os.utime(tmp_path / f"play-{digest}", (1000 - age, 1000 - age))
    gone = tmp_path / f"play-{'c' * 16}"  # listed, then removed by the other process
    listing, is_dir = Path.iterdir, Path.is_dir
    monkeypatch.setattr(Path, "iterdir", lambda self: [*listing(self), gone])
    monkeypatch.setattr(Path, "is_dir", lambda self: self == gone or is_dir(self))  # still there
    sim._prune_stale_caches(tmp_path, f"play-{'f' * 16}", keep=1, prefix="play-")
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"play-{'a' * 16}"]


# Two compiled modules of the package, one calling the other, and a third on its own.
PROBES = {
    "probe_a.py": """
        from sim.core.jit import njit

        @njit
        def f(x):
            return x + 1
        """,
    "probe_b.py": """
        from sim.core.jit import njit
        from sim.probe_a import f

        @njit
        def g(x):
            return f(x) * 2
        """,
    "probe_c.py": """
        from sim.core.jit import njit

        @njit
        def h(x):
            return x - 1
        """,
}
# Prints what this process compiled (Numba's compile events fire for compiles, not loads).
COUNT = (
    COMPILE_LISTENER
    + """
from sim.probe_b import g
from sim.probe_c import h
assert (g(3), h(3)) == (8, 2)
print(",".join(sorted(compiled)))
"""
)


def probe_checkout(path: Path) -> Path:
    copy_packages(path)
    for name, text in PROBES.items():
        (path / "sim" / name).write_text(textwrap.dedent(text))
    return path


def compiled_in(checkout: Path, cache: Path) -> str:
    env = dict(
        os.environ,
        PYTHONPATH=str(checkout),
        NEOM_NUMBA_CACHE_BASE=str(cache),
        NUMBA_CACHE_DIR=str(cache),
    )
    done = subprocess.run(
        [sys.executable, "-c", COUNT], env=env, cwd=checkout, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@needs_jit
def test_a_second_checkout_of_the_same_code_loads_and_an_edit_recompiles_its_dependents(
    tmp_path,
):
    cache = tmp_path / "cache"
    first = probe_checkout(tmp_path / "first")
    second = probe_checkout(tmp_path / "elsewhere" / "second")
    assert compiled_in(first, cache) == "f,g,h"
    assert compiled_in(first, cache) == ""
    # Another path, same code: Numba's own cache folders hash the absolute path and compiled
    # everything again here.
    assert compiled_in(second, cache) == ""
    # g calls f: editing f's module recompiles both, and h not.
    with open(second / "sim" / "probe_a.py", "a") as f:
        f.write("\nSOMETHING = 1\n")
    assert compiled_in(second, cache) == "f,g"
    # Editing g's module recompiles g alone (f's code and stamp are unchanged).
    with open(second / "sim" / "probe_b.py", "a") as f:
        f.write("\nSOMETHING = 1\n")
    assert compiled_in(second, cache) == "g"
    # The first checkout's code is still cached beside the edited one's.
    assert compiled_in(first, cache) == ""


# Compiles ``twice`` for one argument type and saves it while another process saves another
# type: both wait at a barrier, and each index write is slowed so that the two saves overlap.
RACE = """
import os, sys, time
from numba.core import caching
write = caching.IndexDataCacheFile._save_index
def slow_write(self, overloads):
    time.sleep(1.0)
    write(self, overloads)
caching.IndexDataCacheFile._save_index = slow_write
from sim.probe_race import twice
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.01)
twice(1.5 if sys.argv[1] == "float" else 1)
"""
RACE_MODULE = """
from sim.core.jit import njit

@njit
def twice(x):
    return 2 * x
"""
INDEX = """
from sim.probe_race import twice
print(sorted(str(key[0]) for key in twice._cache._cache_file._load_index()))
"""


@needs_jit
def test_two_processes_saving_one_function_at_once_keep_both_entries(tmp_path):
    """Numba reads a function's index, adds an entry and writes it back: without the lock one
    of two processes saving at once lost its entry (or both took data file 1)."""
    checkout = copy_packages(tmp_path / "checkout")
    (checkout / "sim" / "probe_race.py").write_text(RACE_MODULE)
    cache = tmp_path / "cache"
    env = dict(
        os.environ,
        PYTHONPATH=str(checkout),
        NEOM_NUMBA_CACHE_BASE=str(cache),
        NUMBA_CACHE_DIR=str(cache),
    )
    go = tmp_path / "go"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", RACE, kind, str(tmp_path / kind), str(go)],
            env=env,
            cwd=checkout,
            stderr=subprocess.PIPE,
            text=True,
        )
        for kind in ("int", "float")
    ]
    deadline = time.monotonic() + 300
    while not all((tmp_path / kind).exists() for kind in ("int", "float")):
        for child in children:
            assert child.poll() is None, child.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    go.touch()
    for child in children:
        assert child.wait(timeout=300) == 0, child.stderr.read()
    done = subprocess.run(
        [sys.executable, "-c", INDEX], env=env, cwd=checkout, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['(float64,)', '(int64,)']"
