"""Hostile input files, round two (issue 25): no traceback from any input. A whole number longer
than Python converts is one line in every reader; the wrong kind of file is named in one line; a
byte-order mark is accepted (UTF-8) or named (UTF-16/32); tile sets get the catalogue's name
checks, a mutual ``similar_to``, an area check before the witness search, and ``simulate
--tileset`` repeats the validator's warnings; an impossible Tangram board is refused."""

import json
import tomllib

import pytest
from catalog_fixture import to_toml
from run_helpers import one_line_error

from sim.core.cli import main
from sim.neom.catalog import DEFAULT_CATALOG
from sim.tangram.tileset import DEFAULT_TILESET, TileSet, validate

HUGE = "1" * 5000  # Python refuses to convert more than 4,300 digits (a ValueError)
EMPTY_BOARD = [["."] * 7 for _ in range(7)]


def write(tmp_path, name: str, text: str | bytes):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def default_tileset() -> dict:
    return tomllib.loads(DEFAULT_TILESET.read_text(encoding="utf-8"))


def tileset_toml(data: dict) -> str:
    return to_toml(data)


def validator_error(capsys, code: int, path, *words: str) -> None:
    """``neom catalog validate``'s own format: each problem on a line, then the count."""
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert code == 1 and len(lines) == 2, err
    assert lines[1] == f"{path}: invalid (1 problem)", err
    assert lines[0].startswith(f"{path}: ") and all(word in lines[0] for word in words), err


STRATEGY_FILE = '[sets.mine]\nbase = "builder"\ndeny = 0.5\n'


# --- integers beyond Python's conversion limit ---------------------------------------------------


@pytest.mark.parametrize(
    "command, name, text",
    [
        (["score", "--game", "tangram"], "board.json", '{"rows": ' + HUGE + "}"),
        (["score"], "city.json", '{"money": ' + HUGE + "}"),
        (["score"], "city.json", '{"cells": [{"row": -' + HUGE + ', "col": 0, "tile": "x"}]}'),
        (["tileset", "validate"], "set.toml", '[tileset]\nname = "x"\n[[tiles]]\nname = ' + HUGE),
        (["catalog", "validate"], "cat.toml", '[catalog]\nname = "x"\nbig = ' + HUGE + "\n"),
        (["catalog", "validate"], "cat.toml", '[catalog]\nname = "x"\nbig = 1_' + HUGE + "\n"),
        (["strategies", "--strategy-file"], "s.toml", '[sets.a]\nbase = "greedy"\nvp = ' + HUGE),
    ],
)
def test_a_whole_number_of_5000_digits_is_one_line(tmp_path, capsys, command, name, text):
    path = write(tmp_path, name, text)
    code = main([*command, str(path)])
    if command == ["catalog", "validate"]:
        validator_error(capsys, code, path, "digits (line 3)")
    else:
        one_line_error(capsys, code, str(path), "digits")


HEX = "0x" + "f" * 5000  # parses (base 16 has no conversion limit); 6,021 digits in decimal
HEX_WORDS = ("a hexadecimal number of 5,000 digits (line ", "0xffffffffffffffffffff...")
TILE = '[tileset]\nname = "x"\n[[tiles]]\nshape = '


@pytest.mark.parametrize(
    "command, name, text, words",
    [
        (["strategies", "--strategy-file"], "s.toml", STRATEGY_FILE + "vp = " + HEX, HEX_WORDS),
        (["catalog", "validate"], "c.toml", "[catalog]\n[[tiles]]\nvp = " + HEX, HEX_WORDS),
        (["tileset", "validate"], "t.toml", TILE + HEX, HEX_WORDS),
        (["tileset", "validate"], "t.toml", TILE + "0xf_" + HEX[2:], ("5,001 digits", "0xf_fff")),
        (["tileset", "validate"], "t.toml", TILE + "0o" + "7" * 5000, ("an octal number of",)),
        (["catalog", "validate"], "c.toml", "[catalog]\nvp = 0b" + "1" * 15000, ("a binary",)),
    ],
)
def test_a_long_number_in_any_base_is_one_line(tmp_path, capsys, command, name, text, words):
    """Issue 35 J2: the long-number check counted decimal digits only; a hexadecimal number
    parsed, then a message showing it raised Python's conversion limit (a traceback). Every
    base is counted; the message shows the number's first digits, not all of them."""
    path = write(tmp_path, name, text)
    code = main([*command, str(path)])
    if command == ["catalog", "validate"]:
        validator_error(capsys, code, path, *words)
    else:
        err = one_line_error(capsys, code, str(path), *words)
        assert len(err) < 300, err  # the value is cut, never printed whole


def test_a_long_number_is_shown_cut_in_a_message():
    """The one place a value read from a user's file is shown (sim.core.fields.describe): a
    long whole number is cut to its first digits (beyond Python's 4,300-digit limit, shown in
    hexadecimal) instead of raising or filling the screen."""
    from sim.core.fields import describe

    assert describe(-12) == "the integer -12"
    assert describe(10**40) == "the integer " + "1" + "0" * 29 + "... (41 digits)"
    huge = int("f" * 5000, 16)
    assert describe(huge) == "the integer 0x" + "f" * 30 + "... (5,000 hexadecimal digits)"


def test_a_strategy_file_with_a_huge_number_is_one_line_in_simulate(tmp_path, capsys):
    path = write(tmp_path, "s.toml", '[sets.a]\nbase = "greedy"\nvp = ' + HUGE + "\n")
    argv = ["simulate", "--games", "4", "--strategies", "a,a,a,a", "--workers", "1"]
    code = main([*argv, "--strategy-file", str(path), "--out", str(tmp_path / "run")])
    one_line_error(capsys, code, "digits")
    assert not (tmp_path / "run").exists()


def test_long_numbers_in_strings_and_comments_are_not_numbers(tmp_path, capsys):
    text = STRATEGY_FILE.replace("deny = 0.5", f'deny = 0.5  # {HUGE}\ndescription = "{HUGE}"')
    path = write(tmp_path, "s.toml", text)
    code = main(["strategies", "--strategy-file", str(path)])
    # Not a digits error: the file's only mistake is the unknown parameter "description".
    err = one_line_error(capsys, code, "description")
    assert "digits" not in err


# --- the wrong kind of file ----------------------------------------------------------------------


def _files(tmp_path):
    tileset = write(tmp_path, "tileset.toml", DEFAULT_TILESET.read_bytes())
    catalog = write(tmp_path, "catalog.toml", DEFAULT_CATALOG.read_bytes())
    strategies = write(tmp_path, "strategies.toml", STRATEGY_FILE)
    return {"tileset": tileset, "catalog": catalog, "strategies": strategies}


@pytest.mark.parametrize(
    "command, given, words",
    [
        (["tileset", "validate"], "catalog", "is a NEOM catalogue, not a Tangram City tile set"),
        (["tileset", "show"], "catalog", "is a NEOM catalogue, not a Tangram City tile set"),
        (["catalog", "validate"], "tileset", "is a Tangram City tile set, not a NEOM catalogue"),
        (["catalog", "show"], "tileset", "is a Tangram City tile set, not a NEOM catalogue"),
        (["catalog", "validate"], "strategies", "is a strategy file, not a NEOM catalogue"),
        (["tileset", "validate"], "strategies", "is a strategy file, not a Tangram City tile set"),
        (["strategies", "--strategy-file"], "catalog", "is a NEOM catalogue, not a strategy file"),
        (["strategies", "--strategy-file"], "tileset", "is a Tangram City tile set, not a strat"),
    ],
)
def test_the_wrong_kind_of_file_is_named_in_one_line(tmp_path, capsys, command, given, words):
    path = _files(tmp_path)[given]
    one_line_error(capsys, main([*command, str(path)]), str(path), words)


@pytest.mark.parametrize(
    "game, flag, given, words",
    [
        ("tangram", "--tileset", "catalog", "is a NEOM catalogue, not a Tangram City tile set"),
        ("neom", "--catalog", "tileset", "is a Tangram City tile set, not a NEOM catalogue"),
    ],
)
def test_simulate_names_the_wrong_kind_of_data_file(tmp_path, capsys, game, flag, given, words):
    path = _files(tmp_path)[given]
    players = ["--players", "2", "--strategies", "random,random", "--games", "4"]
    argv = ["simulate", "--game", game, *players, "--workers", "1", flag, str(path)]
    one_line_error(capsys, main([*argv, "--out", str(tmp_path / "run")]), words)
    assert not (tmp_path / "run").exists()


# --- byte-order marks ----------------------------------------------------------------------------


BOM = b"\xef\xbb\xbf"


def test_a_utf8_byte_order_mark_is_accepted_by_every_reader(tmp_path, capsys):
    """Windows editors write one; the file means the same with it (decision: accept it)."""
    files = _files(tmp_path)
    for path in files.values():
        path.write_bytes(BOM + path.read_bytes())
    assert main(["catalog", "validate", str(files["catalog"])]) == 0
    assert main(["tileset", "validate", str(files["tileset"])]) == 0
    assert main(["strategies", "--strategy-file", str(files["strategies"])]) == 0
    rows = [row[:] for row in EMPTY_BOARD]
    rows[0][:2] = ["R", "G|F"]
    positions = {
        "city.json": (["score"], b'{"money": 6, "center_good": "Stone"}'),
        "board.json": (["score", "--game", "tangram"], json.dumps({"rows": rows}).encode()),
    }
    capsys.readouterr()
    for name, (command, text) in positions.items():
        plain, marked = write(tmp_path, name, text), write(tmp_path, "bom-" + name, BOM + text)
        assert main([*command, str(plain)]) == 0
        expected = capsys.readouterr().out
        assert main([*command, str(marked)]) == 0
        assert capsys.readouterr().out == expected


@pytest.mark.parametrize(
    "encoding, words", [("utf-16", "UTF-16"), ("utf-32", "UTF-32"), ("utf-16-be", "UTF-16")]
)
def test_a_utf16_or_utf32_file_is_named(tmp_path, capsys, encoding, words):
    bom = {"utf-16-be": b"\xfe\xff"}.get(encoding, b"")
    data = bom + STRATEGY_FILE.encode(encoding)
    path = write(tmp_path, "s.toml", data)
    one_line_error(capsys, main(["strategies", "--strategy-file", str(path)]), words, "UTF-8")
    catalog = write(tmp_path, "c.toml", bom + DEFAULT_CATALOG.read_text().encode(encoding))
    validator_error(capsys, main(["catalog", "validate", str(catalog)]), catalog, words, "UTF-8")


# --- tile sets: names, similar_to, area, warnings ------------------------------------------------


def tileset_problems(change) -> list[str]:
    data = default_tileset()
    for board in data["boards"]:
        board.pop("witness")
    change(data)
    return validate(data, "set.toml")


def _rename(index: int, name: str):
    return lambda d: d["tiles"][index].update(name=name)


@pytest.mark.parametrize(
    "change, words",
    [
        (_rename(0, ""), 'field "name": empty'),
        (_rename(0, "   "), 'field "name": empty'),
        (_rename(0, "Tri\nangle"), "control"),
        (_rename(0, "Tri\u200bangle"), "invisible"),
        (_rename(1, "KITE"), 'tile "Kite": looks the same as tile "KITE"'),
        (
            lambda d: (_rename(0, "Caf\u00e9")(d), _rename(1, "Cafe\u0301")(d)),
            "looks the same",
        ),
        (lambda d: d["boards"][0].update(name=""), 'board #1 (no name): field "name": empty'),
        (lambda d: d["boards"][1].update(name=d["boards"][0]["name"].lower()), "looks the same"),
        (lambda d: d["tileset"].update(name="\x1b[31mred"), '[tileset]: field "name": contains'),
    ],
)
def test_tile_set_names_get_the_catalogue_checks(change, words):
    problems = tileset_problems(change)
    assert any(words in problem for problem in problems), problems


def test_an_empty_tile_name_is_never_shown_as_marked():
    """An empty name was accepted, and then shown with "!" (it is "in" every empty
    similar_to); now it is refused, and the mark never counts an empty name."""
    problems = tileset_problems(_rename(0, ""))
    assert problems and not any('"!"' in p for p in problems)
    shown = TileSet(
        name="t",
        reconstructed=True,
        description="",
        tile_names=("", "Kite"),
        shapes=(frozenset(), frozenset()),
        similar_to=("", ""),
        boards=(),
        placement_counts=(0, 0),
    )
    assert not shown.marked(0) and not shown.marked(1)


def test_similar_to_must_be_mutual():
    def one_sided(data):
        tile = next(t for t in data["tiles"] if t["name"] == "Trapezoid")
        tile["similar_to"] = ""

    problems = tileset_problems(one_sided)
    assert any(
        'tile "Parallelogram": field "similar_to": "Trapezoid"' in p and "does not name" in p
        for p in problems
    ), problems
    assert tileset_problems(lambda d: None) == []


def _small_area_set(tmp_path):
    """The default set with its Large Triangle (2 squares) replaced by a 2x3 block: valid, but
    its 48.5 squares overflow the 47.5 the board has besides the start piece."""
    data = default_tileset()
    for board in data["boards"]:
        board.pop("witness")
    big = next(t for t in data["tiles"] if t["name"] == "Large Triangle")
    big["shape"] = ["# # #", "# # #"]
    assert validate(data, "set.toml") == []
    return write(tmp_path, "small.toml", tileset_toml(data))


def test_witness_checks_the_area_before_searching(tmp_path, capsys, monkeypatch):
    from sim.tangram import witness

    def no_search(*args, **kwargs):
        raise AssertionError("searched although the area cannot fill the board")

    monkeypatch.setattr(witness, "find_tiling", no_search)
    path = _small_area_set(tmp_path)
    code = main(["tileset", "witness", str(path)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "cannot fill" in err and "squares" in err


def test_simulate_with_a_tileset_repeats_the_validators_warnings(tmp_path, capsys):
    path = _small_area_set(tmp_path)
    assert main(["tileset", "validate", str(path)]) == 0
    expected = [
        line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")
    ]
    assert expected
    argv = ["simulate", "--game", "tangram", "--players", "2", "--strategies", "random,random"]
    argv += ["--games", "2", "--batch-size", "2", "--workers", "1", "--tileset", str(path)]
    assert main([*argv, "--out", str(tmp_path / "run")]) == 0
    err = capsys.readouterr().err
    for line in expected:
        assert f"neom: {line}" in err, err


# --- impossible Tangram boards -------------------------------------------------------------------


@pytest.mark.parametrize("halves", [7, 98])
def test_score_refuses_more_fountains_than_a_player_has(tmp_path, capsys, halves):
    rows = [row[:] for row in EMPTY_BOARD]
    cells = [(r, c) for r in range(7) for c in range(7)]
    left = halves
    for r, c in cells:
        if left >= 2:
            rows[r][c], left = "F|F", left - 2
        elif left == 1:
            rows[r][c], left = "F|.", 0
    path = write(tmp_path, "board.json", json.dumps({"rows": rows}))
    code = main(["score", "--game", "tangram", str(path)])
    one_line_error(capsys, code, str(path), f"{halves} fountain halves", "6")


def test_six_fountains_still_score(tmp_path, capsys):
    rows = [row[:] for row in EMPTY_BOARD]
    rows[0][:3] = ["F|F", "F|F", "F|F"]
    path = write(tmp_path, "board.json", json.dumps({"rows": rows}))
    assert main(["score", "--game", "tangram", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["rectangle"] == 3


# --- small messages ------------------------------------------------------------------------------


def test_a_game_count_below_one_rotation_says_what_to_use(tmp_path, capsys):
    argv = ["simulate", "--games", "1", "--players", "2", "--strategies", "random,random"]
    err = one_line_error(capsys, main([*argv, "--out", str(tmp_path / "run")]), "use 2 or more")
    assert "2 or 2" not in err


def test_experiment_with_one_game_says_what_to_use(tmp_path, capsys):
    argv = ["experiment", "cornerstone", "Central Park", "--games", "1", "--workers", "1"]
    argv += ["--strategies", "random,random,random,random", "--out", str(tmp_path / "exp")]
    err = one_line_error(capsys, main(argv), "use 4 or more")
    assert "4 or 4" not in err
    assert not (tmp_path / "exp").exists()
