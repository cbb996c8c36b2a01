"""Known-answer tests of the findings a designer acts on (issue 19): a planted strong tile is
flagged, too small a sample never is, fair seats pass the seat test about 95% of the time,
intervals are cluster-robust and honest at small n, findings.json has the issue's shape, and
1-player runs get a whole report."""

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from run_helpers import placeholder_figures, synthetic_report

from analysis.core.load import open_run
from analysis.core.report import build_report
from analysis.core.stats import (
    band_p_value,
    cluster_mean,
    seat_chi_square,
    spearman_interval,
    t_quantile,
)
from analysis.core.tabulate import Flagging, effect_table, sign_disagreements, with_band_flags
from analysis.neom import tiles
from analysis.neom.synthetic import write_run

CATALOG = Path(__file__).resolve().parent.parent / "sim" / "neom" / "data" / "default_catalog.toml"
FINDING_KEYS = {"kind", "name", "metric", "effect", "lo", "hi", "n", "flag"}


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """A synthetic run in which one generation tile (the 5th of Generation 2) gives its
    selector a real advantage; every other tile does nothing."""
    root = tmp_path_factory.mktemp("planted")
    # The decks are the catalogue's: a few games name the target (as in the power test below).
    probe = open_run(write_run(root / "probe", n_games=8, catalog_path=CATALOG, seed=3))
    target = int(probe.tables.deck(2)[4])
    path = root / "run"
    write_run(path, n_games=1200, catalog_path=CATALOG, seed=3, tile_boosts={target: 1.0})
    return open_run(path), target


def test_a_planted_strong_tile_is_flagged_and_nothing_else(planted):
    run, target = planted
    table = tiles.tile_table(run)
    flagged = table.filter(pl.col("flag") != "")
    assert flagged["tile"].to_list() == [target]
    row = flagged.row(0, named=True)
    assert row["flag"] == "strong" and row["effect_lo"] > 0.02 and row["n"] >= 100


def test_a_tile_below_the_minimum_sample_is_never_flagged(planted):
    """The same planted tile with a minimum sample above its seat count: shown, not flagged."""
    run, target = planted
    table = tiles.tile_table(run, Flagging(min_n=100_000))
    assert (table["flag"] == "").all() and table["small"].all()
    assert table.filter(pl.col("tile") == target)["effect"][0] > 0.05
    # A tiny group that always wins: huge effect, still greyed and never flagged, and its
    # interval is not zero-width (the variance is floored at the binomial one).
    frame = pl.DataFrame(
        {
            "item": ["tiny"] * 6 + ["big"] * 400,
            "residual": [0.75] * 6 + list(np.resize([0.75, -0.25, -0.25, -0.25], 400)),
            "expected": [0.25] * 406,
            "deal": list(range(406)),
        }
    )
    flagged = with_band_flags(effect_table(frame, ["item"]), Flagging(min_n=100)).sort("item")
    tiny = flagged.filter(pl.col("item") == "tiny").row(0, named=True)
    assert tiny["small"] and tiny["flag"] == "" and math.isnan(tiny["effect_p"])
    # 6 wins in 6 at an expected 1/4: the exact (Clopper-Pearson) interval for the share is
    # [0.54, 1], so the effect's cannot honestly start above 0.54 - 0.25.
    assert tiny["effect_lo"] <= 0.30 and tiny["effect_hi"] - tiny["effect_lo"] > 0.4
    assert tiny["effect_hi"] <= 0.75 + 1e-12  # clipped to what a win share can reach


def test_band_flags_need_the_whole_interval_outside_the_band():
    se = 0.01
    # Effect 3 pct-pts, interval about [1, 5]: outside 0 but not outside +-2: not flagged.
    assert band_p_value(0.03, se, 1000, 0.02) > 0.05
    assert band_p_value(0.05, se, 1000, 0.02) < 0.05  # interval about [3, 7]
    assert band_p_value(0.01, se, 1000, 0.02) == 1.0  # the estimate inside the band
    frame = pl.DataFrame(
        {"item": ["a", "b"], "n": [500, 500], "clusters": [500, 500],
         "effect": [0.03, -0.06], "effect_se": [se, se]}
    )  # fmt: skip
    flags = with_band_flags(frame, Flagging(band=0.02))["flag"].to_list()
    assert flags == ["", "weak"]


def test_cluster_robust_interval_counts_a_replayed_deal_once():
    """Four identical copies of each value (one deal replayed four times) carry the
    information of one value: the cluster-robust standard error is twice the naive one."""
    rng = np.random.default_rng(0)
    values = rng.normal(size=500)
    copies = np.repeat(values, 4)
    clustered = cluster_mean(copies, np.repeat(np.arange(500), 4))
    naive = cluster_mean(copies, np.arange(2000))
    assert clustered["mean"] == pytest.approx(values.mean())
    assert clustered["se"] == pytest.approx(2 * naive["se"], rel=0.01)
    one = cluster_mean(values, np.arange(500))
    assert clustered["se"] == pytest.approx(one["se"], rel=1e-9)
    assert t_quantile(10) == pytest.approx(2.228139, abs=1e-5)


def test_fair_seats_pass_the_seat_test_about_95_percent_of_the_time():
    """Fair 4-player seats (ties included, rotated deals as clusters): the Wald chi-square
    rejects at 5% in about 5% of repeated runs."""
    rng = np.random.default_rng(7)
    repetitions, deals, players = 600, 150, 4
    rejected = 0
    for _ in range(repetitions):
        scores = rng.normal(size=(deals, 1, players)) + 0.8 * rng.normal(
            size=(deals, players, players)
        )
        scores = np.round(scores * 3).reshape(deals * players, players)
        best = scores.max(axis=1, keepdims=True)
        winners = scores == best
        shares = winners / winners.sum(axis=1, keepdims=True)
        test = seat_chi_square(shares, np.repeat(np.arange(deals), players))
        rejected += test["p"] < 0.05
    rate = rejected / repetitions
    # Binomial(600, 0.05) lies in [0.027, 0.073] with probability > 0.99; fixed seed.
    assert 0.027 <= rate <= 0.073, rate


def test_fair_seats_are_not_flagged_in_synthetic_runs(tmp_path):
    """Through the whole pipeline: synthetic runs with identical strategies name no best or
    worst seat in about 95% of runs."""
    from analysis.core import seats

    significant = 0
    for seed in range(30):
        run = open_run(write_run(tmp_path / f"r{seed}", n_games=200, seed=seed, events=False,
                                 shared_deals=True))  # fmt: skip
        row = seats.balance(run, n_boot=20).row(0, named=True)
        significant += row["significant"]
        if not row["significant"]:
            assert row["best_seat"] is None
    assert significant <= 5  # Binomial(30, 0.05): P(> 5) < 0.01; fixed seeds


def test_sign_disagreements_need_both_signs_significant():
    table = pl.DataFrame(
        {
            "tile_name": ["A", "A", "B", "B"],
            "strategy_name": ["greedy", "builder", "greedy", "builder"],
            "effect": [0.05, -0.05, 0.05, -0.001],
            "effect_p0": [1e-6, 1e-6, 1e-6, 0.9],
            "n": [1000, 1000, 1000, 1000],
        }
    )
    out = sign_disagreements(table, "tile_name")
    assert out.to_dicts() == [{"tile_name": "A", "positive": "greedy", "negative": "builder"}]
    assert sign_disagreements(table.with_columns(pl.lit(50).alias("n")), "tile_name").height == 0


def test_spearman_interval_matches_scipy_and_covers():
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    y = x + rng.normal(size=40)
    result = spearman_interval(x, y)
    from scipy.stats import spearmanr

    assert result["rho"] == pytest.approx(spearmanr(x, y).statistic)
    assert result["lo"] < result["rho"] < result["hi"]
    assert math.isnan(spearman_interval([1, 2], [2, 1])["rho"])


def test_findings_json_has_the_issue_shape(tmp_path_factory):
    # The report tests/test_report.py reads too (600 games, cornerstone 3 planted strong).
    run, index = synthetic_report(tmp_path_factory)
    out = index.parent
    items = json.loads((out / "findings.json").read_text())
    assert isinstance(items, list) and items
    kinds = {item["kind"] for item in items}
    assert kinds == {"cornerstone", "tile", "disaster", "seat", "strategy"}
    for item in items:
        # A flagged cornerstone or tile also says what to do about it (issue 26, part 3).
        next_step = (
            {"next_step", "vp_equivalent", "vp_basis"}
            if item["flag"] and "strategy" not in item
            else set()
        )
        optional = {"strategy", "data", "links"} | next_step
        keys = FINDING_KEYS | {"robustness"}
        assert keys <= set(item) <= keys | optional
        # No second field: no robustness mark (issue 27, part 1).
        assert item["robustness"] is None
        assert next_step <= set(item) or item["kind"] not in ("cornerstone", "tile", "disaster")
        assert item["flag"] in ("strong", "weak", None)
        assert item["data"].startswith("synthetic")  # the run is marked a reconstruction
    per_strategy = [item for item in items if "strategy" in item]
    assert {item["strategy"] for item in per_strategy} == {"greedy", "random"}
    strong = [i for i in items if i["flag"] == "strong" and i["kind"] == "cornerstone"]
    assert [i["name"] for i in strong if "strategy" not in i] == [open_run(run).tile_name(3)]
    # Every CSV and PNG says the data is a reconstruction.
    for csv in (out / "tables").glob("*.csv"):
        frame = pl.read_csv(csv)
        assert frame.height == 0 or frame["data"][0].startswith("synthetic"), csv
    from PIL import Image

    for png in (out / "figures").glob("*.png"):
        assert Image.open(png).info["Description"].startswith("synthetic")


def test_a_one_player_run_gets_a_whole_report(tmp_path):
    """Issue 21 item 4: every 1-player report crashed ('yerr' must not contain negative
    values) and left a half-written folder."""
    run = write_run(tmp_path / "solo", n_games=60, n_players=1, catalog_path=CATALOG)
    index = build_report(run, tmp_path / "out")
    text = index.read_text(encoding="utf-8")
    assert 'id="seats"' in text and "mirror games" in text
    assert (tmp_path / "out" / "findings.json").is_file()


def test_the_rebuilt_start_money_is_the_engines():
    from sim.neom import engine

    assert tiles.START_MONEY == engine.START_MONEY


def test_dead_tiles_name_tiles_never_dealt_and_never_taken(tmp_path):
    run = open_run(write_run(tmp_path / "run", n_games=200, catalog_path=CATALOG))
    dead = tiles.dead_tiles(run)
    not_dealt = dead.filter(pl.col("why").str.starts_with("never dealt"))
    # Synthetic decks deal the first 32 tiles of each generation: the rest are never dealt.
    assert not_dealt.height > 0 and (not_dealt["seen"] == 0).all()
    assert (dead["placed"] < tiles.RARE_SHARE * 200).all()


def test_several_runs_and_the_skill_check_sections(tmp_path, monkeypatch):
    """``neom report RUN1 RUN2 --check RUN3``: the combined section sets every run side by
    side; the check section correlates the effects and lists what changes."""
    from sim.core.cli import main

    placeholder_figures(monkeypatch)  # the sections' tables and text are checked, not images

    runs = []
    for name, players, boosts in (
        ("p4", 4, {3: 1.5}),
        ("p3", 3, {3: 1.5}),
        ("strong", 4, {3: 1.5}),
    ):
        runs.append(write_run(tmp_path / name, n_games=600, n_players=players, boosts=boosts,
                              catalog_path=CATALOG, seed=len(runs)))  # fmt: skip
    out = tmp_path / "out"
    assert main(["report", str(runs[0]), str(runs[1]), "--check", str(runs[2]), "--out",
                 str(out)]) == 0  # fmt: skip
    text = (out / "index.html").read_text(encoding="utf-8")
    assert 'id="combined"' in text and 'id="check"' in text
    combined = pl.read_csv(out / "tables" / "combined_cornerstones.csv")
    assert {"effect_0", "effect_1"} <= set(combined.columns)
    correlation = pl.read_csv(out / "tables" / "check_correlation.csv")
    assert set(correlation["kind"]) == {"cornerstone", "tile", "disaster"}
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "Skill check (cornerstones, vs strong): Spearman" in summary


def test_power_by_disjoint_deal_blocks(tmp_path):
    """analysis.neom.power on a synthetic comparison whose candidate gives one tile's
    selectors a large advantage: detected in nearly every block of 400 games; a tile that did
    not change is detected at about the 5% level."""
    from analysis.neom.power import power

    folder = tmp_path / "cmp"
    target = int(open_run(write_run(tmp_path / "probe", n_games=8, catalog_path=CATALOG))
                 .tables.deck(2)[4])  # fmt: skip
    for side, boosts in (("baseline", {}), ("candidate", {target: 0.8})):
        write_run(folder / "runs" / side, n_games=2400, catalog_path=CATALOG, seed=11,
                  tile_boosts=boosts, shared_deals=True)  # fmt: skip
    name = open_run(folder / "runs" / "baseline").tile_name(target)
    result = power(folder, name, [400])
    assert result["blocks"][0]["compare_verdict_power"] >= 0.8
    other = open_run(folder / "runs" / "baseline").tile_name(target + 1)
    null = power(folder, other, [100])["blocks"][0]
    assert null["win_power"] <= 0.2


def test_vp_by_generation_is_shown_only_when_the_run_has_it(tmp_path):
    """Game flow: coins by generation from the log always; VP by generation only when the
    players table has score_gen1 and score_gen2 recorded."""
    from analysis.neom import flow

    path = write_run(tmp_path / "run", n_games=200, catalog_path=CATALOG)
    assert flow.vp_by_generation(open_run(path)) is None
    coins = flow.coins_by_generation(open_run(path))
    assert sorted(coins["generation"].unique().to_list()) == [1, 2, 3]
    # A run whose players table has the two columns recorded (its batch file rewritten and
    # listed again, as if the run had written it).
    from analysis.core.report import Report
    from analysis.neom.report import _flow_section
    from sim.core.store import file_entry

    batch = path / "players" / "batch-000000.parquet"
    pl.read_parquet(batch).with_columns(
        (pl.col("total") // 3).cast(pl.Int16).alias("score_gen1"),
        (2 * pl.col("total") // 3).cast(pl.Int16).alias("score_gen2"),
    ).write_parquet(batch)
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["files"]["players/batch-000000.parquet"] = file_entry(batch.read_bytes(), True)
    (path / "manifest.json").write_text(json.dumps(manifest))
    run = open_run(path)
    vp = flow.vp_by_generation(run)
    assert vp.height == 3 and vp.sort("generation")["vp"].is_sorted()
    for folder in ("figures", "tables"):
        (tmp_path / "out" / folder).mkdir(parents=True)
    report = Report(tmp_path / "out")
    _flow_section(report, run)
    assert (tmp_path / "out" / "figures" / "vp_by_generation.png").is_file()
    assert pl.read_csv(tmp_path / "out" / "tables" / "vp_by_generation.csv").height == 3
