"""Inputs that go together, or a clear refusal (issue 25): one report is of one game; runs on
different catalogues or rules side by side each carry their own label; ``--check`` needs the
same game, player count, catalogue and rules; a manifest is checked against its tables; a
Tangram City run's bonus tables are rules, not interventions; a rules key given twice is
refused."""

import json
import shutil

import polars as pl
import pytest
from catalog_fixture import to_toml, valid_catalog
from run_helpers import one_line_error, placeholder_figures, small_run

from analysis.neom.compare import parse_rules
from sim.core.cli import main
from sim.core.errors import UserError


@pytest.fixture(autouse=True)
def no_rendering(monkeypatch):
    """The reports here are checked by their files, tables and text, not their images."""
    placeholder_figures(monkeypatch)


NEOM4 = ("greedy", "random", "random", "random")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("mixed")
    catalog = valid_catalog()
    catalog["catalog"].update(name="My catalogue", reconstructed=False)
    mine = root / "mine.toml"
    mine.write_text(to_toml(catalog), encoding="utf-8")
    made = {
        "neom": dict(game="neom", strategies=NEOM4, players=4),
        "mine": dict(game="neom", strategies=NEOM4, players=4, data=mine),
        "neom3": dict(game="neom", strategies=NEOM4[:3], players=3),
        "residential": dict(
            game="neom", strategies=NEOM4, players=4, rules={"neighborhood_through_any": 0}
        ),
        "tangram": dict(game="tangram", strategies=("greedy", "random"), players=2),
    }
    paths = {}
    for index, (name, options) in enumerate(made.items()):
        paths[name] = root / f"r{index}"  # folder names say nothing: labels must
        games = 12 if options["players"] == 3 else 8
        small_run(paths[name], seed=5, games=games, batch_size=4, **options)
    return paths


def report(*args) -> int:
    return main(["report", *map(str, args)])


# --- one game per report ------------------------------------------------------------------------


@pytest.mark.parametrize("order", [("tangram", "neom"), ("neom", "tangram")])
def test_a_report_of_runs_of_two_games_is_refused(runs, tmp_path, capsys, order):
    out = tmp_path / "report"
    code = report(runs[order[0]], runs[order[1]], "--out", out)
    one_line_error(capsys, code, "NEOM", "Tangram City", "one game")
    assert not out.exists()


def test_runs_on_different_catalogues_carry_their_own_labels(runs, tmp_path, capsys):
    out = tmp_path / "report"
    assert report(runs["neom"], runs["mine"], "--out", out) == 0
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "My catalogue" in html  # the second catalogue is named
    table = pl.read_csv(out / "tables" / "combined_strategies.csv")
    data_of = dict(table.select("run", "data").unique().iter_rows())
    assert len(data_of) == 2, data_of
    mine = [label for run, label in data_of.items() if run.startswith(runs["mine"].name)]
    assert mine == ["My catalogue (its file says: not a reconstruction)"], data_of
    theirs = [label for run, label in data_of.items() if run.startswith(runs["neom"].name)]
    assert theirs and "RECONSTRUCTED" in theirs[0]
    # The wide per-tile tables name both catalogues.
    for name in ("combined_cornerstones",):
        labels = set(pl.read_csv(out / "tables" / f"{name}.csv")["data"])
        assert any("My catalogue" in label for label in labels), labels


def test_runs_on_different_rules_are_labelled_with_their_rules(runs, tmp_path):
    out = tmp_path / "report"
    assert report(runs["neom"], runs["residential"], "--out", out) == 0
    table = pl.read_csv(out / "tables" / "combined_strategies.csv")
    labels = sorted(set(table["run"]))
    assert any("residential" in label for label in labels), labels
    assert not all("residential" in label for label in labels), labels


def test_tangram_bonus_tables_are_rules_not_interventions(runs, tmp_path):
    out = tmp_path / "report"
    assert report(runs["tangram"], "--out", out) == 0
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "intervention" not in html
    assert "planning bonus" in html


# --- the skill check ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "other, words",
    [
        ("neom3", ["--check", "players", "4", "3"]),
        ("residential", ["--check", "rules", "neighborhood"]),
        ("mine", ["--check", "catalogue"]),
        ("tangram", ["--check", "game", "tangram"]),
    ],
)
def test_check_needs_the_same_game_players_catalogue_and_rules(
    runs, tmp_path, capsys, other, words
):
    out = tmp_path / "report"
    code = report(runs["neom"], "--check", runs[other], "--out", out)
    one_line_error(capsys, code, *words)
    assert not out.exists()


# --- the manifest against the tables -----------------------------------------------------------


@pytest.mark.parametrize(
    "edit, words",
    [
        ({"players": 3}, ["players", "3", "4"]),
        ({"games": 7}, ["games", "7", "8"]),
        ({"rules_version": "neom-0"}, ["rules version", "neom-0"]),
        ({"game": "tangram"}, ["missing column"]),  # one line before this issue already
    ],
)
def test_a_hand_edited_manifest_is_refused(runs, tmp_path, capsys, edit, words):
    run = tmp_path / "run"
    shutil.copytree(runs["neom"], run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest.update(edit)
    (run / "manifest.json").write_text(json.dumps(manifest))
    one_line_error(capsys, report(run, "--out", tmp_path / "report"), *words)
    assert not (tmp_path / "report").exists()


# --- rules keys ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "neighborhoods=residential,neighborhoods=any",
        "neighborhood_through_any=1,neighborhoods=residential",
        "variant=standard,variant=beginner",
    ],
)
def test_a_rules_key_given_twice_is_refused(text):
    with pytest.raises(UserError, match="given twice"):
        parse_rules(text, "--candidate-rules")


def test_compare_refuses_a_repeated_rules_key_before_playing(tmp_path, capsys):
    out = tmp_path / "compare"
    argv = ["compare", "--games", "4", "--strategies", "random,random,random,random"]
    argv += ["--candidate-rules", "neighborhoods=residential,neighborhoods=any"]
    one_line_error(capsys, main([*argv, "--out", str(out)]), "neighborhoods", "given twice")
    assert not out.exists()
