"""Open a run folder written by ``neom simulate``: manifest, catalogue snapshot, Parquet tables.

A run folder holds ``manifest.json``, ``catalog.toml`` (the catalogue the run used) and Parquet
tables under ``games/``, ``players/`` and optionally ``events/``. :func:`open_run` checks all of
that and raises :class:`sim.errors.UserError` naming the path when something is missing, so the
analysis code can rely on the agreed columns.
"""

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from sim.core.errors import UserError
from sim.core.store import CATALOG_SNAPSHOT, EVENTS, GAMES, MANIFEST, PLAYERS, read_run
from sim.neom import constants as K
from sim.neom.records import EVENT_COLUMNS, GAME_COLUMNS, PLAYER_COLUMNS
from sim.neom.tables import Tables

MANIFEST_KEYS = ("catalog", "variant", "players", "games", "seed", "strategies")
PLAYER_EXTRA_COLUMNS = ("game_id", "strategy_name", "win_share")
# The store replaces the batch-relative ``game_row`` by ``game_id``.
STORED_EVENT_COLUMNS = ("game_id", *EVENT_COLUMNS[1:], "kind_name")

# Score categories as the players table names them, in SCORE_KEYS order.
SCORE_COLUMNS = PLAYER_COLUMNS[3 : 3 + K.N_SCORE]
DRAFTED_COLUMNS = tuple(c for c in PLAYER_COLUMNS if c.startswith("cs_drafted"))
CS_GEN_COLUMNS = tuple(c for c in PLAYER_COLUMNS if c.startswith("cs_gen"))
DISCARDED_CS_COLUMNS = tuple(c for c in GAME_COLUMNS if c.startswith("discarded_cs"))


@dataclass(frozen=True)
class Run:
    path: Path
    manifest: dict
    tables: Tables | None  # None when the run folder has no catalogue snapshot
    games: pl.LazyFrame
    players: pl.LazyFrame  # one row per seat, with the game's n_players joined in
    events: pl.LazyFrame | None

    @property
    def strategy_names(self) -> list[str]:
        return [s["name"] for s in self.manifest["strategies"]]

    @property
    def catalog_name(self) -> str:
        return str(self.manifest["catalog"].get("name", "?"))

    @property
    def reconstructed(self) -> bool:
        return bool(self.manifest["catalog"].get("reconstructed", False))

    def tile_name(self, tile: int) -> str:
        if tile < 0:
            return ""
        if self.tables is not None and 0 <= tile < self.tables.n_tiles:
            return self.tables.tile_names[tile]
        return f"tile {tile}"

    def name_tiles(self, frame: pl.DataFrame, column: str = "tile", as_name: str = "tile_name"):
        """Add a column of tile names for the tile ids in ``column``."""
        names = [self.tile_name(int(t)) if t is not None else "" for t in frame[column]]
        return frame.with_columns(pl.Series(as_name, names, dtype=pl.Utf8))


def _check_manifest(path: Path, manifest: dict) -> None:
    manifest_path = path / MANIFEST
    if not isinstance(manifest, dict):
        raise UserError(f"{manifest_path}: expected a JSON object")
    missing = [key for key in MANIFEST_KEYS if key not in manifest]
    if missing:
        raise UserError(f"{manifest_path}: missing key(s) {', '.join(missing)}")
    if not isinstance(manifest["strategies"], list) or not all(
        isinstance(s, dict) and "name" in s for s in manifest["strategies"]
    ):
        raise UserError(f"{manifest_path}: 'strategies' must be a list of objects with a 'name'")
    if not isinstance(manifest["catalog"], dict):
        raise UserError(f"{manifest_path}: 'catalog' must be an object")


def _checked(frame: pl.LazyFrame | None, folder: Path, columns: tuple[str, ...]):
    """The table with its small integer columns widened to Int32 (the store narrows them; sums
    and products here must not wrap), after checking it is readable and has ``columns``."""
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
    return frame.with_columns(pl.col(pl.Int8, pl.Int16, pl.UInt8, pl.UInt16).cast(pl.Int32))


def _load_catalog(path: Path) -> Tables | None:
    catalog_path = path / CATALOG_SNAPSHOT
    if not catalog_path.is_file():
        return None
    # Imported here so that reading a run without a snapshot does not need the compiler.
    from sim.neom.catalog import load_catalog

    return load_catalog(catalog_path)


def open_run(path) -> Run:
    """Validate a complete run folder and open its tables lazily."""
    path = Path(path)
    if not path.is_dir():
        raise UserError(f"{path}: no such run folder")
    tables = read_run(path)
    _check_manifest(path, tables.manifest)
    games = _checked(tables.games, path / GAMES, GAME_COLUMNS)
    players = _checked(tables.players, path / PLAYERS, PLAYER_COLUMNS + PLAYER_EXTRA_COLUMNS)
    events = _checked(tables.events, path / EVENTS, STORED_EVENT_COLUMNS)
    players = players.join(games.select("game_id", "n_players"), on="game_id", how="left")
    return Run(path, tables.manifest, _load_catalog(path), games, players, events)
