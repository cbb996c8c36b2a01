"""Cornerstone balance: how often each is drafted, kept, placed, and how its owners fare.

The flag is based on the *drafted* group (every seat that ended the draft holding the
cornerstone), not on the placed group: a seat that is already ahead has the coins and the
spare turns to place a cornerstone, so "placed" mixes the tile's strength with the state of the
game. Drafting happens before any generation tile is dealt, so it is the cleaner comparison.
Each drafter's win share is compared with the mean win share of its strategy at its player
count (that seat's expected share), which keeps a strong strategy's favourites from looking
strong themselves.
"""

import polars as pl

from analysis.core.load import Run
from analysis.core.tabulate import seat_outcomes, with_effect_flags, with_mean_interval, with_wilson
from analysis.neom.load import CS_GEN_COLUMNS, DISCARDED_CS_COLUMNS, DRAFTED_COLUMNS
from sim.neom.records import EV_DRAFT_PICK

FDR_LEVEL = 0.05
N_GENERATIONS = 3
COLUMN_ORDER = (
    "tile", "tile_name", "flag", "drafted", "drafted_rate", "kept", "kept_lo", "kept_hi",
    "left_in_draft", "mean_pick", "placed", "placed_rate", "placed_rate_lo", "placed_rate_hi",
    *(f"placed_gen{g}" for g in range(1, N_GENERATIONS + 1)), "mean_gen",
    "win_placed", "win_placed_lo", "win_placed_hi", "unplaced",
    "win_unplaced", "win_unplaced_lo", "win_unplaced_hi", "not_drafted",
    "win_not_drafted", "win_not_drafted_lo", "win_not_drafted_hi",
    "effect", "effect_lo", "effect_hi", "effect_p", "effect_q",
    "score_diff", "score_diff_lo", "score_diff_hi",
)  # fmt: skip


def drafted_long(run: Run) -> pl.LazyFrame:
    """One row per (seat, drafted cornerstone): ``tile`` and ``gen`` (0 = never placed)."""
    outcomes = seat_outcomes(run)
    keep = ["game_id", "seat", "n_players", "strategy_name", "win_share", "residual", "score_diff"]
    parts = [
        outcomes.select(*keep, pl.col(tile).alias("tile"), pl.col(gen).alias("gen"))
        for tile, gen in zip(DRAFTED_COLUMNS, CS_GEN_COLUMNS, strict=True)
    ]
    return pl.concat(parts).filter(pl.col("tile") >= 0)


def _draft_leftovers(run: Run) -> pl.LazyFrame:
    """Games in which each cornerstone was dealt in the draft but left over."""
    parts = [run.games.select(pl.col(c).alias("tile")) for c in DISCARDED_CS_COLUMNS]
    return (
        pl.concat(parts)
        .filter(pl.col("tile") >= 0)
        .group_by("tile")
        .agg(pl.len().alias("left_in_draft"))
    )


def _pick_numbers(run: Run) -> pl.LazyFrame | None:
    """Mean draft pick (1 = first pick) per cornerstone, from the draft events."""
    if run.events is None:
        return None
    return (
        run.events.filter(pl.col("kind") == EV_DRAFT_PICK)
        .group_by("tile")
        .agg((pl.col("other").mean() + 1.0).alias("mean_pick"))
    )


def cornerstone_table(run: Run, method: str = "bh", level: float = FDR_LEVEL) -> pl.DataFrame:
    """One row per cornerstone drafted in the run; see docs/reports.md for every column.

    ``effect`` is the drafters' mean win share above their expected share, with a 95% interval
    and a p-value ``effect_p``; ``effect_q`` is that p-value adjusted across cornerstones by
    ``method`` ("bh" for Benjamini-Hochberg, "holm" for Holm), and ``flag`` is "strong" or
    "weak" where ``effect_q < level``.
    """
    long = drafted_long(run)
    total = run.players.select(
        pl.len().alias("seats"), pl.col("win_share").sum().alias("all_wins")
    ).collect()
    n_games = run.games.select(pl.len()).collect().item()
    gen_counts = [
        (pl.col("gen") == g).sum().alias(f"placed_gen{g}") for g in range(1, N_GENERATIONS + 1)
    ]
    frame = (
        long.group_by("tile")
        .agg(
            pl.len().alias("drafted"),
            pl.col("game_id").n_unique().alias("games_drafted"),
            (pl.col("gen") > 0).sum().alias("placed"),
            *gen_counts,
            pl.col("gen").filter(pl.col("gen") > 0).mean().alias("mean_gen"),
            pl.col("win_share").filter(pl.col("gen") > 0).sum().alias("wins_placed"),
            pl.col("win_share").filter(pl.col("gen") == 0).sum().alias("wins_unplaced"),
            pl.col("win_share").sum().alias("wins_drafted"),
            pl.col("residual").mean().alias("effect"),
            pl.col("residual").std().alias("effect_sd"),
            pl.col("score_diff").mean().alias("score_diff"),
            pl.col("score_diff").std().alias("score_diff_sd"),
            pl.col("score_diff").count().alias("score_n"),
        )
        .join(_draft_leftovers(run), on="tile", how="left")
        .collect()
    )
    picks = _pick_numbers(run)
    if picks is not None:
        frame = frame.join(picks.collect(), on="tile", how="left")
    frame = frame.with_columns(
        (pl.col("games_drafted") / n_games).alias("drafted_rate"),
        pl.col("left_in_draft").fill_null(0),
        (pl.col("drafted") - pl.col("placed")).alias("unplaced"),
        (total["seats"].item() - pl.col("drafted")).alias("not_drafted"),
        (total["all_wins"].item() - pl.col("wins_drafted")).alias("wins_not_drafted"),
    )
    frame = _add_rates(frame)

    frame = with_mean_interval(frame, "effect", "effect_sd", "drafted")
    frame = with_mean_interval(frame, "score_diff", "score_diff_sd", "score_n")
    frame = with_effect_flags(frame, method, level).drop("score_n", "wins_drafted", "score_diff_p")
    ordered = [c for c in COLUMN_ORDER if c in frame.columns or c == "tile_name"]
    return run.name_tiles(frame).select(ordered).sort("effect", descending=True)


def _add_rates(frame: pl.DataFrame) -> pl.DataFrame:
    """Shares with Wilson intervals: kept when dealt, placed when drafted, and the win share of
    seats that placed it, drafted but never placed it, and did not draft it."""
    frame = with_wilson(frame, "drafted", pl.col("drafted") + pl.col("left_in_draft"), "kept")
    frame = with_wilson(frame, "placed", "drafted", "placed_rate")
    frame = with_wilson(frame, "wins_placed", "placed", "win_placed")
    frame = with_wilson(frame, "wins_unplaced", "unplaced", "win_unplaced")
    frame = with_wilson(frame, "wins_not_drafted", "not_drafted", "win_not_drafted")
    return frame.drop("wins_placed", "wins_unplaced", "wins_not_drafted")
