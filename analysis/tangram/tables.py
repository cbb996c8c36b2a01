"""Tangram City analyses over a run's stored tables, with honest intervals.

Inputs: ``run.players`` (the players table with ``game_id``, ``strategy_name``, ``win_share``),
``run.games``, ``run.data`` (the tile set). Rates carry 95% Wilson intervals, means 95% normal
intervals (mean +- 1.96 standard errors), differences of two groups the interval of their
difference (Welch). Where a comparison is observational the docstring says so.
"""

import math

import numpy as np
import polars as pl

from analysis.core.stats import Z95
from analysis.core.tabulate import group_table, with_mean_interval, with_wilson, with_win_share
from sim.tangram import constants as K

QUANTILES = (0.1, 0.5, 0.9)
CARD_COLUMNS = tuple(f"card_{p}" for p in range(K.N_CARDS))
EARLY_ROUNDS = (1, 2)  # "early" card: played in round 1 or 2
LATE_ROUNDS = (5, 6)
# A group's final-score mean and sd, and its wins (win shares summed).
_TOTAL_AND_WINS = (
    pl.col("total").mean().alias("total"),
    pl.col("total").std().alias("total_sd"),
    pl.col("win_share").sum().alias("wins"),
)


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


# --- scores --------------------------------------------------------------------------------------


def score_distribution(run, by: tuple[str, ...] = ("n_players", "seat")) -> pl.DataFrame:
    """Final scores per group (default: player count and seat): mean with its interval, sd,
    10th/50th/90th percentiles, min, max, the mean round-score total and bonuses, and the win
    share with its Wilson interval."""
    frame = group_table(
        players_frame(run),
        by,
        pl.col("total").mean().alias("total"),
        pl.col("total").std().alias("total_sd"),
        *(pl.col("total").quantile(q).alias(f"total_p{round(100 * q)}") for q in QUANTILES),
        pl.col("total").min().alias("total_min"),
        pl.col("total").max().alias("total_max"),
        pl.col("rounds_total").mean().alias("rounds_total"),
        pl.col("planning_bonus").mean().alias("planning_bonus"),
        pl.col("balance_bonus").mean().alias("balance_bonus"),
        pl.col("win_share").sum().alias("wins"),
    )
    return with_wilson(_mean_ci(frame, "total", "total_sd", "n"), "wins", "n", "win_share")


def round_scores(run) -> pl.DataFrame:
    """Mean score of each of the six round scorings per player count and strategy."""
    columns = [f"round_{r}" for r in range(1, K.N_ROUNDS + 1)]
    return group_table(
        players_frame(run), ("n_players", "strategy_name"), *(pl.col(c).mean() for c in columns)
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
    players = players_frame(run).join(
        run.games.select("game_id", "first_start"), on="game_id", how="left"
    )
    role = (
        pl.when(pl.col("seat") == pl.col("first_start"))
        .then(pl.lit("start"))
        .when((pl.col("hand_rounds") % 2) == 1)
        .then(pl.lit("own card"))
        .when((pl.col("shared_rounds") % 2) == 1)
        .then(pl.lit("shared card"))
        .otherwise(pl.lit("none"))
    )
    frame = group_table(
        players.with_columns(role.alias("role")), ("n_players", "role"), *_TOTAL_AND_WINS
    )
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
    frame = group_table(
        players_frame(run).with_columns((pl.col("red") - pl.col("green")).abs().alias("distance")),
        ("n_players", "strategy_name"),
        (pl.col("planning_bonus") > 0).sum().alias("planning"),
        (pl.col("distance") == 0).sum().alias("level"),
        (pl.col("balance_bonus") > 0).sum().alias("any_balance"),
        pl.col("balance_bonus").mean().alias("balance_bonus"),
        pl.col("balance_bonus").std().alias("balance_bonus_sd"),
        pl.col("distance").mean().alias("distance"),
        pl.col("full_squares").mean().alias("full_squares"),
        pl.col("tiles_declined").mean().alias("tiles_declined"),
        pl.col("fountains").mean().alias("fountains"),
    )
    frame = with_wilson(frame, "planning", "n", "planning_rate")
    frame = with_wilson(frame, "level", "n", "level_rate")
    frame = with_wilson(frame, "any_balance", "n", "balance_rate")
    return _mean_ci(frame, "balance_bonus", "balance_bonus_sd", "n")


# --- tiles ---------------------------------------------------------------------------------------


def tile_rows(run) -> pl.DataFrame:
    """One row per seat and tile: where the tile's card came in the deal (position 0-22, its
    round) and whether the seat declined it."""
    positions = (
        run.games.select("game_id", *CARD_COLUMNS)
        .unpivot(index="game_id", on=list(CARD_COLUMNS), variable_name="card", value_name="tile")
        .with_columns(
            pl.col("card").str.strip_prefix("card_").cast(pl.Int32).alias("position"),
            pl.col("tile").cast(pl.Int32),
        )
        .drop("card")
    )
    rows = (
        players_frame(run)
        .select(
            "game_id", "seat", "n_players", "strategy_name", "total", "win_share", "declined_mask"
        )
        .join(positions, on="game_id", how="inner")
        .collect()
    )
    mask = rows["declined_mask"].cast(pl.Int64).to_numpy()
    tile = rows["tile"].to_numpy().astype(np.int64)
    position = rows["position"].to_numpy()
    rounds = np.minimum(position // K.CARDS_PER_ROUND, K.REGULAR_ROUNDS) + 1
    return rows.with_columns(
        pl.Series("declined", (mask >> tile) & 1),
        pl.Series("round", rounds.astype(np.int32)),
    ).drop("declined_mask")


def tile_table(run, by: tuple[str, ...] = ()) -> pl.DataFrame:
    """Per tile (and ``by`` groups): decline rate with its Wilson interval; the decline rate
    when the card came early (rounds 1-2) and late (rounds 5-6) and their difference; the
    seat's mean final score when the card came early and late and their difference (Welch).
    The deal is random, so a tile's position is independent of everything else in the game:
    these differences measure how much the card's order matters."""
    rows = tile_rows(run)
    early = pl.col("round").is_in(list(EARLY_ROUNDS))
    late = pl.col("round").is_in(list(LATE_ROUNDS))
    frame = group_table(
        rows,
        (*by, "tile"),
        pl.col("declined").sum().alias("declines"),
        early.sum().alias("early_n"),
        pl.col("declined").filter(early).sum().alias("early_declines"),
        late.sum().alias("late_n"),
        pl.col("declined").filter(late).sum().alias("late_declines"),
        pl.col("total").filter(early).mean().alias("early"),
        pl.col("total").filter(early).std().alias("early_sd"),
        pl.col("total").filter(late).mean().alias("late"),
        pl.col("total").filter(late).std().alias("late_sd"),
    )
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
    frame = group_table(players_frame(run), ("n_players", "strategy_name"), *_TOTAL_AND_WINS)
    return with_win_share(_mean_ci(frame, "total", "total_sd", "n"))
