"""``python -m sim.tools.build_cache``: compile every shipped entry of every game into the
compile cache, one process per core, so that no later command waits for the compiler.

A piece is one compiled part of a game, compiled in a process of its own into the cache every
later process of the same code loads: NEOM's pieces are its game loop, its search entry and
each strategy family, compiled independently of one another (``Game.pieces_ref``:
``strategies.neom.entries.PIECES``); another game's are its entries (``Game.play_batch_for``:
Tangram City's ``play_batch``), each called on zero games. The cache (``sim.core.jit``:
entries keyed on relative paths and source digests, index updates under a lock) is safe for
processes compiling at once. A piece already in the cache is skipped, so an interrupted build
resumes where it stopped and a build after an edit compiles only the pieces that edit
touched. A line per piece tells what is done, the elapsed time and about how long is left; a
piece that fails names itself, the others still build, and the exit status is 1.

    python -m sim.tools.build_cache [--jobs N] [--game neom] [--lineup S1,S2] [--clean]

``--lineup`` builds only the pieces that lineup plays (a game with pieces: NEOM).

``make install`` runs it (and so ``make run`` and ``make test`` on a fresh clone).
"""

import argparse
import os
import queue
import resource
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from sim.core import cache_keys, compile_notice


@dataclass(frozen=True)
class Piece:
    """One compiled entry of a game: ``name`` is ``game:entry``, ``strategy_ids`` the
    strategies it plays (any lineup of them uses it), ``title`` and ``estimate_s`` what the
    compile notice calls it and how long its cold compile takes alone; ``after``: the pieces
    whose compiled code it calls (its entry's module imports theirs), built first so that it
    loads their code instead of compiling it at the same time."""

    name: str
    game: str
    strategy_ids: tuple[int, ...]
    title: str
    estimate_s: float = field(compare=False)
    after: tuple[str, ...] = ()


def pieces(games: list[str] | None = None) -> list[Piece]:
    """The compiled entries of these games (all games by default), one piece each."""
    from sim.core.game import resolve
    from sim.core.registry import game_names, get_game

    found = []
    modules = {}  # piece -> the module of its entry's code
    for game_name in games or game_names():
        game = get_game(game_name)
        if game.pieces_ref:
            for name, (seconds, after) in _pieces_module(game).PIECES.items():
                title = f"{game.title} ({name} piece)"
                last = compile_notice._last_time(title)
                found.append(
                    Piece(
                        f"{game_name}:{name}",
                        game_name,
                        (),
                        title,
                        last if last is not None else seconds,
                        tuple(f"{game_name}:{a}" for a in after),
                    )
                )
            continue
        groups: dict[str, list[int]] = {}
        titles: dict[str, tuple[str, float]] = {}
        for info in game.strategies.strategies:
            title, seconds = game.compile_estimate([info.id])
            if info.id not in groups.setdefault(title, []):  # archetypes share one id
                groups[title].append(info.id)
            titles[title] = (title, seconds)
        for title, ids in groups.items():
            entry = (
                resolve(game.compile_estimate_ref)(ids)[0]
                if game.compile_estimate_ref
                else "play_batch"
            )
            last = compile_notice._last_time(title)
            estimate = last if last is not None else titles[title][1]
            piece = Piece(f"{game_name}:{entry}", game_name, tuple(ids), title, estimate)
            found.append(piece)
            modules[piece.name] = game.play_batch_for(ids).__module__
    closures = cache_keys._module_closures(cache_keys.ROOT)
    return [
        replace(
            piece,
            after=tuple(
                other.name
                for other in found
                if other.name in modules
                and modules[other.name] != modules[piece.name]
                and modules[other.name] in closures.get(modules[piece.name], ())
            ),
        )
        if piece.name in modules
        else piece
        for piece in found
    ]


def lineup_only(every: list[Piece], games: list[str] | None, lineup: str) -> list[Piece]:
    """The pieces of ``every`` that a lineup of the one game given plays."""
    from sim.core.errors import UserError
    from sim.core.registry import get_game
    from sim.core.strategies import resolve_strategy, split_strategies

    if not games or len(games) != 1 or not get_game(games[0]).pieces_ref:
        raise UserError("--lineup needs one --game whose code is built in pieces (neom)")
    game = get_game(games[0])
    ids = [resolve_strategy(game.strategies, s).id for s in split_strategies(lineup)]
    names = {f"{game.name}:{name}" for name in _pieces_module(game).lineup_pieces(ids)}
    return [piece for piece in every if piece.name in names]


def _pieces_module(game):
    import importlib

    return importlib.import_module(game.pieces_ref)


def _piece_of_module(piece: Piece):
    """(the game's pieces module, the piece's name there), or None for an entry piece."""
    from sim.core.registry import get_game

    game = get_game(piece.game)
    if not game.pieces_ref:
        return None
    return _pieces_module(game), piece.name.split(":", 1)[1]


def _entry_and_args(piece: Piece):
    """The piece's compiled entry and a call of it on zero games (what ``sim.core.batch``
    passes, so the compiled signature is the one every command uses)."""
    from sim.core import rng
    from sim.core.registry import get_game

    game = get_game(piece.game)
    registry = game.strategies
    ids = np.zeros(0, dtype=np.int64)
    strategy_ids = np.array(piece.strategy_ids)
    args = (
        game,
        rng.master_key(1),
        ids,
        ids,
        np.zeros((0, game.max_players)),
        strategy_ids,
        np.zeros((len(strategy_ids), registry.n_params)),
        game.load_data(None).arrays,
        game.make_rules(),
    )
    return game.play_batch_for(strategy_ids), args


def is_cached(piece: Piece) -> bool:
    """Whether the piece's entry would load from the cache (nothing is compiled)."""
    from sim.core import jit

    own = _piece_of_module(piece)
    if own is not None:
        module, name = own
        return module.is_piece_cached(name)
    entry, _ = _entry_and_args(piece)
    return jit.has_cached_code(entry)


def build_piece(piece: Piece) -> float:
    """Compile the piece in this process (or load it); returns the seconds it took."""
    from sim.core.batch import play_arrays

    own = _piece_of_module(piece)
    start = time.perf_counter()
    if own is not None:
        module, name = own
        module.compile_piece(name)
    else:
        _, args = _entry_and_args(piece)
        play_arrays(*args, events=True)
    return time.perf_counter() - start


def run_in_child(piece: Piece) -> tuple[bool, str]:
    """Build the piece in a fresh process (its own interpreter: no compiled state shared, one
    core's work). Returns (whether it built, its CPU time when it did (``N s CPU``: on a
    shared machine a piece's own cost, which its wall time is not), else its last line of
    error output)."""
    done = subprocess.run(
        [sys.executable, "-m", "sim.tools.build_cache", "--piece", piece.name],
        capture_output=True,
        text=True,
        env=dict(
            os.environ,
            PYTHONPATH=os.pathsep.join(
                filter(None, [str(cache_keys.ROOT), os.environ.get("PYTHONPATH")])
            ),
        ),
    )
    if done.returncode == 0:
        said = done.stdout.strip().splitlines()
        return True, said[-1] if said and said[-1].endswith(" s CPU") else ""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return False, (lines[-1] if lines else f"exit status {done.returncode}")


def _clock(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def build(
    todo: list[Piece],
    total: int,
    jobs: int,
    run: Callable[[Piece], tuple[bool, str]] = run_in_child,
    say: Callable[[str], None] = print,
    clock: Callable[[], float] = time.perf_counter,
) -> list[tuple[Piece, str]]:
    """Build ``todo`` (``total`` pieces in all, the others cached), ``jobs`` at a time: the
    longest first of those whose ``after`` pieces are over; one line per piece that ends.
    Returns the pieces that failed, with why (a piece after a failed one is still tried: it
    then names its own error)."""
    start = clock()
    done_before = total - len(todo)
    waiting = sorted(todo, key=lambda p: -p.estimate_s)
    names = {p.name for p in todo}
    over: set[str] = set()
    finished: list[Piece] = []
    failed: list[tuple[Piece, str]] = []
    started: dict[str, float] = {}
    ended: queue.Queue = queue.Queue()

    def left(now: float) -> float:
        """Seconds of work left at ``now``, spread over the jobs: each piece's estimate, less
        what a running one has done."""
        rest = [p for p in todo if p.name not in over]
        work = sum(
            max(p.estimate_s - (now - started[p.name]), 0.0) if p.name in started else p.estimate_s
            for p in rest
        )
        return work / max(1, min(jobs, len(rest)))

    def one(piece: Piece) -> None:
        try:
            ok, why = run(piece)
        except Exception as error:  # noqa: BLE001 - reported as the piece's failure
            ok, why = False, f"{type(error).__name__}: {error}"
        ended.put((piece, ok, why, clock()))

    running = 0
    while waiting or running:
        while running < jobs and waiting:
            ready = [p for p in waiting if all(a in over or a not in names for a in p.after)]
            if not ready and running:
                break
            piece = (ready or waiting)[0]  # (nothing ready, nothing running: a cycle)
            waiting.remove(piece)
            started[piece.name] = clock()
            threading.Thread(target=one, args=(piece,), daemon=True).start()
            running += 1
        piece, ok, why, end = ended.get()
        running -= 1
        over.add(piece.name)
        (finished.append(piece) if ok else failed.append((piece, why)))
        took = end - started[piece.name]
        count = done_before + len(finished)
        cpu = f" ({why})" if why else ""
        what = f"compiled in {took:.0f} s{cpu}" if ok else f"FAILED after {took:.0f} s: {why}"
        rest = f", about {_clock(left(end))} left" if len(over) < len(todo) else ""
        elapsed = _clock(end - start)
        say(f"build_cache: [{count}/{total}] {piece.name} {what}; elapsed {elapsed}{rest}")
    return failed


def clean(base: str) -> list[str]:
    """Delete what this project wrote in the cache base: its packages' folders, the compile
    times, and the whole-checkout folders of the earlier layout. Returns what it deleted."""
    removed = []
    for name in (*cache_keys.PACKAGES, compile_notice.TIMES_FILE):
        path = os.path.join(base, name)
        if os.path.isdir(path):
            shutil.rmtree(path)
            removed.append(path)
        elif os.path.isfile(path):
            os.remove(path)
            removed.append(path)
    cache_keys._prune_stale_caches(Path(base), "", keep=0)
    return removed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.tools.build_cache", description=__doc__)
    parser.add_argument("--jobs", type=int, default=0, help="processes at once (0: one a core)")
    parser.add_argument("--game", action="append", help="this game's pieces only (repeatable)")
    parser.add_argument("--clean", action="store_true", help="delete the compile cache instead")
    parser.add_argument("--lineup", help="only the pieces this lineup plays (with one --game)")
    parser.add_argument("--piece", help=argparse.SUPPRESS)  # a child's one piece
    args = parser.parse_args(argv)
    base = os.environ["NEOM_NUMBA_CACHE_BASE"]
    if args.clean:
        for path in clean(base):
            print(f"build_cache: deleted {path}")
        return 0
    if args.jobs < 0:
        raise SystemExit(f"build_cache: --jobs {args.jobs}: must be 0 or more")
    from sim.core.errors import UserError

    try:
        every = pieces(args.game)
        if args.lineup:
            every = lineup_only(every, args.game, args.lineup)
    except UserError as error:
        raise SystemExit(f"build_cache: {error}") from None
    if args.piece:
        piece = {p.name: p for p in every}.get(args.piece)
        if piece is None:
            raise SystemExit(f"build_cache: --piece {args.piece}: no such piece")
        seconds = build_piece(piece)
        compile_notice._record_time(piece.title, seconds)
        used = resource.getrusage(resource.RUSAGE_SELF)
        print(f"{used.ru_utime + used.ru_stime:.1f} s CPU")  # the parent's line (run_in_child)
        return 0
    import joblib

    jobs = args.jobs or joblib.cpu_count()
    todo = [piece for piece in every if not is_cached(piece)]
    if not todo:
        print(f"build_cache: all {len(every)} compiled pieces are in the cache ({base})")
        return 0
    print(
        f"build_cache: compiling {len(todo)} of {len(every)} pieces "
        f"({', '.join(p.name for p in todo)}), {jobs} at a time, into {base}",
        flush=True,
    )
    try:
        failed = build(todo, len(every), jobs, say=lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        print("build_cache: interrupted; run it again to build the pieces left", file=sys.stderr)
        return 130
    if failed:
        for piece, why in failed:
            print(f"build_cache: piece {piece.name} failed: {why}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
