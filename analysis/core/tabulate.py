"""Polars helpers shared by the analysis modules: interval columns on result tables."""

import numpy as np
import polars as pl

from analysis.core.load import Run
from analysis.core.stats import adjust, interval_from_moments, wilson_interval


def with_wilson(frame: pl.DataFrame, successes: str, trials, name: str) -> pl.DataFrame:
    """Add ``name`` = successes / trials with ``{name}_lo`` and ``{name}_hi``, its 95% Wilson
    interval; ``trials`` is a column name or a polars expression. NaN where there are no trials."""
    n = frame.select(pl.col(trials) if isinstance(trials, str) else trials).to_series().to_numpy()
    n = n.astype(np.float64)
    k = frame[successes].to_numpy().astype(np.float64)
    lo, hi = wilson_interval(k, n)
    share = np.divide(k, n, out=np.full(n.shape, np.nan), where=n > 0)
    return frame.with_columns(
        pl.Series(name, share), pl.Series(f"{name}_lo", lo), pl.Series(f"{name}_hi", hi)
    )


def with_mean_interval(frame: pl.DataFrame, mean: str, sd: str, n: str) -> pl.DataFrame:
    """Add ``{mean}_lo``, ``{mean}_hi`` (mean +- 1.96 se) and ``{mean}_p`` from group moments,
    dropping the ``sd`` column."""
    result = interval_from_moments(frame[mean], frame[sd], frame[n])
    return frame.with_columns(
        pl.Series(f"{mean}_lo", result["lo"]),
        pl.Series(f"{mean}_hi", result["hi"]),
        pl.Series(f"{mean}_p", result["p"]),
    ).drop(sd)


def seat_outcomes(run: Run) -> pl.LazyFrame:
    """Players with ``expected`` (their strategy's mean win share at their player count),
    ``residual`` (win share - expected) and ``score_diff`` (total minus the mean total of the
    other seats of the game; null in solo games)."""
    others = (pl.col("total").sum().over("game_id") - pl.col("total")) / (
        pl.col("n_players") - 1
    ).cast(pl.Float64).replace(0.0, None)
    return run.players.with_columns(
        pl.col("win_share").mean().over("strategy_name", "n_players").alias("expected"),
        (pl.col("total") - others).alias("score_diff"),
    ).with_columns((pl.col("win_share") - pl.col("expected")).alias("residual"))


def with_effect_flags(frame: pl.DataFrame, method: str, level: float) -> pl.DataFrame:
    """Add ``effect_q`` (``effect_p`` adjusted across rows by ``method``) and ``flag``: "strong"
    or "weak" where ``effect_q < level``."""
    q = adjust(frame["effect_p"].to_numpy(), method)
    flag = np.where(q < level, np.where(frame["effect"].to_numpy() > 0, "strong", "weak"), "")
    return frame.with_columns(pl.Series("effect_q", q), pl.Series("flag", flag))
