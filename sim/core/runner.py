"""Play a run of games at scale: batches in worker processes, streamed to a Parquet run folder.

Games are numbered 0..n-1 and cut into batches of ``batch_size`` consecutive ids. A batch is
played by :func:`play_and_encode` wherever the backend puts it (this process, joblib/loky
processes, or Dask workers); it returns the batch's Parquet files as bytes and this process
writes them, so memory stays flat and the tables never depend on the worker count, batch size
or backend: a game's content depends only on the run key and its game id.
"""

import json
import os
import platform
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import joblib
import numpy as np
from tqdm import tqdm

from sim.core.batch import STRATEGY_ID_DTYPE, play_arrays
from sim.core.compile_notice import compile_notice
from sim.core.errors import UserError
from sim.core.game import Game
from sim.core.registry import DEFAULT_GAME, get_game
from sim.core.rng import master_key
from sim.core.seeding import SEAT_MODES, assign_seats, check_game_count
from sim.core.store import (
    EVENTS,
    GAMES,
    MANIFEST,
    PLAYERS,
    STATUS_COMPLETE,
    STATUS_RUNNING,
    RunFolder,
    encode_batch,
)
from sim.core.strategies import load_strategy_file, resolve_strategy

BACKENDS = ("local", "dask")
# Batches queued per worker beyond the one it plays: keeps workers busy, bounds memory.
IN_FLIGHT_PER_WORKER = 2

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
    output = play_games(plan, plan.game_ids(index))
    return index, encode_batch(get_game(plan.game), output, plan.strategy_names)


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
    _check_range(config.players, game.min_players, game.max_players, "--players")
    _check_range(config.games, 1, None, "--games")
    _check_range(config.batch_size, 1, None, "--batch-size")
    if config.workers is not None:
        _check_range(config.workers, 1, None, "--workers")
    if config.seed < 0:
        raise UserError(f"--seed {config.seed}: must be a non-negative integer")
    _choice(config.seats, SEAT_MODES, "--seats")
    _choice(config.backend, BACKENDS, "--backend")
    if config.scheduler and config.backend != "dask":
        raise UserError("--scheduler needs --backend dask")
    if len(config.strategies) != config.players:
        raise UserError(
            f"--strategies lists {len(config.strategies)} strateg"
            f"{'y' if len(config.strategies) == 1 else 'ies'} but --players is {config.players}:"
            " give one strategy per seat"
        )
    registry = game.strategies
    named = load_strategy_file(registry, config.strategy_file) if config.strategy_file else None
    specs = [resolve_strategy(registry, spec, named) for spec in config.strategies]
    check_game_count(config.seats, config.games, config.players)
    data = game.load_data(config.data)
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
        strategy_names=tuple(spec.spec for spec in specs),
        data=data.arrays,
        rules=rules,
        events=config.events,
    )
    parameters = {
        "game": game.name,
        "rules_version": game.rules_version,
        "players": config.players,
        "games": config.games,
        "strategies": [
            {
                "index": i,
                "name": spec.spec,
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
        else:
            same = before == after
        if not same:
            return f"{option} (the run used {_shown(key, before)}, not {_shown(key, after)})"
    return None


def _prepare_folder(config: RunConfig, folder: RunFolder, parameters: dict) -> dict | None:
    """Check the output folder against the options; return the manifest being resumed."""
    if config.resume and config.overwrite:
        raise UserError("--resume and --overwrite exclude each other")
    if folder.path.exists() and not folder.path.is_dir():
        raise UserError(f"{folder.path}: exists and is not a folder")
    if folder.is_empty():
        return None
    if not folder.is_run():
        action = "resume" if config.resume else "overwrite" if config.overwrite else "use"
        raise UserError(
            f"{folder.path}: not empty and not a run folder (no {MANIFEST}): will not {action} it"
        )
    if config.overwrite:
        folder.remove()
        return None
    if not config.resume:
        raise UserError(
            f"{folder.path}: already holds a run; pass --resume to continue it or --overwrite "
            "to replace it"
        )
    manifest = folder.read_manifest()
    conflict = _resume_conflict(manifest, parameters)
    if conflict is not None:
        raise UserError(f"{folder.path}: cannot resume with a different {conflict}")
    return manifest


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
    parallel = joblib.Parallel(
        n_jobs=workers,
        backend="loky",
        return_as="generator_unordered",
        pre_dispatch=f"{IN_FLIGHT_PER_WORKER} * n_jobs",
        batch_size=1,  # one run batch per dispatch, so in-flight memory stays bounded
    )
    results = parallel(joblib.delayed(play_and_encode)(plan, index) for index in todo)
    try:
        yield results
    finally:
        results.close()


@contextmanager
def _dask_results(plan: BatchPlan, todo: list[int], workers: int, scheduler: str | None):
    from distributed import Client, LocalCluster, as_completed

    if scheduler:
        try:
            client = Client(scheduler, timeout="20s")
        except OSError as exc:
            raise UserError(f"--scheduler {scheduler}: cannot connect ({exc})") from None
        cluster = None
    else:
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
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
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_simulation(config: RunConfig) -> RunResult:
    """Play the run described by ``config`` into its run folder (see the module docstring)."""
    plan, data, parameters = make_plan(config)
    folder = RunFolder(Path(config.out))
    resumed = _prepare_folder(config, folder, parameters)
    workers = config.workers or joblib.cpu_count()
    manifest = resumed or {
        "status": STATUS_RUNNING,
        "created": _now(),
        "command": config.command,
        "versions": _versions(),
        **parameters,
        "sessions": [],
    }
    manifest["status"] = STATUS_RUNNING  # a resumed run is running again until it ends
    folder.create(plan.tables, data.snapshot_name, data.raw, manifest)
    complete = folder.clean_incomplete(plan.tables)
    todo = [index for index in range(plan.n_batches) if index not in complete]

    # Compile (or load from the cache) here first, so that workers only load the cache.
    warmup_start = time.perf_counter()
    if todo:
        game = get_game(plan.game)
        with compile_notice(game.title, game.compile_seconds):
            play_and_encode(replace(plan, n_games=1, batch_size=1), 0)
    warmup_s = time.perf_counter() - warmup_start

    games_done = plan.n_games - sum(len(plan.game_ids(index)) for index in todo)
    games_before = games_done
    started = _now()
    start = time.perf_counter()
    if config.backend == "dask" and todo:
        results = _dask_results(plan, todo, workers, config.scheduler)
    else:
        results = _local_results(plan, todo, workers)
    bar = tqdm(
        total=plan.n_games,
        initial=games_done,
        unit="game",
        disable=not _show_progress(config),
        smoothing=0.1,
    )
    with bar, results as batches:
        for index, files in batches:
            folder.write_batch(index, files)
            n = len(plan.game_ids(index))
            games_done += n
            bar.update(n)
    wall_s = time.perf_counter() - start

    games_played = games_done - games_before
    counts = folder.row_counts(plan.tables)
    session = {
        "started": started,
        "command": config.command,
        "backend": config.backend,
        "workers": workers if not config.scheduler else None,
        "batches": len(todo),
        "games": games_played,
        "warmup_s": round(warmup_s, 3),
        "wall_s": round(wall_s, 3),
        "games_per_s": round(games_played / wall_s, 1) if wall_s > 0 else None,
    }
    sessions = manifest["sessions"] + [session]
    total_wall = sum(s["wall_s"] for s in sessions)
    manifest.update(
        status=STATUS_COMPLETE,
        completed=_now(),
        counts={"batches": plan.n_batches} | counts,
        timings={
            "wall_s": round(total_wall, 3),
            "games_per_s": round(plan.n_games / total_wall, 1) if total_wall > 0 else None,
        },
        sessions=sessions,
    )
    folder.write_manifest(manifest)
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
