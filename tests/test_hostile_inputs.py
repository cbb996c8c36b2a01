"""Hostile and careless input files (issue 21): catalogues, strategy files and city files that
are huge, endless, deeply nested, out of range or subtly wrong are one clear line, fast; the
validator bounds every value so that no game total can wrap, and finds requirements no game
can meet, circular prerequisites, empty and look-alike names."""

import json
import time
import unicodedata
from dataclasses import replace
from pathlib import Path

import pytest
from catalog_fixture import tile, to_toml, valid_catalog
from plain_scoring import plain_score
from run_helpers import one_line_error

from sim.core.cli import main
from sim.neom import constants as K
from sim.neom.catalog import DEFAULT_CATALOG, load_catalog, validate

SRC = "test.toml"
STRATEGIES = "random,random,random,random"
ROOT = Path(__file__).resolve().parent.parent


def simulate_with(tmp_path, *args: str) -> int:
    argv = ["simulate", "--games", "4", "--strategies", STRATEGIES, "--workers", "1"]
    return main([*argv, "--out", str(tmp_path / "run"), *args])


def problems_after(mutate) -> list[str]:
    data = valid_catalog()
    mutate(data)
    return validate(data, SRC)


# --- no integer can wrap ---------------------------------------------------------------------


def _set_effect(name, index, **values):
    return lambda d: tile(d, name)["effects"][index].update(values)


@pytest.mark.parametrize("value", [1001, 2**31 - 1, 2**32])
@pytest.mark.parametrize(
    "where, mutate",
    [
        ('tile "Treasury": field "vp"', lambda v: lambda d: tile(d, "Treasury").update(vp=v)),
        ('tile "Treasury": field "cost"', lambda v: lambda d: tile(d, "Treasury").update(cost=v)),
        (
            '"Postal Service": field "income"',
            lambda v: lambda d: tile(d, "Postal Service").update(income=v),
        ),  # fmt: skip
        (
            '"Gold Market": field "coins_on_place"',
            lambda v: lambda d: tile(d, "Gold Market").update(coins_on_place=v),
        ),  # fmt: skip
        (
            '"Fire Department": field "vp_no_disasters"',
            lambda v: lambda d: tile(d, "Fire Department").update(vp_no_disasters=v),
        ),  # fmt: skip
        (
            'alternative 1: field "cost"',
            lambda v: lambda d: tile(d, "Treasury")["alternatives"][0].update(cost=v),
        ),  # fmt: skip
        (
            '"Town Hall": field "effects": effect 1 (vp_per_type_in_city): parameter "vp"',
            lambda v: _set_effect("Town Hall", 0, vp=v),
        ),  # fmt: skip
        (
            '"Bank": field "effects": effect 1 (income_per_type): parameter "coins"',
            lambda v: _set_effect("Bank", 0, coins=v),
        ),  # fmt: skip
    ],
)
def test_every_catalogue_amount_is_bounded(where, mutate, value):
    """A value the validator used to accept (up to 2**31 - 1) wrapped the int32 sums: vp =
    2147483647 stored tiles = 17 and ranked the city 4th."""
    problems = problems_after(mutate(value))
    assert len(problems) == 1, problems
    assert where in problems[0] and f"too large (got {value}, at most 1000)" in problems[0]


def test_tile_and_board_counts_are_bounded():
    many = lambda d: d["tiles"].extend(  # noqa: E731
        {"name": f"Extra {i}", "deck": "cornerstone", "types": ["public"], "roads": "N"}
        for i in range(1000)
    )
    assert "tiles, at most 1000 [[tiles]]" in " ".join(problems_after(many))
    boards = lambda d: d["boards"].extend(  # noqa: E731
        {"name": f"Board {i}", "good": "Ore", "roads": "N"} for i in range(100)
    )
    assert "boards, at most 100 [[boards]]" in " ".join(problems_after(boards))


def _maximal_catalogue() -> dict:
    """The fixture with every amount a game sums at the bound (costs left as they are)."""
    data = valid_catalog()
    for entry in data["tiles"]:
        if "disaster" in entry["types"]:
            continue
        entry.update(vp=1000, income=1000, coins_on_place=1000, vp_no_disasters=1000)
        for effect in entry.get("effects", []):
            for key in ("vp", "coins"):
                if key in effect:
                    effect[key] = 1000
    return data


def test_games_at_the_bounds_store_exact_totals(tmp_path):
    """Every amount at its bound: the stored breakdown still adds up (no int32 wrap) and the
    totals are the large numbers they should be."""
    from sim.core.runner import RunConfig, run_simulation
    from sim.core.store import read_run

    catalogue = tmp_path / "max.toml"
    catalogue.write_text(to_toml(_maximal_catalogue()))
    config = RunConfig(
        out=tmp_path / "run", strategies=("greedy", "random", "greedy", "random"), games=8,
        batch_size=4, workers=1, progress=False, data=catalogue,
    )  # fmt: skip
    run_simulation(config)
    players = read_run(config.out).players.collect()
    parts = ("tiles", "neighborhoods", "goods", "money_vp", "pollution", "ghost_town", "power")
    assert (players.select(parts).sum_horizontal() == players["total"]).all()
    assert players["total"].min() > 1000 and players["total"].max() < 2**31 // 100
    assert players["money"].min() >= 0
    run_simulation(replace(config, out=tmp_path / "nd", rules={"variant": K.V_NO_DISASTERS}))


def test_score_of_a_maximal_city_is_exact(tmp_path, capsys):
    """25 squares of inline tiles at every bound, the money at its bound: the compiled scorer's
    int32 sums equal the plain-Python (unbounded) scorer's."""
    from sim.neom.commands.score import MAX_MONEY, compile_city

    raws = [g for g, t in zip(*_goods(), strict=True) if t == "raw"]
    big = {
        "types": ["residential"], "roads": "NESW", "vp": 1000, "vp_no_disasters": 1000,
        "produces": raws,
        "effects": [
            {"kind": "vp_per_type_in_city", "types": ["residential"], "vp": 1000},
            {"kind": "vp_per_type_adjacent", "types": ["residential"], "vp": 1000},
            {"kind": "vp_per_good_tier", "tier": "raw", "vp": 1000},
        ],
    }  # fmt: skip
    cells = [{"row": r, "col": c, "tile": dict(big)} for r in range(5) for c in range(5)]
    city = {"money": MAX_MONEY, "variant": "no-disasters", "cells": cells}
    path = tmp_path / "city.json"
    path.write_text(json.dumps(city))
    assert main(["score", str(path)]) == 0
    got = json.loads(capsys.readouterr().out)
    grid, money, rules, tables = compile_city(city, load_catalog(), str(path))
    expected = plain_score(grid, money, tables.tiles, tables.effects, tables.goods_tier, rules)
    assert got == expected
    assert 10**6 < got["total"] < 2**31 // 10


def _goods():
    tables = load_catalog()
    return tables.good_names, [
        {v: k for k, v in K.TIER_NAMES.items()}[int(t)] for t in tables.goods_tier
    ]


@pytest.mark.parametrize("money", [2**31, 2**32, 10**30])
def test_score_refuses_money_beyond_its_bound(tmp_path, capsys, money):
    """money 2**32 printed money: -2147483648 and tiles: -2."""
    path = tmp_path / "city.json"
    path.write_text(json.dumps({"money": money, "center_good": "Oil"}))
    one_line_error(capsys, main(["score", str(path)]), f"money {money} is too large")


# --- huge, endless and deeply nested files ---------------------------------------------------


def test_a_50_mb_catalogue_fails_in_well_under_a_second(tmp_path, capsys):
    """It took 37 s and 1.5 GB before its error."""
    entry = '[[tiles]]\nname = "T{}"\ndeck = "gen1"\nplayers = 1\ntypes = ["residential"]\n'
    block = "".join(entry.format(i) for i in range(10_000)).encode()
    path = tmp_path / "huge.toml"
    with open(path, "wb") as handle:
        while handle.tell() < 50_000_000:
            handle.write(block)
    start = time.perf_counter()
    code = simulate_with(tmp_path, "--catalog", str(path))
    elapsed = time.perf_counter() - start
    one_line_error(capsys, code, "huge.toml: larger than 1 MB, the limit for a catalogue file")
    assert elapsed < 0.5, elapsed
    start = time.perf_counter()
    with pytest.raises(Exception, match="larger than 1 MB"):
        load_catalog(path)
    assert time.perf_counter() - start < 0.1


def test_an_endless_catalogue_is_one_line(tmp_path, capsys):
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    start = time.perf_counter()
    one_line_error(capsys, simulate_with(tmp_path, "--catalog", "/dev/zero"), "larger than 1 MB")
    assert time.perf_counter() - start < 1


@pytest.mark.parametrize(
    "text",
    [
        "[catalog]\nname = 'x'\ndeep = " + "[" * 50_000 + "]" * 50_000 + "\n",
        "[catalog]\nname = 'x'\ndeep = " + "{a = " * 50_000 + "1" + "}" * 50_000 + "\n",
        "a = " + "[" * 200_000,
    ],
    ids=["arrays", "inline tables", "unclosed"],
)
def test_a_deeply_nested_catalogue_is_one_line(tmp_path, capsys, text):
    """It was a RecursionError traceback."""
    path = tmp_path / "deep.toml"
    path.write_text(text)
    start = time.perf_counter()
    code = simulate_with(tmp_path, "--catalog", str(path))
    one_line_error(capsys, code, "deep.toml: arrays or tables nested more than 32 deep (line")
    assert time.perf_counter() - start < 1
    assert main(["catalog", "validate", str(path)]) == 1
    assert "nested more than 32 deep" in capsys.readouterr().err


def test_brackets_in_strings_and_comments_are_not_nesting(tmp_path):
    text = DEFAULT_CATALOG.read_text(encoding="utf-8")
    text = text.replace("[catalog]\n", "# " + "[{" * 100 + "\n[catalog]\n", 1)
    text = text.replace('description = """', 'description = """' + "[{'" * 100, 1)
    text = text.replace('name = "NEOM default', "name = '" + "[" * 100 + "' # \"", 1)
    path = tmp_path / "brackets.toml"
    path.write_text(text, encoding="utf-8")
    assert load_catalog(path).n_tiles == load_catalog().n_tiles


def test_strategy_files_have_size_and_depth_limits(tmp_path, capsys):
    deep = tmp_path / "deep.toml"
    deep.write_text("[sets.x]\nbase = 'greedy'\nw = " + "[" * 100_000 + "]" * 100_000)
    code = simulate_with(tmp_path, "--strategy-file", str(deep))
    one_line_error(capsys, code, "strategy file", "nested more than 32 deep")
    huge = tmp_path / "huge.toml"
    huge.write_bytes(b"# padding\n" * 200_000)
    code = simulate_with(tmp_path, "--strategy-file", str(huge))
    one_line_error(capsys, code, "strategy file", "larger than 1 MB")
    code = simulate_with(tmp_path, "--strategy-file", "/dev/zero")
    one_line_error(capsys, code, "strategy file", "larger than 1 MB")


@pytest.mark.parametrize(
    "content, words",
    [
        ('{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}", ["nested more than 32 deep"]),
        ('{"money": 1, "pad": "' + "x" * 1_100_000 + '"}', ["larger than 1 MB"]),
    ],
    ids=["deep", "huge"],
)
def test_city_files_have_size_and_depth_limits(tmp_path, capsys, content, words):
    path = tmp_path / "city.json"
    path.write_text(content)
    one_line_error(capsys, main(["score", str(path)]), str(path), *words)


# --- strategy parameters ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, words",
    [
        ("greedy:money_weight=nan", ["'money_weight'", "must be finite"]),
        ("greedy:money_weight=inf", ["must be finite"]),
        ("builder:vp=-inf", ["must be finite"]),
        ("greedy:money_weight=1e6", ["is 1e+06: must be between -1000 and 1000"]),
        ("rollout:playouts=0", ["must be between 1 and 10000"]),
        ("rollout:playouts=1e12", ["must be between 1 and 10000"]),
    ],
)
def test_strategy_parameters_must_be_finite_and_in_range(tmp_path, capsys, spec, words):
    """A NaN greedy was accepted and quietly played differently (17.5 VP on average)."""
    code = simulate_with(tmp_path, "--strategies", f"{spec},random,random,random")
    one_line_error(capsys, code, *words)
    code = main(["play", "--players", "2", "--strategies", f"{spec},random"])
    one_line_error(capsys, code, *words)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "+nan", "1e400", "5000"])
def test_strategy_file_values_must_be_finite_and_in_range(tmp_path, capsys, value):
    path = tmp_path / "sets.toml"
    path.write_text(f"[sets.odd]\nbase = 'greedy'\nmoney_weight = {value}\n")
    sets = ("--strategy-file", str(path), "--strategies", "odd," * 3 + "odd")
    err = one_line_error(capsys, simulate_with(tmp_path, *sets), "[sets.odd]", "'money_weight'")
    assert "finite" in err or "between -1000 and 1000" in err
    # and a sane value goes through:
    path.write_text("[sets.odd]\nbase = 'greedy'\nmoney_weight = 2.5\n")
    assert (
        simulate_with(tmp_path, "--strategy-file", str(path), "--strategies", "odd," * 3 + "odd")
        == 0
    )


# --- validator gaps --------------------------------------------------------------------------


def set_tile(tile_name, **fields):
    return lambda d: tile(d, tile_name).update(fields)


def both(*mutations):
    return lambda d: [mutate(d) for mutate in mutations]


GAPS = {
    "two tiles requiring each other": (
        both(
            set_tile("Sawmill", requires_tiles=["Glassworks"]),
            set_tile("Glassworks", requires_tiles=["Sawmill"]),
        ),
        'tile "Sawmill": field "requires_tiles": circular ("Sawmill" -> "Glassworks" -> '
        '"Sawmill"), so none of these tiles can ever be placed',
    ),
    "a longer cycle": (
        both(
            set_tile("Gen2 House 1-0", requires_tiles=["Gen2 House 1-1"]),
            set_tile("Gen2 House 1-1", requires_tiles=["Gen2 House 1-2"]),
            set_tile("Gen2 House 1-2", requires_tiles=["Gen2 House 1-0"]),
        ),
        'circular ("Gen2 House 1-0" -> "Gen2 House 1-1" -> "Gen2 House 1-2" -> "Gen2 House 1-0")',
    ),
    "a 1+ tile needing a good only later tiles produce": (
        set_tile("Sawmill", requires=["Steel"]),
        'tile "Sawmill": field "requires": good "Steel" is produced only by "Steel Foundry", '
        "which no city can have by generation 1, so the tile can never be placed this way",
    ),
    "a good only the Flood produces": (
        both(set_tile("Flood", produces=["Jewels"]), set_tile("Jeweller", produces=[])),
        'tile "Museum": field "requires": good "Jewels" is produced only by "Flood" (a Disaster, '
        "never placed), which no city can have by generation 3",
    ),
    "an alternative needing a later good": (
        lambda d: tile(d, "Postal Service").update(alternatives=[{"requires": ["Jewels"]}]),
        'tile "Postal Service": field "alternatives": alternative 1: field "requires": good '
        '"Jewels" is produced only by "Jeweller"',
    ),
    "a prerequisite of a later generation": (
        set_tile("Sawmill", requires_tiles=["Treasury"]),
        'tile "Sawmill": field "requires_tiles": tile "Treasury" is in a city only from '
        "generation 2, after this tile's generation 1, so this tile can never be placed",
    ),
    "a Disaster as a prerequisite": (
        set_tile("Treasury", requires_tiles=["Fire"]),
        'tile "Treasury": field "requires_tiles": tile "Fire" is a Disaster, never placed',
    ),
    "a prerequisite that can never be placed": (
        both(
            set_tile("Glassworks", requires=["Jewels"]),
            set_tile("Town Hall", requires_tiles=["Glassworks"]),
        ),  # fmt: skip
        'tile "Town Hall": field "requires_tiles": tile "Glassworks" can itself never be placed',
    ),
    "an empty tile name": (
        set_tile("Gen1 House 1-0", name=""),
        '(no name): field "name": empty; give it a name',
    ),
    "a blank good name": (
        lambda d: d["goods"].append({"name": "  ", "tier": "raw"}),
        'good #11 (no name): field "name": empty; give it a name',
    ),
    "an empty board name": (
        lambda d: d["boards"][0].update(name=""),
        'board #1 (no name): field "name": empty; give it a name',
    ),
    "an empty catalogue name": (
        lambda d: d["catalog"].update(name=""),
        '[catalog]: field "name": empty; give it a name',
    ),
    "a name with a control character": (
        set_tile("Gen1 House 1-0", name="House\x1b[31m"),
        'field "name": contains a control or invisible formatting character',
    ),
    "NFC and NFD names": (
        both(
            set_tile("Gen1 House 1-0", name=unicodedata.normalize("NFC", "Café")),
            set_tile("Gen1 House 1-1", name=unicodedata.normalize("NFD", "Café")),
        ),
        "looks the same as tile",
    ),
    "names differing in case": (
        set_tile("Gen1 House 1-0", name="PARK"),
        'tile "PARK": looks the same as tile "Park"',
    ),
    "full-width letters and extra spaces": (
        both(
            set_tile("Gen1 House 1-0", name="Ｐａｒｋ"),
            set_tile("Gen1 House 1-1", name="Town  Hall"),
        ),  # fmt: skip
        'tile "Town  Hall": looks the same as tile "Town Hall"',
    ),
    "look-alike goods": (
        lambda d: d["goods"].append({"name": "ore", "tier": "raw"}),
        'good "ore": looks the same as good "Ore"',
    ),
    "a tile looking like a City Center": (
        set_tile("Gen1 House 1-0", name="city center (Ore board)"),
        'looks the same as "City Center (Ore board)", the City Center of a board',
    ),
}


@pytest.mark.parametrize("case", GAPS)
def test_validator_finds_what_no_game_can_use(case):
    mutate, message = GAPS[case]
    problems = problems_after(mutate)
    assert any(message in problem for problem in problems), problems


def test_valid_chains_across_generations_stay_valid():
    """Earlier-or-same generation sources, cornerstones and boards all supply."""
    data = valid_catalog()
    tile(data, "Treasury").update(requires_tiles=["Sawmill"])  # gen2 needs gen1: fine
    tile(data, "Town Hall").update(requires=["Jewels"])  # a cornerstone placed in gen 3
    tile(data, "Gen1 House 1-0").update(requires=["Ore"])  # a board's good
    tile(data, "Gen1 House 1-1").update(requires_tiles=["Gen1 House 1-2"])  # same generation
    assert validate(data, SRC) == []


def test_the_validator_stays_fast_on_a_long_prerequisite_chain():
    data = valid_catalog()
    chain = [f"Link {i}" for i in range(800)]
    for i, name in enumerate(chain):
        entry = {"name": name, "deck": "cornerstone", "types": ["public"], "roads": "N"}
        if i:
            entry["requires_tiles"] = [chain[i - 1]]
        data["tiles"].insert(0, entry)  # the chain's end first: the worst order
    start = time.perf_counter()
    assert validate(data, SRC) == []
    assert time.perf_counter() - start < 2


def test_inline_tiles_of_score_may_not_look_like_catalogue_tiles(tmp_path, capsys):
    city = {"center_good": "Oil", "cells": [{"row": 0, "col": 0, "tile": {
        "name": "row houses", "types": ["residential"], "roads": "NS"}}]}  # fmt: skip
    path = tmp_path / "city.json"
    path.write_text(json.dumps(city))
    one_line_error(capsys, main(["score", str(path)]), "looks the same as the catalogue")


def test_an_os_failure_nobody_reported_is_still_one_line(tmp_path, capsys, monkeypatch):
    import errno
    import os

    import sim.neom.commands.score as score

    def full(*args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/some/file")

    monkeypatch.setattr(score, "score_file", full)
    path = tmp_path / "city.json"
    path.write_text("{}")
    one_line_error(capsys, main(["score", str(path)]), "/some/file: No space left on device")
