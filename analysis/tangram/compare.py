"""A/B comparison of two Tangram City runs played on the same deals: two tile sets, or two
bonus tables (rules ``planning_bonus`` / ``balance_bonus``), or any other change.

Both runs must use the same master seed, player count, seat mode, strategies and game count, so
that game g of one run and game g of the other have the same deal (the same deal stream: card
order, boards, first start player) and the same strategy in each seat. Each seat's result is
then paired with its twin, and every difference (B minus A) comes with the interval of a paired
mean: far narrower than comparing two independent runs.
"""

import numpy as np
import polars as pl

from analysis.core.stats import paired_difference
from analysis.tangram.tables import players_frame
from sim.core.errors import UserError

PAIRED_KEYS = ("players", "games", "seed", "seats")
METRICS = (
    "total",
    "win_share",
    "rounds_total",
    "planning_bonus",
    "balance_bonus",
    "full_squares",
    "tiles_declined",
)


def check_paired(run_a, run_b) -> None:
    """UserError unless the two runs play the same deals with the same seats."""
    for key in PAIRED_KEYS:
        if run_a.manifest.get(key) != run_b.manifest.get(key):
            raise UserError(
                f"runs not paired: {key} differs ({run_a.manifest.get(key)!r} vs "
                f"{run_b.manifest.get(key)!r}); play both with the same --seed, --players, "
                "--games and --seats"
            )
    names_a = [s["name"] for s in run_a.manifest["strategies"]]
    names_b = [s["name"] for s in run_b.manifest["strategies"]]
    # a named set is recorded by its name: its parameters must match too
    params_a = [s.get("params") for s in run_a.manifest["strategies"]]
    params_b = [s.get("params") for s in run_b.manifest["strategies"]]
    if names_a != names_b or params_a != params_b:
        raise UserError(
            f"runs not paired: strategies differ ({names_a} vs {names_b}"
            f"{', the same names with other parameters' if names_a == names_b else ''})"
        )
    seeds = (
        run_a.games.select("game_id", "deal_seed")
        .join(run_b.games.select("game_id", "deal_seed"), on="game_id", suffix="_b")
        .filter(pl.col("deal_seed") != pl.col("deal_seed_b"))
        .select(pl.len())
        .collect()
        .item()
    )
    if seeds:
        raise UserError(f"runs not paired: {seeds} games were dealt differently")


def paired_seats(run_a, run_b) -> pl.DataFrame:
    """One row per seat of every game: each metric in A and in B (suffix ``_b``)."""
    check_paired(run_a, run_b)
    columns = ["game_id", "seat", "n_players", "strategy_name", *METRICS]
    a = players_frame(run_a).select(columns)
    b = players_frame(run_b).select(["game_id", "seat", "strategy_name", *METRICS])
    joined = a.join(b, on=["game_id", "seat"], suffix="_b").collect()
    if (joined["strategy_name"] != joined["strategy_name_b"]).any():
        raise UserError("runs not paired: a seat plays different strategies in the two runs")
    return joined


def paired_differences(run_a, run_b, by: tuple[str, ...] = ("strategy_name",)) -> pl.DataFrame:
    """B minus A for every metric, per group (default: strategy; () for all seats), with the
    95% interval of the paired mean and its p-value for "no change"."""
    joined = paired_seats(run_a, run_b)
    groups = joined.partition_by(list(by), as_dict=True) if by else {(): joined}
    rows = []
    for key, part in groups.items():
        row = dict(zip(by, key, strict=True)) | {"n": part.height}
        for metric in METRICS:
            a = part[metric].cast(pl.Float64).to_numpy()
            b = part[f"{metric}_b"].cast(pl.Float64).to_numpy()
            result = paired_difference(b, a)
            row |= {
                f"{metric}_a": float(np.mean(a)),
                f"{metric}_b": float(np.mean(b)),
                f"{metric}_diff": result["mean"],
                f"{metric}_diff_lo": result["lo"],
                f"{metric}_diff_hi": result["hi"],
                f"{metric}_p": result["p"],
            }
        rows.append(row)
    frame = pl.DataFrame(rows)
    return frame.sort(list(by)) if by else frame
