"""Run folders: the manifest, the data snapshot and the Parquet tables of a simulation run.

A run folder holds ``manifest.json``, a copy of the game's data file (NEOM: ``catalog.toml``) and
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

from sim.core.batch import BatchOutput, records, used_event_rows
from sim.core.errors import UserError
from sim.core.game import Game

MANIFEST = "manifest.json"
GAMES = "games"
PLAYERS = "players"
EVENTS = "events"
STATUS_RUNNING = "running"
STATUS_COMPLETE = "complete"

_COMPRESSION = "zstd"


def batch_file_name(index: int) -> str:
    return f"batch-{index:06d}.parquet"


def _arrow(frame: np.ndarray) -> dict[str, np.ndarray]:
    return {name: frame[name] for name in frame.dtype.names}


def batch_tables(game: Game, output: BatchOutput, strategy_names) -> dict[str, pa.Table]:
    """The stored tables of one batch: each output as rows of its record dtype (values checked,
    ``sim.core.batch.records``), the players of the seats actually played with the game id,
    strategy name and win share, the events each game wrote with the game id and kind name."""
    games_out = output.games
    game_ids = games_out[:, game.tables[GAMES].names.index("game_id")]
    games = records(games_out, game.tables[GAMES], GAMES, game_ids)
    players_dtype = game.tables[PLAYERS]
    used = output.players[:, :, players_dtype.names.index("seat")] >= 0
    game_rows = np.nonzero(used)[0]
    players = records(output.players[used], players_dtype, PLAYERS, game_ids[game_rows])
    columns = {"game_id": game_ids[game_rows], **_arrow(players)}
    names = pa.array(list(strategy_names), type=pa.string())
    columns["strategy_name"] = pc.take(names, pa.array(players["strategy"].astype(np.int64)))
    n_winners = games["n_winners"][game_rows].astype(np.float64)
    columns["win_share"] = players["win"] / n_winners
    tables = {GAMES: pa.table(_arrow(games)), PLAYERS: pa.table(columns)}
    if output.events is not None:
        n_events_col = game.tables[GAMES].names.index("n_events")
        rows = used_event_rows(games_out, n_events_col, game.events_per_game)
        counts = games_out[:, n_events_col]
        event_ids = np.repeat(game_ids, counts)
        events = records(output.events[rows], game.tables[EVENTS], EVENTS, event_ids)
        kinds = pa.array(list(game.event_kinds), type=pa.string())
        tables[EVENTS] = pa.table(
            {
                "game_id": event_ids,
                **_arrow(events),
                "kind_name": pc.take(kinds, pa.array(events["kind"].astype(np.int64))),
            }
        )
    return tables


def parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=_COMPRESSION)
    return sink.getvalue().to_pybytes()


def encode_batch(game: Game, output: BatchOutput, strategy_names) -> dict[str, bytes]:
    """The Parquet files of one batch, by table name (events only when recorded)."""
    return {
        name: parquet_bytes(table)
        for name, table in batch_tables(game, output, strategy_names).items()
    }


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

    def create(self, tables: tuple[str, ...], snapshot_name: str, data: bytes, manifest) -> None:
        """Make the folder with its manifest first (so it is a run folder from then on), its
        table folders and the snapshot of the game's data file."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            self.write_manifest(manifest)
            for table in tables:
                (self.path / table).mkdir(exist_ok=True)
            _write_atomic(self.path / snapshot_name, data)
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
