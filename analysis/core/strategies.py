"""How the strategies of a run fare: win shares, head-to-head results and a Bradley-Terry rating."""

import math

import numpy as np
import polars as pl

from analysis.core.load import Run
from analysis.core.tabulate import group_table, with_mean_interval, with_win_share

BT_PRIOR_TIES = 1.0  # virtual drawn comparisons per observed pair: keeps unbeaten ratings finite
BT_TOLERANCE = 1e-10
BT_MAX_ITER = 10_000
ELO_SCALE = 400.0 / math.log(10.0)  # log-strength in Elo points: +400 = 10 to 1 odds


def win_shares(run: Run) -> pl.DataFrame:
    """Win share of each strategy for each player count, with 95% Wilson intervals.

    A seat's win share is 1 for a sole win and 1/k for a k-way tie, so a strategy's shares in a
    player count sum, over strategies weighted by seats, to one win per game. ``fair`` is the
    share every seat would have if all were equal (1 / players).
    """
    frame = group_table(
        run.players,
        ("n_players", "strategy_name"),
        pl.col("game_id").n_unique().alias("games"),
        pl.col("win_share").sum().alias("wins"),
        pl.col("total").mean().alias("mean_score"),
    )
    return with_win_share(frame)


def _pairs(run: Run) -> pl.LazyFrame:
    """Every ordered pair of seats with different strategies in the same game."""
    seats = run.players.select("game_id", "seat", "strategy_name", "rank", "total")
    return (
        seats.join(seats, on="game_id", suffix="_b")
        .filter(pl.col("strategy_name") != pl.col("strategy_name_b"))
        .select(
            "game_id",
            pl.col("strategy_name").alias("a"),
            pl.col("strategy_name_b").alias("b"),
            # A above B scores 1, a shared rank scores 1/2.
            (
                (pl.col("rank") < pl.col("rank_b")).cast(pl.Float64)
                + 0.5 * (pl.col("rank") == pl.col("rank_b")).cast(pl.Float64)
            ).alias("above"),
            (pl.col("total") - pl.col("total_b")).cast(pl.Float64).alias("score_diff"),
        )
    )


def head_to_head(run: Run) -> pl.DataFrame:
    """For each ordered pair (A, B): share of meetings where A ranks above B, score difference.

    Seats of one game are not independent, so each game contributes one value per pair (its
    mean over the game's A-B seat pairs) and intervals are mean +- 1.96 standard errors over
    games. All player counts are pooled.
    """
    per_game = (
        _pairs(run)
        .group_by("game_id", "a", "b")
        .agg(
            pl.col("above").mean(),
            pl.col("above").sum().alias("pair_wins"),
            pl.col("score_diff").mean(),
            pl.len().alias("pairs"),
        )
    )
    frame = (
        per_game.group_by("a", "b")
        .agg(
            pl.len().alias("games"),
            pl.col("pairs").sum(),
            pl.col("pair_wins").sum(),
            pl.col("above").mean().alias("share"),
            pl.col("above").std().alias("share_sd"),
            pl.col("score_diff").mean(),
            pl.col("score_diff").std().alias("score_diff_sd"),
        )
        .sort("a", "b")
        .collect()
    )
    frame = with_mean_interval(frame, "share", "share_sd", "games")
    return with_mean_interval(frame, "score_diff", "score_diff_sd", "games").drop("share_p")


def bradley_terry(wins: np.ndarray, prior_ties: float = BT_PRIOR_TIES) -> np.ndarray:
    """Bradley-Terry strengths from ``wins[i, j]`` (times i beat j; ties count 1/2 each way).

    Hunter's (2004) minorise-maximise iteration. ``prior_ties`` virtual draws are added to every
    pair that met, so a strategy that never lost gets a large but finite strength. Strengths are
    scaled to a geometric mean of 1.
    """
    wins = np.asarray(wins, dtype=np.float64)
    met = (wins + wins.T) > 0
    wins = wins + np.where(met, prior_ties / 2.0, 0.0)
    games = wins + wins.T
    total_wins = wins.sum(axis=1)
    strength = np.ones(wins.shape[0])
    for _ in range(BT_MAX_ITER):
        denom = (games / (strength[:, None] + strength[None, :])).sum(axis=1)
        updated = np.where(denom > 0, total_wins / np.where(denom > 0, denom, 1.0), 1.0)
        updated /= np.exp(np.mean(np.log(updated)))
        if np.max(np.abs(updated - strength)) < BT_TOLERANCE:
            return updated
        strength = updated
    return strength


def ratings(run: Run, pairs: pl.DataFrame | None = None) -> pl.DataFrame:
    """A Bradley-Terry rating per strategy from all pairwise meetings, in Elo points.

    Every ordered pair of seats with different strategies in a game counts as one comparison,
    so a 5-player game is 10 comparisons. ``p_beat_average`` is the chance of ranking above a
    strategy of average strength.
    """
    names = sorted(set(run.strategy_names))
    pairs = head_to_head(run) if pairs is None else pairs
    index = {name: i for i, name in enumerate(names)}
    wins = np.zeros((len(names), len(names)))
    for a, b, pair_wins in pairs.select("a", "b", "pair_wins").iter_rows():
        wins[index[a], index[b]] = pair_wins
    strength = bradley_terry(wins)
    return pl.DataFrame(
        {
            "strategy_name": names,
            "rating": ELO_SCALE * np.log(strength),
            "p_beat_average": strength / (strength + 1.0),
            "comparisons": (wins + wins.T).sum(axis=1),
        }
    ).sort("rating", descending=True)
