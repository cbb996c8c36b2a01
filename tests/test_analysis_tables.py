"""Analysis tables: a hand-built run with known answers, synthetic runs with known truths, and
run-folder validation."""

import json
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from analysis.core import seats, strategies
from analysis.core.load import open_run
from analysis.neom import cornerstones, scores, tiles
from analysis.neom.load import SCORE_COLUMNS
from analysis.neom.synthetic import write_run
from analysis.neom.usage import usage_table
from sim.core.batch import BatchOutput
from sim.core.errors import UserError
from sim.core.store import RunFolder, encode_batch, file_entry
from sim.neom import GAME
from sim.neom import records as R
from sim.neom.catalog import load_catalog


def _tiny_run(path, swapped=False, never_drafted=None):
    """Two 3-player games. Game 0: totals 50/40/50 (seats 0 and 2 share the win); game 1:
    totals 30/60/20. Seat 0 plays strategy A, seats 1-2 strategy B. Seat 0 of game 0 drafted
    cornerstones 3 (placed in generation 1) and 4 (never placed); game 1 left 3 over. With
    ``swapped``, seat 1 of game 0 drafted cornerstone 5 and swapped it away unplaced; with
    ``never_drafted``, game 1 also left that cornerstone over (dealt, drafted by nobody)."""
    games = np.full((2, R.N_GAME_COLS), -1, dtype=np.int64)
    players = np.full((2, R.MAX_PLAYERS, R.N_PLAYER_COLS), -1, dtype=np.int64)
    players[:, :3] = 0
    players[:, :3, R.P_CS_DRAFTED0 : R.P_CS_DRAFTED2 + 1] = -1
    for g, totals in enumerate(([50, 40, 50], [30, 60, 20])):
        totals = np.array(totals)
        ranks = 1 + (totals[None, :] > totals[:, None]).sum(axis=1)
        games[g, [R.G_GAME_ID, R.G_N_PLAYERS, R.G_N_WINNERS, R.G_DISASTERS_MASK]] = [
            g, 3, (ranks == 1).sum(), 0b101 if g == 0 else 0]  # fmt: skip
        games[g, R.G_N_EVENTS] = 0
        players[g, :3, R.P_SEAT] = [0, 1, 2]
        players[g, :3, R.P_STRATEGY] = [0, 1, 1]
        players[g, :3, R.P_SCORE_TILES] = totals
        players[g, :3, R.P_SCORE_TOTAL] = totals
        players[g, :3, R.P_RANK] = ranks
        players[g, :3, R.P_WIN] = ranks == 1
    players[0, 0, [R.P_CS_DRAFTED0, R.P_CS_DRAFTED1, R.P_CS_GEN0]] = [3, 4, 1]
    players[0, 1, [R.P_DISASTERS_PAID, R.P_DISASTER_COINS]] = [1, 6]
    players[0, 2, [R.P_DISASTERS_SACRIFICED, R.P_DISASTER_TILES_LOST]] = [1, 2]
    games[1, R.G_DISCARDED_CS0] = 3
    if never_drafted is not None:
        games[1, R.G_DISCARDED_CS0 + 1] = never_drafted
    if swapped:
        players[0, 1, [R.P_CS_DRAFTED0, R.P_CS_GEN0]] = [5, R.CS_SWAPPED_AWAY]
    folder = RunFolder(path)
    path.mkdir()
    for table in ("games", "players"):
        (path / table).mkdir()
    folder.write_batch(0, encode_batch(GAME, BatchOutput(games, players, None), ["A", "B"]))
    folder.write_manifest({
        "game": "neom", "rules_version": GAME.rules_version,
        "data": {"name": "tiny", "reconstructed": False}, "rules": {},
        "players": 3, "games": 2, "seed": 0, "seats": "fixed", "events": False,
        "strategies": [{"name": "A"}, {"name": "B"}], "status": "complete",
    })  # fmt: skip
    return open_run(path)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return _tiny_run(tmp_path_factory.mktemp("tiny") / "run")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    path = tmp_path_factory.mktemp("synthetic") / "run"
    write_run(path, n_games=1500, strategies={"strong": 0.4, "plain": 0.0}, boosts={7: 1.0})
    return open_run(path)


def test_win_shares_with_ties(tiny):
    """A shared win counts 1/2 to each winner ("enjoy your shared victory")."""
    shares = strategies.win_shares(tiny)
    by_name = {r["strategy_name"]: r for r in shares.iter_rows(named=True)}
    assert by_name["A"]["share"] == pytest.approx(0.25) and by_name["A"]["n"] == 2
    assert by_name["B"]["share"] == pytest.approx(0.375) and by_name["B"]["n"] == 4
    assert by_name["A"]["fair"] == pytest.approx(1 / 3)
    assert by_name["A"]["share_lo"] < 0.25 < by_name["A"]["share_hi"]


def test_head_to_head_counts_ties_as_half(tiny):
    pairs = strategies.head_to_head(tiny)
    a_vs_b = pairs.filter(pl.col("a") == "A").row(0, named=True)
    # Game 0: A beats one B and ties the other (0.75); game 1: A loses one, beats one (0.5).
    assert a_vs_b["share"] == pytest.approx(0.625)
    assert a_vs_b["pairs"] == 4 and a_vs_b["pair_wins"] == pytest.approx(2.5)
    assert a_vs_b["score_diff"] == pytest.approx(((10 + 0) / 2 + (-30 + 10) / 2) / 2)
    b_vs_a = pairs.filter(pl.col("a") == "B").row(0, named=True)
    assert b_vs_a["share"] == pytest.approx(1 - a_vs_b["share"])


def test_seat_shares_and_balance(tiny):
    shares = seats.seat_shares(tiny)["share"].to_list()
    assert shares == pytest.approx([0.25, 0.5, 0.25])
    balance = seats.balance(tiny, n_boot=50).row(0, named=True)
    assert balance["balance"] == pytest.approx(0.75)
    # Two games cannot show that a seat matters: no best or worst seat is named.
    assert balance["df"] == 2 and not balance["significant"]
    assert balance["best_seat"] is None and balance["worst_seat"] is None


def test_cornerstone_counts(tiny):
    table = cornerstones.cornerstone_table(tiny)
    row = {r["tile"]: r for r in table.iter_rows(named=True)}
    assert set(row) == {3, 4}
    three = row[3]
    assert (three["drafted"], three["placed"], three["placed_gen1"], three["left_in_draft"]) == (
        1, 1, 1, 1)  # fmt: skip
    assert three["kept"] == pytest.approx(0.5)
    assert three["win_placed"] == pytest.approx(0.5)
    assert three["drafted_rate"] == pytest.approx(0.5)
    # Owner scored 50 against the others' mean of 45.
    assert three["score_diff"] == pytest.approx(5.0)
    assert row[4]["placed"] == 0 and row[4]["win_unplaced"] == pytest.approx(0.5)
    assert "mean_pick" not in table.columns  # no event log


def test_a_cornerstone_dealt_but_never_drafted_has_its_row_kept_at_zero(tmp_path):
    """Issue 38 item 1: an item below a floor is flagged "with its row always present, even at
    0 drafts". Cornerstone 7 is left over in game 1 and drafted by nobody: its row is there
    with drafted 0, left over once, kept 0%, and the usage table counts it offered once and
    kept 0% (below the kept floor once offered often enough to test). A 20,000-game archetype
    run dealt Modular Factory 10,704 times, drafted it 0 times, and left it out of both."""
    run = _tiny_run(tmp_path / "run", never_drafted=7)
    table = cornerstones.cornerstone_table(run)
    row = {r["tile"]: r for r in table.iter_rows(named=True)}
    assert set(row) == {3, 4, 7}
    seven = row[7]
    assert (seven["drafted"], seven["placed"], seven["left_in_draft"]) == (0, 0, 1)
    assert seven["kept"] == 0.0
    usage = usage_table(load_catalog(None), table)
    used = usage.filter(pl.col("tile") == 7).row(0, named=True)
    assert (used["offered"], used["kept"], used["kept_rate"]) == (1, 0, 0.0)
    assert used["below_floor"] == ""  # one offer: too few to test
    # The same row offered 100 times and never drafted is below the kept floor.
    many = table.with_columns(
        pl.when(pl.col("tile") == 7).then(100).otherwise(pl.col("left_in_draft"))
        .alias("left_in_draft")
    )  # fmt: skip
    used = usage_table(load_catalog(None), many).filter(pl.col("tile") == 7).row(0, named=True)
    assert (used["offered"], used["kept_rate"], used["below_floor"]) == (100, 0.0, "kept")


def test_a_swapped_away_cornerstone_is_not_counted_unplaced(tmp_path):
    """Rules 000/003 Beginner's Variant: "If you choose to do so, the 1st Generation Contract
    Office ... allows you to swap your unplaced Cornerstone tile for another random one". A
    drafted cornerstone swapped away (cs_gen = CS_SWAPPED_AWAY) left the hand: it stays drafted
    (the draft is what the effect measures) but is neither placed nor "drafted, unplaced"."""
    table = cornerstones.cornerstone_table(_tiny_run(tmp_path / "run", swapped=True))
    row = {r["tile"]: r for r in table.iter_rows(named=True)}
    five = row[5]
    assert (five["drafted"], five["placed"], five["unplaced"], five["swapped"]) == (1, 0, 0, 1)
    assert five["win_unplaced"] is None or five["win_unplaced"] != five["win_unplaced"]
    assert (row[4]["unplaced"], row[4]["swapped"]) == (1, 0)


def test_disaster_tables(tiny):
    summary = (
        scores.disaster_summary(tiny).filter(pl.col("strategy_name") == "B").row(0, named=True)
    )
    assert (summary["paid"], summary["sacrificed"]) == (1, 1)
    assert summary["coins_per_payment"] == 6.0 and summary["tiles_per_sacrifice"] == 2.0
    frequency = scores.disaster_frequency(tiny).row(0, named=True)
    assert (frequency["gen1"], frequency["gen2"], frequency["gen3"]) == (0.5, 0.0, 0.5)


def test_score_breakdown_adds_up(synthetic):
    summary = scores.score_summary(synthetic)
    parts = summary.select(SCORE_COLUMNS[:-1]).sum_horizontal()
    assert parts.to_numpy() == pytest.approx(summary["total"].to_numpy())
    assert (summary["total_p10"] <= summary["total_p50"]).all()


def test_synthetic_truths_are_found(synthetic):
    shares = strategies.win_shares(synthetic)
    best = shares.sort("share", descending=True)["strategy_name"][0]
    assert best == "strong"
    games = synthetic.games.select(pl.len()).collect().item()
    assert (shares["share"] * shares["n"]).sum() == pytest.approx(games)
    rating = strategies.ratings(synthetic)
    assert rating["strategy_name"][0] == "strong" and rating["rating"][0] > 0
    table = cornerstones.cornerstone_table(synthetic)
    flagged = table.filter(pl.col("flag") == "strong")["tile"].to_list()
    assert flagged == [7]


def test_hands_are_rebuilt_from_the_log(synthetic):
    """Each hand of 8 goes round the table: 7 tiles taken, the last discarded."""
    hand_tiles = tiles.hands(synthetic)
    assert hand_tiles.shape == (1500 * 4 * 3, tiles.HAND_SIZE)
    assert all(len(set(h)) == tiles.HAND_SIZE for h in hand_tiles[:200])
    seen, passed = tiles.seen_and_passed(hand_tiles, int(hand_tiles.max()) + 1)
    assert seen.sum() == hand_tiles.shape[0] * sum(range(2, 9))
    taken = np.bincount(hand_tiles[:, :-1].ravel(), minlength=seen.size)
    assert (seen == taken + passed.sum(axis=1)).all()


def test_tile_table(synthetic):
    table = tiles.tile_table(synthetic)
    assert table.height > 0
    selected = synthetic.events.filter(pl.col("kind") == R.EV_SELECT).select(pl.len()).collect()
    assert table["selected"].sum() == selected.item()
    row = table.row(0, named=True)
    assert row["seen"] >= row["selected"] and 0 <= row["taken_rate"] <= 1


def _relist(run: Path, file: Path) -> None:
    """Record ``file``'s present content in the run's listing (as if the run had written it)."""
    manifest = json.loads((run / "manifest.json").read_text())
    rel = file.relative_to(run).as_posix()
    manifest["files"][rel] = file_entry(file.read_bytes(), parquet=True)
    (run / "manifest.json").write_text(json.dumps(manifest))


def test_open_run_rejects_bad_folders(tmp_path, synthetic):
    with pytest.raises(UserError, match="no such run folder"):
        open_run(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="manifest"):
        open_run(tmp_path / "empty")
    broken = tmp_path / "broken"
    shutil.copytree(synthetic.path, broken)
    manifest = json.loads((broken / "manifest.json").read_text())
    del manifest["strategies"]
    (broken / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(UserError, match="missing key.*strategies"):
        open_run(broken)
    short = tmp_path / "short"
    shutil.copytree(synthetic.path, short)
    players = next((short / "players").glob("*.parquet"))
    pl.read_parquet(players).drop("win_share").write_parquet(players)
    _relist(short, players)  # the file as listed: what is checked is its columns
    with pytest.raises(UserError, match=r"players: missing column\(s\) win_share"):
        open_run(short)
    for file in (short / "games").glob("*.parquet"):
        file.unlink()
    with pytest.raises(UserError, match="games"):
        open_run(short)
