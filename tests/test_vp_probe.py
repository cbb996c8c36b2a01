"""The report's VP probe (issue 39 point 4, ``neom report --probe N``): a flagged item's VP
equivalent from its own paired slope toward the band, labelled "VP on the item (probe)"; no
probe, or one whose interval holds 0, keeps the reading without one."""

import json
import math

import pytest

from analysis.core.balance import Lever, Point
from analysis.neom import next_step as NS
from analysis.neom import vp_probe as V


def _row(effect: float, probe: dict | None) -> dict:
    return {"tile_name": "Planted", "vs_median": effect, "flag": "strong", "vp_slope": probe}


def test_a_probed_slope_gives_the_vp_on_the_item_and_a_null_one_does_not():
    probe = {"slope": 4.0, "lo": 3.5, "hi": 4.5, "vp": [9, 3], "games": 8000}
    vp, basis = NS.vp_equivalent("cornerstone", _row(0.24, probe), 0.05, "vs_median")
    assert basis == NS.BASIS_PROBE and vp == pytest.approx(6.0)
    # An interval that holds 0 measures no slope: the score-lead reading, labelled so.
    vague = {**probe, "lo": -0.5}
    vp, basis = NS.vp_equivalent("cornerstone", _row(0.24, vague), 0.05, "vs_median")
    assert basis == NS.BASIS_LEAD and vp == pytest.approx(0.24 / 0.05)
    vp, basis = NS.vp_equivalent("cornerstone", _row(0.24, None), 0.05, "vs_median")
    assert basis == NS.BASIS_LEAD and vp == pytest.approx(0.24 / 0.05)


class _Evaluator:
    """Plays nothing: a measurement is the lever value it was asked for."""

    def __init__(self):
        self.played = []

    def measure(self, values, events=False, what=""):
        value = next(iter(values.values()), None)
        self.played.append(value)
        return value


def test_the_probe_walks_an_s_shaped_effect_to_the_band(monkeypatch):
    """A planted +6 VP on a cornerstone whose effect is S-shaped in its VP (flat near the
    balanced value 3, steep in between, flat again at the planted 9, as City Archive's on real
    games: +0.5, +1.0, +4.2, +8.7 pct-pts at 3, 4, 5, 6, +24.7 at 9 and a local slope there of
    1.9 pct-pts per VP) reads 6 +- 1 from the probe's secant, where a local +-1 VP slope reads
    it about twice too high."""

    def share(v):
        return 1 / (1 + math.exp(-(v - 6.5)))

    curve = {v: 0.27 * (share(v) - share(3)) for v in range(0, 20)}
    current = 9

    def item_point(base, cand, item, kind, value, min_n, median=True):
        shift = curve[cand] - curve[current]
        return Point(value, curve[cand], curve[cand], curve[cand], shift, shift - 0.002,
                     shift + 0.002, 1000)  # fmt: skip

    import analysis.neom.balance as B

    monkeypatch.setattr(B, "item_point", item_point)
    evaluator = _Evaluator()
    lever = Lever("Planted", "vp", current, +1, "VP")
    effect = curve[current]
    guess = 4.4  # the reading without a probe (the owners' lead over the placed share)
    result = V.probe_item(evaluator, lever, "cornerstone", "Planted", 100, effect, guess, 0.02)
    vp = 100 * effect / result["slope"]
    assert abs(vp - 6) <= 1, (vp, result, evaluator.played)
    assert len(evaluator.played) <= 1 + V.MAX_STEPS
    local = 100 * (curve[current + 1] - curve[current - 1]) / 2
    assert 100 * effect / local > 8  # the local slope would not do


@pytest.mark.slow  # reason: 8,000 strong-field games, 3-4 x 4,000 probe games (20 s, 2 cores)
def test_a_planted_six_vp_cornerstone_reads_six_on_real_games(tmp_path, capsys):
    """Known answer on real games: City Archive 4 -> 10 VP (the three-plant catalogue's
    cornerstone plant alone) reads 6 +- 1 "VP on the item (probe)" in findings.json, and a
    second report into the same folder replays nothing (its slope from vp_probes.json)."""
    from analysis.tools import plant_catalogue as P
    from sim.core.cli import main

    catalogue = tmp_path / "planted.toml"
    assert P.main([str(catalogue), "--set", "City Archive:vp=10"]) == 0
    run = tmp_path / "run"
    field = ["--players", "4", "--strategies", "strong", "--seed", "1"]
    assert main(["simulate", *field, "--games", "8000", "--catalog", str(catalogue),
                 "--out", str(run)]) == 0  # fmt: skip
    out = tmp_path / "report"
    for _ in range(2):
        capsys.readouterr()
        assert main(["report", str(run), "--out", str(out), "--probe", "1",
                     "--probe-games", "4000"]) == 0  # fmt: skip
        err = capsys.readouterr().err
        items = json.loads((out / "findings.json").read_text())
        (archive,) = [i for i in items if i.get("name") == "City Archive" and i.get("vp_basis")]
        assert archive["vp_basis"] == NS.BASIS_PROBE
        assert abs(archive["vp_equivalent"] - 6) <= 1, archive
        assert "VP probe 1/1 City Archive" in err
    assert "from vp_probes.json" in err  # the second report did not play the probe again
    (entry,) = json.loads((out / V.PROBE_FILE).read_text())["probes"].values()
    assert math.isfinite(entry["slope"]) and entry["lo"] > 0


@pytest.mark.parametrize("option", [["--probe", "-1"], ["--probe", "2", "--probe-games", "0"]])
def test_a_bad_probe_option_is_one_line(tmp_path, capsys, option):
    from sim.core.cli import main

    assert main(["report", str(tmp_path / "no-run"), *option]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--probe" in err[0], err
