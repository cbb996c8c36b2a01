"""``neom play``: the turn-by-turn story, the JSON events file, and clear errors."""

import json

import pytest

from sim.core.cli import main
from sim.neom import constants as K


def play(capsys, *args):
    code = main(["play", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_story_and_json(tmp_path, capsys):
    out_file = tmp_path / "game.json"
    code, out, err = play(
        capsys, "--players", "4", "--strategies", "random", "--seed", "3", "--json", str(out_file)
    )
    assert code == 0, err
    lines = out.splitlines()
    assert "RECONSTRUCTED" in lines[0] and "NEOM default" in lines[0]
    assert "Preliminary round: cornerstone draft" in out
    assert "Generation 3, turn 7" in out
    assert "Final cities" in out and "Scores" in out
    data = json.loads(out_file.read_text())
    assert data["reconstructed"] is True and data["players"] == 4
    money = {p: 6 for p in range(4)}
    for event in data["events"]:
        if "coins_delta" in event:
            money[event["player"]] += event["coins_delta"]
        if event["kind"] == "buy":
            assert {"buyer", "seller", "good", "price"} <= set(event)
            assert event["price"] == -event["coins_delta"]
    for final in data["final"]:
        assert final["money"] == money[final["player"]]
        assert list(final["score"]) == list(K.SCORE_KEYS)
        assert sum(final["score"][key] for key in K.SCORE_KEYS[:-1]) == final["score"]["total"]
        assert len(final["city"]) == 5 and all(len(row) == 5 for row in final["city"])


def test_solo_game_with_parameters(capsys):
    code, out, err = play(
        capsys,
        "--players",
        "1",
        "--strategies",
        "greedy:money_weight=2",
        "--variant",
        "random-disasters",
        "--solo-tileset",
        "5",
    )
    assert code == 0, err
    assert "seat 0: greedy:money_weight=2" in out
    assert "strikes every player" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--players", "6", "--strategies", "random"], "--players 6: must be between 1 and 5"),
        (
            ["--players", "3", "--strategies", "random,greedy"],
            "lists 2 strategies but --players is 3",
        ),
        (["--players", "3", "--strategies", "clever"], "unknown strategy 'clever'"),
        (
            ["--players", "3", "--strategies", "random", "--variant", "x"],
            "--variant 'x': expected one of standard, no-disasters",
        ),
        (["--players", "3", "--strategies", "greedy:speed=1"], "bad parameter 'speed=1'"),
    ],
)
def test_user_errors(capsys, args, message):
    code, out, err = play(capsys, *args)
    assert code == 1
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_solo_tileset_must_be_an_icon(capsys):
    code, out, err = play(capsys, "--players", "1", "--strategies", "random", "--solo-tileset", "3")
    assert code == 1
    assert err.strip() == "neom: error: --solo-tileset '3': expected one of 1, 4, 5"


def test_strategies_take_parameters_after_commas_and_named_sets(tmp_path, capsys):
    """The same spec syntax as ``neom simulate``: ``greedy:money_weight=2,random`` is two
    seats, and a strategy file's sets are usable by name."""
    sets = tmp_path / "mine.toml"
    sets.write_text('[sets.thrifty]\nbase = "greedy"\nmoney_weight = 3\n', encoding="utf-8")
    code, out, err = play(
        capsys,
        "--players",
        "3",
        "--strategies",
        "greedy:money_weight=2,random,thrifty",
        "--strategy-file",
        str(sets),
    )
    assert code == 0, err
    assert "seat 0: greedy:money_weight=2," in out
    assert "seat 1: random," in out
    assert "seat 2: thrifty (greedy:money_weight=3)," in out


def test_neighborhoods_reading_is_played_and_recorded(tmp_path, capsys):
    """RULES.md S3: with --neighborhoods residential the game scores Neighborhoods whose road
    chains pass through Residential tiles only, and says so."""
    out_file = tmp_path / "game.json"
    code, out, err = play(
        capsys,
        "--players",
        "2",
        "--strategies",
        "greedy",
        "--neighborhoods",
        "residential",
        "--json",
        str(out_file),
    )
    assert code == 0, err
    assert "Neighborhoods: road chains through Residential tiles only" in out
    data = json.loads(out_file.read_text())
    assert data["rules"]["neighborhood_through_any"] == 0
