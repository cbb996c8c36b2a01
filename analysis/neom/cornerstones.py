"""Cornerstone balance: how often each is drafted, kept, placed, and how its owners fare.

The flag is based on the *drafted* group (every seat that ended the draft holding the
cornerstone), not on the placed group: a seat that is already ahead has the coins and the
spare turns to place a cornerstone, so "placed" mixes the tile's strength with the state of the
game. Drafting happens before any generation tile is dealt, so it is the cleaner comparison.
Each drafter's win share is compared with the mean win share of its strategy at its player
count (that seat's expected share), which keeps a strong strategy's favourites from looking
strong themselves.

Effects are zero-sum: every seat drafts exactly three cornerstones and the expected shares
average out over all seats, so the drafters' effects (weighted by how often each is drafted)
sum to about zero. A few strong cornerstones push every other one down, so the flag reads each
effect against the **median cornerstone** (``vs_median``) instead of against the average seat:
the median moves by at most one rank when one cornerstone dominates, so a dominant cornerstone
flags itself and not the rest. It is also the reference ``neom balance`` brings a cornerstone
back to. The median is taken as fixed: its own standard error is about a quarter of one
cornerstone's (the median of ~30 estimates), which widens the difference's by about 3%.
"""

import polars as pl

from analysis.core.batches import Reduction, value
from analysis.core.load import Run
from analysis.core.reduce import ClusterMoments, Sums, mean_or_null
from analysis.core.tabulate import (
    DEFAULT_FLAGGING,
    EXPECTED,
    Flagging,
    chunk_outcomes,
    seat_outcomes,
    with_median_flags,
    with_wilson,
)
from analysis.neom.load import CS_GEN_COLUMNS, DISCARDED_CS_COLUMNS, DRAFTED_COLUMNS
from sim.neom.constants import N_GENERATIONS
from sim.neom.records import CS_SWAPPED_AWAY, EV_DRAFT_PICK

COLUMN_ORDER = (
    "tile", "tile_name", "flag", "drafted", "drafted_rate", "kept", "kept_lo", "kept_hi",
    "left_in_draft", "mean_pick", "placed", "placed_rate", "placed_rate_lo", "placed_rate_hi",
    *(f"placed_gen{g}" for g in range(1, N_GENERATIONS + 1)), "mean_gen",
    "win_placed", "win_placed_lo", "win_placed_hi", "unplaced", "swapped",
    "win_unplaced", "win_unplaced_lo", "win_unplaced_hi", "not_drafted",
    "win_not_drafted", "win_not_drafted_lo", "win_not_drafted_hi",
    "n", "clusters", "small", "effect", "effect_lo", "effect_hi", "effect_se", "effect_p0",
    "effect_p", "effect_q", "flag_vs_expected", "vs_median", "vs_median_lo", "vs_median_hi",
    "vs_median_p", "vs_median_q",
    "score_diff", "score_diff_lo", "score_diff_hi",
)  # fmt: skip


def drafted_from(outcomes):
    """One row per (seat, drafted cornerstone) of the seats in ``outcomes`` (lazy or not):
    ``tile`` and ``gen`` (0 = never placed, ``CS_SWAPPED_AWAY`` = swapped away unplaced by the
    Contract Office, beginner variant)."""
    keep = ["game_id", "seat", "n_players", "strategy_name", "win_share", "expected", "residual",
            "score_diff", "deal"]  # fmt: skip
    parts = [
        outcomes.select(*keep, pl.col(tile).alias("tile"), pl.col(gen).alias("gen"))
        for tile, gen in zip(DRAFTED_COLUMNS, CS_GEN_COLUMNS, strict=True)
    ]
    return pl.concat(parts).filter(pl.col("tile") >= 0)


def drafted_long(run: Run) -> pl.LazyFrame:
    """:func:`drafted_from` the whole run (lazy)."""
    return drafted_from(seat_outcomes(run))


def chunk_drafted(chunk) -> pl.DataFrame:
    """:func:`drafted_from` one chunk (``chunk.memo``; its reduction needs EXPECTED)."""
    return drafted_from(chunk.memo(chunk_outcomes))


def _reduce(chunk) -> dict:
    long = chunk.memo(chunk_drafted)
    gen = pl.col("gen")
    gen_counts = [(gen == g).sum().alias(f"placed_gen{g}") for g in range(1, N_GENERATIONS + 1)]
    leftovers = pl.concat(
        [chunk.games.select(pl.col(c).alias("tile")) for c in DISCARDED_CS_COLUMNS]
    ).filter(pl.col("tile") >= 0)
    out = {
        "counts": Sums.of(
            long,
            "tile",
            pl.len().alias("drafted"),
            pl.col("game_id").n_unique().alias("games_drafted"),
            (gen > 0).sum().alias("placed"),
            (gen == 0).sum().alias("unplaced"),
            (gen == CS_SWAPPED_AWAY).sum().alias("swapped"),
            *gen_counts,
            gen.filter(gen > 0).sum().alias("gen_placed"),
            pl.col("win_share").filter(gen > 0).sum().alias("wins_placed"),
            pl.col("win_share").filter(gen == 0).sum().alias("wins_unplaced"),
            pl.col("win_share").sum().alias("wins_drafted"),
        ),
        "leftovers": Sums.of(leftovers, "tile", pl.len().alias("left_in_draft")),
        "totals": Sums.of(
            chunk.players, (), pl.len().alias("seats"), pl.col("win_share").sum().alias("all_wins")
        ),
        "games": Sums.of(chunk.games, (), pl.len().alias("games")),
        "effects": ClusterMoments.of(long, ["tile"]),
        "leads": ClusterMoments.of(long, ["tile"], "score_diff", None),
        "by_strategy": ClusterMoments.of(long, ["tile", "strategy_name"]),
    }
    if chunk.events is not None:
        picks = chunk.events.filter(pl.col("kind") == EV_DRAFT_PICK)
        out["picks"] = Sums.of(
            picks,
            "tile",
            pl.col("other").count().alias("picks"),
            pl.col("other").sum().alias("pick_sum"),
        )
    return out


# Drafts, placements and the drafters' outcomes per cornerstone, chunk by chunk.
CORNERSTONES = Reduction("neom.cornerstones", _reduce, needs=(EXPECTED,))


def cornerstone_table(run: Run, flagging: Flagging = DEFAULT_FLAGGING) -> pl.DataFrame:
    """One row per cornerstone drafted or dealt into a draft hand in the run; see
    docs/reports.md for every column.

    ``effect`` is the drafters' mean win share above their expected share with a 95%
    cluster-robust interval (clusters: deals); ``vs_median`` the same against the median
    cornerstone. ``flag`` is "strong" or "weak" where the p-value for "``vs_median`` lies
    within +-band", adjusted across cornerstones by ``flagging``'s method, is below its level:
    its whole interval then lies outside the band (``flag_vs_expected``: the same test on
    ``effect``). Cornerstones drafted by fewer than its ``min_n`` seats are not tested
    (``small``).
    """
    stats = value(run, CORNERSTONES)
    n_games = stats["games"].value("games")
    seats = stats["totals"].value("seats")
    all_wins = stats["totals"].value("all_wins", 0.0)
    counts = stats["counts"].table()
    frame = counts.select(
        "tile", "drafted", "games_drafted", "placed", "unplaced", "swapped",
        *(f"placed_gen{g}" for g in range(1, N_GENERATIONS + 1)),
        mean_or_null("gen_placed", "placed").alias("mean_gen"),
        "wins_placed", "wins_unplaced", "wins_drafted",
    )  # fmt: skip
    # A cornerstone dealt but never drafted has no counts row: its row comes from the leftovers
    # (drafted 0), so the usage floors see it kept 0% instead of never offered (issue 38 item 1).
    count_columns = [c for c in frame.columns if c not in ("tile", "mean_gen")]
    frame = frame.join(stats["leftovers"].table(), on="tile", how="full", coalesce=True)
    frame = frame.with_columns(pl.col(count_columns).fill_null(0))
    if stats.get("picks") is not None:
        picks = (
            stats["picks"]
            .table()
            .select("tile", (pl.col("pick_sum") / pl.col("picks") + 1.0).alias("mean_pick"))
        )
        frame = frame.join(picks, on="tile", how="left")
    frame = frame.with_columns(
        (pl.col("games_drafted") / n_games).alias("drafted_rate"),
        pl.col("left_in_draft").fill_null(0),
        (seats - pl.col("drafted")).alias("not_drafted"),
        (all_wins - pl.col("wins_drafted")).alias("wins_not_drafted"),
    )
    frame = _add_rates(frame)
    effects = stats["effects"].effect_table()
    leads = (
        stats["leads"]
        .effect_table(name="score_diff")
        .select("tile", "score_diff", "score_diff_lo", "score_diff_hi")
    )
    frame = frame.join(effects, on="tile", how="left").join(leads, on="tile", how="left")
    frame = with_median_flags(frame, flagging).drop("wins_drafted")
    ordered = [c for c in COLUMN_ORDER if c in frame.columns or c == "tile_name"]
    return run.name_tiles(frame).select(ordered).sort("effect", descending=True)


def by_strategy(run: Run, flagging: Flagging = DEFAULT_FLAGGING) -> pl.DataFrame:
    """The drafted effect of every cornerstone for each strategy on its own (the expected share
    is already the strategy's own), flagged against that strategy's median cornerstone and
    corrected across all (cornerstone, strategy) cells; see
    :func:`analysis.core.tabulate.sign_disagreements` for the sign test."""
    table = value(run, CORNERSTONES)["by_strategy"].effect_table()
    table = with_median_flags(table, flagging, by=("strategy_name",))
    return run.name_tiles(table).sort("tile", "strategy_name")


def _add_rates(frame: pl.DataFrame) -> pl.DataFrame:
    """Shares with Wilson intervals: kept when dealt, placed when drafted, and the win share of
    seats that placed it, drafted but never placed it, and did not draft it."""
    frame = with_wilson(frame, "drafted", pl.col("drafted") + pl.col("left_in_draft"), "kept")
    frame = with_wilson(frame, "placed", "drafted", "placed_rate")
    frame = with_wilson(frame, "wins_placed", "placed", "win_placed")
    frame = with_wilson(frame, "wins_unplaced", "unplaced", "win_unplaced")
    frame = with_wilson(frame, "wins_not_drafted", "not_drafted", "win_not_drafted")
    return frame.drop("wins_placed", "wins_unplaced", "wins_not_drafted")
