"""A/B comparison of two Tangram City runs played on the same deals: two tile sets, or two
bonus tables (rules ``planning_bonus`` / ``balance_bonus``), or any other change.

Both runs must use the same master seed, player count, seat mode, strategies and game count, so
that game g of one run and game g of the other have the same deal (the same deal stream: card
order, boards, first start player) and the same strategy in each seat. Each seat's result is
then paired with its twin, and every difference (B minus A) comes with the interval of a paired
mean: far narrower than comparing two independent runs.
"""

import functools

import numpy as np
import polars as pl

from analysis.core.batches import Reduction, analyse
from analysis.core.reduce import Moments, Sums
from analysis.core.stats import interval_from_moments
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


def _check_manifests(run_a, run_b) -> None:
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


def _joined(chunk_a, chunk_b) -> pl.DataFrame:
    columns = ["game_id", "seat", "n_players", "strategy_name", *METRICS]
    a = chunk_a.players.select(columns)
    b = chunk_b.players.select(["game_id", "seat", "strategy_name", *METRICS])
    return a.join(b, on=["game_id", "seat"], suffix="_b")


def _paired_reduce(chunks, groups) -> dict:
    """Twin chunks of runs A and B: the deals that differ, seats whose strategy differs, and
    per grouping the moments of every metric's B - A difference."""
    chunk_a, chunk_b = chunks
    seeds = chunk_a.games.select("game_id", "deal_seed").join(
        chunk_b.games.select("game_id", "deal_seed"), on="game_id", suffix="_b"
    )
    joined = _joined(chunk_a, chunk_b)
    out = {
        "dealt": Sums.of(
            seeds, (), (pl.col("deal_seed") != pl.col("deal_seed_b")).sum().alias("games")
        ),
        "strategies": Sums.of(
            joined, (), (pl.col("strategy_name") != pl.col("strategy_name_b")).sum().alias("seats")
        ),
    }
    diffs = joined.with_columns(
        (pl.col(f"{m}_b").cast(pl.Float64) - pl.col(m).cast(pl.Float64)).alias(f"{m}_diff")
        for m in METRICS
    )
    for by in groups:
        name = ",".join(by)
        out[f"{name}.diff"] = Moments.of(diffs, by, [f"{m}_diff" for m in METRICS])
        out[f"{name}.sums"] = Sums.of(
            diffs, by, *(pl.col(m).cast(pl.Float64).sum().alias(f"{m}_a") for m in METRICS),
            *(pl.col(f"{m}_b").cast(pl.Float64).sum().alias(f"{m}_b") for m in METRICS),
        )  # fmt: skip
    return out


GROUPS = (("strategy_name",), ())


def _paired_stats(run_a, run_b, by) -> dict:
    """The merged statistics of the two runs read chunk by chunk side by side, for the
    groupings the section reads and ``by`` (kept on run A for run B)."""
    groups = tuple(dict.fromkeys((*GROUPS, tuple(by))))
    key = f"tangram.compare|{run_b.path}|{groups}"
    if key not in run_a.cache:
        reduce = functools.partial(_paired_reduce, groups=groups)
        reduction = Reduction(f"tangram.compare|{groups}", reduce)
        run_a.cache[key] = analyse((run_a, run_b), [reduction])[reduction.name]
    return run_a.cache[key]


def check_paired(run_a, run_b) -> None:
    """UserError unless the two runs play the same deals with the same seats."""
    _check_manifests(run_a, run_b)
    seeds = _paired_stats(run_a, run_b, ())["dealt"].value("games")
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
    check_paired(run_a, run_b)
    stats = _paired_stats(run_a, run_b, by)
    if stats["strategies"].value("seats"):
        raise UserError("runs not paired: a seat plays different strategies in the two runs")
    name = ",".join(by)
    moments = stats[f"{name}.diff"].table()
    sums = stats[f"{name}.sums"].table()
    frame = moments.join(sums, on=list(by)) if by else pl.concat([moments, sums], how="horizontal")
    rows = []
    for r in frame.sort(list(by)).iter_rows(named=True) if by else frame.iter_rows(named=True):
        n = r["n"]
        row = {k: r[k] for k in by} | {"n": n}
        for metric in METRICS:
            sd = r[f"{metric}_diff_sd"]
            result = interval_from_moments(r[f"{metric}_diff"], np.nan if sd is None else sd, n)
            row |= {
                f"{metric}_a": r[f"{metric}_a"] / n,
                f"{metric}_b": r[f"{metric}_b"] / n,
                f"{metric}_diff": float(result["mean"]),
                f"{metric}_diff_lo": float(result["lo"]),
                f"{metric}_diff_hi": float(result["hi"]),
                f"{metric}_p": float(result["p"]),
            }
        rows.append(row)
    frame = pl.DataFrame(rows)
    return frame.sort(list(by)) if by else frame
