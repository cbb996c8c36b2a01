"""The engine's speed paths give the same answers as the plain ones: placement_mask's cache of
chains traced without one cell, the scratch-array action listing, the cornerstone actions
listed alone, in-place hand passing, and the random streams wrapping silently when
interpreted."""

import os
import subprocess
import sys

import numpy as np

from sim.core import rng
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom import records as R
from sim.neom.grid import city_goods
from strategies.neom.play import final_cities, play_one
from strategies.neom.registry import parse_strategy


def cities_along_games(tables, n_games=6):
    """Every city state met during a few random 4-player games (after each tile laid)."""
    cities = []
    for seed in range(n_games):
        result = play_one(tables, 4, [parse_strategy("random")] * 4, seed)
        cells = final_cities(tables, {**result, "events": result["events"][:0]})
        for event in result["events"]:
            kind = event[R.E_KIND]
            if kind in (R.EV_PLACE, R.EV_CORNERSTONE):
                cells[event[R.E_PLAYER], event[R.E_CELL]] = event[R.E_TILE]
                cities.append(cells.copy())
            elif kind == R.EV_DISASTER_SACRIFICE:
                cells[event[R.E_PLAYER], event[R.E_CELL]] = K.EMPTY
    return cities


def test_chain_traced_without_a_cell_matches_a_search_of_the_city_without_it(tables):
    summary = np.empty(E.N_SUMMARY, dtype=np.int64)
    checked = 0
    # Four games: on the v3 catalogue two random games gave only 78 cells to check.
    for cells in cities_along_games(tables, 4):
        city = cells[0]
        E.summarize_city(city, tables.tiles, summary)
        for cell in range(K.N_CELLS):
            if cell == K.CENTER_CELL or city[cell] == K.EMPTY:
                continue
            without = city.copy()
            without[cell] = K.EMPTY
            expected = E.connected_cells(without, tables.tiles)
            assert E.flood_from_center(summary, 1 << cell) == expected
            checked += 1
    assert checked > 100


def test_a_summary_patched_square_by_square_matches_a_fresh_one(tables):
    """The game loop patches a seat's summary after each placement and sacrifice
    (``update_summary``): along games, through replacements and removals, it stays the
    summary of the city as it is."""
    patched = np.empty((4, E.N_SUMMARY), dtype=np.int64)
    fresh = np.empty(E.N_SUMMARY, dtype=np.int64)
    previous = None
    changes = replaced = removed = 0
    for cells in cities_along_games(tables, 3):
        if previous is None or (previous != cells).sum() != 1:
            for seat in range(4):  # a new game: summarized whole
                E.summarize_city(cells[seat], tables.tiles, patched[seat])
        else:
            seat, cell = (int(i[0]) for i in np.nonzero(previous != cells))
            old, new = int(previous[seat, cell]), int(cells[seat, cell])
            E.update_summary(patched[seat], cell, old, new, cells[seat], tables.tiles)
            changes += 1
            replaced += old != K.EMPTY and new != K.EMPTY
            # A sacrifice of the tile just placed: patched away, the summary of the city
            # without it.
            without = cells[seat].copy()
            without[cell] = K.EMPTY
            lost = patched[seat].copy()
            E.update_summary(lost, cell, new, K.EMPTY, without, tables.tiles)
            E.summarize_city(without, tables.tiles, fresh)
            assert (lost[: E.SM_FLOOD_KNOWN] == fresh[: E.SM_FLOOD_KNOWN]).all()
            removed += 1
        for seat in range(4):
            E.summarize_city(cells[seat], tables.tiles, fresh)
            assert (patched[seat, : E.SM_FLOOD_KNOWN] == fresh[: E.SM_FLOOD_KNOWN]).all()
        previous = cells
    assert changes > 100 and replaced > 0 and removed > 100
    # A stale summary stays stale (summarized whole when next read).
    E.mark_stale(fresh)
    E.update_summary(fresh, 0, K.EMPTY, int(previous[0, K.CENTER_CELL]), previous[0], tables.tiles)
    assert fresh[E.SM_OCCUPIED] == -1


def test_placement_masks_sharing_one_summary_match_fresh_summaries(tables):
    shared = np.empty(E.N_SUMMARY, dtype=np.int64)
    fresh = np.empty(E.N_SUMMARY, dtype=np.int64)
    candidates = [t for t in range(tables.n_tiles) if tables.tiles[t, K.C_DECK] != K.DECK_CENTER]
    legal = 0
    for cells in cities_along_games(tables, 3):
        for seat in range(cells.shape[0]):
            city = cells[seat]
            E.summarize_city(city, tables.tiles, shared)  # its cache fills up tile after tile
            for tile in candidates:
                E.summarize_city(city, tables.tiles, fresh)
                mask = E.placement_mask(city, tables.tiles, tile, shared)
                assert mask == E.placement_mask(city, tables.tiles, tile, fresh)
                legal += bin(mask).count("1")
    assert legal > 0


def test_action_listing_with_kept_summaries_matches_a_fresh_listing(tables):
    summary = np.empty(E.N_SUMMARY, dtype=np.int64)
    req_costs = np.empty(K.MAX_REQ_OPTIONS, dtype=np.int64)
    listed = np.zeros((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
    expected = np.zeros_like(listed)
    pstate = np.zeros((4, E.N_PSTATE), dtype=np.int64)
    pstate[:, E.PS_MONEY] = 9
    pstate[:, E.PS_N_CS] = 2
    cornerstones = tables.deck(K.DECK_CORNERSTONE)
    cs_hands = np.full((4, E.MAX_CS_HAND), -1, dtype=np.int64)
    cs_hands[:, :2] = cornerstones[[1, 4]]
    generation_tiles = tables.deck(K.DECK_GEN2)
    n_places = 0
    for k, cells in enumerate(cities_along_games(tables, 2)):
        seat = k % 4
        tile = int(generation_tiles[k % len(generation_tiles)])
        goods_of = np.array([city_goods(cells[s], tables.tiles) for s in range(4)])
        args = (seat, tile, 2, cells, pstate, cs_hands, goods_of, 4, tables.tiles, tables.req)
        n_expected = E.action_options(*args, tables.goods_tier, expected)
        E.mark_stale(summary)  # the previous city's summary and chains must not leak in
        for _ in range(2):  # again with the summary kept, as on a turn the city is unchanged
            E.refresh_summary(cells[seat], tables.tiles, summary)
            n = E.fill_action_options(*args, tables.goods_tier, listed, summary, req_costs)
            assert n == n_expected
            assert (listed[:n] == expected[:n]).all()
        n_places += n - 1
    assert n_places > 0


def test_cornerstone_options_are_the_cornerstone_rows_of_the_full_listing(tables):
    """Strategies list a seat's cornerstone placements alone (``cornerstone_options``): the
    same rows, in the same order, as the cornerstone actions of ``action_options``, at and
    below the limit of one cornerstone per generation."""
    summary = np.empty(E.N_SUMMARY, dtype=np.int64)
    expected = np.zeros((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
    pstate = np.zeros((4, E.N_PSTATE), dtype=np.int64)
    pstate[:, E.PS_MONEY] = 12
    pstate[:, E.PS_N_CS] = 3
    cornerstones = tables.deck(K.DECK_CORNERSTONE)
    cs_hands = np.full((4, E.MAX_CS_HAND), -1, dtype=np.int64)
    generation_tiles = tables.deck(K.DECK_GEN1)
    listed = {"below": 0, "at": 0}
    for k, cells in enumerate(cities_along_games(tables, 2)):
        seat = k % 4
        gen = 1 + k % 3
        cs_hands[seat, :3] = cornerstones[[k % 10, 10 + k % 10, 20 + k % 10]]
        tile = int(generation_tiles[k % len(generation_tiles)])
        goods_of = np.array([city_goods(cells[s], tables.tiles) for s in range(4)])
        args = (seat, tile, gen, cells, pstate, cs_hands, goods_of, 4, tables.tiles, tables.req)
        n_all = E.action_options(*args, tables.goods_tier, expected)
        rows = expected[:n_all][expected[:n_all, E.OPT_KIND] == E.A_CORNERSTONE]
        E.summarize_city(cells[seat], tables.tiles, summary)
        routes = E.trade_routes(cells[seat], tables.tiles)
        options, n = E.cornerstone_options(
            seat, gen, cells[seat], pstate, cs_hands, goods_of, routes, 4,
            tables.tiles, tables.req, tables.goods_tier, summary,
        )  # fmt: skip
        assert n == len(rows)
        assert (options[:n] == rows).all()
        at_limit = bin(summary[E.SM_CORNERSTONES]).count("1") >= gen
        listed["at" if at_limit else "below"] += n
    assert listed["below"] > 0 and listed["at"] > 0


def test_pass_left_moves_each_hand_to_the_next_seat():
    hands = np.array([[1, 2, -1], [3, -1, -1], [4, 5, 6]], dtype=np.int64)
    pstate = np.zeros((3, E.N_PSTATE), dtype=np.int64)
    pstate[:, E.PS_HAND_SIZE] = [2, 1, 3]
    E.pass_left(hands, pstate, 3)
    assert hands.tolist() == [[4, 5, 6], [1, 2, -1], [3, -1, -1]]
    assert pstate[:, E.PS_HAND_SIZE].tolist() == [3, 2, 1]


STREAM_SCRIPT = """
import numpy as np
from sim.core import rng
state = np.array([0xFFFFFFFFFFFFFFF0, 0xFFFFFFFFFFFFFF00], dtype=np.uint64)
draws = [int(rng.next_u64(state)) for _ in range(5)]
seeds = [int(rng.stream_seed(rng.master_key(7), d, 3)) for d in (0, 2**62)]
print(draws + seeds)
"""


def test_random_streams_wrap_silently_and_identically_when_interpreted():
    """uint64 overflow is the design: no RuntimeWarning without the JIT, same numbers."""

    def run(disable_jit):
        env = dict(os.environ, NUMBA_DISABLE_JIT="1" if disable_jit else "0")
        done = subprocess.run(
            [sys.executable, "-W", "error::RuntimeWarning", "-c", STREAM_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    state = np.array([0xFFFFFFFFFFFFFFF0, 0xFFFFFFFFFFFFFF00], dtype=np.uint64)
    first = int(rng.next_u64(state))
    assert first == (0xFFFFFFFFFFFFFFF0 + 0xFFFFFFFFFFFFFF00) % 2**64
    interpreted, compiled = run(True), run(False)  # a fresh process each (not three)
    assert interpreted == compiled
    assert compiled.startswith(f"[{first},")
