"""How close games are: the margin of victory and shared wins, per player count."""

import polars as pl

from analysis.core.batches import Reduction, value
from analysis.core.load import Run
from analysis.core.reduce import Sums, mean_or_null
from analysis.core.stats import quantile_from_counts
from analysis.core.tabulate import with_wilson


def _closeness_reduce(chunk) -> dict:
    per_game = (
        chunk.players.group_by("game_id", "n_players")
        .agg(
            pl.col("total").filter(pl.col("win") > 0).max().alias("winning"),
            pl.col("total").filter(pl.col("win") == 0).max().alias("runner_up"),
            (pl.col("win") > 0).sum().alias("winners"),
        )
        .filter(pl.col("n_players") > 1)
        .with_columns((pl.col("winning") - pl.col("runner_up")).alias("margin"))
    )
    margin = pl.col("margin")
    return {
        "games": Sums.of(
            per_game,
            "n_players",
            pl.len().alias("games"),
            margin.sum().alias("margin_sum"),
            margin.count().alias("margin_n"),
            (margin <= 2).sum().alias("close"),
            (pl.col("winners") > 1).sum().alias("shared"),
        ),
        "margins": Sums.of(per_game, ("n_players", "margin"), pl.len().alias("count")),
    }


# How close games are: per player count, the margins' histogram and counts.
CLOSENESS = Reduction("core.closeness", _closeness_reduce, tables=("games", "players"))


def closeness(run: Run) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """Per player count: how close games are. Margin of victory = the winners' score minus
    the best score of a non-winner (0 for nobody: every seat shared the win); shared wins =
    games with more than one winner. Returns the table and the margins' histogram
    (``n_players``, ``margin``, ``count``; margin null when every seat shared the win)."""
    stats = value(run, CLOSENESS)
    games = stats["games"].table()
    if games.height == 0:
        return None
    margins = stats["margins"].table()
    rows = []
    for n_players in games["n_players"].to_list():
        part = margins.filter((pl.col("n_players") == n_players) & pl.col("margin").is_not_null())
        values, counts = part["margin"].to_numpy(), part["count"].to_numpy()
        rows.append(
            {
                "n_players": n_players,
                "median_margin": quantile_from_counts(values, counts, 0.5, "linear"),
                "p90_margin": quantile_from_counts(values, counts, 0.9),
            }
        )
    quantiles = pl.DataFrame(rows, schema_overrides={"n_players": games.schema["n_players"]})
    frame = games.join(quantiles, on="n_players", how="left").select(
        "n_players",
        "games",
        mean_or_null("margin_sum", "margin_n").alias("mean_margin"),
        pl.col("median_margin").fill_nan(None),
        pl.col("p90_margin").fill_nan(None),
        "close",
        "shared",
    )
    frame = with_wilson(frame, "close", "games", "close_share")
    return with_wilson(frame, "shared", "games", "shared_share"), margins
