"""Tangram City's skill check (issue 40 part 2, ``neom report RUN --check RUN2``): known answers
on small runs of the fast strategies (two greedy fields stand in for the two fields; the same
plants against the strong field itself, four tuned planners, are a slow test, the dead rule
against the 2-player strong field a fast one). A planted dominant
tile (the Small Triangle made a 3x3 block) and a planted dead rule (a balance bonus worth
nothing at every distance) are flagged in both fields and marked robust, in findings.json and
in the next steps' weights; a finding present in one field only is marked vanishes / appears
(planted effect tables: the data must match, so a real check run cannot lack a planted tile); a
check run of other data or players is refused in one line; ``--strategies strong`` is the
tuned planner set of the player count in every seat, at the planner's default search budget."""

import json

import polars as pl
import pytest
from run_helpers import placeholder_figures, small_run
from test_tangram_findings import DEAD_TABLE, PLANTED_TILE, dominant_tileset

from analysis.core.next_steps import ROBUSTNESS_WEIGHT
from analysis.core.report import Report, build_report
from analysis.core.robustness import APPEARS, REVERSED, ROBUST, VANISHES
from analysis.core.stats import Z95
from analysis.tangram import check as tangram_check
from sim.core.cli import main
from sim.core.strategies import seat_strategies
from strategies.tangram.registry import STRATEGIES

GAMES = 600
MAIN_FIELD = ("greedy", "greedy", "greedy", "random")
CHECK_FIELD = ("greedy", "greedy", "greedy", "greedy")


def _runs(folder, data, rules, check_field=CHECK_FIELD, check_games=GAMES):
    small_run(folder / "main", "tangram", MAIN_FIELD, 4, GAMES, 5, data=data, rules=rules)
    small_run(folder / "check", "tangram", check_field, 4, check_games, 6, data=data, rules=rules)
    with pytest.MonkeyPatch.context() as patch:
        placeholder_figures(patch)
        build_report(folder / "main", folder / "report", check=folder / "check")
    return folder


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """Both fields on the dominant tile set under the dead balance-bonus table."""
    folder = tmp_path_factory.mktemp("planted")
    dominant_tileset(folder / "dominant.toml")
    return _runs(folder, folder / "dominant.toml", {"balance_bonus": DEAD_TABLE})


@pytest.fixture(scope="module")
def planted_strong(tmp_path_factory):
    """The same plants, checked against the strong field itself (the 4-player tuned planner set
    in every seat)."""
    folder = tmp_path_factory.mktemp("planted_strong")
    dominant_tileset(folder / "dominant.toml")
    # by its name, so the run records the field's sets (the report names the field)
    return _runs(folder, folder / "dominant.toml", {"balance_bonus": DEAD_TABLE}, ("strong",), 400)


def pooled(folder) -> dict[tuple[str, str], dict]:
    items = json.loads((folder / "report" / "findings.json").read_text())
    return {(i["kind"], i["name"]): i for i in items if "strategy" not in i}


def test_a_planted_dominant_tile_is_flagged_in_both_fields_and_marked_robust(planted):
    tile = pooled(planted)[("tile", PLANTED_TILE)]
    assert tile["flag"] == "strong" and tile["check"]["flag"] == "strong"
    assert tile["robustness"] == ROBUST
    assert tile["check"]["lo"] > 0.02  # the check field's own interval, against its median tile
    marks = pl.read_csv(planted / "report" / "tables" / "check_tiles.csv")
    row = marks.filter(pl.col("name") == PLANTED_TILE).row(0, named=True)
    assert row["robustness"] == ROBUST and row["why"] == "strong in both fields"


def test_a_planted_dead_rule_is_dead_in_both_fields_and_marked_robust(planted):
    rule = pooled(planted)[("rule", "balance bonus")]
    assert rule["flag"] == "dead" and rule["check"]["flag"] == "dead"
    assert rule["robustness"] == ROBUST
    # findings.json keeps the reach itself in both fields (no seat can score the bonus)
    assert rule["effect"] == 0.0 and rule["check"]["effect"] == 0.0
    assert rule["check"]["n"] == 4 * GAMES  # the check field has no random seat


@pytest.mark.slow  # 400 games of four planners: about 90 s on one core
def test_the_planted_tile_and_dead_rule_are_robust_against_the_strong_field(planted_strong):
    """Issue 40's known answer against the strong field itself (measured: the Small Triangle
    +18 [+10, +26] pct-pts against the planners' median tile in 161 games)."""
    found = pooled(planted_strong)
    tile, rule = found[("tile", PLANTED_TILE)], found[("rule", "balance bonus")]
    assert tile["robustness"] == ROBUST and tile["check"]["flag"] == "strong"
    assert rule["robustness"] == ROBUST and rule["check"]["flag"] == "dead"
    page = (planted_strong / "report" / "index.html").read_text()
    assert "the strong field" in page and "Tangram City&#x27;s strong field: " in page


@pytest.fixture(scope="module")
def dead_rule_strong_2p(tmp_path_factory):
    """The dead balance bonus on the default tile set at 2 players: greedy against greedy, and
    the 2-player strong field (two tuned planners), 240 games each: 480 seats that cannot reach
    the bonus put the reach's 95% Wilson interval under 1% (its upper end 0.8%)."""
    folder = tmp_path_factory.mktemp("dead_2p")
    rules = {"balance_bonus": DEAD_TABLE}
    small_run(folder / "main", "tangram", ("greedy", "greedy"), 2, 240, 5, rules=rules)
    small_run(folder / "check", "tangram", ("strong",), 2, 240, 6, rules=rules)
    with pytest.MonkeyPatch.context() as patch:
        placeholder_figures(patch)
        build_report(folder / "main", folder / "report", check=folder / "check")
    return folder


def test_a_planted_dead_rule_is_robust_against_the_2_player_strong_field(dead_rule_strong_2p):
    """Issue 40's known answer for the dead rule against the strong field, fast: 240 games of
    two tuned planners (a few seconds on one core)."""
    rule = pooled(dead_rule_strong_2p)[("rule", "balance bonus")]
    assert rule["flag"] == "dead" and rule["check"]["flag"] == "dead"
    assert rule["robustness"] == ROBUST
    assert rule["effect"] == 0.0 and rule["check"]["effect"] == 0.0
    assert rule["check"]["n"] == 2 * 240  # every seat of the strong field is a planner
    page = (dead_rule_strong_2p / "report" / "index.html").read_text()
    assert "is the strong field" in page  # the check run recognised as the shipped field
    steps = pl.read_csv(dead_rule_strong_2p / "report" / "tables" / "next_steps.csv")
    row = steps.filter(pl.col("name") == "balance bonus").row(0, named=True)
    assert row["kind"] == "dead rule" and row["robustness"] == ROBUST


def test_the_marks_are_the_next_steps_robustness_weights(planted):
    steps = pl.read_csv(planted / "report" / "tables" / "next_steps.csv")
    assert steps["kind"][0] == "dead rule"  # dead rules still rank first
    for kind, name in (("dead rule", "balance bonus"), ("tile", PLANTED_TILE)):
        row = steps.filter((pl.col("kind") == kind) & (pl.col("name") == name)).row(0, named=True)
        assert row["robustness"] == ROBUST and row["weight"] == ROBUSTNESS_WEIGHT[ROBUST]
    # every step's weight is its finding's mark's (none is left at "no second field")
    assert set(steps["robustness"].drop_nulls()) <= set(ROBUSTNESS_WEIGHT)
    weights = [ROBUSTNESS_WEIGHT.get(m) for m in steps["robustness"].to_list()]
    assert steps["weight"].to_list() == [ROBUSTNESS_WEIGHT[None] if w is None else w
                                         for w in weights]  # fmt: skip


def test_the_report_shows_the_skill_check(planted):
    page = (planted / "report" / "index.html").read_text()
    assert "Robustness: do the conclusions survive skill?" in page
    assert "the field greedy" in page and "Rules reached (dead rules)" in page
    summary = (planted / "report" / "summary.md").read_text()
    assert "Robustness against the field greedy" in summary
    assert "Skill check (tiles, vs check)" in summary
    assert "runs/check" in summary  # the reproduce line simulates the check field too
    assert "0.5: no second field" not in page


def _table(names, effect, se, flag, n=2000, key="tile_name"):
    """A planted effect table in the shape ``robustness.marks`` reads."""
    effect, se = pl.Series(effect, dtype=pl.Float64), pl.Series(se, dtype=pl.Float64)
    return pl.DataFrame(
        {
            key: names,
            "n": [n] * len(names),
            "small": [False] * len(names),
            "flag": flag,
            "clusters": [n] * len(names),
            "effect": effect,
            "effect_lo": effect - Z95 * se,
            "effect_hi": effect + Z95 * se,
            "effect_se": se,
        }
    )


def test_a_finding_of_one_field_only_vanishes_or_appears(monkeypatch, tmp_path):
    """Planted tables: the Corner strong here and nothing in the other field (vanishes), the
    House strong only there (appears), a rule dead here and reached by 30% there (reversed);
    the marks reach findings.json's items, with the reach shown as a share."""
    names = ["Corner", "House", "Square"]
    here = {
        "tile": (_table(names, [0.2, 0.0, 0.0], [0.02] * 3, ["strong", "", ""]),
                 "tile_name", "effect"),
        "rule": (_table(["planning bonus"], [-0.01], [0.001], ["dead"], key="rule"),
                 "rule", "effect"),
        "rule effect": (_table(["fountains"], [0.0], [0.02], [""], key="rule"), "rule", "effect"),
    }  # fmt: skip
    there = {
        "tile": (_table(names, [0.0, 0.2, 0.0], [0.02] * 3, ["", "strong", ""]),
                 "tile_name", "effect"),
        "rule": (_table(["planning bonus"], [0.29], [0.01], [""], key="rule"), "rule", "effect"),
        "rule effect": here["rule effect"],
    }  # fmt: skip
    runs = {"main": here, "check": there}
    monkeypatch.setattr(tangram_check, "finding_tables", lambda report, run: runs[run])
    report = Report(tmp_path, "bh", 0.05, "Benjamini-Hochberg adjusted p < 0.05", 0.02, 30, "")
    report.items = [
        {"kind": "tile", "name": name, "flag": flag}
        for name, flag in zip(names, ["strong", None, None], strict=True)
    ] + [{"kind": "rule", "name": "planning bonus", "flag": "dead"}]
    marked = tangram_check.mark_findings(report, "main", "check")
    by_name = {(i["kind"], i["name"]): i for i in report.items}
    assert by_name[("tile", "Corner")]["robustness"] == VANISHES
    assert by_name[("tile", "House")]["robustness"] == APPEARS
    assert by_name[("tile", "House")]["check"]["flag"] == "strong"
    assert by_name[("tile", "Square")]["robustness"] == "unflagged"
    rule = by_name[("rule", "planning bonus")]
    assert rule["robustness"] == REVERSED
    assert rule["check"]["effect"] == pytest.approx(0.30)  # the reach, not reach minus 1%
    assert marked["rule effect"]["robustness"].to_list() == ["unflagged"]


@pytest.fixture(scope="module")
def small_runs(tmp_path_factory):
    """Tiny runs for the refusals: the default tile set at 4 and 3 players, and another set."""
    folder = tmp_path_factory.mktemp("small")
    dominant_tileset(folder / "dominant.toml")
    small_run(folder / "four", "tangram", MAIN_FIELD, 4, 40, 1)
    small_run(folder / "three", "tangram", MAIN_FIELD[1:], 3, 30, 1)
    small_run(folder / "other", "tangram", CHECK_FIELD, 4, 40, 1, data=folder / "dominant.toml")
    return folder


@pytest.mark.parametrize(
    ("other", "words"), [("three", "its players differs"), ("other", "its tile set differs")]
)
def test_a_check_run_of_other_players_or_data_is_refused_in_one_line(small_runs, capsys, other,
                                                                     words):  # fmt: skip
    code = main(["report", str(small_runs / "four"), "--check", str(small_runs / other),
                 "--out", str(small_runs / f"report-{other}")])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code != 0 and len(err.splitlines()) == 1, err
    assert words in err and "skill check" in err
    assert not (small_runs / f"report-{other}").exists()  # refused before writing anything


def test_the_strong_field_is_the_planner_at_its_default_budget_in_every_seat():
    """Tuned planner sets (test_tangram_tune_verify) tune value weights only: the check
    field's search budget is the default planner's."""
    default = STRATEGIES.by_name()["planner"].defaults
    for players in range(1, 6):
        seats = seat_strategies(STRATEGIES, ("strong",), players)
        assert [s.name for s in seats] == ["planner"] * players
        for seat in seats:
            assert tuple(seat.params[:2]) == default[:2]  # samples, candidates
