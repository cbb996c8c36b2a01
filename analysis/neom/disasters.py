"""Disasters apart from the tiles: what choosing one does to the chooser and to its victims,
and which lever of the catalogue each points to.

A Disaster is selected from a hand like a tile, but never placed: its selector is spared and
every other seat (but the insured) pays coins or sacrifices tiles (RULES.md P10). Its
**chooser effect** is the tile effect of its selectors (win share above expected, from the
tile table); its **victim effect** is the same for the seats it hit (a payment or a sacrifice
in the log), cluster-robust over deals, with how they resolved it. Its own numbers count for
nothing, so its levers are the costs of the tiles that protect against it or insure it
(``neom balance``'s Disaster levers, :func:`analysis.neom.levers.item_levers`).
"""

import tomllib
from pathlib import Path

import numpy as np
import polars as pl

from analysis.core.batches import Reduction, value
from analysis.core.load import Run
from analysis.core.reduce import ClusterMoments, Sums
from analysis.core.tabulate import EXPECTED, MAX_SEATS, seat_arrays
from analysis.neom.load import event_arrays
from sim.neom import constants as K
from sim.neom.constants import N_GENERATIONS, TURNS_PER_GENERATION
from sim.neom.records import EV_DISASTER_PAY, EV_DISASTER_SACRIFICE, EV_DISASTER_SELECT


def is_disaster(tables, tile: int) -> bool:
    return (
        tables is not None
        and 0 <= tile < tables.n_tiles
        and bool(tables.tiles[tile, K.C_DISASTER] != K.DIS_NONE)
    )


def _tile_of_kind(tables) -> np.ndarray:
    """int64[N_GENERATIONS, disaster kinds]: the catalogue's Disaster of each kind in each
    generation's deck (-1: none), for Disasters no seat selected (random-disasters variant)."""
    out = np.full((N_GENERATIONS, max(K.DISASTER_NAMES.values()) + 1), -1, dtype=np.int64)
    for tile in range(tables.n_tiles):
        kind, deck = int(tables.tiles[tile, K.C_DISASTER]), int(tables.tiles[tile, K.C_DECK])
        if kind != K.DIS_NONE and 1 <= deck <= N_GENERATIONS and out[deck - 1, kind] < 0:
            out[deck - 1, kind] = tile
    return out


def _reduce(chunk) -> dict:
    events, tables = chunk.events, chunk.info.data()
    if events is None or tables is None:
        return {}
    seats = chunk.memo(seat_arrays)
    ev = event_arrays(chunk)
    g, kind, turn, player, tile = ev.g, ev.kind, ev.turn, ev.player, ev.tile
    other, coins = ev.other, ev.coins
    gen = np.clip(turn // TURNS_PER_GENERATION, 0, N_GENERATIONS - 1)
    n_games = chunk.games.height
    # The Disaster of each (game, generation): the one selected, else by its kind.
    chosen = np.full(n_games * N_GENERATIONS, -1, dtype=np.int64)
    picks = np.nonzero((kind == EV_DISASTER_SELECT) & (tile >= 0) & (turn >= 0))[0]
    chosen[g[picks] * N_GENERATIONS + gen[picks]] = tile[picks]
    hit = np.isin(kind, (EV_DISASTER_PAY, EV_DISASTER_SACRIFICE)) & (player >= 0) & (turn >= 0)
    rows = np.nonzero(hit)[0]
    by_kind = _tile_of_kind(tables)
    disaster = chosen[g[rows] * N_GENERATIONS + gen[rows]]
    fallback = by_kind[gen[rows], np.clip(other[rows], 0, by_kind.shape[1] - 1)]
    disaster = np.where(disaster >= 0, disaster, fallback)
    keep = disaster >= 0
    rows, disaster = rows[keep], disaster[keep]
    slot = g[rows] * MAX_SEATS + player[rows]
    # One victim per (seat, generation): a sacrifice logs one row per tile lost.
    victim = (slot * N_GENERATIONS + gen[rows]) * tables.n_tiles + disaster
    order = np.argsort(victim, kind="stable")
    victim, rows_o, disaster_o = victim[order], rows[order], disaster[order]
    first = np.r_[True, victim[1:] != victim[:-1]] if victim.size else np.zeros(0, dtype=bool)
    paid = kind[rows_o] == EV_DISASTER_PAY
    victim_index = np.cumsum(first) - 1
    n_victims = int(first.sum())
    paid_any = np.zeros(n_victims, dtype=bool)
    np.logical_or.at(paid_any, victim_index, paid)
    v_slot = (victim[first] // tables.n_tiles) // N_GENERATIONS
    v_tile = disaster_o[first]
    present = seats.present[v_slot]
    row_present = present[victim_index]
    v_slot, v_tile, paid_any = v_slot[present], v_tile[present], paid_any[present]
    n_tiles = tables.n_tiles
    tile_keys = pl.DataFrame({"tile": np.arange(n_tiles, dtype=np.int32)})
    deal = seats.deal[v_slot // MAX_SEATS]
    victims = ClusterMoments.from_codes(
        tile_keys, v_tile, seats.residual[v_slot], deal, seats.expected[v_slot]
    )
    leads = ClusterMoments.from_codes(tile_keys, v_tile, seats.score_diff[v_slot], deal)
    payments = paid & row_present
    sacrifices = ~paid & row_present
    games_hit = np.unique(g[rows_o][row_present] * n_tiles + disaster_o[row_present]) % n_tiles
    counts = pl.DataFrame(
        {
            "tile": np.arange(n_tiles, dtype=np.int32),
            "victims": np.bincount(v_tile, minlength=n_tiles),
            "paid": np.bincount(v_tile[paid_any], minlength=n_tiles),
            "coins_paid": np.bincount(
                disaster_o[payments], weights=-coins[rows_o][payments], minlength=n_tiles
            )
            .round()
            .astype(np.int64),
            "tiles_lost": np.bincount(disaster_o[sacrifices], minlength=n_tiles),
            "games_hit": np.bincount(games_hit, minlength=n_tiles),
        }
    ).filter(pl.col("victims") > 0)
    return {"victims": victims, "victim_leads": leads, "counts": Sums(counts, ("tile",))}


# The seats each Disaster hit and how they resolved it, chunk by chunk.
DISASTERS = Reduction("neom.disasters", _reduce, needs=(EXPECTED,))


def victim_table(run: Run) -> pl.DataFrame | None:
    """Per Disaster tile that hit anyone: ``victims`` (seat-generations hit), their effect
    (``victim_effect``: win share above expected, with its interval), their score lead
    (``victim_lead``: VP above the mean of the other seats), ``games_hit``, the share that
    paid (``paid_share``), ``coins_per_payment`` and ``tiles_per_sacrifice``."""
    if run.events is None or run.tables is None:
        return None
    stats = value(run, DISASTERS)
    if stats.get("victims") is None:
        return None
    effects = stats["victims"].effect_table(name="victim_effect")
    leads = stats["victim_leads"].effect_table(name="victim_lead")
    counts = stats["counts"].table()
    frame = counts.join(
        effects.select("tile", "victim_effect", "victim_effect_lo", "victim_effect_hi"),
        on="tile", how="left",
    ).join(
        leads.select("tile", "victim_lead", "victim_lead_lo", "victim_lead_hi"),
        on="tile", how="left",
    )  # fmt: skip
    sacrificed = pl.col("victims") - pl.col("paid")
    return frame.with_columns(
        (pl.col("paid") / pl.col("victims")).alias("paid_share"),
        (pl.col("coins_paid") / pl.col("paid")).alias("coins_per_payment"),
        (pl.col("tiles_lost") / sacrificed).alias("tiles_per_sacrifice"),
    )


def catalogue_entries(run: Run) -> dict | None:
    """The run's catalogue snapshot as TOML tables (``neom balance`` reads its levers there)."""
    snapshot = run.path / str(run.manifest.get("data", {}).get("snapshot", ""))
    if not Path(snapshot).is_file():
        return None
    try:
        return tomllib.loads(snapshot.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def levers(run: Run, name: str) -> str:
    """The Disaster's levers in words: the tiles protecting against it or insuring it and
    their costs (``neom balance``'s Disaster levers), or why it has none."""
    from analysis.neom.levers import item_levers
    from sim.core.errors import UserError

    data = catalogue_entries(run)
    if data is None:
        return ""
    try:
        _, _, found = item_levers(data, name)
    except UserError:
        return ""
    if not found:
        return f"none: no tile protects against {name} or insures it"
    costs = [f"{lever.tile} {lever.path} {lever.current}" for lever in found]
    return (
        "the costs of the tiles protecting or insuring against it (" + ", ".join(costs) + "): "
        "dearer protection makes it hurt more"
    )
