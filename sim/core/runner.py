"""Play a run of games at scale: batches in worker processes, streamed to a Parquet run folder.

Games are numbered 0..n-1 and cut into batches of ``batch_size`` consecutive ids. A batch is
played by :func:`play_and_encode` wherever the backend puts it (this process, joblib/loky
processes, or Dask workers); it returns the batch's Parquet files as bytes and this process
writes them, so memory stays flat and the tables never depend on the worker count, batch size
or backend: a game's content depends only on the run key and its game id.

Every session (the first run and each ``--resume``) is recorded in the manifest with its games
and wall time, including a session cut short by Ctrl-C or an error; a session killed outright
is recovered from the run folder's journal when the run is resumed (``sim.core.store``).
Worker processes exit when the command's process dies, watching it from the moment they start
(:func:`sim.core.workers.worker_start`, :func:`_worker_setup`).
"""

import json
import logging
import os
import platform
import socket
import sys
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import numpy as np
from tqdm import tqdm

from sim.core.batch import STRATEGY_ID_DTYPE, play_arrays
from sim.core.commands.options import check_players
from sim.core.compile_notice import compile_notice
from sim.core.errors import UserError
from sim.core.game import Game
from sim.core.outputs import writer_lock
from sim.core.registry import DEFAULT_GAME, get_game
from sim.core.rng import master_key
from sim.core.seeding import SEAT_MODES, assign_seats, check_game_count
from sim.core.store import (
    EVENTS,
    GAMES,
    JOURNAL,
    MANIFEST,
    MAX_BATCHES,
    NEVER_WRITTEN,
    PLAYERS,
    STATUS_COMPLETE,
    STATUS_RUNNING,
    TABLE_NAMES,
    Damage,
    RunFolder,
    batch_path,
    check_run_removal,
    encode_batch,
    listed_counts,
    listed_names,
    owned_files,
    read_run_manifest,
    remove_run_folder,
)
from sim.core.strategies import seat_strategies
from sim.core.workers import available_cores, check_scheduler, dask_client, loky_results
from sim.core.workers import worker_setup as _worker_setup

BACKENDS = ("local", "dask")
# Batches queued per worker beyond the one it plays: keeps workers busy, bounds memory.
IN_FLIGHT_PER_WORKER = 2
# Limits of a run's options. A batch's event buffer is batch_size x events_per_game rows of
# int64 in every worker (1024 x 8 x 8 B = 64 KiB per game for NEOM), so 10,000 games is about
# 0.66 GB; seeds are stored as JSON integers that other tools read as int64.
MAX_BATCH_SIZE = 10_000
MAX_SEED = 2**63 - 1

# Manifest entries a resumed run must share with the run it continues (with the option naming
# each one in error messages).
RESUME_PARAMETERS = {
    "game": "--game",
    "rules_version": "version of the game's rules",
    "players": "--players",
    "games": "--games",
    "strategies": "--strategies",
    "seed": "--seed",
    "seats": "--seats",
    "batch_size": "--batch-size",
    "events": "--events",
    "data": "data file",
    "rules": "rules options",
}


@dataclass(frozen=True)
class RunConfig:
    out: Path
    strategies: tuple[str, ...]
    game: str = DEFAULT_GAME
    players: int = 4
    games: int = 20000
    seed: int = 1
    data: Path | None = None  # the game's data file (NEOM: --catalog); None: the default
    strategy_file: Path | None = None  # named parameter sets usable in ``strategies``
    seats: str = "rotate"
    workers: int | None = None  # None: all cores
    batch_size: int = 1000
    events: bool = False
    backend: str = "local"
    scheduler: str | None = None  # Dask scheduler address; None: a LocalCluster
    resume: bool = False
    overwrite: bool = False
    progress: bool | None = None  # None: only on a terminal outside CI
    command: str = ""
    # Rules options by name (the game's RuleOption names, and game-specific extras such as
    # NEOM's experiment interventions), as the values make_rules takes.
    rules: dict = field(default_factory=dict)
    # Repeat the validator's warnings about a data file the user gave (``neom simulate``).
    data_warnings: bool = False


@dataclass(frozen=True)
class RunResult:
    path: Path
    games: int  # games in the run folder
    games_played: int  # games played by this call (fewer when resuming)
    batches_resumed: int
    warmup_s: float
    wall_s: float
    games_per_s: float
    data_label: str  # the data's name, marked when it is a reconstruction
    reconstructed: bool
    manifest: dict = field(repr=False)
    already_complete: bool = False  # --resume of a complete run: nothing played or written


@dataclass(frozen=True)
class BatchPlan:
    """Everything a worker needs to play any batch of the run (small, picklable)."""

    game: str
    key: np.ndarray
    n_games: int
    batch_size: int
    seats: str
    n_players: int
    strategy_ids: np.ndarray
    strategy_params: np.ndarray
    strategy_names: tuple[str, ...]
    data: tuple
    rules: np.ndarray
    events: bool
    parent: tuple[str, int] = ("", 0)  # (host, pid) of the command's process
    data_label: tuple[str, bool] = ("", False)  # (label, reconstructed), in every Parquet file

    @property
    def n_batches(self) -> int:
        return -(-self.n_games // self.batch_size)

    @property
    def tables(self) -> tuple[str, ...]:
        return (GAMES, PLAYERS, EVENTS) if self.events else (GAMES, PLAYERS)

    def game_ids(self, index: int) -> np.ndarray:
        first = index * self.batch_size
        return np.arange(first, min(first + self.batch_size, self.n_games), dtype=np.int64)


def play_games(plan: BatchPlan, game_ids: np.ndarray):
    """Play the given games; return the game's outputs (``sim.core.batch.BatchOutput``)."""
    deal_indices, seat_strategy = assign_seats(plan.key, plan.seats, game_ids, plan.n_players)
    return play_arrays(
        get_game(plan.game),
        plan.key,
        game_ids,
        deal_indices,
        seat_strategy,
        plan.strategy_ids,
        plan.strategy_params,
        plan.data,
        plan.rules,
        plan.events,
    )


def play_and_encode(plan: BatchPlan, index: int) -> tuple[int, dict[str, bytes]]:
    """Play batch ``index`` and return its Parquet files (the unit of work of every backend)."""
    _worker_setup(plan.parent)
    output = play_games(plan, plan.game_ids(index))
    return index, encode_batch(get_game(plan.game), output, plan.strategy_names, plan.data_label)


def worker_count(config: "RunConfig") -> int:
    """Worker processes to start: --workers, at most the cores available (a note on stderr
    when capped; more processes than cores only slow the run and starve the machine). A
    remote Dask scheduler's workers are its own."""
    cores = available_cores()
    if config.workers is None:
        return cores
    if config.scheduler or config.workers <= cores:
        return config.workers
    print(
        f"neom: note: --workers {config.workers} capped at the {cores} "
        f"core{'s' if cores > 1 else ''} available",
        file=sys.stderr,
    )
    return cores


def _check_range(value: int, low: int, high: int | None, option: str) -> None:
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise UserError(f"{option} {value}: must be {bound}")


def _choice(value: str, choices: Iterable[str], option: str) -> None:
    if value not in choices:
        raise UserError(f"{option} {value!r}: expected one of {', '.join(choices)}")


def rules_array(game: Game, values: dict) -> np.ndarray:
    """The game's rules array for the options in ``values`` (name -> value; others default)."""
    defaults = {option.name: option.choices[option.default] for option in game.rule_options}
    return game.make_rules(**(defaults | values))


def make_plan(config: RunConfig):
    """Check the configuration and build the run's plan, data and manifest parameters."""
    game = get_game(config.game)
    check_players(config.players, game.name)
    _check_range(config.games, 1, None, "--games")
    _check_range(config.batch_size, 1, None, "--batch-size")
    if config.batch_size > MAX_BATCH_SIZE:
        raise UserError(
            f"--batch-size {config.batch_size}: at most {MAX_BATCH_SIZE:,} (a batch's buffers "
            "are held in memory by every worker)"
        )
    n_batches = -(-config.games // config.batch_size)
    if n_batches > MAX_BATCHES:
        raise UserError(
            f"--games {config.games} in batches of {config.batch_size} makes {n_batches:,} "
            f"batches, at most {MAX_BATCHES:,}: use a larger --batch-size"
        )
    if config.workers is not None:
        _check_range(config.workers, 1, None, "--workers")
    if not 0 <= config.seed <= MAX_SEED:
        raise UserError(f"--seed {config.seed}: must be an integer from 0 to {MAX_SEED}")
    _choice(config.seats, SEAT_MODES, "--seats")
    _choice(config.backend, BACKENDS, "--backend")
    check_scheduler(config.scheduler, config.backend)
    specs = seat_strategies(
        game.strategies, config.strategies, config.players, config.strategy_file
    )
    check_game_count(config.seats, config.games, config.players)
    data = game.load_data(config.data)
    if config.data_warnings and config.data is not None and game.data_warnings is not None:
        for warning in game.data_warnings(data):
            print(f"neom: warning: {warning}", file=sys.stderr)
    rules = rules_array(game, config.rules)
    plan = BatchPlan(
        game=game.name,
        key=master_key(config.seed),
        n_games=config.games,
        batch_size=config.batch_size,
        seats=config.seats,
        n_players=config.players,
        strategy_ids=np.array([spec.id for spec in specs], dtype=STRATEGY_ID_DTYPE),
        strategy_params=np.array([spec.params for spec in specs], dtype=np.float64),
        strategy_names=tuple(spec.label for spec in specs),
        data=data.arrays,
        rules=rules,
        events=config.events,
        parent=(socket.gethostname(), os.getpid()),
        data_label=(data.label, bool(data.reconstructed)),
    )
    parameters = {
        "game": game.name,
        "rules_version": game.rules_version,
        "players": config.players,
        "games": config.games,
        "strategies": [
            {
                "index": i,
                "name": spec.label,  # what the tables call it (a named set: its name)
                "spec": spec.spec,  # the strategy and every parameter not at its default
                "strategy": spec.name,
                "id": spec.id,
                "params": [float(p) for p in spec.params],
            }
            for i, spec in enumerate(specs)
        ],
        "seed": config.seed,
        "seats": config.seats,
        "batch_size": config.batch_size,
        "events": config.events,
        "data": {
            "name": data.name,
            "label": data.label,
            "reconstructed": data.reconstructed,
            "digest": data.digest,
            "source": str(data.source),
            "snapshot": data.snapshot_name,
        },
        "rules": game.rules_as_dict(rules),
    }
    return plan, data, parameters


def _shown(key: str, value) -> str:
    """A manifest entry as the user would recognise it in an error message."""
    if value is None:
        return "nothing"
    if key == "strategies":
        return ",".join(strategy["name"] for strategy in value)
    if key == "data":
        return f"{value['source']} (sha256 {value['digest'][:12]})"
    return json.dumps(value)


def _resume_conflict(old: dict, new: dict) -> str | None:
    """The first run parameter that differs between a run's manifest and the new options."""
    for key, option in RESUME_PARAMETERS.items():
        before, after = old.get(key), new[key]
        if key == "data":  # compare the content only: the same file may have moved
            same = before is not None and before.get("digest") == after["digest"]
        elif key == "strategies":  # what was played and what the tables call it
            same = _played(before) == _played(after)
        else:
            same = before == after
        if not same:
            return f"{option} (the run used {_shown(key, before)}, not {_shown(key, after)})"
    return None


def _played(strategies) -> list | None:
    """A manifest's strategies as the games know them (a run written before the manifest had
    the ``spec`` entry still resumes)."""
    if not isinstance(strategies, list):
        return None
    keys = ("name", "strategy", "id", "params")
    return [{k: s.get(k) for k in keys} if isinstance(s, dict) else s for s in strategies]


@dataclass
class Resumed:
    """What a resumed run's folder holds, checked before anything is written."""

    manifest: dict
    files: dict[str, dict]  # the listing: manifest and journal merged
    sessions: list[dict]  # sessions the journal recorded that the manifest has not
    complete: set[int]  # batches whose every file is as the run wrote it
    damages: list[Damage]  # listed files that are missing, truncated or altered
    ignored: list[str]  # entries the run did not write (never read, never deleted)
    journal: bool = False  # a journal is left (a session that did not close): to be tidied


def _prepare_folder(
    config: RunConfig, folder: RunFolder, parameters: dict, plan: BatchPlan
) -> Resumed | None:
    """Check the output folder against the options, writing nothing but what ``--overwrite``
    removes; return what a resumed run holds (None: a new run)."""
    if folder.is_empty():
        return None
    if not folder.is_run():
        action = "resume" if config.resume else "overwrite" if config.overwrite else "use"
        raise UserError(
            f"{folder.path}: not empty and not a run folder (no {MANIFEST}): will not {action} it"
        )
    if config.overwrite:
        remove_run_folder(folder.path, check_run_removal(folder.path), keep_folder=True)
        return None
    if not config.resume:
        raise UserError(
            f"{folder.path}: already holds a run; pass --resume to continue it or --overwrite "
            "to replace it"
        )
    manifest = read_run_manifest(folder, "resume")
    conflict = _resume_conflict(manifest, parameters)
    if conflict is not None:
        raise UserError(f"{folder.path}: cannot resume with a different {conflict}")
    files = folder.listing(manifest)
    if files is None:
        raise UserError(
            f"{folder.path}: written by an older neom-sim without a list of its files, so it "
            "cannot be checked: run it again with --overwrite"
        )
    sessions = manifest.get("sessions")
    if not isinstance(sessions, list):
        raise UserError(f"{folder.manifest_path}: not a neom run manifest (field 'sessions')")
    journal = folder.read_journal({s.get("id") for s in sessions if isinstance(s, dict)})
    files |= journal.files
    complete, damages = folder.verify(files, plan.tables, plan.n_batches)
    foreign = folder.foreign(owned_files(folder, manifest, files), TABLE_NAMES)
    # Entries in the way of what this session writes are refused; others are left alone.
    todo = [index for index in range(plan.n_batches) if index not in complete]
    needed = {batch_path(t, i) for t in plan.tables for i in todo}
    needed |= {*plan.tables, MANIFEST, JOURNAL, parameters["data"]["snapshot"]}
    blocking = [entry for entry in foreign if entry in needed]
    if blocking:
        raise UserError(
            f"{folder.path}: {blocking[0]} was not written by this run and is where the run "
            "writes: move it away to resume"
        )
    left = folder.journal_path.exists()
    return Resumed(manifest, files, journal.sessions, complete, damages, foreign, left)


def _versions() -> dict:
    packages = ("numpy", "numba", "polars", "pyarrow", "neom-sim")
    return {"python": platform.python_version()} | {name: version(name) for name in packages}


def _show_progress(config: RunConfig) -> bool:
    if config.progress is not None:
        return config.progress
    in_ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    return sys.stderr.isatty() and not in_ci


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@contextmanager
def _local_results(plan: BatchPlan, todo: list[int], workers: int):
    if workers == 1:
        yield (play_and_encode(plan, index) for index in todo)
        return
    with loky_results(
        play_and_encode,
        ((plan, index) for index in todo),
        workers=workers,
        parent=plan.parent,
        in_flight=IN_FLIGHT_PER_WORKER,
        died="a worker process died (killed, or out of memory); continue the run with --resume",
    ) as results:
        yield results


@contextmanager
def _dask_results(plan: BatchPlan, todo: list[int], workers: int, scheduler: str | None):
    from distributed import as_completed

    # A Ctrl-C that lands while the client waits on its event loop makes distributed's own
    # cancel callback fail (a NameError in distributed.utils.sync), which tornado logs with a
    # traceback; a task's real error reaches this process as its exception, so the event
    # loop's callback log says nothing the one-line message does not.
    logging.getLogger("tornado.application").setLevel(logging.CRITICAL)
    # The workers' own logs: critical only. A task's error reaches this process as its
    # exception; a stop leaves warnings about cancelled tasks in every worker, and a worker whose
    # scheduler has just shut down logs a heartbeat ERROR (seen after Ctrl-C under load), which
    # would make an interrupt more than one line.
    with dask_client(workers, scheduler, logging.CRITICAL) as client:
        try:
            slots = IN_FLIGHT_PER_WORKER * max(1, sum(client.nthreads().values()))
            pending = iter(todo)
            futures = as_completed()

            def submit_next() -> None:
                index = next(pending, None)
                if index is not None:
                    # pure=False: a batch is never served from another run's results.
                    futures.add(client.submit(play_and_encode, plan, index, pure=False))

            for _ in range(slots):
                submit_next()

            def results() -> Iterator[tuple[int, dict[str, bytes]]]:
                for future in futures:
                    result = future.result()
                    future.release()
                    submit_next()
                    yield result

            yield results()
        except BaseException:
            # Interrupted or failed: the shutdown below may log the workers' last words (lost
            # connections, cancelled tasks); the one line the command prints says it all.
            logging.getLogger("distributed").setLevel(logging.CRITICAL)
            raise


def _note(message: str) -> None:
    print(f"neom: note: {message}", file=sys.stderr)


def _timings(sessions: list[dict]) -> dict:
    """Wall time and games/s over every session, interrupted and killed ones included."""
    wall = sum(float(s.get("wall_s") or 0.0) for s in sessions)
    games = sum(int(s.get("games") or 0) for s in sessions)
    return {
        "wall_s": round(wall, 3),
        "games_played": games,
        "games_per_s": round(games / wall, 1) if wall > 0 else None,
    }


def run_simulation(config: RunConfig) -> RunResult:
    """Play the run described by ``config`` into its run folder (see the module docstring),
    holding the folder's lock throughout (one writer at a time: a second is refused in one
    line naming the live one, and never records it as killed). ``--resume`` of a run that is
    complete and whole writes nothing (``RunResult.already_complete``)."""
    if config.resume and config.overwrite:
        raise UserError("--resume and --overwrite exclude each other")
    plan, data, parameters = make_plan(config)
    workers = worker_count(config)
    folder = RunFolder(Path(config.out))
    if folder.path.is_symlink() or (folder.path.exists() and not folder.path.is_dir()):
        raise UserError(f"{folder.path}: exists and is not a folder")
    with writer_lock(
        folder.path,
        config.command or "neom simulate",
        "run folder",
        check=lambda: _prepare_folder(config, folder, parameters, plan),
    ) as resumed:
        return _run_locked(config, plan, data, parameters, workers, folder, resumed)


def _already_complete(resumed: "Resumed", plan: BatchPlan) -> bool:
    """A resumed run with nothing to do: complete, every batch as written, no session left in
    the journal to record."""
    return (
        resumed.manifest.get("status") == STATUS_COMPLETE
        and len(resumed.complete) == plan.n_batches
        and not resumed.sessions
        and not resumed.journal
    )


def _run_locked(config, plan, data, parameters, workers, folder, resumed) -> RunResult:
    if resumed is not None and _already_complete(resumed, plan):
        return RunResult(
            path=folder.path,
            games=plan.n_games,
            games_played=0,
            batches_resumed=plan.n_batches,
            warmup_s=0.0,
            wall_s=0.0,
            games_per_s=0.0,
            data_label=data.label,
            reconstructed=data.reconstructed,
            manifest=resumed.manifest,
            already_complete=True,
        )
    if resumed is None:
        manifest = {
            "status": STATUS_RUNNING,
            "created": _now(),
            "command": config.command,
            "versions": _versions(),
            **parameters,
            "sessions": [],
            "files": {},
        }
        complete: set[int] = set()
    else:
        manifest = resumed.manifest
        manifest["files"] = resumed.files
        manifest["sessions"] = manifest["sessions"] + resumed.sessions
        complete = resumed.complete
        for session in resumed.sessions:
            _note(
                f"{folder.path}: a session killed after {session['games']} games is recorded "
                "in the manifest"
            )
        # Batches the run wrote that are no longer as written (never-written ones are simply
        # still to play).
        damaged = [d for d in resumed.damages if d.why != NEVER_WRITTEN]
        if damaged:
            count = len({d.index for d in damaged})
            _note(
                f"{folder.path}: playing again {count} damaged batch{'es' if count > 1 else ''}"
                f" ({damaged[0]})"
            )
        if resumed.ignored:
            _note(
                f"{folder.path}: ignoring what the run did not write: "
                f"{listed_names(resumed.ignored)}"
            )
    todo = [index for index in range(plan.n_batches) if index not in complete]

    # Compile (or load from the cache) here first, so that workers only load the cache; and
    # before the folder is written, so that a game the data cannot store fails first.
    warmup_start = time.perf_counter()
    if todo:
        game = get_game(plan.game)
        entry = game.play_batch_for(plan.strategy_ids)
        with compile_notice(*game.compile_estimate(plan.strategy_ids), code=entry):
            play_and_encode(replace(plan, n_games=1, batch_size=1), 0)
    warmup_s = time.perf_counter() - warmup_start

    manifest["status"] = STATUS_RUNNING  # a resumed run is running again until it ends
    folder.create(plan.tables, data.snapshot_name, data.raw, manifest)
    folder.remove_journal()  # what it recorded is in the manifest now
    folder.remove_temporary(set(manifest["files"]), plan.tables)
    session = {
        "id": uuid.uuid4().hex,
        "started": _now(),
        "command": config.command,
        "backend": config.backend,
        "workers": workers if not config.scheduler else None,
        "warmup_s": round(warmup_s, 3),
    }
    folder.start_session(session)

    games_played = batches_played = 0
    ended = "failed"
    start = time.perf_counter()
    bar = tqdm(
        total=plan.n_games,
        initial=plan.n_games - sum(len(plan.game_ids(index)) for index in todo),
        unit="game",
        disable=not _show_progress(config),
        smoothing=0.1,
    )
    try:
        if config.backend == "dask" and todo:
            results = _dask_results(plan, todo, workers, config.scheduler)
        else:
            results = _local_results(plan, todo, workers)
        with bar, results as batches:
            for index, files in batches:
                n = len(plan.game_ids(index))
                elapsed = time.perf_counter() - start
                entries = folder.write_listed_batch(index, files, n, session["id"], elapsed)
                manifest["files"].update(entries)
                games_played += n
                batches_played += 1
                bar.update(n)
        ended = "complete"
    except KeyboardInterrupt:
        ended = "interrupted"
        raise
    finally:
        wall_s = time.perf_counter() - start
        session.update(
            batches=batches_played,
            games=games_played,
            wall_s=round(wall_s, 3),
            games_per_s=round(games_played / wall_s, 1) if wall_s > 0 else None,
            ended=ended,
        )
        manifest["sessions"] = manifest["sessions"] + [session]
        manifest["timings"] = _timings(manifest["sessions"])
        if ended == "complete":
            manifest.update(
                status=STATUS_COMPLETE,
                completed=_now(),
                counts=listed_counts(manifest["files"], plan.tables, plan.n_batches),
            )
            folder.write_manifest(manifest)
            folder.remove_journal()
        else:
            # Record the session cut short; if even that fails (a full disk), the journal
            # still holds it and the next --resume records it.
            try:
                folder.write_manifest(manifest)
                folder.remove_journal()
            except (UserError, OSError):
                pass
    return RunResult(
        path=folder.path,
        games=plan.n_games,
        games_played=games_played,
        batches_resumed=len(complete),
        warmup_s=warmup_s,
        wall_s=wall_s,
        games_per_s=games_played / wall_s if wall_s > 0 else 0.0,
        data_label=data.label,
        reconstructed=data.reconstructed,
        manifest=manifest,
    )
