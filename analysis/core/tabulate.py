"""Polars helpers shared by the analysis modules: interval columns on result tables."""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import polars as pl

from analysis.core.arrays import unique_inverse
from analysis.core.batches import Reduction
from analysis.core.exact import WIN_SHARE_UNIT, win_share_units
from analysis.core.load import Run
from analysis.core.reduce import ClusterMoments, Sums
from analysis.core.stats import (
    DEFAULT_BAND,
    DEFAULT_MIN_N,
    adjust,
    band_p_value,
    interval_from_moments,
    quantile_from_counts,
    wilson_interval,
)


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


def with_mean_interval(
    frame: pl.DataFrame, mean: str, sd: str, n: str, keep_sd: bool = False, p_value: bool = True
) -> pl.DataFrame:
    """Add ``{mean}_lo``, ``{mean}_hi`` (mean +- 1.96 se) and (``p_value``) ``{mean}_p`` from
    group moments, dropping the ``sd`` column unless ``keep_sd``."""
    result = interval_from_moments(frame[mean], frame[sd], frame[n])
    columns = [pl.Series(f"{mean}_lo", result["lo"]), pl.Series(f"{mean}_hi", result["hi"])]
    if p_value:
        columns.append(pl.Series(f"{mean}_p", result["p"]))
    frame = frame.with_columns(columns)
    return frame if keep_sd else frame.drop(sd)


def group_table(frame, keys, *aggregations: pl.Expr) -> pl.DataFrame:
    """Per group of ``keys`` (a lazy or eager frame), sorted by them: ``n`` (its rows) and the
    ``aggregations``."""
    keys = [keys] if isinstance(keys, str) else list(keys)
    table = frame.group_by(*keys).agg(pl.len().alias("n"), *aggregations).sort(*keys)
    return table.collect() if isinstance(table, pl.LazyFrame) else table


def histogram_quantiles(histogram: pl.DataFrame, keys, key_schema, quantiles, bound_type):
    """Per group of ``keys`` of a histogram of totals (columns ``total``, ``count``): the
    ``quantiles`` (``total_p10`` for 0.1 ...; exact, as polars computes them on the sample) and
    ``total_min``, ``total_max`` (of ``bound_type``); ``key_schema`` types the keys."""
    rows = []
    for key, part in histogram.partition_by(keys, as_dict=True).items():
        values, counts = part["total"].to_numpy(), part["count"].to_numpy()
        row = dict(zip(keys, key, strict=True))
        for q in quantiles:
            row[f"total_p{round(100 * q)}"] = quantile_from_counts(values, counts, q)
        row["total_min"], row["total_max"] = int(values.min()), int(values.max())
        rows.append(row)
    schema = {k: key_schema[k] for k in keys} | {"total_min": bound_type, "total_max": bound_type}
    return pl.DataFrame(rows, schema_overrides=schema)


def with_win_share(frame: pl.DataFrame, name: str = "share") -> pl.DataFrame:
    """Add ``name`` = wins / n (columns ``wins``, ``n``) with its 95% Wilson interval, and
    ``fair``: the share every seat would have if all were equal (1 / ``n_players``)."""
    return with_wilson(frame, "wins", "n", name).with_columns(
        (1.0 / pl.col("n_players")).alias("fair")
    )


MAX_SEATS = 5  # seats of the widest game (sim.core.seeding.MAX_SEATS)
DEAL = (pl.col("deal_seed").hash(0) ^ pl.col("n_players").cast(pl.UInt64)).alias("deal")


def deals(run: Run) -> pl.LazyFrame:
    """``game_id`` -> ``deal``: the cluster of games that replay one deal.

    With ``--seats rotate`` game g plays deal g // players once per seat rotation, so those
    games share their chance (the same hands and boards) and are not independent. The games
    table's ``deal_seed`` is the deal stream's seed, identical exactly for the games of one deal
    under any seat mode (``sim.core.seeding``), so it is the cluster key; it is combined with
    the player count so that runs mixing counts never merge clusters.
    """
    return run.games.select("game_id", DEAL)


def chunk_deals(chunk) -> pl.DataFrame:
    """:func:`deals` of one chunk (``analysis.core.batches``; use ``chunk.memo``)."""
    return chunk.games.select("game_id", DEAL)


def _expected_reduce(chunk) -> dict:
    return {
        "shares": Sums.of(
            chunk.players,
            ("strategy_name", "n_players"),
            pl.len().alias("n"),
            win_share_units().sum().alias("wins"),
        )
    }


def _expected_finish(stats: dict, run) -> pl.DataFrame:
    shares = stats["shares"].table()
    return shares.select("strategy_name", "n_players", _expected_share("wins", "n"))


def _expected_share(units: str, n: str) -> pl.Expr:
    """The mean win share from its exact sum in sixtieths: one rounding, in any order."""
    return (pl.col(units).cast(pl.Float64) / (WIN_SHARE_UNIT * pl.col(n)).cast(pl.Float64)).alias(
        "expected"
    )


# Each strategy's mean win share at each player count (a seat's expected share): the one
# value of the whole run the effects need before they can be reduced chunk by chunk.
EXPECTED = Reduction(
    "core.expected", _expected_reduce, _expected_finish, tables=("games", "players")
)


def _others_mean_total() -> pl.Expr:
    """The mean total of the other seats of the same game (null in solo games)."""
    return (pl.col("total").sum().over("game_id") - pl.col("total")) / (
        pl.col("n_players") - 1
    ).cast(pl.Float64).replace(0.0, None)


def chunk_outcomes(chunk) -> pl.DataFrame:
    """:func:`seat_outcomes` of one chunk (its reduction needs :data:`EXPECTED`)."""
    expected = chunk.values[EXPECTED.name]
    return (
        chunk.players.join(expected, on=["strategy_name", "n_players"], how="left")
        .with_columns((pl.col("total") - _others_mean_total()).alias("score_diff"))
        .with_columns((pl.col("win_share") - pl.col("expected")).alias("residual"))
        .join(chunk.memo(chunk_deals), on="game_id", how="left")
    )


@dataclass(frozen=True)
class SeatArrays:
    """A chunk's seats as NumPy arrays indexed by ``game row * MAX_SEATS + seat`` (the game
    row: the game's position in the chunk's games table), for sections that work on arrays:
    ``present``, ``win_share``, ``expected``, ``residual``, ``score_diff``, ``strategy`` (an
    index into ``strategy_names``), and per game row ``deal`` (a cluster code) and
    ``n_players``."""

    present: np.ndarray
    win_share: np.ndarray
    expected: np.ndarray
    residual: np.ndarray
    score_diff: np.ndarray
    strategy: np.ndarray
    strategy_names: tuple
    deal: np.ndarray
    n_players: np.ndarray


def game_rows(chunk, game_id) -> np.ndarray:
    """The rows of the chunk's games table holding ``game_id`` (every id must be there)."""
    ids = chunk.games["game_id"].to_numpy()
    rows = np.searchsorted(ids, game_id)
    if ids.size == 0 or not (np.asarray(ids[np.minimum(rows, ids.size - 1)]) == game_id).all():
        raise ValueError("a table of the chunk names a game the games table does not have")
    return rows


def seat_arrays(chunk) -> SeatArrays:
    """:class:`SeatArrays` of the chunk (``chunk.memo``; its reduction needs EXPECTED)."""
    outcomes = chunk.memo(chunk_outcomes)
    n_games = chunk.games.height
    index = game_rows(chunk, outcomes["game_id"].to_numpy()) * MAX_SEATS + outcomes[
        "seat"
    ].to_numpy().astype(np.int64)
    size = n_games * MAX_SEATS

    def dense(column, fill=np.nan, dtype=np.float64):
        out = np.full(size, fill, dtype=dtype)
        out[index] = outcomes[column].cast(pl.Float64).fill_null(np.nan).to_numpy()
        return out

    names = tuple(sorted(outcomes["strategy_name"].unique().to_list()))
    strategy = np.full(size, -1, dtype=np.int64)
    strategy[index] = (
        outcomes["strategy_name"].cast(pl.Enum(names)).to_physical().to_numpy().astype(np.int64)
        if names
        else 0
    )
    present = np.zeros(size, dtype=bool)
    present[index] = True
    deal_hash = chunk.memo(chunk_deals)
    _, deal = unique_inverse(deal_hash["deal"].to_numpy())
    return SeatArrays(
        present,
        dense("win_share"),
        dense("expected"),
        dense("residual"),
        dense("score_diff"),
        strategy,
        names,
        deal.astype(np.int64),
        chunk.games["n_players"].to_numpy().astype(np.int64),
    )


def seat_outcomes(run: Run) -> pl.LazyFrame:
    """Players with ``expected`` (their strategy's mean win share at their player count),
    ``residual`` (win share - expected), ``score_diff`` (total minus the mean total of the
    other seats of the game; null in solo games) and ``deal`` (see :func:`deals`). Whole-run
    and lazy: a section reads :func:`chunk_outcomes` chunk by chunk instead."""
    # The expected share as EXPECTED computes it (an exact sum, divided once), so the whole-run
    # and the chunk-wise residuals are the same to the bit under any polars thread count.
    group = ("strategy_name", "n_players")
    expected = (
        run.players.group_by(group)
        .agg(win_share_units().sum().alias("wins"), pl.len().alias("n"))
        .select(*group, _expected_share("wins", "n"))
    )
    return (
        run.players.join(expected, on=group, how="left", nulls_equal=True, maintain_order="left")
        .with_columns((pl.col("total") - _others_mean_total()).alias("score_diff"))
        .with_columns((pl.col("win_share") - pl.col("expected")).alias("residual"))
        .join(deals(run), on="game_id", how="left")
    )


def effect_table(
    frame,
    keys: list[str],
    value: str = "residual",
    expected: str | None = "expected",
    cluster: str = "deal",
    name: str = "effect",
    level: float = 0.95,
) -> pl.DataFrame:
    """Per group of ``keys``: the mean of ``value`` with a cluster-robust interval.

    ``frame`` has one row per seat in the group. Returns ``keys``, ``n`` (rows), ``clusters``
    (deals), ``{name}`` (mean), ``{name}_se``, ``{name}_lo``/``_hi`` (Student-t on clusters - 1
    degrees of freedom) and ``{name}_p0`` (p-value for "the mean is 0"). With ``expected`` (a
    win-share expectation e per row) the variance is floored at sum e(1-e) / n^2, its value
    for independent seats, and the interval is clipped to what a win share can reach
    ([-mean e, 1 - mean e]); see :func:`analysis.core.stats.cluster_mean` for one group.
    Computed as the chunk-wise reductions do (:class:`analysis.core.reduce.ClusterMoments`),
    on the whole frame at once.
    """
    frame = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
    moments = ClusterMoments.of(frame, keys, value, expected, cluster)
    return moments.effect_table(name, level)


class Flagging(NamedTuple):
    """How a table's items are flagged (what :func:`with_band_flags` and
    :func:`with_median_flags` take): the multiple-comparison correction ``method``
    ("bh" Benjamini-Hochberg, "holm" Holm) at ``level``, the practical ``band`` the whole
    interval must lie outside, and the ``min_n`` seats below which an item is not tested."""

    method: str = "bh"
    level: float = 0.05
    band: float = DEFAULT_BAND
    min_n: int = DEFAULT_MIN_N


DEFAULT_FLAGGING = Flagging()


def with_band_flags(
    frame: pl.DataFrame, flagging: Flagging = DEFAULT_FLAGGING, name: str = "effect"
) -> pl.DataFrame:
    """Add the flag columns to an :func:`effect_table` (``flagging``: its ``method``,
    ``level``, ``band`` and ``min_n``):

    - ``small``: fewer than ``min_n`` seats: not tested, never flagged (shown greyed);
    - ``{name}_p``: p-value for "the effect lies within +-``band``" (NaN when small);
    - ``{name}_q``: those p-values adjusted across the tested rows by ``method``;
    - ``flag``: "strong" / "weak" (by sign) where ``{name}_q < level``, which implies the
      whole 95% interval lies outside the band; "" otherwise.
    """
    method, level, band, min_n = flagging
    n = frame["n"].to_numpy()
    se = frame[f"{name}_se"].to_numpy().astype(np.float64)
    small = (n < min_n) | np.isnan(se)
    df = frame["clusters"].to_numpy().astype(np.float64) - 1
    effect = frame[name].to_numpy().astype(np.float64)
    p = np.where(small, np.nan, band_p_value(effect, se, df, band))
    q = adjust(p, method)
    flag = np.where(q < level, np.where(effect > 0, "strong", "weak"), "")
    return frame.with_columns(
        pl.Series("small", small),
        pl.Series(f"{name}_p", p),
        pl.Series(f"{name}_q", q),
        pl.Series("flag", flag),
    )


def with_vs_median(frame: pl.DataFrame) -> pl.DataFrame:
    """``vs_median``: the effect minus the median effect of the tested rows (all rows if none
    is tested), with the effect's interval shifted alike (the median is taken as fixed)."""
    tested = frame.filter(~pl.col("small")) if "small" in frame.columns else frame
    if tested.height == 0:
        tested = frame
    median = tested["effect"].median()
    median = 0.0 if median is None else float(median)
    return frame.with_columns(
        (pl.col(c) - median).alias(f"vs_median{c[len('effect') :]}")
        for c in ("effect", "effect_lo", "effect_hi")
    )


def with_median_flags(
    frame: pl.DataFrame, flagging: Flagging = DEFAULT_FLAGGING, by: tuple[str, ...] = ()
) -> pl.DataFrame:
    """Band flags on the effect against the median item (a dominant item pushes every other
    below expected; the median moves by at most one rank, so the dominant one flags itself and
    not the rest; NEOM's cornerstones and tiles, Tangram City's tiles): adds
    ``small``, ``effect_p``/``effect_q`` and ``flag_vs_expected`` (the band test against the
    expected share, kept for reference), ``vs_median`` with its interval (the median of the
    tested rows of each group of ``by``: per strategy in the per-strategy table), and
    ``vs_median_p``/``vs_median_q``/``flag``, the band test on ``vs_median`` with the effect's
    standard error, adjusted across all rows. ``flag`` is the report's flag."""
    flagged = with_band_flags(frame, flagging).rename({"flag": "flag_vs_expected"})
    if by:
        parts = [
            with_vs_median(part) for part in flagged.partition_by(list(by), maintain_order=True)
        ]
        flagged = pl.concat(parts) if parts else with_vs_median(flagged)
    else:
        flagged = with_vs_median(flagged)
    flags = with_band_flags(
        flagged.with_columns(pl.col("effect_se").alias("vs_median_se")),
        flagging,
        name="vs_median",
    ).drop("vs_median_se")
    return flags


def sign_disagreements(
    table: pl.DataFrame, key: str, method: str = "bh", level: float = 0.05,
    min_n: int = DEFAULT_MIN_N, strategy: str = "strategy_name",
) -> pl.DataFrame:  # fmt: skip
    """Items on which strategies disagree in sign, significantly: in a per-strategy effect
    table (``key``, ``strategy``, ``effect``, ``effect_p0``, ``n``), the zero-tests of all cells
    with at least ``min_n`` seats are adjusted together by ``method``; an item disagrees when
    one strategy's effect is significantly positive and another's significantly negative.
    Returns ``key``, ``positive`` and ``negative`` (the strategies, comma-separated)."""
    schema = {key: table.schema[key] if key in table.columns else pl.Int64,
              "positive": pl.Utf8, "negative": pl.Utf8}  # fmt: skip
    if table.height == 0:
        return pl.DataFrame(schema=schema)
    p = np.where(table["n"].to_numpy() >= min_n, table["effect_p0"].to_numpy(), np.nan)
    q = adjust(p.astype(np.float64), method)
    marked = table.with_columns(pl.Series("_sig", q < level))
    sig = marked.filter(pl.col("_sig"))
    out = (
        sig.group_by(key)
        .agg(
            pl.col(strategy).filter(pl.col("effect") > 0).sort().str.join(", ").alias("positive"),
            pl.col(strategy).filter(pl.col("effect") < 0).sort().str.join(", ").alias("negative"),
        )
        .filter((pl.col("positive") != "") & (pl.col("negative") != ""))
        .sort(key)
    )
    return out
