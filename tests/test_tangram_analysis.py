"""Tangram City analyses over stored tables: each figure recomputed independently from the
tables or the event log, intervals around their estimates, the report sections through the
report API, and the A/B comparison on the same deals."""

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from run_helpers import small_run

from analysis.core.load import open_run
from analysis.core.report import build_report
from analysis.tangram import tables
from analysis.tangram.compare import check_paired, paired_differences
from analysis.tangram.sections import add_sections, comparison_section
from sim.core.errors import UserError
from sim.tangram import GAME

GAMES = 120


def simulate(out, players, games, strategies, seed=1, events=False, **rules):
    """A Tangram City run folder through the generic runner."""
    strategies = tuple(strategies) * (players if len(strategies) == 1 else 1)
    small_run(out, "tangram", strategies, players, games, seed, events=events, rules=rules)


@pytest.fixture(scope="module")
def run_path(tmp_path_factory):
    out = tmp_path_factory.mktemp("tangram") / "run"
    simulate(out, 4, GAMES, ["greedy", "random", "random", "greedy"], seed=3, events=True)
    return out


@pytest.fixture(scope="module")
def run(run_path):
    return open_run(run_path)


def test_stored_tables_follow_the_record_dtypes(run):
    players = run.players.collect()
    assert players.height == 4 * GAMES
    assert {"game_id", "strategy_name", "win_share"} <= set(players.columns)
    assert set(GAME.columns("players")) <= set(players.columns)
    events = run.events.collect()
    assert {"game_id", "kind_name"} <= set(events.columns)
    shares = players.group_by("game_id").agg(pl.col("win_share").sum())["win_share"]
    assert np.allclose(shares.to_numpy(), 1.0)


def test_score_distribution(run):
    frame = tables.score_distribution(run)
    players = run.players.collect()
    assert frame["n"].sum() == players.height
    for row in frame.iter_rows(named=True):
        totals = players.filter(pl.col("seat") == row["seat"])["total"].to_numpy()
        assert row["total"] == pytest.approx(totals.mean())
        assert row["total_lo"] < row["total"] < row["total_hi"]
        assert row["win_share_lo"] <= row["win_share"] <= row["win_share_hi"]


def test_round_one_roles_in_four_player_games(run):
    """With 4 players: the start player, the next seat (own card) and two sharing seats."""
    roles = tables.round_one_roles(run)
    counts = dict(zip(roles["role"], roles["n"], strict=True))
    assert counts == {"start": GAMES, "own card": GAMES, "shared card": 2 * GAMES}
    diffs = tables.role_differences(roles)
    assert set(diffs["comparison"]) == {"start vs the others", "own card vs shared card"}
    assert (diffs["diff_lo"] < diffs["diff"]).all() and (diffs["diff"] < diffs["diff_hi"]).all()


def test_bonus_rates(run):
    frame = tables.bonus_rates(run)
    players = run.players.collect()
    for row in frame.iter_rows(named=True):
        part = players.filter(pl.col("strategy_name") == row["strategy_name"])
        assert row["planning_rate"] == pytest.approx((part["planning_bonus"] > 0).mean())
        assert row["level_rate"] == pytest.approx((part["red"] == part["green"]).mean())
        assert row["balance_bonus"] == pytest.approx(part["balance_bonus"].mean())


def test_tile_table_matches_the_event_log(run):
    """Each tile's declines, recomputed from the decline events, and its card positions from
    the card events."""
    frame = tables.tile_table(run)
    events = run.events.collect()
    declines = events.filter(pl.col("kind_name") == "decline").group_by("tile").len()
    expected = dict(zip(declines["tile"], declines["len"], strict=True))
    for row in frame.iter_rows(named=True):
        assert row["n"] == 4 * GAMES
        assert row["declines"] == expected.get(row["tile"], 0)
        assert row["early_n"] + row["late_n"] <= row["n"]
    cards = events.filter(pl.col("kind_name") == "card")
    early = cards.filter(pl.col("round") <= 2).group_by("tile").len()
    for tile, count in zip(early["tile"], early["len"], strict=True):
        assert frame.filter(pl.col("tile") == tile)["early_n"].item() == 4 * count
    assert frame["tile_name"].str.contains("!").sum() == 6
    assert frame["tileset"].str.contains("RECONSTRUCT").all()


@dataclass
class FakeReport:
    out: Path
    sections: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    tables: dict = field(default_factory=dict)
    figures: list = field(default_factory=list)

    def section(self, key, title, parts):
        assert all(isinstance(p, str) for p in parts)
        self.sections.append((key, title, parts))

    def table(self, name, frame):
        self.tables[name] = frame

    def figure(self, name, fig, alt):
        self.figures.append(name)
        return f'<img alt="{alt}">'


def test_sections_use_only_the_report_api(run, tmp_path):
    report = FakeReport(tmp_path)
    add_sections(report, run)
    assert [key for key, _, _ in report.sections] == [
        "tangram_scores",
        "tangram_start",
        "tangram_bonuses",
        "tangram_tiles",
    ]
    html = "".join("".join(parts) for _, _, parts in report.sections)
    assert "RECONSTRUCT" in html
    assert {"tangram_scores_by_seat", "tangram_tiles", "tangram_bonuses"} <= set(report.tables)
    assert report.findings and report.figures


def test_the_generic_report_carries_the_tangram_sections(run_path, tmp_path):
    index = build_report(run_path, tmp_path / "report")
    text = index.read_text()
    assert "Tangram City balance report" in text and "RECONSTRUCTED" in text
    assert (tmp_path / "report" / "tables" / "tangram_tiles.csv").is_file()
    assert "RECONSTRUCTED" in (tmp_path / "report" / "summary.md").read_text()


def test_a_b_on_the_same_deals(run_path, tmp_path):
    """Two bonus tables on the same deals: random players play identically under both, so the
    round scores do not move at all and the totals move by exactly the bonuses removed."""
    base = tmp_path / "a"
    no_bonus = tmp_path / "b"
    for out, options in (
        (base, {}),
        (no_bonus, {"planning_bonus": 0, "balance_bonus": (0, 0, 0, 0, 0, 0)}),
    ):
        simulate(out, 2, 40, ["random"], seed=9, events=False, **options)
    a, b = open_run(base), open_run(no_bonus)
    diffs = paired_differences(a, b, by=())
    row = diffs.row(0, named=True)
    assert row["n"] == 80
    assert row["rounds_total_diff"] == 0 and row["rounds_total_diff_hi"] == 0
    players = a.players.collect()
    removed = (players["planning_bonus"] + players["balance_bonus"]).mean()
    assert row["total_diff"] == pytest.approx(-removed)
    assert row["total_diff_lo"] < row["total_diff"] < row["total_diff_hi"]
    report = FakeReport(tmp_path)
    comparison_section(report, a, b, "printed", "no bonus")
    assert report.sections[0][0] == "tangram_ab"


def test_unpaired_runs_are_refused(run_path, tmp_path):
    other = tmp_path / "other"
    simulate(other, 4, GAMES, ["greedy", "random", "random", "greedy"], seed=4)
    with pytest.raises(UserError, match="runs not paired: seed differs"):
        check_paired(open_run(run_path), open_run(other))
