"""Issue 27's and 39's known answers: one meaning per mark (robust, weaker/stronger,
vanishes/appears, reversed) and the same counts everywhere; flags against the median
cornerstone; the economy (a good no tile can produce, the goods of the final cities, the
action mix); the dominated check; Disasters apart from the tiles; the dead-tile counts."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import tomlkit

from analysis.core.load import open_run
from analysis.core.report import build_report
from analysis.core.robustness import (
    APPEARS,
    MARKS,
    REVERSED,
    ROBUST,
    STRONGER,
    UNFLAGGED,
    VANISHES,
    WEAKER,
    count_marks,
    counts_words,
    marks,
)
from analysis.core.tabulate import with_median_flags
from analysis.neom import economy
from analysis.neom.synthetic import write_run
from sim.neom import constants as K
from sim.neom.catalog import load_catalog
from sim.neom.constants import N_GENERATIONS, SELL_COINS
from tests.run_helpers import placeholder_figures, small_run

CATALOG = Path(__file__).resolve().parent.parent / "sim" / "neom" / "data" / "default_catalog.toml"


def _effects(rows: list[tuple]) -> pl.DataFrame:
    """An effect table: (name, effect, se, flag, n)."""
    effect = np.array([r[1] for r in rows])
    se = np.array([r[2] for r in rows])
    return pl.DataFrame(
        {
            "tile_name": [r[0] for r in rows],
            "n": [r[4] for r in rows],
            "small": [r[4] < 100 for r in rows],
            "clusters": [1000] * len(rows),
            "flag": [r[3] for r in rows],
            "effect": effect,
            "effect_lo": effect - 1.96 * se,
            "effect_hi": effect + 1.96 * se,
            "effect_se": se,
        }
    )


def test_marks_have_one_meaning_each():
    """Planted pairs of findings, one per mark: flagged alike in both fields is robust; the
    same sign and significant in both but flagged in one is weaker (flagged here) or stronger
    (flagged there) in the other field; flagged in one field and not significant in the other
    vanishes or appears; opposite signs both significant is reversed, flagged or not; flagged
    in neither is not a finding; too small or absent in one field gets no mark."""
    main = _effects([
        ("holds", 0.10, 0.01, "strong", 500), ("shrinks", 0.10, 0.01, "strong", 500),
        ("grows", 0.03, 0.01, "", 500), ("vanishes", 0.10, 0.01, "strong", 500),
        ("appears", 0.005, 0.01, "", 500), ("reverses", 0.10, 0.01, "strong", 500),
        ("quiet", 0.0, 0.01, "", 500), ("flips inside the band", 0.015, 0.003, "", 500),
        ("small", 0.10, 0.01, "strong", 500), ("absent", 0.10, 0.01, "strong", 500),
    ])  # fmt: skip
    other = _effects([
        ("holds", 0.08, 0.01, "strong", 500), ("shrinks", 0.03, 0.01, "", 500),
        ("grows", 0.10, 0.01, "strong", 500), ("vanishes", 0.005, 0.01, "", 500),
        ("appears", 0.10, 0.01, "strong", 500), ("reverses", -0.10, 0.01, "weak", 500),
        ("quiet", 0.002, 0.01, "", 500), ("flips inside the band", -0.015, 0.003, "", 500),
        ("small", 0.10, 0.01, "", 50),
    ])  # fmt: skip
    marked = marks(main, other, "tile_name", min_n=100)
    got = dict(marked.select("tile_name", "robustness").rows())
    assert got == {
        "holds": ROBUST, "shrinks": WEAKER, "grows": STRONGER, "vanishes": VANISHES,
        "appears": APPEARS, "reverses": REVERSED, "flips inside the band": REVERSED,
        "quiet": UNFLAGGED, "small": None, "absent": None,
    }  # fmt: skip
    # The counted set: flagged in either field or reversed (quiet is not a finding).
    count = count_marks(marked.iter_rows(named=True))
    assert count == {ROBUST: 1, WEAKER: 1, STRONGER: 1, VANISHES: 1, APPEARS: 1, REVERSED: 2,
                     None: 2}  # fmt: skip
    words = counts_words(count, "the strong field")
    assert "1 weaker in the strong field" in words and "2 reversed" in words
    assert "fragile" not in words
    # A sign flip that is not significant on one side is not a reversal: it vanishes.
    weak_other = _effects([("reverses", -0.01, 0.01, "", 500)])
    row = marks(main.filter(pl.col("tile_name") == "reverses"), weak_other, "tile_name")
    assert row["robustness"].to_list() == [VANISHES]


def test_a_check_run_marks_planted_findings(tmp_path, monkeypatch):
    """Two synthetic fields on one catalogue: a cornerstone strong in both is robust, one
    strong here and weak there is reversed, one strong here only vanishes; findings.json
    carries the marks, the headline ranks the robust one first and says both runs' sizes; the
    glance, the check section and findings.json give the same counts of each mark."""
    hold, flip, vanish = 3, 5, 7
    main_run = write_run(tmp_path / "main", n_games=1200, catalog_path=CATALOG, events=False,
                         boosts={hold: 1.5, flip: 1.5, vanish: 1.5}, seed=1)  # fmt: skip
    check_run = write_run(tmp_path / "check", n_games=900, catalog_path=CATALOG, events=False,
                          boosts={hold: 1.5, flip: -1.5}, seed=2)  # fmt: skip
    out = tmp_path / "out"
    placeholder_figures(monkeypatch)  # the marks are checked in the text and tables
    build_report(main_run, out, check=check_run)
    run = open_run(main_run)
    items = json.loads((out / "findings.json").read_text())
    pooled = {i["name"]: i for i in items if i["kind"] == "cornerstone" and "strategy" not in i}
    assert pooled[run.tile_name(hold)]["robustness"] == ROBUST
    assert pooled[run.tile_name(flip)]["robustness"] == REVERSED
    assert pooled[run.tile_name(vanish)]["robustness"] == VANISHES
    assert pooled[run.tile_name(flip)]["check"]["flag"] == "weak"
    assert all("robustness" in i for i in items)
    text = (out / "index.html").read_text(encoding="utf-8")
    # What to change first opens the page; the headline follows the glance.
    assert text.index('id="next"') < text.index('id="findings"')
    headline = text[text.index('id="findings"') : text.index("<nav>")]
    assert headline.index(run.tile_name(hold)) < headline.index(run.tile_name(flip))
    assert headline.index(run.tile_name(flip)) < headline.index(run.tile_name(vanish))
    assert "1,200 and 900 games" in text and "reversed" in text
    # A single item's step opens with its name, then its kind and mark (not the mark first).
    name = run.tile_name(hold)
    assert f'<li><b>{name}</b> (cornerstone, <span class="robust">robust</span>) ' in text
    steps = pl.read_csv(out / "tables" / "next_steps.csv")
    step = steps.filter(pl.col("name") == name)["step"][0]
    assert step.startswith(f"{name} (cornerstone, robust) ")
    # The check field is named once with its strategies, in one pair of brackets at most.
    assert "</code>, the field random, on the same catalogue" in text and "))" not in text
    assert "flag changes" not in text and "fragile" not in text
    # One count, everywhere: the check section's per kind, findings.json's, the glance's.
    there = "the field random"
    pooled_items = [i for i in items if "strategy" not in i]
    summary = (out / "summary.md").read_text(encoding="utf-8")
    for kind in ("cornerstone", "seat", "strategy"):
        of_kind = [i for i in pooled_items if i["kind"] == kind]
        if kind == "cornerstone":
            assert f"reversed: {counts_words(count_marks(of_kind), there)}." in summary
    every = count_marks(pooled_items)
    assert sum(every[m] for m in MARKS) >= 3
    assert f"or reversed, {counts_words(every, there)}." in summary


def test_a_dominant_cornerstone_flags_only_itself():
    """One cornerstone far above the rest pushes the others below expected (zero-sum): against
    expected they all look weak, against the median cornerstone only the dominant one is
    flagged."""
    rows = [("dominant", 0.20, 0.004, "", 2000)] + [
        (f"ordinary {i}", -0.03 + 0.0005 * i, 0.002, "", 2000) for i in range(9)
    ]
    flagged = with_median_flags(_effects(rows).drop("flag", "small"))
    by_name = dict(flagged.select("tile_name", "flag").rows())
    assert by_name.pop("dominant") == "strong"
    assert set(by_name.values()) == {""}
    mirror = dict(flagged.select("tile_name", "flag_vs_expected").rows())
    assert sum(flag == "weak" for flag in mirror.values()) == 9


def _tables_with(tables, tile: int, **columns):
    """The catalogue with one tile's columns set (tile table columns by K name)."""
    tiles = tables.tiles.copy()
    for name, value in columns.items():
        tiles[tile, getattr(K, name)] = value
    return replace(tables, tiles=tiles)


def test_an_income_tile_is_dominated_by_the_sale_unless_its_income_pays():
    """A generation-1 tile worth only its income collects 3 incomes at best: income 1 (3
    coins) loses to the 5-coin sale, income 3 (9 coins) beats it."""
    tables = load_catalog(CATALOG)
    plain = next(
        t for t in tables.deck(K.DECK_GEN1)
        if not economy.beyond_coins(tables, int(t)) and tables.tiles[t, K.C_DISASTER] == K.DIS_NONE
    )  # fmt: skip
    req = tables.req.copy()
    req[plain, :, K.R_COST] = 0
    base = replace(tables, req=req)
    for income, dominated in ((1, True), (3, False)):
        changed = _tables_with(base, int(plain), C_INCOME=income, C_VP=0, C_COINS_ON_PLACE=0)
        row = economy.dominated_tiles(changed).filter(pl.col("tile") == plain).row(0, named=True)
        assert (row["incomes"], row["value"]) == (N_GENERATIONS, income * N_GENERATIONS)
        assert row["dominated"] is dominated
        # Income 2 (6 coins) is the least that beats the sale; income 3 affords a cost of 4.
        assert row["income_needed"] == 2
        assert row["max_cost"] == income * N_GENERATIONS - SELL_COINS
    assert SELL_COINS == 5  # rules S4: a sold tile pays 5 coins


# --- an engine run on a catalogue where one good cannot be produced -------------------------


def _without_good(tmp_path) -> tuple[Path, str]:
    """The default catalogue with one processed good taken out of every tile's production and
    requirements: it is declared, and no tile can produce it."""
    doc = tomlkit.parse(CATALOG.read_text(encoding="utf-8"))
    tiers = {str(g["name"]): str(g["tier"]) for g in doc["goods"]}
    produced = {str(p) for t in doc["tiles"] for p in t.get("produces", [])}
    # Concrete: a processed good several Residential tiles need, made by generation tiles only
    # (the planted break must be the scarcest good of the glance, not one of its ties at 0%).
    good = "Concrete"
    assert good in produced and tiers[good] == "processed"

    def drop(array):
        kept = [str(x) for x in array if str(x) != good]
        return kept

    for tile in doc["tiles"]:
        for key in ("produces", "requires"):
            if key in tile:
                tile[key] = drop(tile[key])
        for alternative in tile.get("alternatives", []):
            if "requires" in alternative:
                alternative["requires"] = drop(alternative["requires"])
    path = tmp_path / "catalog.toml"
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
    return path, good


@pytest.fixture(scope="module")
def no_good(tmp_path_factory):
    root = tmp_path_factory.mktemp("nogood")
    catalog, good = _without_good(root)
    run = root / "run"
    small_run(run, "neom", ("greedy", "builder", "merchant", "industrialist"), 4, 80, 5,
              events=True, data=catalog, batch_size=40)  # fmt: skip
    out = root / "report"
    with pytest.MonkeyPatch.context() as patch:
        placeholder_figures(patch)  # the tests read its tables and text, not its images
        build_report(run, out)
    return run, out, good


def test_a_good_no_tile_produces_shows_zero_and_is_named(no_good):
    run_path, out, good = no_good
    goods = pl.read_csv(out / "tables" / "goods_by_generation.csv")
    mine = goods.filter(pl.col("good_name") == good)
    assert mine.height == N_GENERATIONS and (mine["cities"] == 0).all()
    assert (mine["share"] == 0).all()
    assert goods.filter(pl.col("good_name") != good)["cities"].sum() > 0
    chains = pl.read_csv(out / "tables" / "goods.csv").filter(pl.col("good_name") == good)
    assert chains["fails_at"].to_list() == [f"no tile produces {good}"]
    glance = (out / "summary.md").read_text(encoding="utf-8").split("## Headline")[0]
    assert f"{good} 0.0%" in glance and f"no tile produces {good}" in glance


def test_a_dead_chain_is_the_first_step_with_a_goods_pass(no_good):
    """A good no city makes is a dead chain: the first of the ranked next steps (above every
    step ranked by VP), naming the good, with the goods pass as its command."""
    run_path, out, good = no_good
    steps = pl.read_csv(out / "tables" / "next_steps.csv")
    first = steps.row(0, named=True)
    assert first["kind"] == "dead_chain" and f"{good} 0.0%" in first["members"], first
    assert "--all --goals goods --items " in first["step"]
    text = (out / "index.html").read_text(encoding="utf-8")
    steps_html = text[text.index('id="next"') :]
    assert steps_html.index("Dead chain:") < steps_html.index("</ol>")
    assert "dead chain, ranked first" in steps_html


def test_the_goods_at_the_end_are_the_final_cities(no_good):
    """The cities rebuilt from the log at the end of generation 3 produce exactly the goods the
    engine recorded for the final city (players.goods_mask)."""
    run = open_run(no_good[0])
    players = run.players.select("goods_mask").collect()["goods_mask"].to_numpy()
    goods = economy.goods_by_generation(run).filter(pl.col("generation") == N_GENERATIONS)
    for row in goods.iter_rows(named=True):
        assert row["cities"] == int(((players >> row["good"]) & 1).sum()), row["good_name"]


def test_every_selection_is_placed_sold_discarded_or_a_disaster(no_good):
    mix = economy.action_mix(open_run(no_good[0]))
    pooled = mix.filter(pl.col("strategy_name") == "all")
    shares = pooled.select(sum(pl.col(f"{a}_share") for a in economy.ACTIONS)).to_series()
    np.testing.assert_allclose(shares.to_numpy(), 1.0)
    assert pooled["selections_per_seat"].to_list() == [float(K.TURNS_PER_GENERATION)] * 3


def test_disasters_are_apart_from_the_tiles(no_good):
    run_path, out, _ = no_good
    tables = open_run(run_path).tables
    disasters = {
        tables.tile_names[t] for t in range(tables.n_tiles)
        if tables.tiles[t, K.C_DISASTER] != K.DIS_NONE
    }  # fmt: skip
    tile_names = set(pl.read_csv(out / "tables" / "tiles.csv")["tile_name"])
    assert not tile_names & disasters
    effects = pl.read_csv(out / "tables" / "disaster_effects.csv")
    assert set(effects["tile_name"]) <= disasters and effects.height > 0
    assert effects["levers"].str.len_chars().min() > 0
    items = json.loads((out / "findings.json").read_text())
    assert {i["name"] for i in items if i["kind"] == "disaster"} == set(effects["tile_name"])
    text = (out / "index.html").read_text(encoding="utf-8")
    section = text[text.index('id="disasters"') :]
    assert "for the chooser" in text and "Lever" in section


def test_dead_tiles_say_never_placed_and_not_dealt_apart(no_good):
    """The count of never-placed tiles is of tiles dealt; tiles not dealt at this player
    count are counted on their own, in the section and in the summary alike."""
    run_path, out, _ = no_good
    dead = pl.read_csv(out / "tables" / "dead_tiles.csv")
    not_dealt = dead.filter(pl.col("why").str.starts_with("never dealt")).height
    never = dead.filter(~pl.col("why").str.starts_with("never dealt") & pl.col("dead")).height
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert f"{never} generation tiles in play were never placed" in summary
    if not_dealt:
        assert f"{not_dealt} more are not dealt at this player count" in summary
    text = (out / "index.html").read_text(encoding="utf-8")
    assert (
        f"never placed ({never})" in text
        or f"dealt at this player count and never placed ({never})" in text
    )


def test_strategies_named_by_their_parameters_get_short_names(tmp_path, monkeypatch):
    """A strategy labelled by its whole parameter string is shown by a short name on the page,
    in the summary and in the figures, and listed once with its whole label; the CSV tables
    keep the whole label."""
    from analysis.core import figures
    from analysis.core.report import short_names

    placeholder_figures(monkeypatch)  # the figures' renaming is checked on a figure below

    long = "greedy:money_weight=0.123456,goods_weight=1.5,vp_weight=2.25"
    assert short_names(["greedy", long, long + ",x=1"]) == {
        long: "greedy#1",
        long + ",x=1": "greedy#2",
    }
    run = write_run(tmp_path / "run", n_games=300, strategies={long: 0.2, "random": 0.0},
                    catalog_path=CATALOG)  # fmt: skip
    out = tmp_path / "out"
    build_report(run, out)
    text = (out / "index.html").read_text(encoding="utf-8")
    assert text.count(long) == 1 and "greedy#1" in text
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert summary.count(long) == 1 and "greedy#1" in summary
    assert long in pl.read_csv(out / "tables" / "strategies.csv")["strategy_name"].to_list()
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    ax.bar([long, "random"], [0.3, 0.2])
    ax.set_yticks([0.1, 0.2], [long, "b"])
    figures.rename_texts(fig, {long: "greedy#1"})
    fig.canvas.draw()
    shown = [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
    assert "greedy#1" in shown and long not in shown


def test_a_failing_good_always_names_the_link_that_fails():
    """A good in too few cities fails at its producer when that producer is placed often enough
    but by too few cities, else further up its chain; a good in enough cities does not fail."""
    tables = load_catalog(CATALOG)
    good = next(g for g in range(len(tables.goods_tier)) if economy.producers(tables, g))
    producer = max(economy.producers(tables, good))
    n_goods = len(tables.goods_tier)
    rows = [(gen, g, 0.5) for gen in range(1, N_GENERATIONS + 1) for g in range(n_goods)]
    goods = pl.DataFrame(rows, schema=["generation", "good", "share"], orient="row")
    few = goods.with_columns(
        pl.when(pl.col("good") == good).then(0.01).otherwise(pl.col("share")).alias("share")
    )
    placed = {producer: 100}
    chains = economy.good_chains(few, placed, 1000, tables, {})
    row = chains.filter(pl.col("good") == good).row(0, named=True)
    assert row["fails_at"] == f"{tables.tile_names[producer]}: placed by too few cities"
    assert tables.good_names[good] in row["chain"]
    fine = economy.good_chains(goods, placed, 1000, tables, {})
    assert (fine["fails_at"] == "").all()


def test_a_planted_tile_leaves_the_other_tiles_flags_in_place():
    """Two generations of tiles with real effects (two strong, two weak, the rest null). A
    plant makes one tile of generation 2 dominant and, zero-sum, pushes every other tile 3
    pct-pts down (as the three plants of issue 39 moved the others). Against the median tile
    of its generation only the plant's flag changes, in both generations; against expected
    the null tiles turn weak (the column ``flag_vs_expected`` keeps that reading)."""
    from analysis.neom.tiles import with_generation_median_flags

    def table(plant: bool) -> pl.DataFrame:
        rows, generations = [], []
        for gen in (1, 2):
            for i in range(14):
                effect = {0: 0.09, 1: 0.08, 2: -0.08, 3: -0.09}.get(i, 0.0005 * (i - 8))
                if plant and gen == 2 and i == 13:
                    effect = 0.30
                elif plant:
                    effect -= 0.03
                rows.append((f"gen{gen} tile {i}", effect, 0.004, "", 4000))
                generations.append(gen)
        return (
            _effects(rows)
            .drop("flag", "small")
            .with_columns(pl.Series("generation", generations, dtype=pl.Int32))
        )

    before = with_generation_median_flags(table(False), None)
    after = with_generation_median_flags(table(True), None)
    flags = dict(before.select("tile_name", "flag").rows())
    flags_after = dict(after.select("tile_name", "flag").rows())
    assert flags_after.pop("gen2 tile 13") == "strong" and flags.pop("gen2 tile 13") == ""
    assert flags_after == flags
    assert sorted(v for v in flags.values() if v) == ["strong"] * 4 + ["weak"] * 4
    # Against expected, the same plant flags the null tiles weak: the reading the fix replaces.
    expected = dict(after.select("tile_name", "flag_vs_expected").rows())
    assert sum(expected[name] == "weak" and not flag for name, flag in flags.items()) >= 16
