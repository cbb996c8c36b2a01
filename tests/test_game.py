"""Whole games: invariants over random playouts of every player count and variant, turn
structure, determinism, and parity between compiled and interpreted (NUMBA_DISABLE_JIT=1)."""

from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest
from catalog_fixture import valid_catalog
from plain_scoring import plain_score
from run_helpers import script_games

from sim.core import rng
from sim.core.batch import STRATEGY_ID_DTYPE, play_arrays
from sim.neom import GAME
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom import records as R
from sim.neom.catalog import compile_catalog, load_catalog
from sim.neom.tables import make_rules
from strategies.neom.play import play_one
from strategies.neom.registry import parse_strategy

VARIANTS = (K.V_STANDARD, K.V_NO_DISASTERS, K.V_RANDOM_DISASTERS, K.V_BEGINNER)
PLAYED_KINDS = (R.EV_PLACE, R.EV_CORNERSTONE, R.EV_SELL, R.EV_DISASTER_SELECT)


@pytest.fixture(scope="module")
def fixture_tables():
    return compile_catalog(valid_catalog(), "catalog_fixture")


@pytest.fixture(scope="module")
def default_tables():
    return load_catalog()


def deck(tables, gen, n_players, rules):
    out = np.full(tables.n_tiles, -1, dtype=np.int64)
    n = E.build_deck(gen, n_players, tables.tiles, rules, out)
    return out[:n].tolist()


def replay(tables, result, generation_ends=None):
    """Replay a game from its events, checking every step; returns the final cities.
    ``generation_ends``: a dict filled with {generation: (cities, money)} at the end of
    generations 1 and 2 (after their income)."""
    players = result["players"]
    n = players.shape[0]
    cells = np.full((n, K.N_CELLS), K.EMPTY, dtype=np.int16)
    cells[:, K.CENTER_CELL] = tables.board_center[players[:, R.P_BOARD]]
    money = np.full(n, E.START_MONEY, dtype=np.int64)
    pending = np.zeros(n, dtype=np.int64)
    summary = np.empty(E.N_SUMMARY, dtype=np.int64)
    cornerstones = [set() for _ in range(n)]
    replaced = None
    turn = E.DRAFT_TURN
    for event in result["events"]:
        kind, p, tile, cell = (int(event[c]) for c in (R.E_KIND, R.E_PLAYER, R.E_TILE, R.E_CELL))
        if event[R.E_TURN] != turn or kind == R.EV_INCOME:
            money += pending  # coins from sales are spendable from the next turn on
            pending[:] = 0
            turn = event[R.E_TURN]
        ended = int(event[R.E_TURN]) // E.TURNS_PER_GENERATION  # generations over before it
        if generation_ends is not None and ended >= 1 and ended not in generation_ends:
            generation_ends[ended] = (cells.copy(), money.copy())
        if kind == R.EV_GOOD_SOLD:
            pending[p] += event[R.E_COINS]
        elif p >= 0:
            money[p] += event[R.E_COINS]
            assert money[p] >= 0, f"money of seat {p} negative at {event}"
        if kind in (R.EV_DRAFT_PICK, R.EV_CS_TAKEN):
            cornerstones[p].add(tile)
        elif kind == R.EV_CS_SWAPPED:
            cornerstones[p].discard(int(event[R.E_OTHER]))
            cornerstones[p].add(tile)
        elif kind in (R.EV_PLACE, R.EV_CORNERSTONE):
            city = cells[p]
            E.summarize_city(city, tables.tiles, summary)
            assert (E.placement_mask(city, tables.tiles, tile, summary) >> cell) & 1, event
            replaced = city[cell]
            city[cell] = tile
            if kind == R.EV_CORNERSTONE:
                assert tile in cornerstones[p]
                cornerstones[p].remove(tile)
            in_city = sum(tables.tiles[t, K.C_DECK] == K.DECK_CORNERSTONE for t in city if t >= 0)
            assert in_city <= event[R.E_TURN] // E.TURNS_PER_GENERATION + 1
        elif kind == R.EV_REPLACED:
            assert tile == replaced
        elif kind == R.EV_DISASTER_SACRIFICE:
            assert cells[p, cell] == tile
            cells[p, cell] = K.EMPTY
    money += pending
    assert money.tolist() == players[:, R.P_MONEY].tolist()
    return cells


def check_game(tables, result):
    players = result["players"]
    n = players.shape[0]
    rules = result["rules"]
    events = result["events"]
    assert result["game"][R.G_N_EVENTS] < R.MAX_EVENTS_PER_GAME
    ends = {}
    cells = replay(tables, result, ends)
    for s in range(n):
        money = int(players[s, R.P_MONEY])
        score = plain_score(cells[s], money, tables.tiles, tables.effects, tables.goods_tier, rules)
        got = players[s, R.P_SCORE_TILES : R.P_SCORE_TOTAL + 1].tolist()
        assert got == [score[key] for key in K.SCORE_KEYS]
        # The game-flow columns: the replayed city and purse at the end of generations 1, 2.
        for gen in (1, 2):
            city, purse = ends[gen]
            score = plain_score(
                city[s], int(purse[s]), tables.tiles, tables.effects, tables.goods_tier, rules
            )
            assert players[s, R.P_SCORE_GEN1 + gen - 1] == score["total"], (s, gen)
        goods = 0
        for t in cells[s]:
            if t >= 0:
                goods |= int(tables.tiles[t, K.C_PRODUCES])
        assert players[s, R.P_GOODS_MASK] == goods
    # Every dealt tile is accounted for exactly once: selected or discarded.
    kinds = events[:, R.E_KIND]
    for gen in (1, 2, 3):
        in_gen = events[:, R.E_TURN] // E.TURNS_PER_GENERATION == gen - 1
        seen = events[in_gen & np.isin(kinds, (R.EV_SELECT, R.EV_DISCARD)), R.E_TILE].tolist()
        struck = in_gen & (kinds == R.EV_DISASTER_SELECT) & (events[:, R.E_PLAYER] < 0)
        seen += [t for t in events[struck, R.E_TILE].tolist() if t >= 0]
        assert len(seen) == len(set(seen))
        full = deck(tables, gen, n, rules)
        assert set(seen) <= set(full)
        if n >= 3:
            assert len(seen) == len(full) == E.HAND_SIZE * n
        elif n == 2:
            assert len(seen) == E.HAND_SIZE * 2
    selected = Counter(events[kinds == R.EV_SELECT, R.E_PLAYER].tolist())
    acted = Counter(
        events[np.isin(kinds, PLAYED_KINDS) & (events[:, R.E_PLAYER] >= 0), R.E_PLAYER].tolist()
    )
    assert selected == acted and sum(selected.values()) == E.N_TURNS * n
    ranks = players[:, R.P_RANK]
    totals = players[:, R.P_SCORE_TOTAL]
    assert (players[:, R.P_WIN] == (totals == totals.max())).all()
    assert ranks.min() == 1


@pytest.mark.parametrize("n_players", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("variant", VARIANTS)
def test_random_playouts_keep_the_invariants(fixture_tables, default_tables, n_players, variant):
    """Money never negative, every placement legal when made, cornerstones <= generation,
    Good tokens = goods produced, every dealt tile accounted for once, money = 6 + logged
    changes, scores = an independent plain-Python scoring of the replayed final cities."""
    for tables in (fixture_tables, default_tables):
        for seed in range(3):
            strategies = [parse_strategy("random")] * n_players
            result = play_one(tables, n_players, strategies, seed, variant)
            check_game(tables, result)


def test_greedy_playout_keeps_the_invariants(default_tables):
    greedy = parse_strategy("greedy")
    result = play_one(default_tables, 4, [greedy, parse_strategy("random")] * 2, 5)
    check_game(default_tables, result)


def test_turn_structure(default_tables):
    """001: "The Generation ends after the 7th turn, in which you have a choice of 2 tiles in
    your hand" (the other goes back to the box); income "at the end of each Generation ...
    even at the end of the 3rd Generation". 3-5 players draft 3 cornerstones each, the 4th of
    each hand to the discard pile."""
    result = play_one(default_tables, 4, [parse_strategy("random")] * 4, 11)
    events = result["events"]
    kinds = events[:, R.E_KIND]
    discards = events[kinds == R.EV_DISCARD]
    assert sorted(Counter(discards[:, R.E_TURN].tolist()).items()) == [(6, 4), (13, 4), (20, 4)]
    assert set(events[kinds == R.EV_INCOME, R.E_TURN].tolist()) <= {6, 13, 20}
    hand_sizes = events[kinds == R.EV_SELECT, R.E_OTHER]
    assert sorted(Counter(hand_sizes.tolist()).items()) == [(k, 12) for k in range(2, 9)]
    drafted = result["players"][:, R.P_CS_DRAFTED0 : R.P_CS_DRAFTED2 + 1]
    pile = result["game"][R.G_DISCARDED_CS0 : R.G_DISCARDED_CS4 + 1]
    assert (drafted >= 0).all() and (pile[:4] >= 0).all() and pile[4] == -1
    assert len(set(drafted.ravel().tolist()) | set(pile[:4].tolist())) == 16


def test_beginner_deals_one_cornerstone(default_tables):
    """000: beginner variant: "skip the Preliminary Round and distribute one random Cornerstone
    tile to each player"."""
    result = play_one(default_tables, 3, [parse_strategy("random")] * 3, 4, K.V_BEGINNER)
    drafted = result["players"][:, R.P_CS_DRAFTED0 : R.P_CS_DRAFTED2 + 1]
    assert (drafted[:, 0] >= 0).all() and (drafted[:, 1:] == -1).all()


def test_disaster_strikes_only_when_selected(default_tables):
    """001: "If no player selects the Disaster in a given Generation, it will not happen";
    the selector is spared; the others resolve it at the end of that turn."""
    for seed in range(12):
        result = play_one(default_tables, 4, [parse_strategy("random")] * 4, seed)
        events = result["events"]
        chosen = events[events[:, R.E_KIND] == R.EV_DISASTER_SELECT]
        mask = result["game"][R.G_DISASTERS_MASK]
        assert mask == sum(1 << (turn // E.TURNS_PER_GENERATION) for turn in chosen[:, R.E_TURN])
        for pick in chosen:
            hit = events[
                np.isin(events[:, R.E_KIND], (R.EV_DISASTER_PAY, R.EV_DISASTER_SACRIFICE))
                & (events[:, R.E_TURN] == pick[R.E_TURN])
            ]
            assert pick[R.E_PLAYER] not in hit[:, R.E_PLAYER]


def batch(tables, seat_strategy, specs, game_ids, deal_indices, events=False, variant=0):
    out = play_arrays(
        GAME,
        rng.master_key(2026),
        game_ids,
        deal_indices,
        seat_strategy,
        [s.id for s in specs],
        np.stack([s.params for s in specs]),
        tables.arrays,
        make_rules(variant),
        events,
    )
    return out.games, out.players, out.events


def test_results_do_not_depend_on_the_batch(default_tables):
    """A game's results depend only on (key, game id, deal index, its seats' strategies)."""
    specs = [parse_strategy("random"), parse_strategy("greedy")]
    seats = np.zeros((6, 4), dtype=np.int32)
    seats[3] = (0, 1, 0, 0)
    games, players, _ = batch(default_tables, seats, specs, range(6), range(6))
    alone_g, alone_p, _ = batch(default_tables, seats[3:4], specs, [3], [3])
    assert (games[3] == alone_g[0]).all() and (players[3] == alone_p[0]).all()
    again_g, again_p, _ = batch(default_tables, seats, specs, range(6), range(6))
    assert (games == again_g).all() and (players == again_p).all()


def test_generation_scores_come_with_the_event_log_and_change_no_play(default_tables):
    """score_gen1/score_gen2 are recorded with the event log only (SCORE_NOT_RECORDED
    without it), and
    recording them changes nothing else (the replay in check_game checks their values)."""
    specs = [parse_strategy("random"), parse_strategy("greedy")]
    seats = np.array([[0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 1, 1]], dtype=np.int32)
    games, players, _ = batch(default_tables, seats, specs, range(3), range(3))
    games_e, players_e, _ = batch(default_tables, seats, specs, range(3), range(3), events=True)
    gen_columns = [R.P_SCORE_GEN1, R.P_SCORE_GEN1 + 1]
    rest = [c for c in range(R.N_PLAYER_COLS) if c not in gen_columns]
    same_games = [c for c in range(R.N_GAME_COLS) if c != R.G_N_EVENTS]
    assert (games[:, same_games] == games_e[:, same_games]).all()
    assert (players[..., rest] == players_e[..., rest]).all()
    assert (players[:, :4, gen_columns] == R.SCORE_NOT_RECORDED).all()
    assert (players_e[:, :4, gen_columns] != R.SCORE_NOT_RECORDED).all()


def test_changing_a_strategy_keeps_the_deal(default_tables):
    """Changing seat 2's strategy never changes the tiles dealt: all chance is drawn at setup
    from the deal stream, so boards, draft hands, generation hands and random-disaster turns
    stay; seats whose own hands are untouched by seat 2's choices choose the same."""
    specs = [parse_strategy("random"), parse_strategy("greedy")]
    seats = np.array([[0, 0, 0, 0], [0, 0, 1, 0]], dtype=np.int32)
    variant = K.V_RANDOM_DISASTERS
    games, players, events = batch(default_tables, seats, specs, [7, 7], [7, 7], True, variant)
    assert (players[0, :, R.P_BOARD] == players[1, :, R.P_BOARD]).all()
    blocks = [events[r * R.MAX_EVENTS_PER_GAME :][: games[r, R.G_N_EVENTS]] for r in (0, 1)]

    def picks(block, kind, turn):
        rows = block[(block[:, R.E_KIND] == kind) & (block[:, R.E_TURN] == turn)]
        return {int(r[R.E_PLAYER]): int(r[R.E_TILE]) for r in rows if r[R.E_OTHER] in (0, 8)}

    first_draft = [picks(b, R.EV_DRAFT_PICK, E.DRAFT_TURN) for b in blocks]
    first_select = [picks(b, R.EV_SELECT, 0) for b in blocks]
    for seat in (0, 1, 3):
        assert first_draft[0][seat] == first_draft[1][seat]
        assert first_select[0][seat] == first_select[1][seat]

    def dealt_cornerstones(row, block):
        drafted = block[block[:, R.E_KIND] == R.EV_DRAFT_PICK, R.E_TILE].tolist()
        pile = games[row, R.G_DISCARDED_CS0 : R.G_DISCARDED_CS4 + 1]
        return sorted(drafted + pile[pile >= 0].tolist())

    assert dealt_cornerstones(0, blocks[0]) == dealt_cornerstones(1, blocks[1])

    def struck(block):
        rows = block[(block[:, R.E_KIND] == R.EV_DISASTER_SELECT) & (block[:, R.E_PLAYER] < 0)]
        return rows[:, R.E_TURN].tolist()

    assert struck(blocks[0]) == struck(blocks[1]) and len(struck(blocks[0])) == 3


PARITY_SCRIPT = """
import json, sys, numpy as np
sys.path.insert(0, {tests!r})
from sim.neom.catalog import load_catalog
from strategies.neom.play import play_one
from strategies.neom.registry import parse_strategy
tables = load_catalog()
out = []
for n_players, names, seed, variant in json.loads(sys.argv[1]):
    specs = [parse_strategy(name) for name in names]
    r = play_one(tables, n_players, specs, seed, variant)
    out.append([r["game"].tolist(), r["players"].tolist(), r["events"].tolist()])
print(json.dumps(out))
"""

PARITY_GAMES = [
    (4, ["random"] * 4, 1, K.V_STANDARD),
    (5, ["random"] * 5, 2, K.V_RANDOM_DISASTERS),
    (1, ["random"], 3, K.V_STANDARD),
    (2, ["random", "random"], 4, K.V_NO_DISASTERS),
    (3, ["greedy", "random", "random"], 5, K.V_STANDARD),
]


def run_games(jit):
    return script_games(PARITY_SCRIPT, PARITY_GAMES, jit)


def test_parity_compiled_and_interpreted():
    """The same games give identical records compiled and with NUMBA_DISABLE_JIT=1."""
    assert run_games(jit=True) == run_games(jit=False)


# An exception raised in one of the loop's steps (C functions called by address) would be
# printed and lost ("Exception ignored"): the loop raises it instead (play.raise_refused).
@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_strategy_choosing_a_missing_option_is_reported(default_tables, monkeypatch):
    """A strategy id no compiled family plays is refused before any game; a family answering
    -1 (asked for a strategy it does not play) makes the game raise, never play it: from its
    first decision, the draft (a step of the loop called by address)."""
    from strategies.neom import pieces
    from strategies.neom.registry import GREEDY_ID

    unknown = SimpleNamespace(id=99, params=parse_strategy("random").params)
    seats = np.array([[0, 1, 1]], dtype=np.int32)
    with pytest.raises(ValueError, match="no compiled NEOM strategy has the id 99"):
        batch(default_tables, seats, [unknown, parse_strategy("random")], [0], [0])
    lineup = [parse_strategy("greedy"), parse_strategy("random")]
    batch(default_tables, seats, lineup, [0], [0])
    monkeypatch.setitem(pieces.FAMILY_OF, GREEDY_ID, "basic")  # miser's family: answers -1
    with pytest.raises(ValueError, match="does not exist"):
        batch(default_tables, seats, lineup, [0], [0])


def test_every_caller_passes_strategy_ids_in_one_dtype(monkeypatch, tmp_path):
    """play_batch compiles once per dtype of its arguments: the runner, the benchmark, the
    matches and ``play_one`` must all pass strategy ids as STRATEGY_ID_DTYPE, or a machine
    compiles it twice."""
    from sim.core import runner
    from sim.tools import bench
    from strategies.neom import entries
    from strategies.tools import arena

    seen = []

    def record(*args):
        seen.append(args[4].dtype)

    # Every caller takes its lineup's entry from strategies.neom.entries.play_batch_for through
    # the Game interface (resolved per call): the runner, play_one, the benchmark and the
    # matches (sim.core.match, which arena wraps).
    monkeypatch.setattr(entries, "play_batch_for", lambda strategy_ids: record)
    tables = load_catalog()
    bench.run_games(tables, "greedy", 0, 1)
    arena.play_match(tables, [parse_strategy("random")], [0, 0], 1, seed=1)
    config = runner.RunConfig(out=tmp_path / "run", strategies=("random",) * 4, games=4)
    plan = runner.make_plan(config)[0]
    runner.play_games(plan, plan.game_ids(0))
    play_one(tables, 2, [parse_strategy("random")] * 2, seed=1)
    assert seen == [STRATEGY_ID_DTYPE] * 4
