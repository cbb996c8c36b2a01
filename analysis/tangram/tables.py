"""Tangram City analyses over a run's stored tables, with honest intervals.

Inputs: ``run.players`` (the players table with ``game_id``, ``strategy_name``, ``win_share``),
``run.games``, ``run.data`` (the tile set). Rates carry 95% Wilson intervals, means 95% normal
intervals (mean +- 1.96 standard errors), differences of two groups the interval of their
difference (Welch). Where a comparison is observational the docstring says so. Every table is
derived from statistics merged chunk by chunk (``analysis.core.batches``); percentiles come
from merged histograms of the integer scores, exactly.
"""

import functools
import math

import numpy as np
import polars as pl

from analysis.core.batches import Reduction, value
from analysis.core.reduce import ClusterMoments, Moments, Sums
from analysis.core.stats import DEFAULT_BAND, DEFAULT_MIN_N, Z95
from analysis.core.tabulate import (
    EXPECTED,
    Flagging,
    chunk_outcomes,
    histogram_quantiles,
    with_band_flags,
    with_mean_interval,
    with_wilson,
    with_win_share,
)
from sim.tangram import constants as K

QUANTILES = (0.1, 0.5, 0.9)
CARD_COLUMNS = tuple(f"card_{p}" for p in range(K.N_CARDS))
EARLY_ROUNDS = (1, 2)  # "early" card: played in round 1 or 2
LATE_ROUNDS = (5, 6)
RANDOM = "random"  # the strategy kept apart from pooled tile and rule figures
DEAD_SHARE = 0.01  # a bonus reached by fewer seats than this (interval wholly below) is dead


def is_random(name) -> pl.Expr | bool:
    """Whether a strategy label (or a column of them) is the random strategy: a benchmark of
    the rules, not a player, whose declines and misses would blur what players do."""
    if isinstance(name, pl.Expr):
        return name.str.split(":").list.first() == RANDOM
    return str(name).split(":")[0] == RANDOM


def players_frame(run) -> pl.LazyFrame:
    """The players table with the game's ``n_players`` (joined when not already there)."""
    players = run.players
    if "n_players" not in players.collect_schema().names():
        players = players.join(run.games.select("game_id", "n_players"), on="game_id", how="left")
    return players


def _mean_ci(frame: pl.DataFrame, mean: str, sd: str, n: str) -> pl.DataFrame:
    """``{mean}_lo`` and ``{mean}_hi``: mean +- 1.96 standard errors (the sd column kept)."""
    return with_mean_interval(frame, mean, sd, n, keep_sd=True, p_value=False)


def _diff_ci(frame, a: str, b: str, name: str) -> pl.DataFrame:
    """``name`` = mean a - mean b with its Welch interval, from columns ``{a}``, ``{a}_sd``,
    ``{a}_n`` and the same for b."""
    ma, mb = frame[a].cast(pl.Float64).to_numpy(), frame[b].cast(pl.Float64).to_numpy()
    sa = frame[f"{a}_sd"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    sb = frame[f"{b}_sd"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    na = frame[f"{a}_n"].cast(pl.Float64).to_numpy()
    nb = frame[f"{b}_n"].cast(pl.Float64).to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(sa**2 / na + sb**2 / nb)
    diff = ma - mb
    return frame.with_columns(
        pl.Series(name, diff),
        pl.Series(f"{name}_lo", diff - Z95 * se),
        pl.Series(f"{name}_hi", diff + Z95 * se),
    )


# --- the chunk-wise statistics ---------------------------------------------------------------


def _roles(players, games) -> pl.DataFrame:
    """Players with their round-1 ``role`` (see :func:`round_one_roles`)."""
    players = players.join(games.select("game_id", "first_start"), on="game_id", how="left")
    role = (
        pl.when(pl.col("seat") == pl.col("first_start"))
        .then(pl.lit("start"))
        .when((pl.col("hand_rounds") % 2) == 1)
        .then(pl.lit("own card"))
        .when((pl.col("shared_rounds") % 2) == 1)
        .then(pl.lit("shared card"))
        .otherwise(pl.lit("none"))
    )
    return players.with_columns(role.alias("role"))


def _scores(players, by) -> dict:
    """A final-score distribution per group ``by``: moments, histogram, bonuses and wins."""
    by = tuple(by)
    return {
        "moments": Moments.of(players, by, "total"),
        "histogram": Sums.of(players, (*by, "total"), pl.len().alias("count")),
        "sums": Sums.of(
            players,
            by,
            pl.len().alias("n"),
            *(pl.col(c).sum() for c in ("rounds_total", "planning_bonus", "balance_bonus")),
            pl.col("win_share").sum().alias("wins"),
        ),
    }


def tile_rows_of(players, games, extra: tuple[str, ...] = ()) -> pl.DataFrame:
    """:func:`tile_rows` of a chunk's (or a run's collected) tables (``extra``: more players
    columns kept on every row)."""
    positions = (
        games.select("game_id", *CARD_COLUMNS)
        .unpivot(index="game_id", on=list(CARD_COLUMNS), variable_name="card", value_name="tile")
        .with_columns(
            pl.col("card").str.strip_prefix("card_").cast(pl.Int32).alias("position"),
            pl.col("tile").cast(pl.Int32),
        )
        .filter(pl.col("tile") >= 0)  # an experiment's banned card leaves card_22 empty (-1)
        .drop("card")
    )
    rows = players.select(
        "game_id", "seat", "n_players", "strategy_name", "total", "win_share", "declined_mask",
        *extra,
    ).join(positions, on="game_id", how="inner")  # fmt: skip
    mask = rows["declined_mask"].cast(pl.Int64).to_numpy()
    tile = rows["tile"].to_numpy().astype(np.int64)
    position = rows["position"].to_numpy()
    rounds = np.minimum(position // K.CARDS_PER_ROUND, K.REGULAR_ROUNDS) + 1
    return rows.with_columns(
        pl.Series("declined", (mask >> tile) & 1),
        pl.Series("round", rounds.astype(np.int32)),
    ).drop("declined_mask")


def _tiles(rows: pl.DataFrame, by) -> dict:
    keys = (*by, "tile")
    early = rows.filter(pl.col("round").is_in(list(EARLY_ROUNDS)))
    late = rows.filter(pl.col("round").is_in(list(LATE_ROUNDS)))
    return {
        "counts": Sums.of(
            rows,
            keys,
            pl.len().alias("n"),
            pl.col("declined").sum().alias("declines"),
            pl.col("round").is_in(list(EARLY_ROUNDS)).sum().alias("early_n"),
            pl.col("declined").filter(pl.col("round").is_in(list(EARLY_ROUNDS))).sum()
            .alias("early_declines"),
            pl.col("round").is_in(list(LATE_ROUNDS)).sum().alias("late_n"),
            pl.col("declined").filter(pl.col("round").is_in(list(LATE_ROUNDS))).sum()
            .alias("late_declines"),
        ),
        "early": Moments.of(early, keys, "total"),
        "late": Moments.of(late, keys, "total"),
    }  # fmt: skip


def _reduce(chunk) -> dict:
    players = chunk.players
    keys = ("n_players", "strategy_name")
    distance = (pl.col("red") - pl.col("green")).abs()
    rows = tile_rows_of(players, chunk.games)
    out = {
        **{f"scores.{'.'.join(by)}.{k}": v for by in SCORE_GROUPS
           for k, v in _scores(players, by).items()},
        **{f"tiles.{'.'.join(by)}.{k}": v for by in TILE_GROUPS
           for k, v in _tiles(rows, by).items()},
        **{f"tiles.played.{k}": v for k, v in
           _tiles(rows.filter(~is_random(pl.col("strategy_name"))), ()).items()},
        **{f"roles.{k}": v for k, v in _scores(_roles(players, chunk.games),
                                               ("n_players", "role")).items()},
        "rounds": Sums.of(
            players, keys, pl.len().alias("n"),
            *(pl.col(f"round_{r}").sum() for r in range(1, K.N_ROUNDS + 1)),
        ),
        "bonuses": Sums.of(
            players, keys, pl.len().alias("n"),
            (pl.col("planning_bonus") > 0).sum().alias("planning"),
            (distance == 0).sum().alias("level"),
            (pl.col("balance_bonus") > 0).sum().alias("any_balance"),
            distance.sum().alias("distance"),
            *(pl.col(c).sum() for c in ("full_squares", "tiles_declined", "fountains")),
        ),
        "balance": Moments.of(players, keys, "balance_bonus"),
    }  # fmt: skip
    return out


# The groupings the sections read (other groupings are reduced when asked for).
SCORE_GROUPS = (("n_players", "seat"), ("n_players", "strategy_name"))
TILE_GROUPS = ((), ("strategy_name",))
TABLES = Reduction("tangram.tables", _reduce, tables=("games", "players"))


def _grouped(by, groups, kind: str) -> tuple[dict, str]:
    """The statistics of grouping ``by`` (kind "scores" or "tiles"): from the run's
    reduction when the sections read it, else reduced for it alone."""
    by = tuple(by)
    if by in groups:
        return None, f"{kind}.{'.'.join(by)}"
    function = _scores if kind == "scores" else _tiles
    return Reduction(f"tangram.{kind}|{','.join(by)}", functools.partial(
        _one_grouping, function=function, by=by, rows=kind == "tiles")), ""  # fmt: skip


def _one_grouping(chunk, function, by, rows: bool) -> dict:
    source = tile_rows_of(chunk.players, chunk.games) if rows else chunk.players
    return {f"x.{k}": v for k, v in function(source, by).items()}


def _stats(run, by, groups, kind: str) -> dict:
    reduction, prefix = _grouped(by, groups, kind)
    if reduction is None:
        stats = value(run, TABLES)
    else:
        stats, prefix = value(run, reduction), "x"
    return _prefixed(stats, prefix)


def _prefixed(stats: dict, prefix: str) -> dict:
    return {k[len(prefix) + 1 :]: v for k, v in stats.items() if k.startswith(prefix + ".")}


def _score_table(stats: dict, by) -> pl.DataFrame:
    """Keys, n, total (mean), total_sd, percentiles, min, max, the bonuses' means, wins."""
    by = list(by)
    sums = stats["sums"].table()
    moments = stats["moments"].table().select(*by, "total", "total_sd")
    histogram = stats["histogram"].table()
    quantiles = histogram_quantiles(histogram, by, sums.schema, QUANTILES, pl.Int16)
    means = [pl.col(c) / pl.col("n") for c in ("rounds_total", "planning_bonus", "balance_bonus")]
    return (
        sums.select(*by, "n", *means, "wins")
        .join(moments, on=by, how="left")
        .join(quantiles, on=by, how="left")
        .select(
            *by, "n", "total", "total_sd", *(f"total_p{round(100 * q)}" for q in QUANTILES),
            "total_min", "total_max", "rounds_total", "planning_bonus", "balance_bonus", "wins",
        )
        .sort(by)
    )  # fmt: skip


# --- scores --------------------------------------------------------------------------------------


def score_distribution(run, by: tuple[str, ...] = ("n_players", "seat")) -> pl.DataFrame:
    """Final scores per group (default: player count and seat): mean with its interval, sd,
    10th/50th/90th percentiles, min, max, the mean round-score total and bonuses, and the win
    share with its Wilson interval."""
    frame = _score_table(_stats(run, by, SCORE_GROUPS, "scores"), by)
    return with_wilson(_mean_ci(frame, "total", "total_sd", "n"), "wins", "n", "win_share")


def score_histogram(run, by: tuple[str, ...] = ("n_players", "strategy_name")) -> pl.DataFrame:
    """How many seats of each group scored each final total (``count``)."""
    return _stats(run, by, SCORE_GROUPS, "scores")["histogram"].table()


def round_scores(run) -> pl.DataFrame:
    """Mean score of each of the six round scorings per player count and strategy."""
    sums = value(run, TABLES)["rounds"].table()
    columns = [f"round_{r}" for r in range(1, K.N_ROUNDS + 1)]
    return sums.select(
        "n_players", "strategy_name", "n", *(pl.col(c) / pl.col("n") for c in columns)
    )


# --- the start marker and hand cards -------------------------------------------------------------


def round_one_roles(run) -> pl.DataFrame:
    """Final score and win share by what a seat held in round 1, per player count: ``start``
    (the first start player, who also holds its own card with 2+ players), ``own card`` (a
    hand card of its own), ``shared card`` (shares one with a neighbour), ``none`` (solo).

    The first start player is set by the rules (seat 0, or drawn with the deal), not by play,
    and round 1's cards follow from it, so with seats rotated over strategies these groups
    differ only by their round-1 role: the differences are the value of starting and of
    holding a card of one's own rather than sharing it (4 and 5 players)."""
    stats = {k[len("roles.") :]: v for k, v in value(run, TABLES).items() if k.startswith("roles.")}
    keys = ["n_players", "role"]
    frame = (
        stats["sums"].table().select(*keys, "n", "wins")
        .join(stats["moments"].table().select(*keys, "total", "total_sd"), on=keys)
        .select(*keys, "n", "total", "total_sd", "wins")
        .sort(keys)
    )  # fmt: skip
    return with_win_share(_mean_ci(frame, "total", "total_sd", "n"), "win_share")


def role_differences(roles: pl.DataFrame) -> pl.DataFrame:
    """Per player count: start minus the other seats' mean, and own card minus shared card, in
    final score (Welch intervals)."""
    rows = []
    for (n_players,), part in roles.partition_by("n_players", as_dict=True).items():
        by_role = {r["role"]: r for r in part.iter_rows(named=True)}
        others = [r for name, r in by_role.items() if name != "start"]
        for label, a, b in (
            ("start vs the others", by_role.get("start"), _pool(others)),
            ("own card vs shared card", by_role.get("own card"), by_role.get("shared card")),
        ):
            if a is None or b is None or b["n"] < 2 or a["n"] < 2:
                continue
            rows.append(
                {
                    "n_players": n_players,
                    "comparison": label,
                    "a": a["total"],
                    "a_sd": a["total_sd"],
                    "a_n": a["n"],
                    "b": b["total"],
                    "b_sd": b["total_sd"],
                    "b_n": b["n"],
                }
            )
    if not rows:
        return pl.DataFrame(
            schema={
                "n_players": pl.Int64,
                "comparison": pl.Utf8,
                "diff": pl.Float64,
                "diff_lo": pl.Float64,
                "diff_hi": pl.Float64,
            }
        )
    return _diff_ci(pl.DataFrame(rows).sort("n_players", "comparison"), "a", "b", "diff")


def _pool(rows: list[dict]) -> dict | None:
    """Mean, sd and count of the union of groups given by their moments."""
    n = sum(r["n"] for r in rows)
    if n < 2:
        return None
    mean = sum(r["total"] * r["n"] for r in rows) / n
    ss = sum(
        (r["total_sd"] ** 2 if r["total_sd"] is not None and not math.isnan(r["total_sd"]) else 0.0)
        * (r["n"] - 1)
        + r["n"] * (r["total"] - mean) ** 2
        for r in rows
    )
    return {"total": mean, "total_sd": math.sqrt(ss / (n - 1)), "n": n}


# --- bonuses -------------------------------------------------------------------------------------
def bonus_rates(run) -> pl.DataFrame:
    """Per player count and strategy: how often the planning bonus is scored (all 49 squares
    built) and the balance bonus at its top value (markers level) or at all, with Wilson
    intervals; the mean balance bonus and marker distance with intervals."""
    stats = value(run, TABLES)
    keys = ["n_players", "strategy_name"]
    means = ("distance", "full_squares", "tiles_declined", "fountains")
    frame = (
        stats["bonuses"].table()
        .join(stats["balance"].table().select(*keys, "balance_bonus", "balance_bonus_sd"),
              on=keys)
        .select(*keys, "n", "planning", "level", "any_balance", "balance_bonus",
                "balance_bonus_sd", *(pl.col(c) / pl.col("n") for c in means))
        .sort(keys)
    )  # fmt: skip
    frame = with_wilson(frame, "planning", "n", "planning_rate")
    frame = with_wilson(frame, "level", "n", "level_rate")
    frame = with_wilson(frame, "any_balance", "n", "balance_rate")
    return _mean_ci(frame, "balance_bonus", "balance_bonus_sd", "n")


# --- tiles ---------------------------------------------------------------------------------------


def tile_rows(run) -> pl.DataFrame:
    """One row per seat and tile: where the tile's card came in the deal (position 0-22, its
    round) and whether the seat declined it (the whole run: for a small run)."""
    return tile_rows_of(players_frame(run).collect(), run.games.collect())


def tile_table(run, by: tuple[str, ...] = (), random_apart: bool = True) -> pl.DataFrame:
    """Per tile (and ``by`` groups): decline rate with its Wilson interval; the decline rate
    when the card came early (rounds 1-2) and late (rounds 5-6) and their difference; the
    seat's mean final score when the card came early and late and their difference (Welch).
    The deal is random, so a tile's position is independent of everything else in the game:
    these differences measure how much the card's order matters.

    Pooled over strategies (``by`` empty) the random seats are left out when the run has any
    other (``random_apart``; column ``seats`` says which were pooled): a random seat declines
    half its tiles and scores about 30 points, and would blur what players do. Split by
    strategy, each strategy (random too) has its own rows."""
    stats = _stats(run, by, TILE_GROUPS, "tiles")
    seats = "all"
    if not by and random_apart:
        played = _prefixed(value(run, TABLES), "tiles.played")
        if played["counts"].table().height:
            stats, seats = played, f"all but {RANDOM}"
    keys = [*by, "tile"]
    early = (
        stats["early"]
        .table()
        .select(*keys, pl.col("total").alias("early"), pl.col("total_sd").alias("early_sd"))
    )
    late = (
        stats["late"]
        .table()
        .select(*keys, pl.col("total").alias("late"), pl.col("total_sd").alias("late_sd"))
    )
    frame = (
        stats["counts"].table()
        .join(early, on=keys, how="left", nulls_equal=True)
        .join(late, on=keys, how="left", nulls_equal=True)
        .select(*keys, "n", "declines", "early_n", "early_declines", "late_n", "late_declines",
                "early", "early_sd", "late", "late_sd")
        .sort(keys)
    )  # fmt: skip
    frame = with_wilson(frame, "declines", "n", "decline_rate")
    frame = with_wilson(frame, "early_declines", "early_n", "early_rate")
    frame = with_wilson(frame, "late_declines", "late_n", "late_rate")
    # Difference of two proportions (normal interval on independent groups).
    p1, p2 = frame["late_rate"].to_numpy(), frame["early_rate"].to_numpy()
    n1, n2 = frame["late_n"].to_numpy().astype(float), frame["early_n"].to_numpy().astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    frame = frame.with_columns(
        pl.Series("late_minus_early_rate", p1 - p2),
        pl.Series("late_minus_early_rate_lo", p1 - p2 - Z95 * se),
        pl.Series("late_minus_early_rate_hi", p1 - p2 + Z95 * se),
    )
    frame = _diff_ci(frame, "late", "early", "late_minus_early_score")
    ts = run.data.content if run.data is not None else None
    tiles = [int(t) for t in frame["tile"]]
    names = [ts.card_name(t) if ts is not None else f"tile {t}" for t in tiles]
    areas = [ts.area(t) if ts is not None else float("nan") for t in tiles]
    # Exported with the tile set's label: a reconstruction's tile names say so in the CSV too.
    return frame.with_columns(
        pl.Series("tile_name", names),
        pl.Series("area", areas),
        pl.lit(seats).alias("seats"),
        pl.lit(data_label(run)).alias("tileset"),
    )


def data_label(run) -> str:
    """The tile set's label (RECONSTRUCTION when it is one), from the run's data or, when the
    run kept no copy of its data file, from its manifest."""
    if run.data is not None:
        return run.data.label
    entry = run.manifest.get("data") or run.manifest.get("tileset") or {}
    label = entry.get("label") or entry.get("name") or "unknown tile set"
    if entry.get("reconstructed") and "RECONSTRUCT" not in label:
        label += " (RECONSTRUCTION)"
    return label


def reconstructed(run) -> bool:
    if run.data is not None:
        return bool(run.data.reconstructed)
    entry = run.manifest.get("data") or run.manifest.get("tileset") or {}
    return bool(entry.get("reconstructed", False))


# --- strategies ----------------------------------------------------------------------------------
def strategy_shares(run) -> pl.DataFrame:
    """Win share of each strategy per player count (sole win 1, a k-way tie 1/k), with Wilson
    intervals, and its mean score with an interval."""
    frame = _score_table(_stats(run, ("n_players", "strategy_name"), SCORE_GROUPS, "scores"),
                         ("n_players", "strategy_name"))  # fmt: skip
    frame = frame.select("n_players", "strategy_name", "n", "total", "total_sd", "wins")
    return with_win_share(_mean_ci(frame, "total", "total_sd", "n"))


# --- findings: what each tile is worth in win share, and rules no one reaches ---------------------


def _effects_reduce(chunk) -> dict:
    outcomes = chunk_outcomes(chunk)
    rows = tile_rows_of(outcomes, chunk.games, ("expected", "residual", "deal"))
    rows = rows.filter(~is_random(pl.col("strategy_name")))
    return {
        "declined": ClusterMoments.of(rows.filter(pl.col("declined") == 1), ("tile",)),
        "placed": ClusterMoments.of(rows.filter(pl.col("declined") == 0), ("tile",)),
    }


# Each non-random seat's win share above its strategy's mean (analysis.core.tabulate), per tile
# it declined or placed, clustered by deal.
TILE_EFFECTS = Reduction(
    "tangram.tile_effects", _effects_reduce, needs=(EXPECTED,), tables=("games", "players")
)


def tile_effects(
    run,
    method: str = "bh",
    level: float = 0.05,
    band: float = DEFAULT_BAND,
    min_n: int = DEFAULT_MIN_N,
) -> pl.DataFrame:
    """Per tile, the win share above expected (the seat's strategy's mean share at its player
    count) of the seats that **declined** it (``effect``, flagged) and of those that placed it
    (``placed_effect``, shown), random seats apart, with cluster-robust 95% intervals over
    deals (analysis.core.tabulate.effect_table's statistics). ``flag`` (strong / weak) needs
    at least ``min_n`` declining seats and the whole interval outside +-``band`` after the
    ``method`` correction across tiles (analysis.core.tabulate.with_band_flags).

    Observational: a seat declines a tile when it fits badly, so a negative effect says that
    seats which had to decline it did worse, not that declining caused it; the card-order
    columns of :func:`tile_table` are the causal measure (the deal is random)."""
    stats = value(run, TILE_EFFECTS)
    declined = with_band_flags(
        stats["declined"].effect_table(), Flagging(method, level, band, min_n)
    )
    placed = stats["placed"].effect_table("placed_effect").rename({"n": "placed_n"})
    frame = declined.join(
        placed.select("tile", "placed_n", "placed_effect", "placed_effect_lo", "placed_effect_hi"),
        on="tile",
        how="full",
        coalesce=True,
    ).sort("tile")
    ts = run.data.content if run.data is not None else None
    names = [ts.card_name(int(t)) if ts is not None else f"tile {t}" for t in frame["tile"]]
    return frame.with_columns(
        pl.Series("tile_name", names), pl.lit(data_label(run)).alias("tileset")
    )
