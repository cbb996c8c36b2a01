"""The report: every section, figure and table of a synthetic run; self-contained HTML; the
command line; and the cornerstone flags' false-discovery behaviour."""

import re
from pathlib import Path

import polars as pl
import pytest
from run_helpers import placeholder_figures, synthetic_report

from analysis.core.load import open_run
from analysis.core.report import build_report
from analysis.neom.cornerstones import cornerstone_table
from analysis.neom.synthetic import write_run
from sim.core.cli import main

SECTIONS = (
    "glance", "findings", "strategies", "seats", "closeness", "cornerstones", "tiles", "dead",
    "economy", "disasters", "flow", "scores",
)  # fmt: skip
FIGURES = (
    "strategy_win_share", "strategy_matrix", "seat_win_share", "margin_of_victory",
    "cornerstone_effects", "tile_effects", "coins_by_generation", "score_distributions",
    "score_breakdown", "findings", "economy", "action_mix",
)  # fmt: skip
TABLES = (
    "strategies", "strategy_effects", "head_to_head", "ratings", "seats", "seat_balance",
    "closeness", "cornerstones", "cornerstones_by_strategy", "tiles", "tiles_by_strategy",
    "dead_tiles", "coins_by_generation", "scores", "disasters", "disaster_frequency",
    "goods_by_generation", "goods", "action_mix", "dominated_tiles", "disaster_effects",
)  # fmt: skip


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """600 games of greedy (+0.3 SD) and random seats, cornerstone 3 planted strong, and its
    whole report (figures rendered): built once for this file and test_analysis_findings."""
    return synthetic_report(tmp_path_factory)


@pytest.fixture(scope="module")
def run_path(shared):
    return shared[0]


@pytest.fixture(scope="module")
def report(shared):
    return shared[1]


def test_report_has_every_section_figure_and_table(report):
    out = report.parent
    text = report.read_text(encoding="utf-8")
    for section in SECTIONS:
        assert f'id="{section}"' in text
    for name in FIGURES:
        assert (out / "figures" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert text.count('src="data:image/png;base64,') == len(FIGURES)
    for name in TABLES:
        assert pl.read_csv(out / "tables" / f"{name}.csv").height > 0
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "RECONSTRUCTED" in summary and "Headline findings" in summary
    assert re.search(r"Closeness \(4 players\): half the games are won by \d+ VP or less", summary)


def test_report_opens_with_identity_and_headlines(report, run_path):
    text = report.read_text(encoding="utf-8")
    assert 'class="notice">RECONSTRUCTED' in text
    assert text.index("RECONSTRUCTED") < text.index('id="strategies"')
    assert re.search(r"greedy wins \d+\.\d% \[\d+\.\d, \d+\.\d\] of 4-player games", text)
    assert re.search(r"Seats in 4-player games: χ²\(3\) = \d+\.\d\d, p = 0\.\d+", text)
    boosted = open_run(run_path).tile_name(3)
    assert re.search(
        rf"cornerstones? flagged strong against the median cornerstone: {re.escape(boosted)} "
        r"\(\+\d+\.\d",
        text,
    )


def test_win_share_columns_say_so(report):
    """Issue 27: the cornerstone table's placed / drafted-not-placed / not-drafted columns are
    win shares, and their headers say it."""
    text = report.read_text(encoding="utf-8")
    section = text[text.index('id="cornerstones"') : text.index('id="tiles"')]
    for header in ("win share: placed", "win share: drafted, not placed", "win share: not drafted"):
        assert f"<th>{header}" in section, header


def test_report_html_needs_nothing_external(report):
    text = report.read_text(encoding="utf-8")
    assert not re.search(r"<(link|script)\b", text)
    assert not re.search(r"(src|href)=\"(?!data:|#)", text)
    assert "http://" not in text and "https://" not in text


def test_report_without_events_explains_missing_tiles(tmp_path, monkeypatch):
    placeholder_figures(monkeypatch)  # its text and which figure files it writes are checked
    run = write_run(tmp_path / "run", n_games=200, events=False)
    text = build_report(run, tmp_path / "out").read_text(encoding="utf-8")
    assert "no event log" in text
    assert not (tmp_path / "out" / "figures" / "tile_effects.png").exists()
    assert "mirror games" in text  # one strategy only


def test_report_command(run_path, tmp_path, capsys, monkeypatch):
    placeholder_figures(monkeypatch)  # the command's output and the correction it applies
    out = tmp_path / "cli"
    assert main(["report", str(run_path), "--out", str(out), "--correction", "holm"]) == 0
    assert capsys.readouterr().out.strip() == str(out / "index.html")
    assert "Holm adjusted p" in (out / "index.html").read_text(encoding="utf-8")


def test_report_command_bad_run(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope" in err and "Traceback" not in err
    assert main(["report", str(tmp_path), "--level", "2"]) == 1
    assert "--level" in capsys.readouterr().err


def test_flags_respect_the_false_discovery_rate(tmp_path):
    """With identical strategies and no real cornerstone effect, Benjamini-Hochberg at 5% flags
    anything in at most about 5% of runs; a cornerstone given a real advantage is flagged."""
    repetitions = 40
    runs_with_flags = 0
    for seed in range(repetitions):
        run = open_run(write_run(tmp_path / f"null{seed}", n_games=400, seed=seed, events=False))
        runs_with_flags += (cornerstone_table(run)["flag"] != "").any()
    # Binomial(40, 0.05): P(more than 6) < 0.01; the seeds are fixed, so this cannot flake.
    assert runs_with_flags <= 6
    strong = open_run(write_run(tmp_path / "strong", n_games=800, boosts={11: 1.0}, events=False))
    table = cornerstone_table(strong)
    assert table.filter(pl.col("flag") == "strong")["tile"].to_list() == [11]


def test_make_run_reports_the_strong_field_checked_against_the_archetypes():
    """Issue 27, part 1, and issue 39: ``make run`` plays the strong field first (designers
    read it first) and the archetype field too (as many games, on the same deals); the report
    marks every finding against it; RUN_CHECK_STRATEGIES= skips it."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    dry = subprocess.run(["make", "-n", "-s", "-C", str(root), "run", "RUN_GAMES=300"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    lines = [line for line in dry.replace("\\\n", " ").splitlines() if "neom " in line]
    simulate = [line for line in lines if " simulate " in line]
    assert len(simulate) == 2 and "--strategies strong" in simulate[0]
    assert "--strategies greedy,builder,merchant,industrialist" in simulate[1]
    assert all("--games 300" in line and "--seed 1" in line for line in simulate)
    out = simulate[1].split("--out ")[1].split()[0]
    assert f"--check {out}" in lines[-1] and " report " in lines[-1]
    plain = subprocess.run(["make", "-n", "-s", "-C", str(root), "run", "RUN_CHECK_STRATEGIES="],
                           capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "--check" not in plain and plain.count(" simulate ") == 1


def test_the_report_and_the_balance_usage_goal_read_one_usage_table(run_path, report):
    """Issue 38: the report's usage table (tables/usage.csv) and the figures `neom balance
    --goal usage` steers by are one table: for every cornerstone and tile the run offered,
    the same kept and built shares and intervals, and the same keepers."""
    from analysis.neom import balance as B

    usage = pl.read_csv(report.parent / "tables" / "usage.csv")
    run = open_run(run_path)
    setting = B.Setting(strategies=("greedy",) * 4, players=4, games=600, seed=1)
    offered = usage.filter(pl.col("offered") > 0)
    assert {"cornerstone", "tile"} <= set(offered["kind"])
    for row in offered.iter_rows(named=True):
        got = B.report_usage(run, row["tile_name"], row["kind"], setting)
        for key, column in (("kept", "kept_rate"), ("built", "built_rate")):
            want = [row[column], row[f"{column}_lo"], row[f"{column}_hi"]]
            assert got[key] == pytest.approx(want, nan_ok=True), (row["tile_name"], key)
        assert got["n"] == row["kept"]


@pytest.mark.parametrize("label", ["", "Reconstructed data: not the published game"])
def test_png_bytes_are_savefigs(label):
    """png_bytes skips savefig's layout-only pass (a fifth of a figure's CPU) and must still
    write savefig's file: the same pixels, text chunks (the data label) and resolution."""
    import io

    import numpy as np

    from analysis.core import figures

    def figure():
        values = np.linspace(-0.2, 0.3, 12)
        frame = pl.DataFrame({"name": [f"Tile {i}" for i in range(12)], "x": values,
                              "x_lo": values - 0.1, "x_hi": values + 0.1,
                              "flag": ["strong", "", "weak"] * 4})  # fmt: skip
        return figures.forest(frame, "name", "x", "Effect", "win share")

    fig = figure()
    if label:
        fig.suptitle(label, fontsize=8, color="#a40000")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=figures.DPI,
                metadata={"Description": label} if label else None)  # fmt: skip
    assert figures.png_bytes(figure(), label) == buffer.getvalue()
