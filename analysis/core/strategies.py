"""How the strategies of a run fare: win shares, head-to-head results and a Bradley-Terry rating."""

import math

import numpy as np
import polars as pl

from analysis.core.batches import Reduction, value
from analysis.core.load import Run
from analysis.core.reduce import ClusterMoments, Moments, Sums
from analysis.core.tabulate import chunk_deals, with_mean_interval, with_win_share

BT_PRIOR_TIES = 1.0  # virtual drawn comparisons per observed pair: keeps unbeaten ratings finite
BT_TOLERANCE = 1e-10
BT_MAX_ITER = 10_000
ELO_SCALE = 400.0 / math.log(10.0)  # log-strength in Elo points: +400 = 10 to 1 odds


def _reduce(chunk) -> dict:
    players = chunk.players
    return {
        "shares": share_sums(players, "strategy_name", pl.col("game_id").n_unique().alias("games")),
        "games": Sums.of(chunk.games, (), pl.len().alias("games")),
        "fair": fair_share_moments(players, "strategy_name", chunk.memo(chunk_deals)),
        **_pair_stats(_pairs(players)),
    }


def share_sums(players, key: str, *more: pl.Expr) -> Sums:
    """Per player count and ``key``: seats (``n``), then the sums ``more``, win shares
    (``wins``) and scores (``total``), from which the tables take each group's win share and
    mean score."""
    return Sums.of(
        players,
        ("n_players", key),
        pl.len().alias("n"),
        *more,
        pl.col("win_share").sum().alias("wins"),
        pl.col("total").sum().alias("total"),
    )


def fair_share_moments(players, key: str, deals) -> ClusterMoments:
    """Per player count and ``key``: the cluster moments of the win share minus the fair
    share (1 / players), the expected share of every seat if all were equal."""
    n_players = pl.col("n_players")
    frame = (
        players.select("game_id", "n_players", key, "win_share")
        .with_columns(
            (1.0 / n_players).alias("expected"),
            (pl.col("win_share") - 1.0 / n_players).alias("residual"),
        )
        .join(deals, on="game_id", how="left")
    )
    return ClusterMoments.of(frame, ["n_players", key])


def _pairs(players) -> pl.DataFrame:
    """Every ordered pair of seats with different strategies in the same game."""
    seats = players.select("game_id", "seat", "strategy_name", "rank", "total")
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


def _pair_stats(pairs: pl.DataFrame) -> dict:
    """Per ordered pair (A, B): each game's mean over its A-B seat pairs (one value per game:
    seats of one game are not independent), as moments over games, and the counts."""
    per_game = pairs.group_by("game_id", "a", "b").agg(
        pl.col("above").mean(),
        pl.col("above").sum().alias("pair_wins"),
        pl.col("score_diff").mean(),
        pl.len().alias("pairs"),
    )
    return {
        "pair_moments": Moments.of(per_game, ("a", "b"), ("above", "score_diff")),
        "pair_counts": Sums.of(
            per_game, ("a", "b"), pl.col("pairs").sum(), pl.col("pair_wins").sum()
        ),
    }


# Win shares, mean scores and head-to-head meetings of the strategies, chunk by chunk.
STRATEGIES = Reduction("core.strategies", _reduce, tables=("games", "players"))


def win_shares(run: Run) -> pl.DataFrame:
    """Win share of each strategy for each player count, with 95% Wilson intervals.

    A seat's win share is 1 for a sole win and 1/k for a k-way tie, so a strategy's shares in a
    player count sum, over strategies weighted by seats, to one win per game. ``fair`` is the
    share every seat would have if all were equal (1 / players).
    """
    shares = value(run, STRATEGIES)["shares"].table()
    frame = shares.select(
        "n_players", "strategy_name", "n", "games", "wins",
        (pl.col("total") / pl.col("n")).alias("mean_score"),
    )  # fmt: skip
    return with_win_share(frame)


def run_games(run: Run) -> int:
    """How many games the run holds (from the chunk-wise statistics)."""
    return int(value(run, STRATEGIES)["games"].value("games"))


def head_to_head(run: Run) -> pl.DataFrame:
    """For each ordered pair (A, B): share of meetings where A ranks above B, score difference.

    Seats of one game are not independent, so each game contributes one value per pair (its
    mean over the game's A-B seat pairs) and intervals are mean +- 1.96 standard errors over
    games. All player counts are pooled.
    """
    stats = value(run, STRATEGIES)
    return head_to_head_table(stats["pair_moments"], stats["pair_counts"])


def head_to_head_table(moments: Moments, counts: Sums) -> pl.DataFrame:
    """:func:`head_to_head` from its merged statistics."""
    means = moments.table().rename({"n": "games", "above": "share", "above_sd": "share_sd"})
    frame = means.join(counts.table(), on=["a", "b"], how="left").select(
        "a", "b", "games", "pairs", "pair_wins", "share", "share_sd", "score_diff",
        "score_diff_sd",
    )  # fmt: skip
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
