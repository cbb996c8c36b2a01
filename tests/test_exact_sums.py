"""Exactly rounded float sums (analysis.core.exact) and the figures built on them: the same to
the bit in any row order and under any polars thread count."""

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl

from analysis.core.exact import WIN_SHARE_UNIT, group_fsum, group_sums

ROOT = Path(__file__).resolve().parents[1]


def test_group_sums_are_math_fsum_of_each_group():
    rng = np.random.default_rng(7)
    cases = [
        rng.normal(size=500),
        rng.normal(size=500) * 10.0 ** rng.integers(-300, 300, size=500),
        rng.choice([0.1, 1e16, -1e16, 1 / 3, -0.2, 5e-324, 1e100, -1e100], size=500),
        rng.normal(size=500) * 1e-310,  # subnormal values
    ]
    for values in cases:
        codes = rng.integers(0, 7, size=values.size)
        got = group_fsum(codes, values, 8)
        want = [math.fsum(values[codes == g]) for g in range(8)]
        assert got.tolist() == want  # group 7 has no values: 0.0
        order = rng.permutation(values.size)
        assert group_fsum(codes[order], values[order], 8).tolist() == want


def test_a_known_sum_that_a_float_sum_in_order_gets_wrong():
    values = [0.1, 1e16, 0.3, -1e16]
    assert sum(values) != 0.4 and math.fsum(values) == 0.4
    assert group_fsum([0, 0, 0, 0], values, 1).tolist() == [0.4]
    frame = pl.DataFrame({"k": ["a", "b", "a", "a", "a"], "x": [0.1, 2.0, 1e16, 0.3, -1e16],
                          "n": [1, 2, 3, None, 5]})  # fmt: skip
    assert group_sums(frame, "k", ["x", "n"]).to_dicts() == [
        {"k": "a", "rows": 4, "x": 0.4, "n": 9},
        {"k": "b", "rows": 1, "x": 2.0, "n": 2},
    ]


def test_non_finite_values_sum_as_in_any_order():
    got = group_fsum([0, 0, 1, 1, 2], [math.inf, 1.0, math.inf, -math.inf, math.nan], 3)
    assert got[0] == math.inf and math.isnan(got[1]) and math.isnan(got[2])


def test_win_shares_are_whole_sixtieths():
    shares = [1.0, 0.0] + [1 / k for k in range(2, 6)]
    assert all(round(s * WIN_SHARE_UNIT) / WIN_SHARE_UNIT == s for s in shares)


# Seat outcomes (their expected shares), a cluster-robust reduction merged from parts and the
# paired shifts balance reads, on 150,000 seats: printed as hex floats.
_FIGURES = """
import types
import numpy as np, polars as pl
from analysis.core.compare import paired_effect_shifts
from analysis.core.reduce import ClusterMoments
from analysis.core.tabulate import seat_outcomes

rng = np.random.default_rng(3)
games = 50_000
game = np.repeat(np.arange(games), 3)
winners = rng.integers(1, 4, size=games)
win = (np.tile(np.arange(3), games) < np.repeat(winners, 3)) & (rng.random(3 * games) < 0.6)
players = pl.DataFrame({
    "game_id": game, "seat": np.tile(np.arange(3), games),
    "strategy_name": rng.choice(["a", "b", "c"], size=3 * games),
    "n_players": np.full(3 * games, 3),
    "win_share": win / np.repeat(winners, 3), "total": rng.integers(20, 90, size=3 * games),
})
run = types.SimpleNamespace(
    players=players.lazy(),
    games=pl.DataFrame({"game_id": np.arange(games), "deal_seed": np.arange(games) // 2,
                        "n_players": np.full(games, 3)}).lazy())
seats = seat_outcomes(run).collect().sort("game_id", "seat").with_columns(
    pl.Series("tile_name", rng.choice([f"t{i}" for i in range(40)], size=3 * games)))
chunks = seats.with_columns((pl.col("game_id") // 5000).alias("_chunk"))
parts = [ClusterMoments.of(part, ["tile_name"])
         for part in chunks.partition_by("_chunk", include_key=False)]
merged = ClusterMoments.merge_all(parts).effect_table()
cand = seats.with_columns(pl.col("residual") + rng.normal(size=seats.height) * 1e-3)
shifts = paired_effect_shifts(seats, cand, seats.select("game_id", "deal").unique())
for frame in (seats.select("expected", "residual", "score_diff"), merged, shifts):
    for column in frame.columns:
        if frame[column].dtype == pl.Float64:
            print(column, [x.hex() for x in frame[column].to_list()])
"""


def _figures(threads: int) -> str:
    env = {**os.environ, "POLARS_MAX_THREADS": str(threads), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _FIGURES], env=env, capture_output=True,
                          text=True, check=True, cwd=ROOT)  # fmt: skip
    return done.stdout


def test_figures_do_not_depend_on_polars_threads():
    one = _figures(1)
    assert one and one == _figures(4)


def test_every_games_win_share_is_a_whole_number_of_units():
    """Win shares are summed as integers of 1/WIN_SHARE_UNIT: a win shared by k seats is worth
    1/k, so every k up to a game's seat count must divide the unit (a 7-player game would
    need a new unit; this fails first)."""
    from sim.core.registry import game_names, get_game

    for name in game_names():
        game = get_game(name)
        for k in range(1, game.max_players + 1):
            assert WIN_SHARE_UNIT % k == 0, (name, k)
