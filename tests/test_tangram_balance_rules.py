"""``neom balance RULE --game tangram`` (issue 40): a dead rule brought alive by its own value.
Known answers on small runs of the fast strategies (three greedy seats and a random one; the
planner is too slow for a test's budget): a planted dead balance bonus (0 at every distance) is
brought alive, the reach on the fresh deals recomputed from a players table; the report's step
for it runs as pasted; the printed balance bonus is already alive; the planning bonus, which no
greedy seat reaches whatever it is worth, gets no suggestion; bad names are one line."""

import json
import shlex

import polars as pl
import pytest
from run_helpers import placeholder_figures, small_run

from analysis.core.load import open_run
from analysis.core.report import build_report
from analysis.tangram.tables import DEAD_SHARE
from sim.core.cli import main

FIELD = ("greedy", "greedy", "greedy", "random")
ARGS = ("--players", "4", "--strategies", ",".join(FIELD), "--workers", "1", "--quiet")
GAMES = 152  # a multiple of the players (seat rotation)
DEAD = "balance_bonus=0/0/0/0/0/0"


def balance(tmp_path, name, *args):
    out = tmp_path / "balance.json"
    argv = ["balance", name, "--game", "tangram", *ARGS, "--games", str(GAMES),
            "--json", str(out), *args]  # fmt: skip
    code = main(argv)
    return code, json.loads(out.read_text()) if code == 0 else None


def greedy_reach(folder) -> float:
    """The share of greedy seats that scored a balance bonus, from the players table."""
    seats = open_run(folder).players.collect().filter(pl.col("strategy_name") == "greedy")
    return (seats["balance_bonus"] > 0).mean()


def test_a_planted_dead_balance_bonus_is_brought_alive(tmp_path, capsys):
    """0 at every distance: no seat scores it; the search scales the printed table up from 0
    and suggests the smallest scale at which at least 1% of the seats reach it, and the same
    share is found again by playing the suggested table on the fresh deals."""
    code, doc = balance(tmp_path, "balance bonus", "--rules", DEAD)
    out = capsys.readouterr().out
    assert code == 0, out
    lever = doc["levers"][0]
    assert doc["current_reach"]["reached"] == 0 and not doc["current_reach"]["alive"]
    assert lever["lever"] == "balance_bonus scale" and lever["current"] == 0
    assert 0 < lever["suggested"] <= 100
    # the smallest: every value tried below the suggestion left it below 1%
    below = [v for v in map(int, lever["points"]) if v < lever["suggested"]]
    assert below and all(lever["points"][str(v)] < 100 * DEAD_SHARE for v in below)
    table = lever["rules"]["balance_bonus"]
    assert any(table) and table == sorted(table, reverse=True)  # the printed table's order
    assert lever["reach"]["alive"] and lever["reach"]["share"] >= 100 * DEAD_SHARE
    assert "balance bonus" not in lever["dead_rules"]
    assert f"--rules balance_bonus={'/'.join(map(str, table))}" in out
    assert set(lever["edges"]) == set(doc["edges"]) == {"greedy", "random"}
    assert "| greedy |" in out
    # the fresh deals played again with the suggested table: the same reach
    small_run(tmp_path / "fresh", "tangram", FIELD, 4, doc["verify_games"], doc["fresh_seed"],
              rules=lever["rules"])  # fmt: skip
    assert greedy_reach(tmp_path / "fresh") == pytest.approx(lever["reach"]["share"] / 100,
                                                             abs=5e-5)  # fmt: skip


def test_the_printed_balance_bonus_is_already_alive(tmp_path, capsys):
    code, doc = balance(tmp_path, "balance bonus")
    assert code == 0, capsys.readouterr().err
    lever = doc["levers"][0]
    assert doc["search_reach"]["alive"]
    assert lever["suggested"] == lever["current"] == 100 and "reach" not in lever
    assert lever["stop"].startswith("already alive")
    out = capsys.readouterr().out
    assert "100 -> 100: already alive" in out and "suggested: --rules" not in out


def test_a_planning_bonus_no_greedy_seat_can_reach_gets_no_suggestion(tmp_path, capsys):
    """Greedy seats almost never fill a board (0.1% at 15 points, measured): a bigger bonus
    does not change that, so there is nothing for its value to fix."""
    code, doc = balance(tmp_path, "planning bonus", "--max-evals", "3")
    assert code == 0, capsys.readouterr().err
    lever = doc["levers"][0]
    assert lever["current"] == 15 and lever["suggested"] is None and "reach" not in lever
    assert "the field cannot reach it whatever it is worth" in lever["stop"]
    assert len(set(lever["points"].values())) == 1 and len(lever["points"]) == 4


def test_the_dead_rule_steps_balance_runs_as_pasted_from_the_report_folder(
    tmp_path, monkeypatch, capsys
):
    """The report flags the planted dead balance bonus; its step's `neom balance`, pasted from
    the report folder, starts from the run's zero table and brings it alive."""
    small_run(tmp_path / "run", "tangram", FIELD, 4, 300, 5, rules={"balance_bonus": [0] * 6})
    with pytest.MonkeyPatch.context() as patch:
        placeholder_figures(patch)
        build_report(tmp_path / "run", tmp_path / "report")
    steps = pl.read_csv(tmp_path / "report" / "tables" / "next_steps.csv")
    text = steps.filter(pl.col("name") == "balance bonus")["step"][0]
    command = next(c for c in text.split("`")[1::2] if c.startswith("neom balance"))
    assert command.startswith("neom balance 'balance bonus' --game tangram --players 4")
    assert "--kind rule" in command and f"--rules {DEAD}" in command
    monkeypatch.chdir(tmp_path / "report")
    argv = [*shlex.split(command)[1:], "--workers", "1", "--quiet", "--json", "b.json"]
    assert main(argv) == 0, capsys.readouterr().err
    lever = json.loads((tmp_path / "report" / "b.json").read_text())["levers"][0]
    assert lever["suggested"] > 0 and lever["reach"]["alive"]


@pytest.mark.parametrize(
    "name, message",
    [
        ("fountains", "fountains: no numeric lever (its one setting is fountain_kept"),
        ("bonus", "'bonus': neither a tile of tile set"),
    ],
)
def test_bad_rule_names_are_one_line_errors(name, message, capsys):
    assert main(["balance", name, "--game", "tangram", *ARGS]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    if name == "bonus":
        assert "(the rules it takes: planning bonus, balance bonus)" in err


def test_a_rule_takes_no_tile_set_to_write(capsys):
    argv = ["balance", "balance bonus", "--game", "tangram", *ARGS, "--write-tileset", "x.toml"]
    assert main(argv) == 1
    assert "--write-tileset: the balance bonus is a rule" in capsys.readouterr().err
