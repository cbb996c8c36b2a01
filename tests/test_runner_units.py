"""Seat assignment, event compaction and the checked narrowing of stored columns (no engine)."""

import numpy as np
import pyarrow as pa
import pytest

from sim.core.batch import BatchOutput
from sim.core.errors import UserError
from sim.core.rng import master_key
from sim.core.seeding import assign_seats, check_game_count
from sim.core.store import batch_tables
from sim.core.strategies import split_strategies
from sim.neom import GAME
from sim.neom import records as R

KEY = master_key(3)


def test_fixed_seats_play_their_own_deal():
    deals, seats = assign_seats(KEY, "fixed", np.arange(5, 8), 3)
    assert deals.tolist() == [5, 6, 7]
    assert seats.tolist() == [[0, 1, 2]] * 3


def test_rotate_plays_each_deal_once_per_rotation():
    """Game g = d * P + r plays deal d; seat s plays strategy (s + r) % P."""
    deals, seats = assign_seats(KEY, "rotate", np.arange(6, 12), 3)
    assert deals.tolist() == [2, 2, 2, 3, 3, 3]
    assert seats[:3].tolist() == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    assert seats.dtype == np.int32 and deals.dtype == np.int64


def test_shuffle_is_a_reproducible_permutation_per_game():
    ids = np.arange(200)
    deals, seats = assign_seats(KEY, "shuffle", ids, 4)
    assert deals.tolist() == ids.tolist()
    assert (np.sort(seats, axis=1) == np.arange(4)).all()
    # The same game gets the same order alone or in another batch; orders vary across games.
    assert (assign_seats(KEY, "shuffle", ids[150:], 4)[1] == seats[150:]).all()
    assert len({tuple(row) for row in seats}) > 12
    # Each strategy reaches each seat about equally often.
    assert np.bincount(seats[:, 0], minlength=4).min() > 30
    assert not (assign_seats(master_key(4), "shuffle", ids, 4)[1] == seats).all()


def test_rotate_needs_whole_rotations():
    check_game_count("rotate", 12, 4)
    check_game_count("fixed", 10, 4)
    with pytest.raises(UserError, match="use 8 or 12"):
        check_game_count("rotate", 10, 4)


def test_strategy_list_keeps_parameters_with_their_strategy():
    assert split_strategies("random, greedy:money_weight=2,x=1 ,greedy") == (
        "random",
        "greedy:money_weight=2,x=1",
        "greedy",
    )
    with pytest.raises(UserError, match="empty strategy name"):
        split_strategies("random,,greedy")


def _games(n_events):
    games = np.zeros((len(n_events), R.N_GAME_COLS), dtype=np.int64)
    games[:, R.G_GAME_ID] = np.arange(10, 10 + len(n_events))
    games[:, R.G_N_EVENTS] = n_events
    games[:, R.G_N_WINNERS] = [1, 2, 1]
    return games


def _players(n_games):
    players = np.full((n_games, R.MAX_PLAYERS, R.N_PLAYER_COLS), -1, dtype=np.int64)
    players[:, :2] = 0
    players[:, :2, R.P_SEAT] = [0, 1]
    players[:, :2, R.P_STRATEGY] = [1, 0]
    return players


def test_events_table_keeps_the_used_rows_of_each_block_with_the_game_id():
    games = _games([2, 0, 3])
    block = GAME.events_per_game
    events = np.full((3 * block, R.N_EVENT_COLS), 99, dtype=np.int64)
    for i, count in enumerate([2, 0, 3]):
        for k in range(count):
            events[i * block + k] = i
            events[i * block + k, R.E_TURN] = k
            events[i * block + k, R.E_KIND] = R.EV_INCOME
    output = BatchOutput(games, _players(3), events)
    table = batch_tables(GAME, output, ("random", "greedy"))["events"].to_pydict()
    assert table["game_id"] == [10, 10, 12, 12, 12]
    assert table["turn"] == [0, 1, 0, 1, 2]
    assert table["kind_name"] == ["income"] * 5


def test_players_table_drops_unused_seats_and_shares_wins():
    games = _games([0, 0, 0])
    players = _players(3)
    players[1, :2, R.P_WIN] = 1  # a shared win
    players[0, 0, R.P_WIN] = 1
    players[2, 1, R.P_WIN] = 1
    output = BatchOutput(games, players, None)
    table = batch_tables(GAME, output, ("random", "greedy"))["players"].to_pydict()
    assert table["game_id"] == [10, 10, 11, 11, 12, 12]
    assert table["strategy_name"] == ["greedy", "random"] * 3
    assert table["win_share"] == [1.0, 0.0, 0.5, 0.5, 0.0, 1.0]


def test_tables_take_the_games_record_dtypes_and_refuse_values_that_do_not_fit():
    """The stored schema is the game's record dtype; a value outside its field's type is one
    clear error naming the game, table and column, never a wrapped number."""
    games = _games([0, 0, 0])
    output = BatchOutput(games, _players(3), None)
    schema = batch_tables(GAME, output, ("random", "greedy"))["games"].schema
    assert schema.field("n_players").type == pa.int8()
    assert schema.field("winning_score").type == pa.int32()
    games[1, R.G_WINNING_SCORE] = 2**40
    with pytest.raises(UserError, match=r"game 11: games column 'winning_score' = 1099511627776"):
        batch_tables(GAME, output, ("random", "greedy"))
