"""Game flow: coins and VP by generation, per strategy.

Coins come from the event log (every money change is an event with its ``coins``); VP by
generation from the players columns ``score_gen1`` and ``score_gen2`` (each seat's score at
the end of generations 1 and 2, recorded with the event log), the final total being
generation 3's.
"""

import numpy as np
import polars as pl

from analysis.core.arrays import unique_inverse
from analysis.core.batches import Reduction, value
from analysis.core.load import Run
from analysis.core.reduce import ClusterMoments, Sums
from analysis.core.tabulate import MAX_SEATS, chunk_deals, game_rows
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


def _category_of_kind() -> np.ndarray:
    """Each event kind's coin category (its index in CATEGORIES; -1: none)."""
    kinds = [k for ks in CATEGORIES.values() for k in ks]
    table = np.full(max(kinds) + 1, -1, dtype=np.int64)
    for index, ks in enumerate(CATEGORIES.values()):
        table[list(ks)] = index
    return table


def _reduce(chunk) -> dict:
    players = chunk.players
    n_games = chunk.games.height
    rows = game_rows(chunk, players["game_id"].to_numpy())
    seat = rows * MAX_SEATS + players["seat"].to_numpy().astype(np.int64)
    names = tuple(sorted(players["strategy_name"].unique().to_list()))
    strategy = players["strategy_name"].cast(pl.Enum(names)).to_physical().to_numpy()
    strategy = strategy.astype(np.int64)
    _, deal = unique_inverse(chunk.memo(chunk_deals)["deal"].to_numpy())
    deal = np.repeat(deal[rows], N_GENERATIONS)
    gens = N_GENERATIONS
    keys = pl.DataFrame(
        {
            "strategy_name": np.repeat(np.array(names, dtype=object), gens).tolist(),
            "generation": np.tile(np.arange(1, gens + 1, dtype=np.int32), len(names)),
        },
        schema={"strategy_name": pl.Utf8, "generation": pl.Int32},
    )
    code = (strategy[:, None] * gens + np.arange(gens)[None, :]).ravel()
    out = {}
    if chunk.events is not None:
        events = chunk.events
        player = events["player"].to_numpy().astype(np.int64)
        turn = events["turn"].to_numpy().astype(np.int64)
        generation = turn // TURNS_PER_GENERATION
        category = _category_of_kind()
        kind = events["kind"].to_numpy().astype(np.int64)
        kind_category = np.where(
            kind < len(category), category[np.minimum(kind, len(category) - 1)], -1
        )
        keep = (player >= 0) & (turn >= 0) & (generation < gens) & (kind_category >= 0)
        at = game_rows(chunk, events["game_id"].to_numpy()[keep]) * MAX_SEATS + player[keep]
        cell = (at * gens + generation[keep]) * len(CATEGORIES) + kind_category[keep]
        sums = np.bincount(
            cell,
            weights=events["coins"].to_numpy()[keep].astype(np.float64),
            minlength=n_games * MAX_SEATS * gens * len(CATEGORIES),
        ).reshape(n_games * MAX_SEATS, gens, len(CATEGORIES))[seat]
        money_end = START_MONEY + np.cumsum(sums.sum(axis=2), axis=1)
        flat = sums.reshape(-1, len(CATEGORIES))
        totals = {
            name: np.bincount(code, weights=flat[:, i], minlength=keys.height)
            for i, name in enumerate(CATEGORIES)
        }
        counts = np.bincount(code, minlength=keys.height)
        out["coins"] = Sums(
            keys.with_columns(
                *(
                    pl.Series(name, total.round().astype(np.int64))
                    for name, total in totals.items()
                ),
                pl.Series("n", counts.astype(np.int64)),
            ).filter(pl.col("n") > 0),
            ("strategy_name", "generation"),
        )
        out["money_end"] = ClusterMoments.from_codes(keys, code, money_end.ravel(), deal)
    if all(column in players.columns for column in VP_COLUMNS):
        out["recorded"] = Sums.of(
            players, (), pl.col(VP_COLUMNS[0]).max().alias("max"), how={"max": "max"}
        )
        vp = np.stack(
            [players[c].cast(pl.Float64).fill_null(np.nan).to_numpy()
             for c in (*VP_COLUMNS, "total")], axis=1
        )  # fmt: skip
        out["vp"] = ClusterMoments.from_codes(keys, code, vp.ravel(), deal)
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
