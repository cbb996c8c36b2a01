"""Every registered game, through the Game interface only (sim/core/game.py): a few games per
player count via the generic runner, the same tables twice, and stored tables whose schema is
the declared record dtypes."""

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from run_helpers import small_run

from sim.core.game import ADDED_COLUMNS, REQUIRED_COLUMNS, TABLES
from sim.core.registry import game_names, get_game
from sim.core.store import read_run


def _run(game, players, out, seed=3):
    small_run(
        out, game.name, ("random",) * players, players, 2 * players, seed, batch_size=players,
        events=True,
    )  # fmt: skip
    return read_run(out)


@pytest.mark.parametrize("name", game_names())
def test_declaration_is_complete(name):
    game = get_game(name)
    assert set(game.tables) == set(TABLES)
    for table, dtype in game.tables.items():
        assert set(REQUIRED_COLUMNS[table]) <= set(dtype.names)
        assert not set(ADDED_COLUMNS[table]) & set(dtype.names)
        assert all(np.issubdtype(dtype[field], np.integer) for field in dtype.names)
    registry = game.strategies
    assert "random" in registry.by_name()
    for option in game.rule_options:
        assert option.default in option.choices
    assert game.load_data(None).arrays


@pytest.mark.parametrize("name", game_names())
def test_games_play_deterministically_through_the_interface(name, tmp_path):
    game = get_game(name)
    for players in range(game.min_players, game.max_players + 1):
        first = _run(game, players, tmp_path / f"a{players}")
        again = _run(game, players, tmp_path / f"b{players}")
        for table in TABLES:
            a = getattr(first, table).collect()
            b = getattr(again, table).collect()
            assert a.equals(b), f"{name}, {players} players: {table} differ between two runs"
        games = first.games.collect()
        players_frame = first.players.collect()
        assert games["n_players"].to_list() == [players] * 2 * players
        shares = players_frame.group_by("game_id").agg(pl.col("win_share").sum())
        assert np.allclose(shares["win_share"].to_numpy(), 1.0)
        counts = first.events.collect().group_by("game_id").len().sort("game_id")
        assert counts["len"].to_list() == games.sort("game_id")["n_events"].to_list()


@pytest.mark.parametrize("name", game_names())
def test_stored_schema_is_the_declared_dtypes(name, tmp_path):
    game = get_game(name)
    _run(game, game.max_players, tmp_path / "run")
    for table in TABLES:
        file = next((tmp_path / "run" / table).glob("batch-*.parquet"))
        schema = pq.read_schema(file)
        declared = game.tables[table]
        stored = [n for n in schema.names if n not in ADDED_COLUMNS[table]]
        assert stored == list(declared.names)
        for field in declared.names:
            assert schema.field(field).type.to_pandas_dtype() == declared[field].type
