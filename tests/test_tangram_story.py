"""The formats users script against (issue 17, "Interfaces (exact)"): the ``play --json``
object, the turn-by-turn log, ``score`` on a BOARD.json with one clear error line for a bad
board, and the game's own command line."""

import json

import numpy as np
import pytest
from test_tangram_support import plain_colours, plain_full, plain_rectangle

from sim.core.cli import main
from sim.core.errors import UserError
from sim.tangram import GAME
from sim.tangram import constants as K
from sim.tangram.rules import make_rules
from sim.tangram.score import score_file
from sim.tangram.story import final_boards, record_json, record_lines
from sim.tangram.tileset import DEFAULT_TILESET, load_tileset
from strategies.tangram.play import play_one

EVENT_KEYS = {
    "start_piece": {"player", "colour"},
    "card": {"tile", "tile_index", "marked", "seen_by"},
    "place": {
        "player",
        "tile",
        "tile_index",
        "orientation",
        "flipped",
        "row",
        "col",
        "colour",
        "squares",
    },
    "decline": {"player", "tile", "tile_index"},
    "fountain": {"player", "row", "col", "half"},
    "round_score": {"player", "points", "total"},
    "balance": {"player", "red", "green"},
    "start_marker": {"player"},
}
FINAL_KEYS = {
    "player",
    "rounds",
    "planning_bonus",
    "balance_bonus",
    "red",
    "green",
    "total",
    "rank",
    "win",
}


@pytest.fixture(scope="module")
def record(data):
    return play_one(data, 3, ["random", "greedy", "planner:samples=1"], 4, make_rules(), True)


def test_play_json_object(data, record):
    obj = json.loads(json.dumps(record_json(record, data)))
    assert obj["game"] == "tangram"
    assert "RECONSTRUCT" in obj["tileset"] and obj["reconstructed"] is True
    assert obj["strategies"] == ["random", "greedy", "planner:samples=1"]
    kinds = [e["kind"] for e in obj["events"]]
    assert set(kinds) >= {"card", "place", "round_score", "start_marker", "fountain"}
    for e in obj["events"]:
        assert set(e) == {"kind", "round", "turn"} | EVENT_KEYS[e["kind"]], e
    assert kinds.count("card") == K.N_CARDS
    assert [e["tile"] for e in obj["events"] if e["kind"] == "card"] == obj["deck"]
    assert len(obj["final"]) == 3
    for entry, player in zip(obj["final"], record.players, strict=True):
        assert set(entry) == FINAL_KEYS
        assert len(entry["rounds"]) == K.N_ROUNDS
        assert (
            entry["total"]
            == sum(entry["rounds"]) + entry["planning_bonus"] + entry["balance_bonus"]
        )
        assert entry["total"] == int(player["total"])
        assert isinstance(entry["win"], bool)
    scores = [e for e in obj["events"] if e["kind"] == "round_score" and e["player"] == 1]
    assert [e["points"] for e in scores] == obj["final"][1]["rounds"]
    assert scores[-1]["total"] == sum(obj["final"][1]["rounds"])


def test_final_boards_from_the_events_match_the_records(data, record):
    for board, player in zip(final_boards(record, data), record.players, strict=True):
        full = plain_full(board)
        assert len(full) == player["full_squares"]
        assert plain_rectangle(full) == player["round_6"]
        assert plain_colours(board) == (player["red"], player["green"])


def test_turn_by_turn_log(data, record):
    lines = record_lines(record, data)
    assert "RECONSTRUCT" in lines[0]
    assert any(line.startswith("--- round 6 ---") for line in lines)
    assert any("places" in line for line in lines)
    assert lines[-1].startswith("(board squares")
    assert sum(1 for line in lines if line.startswith("seat ") and "rounds" in line) == 3


def write(tmp_path, obj, name="board.json"):
    path = tmp_path / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return path


EMPTY = [["."] * 7 for _ in range(7)]


SCORE_KEYS = ("rectangle", "red", "green", "balance_bonus", "planning_bonus")


def scored(path) -> tuple:
    """The board file's score: its keys exactly SCORE_KEYS, their values in that order."""
    result = score_file(path)
    assert set(result) == set(SCORE_KEYS)
    return tuple(result[key] for key in SCORE_KEYS)


def test_score_a_board(tmp_path):
    """The issue's BOARD.json: "." empty, "R"/"G" full, two halves "a|b" of R, G, F, "."; the
    result holds rectangle, red, green, balance_bonus, planning_bonus."""
    rows = [row[:] for row in EMPTY]
    rows[0][:4] = ["R", "R|G", "G|F", "F|F"]
    rows[1][:4] = ["G", "R|F", "G", "G|."]
    assert scored(write(tmp_path, {"rows": rows})) == (6, 2, 3, 10, 0)
    full = [["R" if (r + c) % 2 else "G" for c in range(7)] for r in range(7)]
    full[0][0] = "F|F"
    assert scored(write(tmp_path, {"rows": full})) == (49, 24, 24, 20, 15)
    capped = score_file(write(tmp_path, {"rows": full}), None, make_rules(balance_cap="10"))
    assert (capped["red"], capped["green"]) == (10, 10)


@pytest.mark.parametrize(
    "content, expected",
    [
        ({"rows": EMPTY[:6]}, '"rows": 6 row(s); need 7 lists of 7 squares'),
        ({"rows": EMPTY[:6] + [["."] * 6]}, "rows[6]: 6 square(s); need 7 squares"),
        (
            {"rows": [["."] * 7] * 3 + [[".", "X"] + ["."] * 5] + [["."] * 7] * 3},
            'rows[3][1]: "X" is not a square; use',
        ),
        (
            {"rows": [["F"] + ["."] * 6] + [["."] * 7] * 6},
            'rows[0][0]: "F" is not a square (two fountains are "F|F")',
        ),
        ({"rows": [["R|G|F"] + ["."] * 6] + [["."] * 7] * 6}, 'rows[0][0]: "R|G|F" is not'),
        ({"rows": [[3] + ["."] * 6] + [["."] * 7] * 6}, "rows[0][0]: 3 is not a square"),
        ({"rows": EMPTY, "score": 3}, 'unknown key "score"; a board has only "rows"'),
        ([1, 2], 'expected an object {"rows": [7 rows]}'),
        ('{"rows": [', "not JSON (line 1, column"),
    ],
)
def test_a_bad_board_gets_one_clear_line(tmp_path, content, expected):
    path = write(tmp_path, content)
    with pytest.raises(UserError) as error:
        score_file(path)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ") and expected in message, message


def test_a_huge_board_file_is_refused(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (1 << 20))
    with pytest.raises(UserError, match="larger than 65536 bytes"):
        score_file(path)
    with pytest.raises(UserError, match="board file not found"):
        score_file(tmp_path / "none.json")


def test_command_line(tmp_path, capsys):
    out = tmp_path / "game.json"
    assert (
        main(
            [
                "play",
                "--game",
                "tangram",
                "--players",
                "2",
                "--strategies",
                "greedy,random",
                "--seed",
                "5",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "RECONSTRUCT" in text.splitlines()[0]
    assert json.loads(out.read_text())["players"] == 2
    board = write(tmp_path, {"rows": EMPTY})
    assert main(["score", "--game", "tangram", str(board)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["rectangle"] == 0
    assert "RECONSTRUCT" in captured.err
    assert main(["score", "--game", "tangram", str(write(tmp_path, {"rows": []}, "bad.json"))]) == 1
    assert capsys.readouterr().err.splitlines()[-1].startswith("neom: error: ")
    assert (
        main(["play", "--game", "tangram", "--players", "3", "--strategies", "greedy,random"]) == 1
    )
    assert "lists 2 strategies but --players is 3" in capsys.readouterr().err
    assert main(["strategies", "--game", "tangram"]) == 0
    assert "planner" in capsys.readouterr().out


def test_tileset_commands(tmp_path, capsys):
    assert main(["tileset", "validate", str(DEFAULT_TILESET)]) == 0
    assert "valid (23 tiles, 5 boards, 44.5 squares" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text('[tileset]\nname = "x"\n[[tiles]]\nname = "A"\nshape = ["# Q"]\n')
    assert main(["tileset", "validate", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f'{bad}: tile "A": field "shape": row 1, square 2: "Q" is not a square' in err
    assert f"{bad}: 1 tiles; Tangram City has exactly 23" in err
    assert main(["tileset", "template"]) == 0
    template = tmp_path / "template.toml"
    template.write_text(capsys.readouterr().out)
    assert load_tileset(template).content.n_tiles == 23
    assert main(["tileset", "show"]) == 0
    assert "Parallelogram !" in capsys.readouterr().out


def test_show_game_of_the_restructured_core(tmp_path, capsys, data):
    """main's ``neom play`` calls ``Game.play_ref`` as show_game(args, data, rules, specs) with
    the rules options by name and parsed specs."""
    from argparse import Namespace

    from analysis.tangram.play_log import show_game
    from strategies.tangram.registry import parse_strategy

    out = tmp_path / "g.json"
    args = Namespace(players=2, seed=3, json=str(out))
    rules = {o.name: o.choices[o.default] for o in GAME.rule_options}
    assert show_game(args, data, rules, [parse_strategy("greedy")] * 2) == 0
    assert "RECONSTRUCT" in capsys.readouterr().out.splitlines()[0]
    assert json.loads(out.read_text())["strategies"] == ["greedy", "greedy"]


def test_score_takes_rules_by_name(tmp_path):
    """main's ``neom score`` passes the rules options by name."""
    full = [["R"] * 7 for _ in range(7)]
    result = score_file(write(tmp_path, {"rows": full}), None, {"balance_cap": 10})
    assert (result["red"], result["green"], result["balance_bonus"]) == (10, 0, 0)


def test_play_one_record_types(record):
    assert record.players.dtype == GAME.tables["players"]
    assert record.events.dtype == GAME.tables["events"]
    assert record.game.dtype == GAME.tables["games"] and record.game.shape == ()
    assert record.game["n_events"] == record.events.shape[0]
    assert np.array_equal(record.rules, make_rules())
