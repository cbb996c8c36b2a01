"""``neom experiment --game tangram`` (issue 40, part 3): a City Tile forced on a seat or banned
(TANGRAM_RULES.md X3). The rules first, on games played in the compiled engine and checked
from their events alone; then the paired experiment on a planted dominant tile (the Small
Triangle made a 3x3 block, as in tests/test_tangram_findings.py) and its one-line refusals."""

import json

import numpy as np
import polars as pl
import pytest
from test_tangram_findings import PLANTED_TILE, dominant_tileset
from test_tangram_support import Replay, run_batch

from analysis.core.experiment import paired_rows
from sim.core.cli import main
from sim.tangram import constants as K
from sim.tangram import geometry as G
from sim.tangram import records as R
from sim.tangram.rules import make_rules, rules_as_dict

BANNED = 5  # the Fan
FORCED = 20  # the House: 3 squares, often declined by random seats late in a game
STRATEGIES = ("random", "greedy", "planner:samples=2,candidates=2")


def play(data, n_players, games, rules=None, strategies=STRATEGIES, seed=3):
    """``games`` games of ``n_players`` seats cycling over ``strategies``."""
    seats = [[(g + s) % len(strategies) for s in range(n_players)] for g in range(games)]
    return run_batch(data, strategies, seats, np.arange(games), seed=seed, rules=rules)


@pytest.mark.parametrize("n_players", [1, 2, 3, 4, 5])
def test_a_banned_tile_never_enters_play(data, n_players):
    """Reading X3, ban: the card is taken out of the shuffled deck before the deal. No event of
    any game names the tile; the other 22 cards come in the baseline's order, so the regular
    rounds keep their 4 cards and the final round plays 2; every seat places or declines each
    of the 22; the replayed boards and scores agree with the log."""
    base = play(data, n_players, 12)
    banned = play(data, n_players, 12, make_rules(ban_tile=BANNED))
    replay = Replay(data.content)
    for g in range(12):
        events = banned[2][g]
        assert not (events["tile"] == BANNED).any()
        cards = [int(banned[0][g][f"card_{p}"]) for p in range(K.N_CARDS)]
        order = [int(base[0][g][f"card_{p}"]) for p in range(K.N_CARDS)]
        assert cards == [t for t in order if t != BANNED] + [K.NO_TILE]
        shown = events[events["kind"] == R.EV_CARD]
        assert shown["tile"].tolist() == cards[:-1]
        assert (shown["round"] == K.N_ROUNDS).sum() == 2
        for s in range(n_players):
            mine = events[events["player"] == s]
            decided = mine[np.isin(mine["kind"], [R.EV_PLACE, R.EV_DECLINE])]
            assert sorted(decided["tile"].tolist()) == sorted(cards[:-1])
        replay.check(banned[0][g], banned[1][g][:n_players], events)


def fits(images, board: set, tile: int) -> bool:
    """Plain check: some orientation and offset of ``tile`` lies on the board over no built
    quarter."""
    for orientation in range(8):
        cells = images[(tile, orientation)]
        for dr in range(-K.SIZE, K.SIZE):
            for dc in range(-K.SIZE, K.SIZE):
                moved = [(r + dr, c + dc, q) for r, c, q in cells]
                if all(0 <= r < K.SIZE and 0 <= c < K.SIZE for r, c, _ in moved) and not any(
                    cell in board for cell in moved
                ):
                    return True
    return False


def built_before(data, players, events, seat: int, row: int) -> set:
    """The quarters of ``seat``'s board built before event ``row``, from the events alone."""
    board = set(data.content.boards[int(players[seat]["board"])].start)
    for e in events[:row]:
        if int(e["player"]) != seat:
            continue
        if e["kind"] == R.EV_PLACE:
            shape = G.oriented(data.content.shapes[int(e["tile"])], int(e["orientation"]))
            board |= {(r + int(e["row"]), c + int(e["col"]), q) for r, c, q in shape}
        elif e["kind"] == R.EV_FOUNTAIN:
            nibble = K.HALVES[K.HALF_NAMES[int(e["orientation"])]]
            board |= {(int(e["row"]), int(e["col"]), q) for q in range(4) if nibble >> q & 1}
    return board


@pytest.mark.parametrize("seat", [0, 2])
def test_a_forced_tile_is_placed_whenever_it_fits(data, seat):
    """Reading X3, force: the forced seat declines the tile only when no placement of it fits
    its board (checked by a plain scan of the board rebuilt from the events); the other seats
    and the baseline are free, and the baseline's seat does decline it in some game where it
    fitted (so the check can fail)."""
    images = {
        (t, o): sorted(G.oriented(shape, o))
        for t, shape in enumerate(data.content.shapes)
        for o in range(8)
    }
    games = 40

    def declines(tables, who):
        out = []  # (game, fitted)
        for g in range(games):
            events = tables[2][g]
            for row in np.flatnonzero(
                (events["kind"] == R.EV_DECLINE)
                & (events["tile"] == FORCED)
                & (events["player"] == who)
            ):
                board = built_before(data, tables[1][g], events, who, row)
                out.append((g, fits(images, board, FORCED)))
        return out

    base = play(data, 4, games, strategies=("random",), seed=11)
    forced = play(data, 4, games, make_rules(force_tile=FORCED, force_seat=seat), ("random",), 11)
    assert any(fitted for _, fitted in declines(base, seat))
    assert not any(fitted for _, fitted in declines(forced, seat))

    def placed(tables, who):
        return sum(
            ((e["kind"] == R.EV_PLACE) & (e["tile"] == FORCED) & (e["player"] == who)).sum()
            for e in tables[2]
        )

    assert placed(forced, seat) > placed(base, seat)
    assert placed(forced, seat) + len(declines(forced, seat)) == games


def test_no_intervention_is_the_default_and_the_manifest_records_only_a_set_one():
    assert rules_as_dict(make_rules()).keys().isdisjoint({"force_tile", "force_seat", "ban_tile"})
    entry = rules_as_dict(make_rules(force_tile=3, force_seat=1))
    assert (entry["force_tile"], entry["force_seat"]) == (3, 1) and "ban_tile" not in entry
    assert np.array_equal(make_rules(**entry), make_rules(force_tile=3, force_seat=1))


# --- the paired experiment ----------------------------------------------------------------------

FIELD = ("--players", "4", "--strategies", "greedy,greedy,greedy,random", "--workers", "1")
GAMES = 160  # 40 deals, each played once per seat rotation


def experiment(folder, *args):
    return main(["experiment", "tile", *args, "--game", "tangram", *FIELD, "--out", str(folder)])


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """The force and ban experiments of the planted 3x3 Small Triangle on seat 3."""
    folder = tmp_path_factory.mktemp("planted")
    tileset = folder / "dominant.toml"
    dominant_tileset(tileset)
    common = ("--tileset", str(tileset), "--games", str(GAMES), "--seat", "3")
    for mode in ("force", "ban"):
        assert experiment(folder / mode, PLANTED_TILE, *common, "--mode", mode) == 0
    return folder


def result(folder, mode) -> dict:
    return json.loads((folder / mode / "experiment.json").read_text())


def test_a_planted_strong_tile_is_worth_more_forced_than_banned(planted):
    """Same deals: seat 3 forced to place the 3x3 block scores more than when the block is
    banned, paired game for game, with an interval above 0; the ban takes the tile out
    of every game (no seat places it) and lowers the table's score."""
    seat3 = []
    for mode in ("force", "ban"):
        frame = pl.read_parquet(planted / mode / "intervention" / "players" / "*.parquet")
        deal = pl.col("game_id") // 4  # the seat rotations of a deal are one cluster
        seat3.append(frame.select("game_id", "seat", "win_share", "total", deal=deal))
    row = paired_rows(seat3[1], seat3[0], [("seat 3", pl.col("seat") == 3)])[0]
    assert row["n"] == GAMES and row["score_lo"] > 0, row
    ban = result(planted, "ban")
    anyone = next(r for r in ban["presence"] if r["subject"] == "any seat")
    # The block fits only while a 3x3 hole is left: measured, some seat placed it in 49% of games.
    assert anyone["placed_baseline"] > 0.3 and anyone["placed_intervention"] == 0.0
    table = next(r for r in ban["rows"] if r["subject"] == "table (every seat)")
    assert table["score_hi"] < 0
    force = result(planted, "force")
    seat = next(r for r in force["presence"] if r["subject"] == "seat 3")
    assert seat["placed_intervention"] >= seat["placed_baseline"]
    assert force["rules"]["planning_bonus"] == 15 and force["name"] == PLANTED_TILE
    manifest = json.loads((planted / "force" / "intervention" / "manifest.json").read_text())
    assert (manifest["rules"]["force_tile"], manifest["rules"]["force_seat"]) == (0, 3)
    text = (planted / "force" / "experiment.md").read_text()
    assert "may not decline the tile while it has a legal placement" in text
    assert "Δ score (points) [95% CI]" in text  # Tangram City's score unit (Game.score_unit)


def test_a_complete_experiment_resumes_without_playing(planted, capsys):
    tileset = planted / "dominant.toml"
    common = ("--tileset", str(tileset), "--games", str(GAMES), "--seat", "3", "--mode", "ban")
    assert experiment(planted / "ban", PLANTED_TILE, *common, "--resume") == 0
    assert "already complete" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (["Smal Triangle"], "no City Tile named 'Smal Triangle'"),
        (["Smal Triangle"], "did you mean 'Small Triangle'"),
        (["Square", "--mode", "swap"], "--mode 'swap': expected force or ban"),
        (["Square", "--seat", "4"], "--seat 4: must be between 0 and 3"),
        (["Square", "--rules", "planning_bonus=x"], "--rules 'planning_bonus=x'"),
        (["Square", "--variant", "beginner"], "--variant is not an option of --game tangram"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(tmp_path, capsys, args, message):
    assert experiment(tmp_path / "exp", *args) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "exp").exists()


def test_the_banned_run_s_tile_rows_have_no_empty_position(planted):
    """The report's tile tables read the deck's card columns: the banned run's empty last
    position (-1) is left out, not counted as a tile (negative indexing named it the last one),
    and the banned tile has no row; each seat has 22 rows a game."""
    from analysis.core.load import open_run
    from analysis.tangram.tables import tile_rows

    rows = tile_rows(open_run(planted / "ban" / "intervention"))
    assert rows["tile"].min() >= 0 and 0 not in rows["tile"].to_list()  # 0: the Small Triangle
    assert rows.height == GAMES * 4 * (K.N_CARDS - 1)
