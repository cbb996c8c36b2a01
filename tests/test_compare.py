"""``neom compare``: A/B report of two catalogues played on the same seeds."""

import polars as pl
import pytest
from catalog_fixture import tile, to_toml, valid_catalog

from analysis.neom.compare import effect_shifts, verdicts
from sim.core.cli import main


def compare(tmp_path, baseline, candidate, *args):
    argv = ["compare", "--baseline", str(baseline), "--candidate", str(candidate)]
    argv += ["--players", "3", "--games", "30", "--strategies", "greedy,random,random"]
    return main([*argv, "--workers", "1", "--out", str(tmp_path / "report"), *args])


@pytest.fixture
def catalog(tmp_path):
    path = tmp_path / "base.toml"
    path.write_text(to_toml(valid_catalog()), encoding="utf-8")
    return path


def test_a_catalogue_against_itself_reports_no_change(tmp_path, catalog, capsys):
    assert compare(tmp_path, catalog, catalog) == 0
    report = tmp_path / "report"
    assert capsys.readouterr().out.strip() == str(report / "index.html")
    summary = (report / "summary.md").read_text()
    assert "No strategy's win share moved significantly" in summary
    assert "FIXED" not in summary and "Newly flagged" not in summary
    for name in ("strategies", "seats"):
        table = pl.read_csv(report / "tables" / f"{name}.csv")
        assert (table["win_shift"] == 0).all() and (table["score_shift"] == 0).all()
    for name in ("cornerstones_shifts", "tiles_shifts"):
        shifts = pl.read_csv(report / "tables" / f"{name}.csv").drop_nulls("shift")
        assert shifts.height > 0 and (shifts["shift"] == 0).all()
        assert (shifts["flag"].fill_null("") == shifts["flag_cand"].fill_null("")).all()
    assert "Did the change fix the imbalance?" in (report / "index.html").read_text()


def test_a_changed_tile_is_matched_by_name_and_its_shift_reported(tmp_path, catalog):
    """The candidate renames nothing but adds 40 VP to a cornerstone: same names, new effect."""
    data = valid_catalog()
    tile(data, "Tower 1")["vp"] = 43
    candidate = tmp_path / "cand.toml"
    candidate.write_text(to_toml(data), encoding="utf-8")
    greedy = ["--strategies", "greedy,greedy,greedy", "--games", "60"]
    assert compare(tmp_path, catalog, candidate, *greedy) == 0
    shifts = pl.read_csv(tmp_path / "report" / "tables" / "cornerstones_shifts.csv")
    tower = shifts.filter(pl.col("tile_name") == "Tower 1").row(0, named=True)
    assert tower["shift"] > 0.2


def shift_table(flags_before, flags_after, effects_after):
    names = [f"T{i}" for i in range(len(flags_before))]

    def table(flags, effects):
        return pl.DataFrame(
            {
                "tile_name": names,
                "flag": flags,
                "effect": effects,
                "effect_lo": [e - 0.1 for e in effects],
                "effect_hi": [e + 0.1 for e in effects],
                "effect_q": [0.01] * len(names),
            }
        )

    return effect_shifts(
        table(flags_before, [0.3, 0.3, -0.3, 0.0]), table(flags_after, effects_after)
    )


def test_verdicts_name_fixed_still_flagged_and_new_flags():
    shifts = shift_table(
        ["strong", "strong", "weak", ""], ["", "strong", "weak", "strong"], [0.0, 0.3, -0.3, 0.4]
    )
    lines = verdicts(shifts, "cornerstones")
    assert lines[0].startswith("Cornerstone T0 (baseline: strong): FIXED: no longer flagged")
    assert "-30.0 [" in lines[0]
    assert "T1 (baseline: strong): STILL flagged strong" in lines[1]
    assert "T2 (baseline: weak): STILL flagged weak" in lines[2]
    assert lines[3] == "Newly flagged strong in the candidate: T3."
    # Independent standard errors: each interval is +-0.1 wide, the shift's sqrt(2) times that.
    t0 = shifts.filter(pl.col("tile_name") == "T0").row(0, named=True)
    assert t0["shift_hi"] - t0["shift"] == pytest.approx(0.1 * 2**0.5)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--baseline", "nope.toml"], "--baseline nope.toml: no such catalogue file"),
        (["--level", "2"], "--level 2.0: must be between 0 and 1"),
    ],
)
def test_bad_options_are_one_line_errors(tmp_path, catalog, capsys, args, message):
    assert compare(tmp_path, catalog, catalog, *args) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "report").exists()


def test_an_unflagged_item_with_an_inconclusive_shift_is_not_called_fixed():
    shifts = shift_table(["strong", "", "", ""], [""] * 4, [0.25, 0.3, -0.3, 0.0])
    (line,) = verdicts(shifts, "tiles")
    assert "no longer flagged, but the shift is not significant" in line
