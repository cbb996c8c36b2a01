"""Issue 39's known answers on planted tables: flags that share a tag and a direction read as
one systemic finding; the ranked next steps; every cornerstone and tile has a usage row, even
at 0 drafts; the economy glance names the field that makes a good the other does not."""

import math
from pathlib import Path

import polars as pl

from analysis.neom import next_step
from analysis.neom.report import economy_field_lines
from analysis.neom.usage import usage_table
from sim.neom import constants as K
from sim.neom.catalog import load_catalog

CATALOG = Path(__file__).resolve().parent.parent / "sim" / "neom" / "data" / "default_catalog.toml"


def _flag(tables, tile: int, direction: str, effect: float, vp: float) -> dict:
    return {"tile": tile, "name": tables.tile_names[tile], "direction": direction,
            "effect": effect, "lo": effect - 0.02, "hi": effect + 0.02, "vp": vp,
            "weight": 1.0}  # fmt: skip


def test_flags_sharing_a_tag_and_a_direction_are_one_finding():
    """Four power tiles flagged weak and three residential tiles flagged strong (the pattern
    issue 39 found in the strong field), plus one strong power tile and one weak commercial
    tile: two groups (members, mean effect, interval, mean VP) and two single items."""
    tables = load_catalog(CATALOG)
    generation = [t for t in range(tables.n_tiles)
                  if tables.tiles[t, K.C_DECK] in (K.DECK_GEN1, K.DECK_GEN2, K.DECK_GEN3)
                  and tables.tiles[t, K.C_DISASTER] == K.DIS_NONE]  # fmt: skip
    power = [t for t in generation if tables.tiles[t, K.C_POWER]]
    homes = [t for t in generation if "residential" in next_step.tags(tables, t)
             and not tables.tiles[t, K.C_POWER]]  # fmt: skip
    shops = [t for t in generation if next_step.tags(tables, t) == ["commercial"]]
    assert len(power) >= 5 and len(homes) >= 3 and shops
    flags = [_flag(tables, t, "weak", -0.04 - 0.01 * i, -1.0 - i) for i, t in enumerate(power[:4])]
    flags += [_flag(tables, t, "strong", 0.05, 1.0) for t in homes[:3]]
    flags += [_flag(tables, power[4], "strong", 0.06, 1.2), _flag(tables, shops[0], "weak", -0.05,
                                                                  -1.0)]  # fmt: skip
    groups, left = next_step.group_flags(flags, tables)
    found = {(g["tag"], g["direction"]): g for g in groups}
    assert set(found) == {("power", "weak"), ("residential", "strong")}
    weak_power = found[("power", "weak")]
    assert {m["tile"] for m in weak_power["members"]} == set(power[:4])
    summary = next_step.group_summary(weak_power["members"])
    assert math.isclose(summary["effect"], -0.055) and summary["lo"] < -0.055 < summary["hi"]
    # Four members' standard errors (0.02 / 1.96 each) averaged: the mean's is half of one.
    assert math.isclose(summary["hi"] - summary["effect"], 0.01)
    assert math.isclose(summary["vp"], -2.5)
    assert {m["tile"] for m in left} == {power[4], shops[0]}


def test_a_member_far_beyond_its_group_stays_single():
    """Issue 39's look at the three-plant catalogue: the planted +4 VP Family Homes (+21
    pct-pts) was listed as one of 12 residential tiles "about 1.4 VP each". Four residential
    tiles at about +5 pct-pts and one at +21 [+20, +22]: the four are the group, the fifth is a
    single item; one at +9 [+5, +13] (its interval reaches twice the median) stays a member."""
    tables = load_catalog(CATALOG)
    homes = [t for t in range(tables.n_tiles)
             if tables.tiles[t, K.C_DECK] in (K.DECK_GEN1, K.DECK_GEN2, K.DECK_GEN3)
             and next_step.tags(tables, t) == ["residential"]]  # fmt: skip
    assert len(homes) >= 6
    flags = [_flag(tables, t, "strong", 0.045 + 0.002 * i, 1.0) for i, t in enumerate(homes[:4])]
    planted = _flag(tables, homes[4], "strong", 0.21, 4.0)
    planted["lo"], planted["hi"] = 0.20, 0.22
    wide = _flag(tables, homes[5], "strong", 0.09, 1.5)
    wide["lo"], wide["hi"] = 0.05, 0.13
    groups, left = next_step.group_flags(flags + [planted, wide], tables)
    (group,) = groups
    assert {m["tile"] for m in group["members"]} == set(homes[:4]) | {homes[5]}
    assert [m["tile"] for m in left] == [homes[4]]


def test_steps_rank_by_expected_vp_per_edit_times_robustness():
    """A group ranks by its VP per member (one edit each), its total breaking ties; a dead
    chain ranks first; an unmeasured step last."""
    steps = [
        {"name": "robust 2 VP", "expected_vp": 2.0, "weight": 1.0},
        {"name": "vanishing 3 VP", "expected_vp": -3.0, "weight": 0.5},
        {"name": "group of 4 x 1 VP", "expected_vp": 4.0, "weight": 0.75, "items": 4},
        {"name": "group of 8 x 1 VP", "expected_vp": 8.0, "weight": 0.75, "items": 8},
        {"name": "unmeasured", "expected_vp": math.nan, "weight": 1.0},
        {"name": "dead chain", "expected_vp": 1.0, "weight": 1.0, "first": True},
    ]
    ranked = [s["name"] for s in next_step.rank_steps(steps)]
    assert ranked == ["dead chain", "robust 2 VP", "vanishing 3 VP", "group of 8 x 1 VP",
                      "group of 4 x 1 VP", "unmeasured"]  # fmt: skip


def test_the_archetype_field_is_named_short(monkeypatch):
    """The four archetypes of `make run`'s check field, in any order, read "the archetype
    field" (not "the field greedy, builder, merchant, industrialist" in every mark); any other
    plain field keeps its strategies as its name."""
    from types import SimpleNamespace

    from analysis.core import robustness
    from analysis.neom import report

    monkeypatch.setattr(robustness, "named_field", lambda run: None)
    archetypes = SimpleNamespace(strategy_names=["industrialist", "greedy", "merchant", "builder"])
    assert report.field_name(archetypes) == "the archetype field"
    assert report.field_words(archetypes) == (
        "the archetype field (industrialist, greedy, merchant, builder)"
    )
    greedy = SimpleNamespace(strategy_names=["greedy", "greedy", "builder", "merchant"])
    assert report.field_name(greedy) == "the field greedy, builder, merchant"
    assert report.field_words(greedy) == "the field greedy, builder, merchant"


def test_every_cornerstone_and_tile_has_a_usage_row_even_at_zero_drafts():
    """A cornerstone table missing one cornerstone (never dealt: the Lighthouse row that was
    missing) and a tile table of two tiles: the usage table still has every cornerstone and
    generation tile, the missing ones at zero, and the rates where they are defined."""
    tables = load_catalog(CATALOG)
    corner = [int(t) for t in tables.deck(K.DECK_CORNERSTONE)]
    measured = pl.DataFrame({
        "tile": corner[1:], "drafted": [30] * (len(corner) - 1),
        "left_in_draft": [10] * (len(corner) - 1), "placed": [3] * (len(corner) - 1),
    })  # fmt: skip
    gen1 = [int(t) for t in tables.deck(K.DECK_GEN1)
            if tables.tiles[t, K.C_DISASTER] == K.DIS_NONE]  # fmt: skip
    tile_rows = pl.DataFrame({
        "tile": gen1[:2], "seen": [100, 50], "taken_when_seen": [40, 0], "selected": [40, 0],
        "placed": [30, 0],
        "sold": [8, 0], "for_cornerstone": [2, 0],
    })  # fmt: skip
    table = usage_table(tables, measured, tile_rows)
    kinds = table.group_by("kind").len()
    n_generation = sum(1 for t in range(tables.n_tiles)
                       if tables.tiles[t, K.C_DECK] in (K.DECK_GEN1, K.DECK_GEN2, K.DECK_GEN3)
                       and tables.tiles[t, K.C_DISASTER] == K.DIS_NONE)  # fmt: skip
    assert dict(kinds.iter_rows()) == {"cornerstone": len(corner), "tile": n_generation}
    missing = table.filter(pl.col("tile") == corner[0]).row(0, named=True)
    assert (missing["offered"], missing["kept"], missing["built"]) == (0, 0, 0)
    assert math.isnan(missing["kept_rate"])
    kept = table.filter(pl.col("tile") == corner[1]).row(0, named=True)
    assert kept["kept_rate"] == 0.75 and kept["built_rate"] == 0.1
    first = table.filter(pl.col("tile") == gen1[0]).row(0, named=True)
    assert (first["built_rate"], first["sold_rate"], first["kept_rate"]) == (0.75, 0.2, 0.4)
    never = table.filter(pl.col("tile") == gen1[1]).row(0, named=True)
    assert never["offered"] == 50 and never["kept"] == 0 and math.isnan(never["built_rate"])


def test_the_glance_names_the_field_that_makes_a_good():
    """Copper under 5% of the main field's cities and made by the check field's; Gold made
    here and broken in the check field (a planted chain break the main field never reaches):
    one glance line each, naming both fields; goods both make, or both fail, say nothing."""
    both = pl.DataFrame({
        "good_name": ["Copper", "Gold", "Wood", "Hovercars"],
        "share": [0.0, 0.30, 0.9, 0.01],
        "fails_at": ["Copper Smelter: sold", "", "", "x"],
        "share_check": [0.12, 0.004, 0.95, 0.02],
        "fails_at_check": ["", "Gold Mine: unaffordable", "", "y"],
    })  # fmt: skip
    lines = economy_field_lines(both, "the field greedy", "the strong field")
    assert len(lines) == 2
    assert lines[0].startswith("Economy per field: the field greedy makes Copper in 0.0%")
    assert "the strong field makes Copper in 12.0%" in lines[0]
    assert lines[1] == ("Economy (the strong field): Gold in 0.4% of its cities (here 30.0%), "
                        "fails at Gold Mine: unaffordable.")  # fmt: skip
    assert not any("Wood" in line or "Hovercars" in line for line in lines)
