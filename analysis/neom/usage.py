"""What the seats did with every cornerstone and generation tile: offered, kept, built, sold.

One row per cornerstone and per generation tile of the catalogue (Disasters apart), present
even when the run never dealt or kept it (zeros), so a tile nobody uses shows as a row of
zeros rather than as a missing row. The report and ``neom balance`` (its usage goal) read the
same table and the same floor rule (``below_floor``): one definition of "nobody wants it".

``neom balance`` imports this module for its floors while it parses its options: polars and
scipy are imported where used, so that ``neom --help`` stays quick.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sim.neom import constants as K

if TYPE_CHECKING:
    import polars as pl

DECKS = {K.DECK_CORNERSTONE: 0, K.DECK_GEN1: 1, K.DECK_GEN2: 2, K.DECK_GEN3: 3}
COLUMNS = ("offered", "taken", "kept", "built", "sold", "for_cornerstone")
# The usage floors a designer can change (neom balance --kept-floor, --built-floor): an item
# kept in fewer than a quarter of the deals that offer it, or built by fewer than half of the
# seats that keep it, is a card nobody wants.
USAGE_FLOORS = (0.25, 0.50)
FLOOR_ALPHA = 0.05  # the false-flag rate of the floor tests, after the correction


def usage_table(
    tables,
    cornerstones: pl.DataFrame | None,
    tiles: pl.DataFrame | None = None,
    floors: tuple = USAGE_FLOORS,
) -> pl.DataFrame:
    """Per item of the catalogue (``kind``: cornerstone or tile; ``generation``: 0 for
    cornerstones): ``offered`` (a cornerstone dealt into a draft hand: drafted plus left in
    the draft; a tile: times seen in a hand a seat chose from), ``kept`` (drafted; selected),
    ``built`` (placed), ``sold`` and ``for_cornerstone`` (a tile's selections sold, or
    discarded to build a cornerstone), and the rates ``kept_rate`` (kept / offered),
    ``built_rate`` (built / kept), ``sold_rate`` (sold / kept): NaN where the denominator is 0,
    ``kept_rate`` and ``built_rate`` with their 95% Wilson intervals (``_lo``, ``_hi``), and
    ``below_floor`` (``below_floors``). ``kept_rate`` is taken / offered: offers are counted
    only in games that deal hands round the table (3+ players), and so are their takes.
    ``cornerstones``: ``cornerstone_table``'s rows; ``tiles``: ``tile_table``'s (None without
    an event log: the tile rows are then zeros)."""
    import polars as pl

    from analysis.core.tabulate import with_wilson

    ids, kinds, gens = [], [], []
    for tile in range(tables.n_tiles):
        deck = int(tables.tiles[tile, K.C_DECK])
        if deck not in DECKS or tables.tiles[tile, K.C_DISASTER] != K.DIS_NONE:
            continue
        ids.append(tile)
        kinds.append("cornerstone" if deck == K.DECK_CORNERSTONE else "tile")
        gens.append(DECKS[deck])
    base = pl.DataFrame(
        {
            "kind": kinds,
            "tile": pl.Series(ids, dtype=pl.Int64),
            "tile_name": [tables.tile_names[t] for t in ids],
            "generation": pl.Series(gens, dtype=pl.Int64),
        }
    )
    parts = []
    if cornerstones is not None and cornerstones.height:
        parts.append(
            cornerstones.select(
                pl.col("tile").cast(pl.Int64),
                (pl.col("drafted") + pl.col("left_in_draft").fill_null(0)).alias("offered"),
                pl.col("drafted").alias("taken"),
                pl.col("drafted").alias("kept"),
                pl.col("placed").alias("built"),
                pl.lit(0).alias("sold"),
                pl.lit(0).alias("for_cornerstone"),
            )
        )
    if tiles is not None and tiles.height:
        parts.append(
            tiles.select(
                pl.col("tile").cast(pl.Int64),
                pl.col("seen").alias("offered"),
                pl.col("taken_when_seen").alias("taken"),
                pl.col("selected").alias("kept"),
                pl.col("placed").alias("built"),
                "sold",
                "for_cornerstone",
            )
        )
    measured = (
        pl.concat([p.with_columns(pl.col(c).cast(pl.Int64) for c in COLUMNS) for p in parts])
        if parts
        else pl.DataFrame(schema={"tile": pl.Int64, **{c: pl.Int64 for c in COLUMNS}})
    )
    frame = base.join(measured, on="tile", how="left").with_columns(pl.col(COLUMNS).fill_null(0))

    def rate(num: str, den: str) -> pl.Expr:
        return (
            pl.when(pl.col(den) > 0)
            .then(pl.col(num) / pl.col(den))
            .otherwise(float("nan"))
            .alias(f"{num}_rate")
        )

    frame = with_wilson(frame, "taken", "offered", "kept_rate")
    frame = with_wilson(frame, "built", "kept", "built_rate")
    frame = frame.with_columns(rate("sold", "kept")).sort("generation", "tile")
    return below_floors(frame, floors)


def below_floors(frame: pl.DataFrame, floors: tuple = USAGE_FLOORS) -> pl.DataFrame:
    """``below_floor``: "kept", "built", "kept, built" or "" per cornerstone row: which usage
    floor the cornerstone misses, decided by a one-sided exact binomial test of its count
    against the floor (kept: takes of its offers; built: builds by the seats that kept it),
    with the p-values of the whole table corrected together (Benjamini-Hochberg at
    ``FLOOR_ALPHA``). A handful of offers never flags an item (a test at small n cannot
    reject); an item never offered in a run is not tested (nothing is known of it).

    Generation tiles are not tested: a seat takes one tile of a hand of up to 8, so "taken
    when seen" has no common floor (its chance level falls with the hand's size), and the
    sale is a tile's normal use (the report's dominated-tiles section judges placing against
    selling); a tile's rates stay in the table and ``neom balance NAME --goal usage`` can
    still steer one toward floors a designer chooses."""
    import numpy as np
    import polars as pl
    from scipy.stats import binom

    from analysis.core.stats import adjust

    tests = []  # (row, floor's name, p)
    cornerstone = (
        (frame["kind"] == "cornerstone").to_numpy()
        if "kind" in frame.columns
        else np.ones(frame.height, dtype=bool)
    )
    for name, count, trials, floor in (("kept", "taken", "offered", floors[0]),
                                       ("built", "built", "kept", floors[1])):  # fmt: skip
        k = frame[count].to_numpy().astype(np.int64)
        n = frame[trials].to_numpy().astype(np.int64)
        p = binom.cdf(k, np.maximum(n, 1), floor)  # P(a count this low | the rate at the floor)
        tested = (n > 0) & cornerstone
        tests += [(row, name, p[row]) for row in np.flatnonzero(tested)]
    missed: list[list[str]] = [[] for _ in range(frame.height)]
    if tests:
        rejected = adjust(np.array([p for *_, p in tests]), "bh") < FLOOR_ALPHA
        for (row, name, _), flag in zip(tests, rejected, strict=True):
            if flag:
                missed[row].append(name)
    order = {"kept": 0, "built": 1}
    return frame.with_columns(
        pl.Series("below_floor", [", ".join(sorted(m, key=order.get)) for m in missed])
    )
