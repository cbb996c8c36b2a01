"""Open a Tangram City run folder as the analysis functions expect it.

The functions of this package read only ``run.players``, ``run.games``, ``run.events`` (polars
LazyFrames, events None without an event log), ``run.manifest`` (dict) and ``run.data`` (the
tile set, :class:`sim.core.game.GameData`), so the generic loader can hand them its own run.
:func:`open_run` reads the folders written by ``strategies.tangram.simulate``.
"""

import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from sim.core.errors import UserError
from sim.core.game import GameData


@dataclass(frozen=True)
class TangramRun:
    path: Path
    manifest: dict
    data: GameData
    games: pl.LazyFrame
    players: pl.LazyFrame
    events: pl.LazyFrame | None


def _scan(folder: Path) -> pl.LazyFrame | None:
    files = sorted(folder.glob("batch-*.parquet"))
    if not files:
        return None
    frame = pl.scan_parquet([str(f) for f in files])
    # The store narrows small integers: widen them so sums and products never wrap.
    return frame.with_columns(pl.col(pl.Int8, pl.Int16).cast(pl.Int32))


def open_run(path) -> TangramRun:
    from sim.tangram.tileset import load_tileset

    path = Path(path)
    manifest_path = path / "manifest.json"
    if not manifest_path.is_file():
        raise UserError(f"{path}: not a run folder (no manifest.json)")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if manifest.get("game") != "tangram":
        raise UserError(f"{path}: a run of {manifest.get('game', 'another game')!r}, not tangram")
    games = _scan(path / "games")
    players = _scan(path / "players")
    if games is None or players is None:
        raise UserError(f"{path}: missing the games or players tables")
    snapshot = path / "tileset.toml"
    data = load_tileset(snapshot if snapshot.is_file() else None)
    return TangramRun(path, manifest, data, games, players, _scan(path / "events"))
