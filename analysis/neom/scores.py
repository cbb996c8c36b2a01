"""Scores by category and the disasters: who takes them and what they cost the others."""

import polars as pl

from analysis.core.batches import Reduction, value
from analysis.core.load import Run
from analysis.core.reduce import Moments, Sums
from analysis.core.tabulate import histogram_quantiles, with_mean_interval, with_wilson
from analysis.neom.load import SCORE_COLUMNS
from sim.neom.constants import N_GENERATIONS

QUANTILES = (0.1, 0.5, 0.9)


def _reduce(chunk) -> dict:
    players, keys = chunk.players, ("n_players", "strategy_name")
    return {
        "categories": Sums.of(
            players,
            keys,
            pl.len().alias("n"),
            *(pl.col(c).sum() for c in SCORE_COLUMNS),
            pl.col("disasters_selected").sum(),
            pl.col("disasters_paid").sum().alias("paid"),
            pl.col("disasters_sacrificed").sum().alias("sacrificed"),
            pl.col("disaster_coins").sum().alias("coins_paid"),
            pl.col("disaster_tiles_lost").sum().alias("tiles_lost"),
        ),
        "total": Moments.of(players, keys, "total"),
        "histogram": Sums.of(players, (*keys, "total"), pl.len().alias("count")),
        "frequency": Sums.of(
            chunk.games,
            "n_players",
            pl.len().alias("games"),
            *(
                ((pl.col("disasters_mask") & (1 << (g - 1))) > 0).sum().alias(f"gen{g}_hits")
                for g in range(1, N_GENERATIONS + 1)
            ),
        ),
    }


# Score categories, the totals' histogram and the disasters, chunk by chunk.
SCORES = Reduction("neom.scores", _reduce, tables=("games", "players"))


def score_histogram(run: Run) -> pl.DataFrame:
    """How many seats of each player count and strategy scored each total (``count``)."""
    return value(run, SCORES)["histogram"].table()


def score_summary(run: Run) -> pl.DataFrame:
    """Per player count and strategy: the mean of every score category, and the total's
    spread (sd, 10th/50th/90th percentiles, min, max) with a 95% interval on its mean. The
    percentiles are polars' (nearest rank), exact, from the totals' histogram."""
    stats = value(run, SCORES)
    keys = ["n_players", "strategy_name"]
    sums = stats["categories"].table()
    spread = stats["total"].table().select(*keys, "total_sd")
    histogram = stats["histogram"].table()
    quantiles = histogram_quantiles(histogram, keys, sums.schema, QUANTILES, pl.Int32)
    frame = (
        sums.select(*keys, "n", *(pl.col(c) / pl.col("n") for c in SCORE_COLUMNS))
        .join(spread, on=keys, how="left")
        .join(quantiles, on=keys, how="left")
        .sort(keys)
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
    sums = value(run, SCORES)["categories"].table()
    frame = sums.select(
        "n_players",
        "strategy_name",
        "n",
        (pl.col("disasters_selected") / pl.col("n")).alias("selected_per_game"),
        "paid",
        "sacrificed",
        "coins_paid",
        "tiles_lost",
    ).with_columns((pl.col("paid") + pl.col("sacrificed")).alias("suffered"))
    frame = with_wilson(frame, "paid", "suffered", "paid_share")
    return frame.with_columns(
        (pl.col("suffered") / pl.col("n")).alias("suffered_per_game"),
        (pl.col("coins_paid") / pl.col("paid")).alias("coins_per_payment"),
        (pl.col("tiles_lost") / pl.col("sacrificed")).alias("tiles_per_sacrifice"),
    )


def disaster_frequency(run: Run) -> pl.DataFrame:
    """Per player count: share of games in which each generation's disaster happened."""
    frame = value(run, SCORES)["frequency"].table()
    for g in range(1, N_GENERATIONS + 1):
        frame = with_wilson(frame, f"gen{g}_hits", "games", f"gen{g}")
    return frame
