"""``neom compare``, ``neom experiment`` and ``neom balance`` with ``--game tangram`` (issue 40,
part 3): the generic design commands with Tangram City's parts. Small runs of the fast
strategies (greedy, random); the planner is too slow for a test's budget."""

import json

import polars as pl
import pytest

from sim.core.cli import main

FIELD = ("--players", "2", "--strategies", "greedy,random", "--workers", "1")


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


def test_an_experiment_is_refused_in_one_line_the_engine_has_no_interventions(tmp_path, capsys):
    argv = ["experiment", "tile", "Square", "--game", "tangram", *FIELD, "--out", str(tmp_path)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Tangram City's engine cannot force or ban an item" in err and err.count("\n") == 1
