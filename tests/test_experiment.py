"""Interventions (force/ban rules options) and ``neom experiment``."""

import json

import numpy as np
import polars as pl
import pytest
from catalog_fixture import tile, to_toml, valid_catalog
from run_helpers import neom_setup, placeholder_figures

from sim.core import rng
from sim.core.batch import play_arrays
from sim.core.cli import main
from sim.neom import GAME
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom import records as R
from sim.neom.tables import make_rules
from strategies.neom.registry import parse_strategy

N_GAMES = 40


@pytest.fixture(autouse=True)
def no_rendering(monkeypatch):
    """The reports here are checked by their files, tables and text, not their images."""
    placeholder_figures(monkeypatch)


def play(tables, n_players, rules, n_games=N_GAMES, seed=5):
    """Players table of ``n_games`` random-strategy games (game ids 0..n-1)."""
    spec = parse_strategy("random")
    ids = np.arange(n_games, dtype=np.int64)
    seats = np.zeros((n_games, n_players), dtype=np.int32)
    key = rng.master_key(seed)
    out = play_arrays(
        GAME, key, ids, ids, seats, [spec.id], [spec.params], tables.arrays, rules, False
    )
    return out.games, out.players[:, :n_players]


def dealt_cornerstones(games, players):
    """Per game, the set of cornerstones dealt in the draft (drafted or left over)."""
    drafted = players[:, :, R.P_CS_DRAFTED0 : R.P_CS_DRAFTED2 + 1].reshape(len(games), -1)
    left = games[:, R.G_DISCARDED_CS0 : R.G_DISCARDED_CS4 + 1]
    return [set(np.concatenate([d, l]).tolist()) - {-1} for d, l in zip(drafted, left, strict=True)]


def test_force_cornerstone_puts_it_in_the_seats_hand_and_moves_nothing_else(tables):
    """Intervention RO_FORCE_TILE: after the deal the tile is swapped into the chosen seat's
    draft hand (beginner variant: the one cornerstone dealt to each player), exchanging places
    with a tile of that hand; everything else of the deal stays identical."""
    cs = int(tables.deck(K.DECK_CORNERSTONE)[3])
    _, base = play(tables, 4, make_rules(K.V_BEGINNER))
    _, forced = play(tables, 4, make_rules(K.V_BEGINNER, force_tile=cs, force_seat=2))
    before, after = base[:, :, R.P_CS_DRAFTED0], forced[:, :, R.P_CS_DRAFTED0]
    assert (after[:, 2] == cs).all()
    for b, a in zip(before, after, strict=True):
        # Seat 2's old tile went where the forced one was: to another seat, or to the box.
        others = [s for s in range(4) if s != 2]
        assert all(a[s] == b[s] or (b[s] == cs and a[s] == b[2]) for s in others)


def test_ban_cornerstone_is_never_dealt_and_swaps_one_tile(tables):
    """Intervention RO_BAN_TILE: the cornerstone, if dealt, is exchanged for an unused one from
    the box; a game that never dealt it keeps its whole deal."""
    cs = int(tables.deck(K.DECK_CORNERSTONE)[0])
    base = dealt_cornerstones(*play(tables, 4, make_rules()))
    banned = dealt_cornerstones(*play(tables, 4, make_rules(ban_tile=cs)))
    assert any(cs in b for b in base)
    for b, a in zip(base, banned, strict=True):
        assert cs not in a and len(a) == len(b) == 4 * E.DRAFT_HAND
        assert len(b - a) == (1 if cs in b else 0)


def deal(tables, n_players, rules, seed=3):
    """The cornerstone box and generation decks as ``play_game`` deals them."""
    return neom_setup(tables, n_players, rules, seed)[1:]


@pytest.mark.parametrize("n_players", [1, 4])
def test_forced_cornerstone_is_the_seats_first_pick_in_every_game(tables, n_players):
    """Known answer (issue 19): ``--mode force`` gives the seat the cornerstone for certain. The
    deal puts it in the seat's first draft hand (solo: the first stack) and the seat keeps it as
    its first pick, so the players table shows it drafted first by that seat in 100% of games,
    by no other seat."""
    cs = int(tables.deck(K.DECK_CORNERSTONE)[5])
    seat = n_players - 1
    _, players = play(tables, n_players, make_rules(force_tile=cs, force_seat=seat))
    drafted = players[:, :, R.P_CS_DRAFTED0 : R.P_CS_DRAFTED2 + 1]
    assert (drafted[:, seat, 0] == cs).all()
    others = [s for s in range(n_players) if s != seat]
    assert not (drafted[:, others] == cs).any()


def test_forced_generation_tile_is_the_seats_first_selection_in_every_game(tables):
    """Known answer (issue 19): a forced generation tile is in the seat's hand of its
    generation and the seat selects it on the generation's first turn, in 100% of games (the
    events); what it then does with it (place, or sell) stays its choice."""
    gen2 = tables.deck(K.DECK_GEN2)
    target = int(gen2[(tables.tiles[gen2, K.C_PLAYERS] == 1)
                      & (tables.tiles[gen2, K.C_DISASTER] == K.DIS_NONE)][4])  # fmt: skip
    spec = parse_strategy("greedy")
    ids = np.arange(N_GAMES, dtype=np.int64)
    seats = np.zeros((N_GAMES, 4), dtype=np.int32)
    rules = make_rules(force_tile=target, force_seat=2)
    out = play_arrays(GAME, rng.master_key(9), ids, ids, seats, [spec.id], [spec.params],
                      tables.arrays, rules, True)  # fmt: skip
    per_game = GAME.events_per_game
    first_turn = E.TURNS_PER_GENERATION  # generation 2's first turn
    for i in range(N_GAMES):
        events = out.events[i * per_game : i * per_game + out.games[i, R.G_N_EVENTS]]
        selects = events[(events[:, R.E_KIND] == R.EV_SELECT) & (events[:, R.E_TILE] == target)]
        assert selects[:, [R.E_PLAYER, R.E_TURN]].tolist() == [[2, first_turn]]


@pytest.mark.parametrize("seed", range(6))
def test_generation_tile_force_and_ban_change_only_that_tiles_place(tables, seed):
    """Force: the tile is swapped into the seat's hand of its generation (8 tiles each, seat by
    seat), exchanging places with one tile of that hand. Ban: a dealt banned tile is exchanged
    for an unused tile of its deck (left undealt, or a 5+ tile with 4 players)."""
    gen2 = tables.deck(K.DECK_GEN2)
    target = int(gen2[tables.tiles[gen2, K.C_PLAYERS] == 1][5])
    cs0, base, sizes = deal(tables, 4, make_rules(), seed)
    cs1, forced, _ = deal(tables, 4, make_rules(force_tile=target, force_seat=1), seed)
    cs2, banned, _ = deal(tables, 4, make_rules(ban_tile=target), seed)
    assert (cs0 == cs1).all() and (cs0 == cs2).all()
    assert (base[[0, 2]] == forced[[0, 2]]).all() and (base[[0, 2]] == banned[[0, 2]]).all()
    n = sizes[1]
    assert target in forced[1, 8:16]
    moved = np.flatnonzero(base[1, :n] != forced[1, :n])
    assert moved.size in (0, 2)
    if moved.size:
        assert set(forced[1, moved]) == set(base[1, moved])
    dealt = 4 * E.HAND_SIZE
    assert target not in banned[1, :dealt]
    moved = np.flatnonzero(base[1, :dealt] != banned[1, :dealt])
    assert moved.size == (1 if target in base[1, :dealt] else 0)
    if moved.size:
        assert base[1, moved[0]] == target
        new = banned[1, moved[0]]
        assert new in base[1, dealt:n] or tables.tiles[new, K.C_PLAYERS] == 5


def experiment(tmp_path, *args):
    return main(["experiment", *args, "--workers", "1", "--out", str(tmp_path / "exp")])


def test_paired_result_matches_an_independent_computation(tmp_path, capsys):
    """experiment.json's seat row is the mean paired difference, same game and seat, with a
    Student-t interval whose standard error is cluster-robust over deals (the two seat
    rotations of a deal are one cluster)."""
    code = experiment(
        tmp_path, "cornerstone", "Merchant Union", "--players", "2", "--games", "30",
        "--strategies", "random,greedy", "--seat", "1", "--json", str(tmp_path / "f.json"),
    )  # fmt: skip
    assert code == 0
    assert "| seat 1 | 30 |" in capsys.readouterr().out
    result = json.loads((tmp_path / "exp" / "experiment.json").read_text())
    assert (tmp_path / "exp" / "experiment.md").is_file()
    assert [r["subject"] for r in result["rows"]] == [
        "seat 0", "seat 1", "holders (intervention)", "others (not seat 1)", "table (every seat)",
    ]  # fmt: skip
    assert [r["subject"] for r in result["presence"]] == ["seat 0", "seat 1", "any seat"]
    frames = [
        pl.read_parquet(tmp_path / "exp" / run / "players" / "*.parquet")
        .filter(pl.col("seat") == 1)
        .sort("game_id")
        for run in ("baseline", "intervention")
    ]
    row = result["rows"][1]
    from scipy.stats import t

    for key, column in (("win_share", "win_share"), ("score", "total")):
        diff = (frames[1][column].cast(pl.Float64) - frames[0][column].cast(pl.Float64)).to_numpy()
        deal = frames[0]["game_id"].to_numpy() // 2
        sums = np.bincount(deal, weights=diff - diff.mean())
        g = np.unique(deal).size
        se = np.sqrt(g / (g - 1) * (sums**2).sum()) / diff.size
        half = t.ppf(0.975, g - 1) * se
        assert row[f"{key}_diff"] == pytest.approx(diff.mean())
        assert row[f"{key}_lo"] == pytest.approx(diff.mean() - half)
        assert row[f"{key}_hi"] == pytest.approx(diff.mean() + half)
    findings = json.loads((tmp_path / "f.json").read_text())
    assert {"kind", "name", "metric", "effect", "lo", "hi", "n", "flag"} <= set(findings[0])
    assert findings[0]["name"] == "Merchant Union" and findings[0]["kind"] == "cornerstone"


def test_a_strong_cornerstone_forced_shows_a_significant_gain(tmp_path):
    """A cornerstone made worth +40 VP, forced on seat 0 (its first draft pick), raises seat
    0's score and win share significantly; seat 0 holds it in every game of the intervention
    run, and the output says how force gives it."""
    data = valid_catalog()
    tile(data, "Tower 1")["vp"] = 43
    path = tmp_path / "strong.toml"
    path.write_text(to_toml(data), encoding="utf-8")
    code = experiment(
        tmp_path, "cornerstone", "Tower 1", "--players", "3", "--games", "60", "--catalog",
        str(path), "--strategies", "greedy,greedy,greedy", "--seat", "0",
    )  # fmt: skip
    assert code == 0
    result = json.loads((tmp_path / "exp" / "experiment.json").read_text())
    row = result["rows"][0]
    assert row["score_lo"] > 0 and row["win_share_lo"] > 0
    seat0 = next(r for r in result["presence"] if r["subject"] == "seat 0")
    assert seat0["held_intervention"] == 1.0
    assert "first draft pick" in (tmp_path / "exp" / "experiment.md").read_text()


def test_ban_reports_every_seat_and_the_baseline_drafters(tmp_path):
    code = experiment(
        tmp_path, "cornerstone", "Merchant Union", "--players", "2", "--games", "20",
        "--strategies", "random,random", "--mode", "ban",
    )  # fmt: skip
    assert code == 0
    rows = json.loads((tmp_path / "exp" / "experiment.json").read_text())["rows"]
    assert [r["subject"] for r in rows] == [
        "seat 0", "seat 1", "baseline holders", "others (not baseline holders)",
        "table (every seat)",
    ]  # fmt: skip
    # Win shares of a game sum to 1 in both runs: the seats' changes cancel out.
    assert rows[0]["win_share_diff"] == pytest.approx(-rows[1]["win_share_diff"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["cornerstone", "Merchant Unoin"], "no cornerstone named 'Merchant Unoin'"),
        (["cornerstone", "Merchant Unoin"], "did you mean 'Merchant Union'"),
        (["tile", "Merchant Union"], "no generation tile named 'Merchant Union'"),
        (["cornerstone", "Merchant Union", "--seat", "4"], "--seat 4: must be between 0 and 3"),
        (
            ["tile", "Gen1 House 5-1", "--players", "4"],
            "'Gen1 House 5-1' is not in the Generation 1 deck with 4 players",
        ),
        (
            ["tile", "Sawmill", "--players", "5", "--mode", "ban"],
            "cannot ban a generation tile with 5 players: the deck is dealt out exactly",
        ),
        (["tile", "Sawmill", "--players", "1"], "generation tile experiments need 2 to 5 players"),
    ],
)
def test_bad_experiments_are_one_line_errors_before_any_run(tmp_path, capsys, args, message):
    path = tmp_path / "fixture.toml"
    path.write_text(to_toml(valid_catalog()), encoding="utf-8")
    players = [] if "--players" in args else ["--players", "4"]
    n = int(args[args.index("--players") + 1]) if "--players" in args else 4
    strategies = ["--strategies", ",".join(["random"] * n)]
    assert experiment(tmp_path, *args, *players, *strategies, "--catalog", str(path)) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "exp").exists()


def test_experiment_out_refuses_a_folder_it_did_not_write(tmp_path, capsys):
    """Issue 21 item 8: --out wrote into any non-empty folder. Issue 25: a folder is the
    experiment's only if its listing (neom-listing.json) says so; --resume exists now."""
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "notes.txt").write_text("mine")
    args = ["cornerstone", "Merchant Union", "--players", "2", "--games", "4",
            "--strategies", "random,random"]  # fmt: skip
    assert experiment(tmp_path, *args, "--overwrite") == 1
    err = capsys.readouterr().err
    assert "not written by neom experiment (no neom-listing.json)" in err
    assert "--resume" not in err and err.count("\n") == 1
    (tmp_path / "exp" / "notes.txt").unlink()
    assert experiment(tmp_path, *args) == 0
    capsys.readouterr()
    assert experiment(tmp_path, *args) == 1
    assert "pass --overwrite to replace it" in capsys.readouterr().err
    assert experiment(tmp_path, *args, "--overwrite") == 0
