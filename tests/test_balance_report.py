"""The report points to the fix (issue 26, part 3): each flagged cornerstone or tile gets its VP
equivalent and the commands that fix or test it, in the findings and in findings.json."""

import json
import re
from pathlib import Path

import pytest

from analysis.core.load import open_run
from analysis.core.report import build_report
from analysis.neom.next_step import win_share_per_vp
from analysis.neom.synthetic import SCORE_SD, write_run

CATALOG = Path(__file__).resolve().parent.parent / "sim" / "neom" / "data" / "default_catalog.toml"
BOOST = 1.0  # score standard deviations for a seat that drafted and placed cornerstone 3


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    run = write_run(
        tmp_path_factory.mktemp("next") / "run", n_games=800, boosts={3: BOOST},
        catalog_path=CATALOG,
    )  # fmt: skip
    return run, build_report(run, tmp_path_factory.mktemp("next") / "report")


def test_a_flagged_cornerstone_gets_its_vp_equivalent_and_the_commands(reported):
    run_path, index = reported
    run = open_run(run_path)
    name = run.tile_name(3)
    summary = (index.parent / "summary.md").read_text(encoding="utf-8")
    line = next(x for x in summary.splitlines() if x.startswith(f"- Next step: {name} "))
    vp = float(re.search(r"is about (\d+\.\d) VP too strong", line).group(1))
    # Planted: +BOOST score sd for the drafters who place it (synthetic.PLACE_CHANCE = 0.6).
    planted = 0.6 * BOOST * SCORE_SD
    assert planted / 2 < vp < planted * 2, line
    strategies = ",".join(run.strategy_names)
    assert f"`neom balance '{name}' --players 4 --strategies {strategies}`" in line
    assert f"`neom experiment cornerstone '{name}' --mode ban --players 4 --strategies" in line
    items = json.loads((index.parent / "findings.json").read_text(encoding="utf-8"))
    mine = next(i for i in items if i["kind"] == "cornerstone" and i["name"] == name
                and "strategy" not in i)  # fmt: skip
    assert mine["flag"] == "strong" and mine["vp_equivalent"] == pytest.approx(vp, abs=0.06)
    assert mine["next_step"] == line[2:]
    unflagged = [i for i in items if i["kind"] == "cornerstone" and not i["flag"]]
    assert unflagged and all("next_step" not in i for i in unflagged)


def test_the_exchange_rate_is_the_slope_of_win_share_on_score_lead(reported):
    run = open_run(reported[0])
    per_vp = win_share_per_vp(run)
    # Noise of SCORE_SD per seat, 4 seats: a lead of one sd wins clearly more often.
    assert 0.005 < per_vp < 0.05
