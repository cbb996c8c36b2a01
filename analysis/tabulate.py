"""Polars helpers shared by the analysis modules: interval columns on result tables."""

import numpy as np
import polars as pl

from analysis.stats import interval_from_moments, wilson_interval


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
