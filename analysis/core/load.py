"""Open a run folder written by ``neom simulate``: manifest, data snapshot, Parquet tables.

A run folder holds ``manifest.json`` (which names the game), a copy of the game's data file
and Parquet tables under ``games/``, ``players/`` and optionally ``events/``. :func:`open_run`
checks all of that against the game's declared tables and raises
:class:`sim.core.errors.UserError` naming the path when something is missing, so the analysis
code can rely on the columns.
"""

import sys
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from analysis.core.inputs import check_manifest
from sim.core.errors import UserError
from sim.core.game import ADDED_COLUMNS, Game, GameData
from sim.core.registry import get_game
from sim.core.store import EVENTS, GAMES, MANIFEST, PLAYERS, listed_names, read_run

MANIFEST_KEYS = ("game", "rules_version", "data", "players", "games", "seed", "strategies")


@dataclass(frozen=True)
class Run:
    path: Path
    manifest: dict
    game: Game
    data: GameData | None  # None when the run folder has no copy of its data file
    games: pl.LazyFrame
    players: pl.LazyFrame  # one row per seat, with the game's n_players joined in
    events: pl.LazyFrame | None
    paths: dict = field(default_factory=dict, repr=False)  # table -> batch files, in order
    # Finished values of the reductions run on it (analysis.core.batches), by name.
    cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def strategy_names(self) -> list[str]:
        return [s["name"] for s in self.manifest["strategies"]]

    @property
    def data_name(self) -> str:
        return str(self.manifest["data"].get("name", "?"))

    @property
    def reconstructed(self) -> bool:
        return bool(self.manifest["data"].get("reconstructed", False))

    @property
    def tables(self):
        """The game's own view of its data (NEOM: the compiled catalogue), if it was kept."""
        return self.data.content if self.data is not None else None

    def tile_name(self, tile: int) -> str:
        if tile < 0:
            return ""
        names = getattr(self.tables, "tile_names", ())
        return names[tile] if tile < len(names) else f"tile {tile}"

    def name_tiles(self, frame: pl.DataFrame, column: str = "tile", as_name: str = "tile_name"):
        """Add a column of tile names for the tile ids in ``column``."""
        names = getattr(self.tables, "tile_names", ())
        return frame.with_columns(tile_names(frame[column], names, as_name))


def tile_names(ids: pl.Series, names, as_name: str = "tile_name") -> pl.Series:
    """The names of tile ids: "" for none (null or negative), ``tile N`` past ``names``. One
    gather, not a Python call per row (a compare reads millions of seat rows)."""
    import numpy as np

    codes = ids.fill_null(-1).cast(pl.Int64).to_numpy()
    known = (codes >= 0) & (codes < len(names))
    lookup = pl.Series(as_name, ["", *names], dtype=pl.Utf8)
    out = lookup.gather(np.where(known, codes + 1, 0))
    beyond = codes >= len(names)
    if beyond.any():
        named = pl.lit("tile ") + pl.Series(codes).cast(pl.Utf8)
        out = pl.select(pl.when(pl.Series(beyond)).then(named).otherwise(out)).to_series()
    return out.alias(as_name)


def _check_manifest(path: Path, manifest: dict) -> None:
    manifest_path = path / MANIFEST
    if not isinstance(manifest, dict):
        raise UserError(f"{manifest_path}: expected a JSON object")
    if "game" not in manifest:
        raise UserError(
            f"{manifest_path}: written by an older neom-sim (no game recorded); simulate again"
        )
    missing = [key for key in MANIFEST_KEYS if key not in manifest]
    if missing:
        raise UserError(f"{manifest_path}: missing key(s) {', '.join(missing)}")
    if not isinstance(manifest["strategies"], list) or not all(
        isinstance(s, dict) and "name" in s for s in manifest["strategies"]
    ):
        raise UserError(f"{manifest_path}: 'strategies' must be a list of objects with a 'name'")
    if not isinstance(manifest["data"], dict):
        raise UserError(f"{manifest_path}: 'data' must be an object")


def _checked(frame: pl.LazyFrame | None, folder: Path, columns: tuple[str, ...]):
    """The table with its small integer columns widened to Int32 (sums and products here must
    not wrap), after checking it is readable and has ``columns``."""
    if frame is None:
        return None
    try:
        schema = frame.collect_schema()
    except (pl.exceptions.PolarsError, OSError) as exc:
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UserError(f"{folder}: cannot read the Parquet files ({first_line})") from None
    missing = [c for c in columns if c not in schema]
    if missing:
        raise UserError(f"{folder}: missing column(s) {', '.join(missing)}")
    return widened(frame)


def widened(frame):
    """``frame`` (lazy or not) with its small integer columns as Int32."""
    return frame.with_columns(pl.col(pl.Int8, pl.Int16, pl.UInt8, pl.UInt16).cast(pl.Int32))


def _load_data(path: Path, game: Game, manifest: dict) -> GameData | None:
    snapshot = path / str(manifest["data"].get("snapshot", ""))
    if not snapshot.is_file():
        return None
    return game.load_data(snapshot)


def open_run(path) -> Run:
    """Validate a complete run folder and open its tables lazily: every batch file is checked
    against the manifest (``sim.core.store.read_run``); files the run did not write are never
    read, and named on stderr."""
    path = Path(path)
    if not path.is_dir():
        raise UserError(f"{path}: no such run folder")
    tables = read_run(path)
    if tables.ignored:
        print(
            f"neom: note: {path}: ignoring what the run did not write: "
            f"{listed_names(list(tables.ignored))}",
            file=sys.stderr,
        )
    _check_manifest(path, tables.manifest)
    game = get_game(tables.manifest["game"])

    def columns(table: str) -> tuple[str, ...]:
        return (*game.columns(table), *ADDED_COLUMNS[table])

    games = _checked(tables.games, path / GAMES, columns(GAMES))
    players = _checked(tables.players, path / PLAYERS, columns(PLAYERS))
    events = _checked(tables.events, path / EVENTS, columns(EVENTS))
    players = players.join(games.select("game_id", "n_players"), on="game_id", how="left")
    data = _load_data(path, game, tables.manifest)
    run = Run(path, tables.manifest, game, data, games, players, events, tables.paths)
    check_manifest(run)  # the manifest against its tables (analysis.core.inputs)
    return run
