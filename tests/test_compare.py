"""``neom compare``: an A/B report of two catalogues (or rules readings) on the same deals."""

import json

import numpy as np
import polars as pl
import pytest
from catalog_fixture import tile, to_toml, valid_catalog
from run_helpers import placeholder_figures

from analysis.core.compare import paired_effect_shifts
from analysis.neom.compare import catalog_diff, parse_rules
from sim.core.cli import main
from sim.core.errors import UserError

SHIFT_KEYS = {"baseline", "candidate", "shift", "shift_lo", "shift_hi"}


@pytest.fixture(autouse=True)
def no_rendering(monkeypatch):
    """The reports here are checked by their files, tables and text, not their images."""
    placeholder_figures(monkeypatch)


def compare(tmp_path, baseline, candidate, *args):
    argv = ["compare"]
    if baseline is not None:
        argv += ["--baseline", str(baseline)]
    if candidate is not None:
        argv += ["--candidate", str(candidate)]
    argv += ["--players", "3", "--games", "30", "--strategies", "greedy,random,random"]
    return main([*argv, "--workers", "1", "--out", str(tmp_path / "report"), *args])


@pytest.fixture
def catalog(tmp_path):
    path = tmp_path / "base.toml"
    path.write_text(to_toml(valid_catalog()), encoding="utf-8")
    return path


def test_a_catalogue_against_itself_shows_exactly_zero_shift_everywhere(tmp_path, catalog, capsys):
    json_path = tmp_path / "items.json"
    assert compare(tmp_path, catalog, catalog, "--json", str(json_path)) == 0
    report = tmp_path / "report"
    assert capsys.readouterr().out.strip() == str(report / "index.html")
    summary = (report / "summary.md").read_text()
    assert "same catalogue and rules" in summary
    assert "0 other items moved" in summary
    assert "No strategy's win share moved significantly" in summary
    for name in ("strategies", "seats"):
        table = pl.read_csv(report / "tables" / f"{name}.csv")
        assert (table["win_shift"] == 0).all() and (table["score_shift"] == 0).all()
        assert (table["win_shift_lo"] == 0).all() and (table["win_shift_hi"] == 0).all()
    items = json.loads(json_path.read_text())
    assert items and json.loads((report / "findings.json").read_text()) == items
    kinds = {item["kind"] for item in items}
    assert {"cornerstone", "tile", "strategy", "seat"} <= kinds
    for item in items:
        assert {"kind", "name", "metric", "effect", "lo", "hi", "n", "flag"} | SHIFT_KEYS <= set(
            item
        )
        if item["shift"] is not None:
            assert item["shift"] == 0.0 and item["shift_lo"] == item["shift_hi"] == 0.0
            assert item["baseline"] == item["candidate"]
    assert "What changed" in (report / "index.html").read_text()


def test_a_changed_tile_opens_the_report_and_its_shift_is_paired(tmp_path, catalog):
    """The candidate adds 40 VP to a cornerstone: the diff names it, it is the primary
    (Holm) test, and its paired shift is large and significant."""
    data = valid_catalog()
    tile(data, "Tower 1")["vp"] = 43
    candidate = tmp_path / "cand.toml"
    candidate.write_text(to_toml(data), encoding="utf-8")
    greedy = ["--strategies", "greedy,greedy,greedy", "--games", "90"]
    assert compare(tmp_path, catalog, candidate, *greedy) == 0
    summary = (tmp_path / "report" / "summary.md").read_text()
    assert "changes 1 entry: Tower 1 (changed: vp: 3 → 43)" in summary
    items = pl.read_csv(tmp_path / "report" / "tables" / "items.csv")
    tower = items.filter(pl.col("tile_name") == "Tower 1").row(0, named=True)
    assert tower["primary"] and tower["shift"] > 0.2 and tower["shift_lo"] > 0
    assert "Changed cornerstone Tower 1: moved" in summary


def test_two_readings_of_the_same_catalogue_on_the_same_deals(tmp_path):
    """Issue 18: ``--baseline-rules`` / ``--candidate-rules`` compare two readings of one
    catalogue; the report says which readings in words."""
    code = compare(
        tmp_path, None, None, "--baseline-rules", "neighborhood_through_any=1",
        "--candidate-rules", "neighborhoods=residential",
    )  # fmt: skip
    assert code == 0
    summary = (tmp_path / "report" / "summary.md").read_text()
    assert "The two catalogues are identical" in (tmp_path / "report" / "index.html").read_text()
    assert "Rules reading: Neighborhoods: road chains may pass through any tile" in summary
    assert "→ Neighborhoods: road chains through Residential tiles only" in summary
    manifest = json.loads(
        (tmp_path / "report" / "runs" / "candidate" / "manifest.json").read_text()
    )
    assert manifest["rules"]["neighborhood_through_any"] == 0


def test_parse_rules_takes_names_flags_labels_and_values():
    assert parse_rules("neighborhoods=residential", "--x") == {"neighborhood_through_any": 0}
    assert parse_rules("neighborhood_through_any=1, variant=beginner", "--x") == {
        "neighborhood_through_any": 1, "variant": 3}  # fmt: skip
    with pytest.raises(UserError, match="--x 'neighborhoods=maybe': neighborhoods takes any"):
        parse_rules("neighborhoods=maybe", "--x")
    with pytest.raises(UserError, match="expected NAME=VALUE"):
        parse_rules("colour=red", "--x")


def test_catalog_diff_names_added_removed_and_changed_fields():
    base = b'[[tiles]]\nname = "A"\nvp = 1\n\n[[tiles]]\nname = "B"\nvp = 2\n'
    cand = b'[[tiles]]\nname = "A"\nvp = 1\nincome = 1\n\n[[tiles]]\nname = "C"\nvp = 2\n'
    rows = catalog_diff(base, cand)
    assert rows == [
        {"kind": "tile", "name": "A", "change": "changed", "fields": "income: – → 1"},
        {"kind": "tile", "name": "B", "change": "removed", "fields": ""},
        {"kind": "tile", "name": "C", "change": "added", "fields": ""},
    ]
    assert catalog_diff(base, base) == []


def test_pairing_removes_what_the_twins_share():
    """A shift measured on twin games has the interval of the per-game differences: with the
    same seats in the group on both sides and a +0.1 change in each residual, the shift is
    exactly 0.1 with a zero-width interval, however noisy the residuals are."""
    rng = np.random.default_rng(0)
    n = 400
    base = pl.DataFrame(
        {"game_id": np.arange(n), "tile_name": ["T"] * n, "residual": rng.normal(0, 0.4, n)}
    )
    cand = base.with_columns(pl.col("residual") + 0.1)
    games = pl.DataFrame({"game_id": np.arange(n), "deal": np.arange(n) // 4})
    row = paired_effect_shifts(base, cand, games).row(0, named=True)
    assert row["shift"] == pytest.approx(0.1)
    assert row["shift_hi"] - row["shift_lo"] == pytest.approx(0.0, abs=1e-12)
    assert row["se_b"] > 0.01  # each side alone is noisy


@pytest.mark.parametrize(
    "args, message",
    [
        (["--baseline", "nope.toml"], "--baseline nope.toml: no such catalogue file"),
        (["--level", "2"], "--level 2.0: must be between 0 and 1"),
        (["--candidate-rules", "neighborhoods=maybe"], "--candidate-rules 'neighborhoods=maybe'"),
    ],
)
def test_bad_options_are_one_line_errors(tmp_path, catalog, capsys, args, message):
    assert compare(tmp_path, catalog, catalog, *args) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "report").exists()
