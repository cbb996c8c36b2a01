"""Game flow: coins and VP by generation, per strategy.

Coins come from the event log (every money change is an event with its ``coins``); VP by
generation from the players columns ``score_gen1`` and ``score_gen2`` (each seat's score at
the end of generations 1 and 2, recorded with the event log), the final total being
generation 3's.
"""

import polars as pl

from analysis.core.batches import Reduction, value
from analysis.core.load import Run
from analysis.core.reduce import ClusterMoments, Sums
from analysis.core.tabulate import chunk_deals
from sim.neom.constants import N_GENERATIONS, START_MONEY, TURNS_PER_GENERATION
from sim.neom.records import (
    EV_BUY,
    EV_CORNERSTONE,
    EV_DISASTER_PAY,
    EV_EFFECT_COINS,
    EV_GOOD_SOLD,
    EV_INCOME,
    EV_PLACE,
    EV_SELL,
    SCORE_NOT_RECORDED,
)

VP_COLUMNS = ("score_gen1", "score_gen2")
CATEGORIES = {
    "income": (EV_INCOME,),
    "sales": (EV_SELL,),
    "goods_sold": (EV_GOOD_SOLD,),
    "effects": (EV_EFFECT_COINS,),
    "tiles_paid": (EV_PLACE, EV_CORNERSTONE),
    "goods_bought": (EV_BUY,),
    "disasters": (EV_DISASTER_PAY,),
}


def _coin_rows(chunk) -> pl.DataFrame:
    """Every seat of every game of the chunk, once per generation: its strategy, deal, the
    coins of each category in that generation and the coins held at its end."""
    events = chunk.events.filter((pl.col("player") >= 0) & (pl.col("turn") >= 0)).select(
        "game_id",
        pl.col("player").cast(pl.Int64).alias("seat"),
        (pl.col("turn") // TURNS_PER_GENERATION + 1).cast(pl.Int32).alias("generation"),
        "kind",
        pl.col("coins").cast(pl.Int64),
    )
    sums = events.group_by("game_id", "seat", "generation").agg(
        pl.col("coins").filter(pl.col("kind").is_in(kinds)).sum().alias(name)
        for name, kinds in CATEGORIES.items()
    )
    gens = pl.DataFrame(
        {"generation": list(range(1, N_GENERATIONS + 1))}, schema={"generation": pl.Int32}
    )
    grid = (
        chunk.players.select("game_id", pl.col("seat").cast(pl.Int64), "strategy_name")
        .join(chunk.memo(chunk_deals), on="game_id", how="left")
        .join(gens, how="cross")
    )
    return (
        grid.join(sums, on=["game_id", "seat", "generation"], how="left")
        .with_columns(pl.col(list(CATEGORIES)).fill_null(0))
        .with_columns(pl.sum_horizontal(list(CATEGORIES)).alias("net"))
        .sort("game_id", "seat", "generation")
        .with_columns(
            (START_MONEY + pl.col("net").cum_sum().over("game_id", "seat")).alias("money_end")
        )
    )


def _vp_rows(chunk) -> pl.DataFrame:
    """Every seat's score at the end of each generation."""
    seats = chunk.players.select(
        "game_id", "strategy_name", *VP_COLUMNS, pl.col("total").alias("score_gen3")
    ).join(chunk.memo(chunk_deals), on="game_id", how="left")
    return seats.unpivot(
        index=["game_id", "strategy_name", "deal"],
        on=[*VP_COLUMNS, "score_gen3"],
        variable_name="column",
        value_name="vp",
    ).with_columns(pl.col("column").str.slice(-1).cast(pl.Int32).alias("generation"))


def _reduce(chunk) -> dict:
    out = {}
    keys = ["strategy_name", "generation"]
    if chunk.events is not None:
        coins = _coin_rows(chunk)
        out["coins"] = Sums.of(
            coins, keys, *(pl.col(c).sum() for c in CATEGORIES), pl.len().alias("n")
        )
        out["money_end"] = ClusterMoments.of(coins, keys, "money_end", None)
    if all(column in chunk.players.columns for column in VP_COLUMNS):
        out["recorded"] = Sums.of(
            chunk.players, (), pl.col(VP_COLUMNS[0]).max().alias("max"), how={"max": "max"}
        )
        out["vp"] = ClusterMoments.of(_vp_rows(chunk), keys, "vp", None)
    return out


# Coins and VP by generation per strategy, chunk by chunk.
FLOW = Reduction("neom.flow", _reduce)


def _means(moments: ClusterMoments, name: str) -> pl.DataFrame:
    table = moments.effect_table(name=name)
    return table.select("strategy_name", "generation", name, f"{name}_lo", f"{name}_hi")


def coins_by_generation(run: Run) -> pl.DataFrame | None:
    """Per strategy and generation: mean coins by source (income, tile sales, goods sold to
    others, tile effects; spent on tiles, on goods, on disasters, negative) and the coins held
    at the end of the generation (start money plus every change so far), with an interval."""
    if run.events is None:
        return None
    stats = value(run, FLOW)
    means = (
        stats["coins"]
        .table()
        .select(
            "strategy_name",
            "generation",
            *(pl.col(c) / pl.col("n") for c in CATEGORIES),
            "n",
        )
    )
    return means.join(
        _means(stats["money_end"], "money_end"), on=["strategy_name", "generation"]
    ).sort("strategy_name", "generation")


def vp_by_generation(run: Run) -> pl.DataFrame | None:
    """Per strategy and generation: the mean score at the end of the generation, with an
    interval; None when the run has no ``score_gen1``/``score_gen2`` columns or did not record
    them (``SCORE_NOT_RECORDED``: a run without the event log)."""
    stats = value(run, FLOW)
    if stats.get("vp") is None:
        return None
    if stats["recorded"].value("max", SCORE_NOT_RECORDED) == SCORE_NOT_RECORDED:
        return None
    return _means(stats["vp"], "vp").sort("strategy_name", "generation")
