"""What the seats did with every cornerstone and generation tile: offered, kept, built, sold.

One row per cornerstone and per generation tile of the catalogue (Disasters apart), present
even when the run never dealt or kept it (zeros), so a tile nobody uses shows as a row of
zeros rather than as a missing row. The report and ``neom balance`` read the same table.
"""

import polars as pl

from sim.neom import constants as K

DECKS = {K.DECK_CORNERSTONE: 0, K.DECK_GEN1: 1, K.DECK_GEN2: 2, K.DECK_GEN3: 3}
COLUMNS = ("offered", "kept", "built", "sold", "for_cornerstone")


def usage_table(
    tables, cornerstones: pl.DataFrame | None, tiles: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Per item of the catalogue (``kind``: cornerstone or tile; ``generation``: 0 for
    cornerstones): ``offered`` (a cornerstone dealt into a draft hand: drafted plus left in
    the draft; a tile: times seen in a hand a seat chose from), ``kept`` (drafted; selected),
    ``built`` (placed), ``sold`` and ``for_cornerstone`` (a tile's selections sold, or
    discarded to build a cornerstone), and the rates ``kept_rate`` (kept / offered),
    ``built_rate`` (built / kept), ``sold_rate`` (sold / kept): NaN where the denominator is 0.
    ``cornerstones``: ``cornerstone_table``'s rows; ``tiles``: ``tile_table``'s (None without
    an event log: the tile rows are then zeros)."""
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

    return frame.with_columns(
        rate("kept", "offered"), rate("built", "kept"), rate("sold", "kept")
    ).sort("generation", "tile")
