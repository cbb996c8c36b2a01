"""Scores by category and the disasters: who takes them and what they cost the others."""

import polars as pl

from analysis.core.load import Run
from analysis.core.tabulate import group_table, with_mean_interval, with_wilson
from analysis.neom.load import SCORE_COLUMNS
from sim.neom.constants import N_GENERATIONS

QUANTILES = (0.1, 0.5, 0.9)


def score_summary(run: Run) -> pl.DataFrame:
    """Per player count and strategy: the mean of every score category, and the total's
    spread (sd, 10th/50th/90th percentiles, min, max) with a 95% interval on its mean."""
    frame = group_table(
        run.players,
        ("n_players", "strategy_name"),
        *(pl.col(c).mean() for c in SCORE_COLUMNS),
        pl.col("total").std().alias("total_sd"),
        *(pl.col("total").quantile(q).alias(f"total_p{round(q * 100)}") for q in QUANTILES),
        pl.col("total").min().alias("total_min"),
        pl.col("total").max().alias("total_max"),
    )
    sd = frame["total_sd"]
    return (
        with_mean_interval(frame, "total", "total_sd", "n")
        .drop("total_p")
        .with_columns(sd.alias("total_sd"))
    )


def disaster_summary(run: Run) -> pl.DataFrame:
    """Per player count and strategy: disasters selected, suffered (paid or sacrificed) and the
    damage of each way out: coins per payment and tiles per sacrifice."""
    frame = group_table(
        run.players,
        ("n_players", "strategy_name"),
        pl.col("disasters_selected").mean().alias("selected_per_game"),
        pl.col("disasters_paid").sum().alias("paid"),
        pl.col("disasters_sacrificed").sum().alias("sacrificed"),
        pl.col("disaster_coins").sum().alias("coins_paid"),
        pl.col("disaster_tiles_lost").sum().alias("tiles_lost"),
    ).with_columns((pl.col("paid") + pl.col("sacrificed")).alias("suffered"))
    frame = with_wilson(frame, "paid", "suffered", "paid_share")
    return frame.with_columns(
        (pl.col("suffered") / pl.col("n")).alias("suffered_per_game"),
        (pl.col("coins_paid") / pl.col("paid")).alias("coins_per_payment"),
        (pl.col("tiles_lost") / pl.col("sacrificed")).alias("tiles_per_sacrifice"),
    )


def disaster_frequency(run: Run) -> pl.DataFrame:
    """Per player count: share of games in which each generation's disaster happened."""
    frame = (
        run.games.group_by("n_players")
        .agg(
            pl.len().alias("games"),
            *(
                ((pl.col("disasters_mask") & (1 << (g - 1))) > 0).sum().alias(f"gen{g}_hits")
                for g in range(1, N_GENERATIONS + 1)
            ),
        )
        .sort("n_players")
        .collect()
    )
    for g in range(1, N_GENERATIONS + 1):
        frame = with_wilson(frame, f"gen{g}_hits", "games", f"gen{g}")
    return frame
