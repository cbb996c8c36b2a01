"""Reading a run chunk by chunk: the reductions every report section is made of.

A run is stored in batches of whole games (``sim.core.store``). A *chunk* is a few
consecutive batches that start and end on a deal boundary, so that the games of one deal
(its seat rotations: one cluster of the cluster-robust intervals) are always in the same
chunk. A section declares a :class:`Reduction`: a function from a :class:`Chunk` (its games,
players and events as small polars frames) to named statistics
(``analysis.core.reduce``: Sums, Moments, ClusterMoments, ...), each of which knows its merge.
:func:`analyse` reads every chunk once for all the reductions asked for, merges what they
return, and keeps each reduction's result on the run (``run.cache``), from which the
section's tables are derived. Memory is one chunk per worker plus the merged statistics,
whatever the run's size; the results do not depend on the chunking nor on the workers.

Reductions that need a value of the whole run first (a strategy's mean win share: the
expected share of every effect) name it in ``needs``; it is computed in an earlier pass and
given to every chunk (``chunk.values``). The chunks are reduced where ``simulate`` plays its
batches: in this process, in joblib worker processes, or on Dask workers (which must see the
run folder at the same path). See docs/analysis.md.
"""

import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from analysis.core.load import tile_names, widened
from analysis.core.reduce import merge_stats
from sim.core.errors import UserError

# A chunk holds at least this many games (whole batches, whole deals); a worker task a few
# chunks. Small enough to keep a worker's memory low, large enough that the fixed cost of a
# polars operation is spread over many games.
CHUNK_GAMES = 2_000
CHUNK_GAMES_WITHOUT_EVENTS = 10_000
TASK_GAMES = 20_000
# Below this many games a report is reduced in this process: starting worker processes costs
# more than it saves.
PARALLEL_FROM_GAMES = 40_000
# Statistics of this many chunks are merged at once (merging costs a polars group-by, so it
# is done for many parts together).
MERGE_EVERY = 16


@dataclass(frozen=True)
class Reduction:
    """A section's per-chunk work: ``reduce(chunk) -> {name: statistic}`` (statistics from
    ``analysis.core.reduce``), merged over the run; ``finish(merged, run)`` (optional) turns
    the merged statistics into the value kept on the run. ``needs``: reductions whose
    finished values ``reduce`` reads from ``chunk.values[reduction.name]``. ``reduce`` and
    ``finish`` must be module-level functions (they are sent to worker processes)."""

    name: str
    reduce: Callable
    finish: Callable | None = None
    needs: tuple["Reduction", ...] = ()
    # The tables ``reduce`` reads (a chunk loads only what its pass's reductions read); a
    # reduction reading the events runs in the last pass, so that they are read once.
    tables: tuple[str, ...] = ("games", "players", "events")


@dataclass(frozen=True)
class Execution:
    """Where and how the chunks are reduced: ``workers`` processes (None: all cores for a
    large run, this process for a small one), ``backend`` "local" (joblib) or "dask"
    (``scheduler``: its address; None: a local cluster), ``progress`` (None: on a terminal
    outside CI), ``chunk_games`` (None: :data:`CHUNK_GAMES`)."""

    workers: int | None = None
    backend: str = "local"
    scheduler: str | None = None
    progress: bool | None = None
    chunk_games: int | None = None
    task_games: int = TASK_GAMES


SERIAL = Execution(workers=1, progress=False)


@dataclass(frozen=True)
class ChunkSpec:
    """Consecutive batches of a run: the games ``start`` .. ``start + games - 1`` and the
    Parquet files holding them, per table."""

    start: int
    games: int
    files: dict


@dataclass(frozen=True)
class RunInfo:
    """What a worker needs to know of a run besides its chunk (small and picklable)."""

    path: str
    game: str
    manifest: dict  # without the file listing and sessions
    has_events: bool

    def data(self):
        """The run's game data (NEOM: its compiled catalogue), loaded once per process; None
        when the run folder has no copy of it."""
        key = (self.path, str(self.manifest.get("data", {}).get("digest", "")))
        if key not in _DATA:
            from sim.core.registry import get_game

            snapshot = Path(self.path) / str(self.manifest["data"].get("snapshot", ""))
            game = get_game(self.game)
            _DATA[key] = game.load_data(snapshot).content if snapshot.is_file() else None
        return _DATA[key]

    def name_tiles(self, frame: pl.DataFrame, column: str = "tile", as_name: str = "tile_name"):
        """Add a column of tile names for the tile ids in ``column`` (as Run.name_tiles)."""
        names = getattr(self.data(), "tile_names", ())
        return frame.with_columns(tile_names(frame[column], names, as_name))


_DATA: dict = {}


@dataclass
class Chunk:
    """One chunk of a run: its ``games``, ``players`` (with ``n_players``) and ``events``
    (None without an event log) as polars frames, the run's ``info`` and the finished values
    of the reductions named in ``needs`` (``values``, by reduction name)."""

    info: RunInfo
    spec: ChunkSpec
    games: pl.DataFrame
    players: pl.DataFrame
    events: pl.DataFrame | None
    values: dict
    _memo: dict = field(default_factory=dict, repr=False)

    def memo(self, function: Callable):
        """``function(self)``, computed once per chunk (frames several sections share)."""
        if function not in self._memo:
            self._memo[function] = function(self)
        return self._memo[function]


def load_chunk(info: RunInfo, spec: ChunkSpec, values: dict, read=("games", "players", "events")):
    """Read one chunk's Parquet files (of the tables in ``read``; games and players always)."""
    tables = {}
    for table, paths in spec.files.items():
        if table not in read and table not in ("games", "players"):
            continue
        try:
            # As open_run's tables: sums and products of small integers must not wrap.
            tables[table] = widened(pl.read_parquet(paths))
        except (pl.exceptions.PolarsError, OSError) as exc:
            first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise UserError(f"{paths[0]}: cannot read the Parquet file ({first_line})") from None
    games = tables["games"]
    players = tables["players"].join(games.select("game_id", "n_players"), on="game_id", how="left")
    return Chunk(info, spec, games, players, tables.get("events"), values)


# --- the chunks of a run ------------------------------------------------------------------------


def _deal_size(manifest: dict) -> int | None:
    """Games per deal when the manifest says (fixed and shuffled seats: 1; rotated: one game
    per seat of the run's player count); None when it cannot tell."""
    seats = manifest.get("seats", "rotate")
    if seats in ("fixed", "shuffle"):
        return 1
    players = manifest.get("players")
    if seats == "rotate" and isinstance(players, int) and not isinstance(players, bool):
        return players
    return None


def _batch_rows(paths: list[str], manifest: dict, run_path: Path) -> list[int]:
    """Games in each games file, from the run's listing (else the files' metadata)."""
    listing = manifest.get("files") if isinstance(manifest.get("files"), dict) else {}
    rows = []
    for path in paths:
        try:
            rel = Path(path).relative_to(run_path).as_posix()
        except ValueError:
            rel = ""
        entry = listing.get(rel)
        if isinstance(entry, dict) and isinstance(entry.get("rows"), int):
            rows.append(entry["rows"])
        else:
            rows.append(pq.read_metadata(path).num_rows)
    return rows


def _same_deal_across(games_paths: list[str], index: int) -> bool:
    """Whether the last game of batch ``index`` and the first of the next share a deal."""
    last = pl.read_parquet(games_paths[index], columns=["deal_seed"])["deal_seed"]
    first = pl.read_parquet(games_paths[index + 1], columns=["deal_seed"])["deal_seed"]
    return bool(len(last) and len(first) and last[-1] == first[0])


def plan_chunks(run, chunk_games: int | None = None) -> list[ChunkSpec]:
    """The run's batches cut into chunks of at least ``chunk_games`` games that end on a
    deal boundary (games are numbered in batch order, and a deal's games are consecutive)."""
    run_path = Path(run.path).resolve()
    paths = {t: [str(Path(p).resolve()) for p in files] for t, files in run.paths.items()}
    games_paths = paths["games"]
    rows = _batch_rows(games_paths, run.manifest, run_path)
    if chunk_games is None:
        chunk_games = CHUNK_GAMES if "events" in paths else CHUNK_GAMES_WITHOUT_EVENTS
    deal = _deal_size(run.manifest)
    specs, begin, start, count = [], 0, 0, 0
    for index, n in enumerate(rows):
        count += n
        last = index == len(rows) - 1
        if not last and count < chunk_games:
            continue
        if not last:
            end = start + count
            aligned = end % deal == 0 if deal else not _same_deal_across(games_paths, index)
            if not aligned:
                continue
        files = {table: table_paths[begin : index + 1] for table, table_paths in paths.items()}
        specs.append(ChunkSpec(start, count, files))
        begin, start, count = index + 1, start + count, 0
    return specs


def run_info(run) -> RunInfo:
    manifest = {k: v for k, v in run.manifest.items() if k not in ("files", "sessions")}
    return RunInfo(str(Path(run.path).resolve()), run.game.name, manifest, run.events is not None)


# --- running the reductions ---------------------------------------------------------------------


class MergeTree:
    """The statistics of chunks ``0 .. n_chunks - 1`` merged along one fixed tree, whatever
    the order they arrive in and however they were grouped into tasks: a node of level L
    merges the (at most) :data:`MERGE_EVERY` nodes of level L - 1 below it in chunk order,
    a chunk's own statistics are level 0. Float sums depend on the order they are added in,
    so a fixed tree makes a report the same to the last digit for any number of workers
    (and for a copy of the run), while memory stays at a few pending nodes per level.

    A node is ``{reduction name: {name: statistic}}``. A task adds its chunks' nodes to a
    tree of its own and hands on the nodes still pending (:meth:`nodes`); the command's
    process adds those to its tree, which completes the same merges in the same order."""

    def __init__(self, n_chunks: int, names):
        self.n_chunks = max(1, n_chunks)
        self.names = list(names)
        self.pending: dict[tuple[int, int], dict] = {}

    def _width(self, level: int) -> int:
        return -(-self.n_chunks // MERGE_EVERY**level)

    def add(self, level: int, index: int, node: dict) -> None:
        self.pending[(level, index)] = node
        while self._width(level) > 1:
            first = index // MERGE_EVERY * MERGE_EVERY
            siblings = range(first, min(first + MERGE_EVERY, self._width(level)))
            if any((level, i) not in self.pending for i in siblings):
                return
            children = [self.pending.pop((level, i)) for i in siblings]
            merged = {
                name: merge_stats([child.get(name, {}) for child in children])
                for name in self.names
            }
            level, index = level + 1, index // MERGE_EVERY
            self.pending[(level, index)] = merged

    def nodes(self) -> list[tuple[int, int, dict]]:
        return [(level, index, node) for (level, index), node in self.pending.items()]

    def result(self) -> dict:
        """The root's statistics (every chunk added)."""
        (root,) = self.pending.values()
        return root


_LIBC: list = []


def _libc():
    """glibc, or None elsewhere."""
    if not _LIBC:
        try:
            import ctypes

            _LIBC.append(ctypes.CDLL("libc.so.6"))
            _LIBC[0].mallopt  # noqa: B018 (glibc's, not another C library's)
        except (OSError, AttributeError):
            _LIBC[:] = [None]
    return _LIBC[0]


@contextmanager
def keep_freed_memory():
    """While a task's chunks are reduced, let the C allocator keep up to a few hundred MB of
    freed memory instead of returning it to the system after every chunk: each chunk's NumPy
    temporaries (a few MB each) would otherwise be mapped afresh and zeroed by the kernel
    every time, a quarter of the CPU time of a report. At the end of the task the memory is
    given back, so a worker's size between tasks stays what it was after its first (which
    joblib's workers watch for leaks). glibc only; elsewhere nothing changes."""
    libc = _libc()
    if libc is None:
        yield
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's malloc.h
    libc.mallopt(m_mmap_threshold, 32 * 2**20)
    libc.mallopt(m_trim_threshold, 256 * 2**20)
    try:
        yield
    finally:
        libc.malloc_trim(0)


def reduce_task(parent, infos, task, reductions, values) -> tuple[int, int, list]:
    """Reduce the chunks of ``task`` (its first chunk's index and its chunks: of each run in
    ``infos``, one, or twin runs read side by side, each with its own ``values``) with every
    reduction; return (games, batches, the nodes of the run's :class:`MergeTree` they make)."""
    from sim.core.workers import worker_setup

    worker_setup(parent)
    (first, n_chunks), specs = task
    tree = MergeTree(n_chunks, [r.name for r in reductions])
    games = batches = 0
    read = {table for r in reductions for table in r.tables}
    with keep_freed_memory():
        for offset, spec_group in enumerate(specs):
            chunks = [
                load_chunk(info, spec, given, read)
                for info, spec, given in zip(infos, spec_group, values, strict=True)
            ]
            argument = chunks[0] if len(chunks) == 1 else tuple(chunks)
            tree.add(0, first + offset, {r.name: r.reduce(argument) for r in reductions})
            games += spec_group[0].games
            batches += len(spec_group[0].files["games"])
            del chunks, argument
    return games, batches, tree.nodes()


def _worker_count(execution: Execution, n_games: int) -> int:
    from sim.core.workers import available_cores

    if execution.workers is not None:
        return max(1, execution.workers)
    if execution.backend == "dask" and execution.scheduler:
        return 1  # the cluster's workers; the count only sizes the tasks
    return available_cores() if n_games >= PARALLEL_FROM_GAMES else 1


def _show_progress(execution: Execution) -> bool:
    if execution.progress is not None:
        return execution.progress
    in_ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    return sys.stderr.isatty() and not in_ci


def progress_bar(execution: Execution | None, total: int, unit: str, desc: str):
    """The progress display of simulate (tqdm: count, rate, ETA), shown as ``execution``
    says (on a terminal outside CI by default)."""
    from tqdm import tqdm

    show = _show_progress(execution or Execution())
    return tqdm(total=total, unit=unit, desc=desc, disable=not show, smoothing=0.1)


@contextmanager
def _results(tasks: list, workers: int, execution: Execution) -> Iterator:
    """(games, batches, statistics) of each task, in the order they finish."""
    if execution.backend == "dask":
        with _dask_results(tasks, workers, execution.scheduler) as results:
            yield results
        return
    if workers == 1 or len(tasks) == 1:
        yield (reduce_task(*task) for task in tasks)
        return
    from sim.core.workers import loky_results

    # As simulate's workers: each watches this process from the moment it starts; each uses
    # one polars thread (the workers already share the cores).
    with loky_results(
        reduce_task,
        tasks,
        workers=workers,
        parent=tasks[0][0],
        in_flight=2,  # a task in flight per worker beyond the one it reduces
        died="a worker process died (killed, or out of memory)",
        starting=_one_polars_thread(),
    ) as results:
        yield results


@contextmanager
def _one_polars_thread():
    """Worker processes started here use one polars thread each: the workers already share
    out the cores, and a chunk's frames are too small for threads to pay."""
    previous = os.environ.get("POLARS_MAX_THREADS")
    os.environ.setdefault("POLARS_MAX_THREADS", "1")
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("POLARS_MAX_THREADS", None)


@contextmanager
def _dask_results(tasks: list, workers: int, scheduler: str | None) -> Iterator:
    import logging

    from distributed import as_completed

    from sim.core.workers import dask_client

    with dask_client(workers, scheduler, logging.ERROR, _one_polars_thread) as client:
        futures = as_completed([client.submit(reduce_task, *task, pure=False) for task in tasks])

        def results():
            for future in futures:
                result = future.result()
                future.release()
                yield result

        yield results()


def _passes(reductions) -> list[list[Reduction]]:
    """The reductions asked for and everything they need, in passes: each pass needs only
    the values of earlier passes."""
    depth: dict[str, int] = {}
    by_name: dict[str, Reduction] = {}

    def visit(reduction: Reduction, trail=()) -> int:
        if reduction.name in trail:
            raise ValueError(f"reductions need each other: {' -> '.join(trail)}")
        if reduction.name not in depth:
            needs = [visit(need, (*trail, reduction.name)) for need in reduction.needs]
            depth[reduction.name] = 1 + max(needs, default=-1)
            by_name[reduction.name] = reduction
        return depth[reduction.name]

    for reduction in reductions:
        visit(reduction)
    last = max(depth.values(), default=-1)
    passes = [[] for _ in range(last + 1)]
    for name, level in depth.items():
        reads_events = "events" in by_name[name].tables
        passes[last if reads_events else level].append(by_name[name])
    return passes


def _tasks(plans: list[list[ChunkSpec]], workers: int, task_games: int) -> list:
    """Chunks grouped into tasks of about ``task_games`` games, at least a few per worker;
    each task is ((index of its first chunk, chunks of the run), its chunks)."""
    chunks = list(zip(*plans, strict=True))
    total = sum(spec[0].games for spec in chunks)
    n_tasks = max(min(len(chunks), 4 * workers), math.ceil(total / max(task_games, 1)))
    n_tasks = max(1, min(n_tasks, len(chunks)))
    size = math.ceil(len(chunks) / n_tasks)
    return [((i, len(chunks)), chunks[i : i + size]) for i in range(0, len(chunks), size)]


def analyse(runs, reductions, execution: Execution | None = None, label: str = "") -> dict:
    """Run ``reductions`` (and what they need) over one run, each chunk read once per pass,
    and return {reduction name: finished value}; every value is also kept in ``run.cache``
    (and what is already there is not computed again).

    ``runs`` may also be a tuple of twin runs (the same games in the same batches: the two
    sides of ``neom compare`` or an experiment): each chunk is then read from every run and
    ``reduce`` gets the tuple of chunks, each carrying its own run's ``values`` (the
    ``needs`` are computed on each run first); nothing is cached."""
    execution = execution or Execution()
    if isinstance(runs, (tuple, list)):
        runs = tuple(runs)
        needs = [n for p in _passes([n for r in reductions for n in r.needs]) for n in p]
        for run in runs:
            analyse(run, needs, execution, label)
        values = tuple({n.name: run.cache[n.name] for n in needs} for run in runs)
        return _run_passes(runs, [list(reductions)], values, execution, label, {})
    run = runs
    wanted = [r for r in reductions if r.name not in run.cache]
    if wanted:
        passes = [[r for r in p if r.name not in run.cache] for p in _passes(wanted)]
        _run_passes((run,), [p for p in passes if p], None, execution, label, run.cache)
    return {r.name: run.cache[r.name] for r in reductions}


def _run_passes(runs, passes, values, execution: Execution, label: str, cache: dict) -> dict:
    """Reduce every chunk of ``runs`` pass by pass; finished values go to ``cache`` (which
    also gives the earlier passes' values to the later ones when ``values`` is None)."""
    import socket

    main = runs[0]
    plans = [plan_chunks(run, execution.chunk_games) for run in runs]
    for run, plan in zip(runs[1:], plans[1:], strict=True):
        if [(s.start, s.games) for s in plan] != [(s.start, s.games) for s in plans[0]]:
            raise UserError(f"{main.path} and {run.path}: not the same games in the same batches")
    infos = tuple(run_info(run) for run in runs)
    n_games = sum(spec.games for spec in plans[0])
    n_batches = sum(len(spec.files["games"]) for spec in plans[0])
    workers = _worker_count(execution, n_games)
    tasks = _tasks(plans, workers, execution.task_games)
    parent = (socket.gethostname(), os.getpid())
    out = {}
    for number, group in enumerate(passes, start=1):
        if values is None:
            needed = {need.name for r in group for need in r.needs}
            given = ({name: cache[name] for name in needed},)
        else:
            given = values
        what = label or ", ".join(r.name.split(".")[-1] for r in group[:3])
        what += "" if label or len(group) <= 3 else f" and {len(group) - 3} more"
        desc = f"{main.path.name}: pass {number}/{len(passes)} ({what})"
        bar = progress_bar(execution, n_games, "game", desc)
        tree = MergeTree(len(plans[0]), [r.name for r in group])
        started = time.perf_counter()
        jobs = [(parent, infos, task, group, given) for task in tasks]
        batches_done = 0
        with bar, _results(jobs, workers, execution) as done:
            for games, batches, nodes in done:
                for level, index, node in nodes:
                    tree.add(level, index, node)
                batches_done += batches
                bar.set_postfix_str(f"{batches_done}/{n_batches} batches", refresh=False)
                bar.update(games)
        merged = tree.result()
        for reduction in group:
            stats = merged.get(reduction.name, {})
            result = reduction.finish(stats, *runs) if reduction.finish else stats
            out[reduction.name] = cache[reduction.name] = result
        TIMINGS.append((main.path.name, [r.name for r in group], n_games,
                        round(time.perf_counter() - started, 3)))  # fmt: skip
    return out


# (run, reductions, games, seconds) of every pass of this process (for the benchmark).
TIMINGS: list = []


def value(run, reduction: Reduction, execution: Execution | None = None):
    """The finished value of ``reduction`` on ``run``: from ``run.cache``, or computed now
    (with what it needs) in this process."""
    if reduction.name not in run.cache:
        analyse(run, [reduction], execution or SERIAL)
    return run.cache[reduction.name]
