"""``neom balance``: levers, the noisy root search, and known-answer tests on real games.

The known answers (issue 26): plant +8 VP on a neutral cornerstone and the search suggests a
VP within 2 of the original; plant -3 VP on a placed tile and it suggests a raise; a catalogue
balanced by the search, balanced again, suggests no change. Each fails if the search is broken
(a search that keeps the current value fails the first two, one that does not settle fails the
third). They play a small synthetic catalogue (tests/catalog_fixture.py) with a greedy field.
"""

import json
import tomllib
from dataclasses import astuple, replace

import numpy as np
import pytest
from catalog_fixture import tile, to_toml, valid_catalog
from run_helpers import interrupt_after, placeholder_figures

from analysis.neom import balance as B
from sim.core.cli import main
from sim.core.errors import UserError
from sim.neom.catalog import MAX_AMOUNT

FIELD = ("greedy", "greedy", "greedy")


@pytest.fixture(autouse=True)
def no_rendering(monkeypatch):
    """The reports here are checked by their files, tables and text, not their images."""
    placeholder_figures(monkeypatch)


# --- levers and catalogue edits -------------------------------------------------------------


def test_the_bound_is_the_catalogues():
    assert B.MAX_AMOUNT == MAX_AMOUNT


def test_levers_of_a_cornerstone_list_its_numbers_with_bounds_and_inert_ones():
    data = tomllib.loads(B.apply_values(_v1_text(), {}))
    item, kind, levers = B.item_levers(data, "central park")
    assert (item, kind) == ("Central Park", "cornerstone")
    by_name = {lever.name: lever for lever in levers}
    assert {"vp", "cost", "income", "coins_on_place", "effects[0].vp"} <= set(by_name)
    assert by_name["vp"].current == 3 and by_name["cost"].current == 2
    assert by_name["effects[0].vp"].current == 2 and by_name["effects[0].vp"].sign == 1
    assert by_name["cost"].sign == -1 and (by_name["cost"].low, by_name["cost"].high) == (0, 1000)
    assert all(not lever.inert for lever in levers)
    # Printed VP does not score on a Commercial tile: listed, marked inert.
    _, _, shop = B.item_levers(data, "Pawn Shop")
    assert next(x for x in shop if x.path == "vp").inert
    # A Disaster's own numbers count for nothing; the tiles protecting against it are levers.
    item, kind, fire = B.item_levers(data, "Fire")
    assert kind == "disaster" and fire and all(not x.own and x.sign == 1 for x in fire)
    assert {"Fire Department", "Public Safety Department"} <= {x.tile for x in fire}
    _, _, flood = B.item_levers(data, "Flood")
    assert flood == []  # "there is no protection from Flood"


def test_unknown_item_and_lever_get_one_clear_line():
    data = tomllib.loads(_default_text())
    with pytest.raises(UserError, match="did you mean 'Central Park'"):
        B.item_levers(data, "Central Prak")
    _, _, levers = B.item_levers(data, "Central Park")
    with pytest.raises(UserError, match="not a lever of this item; its levers: vp, cost"):
        B.pick_levers(levers, "effects[3].vp")


def test_apply_values_changes_only_the_numbers_and_keeps_the_rest():
    text = _v1_text()
    out = B.apply_values(
        text, {("Central Park", "effects[0].vp"): 1, ("Concert Hall", "alternatives[0].cost"): 5}
    )
    changed = [(a, b) for a, b in zip(text.splitlines(), out.splitlines(), strict=True) if a != b]
    assert changed == [
        (
            'effects = [{ kind = "vp_per_type_adjacent", types = ["residential"], vp = 2 }]',
            'effects = [{ kind = "vp_per_type_adjacent", types = ["residential"], vp = 1 }]',
        ),
        (
            "alternatives = [{ requires = [], cost = 6 }]",
            "alternatives = [{ requires = [], cost = 5 }]",
        ),
    ]
    with pytest.raises(UserError, match="outside the catalogue's 0..1000"):
        B.apply_values(text, {("Central Park", "vp"): 1001})


def test_a_parsed_catalogue_lent_to_apply_values_gives_the_same_text_and_is_left_as_it_was():
    import tomlkit

    text = _v1_text()
    parsed = tomlkit.parse(text)
    edits = [
        {("Central Park", "effects[0].vp"): 1, ("Concert Hall", "alternatives[0].cost"): 5},
        {("Steel Foundry", "requires"): 1, ("Steel Foundry", "cost"): 9},
        {("Glassworks", "requires"): 0, ("Central Park", "vp"): 0},
        {("Central Park", "vp"): 4, ("Central Park", "effects[0].vp"): 3},
    ]
    for values in edits:
        out = B.apply_values(text, values, parsed=parsed)
        assert out == B.apply_values(text, values) != text
        assert tomlkit.dumps(parsed) == text
    # A refusal after an edit (the values go in sorted order) leaves it as it was too.
    with pytest.raises(UserError, match="outside the catalogue's 0..1000"):
        B.apply_values(text, {("Central Park", "vp"): 3, ("Concert Hall", "vp"): 1001}, parsed)
    assert tomlkit.dumps(parsed) == text


def test_fresh_deals_have_their_own_seed():
    assert B.fresh_seed(1) == B.fresh_seed(1) != B.fresh_seed(2)
    assert B.fresh_seed(1) != 1 and 0 <= B.fresh_seed(0) < 2**63


# --- the search on planted effect curves ----------------------------------------------------


def _curve(root: float, slope: float, noise: float = 0.0, seed: int = 0, cap: float = 0.5):
    """A planted effect curve f(v) = slope (v - root), clipped to +-cap like a win share,
    with the same noise at every value (common random numbers: a shared offset) plus a small
    value-specific part. The first value measured is the baseline of the paired shifts."""
    rng = np.random.default_rng(seed)
    shared = rng.normal(0, noise)
    calls, first = [], []

    def measure(value):
        calls.append(value)
        own = np.random.default_rng([seed, value]).normal(0, noise / 4)
        f = float(np.clip(slope * (value - root) + shared + own, -cap, cap))
        first.append(f) if not first else None
        shift = f - first[0]
        return B.Point(value, f, f - 0.03, f + 0.03, shift, shift - 0.01, shift + 0.01)

    return measure, calls


def _lever(current, sign=1, low=0, high=1000):
    return B.Lever("Item", "vp", current, sign, "VP", low=low, high=high)


@pytest.mark.parametrize(
    ("current", "root", "slope", "sign", "most"),
    [
        (11, 3.2, 0.045, 1, 4),
        (0, 7.6, 0.03, 1, 5),
        (2, 9.4, -0.02, -1, 5),
        (40, 2.0, 0.05, 1, 8),  # starts where the win share is saturated: strides, then secant
    ],
)
def test_the_search_finds_the_planted_zero(current, root, slope, sign, most):
    measure, calls = _curve(root, slope)
    start = measure(current)
    calls.clear()
    result = B.search_lever(measure, _lever(current, sign), start, band=0.02)
    assert result.suggested == round(root)
    assert result.reached
    assert len(calls) <= most  # secant steps, not a scan


def test_noise_shared_by_every_candidate_moves_the_zero_by_noise_over_slope():
    for seed in range(20):
        measure, _ = _curve(3.0, 0.045, noise=0.02, seed=seed)
        result = B.search_lever(measure, _lever(11), measure(11), band=0.02)
        assert abs(result.suggested - 3) <= 2


def test_no_value_within_the_bounds_reaches_the_band():
    # Too strong even at 0 VP (the curve's zero is below the catalogue's bound).
    measure, _ = _curve(-4.0, 0.045)
    result = B.search_lever(measure, _lever(3), measure(3), band=0.02)
    assert result.suggested == 0 and not result.reached
    assert "no value of vp within the catalogue's bounds [0, 1000]" in result.stop
    # At the bound already, the way it must move: nothing is played.
    measure, calls = _curve(-4.0, 0.045)
    result = B.search_lever(measure, _lever(0), measure(0), band=0.02)
    calls.clear()
    assert result.suggested == 0 and not calls and "lower bound 0" in result.stop


def test_in_the_band_keeps_the_value_and_probes_one_step_for_the_slope():
    measure, calls = _curve(3.3, 0.045)
    start = measure(3)
    calls.clear()
    result = B.search_lever(measure, _lever(3), start, band=0.02)
    assert result.suggested == 3 and result.reached and calls == [4]
    slope, lo, hi = B.slope_of(result.points, _lever(3))
    assert slope == pytest.approx(4.5) and lo < slope < hi


def test_a_dip_near_useless_values_does_not_turn_the_search_back():
    """A small raise first lowers the effect (the tile now gets placed and paid for), then
    raises it: the search keeps the lever's direction and strides on."""

    def measure(value):
        f = -0.03 - 0.01 * (value in (2, 3)) + max(0, value - 3) * 0.02
        return B.Point(value, f, f - 0.01, f + 0.01, f + 0.03, f + 0.02, f + 0.04)

    result = B.search_lever(measure, _lever(1), measure(1), band=0.02)
    assert result.suggested in (4, 5) and result.reached


def test_values_where_nobody_holds_the_item_bound_the_search_and_are_never_suggested():
    """Raising a cornerstone's cost until nobody drafts it: those values (fewer than min_n
    drafters) end the search on that side; the suggestion is a value it is still played at."""

    def measure(value):
        n = 500 if value <= 6 else 5  # nobody drafts it from 7 coins on
        f = 0.20 - 0.03 * (value - 2) if value <= 6 else 0.02
        return B.Point(value, f, f - 0.03, f + 0.03, f - 0.2, f - 0.21, f - 0.19, n)

    lever = B.Lever("Item", "cost", 2, -1, "coin of cost")
    result = B.search_lever(measure, lever, measure(2), band=0.02, min_n=100)
    assert result.suggested == 6 and not result.reached and 6 in result.points
    assert "fewer than 100 seats hold it" in result.stop
    assert max(result.points) < 40  # no stride to the catalogue's bound through the dead zone


def test_an_unplayed_value_near_zero_does_not_end_the_search():
    def measure(value):
        n = 500 if value <= 6 else 5
        f = 0.20 - 0.03 * (value - 2) if value <= 6 else 0.0  # the few drafters: noise near 0
        return B.Point(value, f, f - 0.03, f + 0.03, f - 0.2, f - 0.21, f - 0.19, n)

    lever = B.Lever("Item", "cost", 2, -1, "coin of cost")
    result = B.search_lever(measure, lever, measure(2), band=0.02, min_n=100)
    assert result.suggested == 6 and 6 in result.points


def test_a_plateau_inside_the_band_stops_the_search():
    def measure(value):
        f = max(0.015, 0.10 - 0.03 * value)
        return B.Point(value, f, f - 0.01, f + 0.01, f - 0.1, f - 0.11, f - 0.09, 500)

    result = B.search_lever(measure, _lever(0, sign=-1), measure(0), band=0.02)
    assert result.reached and result.suggested in (3, 4) and len(result.points) <= 5
    assert "further steps gained nothing" in result.stop


def test_a_one_sided_search_without_its_starting_point_strides_on():
    """The whole-catalogue pass keeps only a dead tile's values that left it dead: the next
    value strides on from the farthest of them."""
    points = {7: B.Point(7, -0.005, -0.005, -0.005), 9: B.Point(9, -0.004, -0.004, -0.004)}
    assert B._propose(points, _lever(5, sign=1), direction=1) > 9


# --- known answers on real games ------------------------------------------------------------


def _setting(games=600, seed=3, band=0.02):
    return B.Setting(strategies=FIELD, players=3, games=games, seed=seed, workers=1, band=band,
                     min_n=30)  # fmt: skip


def _balance(tmp_path, data, item, lever, name, games=600, seed=3, verify_games=0):
    text = to_toml(data)
    evaluator = B.Evaluator(text, name, _setting(games, seed), tmp_path / name,
                            B.Progress(1, quiet=True))  # fmt: skip
    found, kind, levers = B.item_levers(tomllib.loads(text), item)
    chosen = B.pick_levers(levers, lever)
    events = kind != "cornerstone"
    base = evaluator.measure({}, events=events)
    start = B.item_point(base, base, found, kind, chosen[0].current, 30)

    def measure(value):
        m = evaluator.measure({chosen[0].key: value}, events=events)
        return B.item_point(base, m, found, kind, value, 30)

    search = B.search_lever(measure, chosen[0], start, 0.02, max_evals=8)
    search.base = base
    return search


def test_known_answer_plus_8_vp_on_a_neutral_cornerstone_then_balanced_again(tmp_path):
    """Tower 1 is one of 11 identical cornerstones (3 VP): neutral. Planted at 11 VP, the
    search suggests a VP within 2 of 3; the catalogue with the suggestion, balanced again on
    the same deals, suggests no change."""
    data = valid_catalog()
    tile(data, "Tower 1")["vp"] = 3 + 8
    result = _balance(tmp_path, data, "Tower 1", "vp", "planted")
    assert result.points[11].effect > 0.1  # the plant is visible
    # The effect is the report's, exactly: vs_median, or (--relative-to expected) the effect.
    row = B.item_row(result.base.run, "Tower 1", "cornerstone", _setting())
    base = result.base
    for median, column in ((True, "vs_median"), (False, "effect")):
        point = B.item_point(base, base, "Tower 1", "cornerstone", 11, 30, median)
        assert point.effect == pytest.approx(row[column], abs=1e-12)
    assert abs(result.suggested - 3) <= 2, result.points
    assert result.reached
    tile(data, "Tower 1")["vp"] = result.suggested
    again = _balance(tmp_path, data, "Tower 1", "vp", "balanced")
    assert again.suggested == result.suggested and again.reached
    assert again.points[result.suggested].effect == pytest.approx(
        result.points[result.suggested].effect, abs=1e-12
    )


def test_known_answer_minus_3_vp_on_a_placed_tile_suggests_a_raise(tmp_path):
    """Treasury (Generation 2, 8 VP and 1 income; version 1, default field) planted at
    8 - 3 = 5 VP: still placed by about 80% of its selectors, who lose the 3 VP (median winning
    margin 3 VP), so it is measured well below the band, and the search raises its VP (to 6-8;
    unplanted it is +3.8 pct-pts above the band, so the band is reached below 8).

    Why this plant (issue 38): a deeper plant leaves a tile nobody places. At 4 VP or less
    Concert Hall, Treasury, Hospital and the other 5-8 VP tiles are built by 0-10% of their
    selectors, and a dead card's measured effect is the cost of the wasted pick, about
    -2 pct-pts, the band's own edge: Concert Hall 7 - 6 measured -3.2, -6.8, +1.5, -5.1, -0.6
    pct-pts at 400 games (seeds 1-5), -2.1, -2.3, -0.1, -3.5, -0.8 at 800. This plant, at 800
    games, seeds 1-7: -7.8, -5.0, -5.3, -5.2, -3.3, -6.9, -4.3 pct-pts, suggested 7, 7, 7, 8,
    6, 6, 7 (seed 5, the weakest, is the one played here); at 400 games seed 2 gave -2.6."""
    text = _v1_text()
    planted = B.apply_values(text, {("Treasury", "vp"): 8 - 3})
    setting = B.Setting(strategies=("greedy", "builder", "merchant", "industrialist"),
                        players=4, games=800, seed=5, workers=1)  # fmt: skip
    evaluator = B.Evaluator(planted, "planted", setting, tmp_path, B.Progress(1, quiet=True))
    item, kind, levers = B.item_levers(tomllib.loads(planted), "Treasury")
    (lever,) = B.pick_levers(levers, "vp")
    base = evaluator.measure({}, events=True)
    start = B.item_point(base, base, item, kind, lever.current, setting.min_n)

    def measure(value):
        m = evaluator.measure({lever.key: value}, events=True)
        return B.item_point(base, m, item, kind, value, setting.min_n)

    result = B.search_lever(measure, lever, start, setting.band, max_evals=5)
    assert kind == "tile" and start.effect < -setting.band and start.n >= 100, start
    assert result.suggested >= 5 + 1 and min(result.points) == 5, result.points


# --- the command ----------------------------------------------------------------------------


def test_the_command_writes_the_issues_json_and_refuses_to_replace_it(tmp_path, capsys):
    catalog = _planted_catalog(tmp_path, "Tower 1", "vp", 11)
    out = tmp_path / "tower.json"
    argv = ["balance", "tower 1", "--catalog", str(catalog), "--players", "3",
            "--strategies", "greedy,greedy,greedy", "--games", "300", "--verify-games", "300",
            "--workers", "1", "--lever", "vp", "--min-n", "30", "--json", str(out),
            "--quiet"]  # fmt: skip
    assert main(argv) == 0
    doc = json.loads(out.read_text())
    assert {"item", "kind", "field", "games", "seed", "levers"} <= set(doc)
    assert (doc["item"], doc["kind"], doc["games"], doc["seed"]) == ("Tower 1", "cornerstone",
                                                                     300, 1)  # fmt: skip
    assert (
        doc["field"] == "greedy,greedy,greedy" and "median cornerstone" in doc["effect_definition"]
    )
    (lever,) = doc["levers"]
    assert {"lever", "current", "suggested", "effect", "lo", "hi", "slope", "in_band"} <= set(lever)
    assert lever["lever"] == "vp" and lever["current"] == 11 and lever["suggested"] < 11
    assert lever["lo"] <= lever["effect"] <= lever["hi"] and lever["slope"] > 0
    assert lever["rates"]["drafted_rate"]["before"] is not None and "other_shifts" in lever
    printed = capsys.readouterr().out
    assert "| vp | 11 |" in printed and "measured again on fresh deals" in printed
    before = out.read_bytes()
    assert main(argv) == 1
    assert "exists; pass --overwrite" in capsys.readouterr().err
    assert out.read_bytes() == before


@pytest.fixture(scope="module")
def tower_balanced(tmp_path_factory):
    """``balance NAME`` on Tower 1 planted at 11 VP (300 games, fresh checks of 600), played
    once for the two tests below (each read only its own side of it: the runs it played, and
    which paired-pass sides and chunk rows it computed, counted while it ran)."""
    from collections import Counter
    from pathlib import Path
    from types import SimpleNamespace

    from analysis.neom import compare

    sides, rows = [], Counter()
    real_side, real_rows = compare.baseline_side, compare._item_rows

    def counted_side(run, *args):
        sides.append(str(Path(run.path).resolve()))
        return real_side(run, *args)

    def counted_rows(chunk):
        rows[(chunk.info.path, chunk.spec.start)] += 1
        return real_rows(chunk)

    data = valid_catalog()
    tile(data, "Tower 1")["vp"] = 11
    text = to_toml(data)
    games, verify_games = 300, 600
    setting = _setting(games, seed=4)
    folder = tmp_path_factory.mktemp("tower")
    evaluator = B.Evaluator(text, "planted", setting, folder, B.Progress(1, quiet=True))
    item, kind, levers = B.item_levers(tomllib.loads(text), "Tower 1")
    levers = [lever for lever in levers if lever.path in ("vp", "cost", "income")]
    with pytest.MonkeyPatch.context() as patch:
        placeholder_figures(patch)
        patch.setattr(compare, "baseline_side", counted_side)
        patch.setattr(compare, "_item_rows", counted_rows)
        result = B.balance_item(evaluator, item, kind, levers, 4, verify_games)
    return SimpleNamespace(evaluator=evaluator, item=item, kind=kind, setting=setting,
                           games=games, verify_games=verify_games, result=result,
                           sides=list(sides), rows=Counter(rows))  # fmt: skip


def test_an_item_plays_each_run_once_and_the_pipeline_changes_no_result(tower_balanced):
    """The plan of ``balance NAME``: the catalogue as it is once on the search deals and once
    on the fresh ones, each candidate of a weakening search its first eighth of the games and
    then, unless nobody held the item there, all of them, and one fresh run per moved
    suggestion, no more (a phase played twice fails here). The pipeline (searches and checks
    in threads, runs on the main thread) gives the result of the steps one after the other:
    replayed in order from the same runs, every search and every fresh figure is the same,
    and no run is added."""
    t = tower_balanced
    evaluator, item, kind, setting, result = t.evaluator, t.item, t.kind, t.setting, t.result
    games, verify_games = t.games, t.verify_games

    fresh, prefix = B.fresh_seed(setting.seed), B.prefix_games(setting)
    assert result.baseline.effect > setting.band and prefix == 36  # a weakening search
    searched = [s for s in result.searches if not s.lever.inert]
    moved = [s for s in searched if s.suggested != s.lever.current]
    tried = [(s.lever.key, v, p) for s in searched for v, p in s.points.items()
             if v != s.lever.current]  # fmt: skip
    out = [(key, v) for key, v, p in tried
           if B.clearly_unplayed(p.n, prefix, games, setting.min_n)]  # fmt: skip
    assert moved and out, [(s.lever.name, s.suggested, s.stop) for s in result.searches]
    expected = [({}, setting.seed, games, False), ({}, fresh, verify_games, True)]
    expected += [({key: v}, setting.seed, prefix, False) for key, v, _ in tried]
    expected += [({key: v}, setting.seed, games, False) for key, v, _ in tried
                 if (key, v) not in out]  # fmt: skip
    expected += [({s.lever.key: s.suggested}, fresh, verify_games, True) for s in moved]
    played = sorted(evaluator.played, key=repr)
    assert played == sorted(expected, key=repr)
    assert sum(run[2] for run in played) == games * (1 + len(tried) - len(out)) + prefix * len(
        tried
    ) + verify_games * (1 + len(moved))
    assert set(result.verified) == {""} | {s.lever.name for s in moved}

    # The same steps one after the other, from the runs already played.
    runs = len(evaluator.played)
    base = evaluator.measure({}, events=False)
    start = B.item_point(base, base, item, kind, 0, setting.min_n)
    # To the bit, though this point is computed in a pipeline thread while the main thread
    # plays and opens runs: every sum behind it is exactly rounded (analysis.core.exact).
    assert _identical(astuple(start), astuple(result.baseline))
    for search in searched:
        lever = search.lever

        def measure(value, lever=lever):
            def run(n):
                return evaluator.measure({lever.key: value}, games=n, events=False)

            def point_of(b, m, v):
                return B.item_point(b, m, item, kind, v, setting.min_n)

            return B.measure_candidate(run, point_of, base, value, setting, prefix)

        again = B.search_lever(measure, lever, replace(start, value=lever.current),
                               setting.band, 4, True, setting.min_n)  # fmt: skip
        assert (again.suggested, again.stop, sorted(again.points)) == (
            search.suggested, search.stop, sorted(search.points))  # fmt: skip
        for value, point in again.points.items():
            assert _identical(astuple(point), astuple(search.points[value]))
    verified = B.verify(evaluator, item, kind, result.searches, fresh, verify_games)
    assert len(evaluator.played) == runs
    for name, entry in result.verified.items():
        assert _identical(verified[name]["target"], entry["target"])
        if name:
            assert _identical(verified[name]["shift"], entry["shift"])
            assert [o["name"] for o in verified[name]["others"]] == [
                o["name"] for o in entry["others"]]  # fmt: skip


def test_the_fresh_baseline_side_is_computed_once_for_every_check(tower_balanced):
    """Every suggestion's fresh check is paired with the catalogue as it is on the fresh
    deals: that side of the paired pass (each of its chunks' seat rows and per-game sums) is
    computed once in a balance run, not again for each check."""
    from pathlib import Path

    t = tower_balanced
    evaluator, setting, result, sides, rows = t.evaluator, t.setting, t.result, t.sides, t.rows

    checks = [name for name in result.verified if name]
    assert len(checks) >= 2, result.verified  # the side is shared by two checks at least
    fresh = B.fresh_seed(setting.seed)
    (base,) = [m for m in evaluator.cache.values() if not m.values and m.seed == fresh]
    path = str(Path(base.path).resolve())
    assert sides == [path]
    chunks = {start: n for (run, start), n in rows.items() if run == path}
    assert chunks and set(chunks.values()) == {1}, chunks
    # Each check's own chunks were read too (the counter sees the candidates' rows).
    assert len({run for run, _ in rows}) == 1 + len(checks)


def _identical(a, b) -> bool:
    """The same numbers exactly (NaN equal to NaN)."""
    return np.array_equal(np.array(a, dtype=float), np.array(b, dtype=float), equal_nan=True)


def _measured(rows: list[tuple[int, str, float]], games: int) -> "B.Measurement":
    """A Measurement of a played run reduced to its tile long table and deals (one per game)."""
    import polars as pl

    long = pl.DataFrame(rows, schema={"game_id": pl.Int64, "tile_name": pl.String,
                                      "residual": pl.Float64}, orient="row")  # fmt: skip
    deals = pl.DataFrame({"game_id": range(games), "deal": range(games)},
                         schema={"game_id": pl.Int64, "deal": pl.UInt64})  # fmt: skip
    return B.Measurement({}, 0, games, True, None, None, 0.0, {"tile": long}, deals)


def test_an_item_point_is_the_exactly_rounded_mean_in_any_row_order():
    """Known answer: residuals 1, 1e100, 1 and -1e100 in games 0..3 sum to exactly 2 (a
    float sum in game order, even compensated, loses both ones and gives 0; the extreme
    values only make the last bit visible). The effect is 2/4 on both sides whatever order
    the rows come in, and the shift is exactly 0."""
    rows = [(0, "Tower 1", 1.0), (1, "Tower 1", 1e100), (2, "Tower 1", 1.0),
            (3, "Tower 1", -1e100)]  # fmt: skip
    rows += [(g, "Park", 0.25 * g) for g in range(6)]
    base, cand = _measured(rows, 6), _measured(rows[::-1], 6)
    point = B.item_point(base, cand, "Tower 1", "tile", 11, min_n=1)
    assert (point.effect, point.shift, point.n) == (0.5, 0.0, 4)


def test_bad_input_is_one_line(tmp_path, capsys):
    assert main(["balance", "Central Prak", "--games", "8"]) == 1
    assert "did you mean 'Central Park'" in capsys.readouterr().err
    assert main(["balance", "Central Park", "--games", "10"]) == 1
    assert "not a multiple of --players 4" in capsys.readouterr().err
    assert main(["balance", "Flood", "--games", "8"]) == 1
    assert "no lever in the catalogue moves" in capsys.readouterr().out
    assert main(["balance", "Central Park", "--out", str(tmp_path / "x")]) == 1
    assert "belong to --all" in capsys.readouterr().err
    assert main(["balance", "--all", "--goals", "cornerstones,foo"]) == 1
    assert "--goals 'cornerstones,foo': a comma-separated list of" in capsys.readouterr().err
    out = tmp_path / "pass"
    assert main(["balance", "--all", "--intended", "Pawn Shop,Nope", "--out", str(out)]) == 1
    assert "--intended 'Nope': no such tile" in capsys.readouterr().err and not out.exists()


def _default_text() -> str:
    from sim.neom.catalog import DEFAULT_CATALOG

    return DEFAULT_CATALOG.read_text(encoding="utf-8")


def _v1_text() -> str:
    """Version 1 of the reconstruction (the default before its rebalance): the tests that name
    its values (Central Park's 3 VP, Concert Hall's 7) are pinned to it."""
    from sim.neom.catalog import SHIPPED_CATALOGS

    return SHIPPED_CATALOGS["reconstruction_v1"].read_text(encoding="utf-8")


def _planted_catalog(tmp_path, item, field, value):
    """The fixture catalogue with one planted number, written as a file."""
    data = valid_catalog()
    tile(data, item)[field] = value
    catalog = tmp_path / "planted.toml"
    catalog.write_text(to_toml(data), encoding="utf-8")
    return catalog


def _whole_pass(catalog, out, games, max_evals, goals, *options):
    """``balance --all`` on three greedy seats, one worker, quiet."""
    return ["balance", "--all", "--catalog", str(catalog), "--players", "3",
            "--strategies", "greedy,greedy,greedy", "--games", str(games), "--workers", "1",
            "--min-n", "30", "--max-evals", str(max_evals), "--goals", goals, "--out", str(out),
            *options, "--quiet"]  # fmt: skip


def _log(out):
    return [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]


# --- the whole-catalogue pass ---------------------------------------------------------------


def test_the_whole_catalogue_pass_lowers_a_planted_cornerstone_writes_its_outputs_and_resumes(
    tmp_path, capsys
):
    catalog = _planted_catalog(tmp_path, "Tower 1", "vp", 3 + 8)
    out = tmp_path / "pass"
    argv = _whole_pass(catalog, out, 600, 2, "cornerstones", "--prune-evals", "2", "--items",
                       "tower 1")  # fmt: skip
    # --items: the plant only (the fixture's weaker cornerstones, off their goal without it,
    # are watched: moving them all at once flags others, a round the pass rejects).
    assert main(argv) == 0
    log = _log(out)
    assert [(e["search"], e["round"]) for e in log] == [
        ("coordinate", 0), ("coordinate", 1), ("prune", 1)
    ]  # fmt: skip
    assert log[1]["edits"] and all(e.startswith("Tower 1: ") for e in log[1]["edits"])
    assert "Tower 1" in log[0]["out_of_band"] + log[0]["flagged"]
    (tower,) = [e for e in log[1]["edits"] if e.startswith("Tower 1: vp = ")]
    assert int(tower.split("= ")[1]) < 11  # the planted cornerstone goes down
    candidate = (out / "candidate.toml").read_text()
    assert "reconstructed = true" in candidate and "(balanced)" in candidate
    summary = json.loads((out / "summary.json").read_text())
    assert summary["chosen"] == "coordinate" and summary["fresh_deals"]["seed"] == B.fresh_seed(1)
    assert summary["search_deals"]["coordinate"]["loss"] <= log[0]["loss"]
    diff = (out / "candidate.diff").read_text()
    assert all(f"vp = {e.split('= ')[1]}" in diff for e in summary["edits"] if ": vp" in e)
    assert (out / "compare" / "index.html").is_file() and (out / "log.md").is_file()
    assert summary["goal_items"] == ["Tower 1"] and summary["patch"][0]["part"] == "goal"
    assert "| Tower 1 | vp | 11 |" in (out / "patch.md").read_text().split("## Knock-on")[0]
    listing = json.loads((out / "neom-listing.json").read_text())
    assert listing["command"] == "neom balance --all" and listing["status"] == "complete"
    runs = sorted(p.name for p in (out / "runs").iterdir())
    assert sorted(r.split("/")[1] for r in listing["runs"]) == runs
    assert {"candidate.toml", "log.md", "log.jsonl", "summary.json"} <= set(listing["files"])
    capsys.readouterr()
    # An earlier pass is never replaced silently; resuming a complete one writes nothing.
    assert main(argv) == 1
    assert "holds an earlier neom balance --all; pass --overwrite" in capsys.readouterr().err
    before = _contents(out)
    assert main([*argv, "--resume"]) == 0
    assert "already complete" in capsys.readouterr().err and _contents(out) == before
    # An interrupted pass resumes to the same steps, runs and candidate.
    (out / "notes.txt").write_text("mine")
    with pytest.MonkeyPatch.context() as patch:
        interrupt_after(patch, 3)  # the first evaluation is played, the second is not
        assert main([*argv, "--overwrite"]) == 130
    assert (out / "notes.txt").read_text() == "mine"  # not the pass's: kept
    assert json.loads((out / "neom-listing.json").read_text())["status"] == "running"
    capsys.readouterr()
    assert main([*argv[:-1], "--resume", "--seed", "2", "--quiet"]) == 1
    assert "cannot resume with a different --seed" in capsys.readouterr().err
    assert main([*argv, "--resume"]) == 0
    again = _log(out)
    timeless = lambda entries: [{k: v for k, v in e.items() if k != "seconds"} for e in entries]  # noqa: E731
    assert (
        timeless(again) == timeless(log)
        and sorted(p.name for p in (out / "runs").iterdir()) == runs
    )
    assert (out / "candidate.toml").read_text() == candidate


def _contents(path):
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def test_the_optuna_search_evaluates_its_budget_on_the_same_deals(tmp_path):
    pytest.importorskip("optuna")
    catalog = _planted_catalog(tmp_path, "Tower 1", "vp", 3 + 8)
    out = tmp_path / "pass"
    argv = _whole_pass(catalog, out, 300, 3, "cornerstones", "--optimizer", "optuna",
                       "--prune-evals", "0")  # fmt: skip
    assert main(argv) == 0
    log = _log(out)
    assert [(e["search"], e["round"]) for e in log] == [("optuna", r) for r in range(3)]
    # The catalogue as it is is the enqueued first trial: the same loss as round 0.
    assert log[1]["edits"] == [] and log[1]["loss"] == log[0]["loss"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["chosen"] == "optuna"
    assert summary["search_deals"]["optuna"]["loss"] == min(e["loss"] for e in log)


def test_the_coordinate_pass_finds_planted_zeros_item_by_item_without_games():
    """Three independent planted items (a cornerstone 5 VP too strong, a tile 4 VP too weak,
    a Commercial tile placed only from 3 income on): the coordinate pass moves each along its
    own lever, at most per_round a round, and ends with every goal met."""
    from analysis.neom import balance_all as BA

    data = {"tiles": [
        {"name": "A", "deck": "cornerstone", "types": ["public"], "vp": 8},
        {"name": "B", "deck": "gen1", "players": 1, "types": ["residential"], "vp": 2},
        {"name": "C", "deck": "gen1", "players": 1, "types": ["commercial"]},
    ]}  # fmt: skip
    band, seen = 0.02, []

    def evaluate(self, values, search, round_):
        seen.append(dict(values))
        vp_a = values.get(("A", "vp"), 8)
        vp_b = values.get(("B", "vp"), 2)
        income_c = values.get(("C", "income"), 0)
        errors = {"A": 0.045 * (vp_a - 3.2), "B": 0.02 * (vp_b - 6.1),
                  "C": (0.02 if income_c >= 3 else 0.0) - 0.005}  # fmt: skip
        kinds = {"A": "cornerstone", "B": "tile", "C": "dead"}
        decided = {n for n, e in errors.items() if (abs(e) > band if kinds[n] != "dead" else e < 0)}
        errors = {n: (e if n in decided or abs(e) > band else 0.0) for n, e in errors.items()}
        errors["C"] = errors["C"] if errors["C"] < 0 else 0.0
        loss = sum(max(0, abs(errors[n]) - band) / band for n in ("A", "B")) + (errors["C"] < 0)
        return BA.Assessment(values, errors, decided, {}, {}, kinds, loss, len(decided), [], [],
                             [])  # fmt: skip

    class Fake(BA.Pass):
        pass

    Fake.evaluate = evaluate
    run = Fake(None, data, set(), "standard", None, per_round=2)
    run.evaluator = type("E", (), {"setting": _setting()})()
    rounds, tracks = run.coordinate(budget=12)
    assert rounds[-1].n_violations == 0 and rounds[-1].loss == 0
    final = seen[-1]
    assert final[("A", "vp")] == 3 and final[("B", "vp")] in (6, 7) and final[("C", "income")] >= 3
    # Two items moved in the first round: the two furthest from their goal (A 9.8, B 3.1
    # bands beyond it; a dead tile counts 1).
    assert set(seen[1]) == {("A", "vp"), ("B", "vp")}
    assert all(not t.stuck for t in tracks.values())


# --- the pass's additions: several levers an item, structural levers, goods, pruning ----------


def _fake_pass(data, model, goals=("cornerstones", "tiles", "dead", "goods"), per_round=0):
    """A Pass whose evaluations are ``model(values) -> (errors, kinds)`` instead of games (the
    planted effects), with every recorded evaluation in ``seen``. An error is the signed
    distance from the goal; a dead tile's or good's error counts when below 0."""
    from analysis.neom import balance_all as BA

    band, seen = 0.02, []

    def evaluate(self, values, search, round_):
        seen.append((search, dict(values)))
        errors, kinds = model(values)
        decided = {
            n for n, e in errors.items()
            if (e < 0 if kinds[n] in BA.ONE_SIDED else abs(e) > band)
        }  # fmt: skip
        errors = {n: (e if n in decided else 0.0) for n, e in errors.items()}
        loss = sum(
            (1.0 if kinds[n] == "dead" else -errors[n] / BA.GOOD_SHARE)
            if kinds[n] in BA.ONE_SIDED else (abs(errors[n]) - band) / band
            for n in decided
        )  # fmt: skip
        dead = [n for n in decided if kinds[n] == "dead"]
        lacking = [n for n in decided if kinds[n] == "good"]
        return BA.Assessment(values, errors, decided, {}, {}, kinds, loss, len(decided), dead,
                             [], [], 0.0, {}, lacking)  # fmt: skip

    class Fake(BA.Pass):
        pass

    Fake.evaluate = evaluate
    run = Fake(None, data, set(), "standard", None, goals, per_round)
    run.evaluator = type("E", (), {"setting": _setting()})()
    return run, seen


def test_an_item_one_lever_cannot_fix_moves_its_next_lever():
    """A cornerstone whose printed VP and adjacency bonus are both too high (Central Park's
    case): its VP alone, down to 0, leaves it out of the band; the pass goes on with the
    adjacency bonus and ends in the band."""
    data = {"tiles": [{"name": "Park", "deck": "cornerstone", "types": ["public"], "vp": 3,
                       "effects": [{"kind": "vp_per_type_adjacent", "types": ["residential"],
                                    "vp": 3}]}]}  # fmt: skip

    def model(values):
        vp, adjacent = values.get(("Park", "vp"), 3), values.get(("Park", "effects[0].vp"), 3)
        return {"Park": 0.02 * vp + 0.06 * (adjacent - 1.2)}, {"Park": "cornerstone"}

    run, seen = _fake_pass(data, model)
    rounds, tracks = run.coordinate(budget=12)
    final = rounds[-1]
    assert final.n_violations == 0, seen
    values = seen[-1][1]
    assert values[("Park", "effects[0].vp")] == 1 and values.get(("Park", "vp"), 3) == 0
    assert [lv.path for lv in tracks["Park"].levers][:2] == ["vp", "effects[0].vp"]
    # One lever only (the adjacency bonus known, say): stuck at the end of the VP's span.
    data["tiles"][0]["known"] = ["effects"]
    run, seen = _fake_pass(data, model)
    rounds, tracks = run.coordinate(budget=12)
    assert rounds[-1].n_violations == 1 and "end" in tracks["Park"].stuck
    assert all(("Park", "effects[0].vp") not in v for _, v in seen)


def test_a_good_too_rarely_produced_moves_its_producer_then_the_chain():
    """Planted: the luxury good Jewels is made only from Glass and Steel (Steel never made), so
    no city makes it; Glass itself is made in 3% of games unless Glassworks pays 2 coins on
    placement. The pass lowers the Jeweller's required goods to one (it keeps Glass, the first)
    and then, down the chain, makes Glassworks pay more, until both goods reach 5%."""
    data = {"tiles": [
        {"name": "Glassworks", "deck": "gen1", "players": 1, "types": ["industrial"],
         "requires": ["Oil"], "produces": ["Glass"], "polluting": True},
        {"name": "Jeweller", "deck": "gen3", "players": 1, "types": ["industrial"], "cost": 2,
         "requires": ["Glass", "Steel"], "produces": ["Jewels"], "polluting": True},
    ]}  # fmt: skip

    def model(values):
        glass = 0.03 if values.get(("Glassworks", "coins_on_place"), 0) < 2 else 0.3
        one = values.get(("Jeweller", "requires"), 2) == 1
        jewels = 0.9 * glass if one else 0.0
        errors = {"Glass (good)": glass - 0.05, "Jewels (good)": jewels - 0.05}
        return errors, {"Glass (good)": "good", "Jewels (good)": "good"}

    run, seen = _fake_pass(data, model)
    rounds, tracks = run.coordinate(budget=16)
    assert rounds[-1].n_violations == 0, seen
    values = seen[-1][1]
    assert values[("Jeweller", "requires")] == 1 and values[("Glassworks", "coins_on_place")] >= 2
    # Glass's own track owns Glassworks' levers; the Jeweller's first lever is its requirement.
    assert tracks["Jewels (good)"].levers[0].key == ("Jeweller", "requires")
    assert tracks["Glass (good)"].levers[0].tile == "Glassworks"


def test_a_tile_dead_for_its_prerequisite_makes_the_prerequisite_cheaper_first():
    from analysis.neom import balance_all as BA
    from analysis.neom.tiles import WHY_PREREQUISITE

    data = {"tiles": [
        {"name": "Station", "deck": "gen2", "players": 4, "types": ["public"], "cost": 2, "vp": 3},
        {"name": "Terminal", "deck": "gen3", "players": 4, "types": ["commercial"], "cost": 3,
         "income": 4, "requires_tiles": ["Station"]},
    ]}  # fmt: skip
    levers = BA.choose_levers(data, "Terminal", "dead", True, "standard", 4, WHY_PREREQUISITE)
    assert [lv.key for lv in levers[:2]] == [("Station", "cost"), ("Terminal", "requires_tiles")]
    assert ("Station", "vp") not in [lv.key for lv in levers]  # its strength is its own
    # Sold though affordable: its own numbers, cost first, then coins on placement before
    # income (income never below 1: rules 000).
    levers = BA.choose_levers(data, "Terminal", "dead", True, "standard", 4, "sold though")
    assert [lv.path for lv in levers[:3]] == ["cost", "coins_on_place", "income"]
    down = BA.choose_levers(data, "Terminal", "tile", False, "standard", 4)
    assert [lv.path for lv in down][:2] == ["income", "cost"] and down[0].low == 1


def test_a_tile_takes_its_own_lever_back_from_an_item_that_borrowed_it():
    """A good too rarely made moves its producer's cost; when the producer itself turns strong
    its own item takes the lever back (and the good's item goes on with its next lever)."""
    from analysis.neom import balance_all as BA

    data = {"tiles": [
        {"name": "Kiln", "deck": "gen1", "players": 1, "types": ["industrial"], "cost": 2,
         "requires": ["Stone"], "produces": ["Glass"], "polluting": True},
    ]}  # fmt: skip
    run, _ = _fake_pass(data, lambda values: ({}, {}))
    tracks = {}
    good = BA.Assessment({}, {"Glass (good)": -0.03}, {"Glass (good)"}, {}, {},
                         {"Glass (good)": "good"}, 0.6, 1, [], [], [],
                         lacking=["Glass"])  # fmt: skip
    run.add_tracks(good, tracks)
    assert tracks["Glass (good)"].lever.key == ("Kiln", "cost")
    strong = BA.Assessment({}, {"Glass (good)": -0.01, "Kiln": 0.06}, {"Glass (good)", "Kiln"},
                           {}, {}, {"Glass (good)": "good", "Kiln": "tile"}, 2.0, 2, [], [],
                           [], lacking=["Glass"])  # fmt: skip
    run.add_tracks(strong, tracks)
    assert tracks["Kiln"].lever.key == ("Kiln", "cost") and tracks["Kiln"].direction == 1
    assert ("Kiln", "cost") not in [lv.key for lv in tracks["Glass (good)"].levers]
    assert tracks["Glass (good)"].lever.key == ("Kiln", "coins_on_place")
    assert run.owner[("Kiln", "cost")] == "Kiln"


def test_pruning_undoes_the_edits_the_goals_do_not_need():
    """Planted: three edits, of which only Tower's VP matters; pruning tries each (the
    smallest change first) and keeps the two others undone."""
    data = {"tiles": [
        {"name": "Tower", "deck": "cornerstone", "types": ["residential"], "vp": 9},
        {"name": "Hut", "deck": "gen1", "players": 1, "types": ["residential"], "vp": 2},
        {"name": "Shop", "deck": "gen1", "players": 1, "types": ["commercial"], "income": 1},
    ]}  # fmt: skip

    def model(values):
        return {"Tower": 0.04 * (values.get(("Tower", "vp"), 9) - 3)}, {"Tower": "cornerstone"}

    run, seen = _fake_pass(data, model)
    edits = {("Tower", "vp"): 3, ("Hut", "vp"): 3, ("Shop", "income"): 3}
    best = run.evaluate(edits, "coordinate", 1)
    rounds, pruned = run.prune(best, None)
    assert pruned.values == {("Tower", "vp"): 3} and pruned.n_violations == 0
    tried = [set(edits) - set(v) for s, v in seen if s == "prune"]
    assert tried[0] == {("Hut", "vp")} and len(rounds) == 3  # 1 unit before 2, then 6
    rounds, kept = run.prune(best, 1)  # a budget of one try
    assert len(rounds) == 1 and set(kept.values) == {("Tower", "vp"), ("Shop", "income")}


def test_known_numbers_and_the_rules_bound_the_levers():
    data = {"tiles": [
        {"name": "Treasury", "deck": "gen2", "players": 1, "types": ["public"], "vp": 8,
         "requires": ["Steel"], "alternatives": [{"requires": [], "cost": 5}],
         "known": ["requires", "alternatives", "vp >= 6"]},
        {"name": "Factory", "deck": "cornerstone", "types": ["industrial"], "income": 3,
         "requires": ["Stone"], "produces": ["Concrete"], "known": ["income >= 1"]},
        {"name": "Shop", "deck": "gen1", "players": 1, "types": ["commercial"], "income": 2,
         "requires": ["Wood", "Oil"]},
    ]}  # fmt: skip
    levers = {lv.path: lv for lv in B.item_levers(data, "Treasury")[2]}
    assert levers["alternatives[0].cost"].inert and levers["requires"].inert
    assert levers["vp"].low == 6 and not levers["vp"].inert
    factory = {lv.path: lv for lv in B.item_levers(data, "Factory")[2]}
    assert factory["income"].low == 1 and factory["requires"].low == 1  # a producer needs one
    shop = {lv.path: lv for lv in B.item_levers(data, "Shop")[2]}
    assert shop["income"].low == 1 and (shop["requires"].low, shop["requires"].high) == (0, 2)
    assert shop["requires"].sign == -1 and shop["requires"].current == 2
    # The count lever keeps the first goods in file order; 0 removes the field.
    text = to_toml(valid_catalog())
    one = tomllib.loads(B.apply_values(text, {("Steel Foundry", "requires"): 1}))
    assert tile(one, "Steel Foundry")["requires"] == ["Coal"]
    none = tomllib.loads(B.apply_values(text, {("Condos & Restaurant", "requires_tiles"): 0}))
    assert "requires_tiles" not in tile(none, "Condos & Restaurant")
    with pytest.raises(UserError, match="cannot require more"):
        B.apply_values(text, {("Steel Foundry", "requires"): 3})


@pytest.mark.parametrize(
    "entry, words",
    [("income >= 1", ""), ("alternatives[0].cost", ""), ("effects", ""), ("vp<=8", ""),
     ("colour", "not a number of a tile"), ("effects[3].vp", "the tile has 1 effects"),
     ("requires >= 1", "a bound needs one number"), ("vp > 2", "expected a field")],
)  # fmt: skip
def test_the_known_field_names_numbers_of_the_tile(entry, words):
    from sim.neom.catalog import validate

    data = valid_catalog()
    tile(data, "Treasury")["alternatives"] = [{"requires": [], "cost": 5}]
    tile(data, "Treasury")["effects"] = [{"kind": "vp_per_good_tier", "tier": "raw", "vp": 1}]
    tile(data, "Treasury")["known"] = [entry]
    problems = validate(data, "x.toml")
    if not words:
        assert problems == []
    else:
        (problem,) = problems
        assert 'tile "Treasury"' in problem and 'field "known"' in problem and words in problem


def test_the_pass_finds_a_planted_goods_block_in_real_games(tmp_path):
    """Real games (three greedy players): the luxury good Jewels is made only from Glass and
    Steel, and no city makes Steel; planted with Glass first, the pass's goods goal lowers the
    Jeweller's required goods to one, and Jewels is then made (it was never)."""
    catalog = _planted_catalog(tmp_path, "Jeweller", "requires", ["Glass", "Steel"])
    out = tmp_path / "pass"
    argv = _whole_pass(catalog, out, 300, 4, "goods", "--prune-evals", "2")
    assert main(argv) == 0
    log = _log(out)
    assert "Jeweller: requires = 1" in log[1]["edits"]
    summary = json.loads((out / "summary.json").read_text())
    assert "Jeweller: requires = 1" in summary["edits"]
    before, after = summary["fresh_deals"]["before"], summary["fresh_deals"]["after"]
    assert "Jewels" in before["goods_lacking"]
    assert (
        "Jewels (good)" in before["problems"]
        and "in 0.0% of games" in (before["problems"]["Jewels (good)"])
    )
    assert "in 0.0% of games" not in after["problems"].get("Jewels (good)", "")  # made now
    assert [e["search"] for e in log].count("prune") == 2


def test_candidate_text_keeps_the_description_and_says_balanced_once():
    """A pass run on its own candidate (issue 26 part 4 ran two) adds its edits after the
    file's description and the earlier pass's edits, and "(balanced)" stays once in the name."""
    from analysis.neom import balance_all as BA
    from sim.neom.catalog import DEFAULT_CATALOG

    base = DEFAULT_CATALOG.read_text(encoding="utf-8")
    described = tomllib.loads(base)["catalog"]["description"]
    first = BA._candidate_text(base, {("Central Park", "vp"): 1}, "label")
    second = BA._candidate_text(first, {("Concert Hall", "vp"): 8}, "label")
    catalog = tomllib.loads(second)["catalog"]
    assert catalog["name"].count("(balanced)") == 1 and catalog["reconstructed"] is True
    assert catalog["description"].startswith(described)
    assert "Central Park vp = 1." in catalog["description"]
    assert catalog["description"].endswith("Edited by neom balance --all: Concert Hall vp = 8.")


# --- issue 38: the pass as a patch (goal items, rejection, chain repair at the producer) --------


def _judged_pass(data, model, items=None, flagged=False, structural=False, per_round=0):
    """A Pass whose evaluations are the planted ``model(values) -> (errors, kinds, reasons)``
    (an error: the signed distance from the goal, as ``assess`` reports it; a good's item is
    "NAME (good)") instead of games, judged by the pass itself (goal items fixed on the
    catalogue as it is, new flags elsewhere rejected). A model may return a fourth element:
    the names short of their goal but undecided (a tile placed in a few games, not none)."""
    from analysis.neom import balance_all as BA

    band, seen = 0.02, []

    def evaluate(self, values, search, round_):
        seen.append((search, dict(values)))
        errors, kinds, reasons, *rest = model(values)
        rare = rest[0] if rest else set()
        decided = {
            n for n, e in errors.items()
            if n not in rare and (e < 0 if kinds[n] in BA.ONE_SIDED else abs(e) > band)
        }  # fmt: skip
        errors = {n: (e if n in decided or n in rare else 0.0) for n, e in errors.items()}
        item_loss = {
            n: (1.0 if kinds[n] == "dead" else -errors[n] / BA.GOOD_SHARE)
            if kinds[n] in BA.ONE_SIDED else (abs(errors[n]) - band) / band
            for n in decided
        }  # fmt: skip
        lacking = [n.removesuffix(BA.GOOD_SUFFIX) for n in decided if kinds[n] == "good"]
        figures = {n: (e, e - 0.01, e + 0.01) for n, e in errors.items()}
        problems = {n: f"{100 * errors[n]:+.1f}" for n in decided}
        flagged = sorted(n for n in decided if kinds[n] not in BA.ONE_SIDED)  # the report's
        a = BA.Assessment(values, errors, decided, {}, problems, kinds, sum(item_loss.values()),
                          len(decided), [], flagged, [], 0.0, reasons, lacking, item_loss,
                          figures)  # fmt: skip
        return self.judge(a)

    class Fake(BA.Pass):
        pass

    Fake.evaluate = evaluate
    run = Fake(None, data, set(), "standard", None, ("cornerstones", "tiles", "dead", "goods"),
               per_round, items, flagged, structural)  # fmt: skip
    run.evaluator = type("E", (), {"setting": _setting()})()
    return run, seen


THREE_PLANTS = {"tiles": [
    {"name": "Spire", "deck": "cornerstone", "types": ["public"], "vp": 3 + 6},
    {"name": "Plaza", "deck": "cornerstone", "types": ["public"], "vp": 3},
    {"name": "Villa", "deck": "gen1", "players": 1, "types": ["residential"], "vp": 5 + 4},
    {"name": "Refinery", "deck": "gen2", "players": 1, "types": ["industrial"], "cost": 10,
     "requires": ["Ore"], "produces": ["Gold"], "polluting": True},
    {"name": "Jeweler", "deck": "gen2", "players": 1, "types": ["commercial"], "income": 4,
     "requires": ["Gold"]},
    {"name": "Exchange", "deck": "gen3", "players": 1, "types": ["commercial"], "income": 5,
     "requires": ["Gold"]},
]}  # fmt: skip


def _three_plants(values):
    """Planted: Spire +6 VP (its zero at 3, 1.5 pct-pts a VP), Villa +4 VP (zero at 5), the
    only Gold producer's cost 2 -> 10 (Gold made in 0.4% of games above 4 coins, 25% at or
    below); the Gold consumers are never placed while Gold is not made, or once they stop
    requiring it. Spire below 2 VP flags Plaza (the effects are zero-sum): a knock-on."""
    from analysis.neom.tiles import WHY_NO_GOODS

    spire, villa = values.get(("Spire", "vp"), 9), values.get(("Villa", "vp"), 9)
    gold = 0.25 if values.get(("Refinery", "cost"), 10) <= 4 else 0.004
    errors = {"Spire": 0.015 * (spire - 3), "Villa": 0.012 * (villa - 5),
              "Plaza": 0.05 if spire <= 1 else 0.0, "Gold (good)": gold - 0.05}  # fmt: skip
    kinds = {"Spire": "cornerstone", "Plaza": "cornerstone", "Villa": "tile",
             "Gold (good)": "good"}  # fmt: skip
    reasons = {}
    for consumer in ("Jeweler", "Exchange"):
        freed = values.get((consumer, "requires"), 1) == 0
        errors[consumer] = 0.0 if gold > 0.05 or freed else -0.01
        kinds[consumer], reasons[consumer] = "dead", WHY_NO_GOODS
    return errors, kinds, reasons


def test_known_answer_three_plants_are_undone_and_gold_is_repaired_at_its_producer():
    """Issue 38's three-plant case on planted effect curves: each planted item returns to
    within 1 of its original value, Gold is repaired by its producer's cost (its consumers'
    requirements are never cut), no edit flags Plaza, and at most 6 fields change (pruned)."""
    run, seen = _judged_pass(THREE_PLANTS, _three_plants)
    rounds, tracks = run.coordinate(budget=12)
    best = BA_best(rounds)
    assert run.targets == {"Spire", "Villa", "Gold (good)", "Jeweler", "Exchange"}
    pruned_rounds, pruned = run.prune(best, None)
    values = pruned.values
    assert pruned.n_violations == 0 and not pruned.new_flags, values
    assert abs(values[("Spire", "vp")] - 3) <= 1 and abs(values[("Villa", "vp")] - 5) <= 1
    assert values[("Refinery", "cost")] <= 4 and len(values) <= 6
    assert all(path != "requires" for _, path in values)  # no chain cut loose
    assert tracks["Jeweler"].stuck.startswith("waits for Gold (good)")


def BA_best(rounds):
    from analysis.neom import balance_all as BA

    return BA.best_of(rounds)


def test_an_edit_that_flags_another_item_is_rejected_and_bounds_its_lever():
    """Spire's secant overshoots to a value that flags Plaza: that round is undone, Spire's
    lever never goes that far again, and the best evaluation flags nothing new."""
    data = {"tiles": [THREE_PLANTS["tiles"][0], THREE_PLANTS["tiles"][1]]}

    def model(values):
        spire = values.get(("Spire", "vp"), 9)
        # The zero at 4 VP, but below 5 VP Plaza is flagged.
        errors = {"Spire": 0.015 * (spire - 4), "Plaza": 0.05 if spire < 5 else 0.0}
        return errors, {"Spire": "cornerstone", "Plaza": "cornerstone"}, {}

    run, seen = _judged_pass(data, model)
    rounds, tracks = run.coordinate(budget=10)
    best = BA_best(rounds)
    assert any(a.new_flags == ["Plaza"] for a in rounds)  # it was tried ...
    assert not best.new_flags and best.values[("Spire", "vp")] == 5  # ... and rejected
    tried = [v.get(("Spire", "vp"), 9) for _, v in seen]
    after = tried[tried.index(4) + 1 :]
    assert tracks["Spire"].rejected == ["vp = 4 flagged Plaza"] and after and min(after) >= 5
    assert best.loss < 100  # a rejected candidate's loss is never the best's


def test_a_chain_only_a_structural_edit_can_fix_is_not_fixed_without_structural():
    """The producer's numbers are all known facts: no producer lever. Without --structural
    the pass says "not fixed" and edits nothing; with it, the consumers stop requiring Gold."""
    data = json.loads(json.dumps(THREE_PLANTS))
    data["tiles"] = data["tiles"][3:]
    data["tiles"][0]["known"] = ["cost", "coins_on_place", "income"]

    def model(values):
        errors, kinds, reasons = _three_plants(values)
        keep = ("Gold (good)", "Jeweler", "Exchange")
        return ({n: errors[n] for n in keep}, {n: kinds[n] for n in keep},
                {n: r for n, r in reasons.items() if n in keep})  # fmt: skip

    run, seen = _judged_pass(data, model)
    rounds, tracks = run.coordinate(budget=6)
    assert all(not v for _, v in seen)  # nothing edited
    assert tracks["Jeweler"].stuck.startswith("not fixed: only a structural edit (Jeweler")
    assert "--structural is not given" in tracks["Exchange"].stuck
    run, seen = _judged_pass(data, model, structural=True)
    rounds, tracks = run.coordinate(budget=6)
    best = BA_best(rounds)
    assert best.values == {("Jeweler", "requires"): 0, ("Exchange", "requires"): 0}


def test_items_and_flagged_restrict_the_goal_items():
    from analysis.neom import balance_all as BA

    kinds = {"Spire": "cornerstone", "Villa": "tile", "Gold (good)": "good", "Jeweler": "dead"}
    a0 = BA.Assessment({}, {}, set(kinds), {}, {}, kinds, 4.0, 4, [], [], [])
    assert BA.goal_items(a0) == set(kinds)
    assert BA.goal_items(a0, flagged=True) == {"Spire", "Villa"}
    assert BA.goal_items(a0, items=["gold", "spire"]) == {"Gold (good)", "Spire"}
    assert BA.goal_items(a0, items=["Jeweler"], flagged=True) == {"Spire", "Villa", "Jeweler"}
    # Only Villa is a goal: Spire's plant stays, and is not counted in the loss.
    run, seen = _judged_pass(THREE_PLANTS, _three_plants, items=["Villa"])
    rounds, tracks = run.coordinate(budget=8)
    best = BA_best(rounds)
    assert set(tracks) == {"Villa"} and {k[0] for k in best.values} == {"Villa"}
    assert best.n_violations == 0 and abs(best.values[("Villa", "vp")] - 5) <= 1


def test_fresh_deals_reject_an_overshoot_and_an_edit_that_flags_its_own_tile():
    from analysis.neom import balance_all as BA

    def assessment(errors, decided, new_flags=()):
        kinds = {n: "tile" for n in errors}
        a = BA.Assessment({}, errors, set(decided), {}, {n: "x" for n in decided}, kinds, 0.0,
                          0, [], [], [])  # fmt: skip
        a.new_flags = list(new_flags)
        return a

    before = assessment({"Villa": 0.05, "Farm": 0.0, "Park": 0.0}, {"Villa"})
    after = assessment({"Villa": -0.04, "Farm": 0.06, "Park": 0.05}, {"Villa", "Farm", "Park"},
                       ["Farm", "Park"])  # fmt: skip
    values = {("Villa", "vp"): 1, ("Farm", "income"): 3, ("Mill", "cost"): 2}
    owner = {("Villa", "vp"): "Villa", ("Farm", "income"): "Villa", ("Mill", "cost"): "Villa"}
    kept, why = BA.fresh_rejections(values, owner, before, after, {"Villa"})
    # Villa ends flagged the other way: all its edits go.
    assert kept == {} and len(why) == 3 and "flagged the other way" in why[0]
    after = assessment({"Villa": 0.0, "Farm": 0.06}, {"Farm"}, ["Farm"])
    kept, why = BA.fresh_rejections(values, owner, before, after, {"Villa"})
    assert kept == {("Villa", "vp"): 1, ("Mill", "cost"): 2}
    assert why == ["Farm: income = 3: flags Farm on fresh deals (x)"]


def test_the_patch_has_two_parts_with_each_edits_measured_effect():
    from analysis.neom import balance_all as BA

    before = BA.Assessment({}, {}, set(), {}, {}, {}, 0.0, 0, [], [], [])
    before.figures = {"Spire": (0.09, 0.07, 0.11), "Gold (good)": (0.004, 0.004, 0.004)}
    after = BA.Assessment({}, {}, set(), {}, {}, {}, 0.0, 0, [], [], [])
    after.figures = {"Spire": (0.005, -0.015, 0.025), "Gold (good)": (0.2, 0.2, 0.2)}
    values = {("Spire", "vp"): 3, ("Refinery", "cost"): 3, ("Plaza", "vp"): 2}
    owner = {("Spire", "vp"): "Spire", ("Refinery", "cost"): "Gold (good)",
             ("Plaza", "vp"): "Spire"}  # fmt: skip
    shifts = {"Spire": (-0.08, -0.1, -0.06)}
    entries = BA.patch_entries(values, THREE_PLANTS, owner, {"Spire", "Gold (good)"}, before,
                               after, shifts)  # fmt: skip
    parts = {(e["tile"], e["part"]) for e in entries}
    assert parts == {("Spire", "goal"), ("Refinery", "goal"), ("Plaza", "knock-on")}
    spire = next(e for e in entries if e["tile"] == "Spire")
    assert (spire["from"], spire["to"], spire["shift"]) == (9, 3, [-0.08, -0.1, -0.06])
    summary = {"goal_items": ["Gold (good)", "Spire"], "patch": entries,
               "fresh_deals": {"seed": 7, "games": 800, "after": {"new_flags": ["Park"]}},
               "rejected_on_fresh_deals": ["Wind Farm: vp = 9: flags Wind Farm"]}  # fmt: skip
    text = "\n".join(BA.patch_md(summary))
    goal, knock = text.split("## Knock-on edits")
    assert "| Spire | vp | 9 | 3 | Spire | +9.0 [+7.0, +11.0] | +0.5 [-1.5, +2.5] | -8.0" in goal
    assert "| Refinery | cost | 10 | 3 | Gold (good) |" in goal and "Plaza" in knock
    assert "## Rejected on the fresh deals" in knock and "- Park" in knock


# --- issue 38: usage as a goal ----------------------------------------------------------------


def test_the_usage_deficit_is_the_tighter_floor_and_unknown_built_is_unbuilt():
    figures = {"kept": (0.30, 0.25, 0.35), "built": (0.40, 0.30, 0.50), "n": 80}
    assert B.usage_deficit(figures) == pytest.approx((-0.10, -0.20, 0.0))
    figures["built"] = (0.70, 0.60, 0.80)
    assert B.usage_deficit(figures) == pytest.approx((0.05, 0.0, 0.10))
    assert B.usage_deficit(figures, (0.40, 0.5))[0] == pytest.approx(-0.10)
    never = {"kept": (0.0, 0.0, 0.0), "built": (float("nan"),) * 3, "n": 0}
    assert B.usage_deficit(never) == (-0.5, -0.5, -0.5)


def test_the_usage_search_suggests_the_nearest_value_that_meets_the_floors():
    """Planted: the deficit rises 4 pct-pts a VP and crosses zero between 5 and 6 VP: the
    search moves the item's VP up (its own lever) and suggests 6, the first value at or above
    the floors, not 5, the value nearest zero."""

    def measure(value):
        f = 0.04 * (value - 5.6)
        return B.Point(value, f, f - 0.03, f + 0.03, 0.0, 0.0, 0.0, 0)

    lever = _lever(1)
    search = B.search_lever(measure, lever, measure(1), band=0.02, min_n=0)
    B._meet_floor(search)
    assert search.suggested == 6 and search.reached and "floors are met at 6" in search.stop
    # Only the item's own numbers that make it attractive: no requirement is cut.
    data = tomllib.loads(_v1_text())
    _, _, levers = B.item_levers(data, "Gold Exchange")
    paths = [lv.path for lv in B.attractive_levers(levers)]
    assert "requires" not in paths and {"cost", "income", "coins_on_place"} <= set(paths)


def test_the_usage_floor_rule_flags_only_what_its_counts_show():
    """The one floor rule of the report's usage table and the balance pass's usage goal
    (analysis/neom/usage.py): planted counts against the 25% kept and 50% built floors. A clear
    miss is flagged, a handful of offers is not (no test at small n can reject), a share near
    its floor is not, an item never offered is not tested, and a lower floor clears an item."""
    import polars as pl

    from analysis.neom.usage import below_floors

    frame = pl.DataFrame(
        {
            "tile_name": ["never kept", "small n", "near", "unbuilt", "both", "unseen", "fine"],
            "offered": [400, 4, 400, 400, 400, 0, 400],
            "taken": [8, 0, 92, 200, 40, 0, 200],
            "kept": [8, 0, 92, 200, 40, 0, 200],
            "built": [8, 0, 46, 40, 4, 0, 150],
        }
    )
    flags = dict(zip(frame["tile_name"], below_floors(frame)["below_floor"], strict=True))
    assert flags == {"never kept": "kept", "small n": "", "near": "", "unbuilt": "built",
                     "both": "kept, built", "unseen": "", "fine": ""}  # fmt: skip
    lower = dict(zip(frame["tile_name"], below_floors(frame, (0.25, 0.15))["below_floor"],
                     strict=True))  # fmt: skip
    # 20% built clears a 15% floor, and 4 builds of 40 keeps cannot show a miss of it.
    assert lower["unbuilt"] == "" and lower["both"] == "kept"
    # A generation tile is never marked (one tile of a hand of 8 is taken: no common floor).
    kinds = frame.with_columns(pl.Series("kind", ["tile"] + ["cornerstone"] * 6))
    assert below_floors(kinds)["below_floor"].to_list()[:2] == ["", ""]


def test_usage_options_are_checked(capsys):
    assert main(["balance", "Fire", "--goal", "usage", "--games", "8"]) == 1
    assert "--goal usage: Fire is a Disaster" in capsys.readouterr().err
    assert main(["balance", "--all", "--goal", "usage"]) == 1
    assert "--goal belongs to neom balance NAME" in capsys.readouterr().err
    assert main(["balance", "Central Park", "--goal", "usage", "--kept-floor", "120"]) == 1
    assert "--kept-floor 120: a share between 0 and 100 pct" in capsys.readouterr().err
    assert main(["balance", "Central Park", "--flagged"]) == 1
    assert "--items, --flagged and --structural belong to --all" in capsys.readouterr().err
    assert main(["balance", "--all", "--items", "Nope", "--out", "/nonexistent/x"]) == 1
    assert "--items 'Nope': no tile, cornerstone or good" in capsys.readouterr().err


@pytest.mark.slow  # reason: 14 evaluations of 4,000 strong-field games, 5 min 30 s on 2 busy cores
def test_known_answer_three_plants_in_a_copy_of_the_default_in_real_games(tmp_path):
    """Issue 38's known answer on real games: in a copy of the default (v3), a cornerstone +6 VP
    (City Archive 4 -> 10), a tile +4 VP (Family Homes 2 -> 6) and the only Gold producer's cost
    2 -> 10. The items off their goal on the planted copy but not on the default itself (the
    same deals) are the pass's goal items (the default's own flags exempt from rejection); its
    patch returns each planted number to within 1 of its original, repairs Gold at its producer
    (Gold made in >= 5% of games, no consumer's requirement cut) and changes at most 6 fields."""
    from analysis.neom import balance_all as BA
    from sim.core.strategies import split_strategies

    base = _default_text()
    planted = B.apply_values(base, {("City Archive", "vp"): 10, ("Family Homes", "vp"): 6,
                                    ("Gold Refinery", "cost"): 10})  # fmt: skip
    setting = B.Setting(strategies=split_strategies("strong"), players=4, games=4000, seed=1,
                        workers=2)  # fmt: skip
    goals = ("cornerstones", "tiles", "dead", "goods")

    def evaluator(text, name):
        return B.Evaluator(text, name, setting, tmp_path / name, B.Progress(1, quiet=True))

    clean = BA.assess(evaluator(base, "base").measure({}, events=True), setting, set(), goals)
    found = BA.assess(evaluator(planted, "planted").measure({}, events=True), setting, set(),
                      goals)  # fmt: skip

    # Found: off their goal on the planted copy, and not on the base or moved out by more
    # than the band (on v2, its Family Homes was flagged at +5.3 pct-pts already).
    def moved(n):
        return abs(found.figures.get(n, (0,))[0]) - abs(clean.figures.get(n, (0,))[0])

    items = sorted(n for n in found.decided if n not in clean.decided or moved(n) > setting.band)
    assert {"City Archive", "Family Homes", "Gold (good)"} <= set(items), items
    # The base's own flags, masked on the planted copy, come back as the plants are undone: known,
    # they are exempt (not new flags an edit made).
    run = BA.Pass(evaluator(planted, "planted"), tomllib.loads(planted), set(), "standard",
                  lambda *a: None, goals, 0, items,
                  exempt=clean.decided - set(items))  # fmt: skip
    rounds, _ = run.coordinate(12)
    _, best = run.prune(BA.best_of(rounds), None)
    values = best.values
    assert abs(values.get(("City Archive", "vp"), 10) - 4) <= 1, values
    assert abs(values.get(("Family Homes", "vp"), 6) - 2) <= 1, values
    assert values.get(("Gold Refinery", "cost"), 10) < 10 and "Gold (good)" not in best.decided
    assert all(path != "requires" for _, path in values) and len(values) <= 6, values


def test_known_answer_usage_goal_on_real_games_raises_an_unbuilt_cornerstone(tmp_path):
    """The fixture's Town Hall (0 printed VP, 2 VP per other Public tile) is built by about a
    quarter of its greedy drafters, below the 50% floor: `--goal usage` raises its own VP until
    both floors are met, and the fresh deals confirm it (kept and built above their floors)."""
    catalog = tmp_path / "fixture.toml"
    catalog.write_text(to_toml(valid_catalog()), encoding="utf-8")
    out = tmp_path / "usage.json"
    argv = ["balance", "Town Hall", "--goal", "usage", "--lever", "vp", "--catalog",
            str(catalog), "--players", "3", "--strategies", "greedy,greedy,greedy", "--games",
            "300", "--verify-games", "300", "--workers", "1", "--min-n", "30", "--json",
            str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    doc = json.loads(out.read_text())
    assert doc["goal"] == "usage" and doc["floors"] == [25.0, 50.0]
    assert doc["current_effect"][0] < 0  # below a floor as it is
    (lever,) = doc["levers"]
    assert lever["suggested"] > 0 and lever["in_band"] and lever["effect"] >= 0, lever
    rates = lever["rates"]
    assert rates["placed_rate"]["before"] < 0.5 <= rates["placed_rate"]["after"]


def test_a_new_flag_counts_against_an_edit_only_beyond_the_band():
    """A tile flagged on a candidate but not on the catalogue as it is rejects the candidate
    when its whole interval lies beyond the band and it moved out by more than the band; one
    whose interval reaches into the band, or that was as far out unflagged, does not."""
    from analysis.neom import balance_all as BA

    def assessment(decided, figures):
        kinds = {n: "tile" for n in figures}
        a = BA.Assessment({}, {n: f[0] for n, f in figures.items()}, set(decided), {}, {},
                          kinds, 0.0, 0, [], [], [])  # fmt: skip
        a.item_loss, a.figures = {n: 1.0 for n in decided}, figures
        return a

    base = assessment({"Villa"}, {"Villa": (0.06, 0.04, 0.08)})
    near = assessment({"Farm"}, {"Farm": (0.035, 0.015, 0.055)})
    far = assessment({"Farm"}, {"Farm": (0.05, 0.03, 0.07)})
    assert BA.judge(near, base, {"Villa"}, 0.02).new_flags == [] and near.loss == 0
    assert BA.judge(far, base, {"Villa"}, 0.02).new_flags == ["Farm"]
    assert far.loss == BA.REJECT and far.n_violations == 1
    assert BA.judge(near, base, {"Villa"}).new_flags == ["Farm"]  # no band: every new flag
    # Already that far out at the baseline, unflagged (the correction's doing): not the edit's.
    base.figures["Farm"] = (0.045, 0.025, 0.065)
    assert BA.judge(far, base, {"Villa"}, 0.02).new_flags == []
    base.figures["Farm"] = (0.025, 0.005, 0.045)
    assert BA.judge(far, base, {"Villa"}, 0.02).new_flags == ["Farm"]  # moved 2.5 pct-pts
    # Flagged without the edits (on a reference catalogue): exempt, never a new flag.
    assert BA.judge(far, base, {"Villa"}, 0.02, {"Farm"}).new_flags == [] and far.loss == 0


def test_a_tile_already_rare_at_the_baseline_is_no_new_flag_when_it_goes_unplaced():
    """Issue 38 on real games: the Gold plant starves Jeweler (not a goal item), placed in 1 of
    4,000 games on the planted copy and in none on some candidates' deals. Every round that
    moved the cornerstone alone then "flagged" Jeweler, was rejected and narrowed its levers
    to their current values, and the cornerstone stayed at its planted VP. A tile short of its
    goal already at the baseline is not the edit's flag; one on its goal there still is."""
    from analysis.neom import balance_all as BA

    data = {"tiles": [THREE_PLANTS["tiles"][0], THREE_PLANTS["tiles"][1],
                      THREE_PLANTS["tiles"][4]]}  # fmt: skip

    def model(values):
        spire = values.get(("Spire", "vp"), 9)
        # Placed in a few games on the catalogue as it is, in none on every candidate's deals.
        jeweler = -0.004 if not values else -0.005
        errors = {"Spire": 0.015 * (spire - 3), "Plaza": 0.0, "Jeweler": jeweler}
        kinds = {"Spire": "cornerstone", "Plaza": "cornerstone", "Jeweler": "dead"}
        return errors, kinds, {}, ({"Jeweler"} if not values else set())

    run, seen = _judged_pass(data, model)
    rounds, tracks = run.coordinate(budget=8)
    best = BA_best(rounds)
    assert run.targets == {"Spire"} and not any(a.new_flags for a in rounds)
    assert not tracks["Spire"].rejected and not tracks["Spire"].stuck
    assert abs(best.values[("Spire", "vp")] - 3) <= 1 and best.n_violations == 0, best.values
    # On its goal at the baseline and never placed on a candidate: a new flag, as before.
    base, a = rounds[0], rounds[1]
    base.errors["Jeweler"] = 0.0
    assert BA.judge(a, base, {"Spire"}, 0.02).new_flags == ["Jeweler"]


def test_a_cornerstone_out_of_band_by_its_own_interval_only_is_no_new_flag():
    """Issue 38 on real games: Lighthouse, drafted in 116 of 4,000 games, was -2.0 [-9.7, +5.7]
    pct-pts vs the median on the planted copy and -11.7 [-19.4, -4.0] on the candidates that
    cut Family Homes to 3 or 4 VP, unflagged by the report (its test against the band,
    corrected across cornerstones); counted as a new flag, it rejected both and left Family
    Homes at 5 VP. Only the report's flag is a new flag elsewhere, as for a tile."""
    from analysis.neom import balance_all as BA

    def assessment(figures, flagged=()):
        kinds = {n: "cornerstone" for n in figures}
        out = {n for n, f in figures.items() if f[1] > 0.02 or f[2] < -0.02}
        a = BA.Assessment({}, {n: f[0] for n, f in figures.items()}, out, {}, {}, kinds, 0.0,
                          0, [], list(flagged), sorted(out))  # fmt: skip
        a.item_loss, a.figures = {n: 1.0 for n in out}, figures
        return a

    base = assessment({"Spire": (0.27, 0.25, 0.30), "Lighthouse": (-0.020, -0.097, 0.057)})
    lighthouse = (-0.117, -0.194, -0.040)
    luck = assessment({"Spire": (0.0, -0.02, 0.02), "Lighthouse": lighthouse})
    assert BA.judge(luck, base, {"Spire"}, 0.02).new_flags == [] and luck.loss == 0
    flagged = assessment({"Spire": (0.0, -0.02, 0.02), "Lighthouse": lighthouse}, ["Lighthouse"])
    assert BA.judge(flagged, base, {"Spire"}, 0.02).new_flags == ["Lighthouse"]
    assert flagged.loss == BA.REJECT


def test_after_a_rejected_round_half_as_many_items_move_as_moved():
    """Four tiles one VP too strong, and four more no lever can move (so fewer items move than
    are off their goal); three or more moved together flag Plaza (a planted interaction). After
    the rejected first round, half as many as *moved* move (2), not half of those off their
    goal (4, the same set again, which ended the search)."""
    movable, fixed = ["A", "B", "C", "D"], ["E", "F", "G", "H"]
    data = {"tiles": [{"name": n, "deck": "gen1", "players": 1, "types": ["residential"],
                       "vp": 4} for n in movable]}  # fmt: skip
    data["tiles"] += [{"name": n, "deck": "gen1", "players": 1, "types": ["residential"],
                       "vp": 4, "known": ["vp", "cost", "income", "coins_on_place"]}
                      for n in fixed]  # fmt: skip

    def model(values):
        changed = sum(values.get((n, "vp"), 4) != 4 for n in movable)
        errors = {n: 0.03 * (values.get((n, "vp"), 4) - 3) for n in movable}
        errors |= {n: 0.05 for n in fixed} | {"Plaza": 0.06 if changed >= 3 else 0.0}
        return errors, {n: "tile" for n in errors}, {}

    run, seen = _judged_pass(data, model)
    rounds, tracks = run.coordinate(budget=12)
    best = BA_best(rounds)
    movers = [len(v) for _, v in seen[1:3]]
    assert movers == [4, 2], seen
    assert not best.new_flags and len(best.values) == 2
    assert all(tracks[n].stuck for n in fixed)


# --- issue 38: candidates judged in several fields (--also-field) -----------------------------


def _two_field_pass(data, models, items=None):
    """A Pass judged in two fields, "strong" (the search's) and "archetype", whose evaluations
    are each field's planted ``model(values) -> (errors, kinds)`` instead of games (an error
    is the item's signed figure; off its goal beyond the band), judged and combined by the
    pass itself."""
    from analysis.neom import balance_all as BA

    band, seen = 0.02, []

    def measured(values, model):
        errors, kinds = model(values)
        decided = {n for n, e in errors.items() if abs(e) > band}
        figures = {n: (e, e - 0.01, e + 0.01) for n, e in errors.items()}
        errors = {n: (e if n in decided else 0.0) for n, e in errors.items()}
        item_loss = {n: (abs(errors[n]) - band) / band for n in decided}
        problems = {n: f"{100 * errors[n]:+.1f}" for n in decided}
        return BA.Assessment(values, errors, decided, {}, problems, kinds,
                             sum(item_loss.values()), len(decided), [], sorted(decided), [],
                             0.0, {}, [], item_loss, figures)  # fmt: skip

    class Fake(BA.Pass):
        def assess_fields(self, values, what):
            seen.append(dict(values))
            return [(label, measured(values, model)) for label, model in models.items()]

    run = Fake(None, data, set(), "standard", lambda *entry: None, ("cornerstones", "tiles"), 0,
               items,
               label="strong", others=[(label, None) for label in list(models)[1:]])  # fmt: skip
    run.evaluator = type("E", (), {"setting": _setting()})()
    return run, seen


SPIRE = {"tiles": [{"name": "Spire", "deck": "cornerstone", "types": ["public"], "vp": 9}]}


def _spire_strong(values):  # the strong field: its zero at 3.1 VP, 1 pct-pt a VP
    return {"Spire": 0.01 * (values.get(("Spire", "vp"), 9) - 3.1)}, {"Spire": "cornerstone"}


def _spire_archetype(values):  # the archetype field: its zero at 6.5 VP
    return {"Spire": 0.01 * (values.get(("Spire", "vp"), 9) - 6.5)}, {"Spire": "cornerstone"}


def test_a_fix_that_overshoots_in_the_other_field_gives_way_to_a_smaller_edit():
    """Planted: Spire 9 VP, +5.9 pct-pts in the strong field (its zero at 3.1 VP), +2.5 in the
    archetype field (zero at 6.5): in the band in both only at 5 VP. Judged in the strong field
    alone the pass cuts it to 4 VP, where the archetype field flags it weak; judged in both it
    stops at 5."""
    one, _ = _two_field_pass(SPIRE, {"strong": _spire_strong})
    rounds, _ = one.coordinate(budget=10)
    naive = BA_best(rounds).values[("Spire", "vp")]
    assert naive == 4 and _spire_archetype({("Spire", "vp"): naive})[0]["Spire"] < -0.02
    both, seen = _two_field_pass(SPIRE, {"strong": _spire_strong,
                                         "archetype": _spire_archetype})  # fmt: skip
    rounds, tracks = both.coordinate(budget=10)
    best = BA_best(rounds)
    assert best.values[("Spire", "vp")] == 5 and best.n_violations == 0, seen
    assert both.targets == {"Spire"} and [label for label, _ in best.by_field] == [
        "strong", "archetype"]  # fmt: skip
    assert rounds[0].problems["Spire"] == "strong: +5.9; archetype: +2.5"


def test_fresh_deals_reject_an_edit_whose_item_ends_flagged_the_other_way_in_another_field():
    """The naive fix (4 VP) on fresh deals: in the band in the strong field, flagged weak in
    the archetype field: rejected, and the reason names the field. A fix that holds in both
    fields is kept."""
    from analysis.neom import balance_all as BA

    run, _ = _two_field_pass(SPIRE, {"strong": _spire_strong, "archetype": _spire_archetype})
    before = run.judge_fields(run.assess_fields({}, ""))
    naive = {("Spire", "vp"): 4}
    after = run.judge_fields(run.assess_fields(naive, ""))
    kept, why = BA.fresh_rejections(naive, {("Spire", "vp"): "Spire"}, before, after, {"Spire"})
    assert kept == {} and why == ["Spire: vp = 4: Spire ends flagged the other way on fresh "
                                  "deals in the archetype field (-2.5)"]  # fmt: skip
    good = {("Spire", "vp"): 5}
    after = run.judge_fields(run.assess_fields(good, ""))
    # From 5 VP (in the band in both) to 4: off its goal in the archetype field only.
    naive_after = run.judge_fields(run.assess_fields(naive, ""))
    assert BA.newly_off(after, naive_after, {"Spire"}) == ["Spire [archetype]: -2.5"]
    assert BA.fresh_rejections(good, {("Spire", "vp"): "Spire"}, before, after,
                               {"Spire"}) == (good, [])  # fmt: skip


def test_an_item_fine_to_fix_in_both_fields_is_fixed_and_a_new_flag_in_either_rejects():
    """Villa +4 VP in both fields (zero at 5 VP) is returned to within 1 of 5; Plaza, flagged in
    the archetype field only below 5 VP of Villa, rejects the rounds that go that far (a new
    flag in any field is a new flag)."""
    data = {"tiles": [{"name": "Villa", "deck": "gen1", "players": 1, "types": ["residential"],
                       "vp": 9}]}  # fmt: skip

    def strong(values):
        return {"Villa": 0.012 * (values.get(("Villa", "vp"), 9) - 5), "Plaza": 0.0}, {
            "Villa": "tile", "Plaza": "cornerstone"}  # fmt: skip

    def archetype(values):
        villa = values.get(("Villa", "vp"), 9)
        return {"Villa": 0.012 * (villa - 5), "Plaza": 0.05 if villa < 5 else 0.0}, {
            "Villa": "tile", "Plaza": "cornerstone"}  # fmt: skip

    run, seen = _two_field_pass(data, {"strong": strong, "archetype": archetype})
    rounds, tracks = run.coordinate(budget=10)
    best = BA_best(rounds)
    assert run.targets == {"Villa"} and best.n_violations == 0 and not best.new_flags
    assert best.values[("Villa", "vp")] in (5, 6)
    # A round that went below 5 VP was judged a new flag (in the archetype field only).
    for a in rounds:
        if a.values.get(("Villa", "vp"), 9) < 5:
            assert a.new_flags == ["Plaza"] and a.loss >= 100
            assert [f.new_flags for _, f in a.by_field] == [[], ["Plaza"]]


def test_also_field_is_checked_before_any_game(tmp_path, capsys):
    catalog = _planted_catalog(tmp_path, "Tower 1", "vp", 3 + 8)
    for field, words in (
        ("nosuch,greedy,greedy", "unknown strategy 'nosuch'"),
        ("greedy,greedy,greedy", "the same field as --strategies"),
    ):
        argv = _whole_pass(catalog, tmp_path / "pass", 300, 2, "cornerstones", "--also-field",
                           field)  # fmt: skip
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "pass").exists()
    # balance NAME checks it too, before its search.
    argv = ["balance", "Tower 1", "--catalog", str(catalog), "--players", "3", "--strategies",
            "greedy,greedy,greedy", "--games", "300", "--also-field", "greedy,greedy,greedy",
            "--quiet"]  # fmt: skip
    assert main(argv) == 1
    assert "the same field as --strategies" in capsys.readouterr().err


def test_balance_name_accepts_a_suggestion_only_if_no_field_flags_it_the_other_way():
    """``balance NAME --also-field``: a suggestion that brings the item into the band in the
    search's field but leaves its whole interval below the band in another (the edit moved it
    down) is not accepted; nor is one that moves another item's paired shift wholly beyond
    the band in some field; one fine in both is."""
    from analysis.core.balance import Search
    from analysis.neom.balance_cli import judge_fields, summary_lines

    lever = B.Lever("Tower 1", "vp", 11, 1, "VP")
    result = type("R", (), {"searches": [Search(lever, suggested=4)], "verified": {
        "": {"target": (0.09, 0.07, 0.11)},
        "vp": {"target": (0.0, -0.02, 0.02), "shift": (-0.09, -0.1, -0.08), "others": []},
    }})()  # fmt: skip

    def field(after, others=()):
        return {
            "": {"target": (0.03, 0.01, 0.05)},
            "vp": {"target": after, "shift": (-0.06, -0.07, -0.05), "others": list(others)},
        }

    for after, others, accepted in (
        ((-0.04, -0.06, -0.025), (), False),  # flagged the other way in "builder"
        ((-0.01, -0.03, 0.01), (), True),
        ((-0.01, -0.03, 0.01), ({"name": "Farm", "lo": 0.025, "hi": 0.04},), False),
    ):
        records = [{"lever": "vp", "suggested": 4}]
        judge_fields(records, result, {"builder": field(after, others)}, "greedy", 0.02)
        assert records[0]["accepted"] is accepted, (after, others)
        assert [f["field"] for f in records[0]["fields"]] == ["greedy", "builder"]
    assert records[0]["fields"][1]["new_flags"] == ["Farm"]
    doc = {"item": "Tower 1", "kind": "cornerstone", "band": 2.0, "effect_definition": "x",
           "field": "greedy", "players": 3, "games": 300, "seed": 1, "fresh_seed": 2,
           "verify_games": 300, "current_effect": [9.0, 7.0, 11.0],
           "levers": [records[0] | {"lever": "vp", "current": 11, "effect": 0.0, "lo": -2.0,
                                    "hi": 2.0, "slope": None, "in_band": True, "stop": "",
                                    "reached_on_search_deals": True}]}  # fmt: skip
    text = "\n".join(summary_lines(doc))
    assert "| vp | 4 | builder | +3.0 [+1.0, +5.0] | -1.0 [-3.0, +1.0] | Farm | no |" in text


@pytest.mark.slow  # reason: 8 runs, 2 comparisons: 11 s on 2 busy cores (the fakes above: 0.1 s)
def test_a_whole_pass_in_two_fields_writes_each_fields_figures(tmp_path):
    """``--also-field`` on real games: every evaluation and fresh-deal run is played in both
    fields, and the patch, summary and comparisons are given per field."""
    catalog = _planted_catalog(tmp_path, "Tower 1", "vp", 3 + 8)
    out = tmp_path / "pass"
    argv = _whole_pass(catalog, out, 300, 2, "cornerstones", "--prune-evals", "0", "--items",
                       "tower 1", "--also-field", "builder,builder,builder")  # fmt: skip
    assert main(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["fields"] == {"greedy,greedy,greedy": ["greedy"] * 3,
                                 "builder,builder,builder": ["builder"] * 3}  # fmt: skip
    assert set(summary["fresh_deals"]["by_field"]) == set(summary["fields"])
    runs = [json.loads((p / "manifest.json").read_text()) for p in (out / "runs").iterdir()]
    played = sorted((r["seed"], r["strategies"][0]["name"]) for r in runs)
    # Two evaluations and two fresh-deal sides, each in both fields.
    assert len(played) == 8 and sum(name == "builder" for _, name in played) == 4
    assert (out / "compare" / "index.html").is_file()
    assert (out / "compare-builder-builder-builder" / "index.html").is_file()
    (tower,) = summary["patch"]  # the plant goes down, measured in both fields
    assert tower["tile"] == "Tower 1" and tower["to"] < 11
    fields = [f["field"] for f in tower["fields"]]
    assert fields == ["greedy,greedy,greedy", "builder,builder,builder"]
    assert "| builder,builder,builder |" in (out / "patch.md").read_text()
    assert "candidate [builder,builder,builder]" in (out / "log.md").read_text()
