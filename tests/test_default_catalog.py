"""The default catalogue (a labelled reconstruction) obeys the constraints the rules texts and
the known facts state. Read straight from the TOML, independently of the catalogue compiler.
Every test runs on the shipped default and on the first reconstruction kept for earlier
results (catalog_reconstruction_v1.toml): both obey the same texts.

Sources quoted: the rules texts (shared/rules/000-003) and shared/data/neom_known_facts.md.
"""

import tomllib
from collections import Counter
from pathlib import Path

import pytest

from sim.neom import constants as K

DATA = Path(__file__).resolve().parent.parent / "sim" / "neom" / "data"
CATALOG_PATH = DATA / "default_catalog.toml"
V1_PATH = DATA / "catalog_reconstruction_v1.toml"
V2_PATH = DATA / "catalog_reconstruction_v2.toml"
NAMES = {
    CATALOG_PATH: "NEOM default (reconstructed, v3: rebalanced for use)",
    V1_PATH: "NEOM default (reconstructed)",
    V2_PATH: "NEOM default (reconstructed, v2: rebalanced)",
}
GENERATIONS = ("gen1", "gen2", "gen3")


@pytest.fixture(
    scope="module", params=[CATALOG_PATH, V1_PATH, V2_PATH], ids=["default", "v1", "v2"]
)
def path(request):
    return request.param


@pytest.fixture(scope="module")
def catalog(path):
    with path.open("rb") as fh:
        return tomllib.load(fh)


@pytest.fixture(scope="module")
def tiles(catalog):
    return catalog["tiles"]


@pytest.fixture(scope="module")
def by_name(tiles):
    return {tile["name"]: tile for tile in tiles}


@pytest.fixture(scope="module")
def tiers(catalog):
    return {good["name"]: good["tier"] for good in catalog["goods"]}


def types_of(tile):
    return set(tile["types"])


def is_substitute(tile):
    return tile.get("replaces", "") != ""


def standard_deck(tiles, deck):
    """The tiles of one deck as dealt in the standard game (substitutes excluded)."""
    return [t for t in tiles if t["deck"] == deck and not is_substitute(t)]


def effect_kinds(tile):
    return {effect["kind"] for effect in tile.get("effects", [])}


def all_requirement_goods(tile):
    goods = set(tile.get("requires", []))
    for alternative in tile.get("alternatives", []):
        goods |= set(alternative.get("requires", []))
    return goods


# --- Labelling ------------------------------------------------------------------------------


def test_catalogue_is_labelled_as_a_reconstruction(catalog, path):
    """Facts: 'The printed tile catalogue ... is not publicly available as text. ... Everything
    not listed here must be reconstructed, and labelled as such.'"""
    header = catalog["catalog"]
    assert header["reconstructed"] is True
    assert header["name"] == NAMES[path]
    assert "NOT the published tile set" in header["description"]
    assert "RECONSTRUCTION, NOT THE PUBLISHED TILE SET" in path.read_text()


# --- Goods and boards -----------------------------------------------------------------------


def test_goods_are_six_raw_eight_processed_three_luxury(catalog):
    """Facts: 'Goods: 6 raw, 8 processed, 3 luxury (17 in all)'; rules 002: '資源トークン:6種類,
    加工品トークン:8種類, 高級品トークン:3種類'."""
    counts = Counter(good["tier"] for good in catalog["goods"])
    assert counts == {"raw": 6, "processed": 8, "luxury": 3}
    names = [good["name"] for good in catalog["goods"]]
    assert len(set(names)) == 17


def test_known_goods_keep_their_names_and_unknown_ones_are_marked_invented(catalog):
    """Facts: 'Raw goods (all six known): Ore, Natural Gas, Wood, Oil, Coal, Stone. Processed
    goods known: Steel, Glass, Copper, Gold, Concrete, Lumber, and probably Plastic. The eighth
    is unknown. The three luxury goods are unknown.'"""
    goods = {good["name"]: good for good in catalog["goods"]}
    raw = {"Ore", "Natural Gas", "Wood", "Oil", "Coal", "Stone"}
    known_processed = {"Steel", "Glass", "Copper", "Gold", "Concrete", "Lumber", "Plastic"}
    assert {n for n, g in goods.items() if g["tier"] == "raw"} == raw
    assert known_processed < {n for n, g in goods.items() if g["tier"] == "processed"}
    for name, good in goods.items():
        known = name in raw or name in known_processed
        assert good.get("invented", False) is not known, name


def test_six_boards_one_per_raw_good_with_three_or_four_center_roads(catalog, tiers):
    """Facts: '6 City boards ... Boards differ only in the City Center's raw good and its roads
    (3 or 4 roads leave the center, by board). One board per raw good is the likely
    arrangement.'"""
    boards = catalog["boards"]
    assert len(boards) == 6
    assert sorted(b["good"] for b in boards) == sorted(n for n, t in tiers.items() if t == "raw")
    for board in boards:
        assert len(board["roads"]) in (3, 4), board["name"]
        assert set(board["roads"]) <= set("NESW") and len(set(board["roads"])) == len(
            board["roads"]
        )


# --- Deck composition -----------------------------------------------------------------------


@pytest.mark.parametrize("deck", GENERATIONS)
def test_each_generation_has_24_one_plus_8_four_plus_8_five_plus(tiles, deck):
    """Facts: 'each generation has 24 tiles marked 1+, 8 marked 4+, 8 marked 5+. 3 players x 8 =
    24, 4 x 8 = 32, 5 x 8 = 40: the deck is dealt out exactly.'"""
    icons = Counter(t["players"] for t in standard_deck(tiles, deck))
    assert icons == {1: 24, 4: 8, 5: 8}


@pytest.mark.parametrize(("deck", "kind"), [("gen1", "flood"), ("gen2", "fire"), ("gen3", "crime")])
def test_one_disaster_per_generation_in_printed_order(tiles, deck, kind):
    """Rules 000: 'Every Generation deck has a special tile ... Flood in the 1st Generation, Fire
    in the 2nd Generation, and Crime Spree in the 3rd Generation.' Facts: the Disaster must be a
    1+ tile, for 3 players."""
    disasters = [t for t in standard_deck(tiles, deck) if "disaster" in types_of(t)]
    assert len(disasters) == 1
    (tile,) = disasters
    assert tile["disaster"] == kind
    assert tile["players"] == 1
    assert tile["types"] == ["disaster"]
    assert tile["roads"] == ""


def test_thirty_cornerstones_without_icon_or_disaster_mostly_public(tiles):
    """Facts: '150 tiles: 30 Cornerstone tiles + 40 Generation tiles for each of Generations 1, 2
    and 3.' Rules 000 on Public tiles: 'Most Cornerstone tiles fall under this category.'"""
    cornerstones = standard_deck(tiles, "cornerstone")
    assert len(cornerstones) == 30
    assert all("players" not in t and "disaster" not in types_of(t) for t in cornerstones)
    public = sum("public" in types_of(t) for t in cornerstones)
    assert public > len(cornerstones) / 2


def test_substitutes_replace_each_disaster_and_the_insurance_office(tiles, by_name):
    """Rules 001: 'No disasters: Disasters are replaced with city tiles. Insurance Office is
    removed.' 'Random disasters: Disasters are replaced with city tiles.' A substitute keeps the
    deck and player-count icon of what it stands in for, so the deal stays exact."""
    substitutes = [t for t in tiles if is_substitute(t)]
    replaced = Counter(t["replaces"] for t in substitutes)
    assert replaced == {"Flood": 1, "Fire": 1, "Crime Spree": 1, "Insurance Office": 1}
    for substitute in substitutes:
        original = by_name[substitute["replaces"]]
        assert substitute["deck"] == original["deck"]
        assert substitute["players"] == original["players"]
        assert "disaster" not in types_of(substitute)
    removed = [t["name"] for t in tiles if t.get("removed_no_disasters", False)]
    assert removed == ["Insurance Office"]


def test_tile_names_are_unique_and_references_resolve(tiles, by_name, tiers):
    """Contract: a tile name is unique across the file; `replaces`, `requires_tiles` and goods
    name existing things."""
    names = [t["name"] for t in tiles]
    assert len(names) == len(set(names))
    for tile in tiles:
        assert all(name in by_name for name in tile.get("requires_tiles", [])), tile["name"]
        goods = all_requirement_goods(tile) | set(tile.get("produces", []))
        assert goods <= set(tiers), tile["name"]


# --- Tiles known by name ---------------------------------------------------------------------


def test_steel_foundry(by_name):
    """Rules 003: 'La fundición de acero de segunda generación requiere que produzcas tanto
    carbón como mineral.' Facts: Industrial; presumably produces Steel."""
    tile = by_name["Steel Foundry"]
    assert tile["deck"] == "gen2"
    assert tile["types"] == ["industrial"]
    assert sorted(tile["requires"]) == ["Coal", "Ore"]
    assert tile["produces"] == ["Steel"]
    assert tile["polluting"] is True


def test_treasury_requires_steel_or_five_coins(by_name):
    """Rules 003: 'La tesorería de segunda generación requiere que produzcas acero.
    Alternativamente, puede pagar £ 5 al suministro general.' Facts: a plan aims at it with
    'lots of money and Steel in Gen 2', so it must be worth solid VP."""
    tile = by_name["Treasury"]
    assert tile["deck"] == "gen2"
    assert tile["requires"] == ["Steel"] and tile.get("cost", 0) == 0
    assert tile["alternatives"] == [{"requires": [], "cost": 5}]
    assert "public" in types_of(tile)
    assert tile["vp"] >= 6


def test_contract_office_swaps_a_cornerstone(by_name):
    """Rules 000: 'the 1st Generation Contract Office (available with 4 or more players) allows
    you to swap your unplaced Cornerstone tile for another random one.'"""
    tile = by_name["Contract Office"]
    assert (tile["deck"], tile["players"]) == ("gen1", 4)
    assert effect_kinds(tile) == {"swap_cornerstone"}


def test_postal_service_and_modular_factory_add_income(by_name):
    """Rules 000: 'If you have the 2nd Generation Postal Service Public tile or the Modular
    Factory Cornerstone Industrial tile in your City, you'll get some extra money to add to your
    income.'"""
    postal = by_name["Postal Service"]
    assert postal["deck"] == "gen2" and postal["types"] == ["public"]
    assert postal["income"] > 0
    factory = by_name["Modular Factory"]
    assert factory["deck"] == "cornerstone" and factory["types"] == ["industrial"]
    assert factory["income"] > 0 and factory["polluting"] is True


def test_merchant_union_pays_a_coin_per_commercial_placed(by_name):
    """Rules 000: 'Whenever you place a Commercial tile in your City, the Merchant Union
    Cornerstone tile will provide you with ₤1.'"""
    tile = by_name["Merchant Union"]
    assert tile["deck"] == "cornerstone"
    assert tile["effects"] == [
        {"kind": "coins_on_type_placed", "types": ["commercial"], "coins": 1}
    ]


@pytest.mark.parametrize("name", ["Condos & Restaurant", "Apartments & Retail"])
def test_gen3_residential_commercial_tiles(by_name, name):
    """Rules 000: 'the 3rd Generation Condos & Restaurant and Apartments & Retail tiles are
    considered both Residential and Commercial. This means that they provide both income and
    Victory Points.'"""
    tile = by_name[name]
    assert tile["deck"] == "gen3"
    assert types_of(tile) == {"residential", "commercial"}
    assert tile["vp"] > 0 and tile["income"] > 0


def test_fire_departments_in_gen1_and_gen2(tiles):
    """Rules 000: 'Fire Departments ... are available in the 1st and 2nd Generation decks. These
    brave firefighters protect themselves and all the nearby tiles, up to 8 surrounding tiles,
    from Fire.' Rules 001: 'Fire Department: +2 VP' without disasters."""
    fire = [t for t in tiles if t["name"].startswith("Fire Department")]
    assert sorted(t["deck"] for t in fire) == ["gen1", "gen2"]
    for tile in fire:
        assert tile["types"] == ["public"]
        assert tile["protects"] == ["fire"]
        assert tile["vp_no_disasters"] == 2


def test_police_departments_protect_against_crime(tiles):
    """Rules 001: 'Players can protect their tiles from the Fire and Crime Spree penalty by
    building certain Public tiles' and 'Police Department: +3 VP' without disasters."""
    police = [t for t in tiles if t["name"].startswith("Police Department")]
    assert police and {t["deck"] for t in police} <= {"gen2", "gen3"}
    for tile in police:
        assert tile["types"] == ["public"]
        assert tile["protects"] == ["police"]
        assert tile["vp_no_disasters"] == 3


def test_public_safety_department(by_name):
    """Facts: 'Public Safety Department | Cornerstone | Public; protects against both Fire and
    Crime Spree; +5 VP in the no-disasters variant'."""
    tile = by_name["Public Safety Department"]
    assert tile["deck"] == "cornerstone" and tile["types"] == ["public"]
    assert sorted(tile["protects"]) == ["fire", "police"]
    assert tile["vp_no_disasters"] == 5


def test_insurance_office_concerns_disasters(by_name):
    """Rules 001: 'No disasters: ... Insurance Office is removed', so it concerns disasters; it
    cannot spare Flood, since 'There is no protection from Flood.'"""
    tile = by_name["Insurance Office"]
    assert tile["removed_no_disasters"] is True
    (effect,) = tile["effects"]
    assert effect["kind"] == "insurance"
    assert effect["disasters"] and "flood" not in effect["disasters"]


def test_cheap_and_weak_commercial_tiles(by_name, tiles):
    """Facts: 'Pawn Shop ... a cheap tile players sometimes sacrifice to a disaster'; 'Food
    Court, Grocery Store (play reports, weak) probably Commercial'."""
    commercial_incomes = [t.get("income", 0) for t in tiles if "commercial" in types_of(t)]
    for name in ("Pawn Shop", "Food Court", "Grocery Store"):
        tile = by_name[name]
        assert tile["types"] == ["commercial"]
        assert tile.get("cost", 0) <= 1 and not tile.get("requires")
        assert tile["income"] <= sorted(commercial_incomes)[len(commercial_incomes) // 2]
    assert by_name["Pawn Shop"].get("cost", 0) == 0


def test_resource_agency_rewards_raw_goods(by_name):
    """Facts: 'Resource Agency | Cornerstone (play reports) | rewards Resource tiles / raw
    goods'."""
    tile = by_name["Resource Agency"]
    assert tile["deck"] == "cornerstone"
    assert {"kind": "vp_per_good_tier", "tier": "raw", "vp": 2} in tile["effects"]


def test_hydroelectric_power_plant_scores_alone_in_a_corner(tiles):
    """Facts: 'a hydroelectric power plant | Cornerstone (play reports) | Power; 10 VP when
    placed alone in a corner'."""
    (tile,) = [t for t in tiles if "hydroelectric" in t["name"].lower()]
    assert tile["deck"] == "cornerstone" and tile["power"] is True
    assert "public" in types_of(tile)  # only Residential and Public tiles score VP
    (effect,) = tile["effects"]
    assert effect["kind"] == "vp_placement" and effect["vp"] == 10
    assert sorted(effect["conditions"]) == ["corner", "no_neighbours"]


def test_nuclear_power_plant_is_power_and_polluting(tiles):
    """Facts: 'a nuclear power plant | (publisher blurb, weak) | probably Power and
    Polluting'."""
    (tile,) = [t for t in tiles if "nuclear" in t["name"].lower()]
    assert tile["power"] is True and tile["polluting"] is True


# --- Tile types -----------------------------------------------------------------------------


def test_industrial_tiles_are_always_polluting_and_score_no_vp(tiles):
    """Rules 000: 'Industrial tiles don't give you Victory Points either. Instead, they produce
    Processed Goods and, in the 3rd Generation, Luxury Goods. ... Industrial tiles are always
    Polluting.'"""
    industrial = [t for t in tiles if "industrial" in types_of(t)]
    assert industrial
    for tile in industrial:
        assert tile["polluting"] is True, tile["name"]
        assert tile.get("vp", 0) == 0, tile["name"]
        assert tile["produces"], tile["name"]


def test_residential_tiles_have_vp_and_no_other_effects(tiles):
    """Rules 000: 'Residential (green) tiles have a Victory Point value and don't have any other
    effects.' Generation Residential VP stays in a 1-5 scale (a Neighborhood of 8 is worth 36)."""
    for tile in tiles:
        if types_of(tile) != {"residential"}:
            continue
        assert tile["vp"] > 0, tile["name"]
        for field in ("income", "coins_on_place", "produces", "power", "protects", "effects"):
            assert not tile.get(field), (tile["name"], field)
        if tile["deck"] != "cornerstone":
            assert 1 <= tile["vp"] <= 5, tile["name"]


def test_commercial_tiles_give_income_not_vp(tiles):
    """Rules 000: 'Commercial tiles don't give you Victory Points. Instead, they give you income
    at the end of each Generation. ... some Commercial tiles also give you a one-time monetary
    boost when you place them.'"""
    commercial = [t for t in tiles if types_of(t) == {"commercial"}]
    for tile in commercial:
        assert tile["income"] > 0, tile["name"]
        assert tile.get("vp", 0) == 0, tile["name"]
    assert any(t.get("coins_on_place", 0) > 0 for t in commercial)


def test_commercial_tiles_needing_a_processed_good_pay_a_lot(tiles, tiers):
    """Facts: 'Commercial tiles that require a processed good (e.g. Gold) pay a lot'."""

    def payout(tile):
        return tile["income"] + tile.get("coins_on_place", 0)

    commercial = [t for t in tiles if types_of(t) == {"commercial"} and t["deck"] != "cornerstone"]
    needy = [t for t in commercial if any(tiers[g] == "processed" for g in t.get("requires", []))]
    others = [t for t in commercial if t not in needy]
    assert needy
    average_other = sum(payout(t) for t in others) / len(others)
    assert all(payout(t) > average_other for t in needy)


def test_public_tiles_carry_vp_often_variable(tiles):
    """Rules 000: 'Public (orange) tiles are quite valuable, as they offer a significant number
    of Victory Points. Some Public tiles might have a variable number of Victory Points.'"""
    vp_kinds = {"vp_per_type_in_city", "vp_per_type_adjacent", "vp_per_good_tier", "vp_placement"}
    public = [t for t in tiles if "public" in types_of(t)]
    for tile in public:
        assert tile.get("vp", 0) > 0 or effect_kinds(tile) & vp_kinds, tile["name"]
        assert tile.get("vp", 0) <= 8, tile["name"]
    assert sum(bool(effect_kinds(t) & vp_kinds) for t in public) >= 10


def test_resource_tiles_produce_raw_goods_and_score_no_vp(tiles, tiers):
    """Rules 000: 'Resource (grey) tiles, on the other hand, do not have a Victory Point value.
    Instead, they allow you to produce Raw Goods.'"""
    for tile in tiles:
        if "resource" in types_of(tile):
            assert tile.get("vp", 0) == 0, tile["name"]
            assert tile["produces"] and all(tiers[g] == "raw" for g in tile["produces"])


def test_residential_commercial_tiles_only_in_gen3(tiles):
    """Rules 000 names the 3rd Generation Condos & Restaurant and Apartments & Retail as the
    tiles that are both Residential and Commercial."""
    for tile in tiles:
        if {"residential", "commercial"} <= types_of(tile):
            assert tile["deck"] == "gen3", tile["name"]


# --- Goods tree -----------------------------------------------------------------------------


def test_processed_goods_come_from_raw_goods(tiles, tiers):
    """Rules 000: 'Processed Goods ... are produced by Industrial tiles'; facts: 'Steel Foundry
    needs Coal and Ore'. Every generation tile that makes a processed good needs 1-2 raw goods;
    a cornerstone may make one from coins alone (the Modular Factory's Plastic, mf38p:
    docs/reconstruction.md "The goods tree")."""
    producers = [t for t in tiles if any(tiers[g] == "processed" for g in t.get("produces", []))]
    assert {g for t in producers for g in t["produces"]} == {
        n for n, tier in tiers.items() if tier == "processed"
    }
    for tile in producers:
        assert "industrial" in types_of(tile), tile["name"]
        needs = tile.get("requires", [])
        assert all(tiers[g] == "raw" for g in needs) and len(needs) <= 2, tile["name"]
        assert needs or tile["deck"] == "cornerstone", tile["name"]


def test_luxury_goods_come_from_gen3_industry_on_processed_goods(tiles, tiers):
    """Rules 000: 'Luxury Goods – represented by octagonal tokens – are produced specifically by
    3rd Generation Industrial tiles.' Each such producer needs 1-2 processed goods."""
    producers = [t for t in tiles if any(tiers[g] == "luxury" for g in t.get("produces", []))]
    assert {g for t in producers for g in t["produces"]} == {
        n for n, tier in tiers.items() if tier == "luxury"
    }
    for tile in producers:
        assert tile["deck"] == "gen3" and tile["types"] == ["industrial"], tile["name"]
        needs = tile["requires"]
        assert 1 <= len(needs) <= 2 and all(tiers[g] == "processed" for g in needs), tile["name"]


def test_every_required_good_can_be_produced(catalog, tiles):
    """Rules 000: a tile's goods come from 'Goods produced by your City or bought from another
    player', so every good a tile asks for must be produced by some tile or board."""
    producible = {board["good"] for board in catalog["boards"]}
    producible |= {g for t in tiles for g in t.get("produces", [])}
    required = {g for t in tiles for g in all_requirement_goods(t)}
    assert required <= producible


def test_gen1_has_resource_tiles_for_every_raw_good(tiles, tiers):
    """Rules 000: 'Raw Goods ... are produced by Resource tiles'. A city starts with one raw
    good, so Gen 1 offers every raw good (several tiles) and Gen 2 still some."""
    gen1 = [t for t in standard_deck(tiles, "gen1") if "resource" in types_of(t)]
    assert {g for t in gen1 for g in t["produces"]} == {n for n, t in tiers.items() if t == "raw"}
    assert any("resource" in types_of(t) for t in standard_deck(tiles, "gen2"))


# --- Power, prerequisites, effects, roads, costs ----------------------------------------------


def test_power_tiles_in_every_deck_some_polluting(tiles):
    """Rules 001: 'You lose 5 VP if you do not have at least one Power-generating tile in your
    City', so every deck offers Power; rules 002: 発電タイル (Power tiles)."""
    power = [t for t in tiles if t.get("power", False) and not is_substitute(t)]
    assert {t["deck"] for t in power} == {"cornerstone", *GENERATIONS}
    assert any(t.get("polluting", False) for t in power)
    assert any(not t.get("polluting", False) for t in power)
    one_plus_gen1 = [t for t in power if t["deck"] == "gen1" and t["players"] == 1]
    assert len(one_plus_gen1) >= 2


def test_prerequisite_tiles_are_few_and_mostly_gen3(tiles, by_name):
    """Rules 003: 'Ciertas fichas en tu ciudad, que debes haber colocado en turnos anteriores.
    (Este tipo de requisito se encuentra solo en algunos mosaicos de tercera generación).'"""
    with_prereq = [t for t in tiles if t.get("requires_tiles")]
    assert 2 <= len(with_prereq) <= 8
    assert sum(t["deck"] == "gen3" for t in with_prereq) > len(with_prereq) / 2
    order = {"cornerstone": 0, "gen1": 1, "gen2": 2, "gen3": 3}
    for tile in with_prereq:
        assert len(tile["requires_tiles"]) <= K.MAX_PREREQS
        for name in tile["requires_tiles"]:
            assert order[by_name[name]["deck"]] <= order[tile["deck"]], tile["name"]
    assert any(
        order[by_name[name]["deck"]] < order[t["deck"]]
        for t in with_prereq
        for name in t["requires_tiles"]
    )


def test_every_effect_kind_is_used(tiles):
    """The effect vocabulary (sim.constants.EFFECT_NAMES) is exercised by the default
    catalogue, so every effect the engine implements appears in real games."""
    used = {kind for t in tiles for kind in effect_kinds(t)}
    assert used == set(K.EFFECT_NAMES)
    assert all(len(t.get("effects", [])) <= K.MAX_EFFECTS for t in tiles)


def test_some_cornerstones_take_the_discarded_cornerstone(tiles):
    """Facts: 'Some Cornerstone tiles let their owner take the Cornerstone discarded in the
    preliminary draft.'"""
    takers = [t for t in tiles if "take_discarded_cornerstone" in effect_kinds(t)]
    assert len(takers) >= 2 and all(t["deck"] == "cornerstone" for t in takers)


def test_roads_are_varied(tiles):
    """Rules 001: 'The newly placed tile must be connected through Roads to the City Center ...
    You may not rotate the tile', so every side needs roads and shapes must vary: mostly 2-4
    roads, some 1-road tiles, straight and corner pieces; only Disasters have none."""
    placed = [t for t in tiles if "disaster" not in types_of(t)]
    for tile in placed:
        roads = tile["roads"]
        assert roads and set(roads) <= set("NESW") and len(set(roads)) == len(roads), tile["name"]
    lengths = Counter(len(t["roads"]) for t in placed)
    assert lengths[1] >= 5
    assert lengths[2] + lengths[3] + lengths[4] > 0.85 * len(placed)
    shapes = {frozenset(t["roads"]) for t in placed if len(t["roads"]) == 2}
    assert {frozenset("NS"), frozenset("EW")} <= shapes
    assert {frozenset("NE"), frozenset("ES"), frozenset("SW"), frozenset("NW")} <= shapes
    sides = Counter(letter for t in placed for letter in t["roads"])
    assert max(sides.values()) - min(sides.values()) <= 0.1 * max(sides.values())


def test_costs_rise_by_generation(tiles):
    """Rules 000: players start with ₤6 and a sold tile gives ₤5, so Gen 1 tiles cost 0-4
    coins; later generations cost more on average."""
    means = []
    for deck in GENERATIONS:
        costs = [t.get("cost", 0) for t in standard_deck(tiles, deck)]
        means.append(sum(costs) / len(costs))
        if deck == "gen1":
            assert max(costs) <= 4
    assert means == sorted(means) and means[0] < means[2]


def test_v1_is_the_earlier_default_byte_for_byte():
    """catalog_reconstruction_v1.toml is the default catalogue before the rebalance (issue 26
    part 4), unchanged to the byte: earlier runs recorded its sha256, so they are reproduced and
    resumed with --catalog pointing at it."""
    import hashlib

    digest = hashlib.sha256(V1_PATH.read_bytes()).hexdigest()
    assert digest == "b71ce1e61debb8707e8924223ca7c315de60f711ad3e409c65869e5953650619"


def test_v2_is_the_earlier_default_byte_for_byte():
    """catalog_reconstruction_v2.toml is the default catalogue before the issue 38 rebalance
    (version 3), unchanged to the byte: runs made on v2 recorded its sha256 (e6620985...)."""
    import hashlib

    digest = hashlib.sha256(V2_PATH.read_bytes()).hexdigest()
    assert digest == "e6620985d220612c1e1d73d7467bf9a6ea6e14d41c3fc15dbd9b9a40fd103931"


def test_shipped_catalogues_by_name(tmp_path, monkeypatch):
    """--catalog takes a shipped catalogue's name instead of a path (docs/reconstruction.md,
    "Versions"): reconstruction_v1 reads catalog_reconstruction_v1.toml's bytes and names that
    file; a file of that name in the working folder comes first; any other missing name is the
    usual one-line error."""
    import hashlib

    from sim.core.errors import UserError
    from sim.neom.catalog import read_catalog

    monkeypatch.chdir(tmp_path)
    tables, raw = read_catalog("reconstruction_v1")
    assert raw == V1_PATH.read_bytes() and tables.source == V1_PATH.name
    assert tables.digest == hashlib.sha256(raw).hexdigest() and tables.reconstructed
    tables, raw = read_catalog("reconstruction_v2")
    assert raw == V2_PATH.read_bytes() and tables.source == V2_PATH.name
    assert tables.digest == hashlib.sha256(raw).hexdigest() and tables.reconstructed
    assert read_catalog("default")[1] == CATALOG_PATH.read_bytes()
    (tmp_path / "reconstruction_v1").write_bytes(CATALOG_PATH.read_bytes())
    assert read_catalog("reconstruction_v1")[1] == CATALOG_PATH.read_bytes()
    with pytest.raises(UserError, match="reconstruction_v9: catalogue file not found"):
        read_catalog("reconstruction_v9")


def test_a_catalogue_read_again_is_compiled_once_and_named_by_its_own_file(tmp_path, monkeypatch):
    """read_catalog keeps what it compiled by the file's bytes: a copy of the catalogue
    under another name, or the same file read again, is the same catalogue with its own
    source and arrays of its own, neither parsed nor compiled again; other bytes, or a
    catalogue with problems, are parsed and compiled (and refused) afresh each time."""
    import numpy as np

    from sim.core.errors import CatalogError
    from sim.neom import catalog as C

    copy = tmp_path / "copy.toml"
    copy.write_bytes(CATALOG_PATH.read_bytes())
    first, raw = C.read_catalog(CATALOG_PATH)
    compiles, parses = [], []
    real, parse = C.compile_catalog, C.read_toml_input
    monkeypatch.setattr(C, "compile_catalog", lambda *a: compiles.append(a[1]) or real(*a))
    monkeypatch.setattr(C, "read_toml_input", lambda *a: parses.append(a[3]) or parse(*a))
    again, _ = C.read_catalog(copy)
    assert compiles == [] and again.source == str(copy) and first.source == CATALOG_PATH.name
    fields = ("name", "reconstructed", "digest", "tile_names", "good_names", "board_names",
              "invented_goods")  # fmt: skip
    assert [getattr(again, f) for f in fields] == [getattr(first, f) for f in fields]
    for mine, theirs in zip(again.arrays, first.arrays, strict=True):
        assert mine is not theirs and np.array_equal(mine, theirs)
    again.tiles[0, 0] += 1  # a caller's edit reaches no other caller
    assert np.array_equal(C.read_catalog(copy)[0].tiles, first.tiles)
    assert np.array_equal(C.read_catalog(CATALOG_PATH)[0].tiles, first.tiles) and compiles == []
    copy.write_bytes(raw.replace(b'name = "NEOM default', b'name = "Other', 1))
    assert C.read_catalog(copy)[0].name.startswith("Other")
    assert compiles == [str(copy)]
    copy.write_bytes(raw.replace(b"[[tiles]]", b"[[tiles]]\nbogus = 1", 1))
    for _ in range(2):
        with pytest.raises(CatalogError, match="bogus"):
            C.read_catalog(copy)
    assert compiles == [str(copy)] * 3 and parses == compiles  # parsed only when compiled


def test_v2_rebalance_moved_no_known_fact():
    """v2 is catalog_reconstruction_v1.toml rebalanced by neom balance --all (issue 26 part 4;
    the header names the commands): the same tiles in the same decks, roads, types and goods;
    every difference is a number the balance moves (or a shorter list of required goods), and
    no fact marked `known` moved: a fixed one equals v1's, a bounded one obeys its bound."""
    text = V2_PATH.read_text()
    assert "neom balance --all" in text and "catalog_reconstruction_v1.toml" in text
    assert rebalanced_fields(V2_PATH, V1_PATH) == 26  # the edits docs/reconstruction.md lists


def test_v3_rebalance_moved_no_known_fact():
    """The default (v3) is catalog_reconstruction_v2.toml rebalanced for use (issue 38 item 4;
    the header names the commands): as for v2, plus Chemicals given back to the Hovercar Plant
    (its v1 requirements, Steel and Chemicals) with an alternative of Steel and coins, so
    Chemicals has a consumer again and Hovercars stay reachable, a Stone-less alternative for the
    Cement Plant, the Modular Factory making Plastic (mf38p: its Stone-less Concrete was a money
    machine) and seven cornerstones cheaper with a good (mf38p: the goods discounts)."""
    text = CATALOG_PATH.read_text()
    assert "neom balance --all" in text and "catalog_reconstruction_v2.toml" in text
    structural = {"Hovercar Plant", "Modular Factory", "Cement Plant", "Energy Cooperative",
                  "Mining Consortium", "City Hall", "Public Safety Department", "Stock Exchange",
                  "Housing Authority"}  # fmt: skip
    moved = rebalanced_fields(CATALOG_PATH, V2_PATH, structural=structural)
    assert moved == V3_EDITS  # the edits docs/reconstruction.md lists
    with V1_PATH.open("rb") as fh:
        v1 = {t["name"]: t for t in tomllib.load(fh)["tiles"]}
    with CATALOG_PATH.open("rb") as fh:
        v3 = {t["name"]: t for t in tomllib.load(fh)["tiles"]}
    with V2_PATH.open("rb") as fh:
        v2 = {t["name"]: t for t in tomllib.load(fh)["tiles"]}
    # The same facts marked known as v2 (none added or dropped while balancing).
    assert {n: t.get("known") for n, t in v3.items()} == {n: t.get("known") for n, t in v2.items()}
    assert v3["Hovercar Plant"]["requires"] == v1["Hovercar Plant"]["requires"]
    assert v3["Hovercar Plant"]["alternatives"][0]["requires"] == ["Steel"]


def rebalanced_fields(new_path, old_path, structural=()) -> int:
    """The number of fields that differ between two versions, each checked to be a balance
    lever; `structural` names the tiles whose goods requirements, alternatives and goods made
    may change in any way (a designer's edit, not the search's)."""
    import operator

    from sim.neom.catalog import parse_known

    with new_path.open("rb") as fh:
        new = tomllib.load(fh)
    with old_path.open("rb") as fh:
        old = {t["name"]: t for t in tomllib.load(fh)["tiles"]}
    assert [t["name"] for t in new["tiles"]] == list(old)
    movable = {"vp", "cost", "income", "coins_on_place", "effects", "requires", "alternatives"}
    moved = 0
    for tile in new["tiles"]:
        before = old[tile["name"]]
        for key in (set(tile) | set(before)) - {"known"}:
            if tile.get(key) == before.get(key):
                continue
            moved += 1
            if tile["name"] in structural and key in {"requires", "alternatives", "produces"}:
                continue
            assert key in movable, (tile["name"], key)
            if key == "effects":  # amounts only
                strip = [{k: v for k, v in e.items() if k != "vp"} for e in tile[key]]
                assert strip == [{k: v for k, v in e.items() if k != "vp"} for e in before[key]]
            if key == "requires":  # fewer goods, the first ones kept
                assert tile[key] == before[key][: len(tile[key])] and tile[key]
            if key == "alternatives":  # costs only
                assert [a["requires"] for a in tile[key]] == [a["requires"] for a in before[key]]
        for entry in tile.get("known", []):
            path, op, bound = parse_known(entry)
            if "[" in path:
                group, index, number = (
                    path[: path.index("[")],
                    int(path[path.index("[") + 1]),
                    path.split(".")[-1],
                )
                value, was = tile[group][index].get(number, 0), before[group][index].get(number, 0)
            else:
                value, was = (
                    tile.get(path, 0 if path in K_NUMBERS else []),
                    before.get(path, 0 if path in K_NUMBERS else []),
                )
            if op:
                assert {">=": operator.ge, "<=": operator.le}[op](value, bound), (
                    tile["name"],
                    entry,
                )
            else:
                assert value == was, (tile["name"], entry)
    return moved


# +2 from rebal38l (City Archive, Urban Planning Office vp 3 -> 4); +2 from flags38n (Community
# Center cost 3 -> 4, Design Institute effect VP 5 -> 3; its cost 2 -> 1 already differed); +1 from
# demand38m (the Modular Factory's alternative: no goods + 6 coins); +16 from mf38p (the Modular
# Factory's Plastic, the Cement Plant's alternative, seven goods discounts, Medical Campus cost)
V3_EDITS = 115
K_NUMBERS = ("vp", "cost", "income", "coins_on_place", "vp_no_disasters")
