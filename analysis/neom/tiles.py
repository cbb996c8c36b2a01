"""Generation tiles, from the event log: how often taken when seen, what players did with them,
how the seats that placed them fared, and what they were passed over for.

What a seat *saw* is not logged; it is rebuilt from the hands. Each hand of 8 tiles goes round
the table, one tile taken per turn, and its last tile is discarded on the 7th turn, so a hand's
tiles are exactly its 7 selections plus its discard. Which seat held a hand on a turn follows
from the passing direction (``PASS_STEP``). Only games of 3 or more players deal hands this way;
solo and 2-player games are left out of the seen counts.
"""

import numpy as np
import polars as pl

from analysis.core.load import Run
from analysis.core.tabulate import seat_outcomes, with_effect_flags, with_mean_interval, with_wilson
from sim.neom.records import (
    EV_CORNERSTONE,
    EV_DISASTER_SELECT,
    EV_DISCARD,
    EV_PLACE,
    EV_SELECT,
    EV_SELL,
)

HAND_SIZE = 8  # "deal each player a hand of 8 tiles"
TURNS_PER_GENERATION = 7
# "The other tiles are passed to the left player": seat s passes to seat s + 1 (the engine's
# seat order). The hand a seat holds on turn t was dealt to seat (s - PASS_STEP * t).
PASS_STEP = 1
MIN_PLAYERS_DEALT = 3
FDR_LEVEL = 0.05


def _selections(events: pl.LazyFrame) -> pl.LazyFrame:
    """Tiles taken from a hand: selections, and Disaster selections not also logged as one."""
    keys = ["game_id", "turn", "player"]
    select = events.filter(pl.col("kind") == EV_SELECT)
    disaster = events.filter(pl.col("kind") == EV_DISASTER_SELECT).join(select, on=keys, how="anti")
    return pl.concat([select, disaster]).select(*keys, "tile", pl.col("turn").alias("order"))


def hands(run: Run) -> np.ndarray:
    """Rebuilt hands as an int32 array (n_hands, HAND_SIZE): column t is the tile taken on the
    hand's turn t of its generation, the last column the discarded tile. Hands whose 8 tiles
    are not all in the log are left out."""
    dealt_games = run.games.filter(pl.col("n_players") >= MIN_PLAYERS_DEALT).select("game_id")
    events = run.events.filter(pl.col("turn") >= 0).join(dealt_games, on="game_id", how="semi")
    discards = events.filter(pl.col("kind") == EV_DISCARD).select(
        "game_id", "turn", "player", "tile", pl.lit(HAND_SIZE - 1, dtype=pl.Int32).alias("order")
    )
    selections = _selections(events).with_columns(pl.col("order") % TURNS_PER_GENERATION)
    taken = pl.concat([selections, discards]).join(
        run.games.select("game_id", "n_players"), on="game_id"
    )
    turn_in_gen = pl.col("turn") % TURNS_PER_GENERATION
    taken = (
        taken.with_columns(
            (pl.col("turn") // TURNS_PER_GENERATION).alias("gen"),
            ((pl.col("player") - PASS_STEP * turn_in_gen) % pl.col("n_players")).alias("hand"),
        )
        .with_columns(pl.len().over("game_id", "gen", "hand").alias("size"))
        .filter(pl.col("size") == HAND_SIZE)
        .sort("game_id", "gen", "hand", "order")
        .select("tile", "order")
        .collect()
    )
    tiles = taken["tile"].to_numpy().reshape(-1, HAND_SIZE)
    orders = taken["order"].to_numpy().reshape(-1, HAND_SIZE)
    complete = (orders == np.arange(HAND_SIZE)).all(axis=1)
    return tiles[complete].astype(np.int32)


def seen_and_passed(hand_tiles: np.ndarray, n_tiles: int) -> tuple[np.ndarray, np.ndarray]:
    """From rebuilt hands: times each tile was seen, and ``passed[a, b]``, times tile a was in
    the hand when tile b was taken instead."""
    seen = np.zeros(n_tiles, dtype=np.int64)
    passed = np.zeros(n_tiles * n_tiles, dtype=np.int64)
    for turn in range(TURNS_PER_GENERATION):
        in_hand = hand_tiles[:, turn:]
        seen += np.bincount(in_hand.ravel(), minlength=n_tiles)
        chosen = np.repeat(hand_tiles[:, turn], in_hand.shape[1] - 1)
        passed += np.bincount(
            hand_tiles[:, turn + 1 :].ravel() * n_tiles + chosen, minlength=n_tiles * n_tiles
        )
    return seen, passed.reshape(n_tiles, n_tiles)


def tile_table(run: Run, method: str = "bh", level: float = FDR_LEVEL) -> pl.DataFrame | None:
    """One row per generation tile selected in the run (None without events); see
    docs/reports.md. ``effect`` is the placing seats' mean win share above their expected
    share; like every effect here it is observational (placing needs the means to place)."""
    if run.events is None:
        return None
    events = run.events
    kind = pl.col("kind")
    # A cornerstone action spends the selected tile, logged as the event's ``other``.
    spent = events.filter(kind == EV_CORNERSTONE).select(pl.col("other").alias("tile"), "kind")
    handled = events.filter(kind.is_in([EV_PLACE, EV_SELL, EV_DISCARD])).select("tile", "kind")
    actions = (
        pl.concat([handled, spent])
        .group_by("tile")
        .agg(
            (kind == EV_PLACE).sum().alias("placed"),
            (kind == EV_SELL).sum().alias("sold"),
            (kind == EV_CORNERSTONE).sum().alias("for_cornerstone"),
            (kind == EV_DISCARD).sum().alias("discarded"),
        )
    )
    selected = _selections(events).group_by("tile").agg(pl.len().alias("selected"))
    placers = (
        events.filter(kind == EV_PLACE)
        .select("game_id", pl.col("player").alias("seat"), "tile")
        .unique()
        .join(seat_outcomes(run), on=["game_id", "seat"])
        .group_by("tile")
        .agg(
            pl.len().alias("placing_seats"),
            pl.col("win_share").sum().alias("wins_placed"),
            pl.col("residual").mean().alias("effect"),
            pl.col("residual").std().alias("effect_sd"),
        )
    )
    frame = (
        selected.join(actions, on="tile", how="full", coalesce=True)
        .join(placers, on="tile", how="left")
        .filter(pl.col("tile") >= 0)
        .collect()
        .fill_null(0)
    )
    n_tiles = max(int(frame["tile"].max()) + 1, run.tables.n_tiles if run.tables else 0)
    seen, passed = seen_and_passed(hands(run), n_tiles)
    tiles = frame["tile"].to_numpy()
    passed_rows = passed[tiles]
    top = passed_rows.argmax(axis=1)
    passed_total = passed_rows.sum(axis=1)
    frame = frame.with_columns(
        pl.Series("seen", seen[tiles]),
        pl.Series("taken_when_seen", seen[tiles] - passed_total),
        pl.Series("passed_over_for", np.where(passed_total > 0, top, -1), dtype=pl.Int32),
        pl.Series(
            "passed_over_share",
            np.divide(
                passed_rows[np.arange(len(tiles)), top],
                passed_total,
                out=np.full(len(tiles), np.nan),
                where=passed_total > 0,
            ),
        ),
    )
    frame = with_wilson(frame, "taken_when_seen", "seen", "taken_rate")
    frame = with_wilson(frame, "placed", "selected", "placed_rate")
    frame = with_wilson(frame, "wins_placed", "placing_seats", "win_placed")
    frame = with_mean_interval(frame, "effect", "effect_sd", "placing_seats")
    frame = with_effect_flags(frame, method, level).drop("wins_placed")
    frame = run.name_tiles(frame)
    frame = run.name_tiles(frame, "passed_over_for", "passed_over_for_name")
    first = ["tile", "tile_name", "flag"]
    return frame.select(*first, pl.exclude(first)).sort("effect", descending=True, nulls_last=True)
