"""Run folders: the manifest, the catalogue snapshot and the Parquet tables of a simulation run.

A run folder holds ``manifest.json``, ``catalog.toml`` (a copy of the catalogue file used) and
one Parquet file per batch and table: ``games/batch-000123.parquet``, ``players/...`` and,
with events, ``events/...``. Each file is written to a hidden temporary name and renamed into
place, so a visible file is always whole; a batch is complete when all its tables exist. The
manifest says ``"status": "complete"`` only after the last batch. Tables hold only per-game
content (no batch-relative numbers), so they do not depend on how the run was split.
"""

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sim.core.errors import UserError
from sim.neom import records as R

MANIFEST = "manifest.json"
CATALOG_SNAPSHOT = "catalog.toml"
GAMES = "games"
PLAYERS = "players"
EVENTS = "events"
STATUS_RUNNING = "running"
STATUS_COMPLETE = "complete"

_COMPRESSION = "zstd"

# Storage type of every column; values are range-checked before narrowing.
GAME_DTYPES = {
    "game_id": np.int64,
    "deal_seed": np.int64,
    "n_players": np.int8,
    "variant": np.int8,
    "n_winners": np.int8,
    "winners_mask": np.int8,
    "winning_score": np.int16,
    "disasters_mask": np.int8,
    "discarded_cs0": np.int16,
    "discarded_cs1": np.int16,
    "discarded_cs2": np.int16,
    "discarded_cs3": np.int16,
    "discarded_cs4": np.int16,
    "n_events": np.int32,
}
_PLAYER_INT16 = {
    "tiles",
    "neighborhoods",
    "goods",
    "money_vp",
    "pollution",
    "ghost_town",
    "power",
    "total",
    "money",
    "cs_drafted0",
    "cs_drafted1",
    "cs_drafted2",
    "disaster_coins",
    "coins_buying",
    "coins_selling",
    "income_total",
}
PLAYER_DTYPES = {
    name: np.int32 if name == "goods_mask" else np.int16 if name in _PLAYER_INT16 else np.int8
    for name in R.PLAYER_COLUMNS
}
# ``game_row`` is the game's row in its batch: replaced by ``game_id`` in the stored table.
EVENT_DTYPES = {
    "turn": np.int8,
    "player": np.int8,
    "kind": np.int8,
    "tile": np.int16,
    "cell": np.int8,
    "coins": np.int16,
    "other": np.int16,
    "good": np.int8,
}


def batch_file_name(index: int) -> str:
    return f"batch-{index:06d}.parquet"


def _narrow(values: np.ndarray, dtype, column: str) -> np.ndarray:
    info = np.iinfo(dtype)
    if values.size and (values.min() < info.min or values.max() > info.max):
        raise OverflowError(
            f"column {column!r}: values {values.min()}..{values.max()} do not fit {info.dtype}"
        )
    return values.astype(dtype)


def games_table(games: np.ndarray) -> pa.Table:
    return pa.table(
        {
            name: _narrow(games[:, col], GAME_DTYPES[name], name)
            for col, name in enumerate(R.GAME_COLUMNS)
        }
    )


def players_table(games: np.ndarray, players: np.ndarray, strategy_names) -> pa.Table:
    """One row per seat actually played, with the game id, strategy name and win share."""
    used = players[:, :, R.P_SEAT] >= 0
    rows = players[used]
    game_rows = np.nonzero(used)[0]
    columns = {"game_id": games[game_rows, R.G_GAME_ID]}
    for col, name in enumerate(R.PLAYER_COLUMNS):
        columns[name] = _narrow(rows[:, col], PLAYER_DTYPES[name], name)
    names = pa.array(list(strategy_names), type=pa.string())
    columns["strategy_name"] = pc.take(names, pa.array(rows[:, R.P_STRATEGY]))
    columns["win_share"] = rows[:, R.P_WIN] / games[game_rows, R.G_N_WINNERS].astype(np.float64)
    return pa.table(columns)


def events_table(games: np.ndarray, events: np.ndarray) -> pa.Table:
    """The used rows of each game's event block, tagged with the game id and the kind's name."""
    n_games = games.shape[0]
    block = events.shape[0] // n_games
    counts = games[:, R.G_N_EVENTS]
    starts = np.arange(n_games, dtype=np.int64) * block
    offsets = np.cumsum(counts) - counts
    rows = np.repeat(starts - offsets, counts) + np.arange(counts.sum(), dtype=np.int64)
    used = events[rows]
    columns = {"game_id": np.repeat(games[:, R.G_GAME_ID], counts)}
    for col, name in enumerate(R.EVENT_COLUMNS):
        if name in EVENT_DTYPES:
            columns[name] = _narrow(used[:, col], EVENT_DTYPES[name], name)
    kinds = pa.array(list(R.EVENT_KIND_NAMES), type=pa.string())
    columns["kind_name"] = pc.take(kinds, pa.array(used[:, R.E_KIND]))
    return pa.table(columns)


def parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=_COMPRESSION)
    return sink.getvalue().to_pybytes()


def encode_batch(
    games: np.ndarray, players: np.ndarray, events: np.ndarray | None, strategy_names
) -> dict[str, bytes]:
    """The Parquet files of one batch, by table name (events only when recorded)."""
    files = {
        GAMES: parquet_bytes(games_table(games)),
        PLAYERS: parquet_bytes(players_table(games, players, strategy_names)),
    }
    if events is not None:
        files[EVENTS] = parquet_bytes(events_table(games, events))
    return files


def _write_atomic(path: Path, data: bytes) -> None:
    # Hidden name: globs like players/*.parquet never see a half-written file.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


@dataclass(frozen=True)
class RunFolder:
    path: Path

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def is_empty(self) -> bool:
        return not self.path.exists() or not any(self.path.iterdir())

    def is_run(self) -> bool:
        return self.manifest_path.is_file()

    def read_manifest(self) -> dict:
        try:
            return json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise UserError(f"{self.manifest_path}: cannot read the run manifest ({exc})") from None

    def write_manifest(self, manifest: dict) -> None:
        data = json.dumps(manifest, indent=2, sort_keys=False) + "\n"
        _write_atomic(self.manifest_path, data.encode("utf-8"))

    def create(self, tables: tuple[str, ...], catalog_source: Path, manifest: dict) -> None:
        """Make the folder with its manifest first (so it is a run folder from then on), its
        table folders and the catalogue snapshot."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            self.write_manifest(manifest)
            for table in tables:
                (self.path / table).mkdir(exist_ok=True)
            _write_atomic(self.path / CATALOG_SNAPSHOT, Path(catalog_source).read_bytes())
        except OSError as exc:
            raise UserError(f"{self.path}: cannot write the run folder ({exc.strerror})") from None

    def remove(self) -> None:
        shutil.rmtree(self.path)

    def write_batch(self, index: int, files: dict[str, bytes]) -> None:
        for table, data in files.items():
            _write_atomic(self.path / table / batch_file_name(index), data)

    def batch_files(self, table: str) -> dict[int, Path]:
        folder = self.path / table
        files = folder.glob("batch-*.parquet") if folder.is_dir() else ()
        return {int(file.name[len("batch-") : -len(".parquet")]): file for file in files}

    def complete_batches(self, tables: tuple[str, ...]) -> set[int]:
        """Indices of the batches whose every table file exists."""
        return set.intersection(*(set(self.batch_files(table)) for table in tables))

    def clean_incomplete(self, tables: tuple[str, ...]) -> set[int]:
        """Delete temporary files and the files of incomplete batches; return complete ones."""
        complete = self.complete_batches(tables)
        for table in tables:
            for index, file in self.batch_files(table).items():
                if index not in complete:
                    file.unlink()
            for file in (self.path / table).glob(".*.tmp"):
                file.unlink()
        for file in self.path.glob(".*.tmp"):
            file.unlink()
        return complete

    def row_counts(self, tables: tuple[str, ...]) -> dict[str, int]:
        return {
            table: sum(pq.read_metadata(file).num_rows for file in self.batch_files(table).values())
            for table in tables
        }


@dataclass(frozen=True)
class RunTables:
    manifest: dict
    games: pl.LazyFrame
    players: pl.LazyFrame
    events: pl.LazyFrame | None  # None when the run did not record events


def read_run(path) -> RunTables:
    """The tables of a complete run folder as polars LazyFrames (files in batch order)."""
    folder = RunFolder(Path(path))
    if not folder.is_run():
        raise UserError(f"{folder.path}: not a run folder (no {MANIFEST})")
    manifest = folder.read_manifest()
    if manifest.get("status") != STATUS_COMPLETE:
        raise UserError(
            f"{folder.path}: the run is not complete (continue it with neom simulate --resume)"
        )

    def scan(table: str) -> pl.LazyFrame:
        files = folder.batch_files(table)
        return pl.scan_parquet([str(files[index]) for index in sorted(files)])

    events = scan(EVENTS) if manifest["events"] else None
    return RunTables(manifest, scan(GAMES), scan(PLAYERS), events)
