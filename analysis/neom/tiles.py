"""Generation tiles measured where the decision is made (the way 17Lands measures cards).

A tile's strength shows at the moment a seat chooses it from a hand, not at the moment the
seat can afford to place it: seats that are already ahead place more (they have the coins),
so "win share when placed" mostly measures who could pay. For each tile this module gives:

- ``taken_rate``: taken when seen (in a hand a seat chose from), ``mean_turn``: the turn of
  its generation it is taken on (1-7), ``sell_rate`` / ``placed_rate``: what selectors did;
- win share and effect (above the seat's expected share) of the seats that **selected** it
  (the flagged effect), that **placed** it, and that **passed it over** (saw it, took another
  tile, never took it); ``sel_vs_passed``: the selectors' minus the passers' residual in the
  same games (both groups played that deal), the 17Lands "improvement when drawn" of a draft;
- dead and rare tiles (:func:`dead_tiles`): never or rarely placed, and why, from the log.

What a seat *saw* is not logged; it is rebuilt from the hands. Each hand of 8 tiles goes round
the table, one tile taken per turn, and its last tile is discarded on the 7th turn, so a hand's
tiles are exactly its 7 selections plus its discard. Which seat held a hand on a turn follows
from the passing direction (``PASS_STEP``). Only games of 3 or more players deal hands this way;
solo and 2-player games are left out of the seen and passed counts.
"""

import numpy as np
import polars as pl

from analysis.core.arrays import unique, unique_first
from analysis.core.batches import Reduction, value
from analysis.core.load import Run
from analysis.core.reduce import ClusterMoments, Sums, mean_or_null
from analysis.core.stats import DEFAULT_BAND, DEFAULT_MIN_N
from analysis.core.tabulate import (
    DEFAULT_FLAGGING,
    EXPECTED,
    MAX_SEATS,
    Flagging,
    SeatArrays,
    effect_table,
    game_rows,
    seat_arrays,
    seat_outcomes,
    with_band_flags,
    with_median_flags,
    with_wilson,
)
from analysis.neom.load import event_arrays
from sim.neom import constants as K
from sim.neom.constants import HAND_SIZE, START_MONEY, TURNS_PER_GENERATION
from sim.neom.records import (
    EV_CORNERSTONE,
    EV_DISASTER_SELECT,
    EV_DISCARD,
    EV_PLACE,
    EV_SELECT,
    EV_SELL,
)

# "The other tiles are passed to the left player": seat s passes to seat s + 1 (the engine's
# seat order). The hand a seat holds on turn t was dealt to seat (s - PASS_STEP * t).
PASS_STEP = 1
MIN_PLAYERS_DEALT = 3
FDR_LEVEL = 0.05
RARE_SHARE = 0.005  # "rare": placed in fewer than 1 game in 200
OUTCOME = ["game_id", "seat", "strategy_name", "win_share", "expected", "residual", "score_diff",
           "deal"]  # fmt: skip

# Why a selected tile was not placed (dead_tiles), in the order the reasons are checked.
WHY_PREREQUISITE = "prerequisite tile missing"
WHY_NO_GOODS = "a required good no city of the game produced"
WHY_UNAFFORDABLE = "unaffordable (coins below its cost and the goods to buy)"
WHY_OUTVALUED = "sold though affordable (selling paid more, or no legal square)"
WHY_CORNERSTONE = "spent on a cornerstone"
# Each reason's count column in the dead tiles table (``n_<slug>``), in the same order: a
# reason's index in WHYS is its code in the sale reasons.
WHY_SLUGS = {
    WHY_PREREQUISITE: "prerequisite_missing",
    WHY_NO_GOODS: "goods_unavailable",
    WHY_UNAFFORDABLE: "unaffordable",
    WHY_OUTVALUED: "sold_affordable",
    WHY_CORNERSTONE: "for_cornerstone",
}
WHYS = tuple(WHY_SLUGS)


def _selections(events: pl.LazyFrame) -> pl.LazyFrame:
    """Tiles taken from a hand: selections, and Disaster selections not also logged as one."""
    keys = ["game_id", "turn", "player"]
    select = events.filter(pl.col("kind") == EV_SELECT)
    disaster = events.filter(pl.col("kind") == EV_DISASTER_SELECT).join(select, on=keys, how="anti")
    return pl.concat([select, disaster]).select(*keys, "tile", pl.col("turn").alias("order"))


def hand_records_of(events, games) -> pl.DataFrame:
    """Rebuilt hands, one row per tile: ``game_id``, ``n_players``, ``gen`` (0-2), ``hand``
    (the seat it was dealt to), ``order`` (0-6: the turn of the generation it was taken on;
    7: discarded) and ``tile``. Hands whose 8 tiles are not all in the log are left out.
    ``events`` and ``games``: a run's (lazy) or a chunk's tables."""
    events, games = events.lazy(), games.lazy()
    dealt_games = games.filter(pl.col("n_players") >= MIN_PLAYERS_DEALT).select("game_id")
    events = events.filter(pl.col("turn") >= 0).join(dealt_games, on="game_id", how="semi")
    discards = events.filter(pl.col("kind") == EV_DISCARD).select(
        "game_id", "turn", "player", "tile", pl.lit(HAND_SIZE - 1, dtype=pl.Int32).alias("order")
    )
    selections = _selections(events).with_columns(
        (pl.col("order") % TURNS_PER_GENERATION).cast(pl.Int32)
    )
    taken = pl.concat([selections, discards]).join(
        games.select("game_id", "n_players"), on="game_id"
    )
    turn_in_gen = pl.col("turn") % TURNS_PER_GENERATION
    return (
        taken.with_columns(
            (pl.col("turn") // TURNS_PER_GENERATION).alias("gen"),
            ((pl.col("player") - PASS_STEP * turn_in_gen) % pl.col("n_players")).alias("hand"),
        )
        .with_columns(
            pl.len().over("game_id", "gen", "hand").alias("size"),
            (pl.col("order").sort() == pl.int_range(HAND_SIZE))
            .all()
            .over("game_id", "gen", "hand")
            .alias("complete"),
        )
        .filter((pl.col("size") == HAND_SIZE) & pl.col("complete"))
        .sort("game_id", "gen", "hand", "order")
        .select("game_id", "n_players", "gen", "hand", "order", "tile")
        .collect()
    )


def hand_records(run: Run) -> pl.DataFrame:
    """:func:`hand_records_of` the whole run (for a small run; a report rebuilds the hands
    chunk by chunk)."""
    return hand_records_of(run.events, run.games)


def hands(run: Run) -> np.ndarray:
    """Rebuilt hands as an int32 array (n_hands, HAND_SIZE): column t is the tile taken on the
    hand's turn t of its generation, the last column the discarded tile."""
    return hand_records(run)["tile"].to_numpy().reshape(-1, HAND_SIZE).astype(np.int32)


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


def passers(records: pl.DataFrame) -> pl.DataFrame:
    """(game_id, seat, tile) for every seat that held the tile on a turn and took another one
    (the seat that finally took it is removed by the caller)."""
    parts = []
    for turn in range(TURNS_PER_GENERATION):
        parts.append(
            records.filter(pl.col("order") > turn).select(
                "game_id",
                ((pl.col("hand") + PASS_STEP * turn) % pl.col("n_players")).alias("seat"),
                "tile",
            )
        )
    if not parts:
        return pl.DataFrame(schema={"game_id": pl.Int64, "seat": pl.Int64, "tile": pl.Int16})
    return pl.concat(parts).unique()


def seat_groups_of(events, outcomes: pl.DataFrame, records: pl.DataFrame | None):
    """Seat-level rows (one per seat and tile) of the selectors, placers and passers, each
    joined with the seat's outcome (``outcomes``: :data:`OUTCOME` columns; win share,
    expected share, residual, deal). ``events``: a run's (lazy) or a chunk's."""
    events = events.lazy()
    outcomes = outcomes.select(OUTCOME).with_columns(pl.col("seat").cast(pl.Int64))
    selected = (
        _selections(events)
        .filter(pl.col("tile") >= 0)
        .select("game_id", pl.col("player").cast(pl.Int64).alias("seat"), "tile")
        .unique()
        .collect()
    )
    placed = (
        events.filter(pl.col("kind") == EV_PLACE)
        .select("game_id", pl.col("player").cast(pl.Int64).alias("seat"), "tile")
        .unique()
        .collect()
    )
    join = lambda frame: frame.join(outcomes, on=["game_id", "seat"])  # noqa: E731
    passed = None
    if records is not None and records.height:
        passed = (
            passers(records)
            .with_columns(
                pl.col("seat").cast(pl.Int64), pl.col("tile").cast(selected["tile"].dtype)
            )
            .join(selected, on=["game_id", "seat", "tile"], how="anti")
        )
        passed = join(passed)
    return join(selected), join(placed), passed


def _seat_groups(run: Run, records: pl.DataFrame | None):
    """:func:`seat_groups_of` the whole run (for a small run)."""
    return seat_groups_of(run.events, seat_outcomes(run).collect(), records)


def _contrast_rows(selected: pl.DataFrame, passed: pl.DataFrame | None):
    """Per selection whose tile others passed over in the same game: ``d``, the selector's
    residual minus the passers' mean residual (None when nobody passed anything over)."""
    if passed is None or passed.height == 0:
        return None
    mean_passed = passed.group_by("game_id", "tile").agg(
        pl.col("residual").mean().alias("passed_residual")
    )
    return selected.join(mean_passed, on=["game_id", "tile"]).with_columns(
        (pl.col("residual") - pl.col("passed_residual")).alias("d")
    )


def _contrast_columns(table: pl.DataFrame) -> pl.DataFrame:
    return table.select(
        "tile",
        pl.col("n").alias("sel_vs_passed_games"),
        "sel_vs_passed",
        "sel_vs_passed_lo",
        "sel_vs_passed_hi",
    )


def _paired_contrast(selected: pl.DataFrame, passed: pl.DataFrame | None) -> pl.DataFrame | None:
    """Per tile: the selector's residual minus the mean residual of the seats that passed the
    tile over, in the same game (games where both happened), with a cluster-robust interval."""
    games = _contrast_rows(selected, passed)
    if games is None:
        return None
    return _contrast_columns(effect_table(games, ["tile"], "d", None, name="sel_vs_passed"))


def _sparse(values: np.ndarray, name: str, *index_names: str) -> pl.DataFrame:
    """The nonzero entries of a count array as rows (indices, count)."""
    where = np.nonzero(values)
    columns = {n: pl.Series(n, w, dtype=pl.Int32) for n, w in zip(index_names, where, strict=True)}
    return pl.DataFrame({**columns, name: values[where].astype(np.int64)})


def _dense(frame: pl.DataFrame, name: str, shape: tuple[int, ...], *index_names: str):
    out = np.zeros(shape, dtype=np.int64)
    index = tuple(frame[n].to_numpy().astype(np.int64) for n in index_names)
    np.add.at(out, index, frame[name].to_numpy())
    return out


def _group_cumsum(groups: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Running sums of ``values`` (rows, or rows x columns) within each group of ``groups``
    (small non-negative integers), in row order (inclusive)."""
    if len(groups) == 0:
        return values.copy()
    keys = groups.astype(np.int32) if groups.max() < 2**31 else groups
    order = np.argsort(keys, kind="stable")  # a radix sort on int32
    ordered = keys[order]
    new = np.r_[True, ordered[1:] != ordered[:-1]]
    totals = np.cumsum(values[order], axis=0)
    starts = np.flatnonzero(new)
    offsets = np.zeros((len(starts),) + values.shape[1:], dtype=totals.dtype)
    offsets[1:] = totals[starts[1:] - 1]
    out = np.empty_like(totals)
    out[order] = totals - offsets[np.cumsum(new) - 1]
    return out


def _sale_reasons_arrays(ev: dict, g: np.ndarray, seats: "SeatArrays", boards, tables):
    """:func:`_sale_reasons_of` on a chunk's event arrays: (tile, why index) of every sale and
    cornerstone spending (``WHYS`` order)."""
    kind, player, tile = ev["kind"], ev["player"], ev["tile"]
    valid = player >= 0
    rows = np.nonzero(valid)[0]
    person = g[rows] * 8 + player[rows]
    coins = ev["coins"][rows].astype(np.int64)
    money_before = START_MONEY + _group_cumsum(person, coins) - coins
    keep = np.isin(kind[rows], [EV_SELL, EV_PLACE, EV_CORNERSTONE])
    rows, person, money_before = rows[keep], person[keep], money_before[keep]
    games, seat = g[rows], player[rows].astype(np.int64)
    row_kind, row_tile = kind[rows], tile[rows].astype(np.int64)
    produces = tables.tiles[:, K.C_PRODUCES].astype(np.int64)
    center = tables.board_center.astype(np.int64)
    board = np.clip(boards[games * MAX_SEATS + np.clip(seat, 0, MAX_SEATS - 1)], 0, len(center) - 1)
    built = row_kind != EV_SELL
    gained = np.where(built, produces[np.clip(row_tile, 0, None)], 0)
    # Goods held before each row: the centre's plus a running OR of the tiles built before
    # (one running count per good bit).
    n_goods = len(tables.goods_tier)
    have = produces[center[board]]
    if n_goods and len(rows):
        bits = (gained[:, None] >> np.arange(n_goods)[None, :]) & 1
        before = _group_cumsum(person, bits) - bits
        have = have | ((before > 0).astype(np.int64) << np.arange(n_goods)[None, :]).sum(axis=1)
    # Every good any city of the game produced at some point (centres included).
    table_goods = np.zeros(len(seats.n_players), dtype=np.int64)
    np.bitwise_or.at(table_goods, games, gained)
    seat_boards = np.clip(boards[seats.present], 0, len(center) - 1)
    np.bitwise_or.at(table_goods, np.nonzero(seats.present)[0] // MAX_SEATS,
                     produces[center[seat_boards]])  # fmt: skip
    sells = row_kind == EV_SELL
    sell_tile = row_tile[sells]
    bound = _cheapest_bound(tables, sell_tile, have[sells], table_goods[games[sells]])
    # A prerequisite is missing unless the seller built it (placed, or as a cornerstone) at or
    # before the sale's row.
    n_tiles = max(tables.n_tiles, int(row_tile.max(initial=0)) + 1)
    built_keys = person[built] * n_tiles + row_tile[built]
    first_keys, first = unique_first(built_keys)
    built_row = rows[built][first]
    prereqs = tables.tiles[:, K.C_PREREQ0 : K.C_PREREQ0 + K.MAX_PREREQS].astype(np.int64)
    missing = np.zeros(sells.sum(), dtype=bool)
    sell_rows, sell_person = rows[sells], person[sells]
    for slot in range(K.MAX_PREREQS):
        need = prereqs[sell_tile, slot]
        done = np.zeros(need.shape, dtype=bool)
        if len(first_keys):
            keys = sell_person * n_tiles + need
            at = np.minimum(np.searchsorted(first_keys, keys), len(first_keys) - 1)
            done = (first_keys[at] == keys) & (built_row[at] <= sell_rows)
        missing |= (need >= 0) & ~done
    why = np.where(
        missing,
        0,
        np.where(bound == np.iinfo(np.int64).max, 1,
                 np.where(money_before[sells] < bound, 2, 3)),
    )  # fmt: skip
    spent = ev["other"][kind == EV_CORNERSTONE].astype(np.int64)
    return (
        np.concatenate([sell_tile, spent]),
        np.concatenate([why, np.full(spent.size, 4)]),
    )


def _counts(name: str, counts: np.ndarray, key: str = "tile") -> Sums:
    """A Sums of a count array over tile ids (its nonzero entries)."""
    return Sums(_sparse(counts, name, key), (key,))


def _event_arrays(chunk, columns: tuple[str, ...]):
    """A chunk's event ``columns`` as arrays, each event's game row ``g``, its kind, turn,
    player, tile and other tile (int64), the chunk's number of games, its tile tables and the
    number of tile ids its reductions count; None for a run without events."""
    events = chunk.events
    if events is None:
        return None
    ev = {c: events[c].to_numpy() for c in columns}
    g = game_rows(chunk, ev["game_id"]).astype(np.int64)
    kind, turn = ev["kind"], ev["turn"].astype(np.int64)
    player, tile = ev["player"].astype(np.int64), ev["tile"].astype(np.int64)
    other = ev["other"].astype(np.int64)
    tables = chunk.info.data()
    n_tiles = 1 + max(int(tile.max(initial=0)), int(other.max(initial=0)),
                      (tables.n_tiles - 1) if tables is not None else 0)  # fmt: skip
    return ev, g, kind, turn, player, tile, other, chunk.games.height, tables, n_tiles


_EVENT_COLUMNS = ("game_id", "turn", "player", "kind", "tile", "other")


def _reduce(chunk) -> dict:
    arrays = _event_arrays(chunk, (*_EVENT_COLUMNS, "coins"))
    if arrays is None:
        return {}
    ev, g, kind, turn, player, tile, other, n_games, tables, n_tiles = arrays
    seats = chunk.memo(seat_arrays)

    def bincount(mask, weights=None, of=tile):
        keep = mask & (of >= 0)
        w = None if weights is None else weights[keep]
        return np.bincount(of[keep], weights=w, minlength=n_tiles)

    taken = _taken(g, kind, turn, player)
    order = turn % TURNS_PER_GENERATION
    actions = pl.DataFrame(
        {
            "placed": bincount(kind == EV_PLACE),
            "sold": bincount(kind == EV_SELL),
            "for_cornerstone": bincount(kind == EV_CORNERSTONE, of=other),
            "discarded": bincount(kind == EV_DISCARD),
        }
    ).with_row_index("tile")
    selected_counts = pl.DataFrame(
        {
            "selected": bincount(taken),
            "turn_sum": bincount(taken, (order + 1).astype(np.float64)).astype(np.int64),
        }
    ).with_row_index("tile")
    in_use = lambda frame: frame.filter(  # noqa: E731
        pl.any_horizontal(pl.exclude("tile") != 0)
    ).with_columns(pl.col("tile").cast(pl.Int32))
    out = {
        "actions": Sums(in_use(actions), ("tile",)),
        "selected": Sums(in_use(selected_counts), ("tile",)),
        "games": Sums.of(chunk.games, "n_players", pl.len().alias("games")),
    }
    # Hands: each hand's 7 selections and its discard, for games of 3+ players.
    dealt = seats.n_players[g] >= MIN_PLAYERS_DEALT
    in_hand = (taken | (kind == EV_DISCARD)) & (turn >= 0) & dealt
    h_rows = np.nonzero(in_hand)[0]
    h_game = g[h_rows]
    h_turn = turn[h_rows]
    h_order = np.where(kind[h_rows] == EV_DISCARD, HAND_SIZE - 1, h_turn % TURNS_PER_GENERATION)
    gens = int((h_turn // TURNS_PER_GENERATION).max(initial=0)) + 1
    hand = (player[h_rows] - PASS_STEP * (h_turn % TURNS_PER_GENERATION)) % seats.n_players[h_game]
    slot = ((h_game * gens + h_turn // TURNS_PER_GENERATION) * MAX_SEATS + hand) * HAND_SIZE
    slot = slot + h_order
    cells = n_games * gens * MAX_SEATS * HAND_SIZE
    filled = np.bincount(slot, minlength=cells).reshape(-1, HAND_SIZE)
    complete = np.nonzero((filled == 1).all(axis=1))[0]
    grid = np.full(cells, -1, dtype=np.int64)
    grid[slot] = tile[h_rows]
    hand_tiles = grid.reshape(-1, HAND_SIZE)[complete]
    hand_game = complete // (gens * MAX_SEATS)
    hand_seat = complete % MAX_SEATS
    if len(hand_tiles):
        seen, passed = seen_and_passed(hand_tiles, n_tiles)
        out["seen"] = _counts("seen", seen)
        out["passed_for"] = Sums(_sparse(passed, "count", "tile", "instead"), ("tile", "instead"))
        dealt_pairs = unique(
            np.repeat(hand_game, HAND_SIZE) * n_tiles + hand_tiles.ravel(), n_games * n_tiles
        )
        out["dealt"] = _counts("games_dealt", np.bincount(dealt_pairs % n_tiles,
                                                          minlength=n_tiles))  # fmt: skip

    # The seats that selected, placed and passed over each tile, with their outcomes.
    key_space = n_games * MAX_SEATS * n_tiles  # (game row, seat, tile)

    def seat_tiles(mask):
        keys = unique((g[mask] * MAX_SEATS + player[mask]) * n_tiles + tile[mask], key_space)
        return keys // n_tiles, keys % n_tiles, keys

    sel_seat, sel_tile, sel_keys = seat_tiles(taken & (tile >= 0))
    placed_seat, placed_tile, _ = seat_tiles((kind == EV_PLACE) & (tile >= 0))
    groups = {"selected": (sel_seat, sel_tile), "placed": (placed_seat, placed_tile)}
    if len(hand_tiles):
        parts = []
        for turn_in_gen in range(TURNS_PER_GENERATION):
            holder = (hand_seat + PASS_STEP * turn_in_gen) % seats.n_players[hand_game]
            later = hand_tiles[:, turn_in_gen + 1 :]
            person = np.repeat(hand_game * MAX_SEATS + holder, later.shape[1])
            parts.append(person * n_tiles + later.ravel())
        passed_keys = unique(np.concatenate(parts), key_space)
        chosen = np.zeros(key_space, dtype=bool)
        chosen[sel_keys] = True
        passed_keys = passed_keys[~chosen[passed_keys]]
        groups["passed"] = (passed_keys // n_tiles, passed_keys % n_tiles)
    tile_keys = pl.DataFrame({"tile": np.arange(n_tiles, dtype=np.int32)})
    for name, (seat, item) in groups.items():
        seat, item = seat[seats.present[seat]], item[seats.present[seat]]
        groups[name] = (seat, item)
        deal = seats.deal[seat // MAX_SEATS]
        moments = ClusterMoments.from_codes(
            tile_keys, item, seats.residual[seat], deal, seats.expected[seat]
        )
        wins = np.bincount(item, weights=seats.win_share[seat], minlength=n_tiles)
        wins_frame = tile_keys.with_columns(pl.Series(f"wins_{name}", wins)).filter(
            pl.Series(np.bincount(item, minlength=n_tiles) > 0)
        )
        out[f"wins_{name}"] = Sums(wins_frame, ("tile",))
        out["effects" if name == "selected" else f"{name}_effects"] = moments
    seat, item = groups["selected"]
    out["leads"] = ClusterMoments.from_codes(
        tile_keys, item, seats.score_diff[seat], seats.deal[seat // MAX_SEATS]
    )
    names = seats.strategy_names
    pair_keys = pl.DataFrame(
        {
            "tile": np.repeat(np.arange(n_tiles, dtype=np.int32), len(names)),
            "strategy_name": list(names) * n_tiles,
        }
    )
    out["by_strategy"] = ClusterMoments.from_codes(
        pair_keys, item * len(names) + seats.strategy[seat], seats.residual[seat],
        seats.deal[seat // MAX_SEATS], seats.expected[seat],
    )  # fmt: skip
    if "passed" in groups and len(groups["passed"][0]):
        # The selector's residual minus the mean residual of the seats that passed the same
        # tile over in the same game.
        p_seat, p_item = groups["passed"]
        where = (p_seat // MAX_SEATS) * n_tiles + p_item
        total = np.bincount(where, weights=seats.residual[p_seat], minlength=n_games * n_tiles)
        count = np.bincount(where, minlength=n_games * n_tiles)
        at = (seat // MAX_SEATS) * n_tiles + item
        both = count[at] > 0
        d = seats.residual[seat[both]] - total[at[both]] / count[at[both]]
        out["contrast"] = ClusterMoments.from_codes(
            tile_keys, item[both], d, seats.deal[seat[both] // MAX_SEATS]
        )
    if tables is not None:
        boards = np.zeros(n_games * MAX_SEATS, dtype=np.int64)
        players = chunk.players
        boards[
            game_rows(chunk, players["game_id"].to_numpy()) * MAX_SEATS
            + players["seat"].to_numpy().astype(np.int64)
        ] = players["board"].fill_null(0).to_numpy()
        why_tile, why = _sale_reasons_arrays(ev, g, seats, boards, tables)
        counts = np.bincount(
            (why_tile - why_tile.min(initial=0)) * len(WHYS) + why
        ) if why_tile.size else np.zeros(0, dtype=np.int64)  # fmt: skip
        used = np.nonzero(counts)[0]
        out["reasons"] = Sums(
            pl.DataFrame(
                {
                    "tile": used // len(WHYS) + why_tile.min(initial=0),
                    "why": [WHYS[i] for i in used % len(WHYS)],
                    "count": counts[used].astype(np.int64),
                },
                schema={"tile": pl.Int64, "why": pl.Utf8, "count": pl.Int64},
            ),
            ("tile", "why"),
        )
    return out


def selected_rows(chunk) -> pl.DataFrame:
    """One row per (seat, tile it selected) of the chunk: ``game_id``, ``seat``, ``tile``,
    ``residual``, ``score_diff`` (its reduction needs EXPECTED)."""
    seats = chunk.memo(seat_arrays)
    ev = event_arrays(chunk)
    g, kind, turn, player, tile = ev.g, ev.kind, ev.turn, ev.player, ev.tile
    taken = _taken(g, kind, turn, player) & (tile >= 0)
    n_tiles = int(tile.max(initial=0)) + 1
    keys = unique((g[taken] * MAX_SEATS + player[taken]) * n_tiles + tile[taken])
    seat, item = keys // n_tiles, keys % n_tiles
    keep = seats.present[seat]
    seat, item = seat[keep], item[keep]
    return pl.DataFrame(
        {
            "game_id": chunk.games["game_id"].to_numpy()[seat // MAX_SEATS],
            "seat": seat % MAX_SEATS,
            "tile": item.astype(np.int32),
            "residual": seats.residual[seat],
            "score_diff": seats.score_diff[seat],
        }
    )


def _taken(g, kind, turn, player) -> np.ndarray:
    """Which events are tiles taken from a hand: every selection, and each Disaster selection
    not also logged as one (the same game, turn and player)."""
    selecting = kind == EV_SELECT
    turns = int(turn.max(initial=0)) + 2
    moment = (g * turns + turn + 1) * 8 + player
    disaster = (kind == EV_DISASTER_SELECT) & ~np.isin(moment, moment[selecting])
    return selecting | disaster


# Every tile's selections, placements, hands and outcomes, chunk by chunk (runs with events).
TILES = Reduction("neom.tiles", _reduce, needs=(EXPECTED,))


def _selected_sums(chunk) -> dict:
    """Of :data:`TILES`' statistics only those of the seats that selected each tile,
    ``effects`` and ``leads``, computed the same way to the bit (a test pins it): the sums a
    paired comparison's shift coefficients read, at a fraction of the whole reduction."""
    arrays = _event_arrays(chunk, _EVENT_COLUMNS)
    if arrays is None:
        return {}
    _, g, kind, turn, player, tile, _, n_games, _, n_tiles = arrays
    seats = chunk.memo(seat_arrays)
    mask = _taken(g, kind, turn, player) & (tile >= 0)
    keys = unique((g[mask] * MAX_SEATS + player[mask]) * n_tiles + tile[mask],
                  n_games * MAX_SEATS * n_tiles)  # fmt: skip
    seat, item = keys // n_tiles, keys % n_tiles
    seat, item = seat[seats.present[seat]], item[seats.present[seat]]
    tile_keys = pl.DataFrame({"tile": np.arange(n_tiles, dtype=np.int32)})
    deal = seats.deal[seat // MAX_SEATS]
    return {
        "effects": ClusterMoments.from_codes(
            tile_keys, item, seats.residual[seat], deal, seats.expected[seat]
        ),
        "leads": ClusterMoments.from_codes(tile_keys, item, seats.score_diff[seat], deal),
    }


# The selectors' effects and leads alone (neom compare's shift coefficients, for a caller that
# needs no tile table: balance's fresh checks of a cornerstone).
TILE_SUMS = Reduction("neom.tile_sums", _selected_sums, needs=(EXPECTED,))


def _largest_index(frame: pl.DataFrame | None, *columns: str) -> int:
    if frame is None or frame.height == 0:
        return -1
    return max(int(frame[c].max()) for c in columns)


def tile_table(run: Run, flagging: Flagging = DEFAULT_FLAGGING) -> pl.DataFrame | None:
    """One row per generation tile selected in the run (None without events); see
    docs/reports.md. ``effect`` (flagged) is the win share above expected of the seats that
    selected the tile, with a cluster-robust interval; ``flag`` needs at least ``flagging``'s
    ``min_n`` selecting seats and the whole interval outside its band after its correction
    across tiles. ``placed_effect`` and ``passed_effect`` are shown, not flagged."""
    if run.events is None:
        return None
    stats = value(run, TILES)
    counts = ["selected", "placed", "sold", "for_cornerstone", "discarded"]
    frame = (
        stats["selected"]
        .table()
        .join(stats["actions"].table(), on="tile", how="full", coalesce=True)
        .filter(pl.col("tile") >= 0)
        .with_columns(pl.col(counts).fill_null(0))
        .select(
            "tile",
            "selected",
            mean_or_null("turn_sum", "selected").alias("mean_turn"),
            *counts[1:],
        )
    )
    seen_rows = stats["seen"].table() if stats.get("seen") is not None else None
    for_rows = stats["passed_for"].table() if stats.get("passed_for") is not None else None
    n_tiles = 1 + max(
        int(frame["tile"].max()),
        (run.tables.n_tiles if run.tables else 0) - 1,
        _largest_index(seen_rows, "tile"),
        _largest_index(for_rows, "tile", "instead"),
    )
    seen = np.zeros(n_tiles, dtype=np.int64)
    passed = np.zeros((n_tiles, n_tiles), dtype=np.int64)
    if seen_rows is not None:
        seen = _dense(seen_rows, "seen", (n_tiles,), "tile")
    if for_rows is not None:
        passed = _dense(for_rows, "count", (n_tiles, n_tiles), "tile", "instead")
    tiles = frame["tile"].to_numpy()
    passed_rows = passed[tiles]
    top = passed_rows.argmax(axis=1)
    passed_total = passed_rows.sum(axis=1)
    dealt = (
        stats["dealt"].table()
        if stats.get("dealt") is not None
        else pl.DataFrame(schema={"tile": pl.Int32, "games_dealt": pl.Int64})
    )
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
    ).join(dealt.with_columns(pl.col("tile").cast(frame["tile"].dtype)), on="tile", how="left")
    frame = with_wilson(frame, "taken_when_seen", "seen", "taken_rate")
    frame = with_wilson(frame, "placed", "selected", "placed_rate")
    frame = with_wilson(frame, "sold", "selected", "sell_rate")

    effects = with_band_flags(stats["effects"].effect_table(), flagging)
    wins = stats["wins_selected"].table()
    frame = frame.join(effects, on="tile", how="left").join(wins, on="tile", how="left")
    frame = with_wilson(frame.with_columns(pl.col("wins_selected").fill_null(0.0)),
                        "wins_selected", "n", "win_selected")  # fmt: skip
    for name in ("placed", "passed"):
        if stats.get(f"{name}_effects") is None:
            continue
        part = (
            stats[f"{name}_effects"]
            .effect_table(name=f"{name}_effect")
            .join(stats[f"wins_{name}"].table(), on="tile")
        )
        part = with_wilson(part.rename({"n": f"{name}_seats"}), f"wins_{name}", f"{name}_seats",
                           f"win_{name}")  # fmt: skip
        keep = [f"{name}_seats", f"win_{name}", f"win_{name}_lo", f"win_{name}_hi",
                f"{name}_effect", f"{name}_effect_lo", f"{name}_effect_hi"]  # fmt: skip
        frame = frame.join(part.select("tile", *keep), on="tile", how="left")
    if stats.get("contrast") is not None:
        contrast = stats["contrast"].effect_table(name="sel_vs_passed")
        frame = frame.join(_contrast_columns(contrast), on="tile", how="left")
    frame = run.name_tiles(frame.drop("wins_selected"))
    frame = run.name_tiles(frame, "passed_over_for", "passed_over_for_name")
    first = ["tile", "tile_name", "flag", "n", "small", "effect", "effect_lo", "effect_hi"]
    return frame.select(*first, pl.exclude(first)).sort("effect", descending=True, nulls_last=True)


def by_strategy(run: Run, flagging: Flagging = DEFAULT_FLAGGING) -> pl.DataFrame | None:
    """The selected effect of every tile for each strategy on its own, flags corrected across
    all (tile, strategy) cells."""
    if run.events is None:
        return None
    table = value(run, TILES)["by_strategy"].effect_table()
    table = with_band_flags(table, flagging)
    return run.name_tiles(table).sort("tile", "strategy_name")


def _cheapest_bound(tables, tile: np.ndarray, have: np.ndarray, table_goods=None) -> np.ndarray:
    """A lower bound on what placing ``tile`` costs a seat whose city produces the goods mask
    ``have``: over the tile's requirement options, the coin cost plus, for each required good
    the city lacks, its tier's base price less the 1-coin Trade Route discount. An option
    needing a good that no city of the game produces (``table_goods``) cannot be paid at all
    (the bound is then the int64 maximum)."""
    n_options = np.maximum(tables.tiles[tile, K.C_N_REQ_OPTIONS], 1)
    tier_price = np.array(K.TIER_PRICE, dtype=np.int64)[tables.goods_tier]
    best = np.full(tile.shape, np.iinfo(np.int64).max, dtype=np.int64)
    for option in range(K.MAX_REQ_OPTIONS):
        goods = tables.req[tile, option, K.R_GOODS].astype(np.int64)
        missing = goods & ~have
        cost = tables.req[tile, option, K.R_COST].astype(np.int64)
        for good in range(len(tables.goods_tier)):
            cost += ((missing >> good) & 1) * (tier_price[good] - 1)
        if table_goods is not None:
            cost = np.where(missing & ~table_goods, np.iinfo(np.int64).max, cost)
        best = np.where(option < n_options, np.minimum(best, cost), best)
    return best


def _sale_reasons_of(events: pl.DataFrame, players: pl.DataFrame, tables) -> pl.DataFrame:
    """Per tile: how its selections that were not placed ended (sold, by reason, or spent on a
    cornerstone), read from the log:

    - prerequisite missing: the tile needs tiles the seller had not placed before the sale;
    - goods unavailable: every requirement option needs a good that no city of the game
      produced, at any time;
    - unaffordable: the seller's coins before the sale (start money plus every coin change
      before it; coins owed for goods sold that turn already count, so an upper bound) are
      below a lower bound of the tile's price: its cheapest option's coin cost plus, for each
      required good the seller's city did not produce, that good's base price less 1;
    - otherwise sold though affordable: selling paid more, or no legal square.

    The seller's city is its board's City Center plus every tile it placed before the sale
    (removals by replacement or disaster are not tracked, which can only hide a shortage:
    "unaffordable" and "prerequisite missing" stay certain up to that)."""
    all_events = events
    events = (
        events.with_row_index("row")
        .filter(pl.col("player") >= 0)
        .with_columns(pl.col("coins").cast(pl.Int64))
        .with_columns(
            (
                START_MONEY + pl.col("coins").cum_sum().over("game_id", "player") - pl.col("coins")
            ).alias("money_before")
        )
        .filter(pl.col("kind").is_in([EV_SELL, EV_PLACE, EV_CORNERSTONE]))
        .select(
            "row",
            "game_id",
            pl.col("player").cast(pl.Int64),
            "kind",
            pl.col("tile").cast(pl.Int64),
            "money_before",
        )  # fmt: skip
    )
    boards = players.select(
        "game_id", pl.col("seat").cast(pl.Int64).alias("player"), pl.col("board").cast(pl.Int64)
    )
    events = events.join(boards, on=["game_id", "player"], how="left")
    produces = tables.tiles[:, K.C_PRODUCES].astype(np.int64)
    center = tables.board_center.astype(np.int64)
    board = np.clip(events["board"].fill_null(0).to_numpy(), 0, len(center) - 1)
    tile = events["tile"].to_numpy()
    built = events["kind"].to_numpy() != EV_SELL
    gained = np.where(built, produces[np.clip(tile, 0, None)], 0)
    # Goods held before each row: the centre's plus a running OR of the tiles built before,
    # one running count per good bit (a cumulative OR).
    keys = events.select((pl.col("game_id").rank("dense") * 8 + pl.col("player")).alias("k"))[
        "k"
    ].to_numpy()
    have = produces[center[board]]
    bits = pl.DataFrame({"k": keys, **{f"b{g}": (gained >> g) & 1
                                          for g in range(len(tables.goods_tier))}})  # fmt: skip
    cumulative = bits.select(
        (pl.col(f"b{g}").cum_sum().over("k") - pl.col(f"b{g}") > 0).cast(pl.Int64) * (1 << g)
        for g in range(len(tables.goods_tier))
    )
    have = have | cumulative.to_numpy().sum(axis=1) if cumulative.width else have
    # Every good any city of the game produced at some point (centres included).
    centers = players.select("game_id", pl.col("board").cast(pl.Int64))
    center_goods = produces[center[np.clip(centers["board"].to_numpy(), 0, len(center) - 1)]]
    table_goods = (
        pl.concat(
            [
                events.select("game_id", pl.Series("g", gained)),
                centers.select("game_id", pl.Series("g", center_goods)),
            ]
        )
        .group_by("game_id")
        .agg(pl.col("g").bitwise_or().alias("table_goods"))
    )
    sells = (
        events.with_columns(pl.Series("have", have))
        .filter(pl.col("kind") == EV_SELL)
        .join(table_goods, on="game_id", how="left")
    )
    bound = _cheapest_bound(
        tables, sells["tile"].to_numpy(), sells["have"].to_numpy(), sells["table_goods"].to_numpy()
    )
    sells = sells.with_columns(pl.Series("bound", bound))
    prereqs = (
        pl.DataFrame(
            {
                "tile": np.repeat(np.arange(tables.n_tiles), K.MAX_PREREQS),
                "prereq": tables.tiles[:, K.C_PREREQ0 : K.C_PREREQ0 + K.MAX_PREREQS].ravel(),
            }
        )
        .filter(pl.col("prereq") >= 0)
        .with_columns(pl.col("tile", "prereq").cast(pl.Int64))
    )
    placed = (
        events.filter(pl.col("kind") != EV_SELL)
        .group_by("game_id", "player", "tile")
        .agg(pl.col("row").min().alias("built_row"))
        .rename({"tile": "prereq"})
    )
    missing = (
        sells.join(prereqs, on="tile")
        .join(placed, on=["game_id", "player", "prereq"], how="left")
        .group_by("row")
        .agg(
            (pl.col("built_row").is_null() | (pl.col("built_row") > pl.col("row")))
            .any()
            .alias("prereq_missing")
        )
    )
    reasons = (
        sells.join(missing, on="row", how="left")
        .with_columns(
            pl.when(pl.col("prereq_missing").fill_null(False))
            .then(pl.lit(WHY_PREREQUISITE))
            .when(pl.col("bound") == np.iinfo(np.int64).max)
            .then(pl.lit(WHY_NO_GOODS))
            .when(pl.col("money_before") < pl.col("bound"))
            .then(pl.lit(WHY_UNAFFORDABLE))
            .otherwise(pl.lit(WHY_OUTVALUED))
            .alias("why")
        )
        .select("tile", "why")
    )
    spent = all_events.filter(pl.col("kind") == EV_CORNERSTONE).select(
        pl.col("other").cast(pl.Int64).alias("tile"), pl.lit(WHY_CORNERSTONE).alias("why")
    )
    return pl.concat([reasons, spent]).group_by("tile", "why").agg(pl.len().alias("count"))


def dead_tiles(run: Run, table: pl.DataFrame | None = None) -> pl.DataFrame | None:
    """Generation tiles (Disasters left out) never placed, or placed in fewer than
    ``RARE_SHARE`` of the games, with why, from the log: never dealt at this player count;
    dealt but always passed over; selected but not placed, by the commonest ending of those
    selections (prerequisite missing, unaffordable, sold though affordable, spent on a
    cornerstone). None without events or a catalogue snapshot."""
    if run.events is None or run.tables is None:
        return None
    tables = run.tables
    stats = value(run, TILES)
    table = tile_table(run) if table is None else table
    games = stats["games"].table()
    n_games = int(games["games"].sum())
    hands_rebuilt = int(games.filter(pl.col("n_players") >= MIN_PLAYERS_DEALT)["games"].sum()) > 0
    decks = (K.DECK_GEN1, K.DECK_GEN2, K.DECK_GEN3)
    in_decks = _in_decks(run, games["n_players"].to_list())
    ids = [
        t for t in range(tables.n_tiles)
        if tables.tiles[t, K.C_DECK] in decks and tables.tiles[t, K.C_DISASTER] == K.DIS_NONE
    ]  # fmt: skip
    base = pl.DataFrame(
        {
            "tile": ids,
            "tile_name": [tables.tile_names[t] for t in ids],
            "generation": [int(tables.tiles[t, K.C_DECK]) for t in ids],
            "player_icon": [int(tables.tiles[t, K.C_PLAYERS]) for t in ids],
        }
    )
    counts = table.select(
        pl.col("tile").cast(pl.Int64), "seen", "games_dealt", "selected", "placed", "sold",
        "for_cornerstone",
    )  # fmt: skip
    frame = base.join(counts, on="tile", how="left").with_columns(
        pl.col("seen", "games_dealt", "selected", "placed", "sold", "for_cornerstone").fill_null(0)
    )
    frame = frame.filter(pl.col("placed") < RARE_SHARE * n_games)
    reasons = stats["reasons"].table() if stats.get("reasons") is not None else None
    if reasons is None:
        reasons = pl.DataFrame(schema={"tile": pl.Int64, "why": pl.Utf8, "count": pl.Int64})
    wide = {name: np.zeros(frame.height, dtype=np.int64) for name in WHYS}
    position = {t: i for i, t in enumerate(frame["tile"].to_list())}
    for tile, why, count in reasons.iter_rows():
        if tile in position:
            wide[why][position[tile]] += count
    whys = []
    for i, row in enumerate(frame.iter_rows(named=True)):
        if row["selected"] == 0:
            if row["tile"] not in in_decks:
                whys.append(
                    f"never dealt: not in the deck at this player count and variant "
                    f"(a {row['player_icon']}+ tile)"
                )
            elif hands_rebuilt and row["seen"] == 0:
                whys.append("never dealt: left in the box in every game")
            elif row["seen"] > 0:
                whys.append(f"always passed over (seen {row['seen']} times, never taken)")
            else:
                whys.append("never selected")
            continue
        counts_i = {name: int(wide[name][i]) for name in WHYS}
        total = sum(counts_i.values())
        if total == 0:
            whys.append("placed whenever selected")
            continue
        name = max(counts_i, key=counts_i.get)
        whys.append(f"{name}: {counts_i[name]} of {row['selected']} selections")
    frame = frame.with_columns(
        pl.Series("why", whys, dtype=pl.Utf8),
        *(pl.Series(f"n_{slug}", wide[name]) for name, slug in WHY_SLUGS.items()),
        (pl.col("placed") == 0).alias("dead"),
        (1000.0 * pl.col("placed") / n_games).alias("placed_per_1000_games"),
    )
    return frame.sort("placed", "selected", "tile")


def _in_decks(run: Run, counts: list[int]) -> set[int]:
    """The generation tiles in the decks at the run's player counts ``counts`` and variant
    (the engine's ``build_deck``: player-count icons, the variant's removals and substitutes)."""
    from sim.neom import engine as E
    from sim.neom.tables import make_rules

    rules_entry = run.manifest.get("rules", {})
    rules = make_rules(
        variant=int(rules_entry.get("variant", K.V_STANDARD)),
        neighborhood_through_any=bool(rules_entry.get("neighborhood_through_any", 1)),
        solo_tileset=int(rules_entry.get("solo_tileset", 1)),
    )
    tiles = run.tables.tiles
    out = np.empty(tiles.shape[0], dtype=np.int64)
    found: set[int] = set()
    for n_players in counts:
        for deck in (K.DECK_GEN1, K.DECK_GEN2, K.DECK_GEN3):
            n = E.build_deck(deck, int(n_players), tiles, rules, out)
            found.update(int(t) for t in out[:n])
    return found


def with_generation(frame: pl.DataFrame, tables, column: str = "tile") -> pl.DataFrame:
    """``generation`` (1-3; 0 for a tile of no generation deck) of each row's tile."""
    decks = {K.DECK_GEN1: 1, K.DECK_GEN2: 2, K.DECK_GEN3: 3}
    ids = frame[column].to_numpy().astype(np.int64)
    deck = tables.tiles[np.clip(ids, 0, tables.n_tiles - 1), K.C_DECK] if len(ids) else ids
    return frame.with_columns(
        pl.Series("generation", [decks.get(int(d), 0) for d in deck], dtype=pl.Int32)
    )


def with_generation_median_flags(
    frame: pl.DataFrame,
    tables,
    method: str = "bh",
    level: float = FDR_LEVEL,
    band: float = DEFAULT_BAND,
    min_n: int = DEFAULT_MIN_N,
    by: tuple[str, ...] = (),
) -> pl.DataFrame:
    """A tile table flagged as cornerstones are (``analysis.core.tabulate.with_median_flags``),
    against the median tile of its generation: selecting a tile is zero-sum within a generation too
    (a seat takes seven of each), so one dominant tile pushes every other below expected and
    its plant would move their flags; the median moves by at most one rank. ``vs_median`` is
    the effect minus the median of the tested tiles of the same generation (and of ``by``,
    such as the strategy); ``flag`` its band test, corrected across every row;
    ``flag_vs_expected`` the band test against the expected share, kept as a column."""
    with_gen = frame if "generation" in frame.columns else with_generation(frame, tables)
    flagged = with_median_flags(
        with_gen, Flagging(method, level, band, min_n), by=(*by, "generation")
    )
    return flagged.sort("vs_median", descending=True, nulls_last=True)
