"""``python -m sim.tools.build_cache`` (issue 37): every shipped entry of every game compiled
once, in parallel, so that no later process of the same code compiles anything."""

import os
import subprocess
import sys
from pathlib import Path

import numba
import pytest
from run_helpers import COMPILE_LISTENER

import sim
from sim.core.registry import game_names, get_game
from sim.tools import build_cache
from sim.tools.build_cache import Piece

needs_jit = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="compiles on purpose")


def test_the_pieces_are_neoms_loop_its_steps_and_families_and_every_entry_of_the_other_games():
    pieces = build_cache.pieces()
    assert len({p.name for p in pieces}) == len(pieces)
    names = {p.name for p in pieces if p.game == "neom"}
    # NEOM: the loop, its steps (draft, scoring, an action), the search entry and each
    # strategy family, compiled independently
    assert names == {
        "neom:loop",
        "neom:steps",
        "neom:search",
        "neom:basic",
        "neom:greedy",
        "neom:evaluated",
        "neom:search_policy",
    }
    neom = get_game("neom")
    from strategies.neom.entries import lineup_pieces

    for info in neom.strategies.strategies:  # every strategy's pieces are built
        assert {f"neom:{name}" for name in lineup_pieces([info.id])} <= names, info.name
    for name in game_names():
        game = get_game(name)
        if game.pieces_ref:
            continue
        own = [p for p in pieces if p.game == name]
        for info in game.strategies.strategies:
            holding = [p for p in own if info.id in p.strategy_ids]
            assert len(holding) == 1, (name, info.name)
            # The entry the piece compiles is the one a lineup of this strategy plays.
            assert game.play_batch_for([info.id]) is game.play_batch_for(holding[0].strategy_ids)
    assert any(p.game == "tangram" for p in pieces)
    # The search entry calls the game loop's compiled functions: it is built after the loop,
    # so it loads them rather than compiling them again at the same time; the loop, its steps
    # and the families wait for nothing (they call one another by address).
    after = {p.name: set(p.after) for p in pieces}
    assert after["neom:search"] == {"neom:loop"}
    assert after["neom:search_policy"] == {"neom:evaluated"}
    for name in ("neom:loop", "neom:steps", "neom:basic", "neom:greedy", "neom:evaluated"):
        assert after[name] == set()
    assert not any(after[p.name] for p in pieces if p.game == "tangram")


def fake_pieces():
    return [
        Piece("g:small", "g", (0,), "G (small entry)", 10.0),
        Piece("g:large", "g", (1,), "G (large entry)", 30.0),
        Piece("g:middle", "g", (2,), "G (middle entry)", 20.0),
    ]


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_a_build_runs_the_longest_first_says_its_progress_and_names_a_failed_piece():
    clock = FakeClock()
    ran = []
    lines = []

    def run(piece):
        ran.append(piece.name)
        clock.now += piece.estimate_s  # each piece takes its estimate
        if piece.name == "g:middle":
            return False, "TypingError: no such thing"
        return True, ""

    failed = build_cache.build(fake_pieces(), 4, jobs=1, run=run, say=lines.append, clock=clock)
    assert ran == ["g:large", "g:middle", "g:small"]
    assert [(p.name, why) for p, why in failed] == [("g:middle", "TypingError: no such thing")]
    # 4 pieces in all, one of them cached before: the count starts at 1 done.
    assert lines == [
        "build_cache: [2/4] g:large compiled in 30 s; elapsed 0:30, about 0:30 left",
        "build_cache: [2/4] g:middle FAILED after 20 s: TypingError: no such thing; "
        "elapsed 0:50, about 0:10 left",
        "build_cache: [3/4] g:small compiled in 10 s; elapsed 1:00",
    ]


def test_a_built_piece_says_its_cpu_time():
    """A piece built in its own process reports its CPU time beside its wall time (on a
    shared machine the wall time is the load's as much as the piece's)."""
    clock = FakeClock()
    lines = []

    def run(piece):
        clock.now += piece.estimate_s
        return True, "12.3 s CPU"

    build_cache.build(fake_pieces()[:1], 1, jobs=1, run=run, say=lines.append, clock=clock)
    assert lines == ["build_cache: [1/1] g:small compiled in 10 s (12.3 s CPU); elapsed 0:10"]


def test_a_piece_waits_for_the_pieces_it_is_built_after():
    clock = FakeClock()
    ran = []

    def run(piece):
        ran.append(piece.name)
        clock.now += piece.estimate_s
        return True, ""

    large, small, middle = (
        Piece("g:large", "g", (1,), "", 30.0, after=("g:small",)),
        Piece("g:small", "g", (0,), "", 10.0),
        Piece("g:middle", "g", (2,), "", 20.0, after=("g:cached",)),  # a cached one: no wait
    )
    lines = []
    failed = build_cache.build([large, small, middle], 4, 1, run, lines.append, clock)
    assert failed == []
    assert ran == ["g:middle", "g:small", "g:large"]
    assert lines[-1] == "build_cache: [4/4] g:large compiled in 30 s; elapsed 1:00"


def run_main(monkeypatch, capsys, cached, fails=()):
    built = []

    def build(todo, total, jobs, say):
        built.extend(p.name for p in todo)
        return [(p, "it broke") for p in todo if p.name in fails]

    monkeypatch.setattr(build_cache, "pieces", lambda games=None: fake_pieces())
    monkeypatch.setattr(build_cache, "is_cached", lambda piece: piece.name in cached)
    monkeypatch.setattr(build_cache, "build", build)
    code = build_cache.main(["--jobs", "2"])
    out, err = capsys.readouterr()
    return code, built, out, err


def test_an_interrupted_build_resumes_with_the_pieces_not_cached(monkeypatch, capsys):
    code, built, out, _ = run_main(monkeypatch, capsys, cached={"g:small", "g:large"})
    assert code == 0
    assert built == ["g:middle"]
    assert "compiling 1 of 3 pieces (g:middle), 2 at a time" in out
    code, built, out, _ = run_main(monkeypatch, capsys, cached={"g:small", "g:large", "g:middle"})
    assert (code, built) == (0, [])
    assert "all 3 compiled pieces are in the cache" in out


def test_a_failed_piece_is_named_and_the_build_fails(monkeypatch, capsys):
    code, built, _, err = run_main(monkeypatch, capsys, cached=set(), fails={"g:large"})
    assert code == 1
    assert built == ["g:small", "g:large", "g:middle"]
    assert err.strip() == "build_cache: piece g:large failed: it broke"


def test_a_piece_whose_modules_have_no_cache_index_is_not_cached_without_importing_it(
    monkeypatch, tmp_path
):
    # A cold build's parent answers from the cache folders alone (no import of the loop).
    from sim.core import cache_keys
    from strategies.neom import entries

    monkeypatch.setenv("NEOM_NUMBA_CACHE_BASE", str(tmp_path))
    for name in ("loop", "steps", "greedy", "evaluated", "search"):
        assert entries._never_built(name), name
        assert not entries.is_piece_cached(name), name
    # An index in each of the greedy family's folders: the exact check decides instead.
    for source in entries._piece_sources("greedy"):
        folder = tmp_path / cache_keys.cache_key(str(cache_keys.ROOT / source))[0]
        folder.mkdir(parents=True)
        (folder / "decide-9.py311.nbi").write_bytes(b"")
    assert not entries._never_built("greedy")
    assert entries._never_built("evaluated")


def test_an_unknown_piece_is_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        build_cache.main(["--piece", "neom:nothing"])
    assert str(exc.value) == "build_cache: --piece neom:nothing: no such piece"


def test_clean_deletes_what_the_project_wrote_and_nothing_else(tmp_path):
    for name in ("sim/neom/engine-0123456789abcdef", "strategies/neom/play-0123456789abcdef"):
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "x.nbi").write_text("x")
    (tmp_path / "0123456789abcdef").mkdir()  # a folder of the earlier layout
    (tmp_path / "compile_seconds.json").write_text("{}")
    (tmp_path / "my-notes").mkdir()
    (tmp_path / "other_project_abcdef").mkdir()  # Numba's own folder for another file
    build_cache.clean(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my-notes", "other_project_abcdef"]


# In a fresh process: what compiling each piece's entry and a small simulate of each game
# compile (Numba's compile events fire for compiles, not for cache loads).
COUNT = (
    COMPILE_LISTENER
    + """
import sys, tempfile
from sim.core.cli import main
from sim.tools import build_cache
for piece in build_cache.pieces():
    build_cache.build_piece(piece)
with tempfile.TemporaryDirectory() as out:
    for game, lineup in (
        ("neom", "greedy,builder,merchant,industrialist"),
        ("tangram", "greedy,planner,random,greedy"),
    ):
        argv = ["simulate", "--game", game, "--players", "4", "--games", "4", "--workers", "1",
                "--seed", "3", "--strategies", lineup, "--out", f"{out}/{game}"]
        assert main(argv) == 0
from strategies.neom import pieces  # the families' C functions: no compile event, stats
for family in pieces.FAMILIES:
    lazy = pieces.piece(family)
    if lazy.cache_misses:
        compiled.append(f"pieces.{family}.decide")
print("compiled:", ",".join(sorted(set(compiled))) or "nothing")
"""
)


def compiled_after_build(checkout: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    done = subprocess.run(
        [sys.executable, "-c", COUNT], env=env, cwd=checkout, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def built():
    """The build ``make install`` runs, into this session's cache (a no-op when it ran)."""
    done = subprocess.run(
        [sys.executable, "-m", "sim.tools.build_cache"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@needs_jit
def test_after_the_build_a_fresh_process_compiles_nothing(built):
    assert compiled_after_build(sim.ROOT) == "compiled: nothing"


@needs_jit
def test_a_second_clone_of_the_same_code_compiles_nothing(built, tmp_path):
    """A copy of the packages at another path shares the cache (the entries are keyed on
    relative paths and source digests, not on the checkout's absolute path)."""
    from tests.test_compile_cache import copy_packages

    clone = copy_packages(tmp_path / "another" / "clone")
    assert compiled_after_build(clone) == "compiled: nothing"
