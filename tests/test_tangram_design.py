"""``neom compare``, ``neom experiment`` and ``neom balance`` with ``--game tangram`` (issue 40,
part 3): the generic design commands with Tangram City's parts. Small runs of the fast
strategies (greedy, random); the planner is too slow for a test's budget. ``neom experiment
--game tangram``: tests/test_tangram_experiment.py."""

import json
import re
from pathlib import Path

import polars as pl
import pytest
from run_helpers import placeholder_figures

from sim.core.cli import main

FIELD = ("--players", "2", "--strategies", "greedy,random", "--workers", "1")


@pytest.fixture(autouse=True)
def no_rendering(monkeypatch):
    """The reports here are checked by their files, tables and text, not their images."""
    placeholder_figures(monkeypatch)


def compare(tmp_path, *args, games=40):
    out = tmp_path / "report"
    argv = ["compare", "--game", "tangram", *FIELD, "--games", str(games), "--out", str(out)]
    return main([*argv, *args]), out


def test_the_same_tile_set_and_rules_on_both_sides_move_nothing(tmp_path, capsys):
    code, out = compare(tmp_path, "--json", str(tmp_path / "items.json"))
    assert code == 0, capsys.readouterr().err
    summary = (out / "summary.md").read_text()
    assert "Tangram City A/B comparison" in summary
    assert "same tile set and rules" in summary
    assert "0 scoring figures moved significantly" in summary
    scoring = pl.read_csv(out / "tables" / "scoring.csv")
    assert scoring.height > 0 and (scoring["diff"] == 0).all()
    items = json.loads((tmp_path / "items.json").read_text())
    assert {"scoring", "strategy", "seat"} <= {item["kind"] for item in items}
    assert all(item["shift"] in (0.0, None) for item in items)


def test_a_planted_balance_bonus_is_found_and_nothing_else_is_blamed(tmp_path, capsys):
    """The candidate pays 120 instead of 20 for a balanced scale (distance 0): the balance
    bonus of every seat moves up, significantly, and the rules reading says what changed; the
    planning bonus (not reached by these fields) does not move."""
    code, out = compare(tmp_path, "--candidate-rules", "balance_bonus=120/10/10/5/5/0")
    assert code == 0, capsys.readouterr().err
    rows = pl.read_csv(out / "tables" / "scoring.csv")
    every = {r["metric"]: r for r in rows.filter(pl.col("group") == "every seat").to_dicts()}
    assert every["balance_bonus"]["lo"] > 0 and every["balance_bonus"]["q"] < 0.05
    assert every["total"]["lo"] > 0
    assert every["planning_bonus"]["diff"] == 0
    summary = (out / "summary.md").read_text()
    assert "Rules reading: balance bonus: [20, 10, 10, 5, 5, 0] → balance bonus: [120," in summary
    assert "balance bonus of every seat" in summary


@pytest.mark.parametrize(
    "args, message",
    [
        (["--variant", "beginner"], "--variant is not an option of --game tangram"),
        (["--candidate-rules", "planning_bonus=lots"], "planning_bonus=lots': expected a whole"),
        (["--candidate-rules", "balance_bonus=1/2"], "balance bonus [1, 2]: expected 6 whole"),
        (["--baseline", "nope.toml"], "--baseline nope.toml: no such tile set file"),
    ],
)
def test_bad_options_are_one_line_errors(tmp_path, capsys, args, message):
    code, out = compare(tmp_path, *args)
    err = capsys.readouterr().err
    assert code == 1 and message in err and err.count("\n") == 1, err
    assert not out.exists()


# --- balance: a planted change undone ---------------------------------------------------------

# Two greedy players, one of them playing for the balance scale. With a balance bonus of 160
# for a balanced scale (distance 0) the two approaches are even (measured: 49% and 51% of 200
# games); the printed 20 makes playing for the scale hopeless (0.5%): the planted change.
EVEN = "balance_bonus=160/10/10/5/5/0"
PLANTED = "balance_bonus=20/10/10/5/5/0"
SCALE = "greedy:balance_weight=10"
DUEL = ("--players", "2", "--strategies", f"greedy,{SCALE}", "--workers", "1")


def balance(tmp_path, rules, *args):
    out = tmp_path / "balance.json"
    argv = ["balance", SCALE, "--game", "tangram", *DUEL, "--games", "200", "--rules", rules,
            "--lever", "balance_bonus[0]", "--band", "10", "--json", str(out),
            "--quiet"]  # fmt: skip
    code = main([*argv, *args])
    return code, json.loads(out.read_text()) if code == 0 else None


def test_compare_finds_the_planted_bonus_that_makes_an_approach_hopeless(tmp_path, capsys):
    code, out = compare(tmp_path, "--baseline-rules", EVEN, "--candidate-rules", PLANTED,
                        *DUEL, games=200)  # fmt: skip
    assert code == 0, capsys.readouterr().err
    strategies = {r["strategy_name"]: r for r in pl.read_csv(out / "tables" / "strategies.csv")
                  .to_dicts()}  # fmt: skip
    assert strategies[SCALE]["win_shift_hi"] < -0.3 and strategies[SCALE]["win_shift_q"] < 0.05
    assert f"Strategy {SCALE}: win share" in (out / "summary.md").read_text()


def test_balance_undoes_the_planted_bonus(tmp_path, capsys):
    """From the planted 20 the search raises the bonus back into the even region (at 80 the
    scale player wins 27%, at 120 and above about half) and the fresh deals confirm it."""
    code, doc = balance(tmp_path, PLANTED)
    assert code == 0, capsys.readouterr().err
    lever = doc["levers"][0]
    assert doc["current_effect"][2] < -40  # as planted: the approach never wins
    assert lever["current"] == 20 and lever["sign"] == 1
    assert 80 <= lever["suggested"] <= 400 and lever["in_band"]
    assert abs(lever["effect"]) <= 10
    assert "| balance_bonus[0] | 20 |" in capsys.readouterr().out


def test_balancing_even_rules_changes_nothing(tmp_path, capsys):
    code, doc = balance(tmp_path, EVEN)
    assert code == 0, capsys.readouterr().err
    lever = doc["levers"][0]
    assert lever["suggested"] == lever["current"] == 160
    assert lever["stop"] == "in the band at the current value" and lever["in_band"]


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--lever", "tiles"],
            "--lever 'tiles': not a lever of a strategy of Tangram City; its "
            "levers: planning_bonus, balance_bonus[0], ",
        ),
        (["--catalog", "x.toml"], "--catalog is not an option of --game tangram"),
        (["--rules", "planning_bonus=-1"], "--rules 'planning_bonus=-1': expected a whole"),
    ],
)
def test_balance_bad_options_are_one_line_errors(tmp_path, capsys, args, message):
    argv = ["balance", SCALE, "--game", "tangram", *DUEL, *args]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_balance_names_the_field_when_the_item_is_not_in_it(capsys):
    assert main(["balance", "planner", "--game", "tangram", *DUEL]) == 1
    err = capsys.readouterr().err
    assert "'planner': neither a tile of tile set" in err and "nor a strategy of the field" in err
    assert SCALE in err and "(the rules it takes: planning bonus, balance bonus)" in err


# --- every command of the README's table: --game tangram, or one line why not -----------------


def readme_commands() -> list[str]:
    """The commands of the README's command table (its first column: `neom NAME ...`)."""
    text = (Path(__file__).parent.parent / "README.md").read_text()
    table = text.split("## The command line", 1)[1].split("\n\n", 2)[1]
    return list(dict.fromkeys(re.findall(r"^\| `neom ([a-z]+)", table, re.MULTILINE)))


def test_the_readme_table_names_the_commands():
    assert {"simulate", "report", "compare", "experiment", "balance", "verify", "tune",
            "tileset", "catalog"} <= set(readme_commands())  # fmt: skip


@pytest.mark.parametrize("command", readme_commands())
def test_every_readme_command_takes_game_tangram_or_says_why_not(command, capsys):
    """Issue 40's "Done when": a command that takes --game tangram shows it in its help (the
    experiment's after its KIND); one that does not says why in one line, and Tangram City's
    own commands need no --game."""
    from sim.core.registry import get_game

    own = command in {name for name, _, _ in get_game("tangram").commands}
    argv = [command, "tile"] if command == "experiment" else [command]
    try:
        code = main([*argv, *([] if own else ["--game", "tangram"]), "--help"])
    except SystemExit as stop:  # argparse's --help
        code = stop.code
    out, err = capsys.readouterr()
    if code == 0:
        assert own or "--game {neom,tangram}" in out, out
    else:
        assert code == 1 and err.count("\n") == 1, err
        assert f"neom {command}: --game" in err and "does not apply: " in err
