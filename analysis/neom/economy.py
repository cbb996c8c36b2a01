"""The economy behind the flags: which goods cities produce, what seats do with their
selections, which tiles a sale beats, and how tiles depend on one another.

- :func:`goods_by_generation`: per good, the share of cities producing it at the end of each
  generation. A city is rebuilt from the log (its City Center until a tile replaces it, then
  every placement and cornerstone on its square, a sacrifice emptying it); at the end of
  generation 3 it is the players table's ``goods_mask`` (tested).
- :func:`good_chains`: per good, its producers, the tiles that need it, and the link of its
  production chain that fails first (the most upstream good or tile that is rare while what
  it needs is there).
- :func:`action_mix`: per generation, what seats did with their 7 selections: placed, sold,
  discarded to build a cornerstone, or chose a Disaster.
- :func:`dominated_tiles`: for each tile whose whole value is coins and printed VP, whether
  the 5-coin sale beats placing it even at its best (placed on the first turn of its
  generation, so it collects every income left), and at which cost or income it would not.
- :func:`links`: a tile's prerequisites, the tiles that require it and the goods it needs,
  shown beside its flag.
"""

import math

import numpy as np
import polars as pl

from analysis.core.batches import Reduction, value
from analysis.core.load import Run
from analysis.core.reduce import Sums
from analysis.core.tabulate import MAX_SEATS, game_rows, with_wilson
from analysis.neom.tiles import _taken
from sim.neom import constants as K
from sim.neom.constants import N_GENERATIONS, SELL_COINS, TURNS_PER_GENERATION
from sim.neom.records import (
    EV_CORNERSTONE,
    EV_DISASTER_SACRIFICE,
    EV_DISASTER_SELECT,
    EV_PLACE,
    EV_SELL,
)

LOW_SHARE = 0.05  # a good produced by fewer cities than this at the end "fails"
RARE_PLACED = 0.05  # a producer placed in fewer games than this does not carry its good
MONEY_PER_VP = 2  # S6: "1 VP for every 2 [coins] you have left"
SCORED_TYPES = K.T_RESIDENTIAL | K.T_PUBLIC  # printed VP scores on these (RULES.md)
ACTIONS = ("placed", "sold", "for_cornerstone", "disaster")
ACTION_WORDS = {
    "placed": "placed",
    "sold": "sold (5 coins)",
    "for_cornerstone": "discarded to build a cornerstone",
    "disaster": "a Disaster chosen",
}


def city_goods_by_generation(chunk, tables) -> tuple[np.ndarray, np.ndarray]:
    """(seat slots, goods masks int64[slots, N_GENERATIONS]) of the chunk's seats: slot =
    game row * MAX_SEATS + seat; column g the goods of the city at the end of generation g+1."""
    players = chunk.players
    slots = game_rows(chunk, players["game_id"].to_numpy()) * MAX_SEATS + players[
        "seat"
    ].to_numpy().astype(np.int64)
    n_slots = chunk.games.height * MAX_SEATS
    produces = tables.tiles[:, K.C_PRODUCES].astype(np.int64)
    center = tables.board_center.astype(np.int64)
    board = np.clip(players["board"].fill_null(0).to_numpy().astype(np.int64), 0, len(center) - 1)
    center_goods = np.zeros(n_slots, dtype=np.int64)
    center_goods[slots] = produces[center[board]]
    goods = np.zeros((n_slots, N_GENERATIONS), dtype=np.int64)
    events = chunk.events
    kind = events["kind"].to_numpy()
    player = events["player"].to_numpy().astype(np.int64)
    cell = events["cell"].to_numpy().astype(np.int64)
    build = np.isin(kind, (EV_PLACE, EV_CORNERSTONE, EV_DISASTER_SACRIFICE))
    build &= (player >= 0) & (cell >= 0)
    rows = np.nonzero(build)[0]
    if rows.size == 0:
        return slots, np.repeat(center_goods[slots, None], N_GENERATIONS, axis=1)
    g = game_rows(chunk, events["game_id"].to_numpy()[rows]).astype(np.int64)
    key = (g * MAX_SEATS + player[rows]) * K.N_CELLS + cell[rows]
    tile = events["tile"].to_numpy().astype(np.int64)[rows]
    occupant = np.where(kind[rows] == EV_DISASTER_SACRIFICE, -1, tile)
    turn = events["turn"].to_numpy().astype(np.int64)[rows]
    order = np.lexsort((rows, key))  # by square, then in the log's order
    key, occupant, turn = key[order], occupant[order], turn[order]
    for gen in range(1, N_GENERATIONS + 1):
        done = turn < gen * TURNS_PER_GENERATION
        k, o = key[done], occupant[done]
        last = np.r_[k[1:] != k[:-1], True] if k.size else np.zeros(0, dtype=bool)
        k, o = k[last], o[last]
        held = np.where(o >= 0, produces[np.clip(o, 0, None)], 0)
        mask = np.zeros(n_slots, dtype=np.int64)
        np.bitwise_or.at(mask, k // K.N_CELLS, held)
        # The City Center produces until a tile replaces it (or a Disaster takes it).
        built_over = np.zeros(n_slots, dtype=bool)
        built_over[k[k % K.N_CELLS == K.CENTER_CELL] // K.N_CELLS] = True
        goods[:, gen - 1] = mask | np.where(built_over, 0, center_goods)
    return slots, goods[slots]


def _strategy_codes(players: pl.DataFrame) -> tuple[tuple[str, ...], np.ndarray]:
    names = tuple(sorted(players["strategy_name"].unique().to_list()))
    codes = players["strategy_name"].cast(pl.Enum(names)).to_physical().to_numpy()
    return names, codes.astype(np.int64)


def _reduce(chunk) -> dict:
    events, tables = chunk.events, chunk.info.data()
    if events is None or tables is None:
        return {}
    players = chunk.players
    names, strategy = _strategy_codes(players)
    n_goods = len(tables.goods_tier)
    gens = N_GENERATIONS
    # Goods: cities producing each good at the end of each generation, per strategy.
    _, goods = city_goods_by_generation(chunk, tables)
    bits = (goods[:, :, None] >> np.arange(n_goods)[None, None, :]) & 1  # seat, gen, good
    cell = (strategy[:, None, None] * gens + np.arange(gens)[None, :, None]) * n_goods
    cell = cell + np.arange(n_goods)[None, None, :]
    cities = np.bincount(cell.ravel(), weights=bits.ravel(), minlength=len(names) * gens * n_goods)
    keys = pl.DataFrame(
        {
            "strategy_name": np.repeat(np.array(names, dtype=object), gens * n_goods).tolist(),
            "generation": np.tile(np.repeat(np.arange(1, gens + 1), n_goods), len(names)),
            "good": np.tile(np.arange(n_goods), len(names) * gens),
        },
        schema={"strategy_name": pl.Utf8, "generation": pl.Int32, "good": pl.Int32},
    )
    seats = np.bincount(strategy, minlength=len(names))
    out = {
        "goods": Sums(
            keys.with_columns(pl.Series("cities", cities.round().astype(np.int64))),
            ("strategy_name", "generation", "good"),
        ),
        "seats": Sums(
            pl.DataFrame(
                {"strategy_name": list(names), "seats": seats.astype(np.int64)},
                schema={"strategy_name": pl.Utf8, "seats": pl.Int64},
            ),
            ("strategy_name",),
        ),
    }
    # Actions: what each selection became, per strategy and generation.
    kind = events["kind"].to_numpy()
    turn = events["turn"].to_numpy().astype(np.int64)
    player = events["player"].to_numpy().astype(np.int64)
    g = game_rows(chunk, events["game_id"].to_numpy()).astype(np.int64)
    slot_strategy = np.full(chunk.games.height * MAX_SEATS, -1, dtype=np.int64)
    slot_strategy[
        game_rows(chunk, players["game_id"].to_numpy()) * MAX_SEATS
        + players["seat"].to_numpy().astype(np.int64)
    ] = strategy
    valid = (player >= 0) & (turn >= 0)
    who = np.where(valid, slot_strategy[g * MAX_SEATS + np.clip(player, 0, MAX_SEATS - 1)], -1)
    gen = turn // TURNS_PER_GENERATION
    valid &= (who >= 0) & (gen < gens)
    masks = {
        "selections": _taken(g, kind, turn, player),
        "placed": kind == EV_PLACE,
        "sold": kind == EV_SELL,
        "for_cornerstone": kind == EV_CORNERSTONE,
        "disaster": kind == EV_DISASTER_SELECT,
    }
    action_keys = pl.DataFrame(
        {
            "strategy_name": np.repeat(np.array(names, dtype=object), gens).tolist(),
            "generation": np.tile(np.arange(1, gens + 1), len(names)),
        },
        schema={"strategy_name": pl.Utf8, "generation": pl.Int32},
    )
    counts = {
        name: np.bincount((who * gens + gen)[valid & mask], minlength=len(names) * gens).astype(
            np.int64
        )
        for name, mask in masks.items()
    }
    out["actions"] = Sums(
        action_keys.with_columns(pl.Series(n, c) for n, c in counts.items()),
        ("strategy_name", "generation"),
    )
    return out


# Goods by generation and the action mix, chunk by chunk (runs with events and a catalogue).
ECONOMY = Reduction("neom.economy", _reduce)


def _stats(run: Run) -> dict | None:
    if run.events is None or run.tables is None:
        return None
    stats = value(run, ECONOMY)
    return stats if stats.get("goods") is not None else None


def goods_by_generation(run: Run, by_strategy: bool = False) -> pl.DataFrame | None:
    """Per good (``good``, ``good_name``, ``tier``) and generation: ``cities`` producing it at
    the end of the generation, ``seats`` and ``share`` (Wilson interval); per strategy with
    ``by_strategy``. None without an event log or a catalogue."""
    stats = _stats(run)
    if stats is None:
        return None
    tables = run.tables
    goods = stats["goods"].table()
    seats = stats["seats"].table()
    keys = ["generation", "good"]
    if by_strategy:
        frame = goods.join(seats, on="strategy_name")
        keys = ["strategy_name", *keys]
    else:
        frame = goods.group_by("generation", "good").agg(pl.col("cities").sum())
        frame = frame.with_columns(pl.lit(int(seats["seats"].sum())).alias("seats"))
    tier_names = {v: k for k, v in K.TIER_NAMES.items()}
    frame = frame.with_columns(
        pl.col("good").map_elements(lambda i: tables.good_names[i], return_dtype=pl.Utf8)
        .alias("good_name"),
        pl.col("good").map_elements(lambda i: tier_names[int(tables.goods_tier[i])],
                                    return_dtype=pl.Utf8).alias("tier"),
    )  # fmt: skip
    frame = with_wilson(frame, "cities", "seats", "share")
    return frame.select(
        *keys[:-1], "good", "good_name", "tier", "cities", "seats", "share", "share_lo",
        "share_hi",
    ).sort(keys)  # fmt: skip


def action_mix(run: Run) -> pl.DataFrame | None:
    """Per strategy (and ``all``) and generation: the seats' mean selections and what they
    became (``placed``, ``sold``, ``for_cornerstone``, ``disaster``: means per seat, and each
    one's ``*_share`` of the selections)."""
    stats = _stats(run)
    if stats is None:
        return None
    actions = stats["actions"].table()
    seats = stats["seats"].table()
    pooled = (
        actions.group_by("generation")
        .agg(pl.col("selections", *ACTIONS).sum())
        .with_columns(pl.lit("all").alias("strategy_name"))
    )
    frame = pl.concat(
        [
            actions.join(seats, on="strategy_name"),
            pooled.with_columns(pl.lit(int(seats["seats"].sum())).alias("seats")).select(
                actions.columns + ["seats"]
            ),
        ],
        how="vertical_relaxed",
    )
    return frame.select(
        "strategy_name",
        "generation",
        "seats",
        (pl.col("selections") / pl.col("seats")).alias("selections_per_seat"),
        *((pl.col(a) / pl.col("seats")).alias(f"{a}_per_seat") for a in ACTIONS),
        *((pl.col(a) / pl.col("selections")).alias(f"{a}_share") for a in ACTIONS),
    ).sort(pl.col("strategy_name") == "all", "strategy_name", "generation")


# --- the catalogue's own structure -------------------------------------------------------------


def _in_play(tables) -> list[int]:
    """Generation tiles (Disasters aside) and cornerstones: what a city can hold."""
    decks = (K.DECK_CORNERSTONE, K.DECK_GEN1, K.DECK_GEN2, K.DECK_GEN3)
    return [
        t for t in range(tables.n_tiles)
        if tables.tiles[t, K.C_DECK] in decks and tables.tiles[t, K.C_DISASTER] == K.DIS_NONE
        and tables.tiles[t, K.C_REPLACES] < 0
    ]  # fmt: skip


def _options(tables, tile: int) -> list[tuple[int, int]]:
    """The tile's requirement options: (goods mask, coin cost)."""
    n = max(int(tables.tiles[tile, K.C_N_REQ_OPTIONS]), 1)
    return [(int(tables.req[tile, o, K.R_GOODS]), int(tables.req[tile, o, K.R_COST]))
            for o in range(n)]  # fmt: skip


def _goods_of(tables, mask: int) -> list[int]:
    return [g for g in range(len(tables.goods_tier)) if mask >> g & 1]


def needs(tables, good: int) -> tuple[list[int], list[int]]:
    """(tiles every requirement option of which needs ``good``, tiles one option of which
    does), among the tiles a city can hold."""
    every, some = [], []
    for tile in _in_play(tables):
        options = [mask >> good & 1 for mask, _ in _options(tables, tile)]
        if all(options):
            every.append(tile)
        elif any(options):
            some.append(tile)
    return every, some


def producers(tables, good: int) -> list[int]:
    return [t for t in _in_play(tables) if tables.tiles[t, K.C_PRODUCES] >> good & 1]


def good_chains(
    goods: pl.DataFrame, placed: dict[int, int], n_games: int, tables, why: dict[int, str]
) -> pl.DataFrame:
    """Per good: its share of cities at the end of each generation (``goods``: the pooled
    :func:`goods_by_generation`), its producers and how often they were placed (``placed``:
    tile -> placements in ``n_games`` games), the tiles that need it, and ``fails_at``: the link
    of its production chain that fails first (``why``: tile -> why it is rarely placed, from
    the dead-tile table), with ``chain`` in words."""
    share = {
        (r["good"], r["generation"]): r["share"] for r in goods.iter_rows(named=True)
    }  # fmt: skip
    final = {g: share.get((g, N_GENERATIONS), 0.0) for g in range(len(tables.goods_tier))}
    name = tables.tile_names
    good_name = tables.good_names

    def placed_share(tile: int) -> float:
        return placed.get(tile, 0) / n_games if n_games else 0.0

    def chain(good: int, seen: tuple[int, ...]) -> tuple[str, list[str]]:
        """(where the chain fails, its links from the good up to there)."""
        link = f"{good_name[good]} ({100 * final[good]:.1f}% of cities)"
        if final[good] >= LOW_SHARE:
            return "", [link]
        made_by = producers(tables, good)
        if not made_by:
            return f"no tile produces {good_name[good]}", [link, "made by no tile"]
        # The producer placed most carries the chain's best chance.
        best = max(made_by, key=placed_share)
        words = f"made by {name[best]} (placed in {100 * placed_share(best):.1f}% of games)"
        if placed_share(best) >= RARE_PLACED:
            # Placed often enough in games, yet by too few of their cities: the producer
            # itself is the link a designer moves.
            return f"{name[best]}: placed by too few cities", [link, words]
        # Its inputs: each option's scarcest good; the chain goes on up the best of them.
        scarcest = [
            min(_goods_of(tables, mask), key=lambda g: final[g], default=-1)
            for mask, _ in _options(tables, best)
        ]
        usable = [g for g in scarcest if g < 0 or final[g] >= LOW_SHARE]
        if usable or any(g in seen for g in scarcest):
            reason = why.get(best, "")
            return name[best] + (f": {reason}" if reason else ""), [link, words]
        upstream = max(scarcest, key=lambda g: final[g])
        fails, links = chain(upstream, (*seen, good))
        return fails, [link, words, "needs " + links[0], *links[1:]]

    rows = []
    for good in range(len(tables.goods_tier)):
        every, some = needs(tables, good)
        fails, links = chain(good, ())
        made_by = producers(tables, good)
        rows.append(
            {
                "good": good,
                "good_name": good_name[good],
                "tier": {v: k for k, v in K.TIER_NAMES.items()}[int(tables.goods_tier[good])],
                **{f"share_gen{g}": share.get((good, g), 0.0) for g in range(1, N_GENERATIONS + 1)},
                "producers": ", ".join(
                    f"{name[t]} ({placed.get(t, 0)})"
                    for t in sorted(made_by, key=lambda t: -placed.get(t, 0))
                ),
                "needed_by_every_option": ", ".join(name[t] for t in every),
                "needed_by_some_option": ", ".join(name[t] for t in some),
                "n_needing": len(every) + len(some),
                "fails_at": fails,
                "chain": " ← ".join(links) if fails else "",
            }
        )
    return pl.DataFrame(rows)


def beyond_coins(tables, tile: int) -> str:
    """ "" when the tile's whole value is coins and printed VP (no effects, goods, power,
    protection nor Neighborhoods), else what it has besides."""
    row = tables.tiles[tile]
    has = {
        "effects": (tables.effects[tile, :, 0] != K.EF_NONE).any(),
        "goods": row[K.C_PRODUCES],
        "power": row[K.C_POWER],
        "protection": row[K.C_PROTECTS],
        "Neighborhoods": row[K.C_TYPES] & K.T_RESIDENTIAL,
    }
    return ", ".join(what for what, present in has.items() if present)


def dominated_tiles(tables, decks=(K.DECK_GEN1, K.DECK_GEN2, K.DECK_GEN3)) -> pl.DataFrame:
    """Each generation tile whose value is coins and printed VP only (:func:`beyond_coins` empty),
    placed at its best: on the first turn of its generation (it collects the ``incomes`` left,
    one at the end of each generation from its own), paying its cheapest option's coins with
    the goods at hand. ``value`` = income x incomes + coins on placement - cost + 2 x VP (the
    VP at the end-game rate of 2 coins, S6) against the sale's 5 coins: ``dominated`` when the
    sale is worth more. ``income_needed``: the least income at which it is not;
    ``max_cost``: the dearest cost at which it is not (negative: none)."""
    rows = []
    for tile in range(tables.n_tiles):
        row = tables.tiles[tile]
        if row[K.C_DECK] not in decks or row[K.C_DISASTER] != K.DIS_NONE:
            continue
        if beyond_coins(tables, tile):
            continue
        generation = int(row[K.C_DECK])
        incomes = N_GENERATIONS - generation + 1
        cost = min(c for _, c in _options(tables, tile))
        vp = int(row[K.C_VP]) if row[K.C_TYPES] & SCORED_TYPES else 0
        income, on_place = int(row[K.C_INCOME]), int(row[K.C_COINS_ON_PLACE])
        other = on_place - cost + MONEY_PER_VP * vp
        worth = income * incomes + other
        rows.append(
            {
                "tile": tile,
                "tile_name": tables.tile_names[tile],
                "generation": generation,
                "income": income,
                "incomes": incomes,
                "coins_on_place": on_place,
                "cost": cost,
                "vp": vp,
                "value": worth,
                "sale": SELL_COINS,
                "dominated": worth < SELL_COINS,
                "income_needed": max(math.ceil((SELL_COINS - other) / incomes), 0),
                "max_cost": income * incomes + on_place + MONEY_PER_VP * vp - SELL_COINS,
            }
        )
    schema = {"tile": pl.Int64, "tile_name": pl.Utf8, "generation": pl.Int64,
              "income": pl.Int64, "incomes": pl.Int64, "coins_on_place": pl.Int64,
              "cost": pl.Int64, "vp": pl.Int64, "value": pl.Int64, "sale": pl.Int64,
              "dominated": pl.Boolean, "income_needed": pl.Int64, "max_cost": pl.Int64}  # fmt: skip
    return pl.DataFrame(rows, schema=schema).sort("dominated", "value", descending=[True, False])


def links(tables, tile: int, good_share: dict[int, float] | None = None) -> str:
    """A tile's links in words: what it requires, what requires it, and the goods it needs
    (with the share of cities producing each at the end, when ``good_share`` is given)."""
    name = tables.tile_names
    parts = []
    required = [int(p) for p in tables.tiles[tile, K.C_PREREQ0 : K.C_PREREQ0 + K.MAX_PREREQS]]
    required = [p for p in required if p >= 0]
    if required:
        parts.append("requires " + " and ".join(name[p] for p in required))
    by = [
        t for t in range(tables.n_tiles)
        if tile in tables.tiles[t, K.C_PREREQ0 : K.C_PREREQ0 + K.MAX_PREREQS]
    ]  # fmt: skip
    if by:
        parts.append("required by " + ", ".join(name[t] for t in by))
    options = _options(tables, tile)
    needed = [_goods_of(tables, mask) for mask, _ in options]
    if all(needed):
        shown = []
        for goods in needed:
            words = []
            for g in goods:
                share = "" if good_share is None else f" {100 * good_share.get(g, 0.0):.0f}%"
                words.append(f"{tables.good_names[g]}{share}")
            shown.append(" + ".join(words))
        parts.append("needs " + " or ".join(shown))
    return "; ".join(parts)
