"""Scenario tests of the game rules: a state set by hand, decisions forced through the engine's
functions, outcomes checked. Each docstring quotes (or paraphrases) the rule text it checks;
"000".."003" name the rules texts in shared/rules, RULES.md gives the readings."""

import numpy as np
import pytest
from catalog_fixture import valid_catalog
from strategy_positions import game_of

from sim.core import rng
from sim.core.batch import STRATEGY_ID_DTYPE
from sim.core.jit import njit
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom import records as R
from sim.neom.catalog import compile_catalog, with_extra_tiles
from sim.neom.state import view
from sim.neom.tables import make_rules
from strategies.neom import play as G
from strategies.neom.evaluate import memo_size
from strategies.neom.pieces import addresses
from strategies.neom.pointer import N_STEPS
from strategies.neom.registry import parse_strategy
from strategies.neom.steps import action as action_step

EXTRA_TILES = [
    {"name": "T Res NESW", "types": ["residential"], "roads": "NESW", "vp": 1},
    {"name": "T Res EW", "types": ["residential"], "roads": "EW", "vp": 1},
    {"name": "T Res S", "types": ["residential"], "roads": "S", "vp": 1},
    {"name": "T Com NESW", "types": ["commercial"], "roads": "NESW"},
    {"name": "T Ind NESW", "types": ["industrial"], "roads": "NESW"},
    {"name": "T Pub NESW", "types": ["public"], "roads": "NESW"},
    {"name": "T ResCom NESW", "types": ["residential", "commercial"], "roads": "NESW"},
    {"name": "T Road EW", "types": ["resource"], "roads": "EW"},
    {"name": "T Fire NESW", "types": ["public"], "roads": "NESW", "protects": ["fire"]},
    {"name": "T Police NESW", "types": ["public"], "roads": "NESW", "protects": ["police"]},
    {
        "name": "T Insured",
        "types": ["commercial"],
        "roads": "NESW",
        "effects": [{"kind": "insurance", "disasters": ["flood"]}],
    },
    {"name": "T Sawmill", "types": ["industrial"], "roads": "NESW", "produces": ["Lumber"]},
    {"name": "T Steel Mill", "types": ["industrial"], "roads": "NESW", "produces": ["Steel"]},
    {
        "name": "T Needs Steel",
        "types": ["residential"],
        "roads": "NESW",
        "requires": ["Steel"],
        "alternatives": [{"requires": [], "cost": 5}],
    },
    {"name": "T Needs Lumber", "types": ["residential"], "roads": "NESW", "requires": ["Lumber"]},
    {"name": "T Costs 3", "types": ["residential"], "roads": "NESW", "cost": 3},
    {"name": "T Res Lumber", "types": ["residential"], "roads": "NESW", "produces": ["Lumber"]},
]


def sq(row, col):
    return row * K.GRID + col


@pytest.fixture(scope="module")
def tables():
    base = compile_catalog(valid_catalog(), "catalog_fixture")
    return with_extra_tiles(base, EXTRA_TILES, "engine test tiles")


# The loop's steps read the game through its view (sim.neom.state.view) and compile without
# reference counts: from Python they are called on a Game through these.
@njit
def refresh_goods(game):
    G.refresh_goods(view(game))


@njit
def pay_requirements(seat, tile, option, game):
    return action_step.pay_requirements(seat, tile, option, view(game))


@njit
def resolve_disaster(spared, disaster, game):
    G.resolve_disaster(spared, disaster, view(game))


@njit
def release_pending(game):
    G.release_pending(view(game))


class Scene:
    """A game state set by hand: every player's city holds only its board's City Center
    (board s for seat s; board 0 is the Ore board with roads NESW)."""

    def __init__(self, tables, n_players=4, money=20, gen=1, strategy="greedy"):
        self.t = tables
        self.n = n_players
        self.gstate = np.zeros(E.N_GSTATE, dtype=np.int64)
        self.gstate[E.GS_N_PLAYERS] = n_players
        self.gstate[E.GS_GEN] = gen
        self.pstate = np.zeros((n_players, E.N_PSTATE), dtype=np.int64)
        self.pstate[:, E.PS_MONEY] = money
        self.pstate[:, E.PS_SELECTED] = -1
        self.cells = np.full((n_players, K.N_CELLS), K.EMPTY, dtype=np.int16)
        self.cells[:, K.CENTER_CELL] = tables.board_center[:n_players]
        self.hands = np.full((n_players, E.HAND_SIZE), -1, dtype=np.int64)
        self.cs_hands = np.full((n_players, E.MAX_CS_HAND), -1, dtype=np.int64)
        self.goods_of = np.zeros(n_players, dtype=np.int64)
        self.cs_pile = np.full(E.MAX_CS_PILE, -1, dtype=np.int64)
        self.cs_box = np.full(tables.n_tiles, -1, dtype=np.int64)
        self.options = np.zeros((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
        self.summaries = np.zeros((len(self.cells), E.N_SUMMARY), dtype=np.int64)
        self.summaries[:, E.SM_OCCUPIED] = -1  # stale, as a new game's: summarized when read
        self.stats = np.zeros((R.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int64)
        self.events = np.zeros((R.MAX_EVENTS_PER_GAME, R.N_EVENT_COLS), dtype=np.int64)
        spec = parse_strategy(strategy)
        self.seats = np.arange(n_players, dtype=np.int32)
        self.strategy_ids = np.full(n_players, spec.id, dtype=STRATEGY_ID_DTYPE)
        self.strategy_params = np.tile(spec.params, (n_players, 1))
        self.strat_rng = np.zeros((n_players, 2), dtype=np.uint64)
        for s in range(n_players):
            rng.seed_state(self.strat_rng[s], s + 1)
        self.memos = np.zeros((n_players, memo_size(tables.n_tiles)), dtype=np.int64)
        self.rules = make_rules()

    def put(self, seat, cell, name):
        self.cells[seat, cell] = self.t.tile_index(name)
        E.mark_stale(self.summaries[seat])  # a city changed by hand: summarized again when read

    def tile(self, name):
        return self.t.tile_index(name)

    def game(self):
        """The scene as the game loop's bundle (``sim.neom.state.Game``): its arrays, not
        copies."""
        return game_of(
            self.t,
            self,
            decks=np.full((E.N_GENERATIONS, self.t.n_tiles), -1, dtype=np.int64),
            deck_sizes=np.zeros(E.N_GENERATIONS, dtype=np.int64),
            packs=np.full((E.SOLO_PACKS, E.HAND_SIZE), -1, dtype=np.int64),
            pack_sizes=np.zeros(E.SOLO_PACKS, dtype=np.int64),
            strategy_fns=addresses(self.strategy_ids),
            step_fns=np.zeros(N_STEPS, dtype=np.int64),  # the steps are called here directly
            req_costs=np.zeros(K.MAX_REQ_OPTIONS, dtype=np.int64),
        )

    def refresh(self):
        refresh_goods(self.game())

    def mask(self, seat, name):
        summary = np.empty(E.N_SUMMARY, dtype=np.int64)
        E.summarize_city(self.cells[seat], self.t.tiles, summary)
        return E.placement_mask(self.cells[seat], self.t.tiles, self.tile(name), summary)

    def legal(self, seat, name, cell):
        return bool((self.mask(seat, name) >> cell) & 1)

    def actions(self, seat, selected):
        self.refresh()
        n = E.action_options(
            seat,
            self.tile(selected),
            self.gstate[E.GS_GEN],
            self.cells,
            self.pstate,
            self.cs_hands,
            self.goods_of,
            self.n,
            self.t.tiles,
            self.t.req,
            self.t.goods_tier,
            self.options,
        )
        return self.options[:n].copy()

    def pay(self, seat, name, option):
        self.refresh()
        return pay_requirements(seat, self.tile(name), option, self.game())

    def place(self, seat, name, cell):
        return E.place_tile(
            seat,
            self.tile(name),
            cell,
            self.cells,
            self.pstate,
            self.stats[seat],
            self.t.tiles,
            self.t.effects,
            self.events,
            self.gstate,
            self.summaries[seat],
        )

    def resolve(self, spared, disaster):
        resolve_disaster(spared, disaster, self.game())

    def logged(self, kind=None):
        rows = self.events[: self.gstate[E.GS_N_EVENTS]]
        return rows if kind is None else rows[rows[:, R.E_KIND] == kind]


# --- buying goods --------------------------------------------------------------------------


def test_purchase_price_rules_example(tables):
    """003: "You need a processed good. So far you have only established the left Trade Route.
    In a 4-player game the good costs 4-1 = 3 from the player on your left; 4+1-1 = 4 from the
    player across the table; 4 (base cost) from the player on your right." Left = next seat."""
    scene = Scene(tables, n_players=4, money=20)
    scene.put(0, sq(2, 1), "T Road EW")
    scene.put(0, sq(2, 0), "T Road EW")  # west road at (2,0): left Trade Route
    for seller in (1, 2, 3):
        scene.put(seller, sq(1, 2), "T Sawmill")
    assert E.trade_routes(scene.cells[0], tables.tiles) == 1
    scene.refresh()
    lumber = tables.good_index("Lumber")
    n = E.buy_options(0, lumber, 0, 20, scene.goods_of, 1, 4, tables.goods_tier, scene.options)
    prices = {int(r[E.OPT_SEAT]): int(r[E.OPT_COST]) for r in scene.options[:n]}
    assert prices == {1: 3, 2: 4, 3: 4}


def test_transport_fee_without_routes_and_reduction_at_most_one():
    """003: "the cost increases by 1 per player between you and the seller; you decide whether
    to count clockwise or counterclockwise ... Having both Trade Routes does not reduce the
    cost further." Raw good base 2, 5 players."""
    assert [E.purchase_price(0, s, 5, 2, 0) for s in (1, 2, 3, 4)] == [2, 3, 3, 2]
    assert [E.purchase_price(0, s, 5, 2, 3) for s in (1, 2, 3, 4)] == [1, 2, 2, 1]
    assert E.purchase_price(0, 1, 2, 10, 3) == 9  # 2 players: the other is both neighbours


def test_buy_options_keep_the_whole_plan_affordable(tables):
    """000: a tile needing goods the city lacks is placed by buying them from other players;
    if you cannot meet the requirement you must choose a different action. A seller is offered
    only if, after its price, the rest of the plan can still be paid."""
    scene = Scene(tables, n_players=4)
    scene.put(1, sq(1, 2), "T Sawmill")  # left neighbour: 4
    scene.put(2, sq(1, 2), "T Sawmill")  # across: 5
    scene.refresh()
    lumber = tables.good_index("Lumber")
    n = E.buy_options(0, lumber, 3, 8, scene.goods_of, 0, 4, tables.goods_tier, scene.options)
    assert [int(r[E.OPT_SEAT]) for r in scene.options[:n]] == [1, 2]
    n = E.buy_options(0, lumber, 3, 7, scene.goods_of, 0, 4, tables.goods_tier, scene.options)
    assert [int(r[E.OPT_SEAT]) for r in scene.options[:n]] == [1]


def test_requirement_unmet_without_seller_or_money(tables):
    """001: "If you cannot meet the requirement, you must choose a different action." A good
    nobody produces cannot be bought; a coin cost above your money cannot be paid."""
    scene = Scene(tables, n_players=3, money=2)
    options = scene.actions(0, "T Needs Lumber")
    assert set(options[:, E.OPT_KIND]) == {E.A_SELL}
    options = scene.actions(0, "T Costs 3")
    assert set(options[:, E.OPT_KIND]) == {E.A_SELL}
    scene.pstate[0, E.PS_MONEY] = 3
    options = scene.actions(0, "T Costs 3")
    assert E.A_PLACE in set(options[:, E.OPT_KIND])
    assert set(options[options[:, E.OPT_KIND] == E.A_PLACE, E.OPT_COST]) == {3}


def test_seller_coins_are_pending_until_the_end_of_the_turn(tables):
    """000: "You need to pay the seller the specified cost ... The seller cannot refuse your
    payment, and they cannot use the money until their next turn." """
    scene = Scene(tables, n_players=3, money=10)
    scene.put(1, sq(1, 2), "T Sawmill")
    cost = scene.pay(0, "T Needs Lumber", 0)
    assert cost == 0
    assert scene.pstate[0, E.PS_MONEY] == 10 - 4
    assert scene.pstate[1, E.PS_MONEY] == 10
    assert scene.pstate[1, E.PS_PENDING] == 4
    buy = scene.logged(R.EV_BUY)
    assert buy[0, R.E_PLAYER] == 0 and buy[0, R.E_OTHER] == 1 and buy[0, R.E_COINS] == -4
    sold = scene.logged(R.EV_GOOD_SOLD)
    assert sold[0, R.E_PLAYER] == 1 and sold[0, R.E_COINS] == 4
    release_pending(scene.game())
    assert scene.pstate[1, E.PS_MONEY] == 14 and scene.pstate[1, E.PS_PENDING] == 0


def test_goods_are_not_used_up(tables):
    """000: "Good tokens are not removed when they are used or bought by another player." """
    scene = Scene(tables, n_players=3, money=20)
    scene.put(1, sq(1, 2), "T Sawmill")
    scene.pay(0, "T Needs Lumber", 0)
    scene.pay(2, "T Needs Lumber", 0)
    assert scene.pstate[1, E.PS_PENDING] == 8
    scene.refresh()
    assert scene.goods_of[1] >> tables.good_index("Lumber") & 1


# --- requirements --------------------------------------------------------------------------


def test_alternative_requirement_option(tables):
    """003: "The 2nd Generation Treasury requires that you produce Steel. Alternatively, you can
    pay 5 to the general supply to place the Treasury." Either option may be chosen."""
    scene = Scene(tables, n_players=3, money=5)
    options = scene.actions(0, "T Needs Steel")
    places = options[options[:, E.OPT_KIND] == E.A_PLACE]
    assert set(places[:, E.OPT_REQ]) == {1} and set(places[:, E.OPT_COST]) == {5}
    scene.pstate[0, E.PS_MONEY] = 4
    assert set(scene.actions(0, "T Needs Steel")[:, E.OPT_KIND]) == {E.A_SELL}
    scene.put(0, sq(1, 2), "T Steel Mill")
    options = scene.actions(0, "T Needs Steel")
    places = options[options[:, E.OPT_KIND] == E.A_PLACE]
    assert set(places[:, E.OPT_REQ]) == {0}


def test_a_requirement_may_be_met_by_the_tile_it_replaces(tables):
    """Reading not in the texts (RULES.md "Readings not in the texts"): requirements are
    checked against the city as it is before the placement, so the tile being replaced may be
    the one producing a needed good; the good then leaves with it (000: "If you replace or lose
    a Good-producing tile, you must immediately return the corresponding Good token")."""
    scene = Scene(tables, n_players=3, money=0)
    scene.put(0, sq(1, 2), "T Res Lumber")
    options = scene.actions(0, "T Needs Lumber")
    places = options[options[:, E.OPT_KIND] == E.A_PLACE]
    assert sq(1, 2) in set(places[:, E.OPT_CELL].tolist())
    assert set(places[:, E.OPT_COST].tolist()) == {0}


def test_prerequisite_tiles(tables):
    """003: a tile may require "certain tiles in your city, which you must have placed on
    previous turns (only some 3rd Generation tiles)". Condos & Restaurant needs Treasury and
    Sawmill in the city."""
    scene = Scene(tables, n_players=3, money=30)
    kinds = scene.actions(0, "Condos & Restaurant")[:, E.OPT_KIND]
    assert E.A_PLACE not in set(kinds)
    scene.put(0, sq(1, 2), "Treasury")
    assert E.A_PLACE not in set(scene.actions(0, "Condos & Restaurant")[:, E.OPT_KIND])
    scene.put(0, sq(3, 2), "Sawmill")
    assert E.A_PLACE in set(scene.actions(0, "Condos & Restaurant")[:, E.OPT_KIND])


def test_selling_is_always_legal(tables):
    """001: "Instead of placing a Generation or Cornerstone tile, you can simply return the
    selected Generation tile to the game box, unused, and take 5 L-Coins." """
    scene = Scene(tables, n_players=3, money=0)
    options = scene.actions(0, "T Costs 3")
    assert len(options) == 1
    assert options[0, E.OPT_KIND] == E.A_SELL and options[0, E.OPT_COST] == -E.SELL_COINS


# --- placement -----------------------------------------------------------------------------


def test_placement_needs_a_road_link_to_the_center(tables):
    """001: "The newly placed tile must be connected through Roads to the City Center ... as
    long as there is at least one Road connection leading to the City Center." """
    scene = Scene(tables)
    assert scene.legal(0, "T Res NESW", sq(1, 2))
    assert not scene.legal(0, "T Res NESW", sq(0, 0))
    assert not scene.legal(0, "T Res NESW", sq(1, 1))  # diagonal: no shared edge


def test_tiles_are_not_rotated(tables):
    """001: "You may not rotate the tile." A tile with East-West roads links to the center
    from the west side but not from the north side."""
    scene = Scene(tables)
    assert scene.legal(0, "T Res EW", sq(2, 1))
    assert not scene.legal(0, "T Res EW", sq(1, 2))


def test_link_through_a_chain_of_tiles(tables):
    """000: the new tile must be connected to the City Center through Roads, through a chain
    of road-linked tiles."""
    scene = Scene(tables)
    scene.put(0, sq(2, 1), "T Road EW")
    assert scene.legal(0, "T Res NESW", sq(2, 0))
    assert not scene.legal(0, "T Res NESW", sq(1, 1))  # the road tile has no north road


def test_replacement_rules(tables):
    """003: "Tiles can only replace another tile if the existing tile is a Resource tile or if
    the new tile shares a type with the existing tile. The City Center is considered a
    Resource tile, and can therefore be replaced with any tile." """
    scene = Scene(tables)
    scene.put(0, sq(1, 2), "T Res NESW")
    scene.put(0, sq(3, 2), "T Road EW")
    scene.put(0, sq(2, 1), "T Com NESW")
    assert scene.legal(0, "T Res S", sq(1, 2))  # shares Residential
    assert not scene.legal(0, "T Com NESW", sq(1, 2))  # no shared type
    assert scene.legal(0, "T ResCom NESW", sq(2, 1))  # shares Commercial
    assert not scene.legal(0, "T Pub NESW", sq(2, 1))
    assert scene.legal(0, "T Pub NESW", sq(3, 2))  # a Resource tile: any type
    assert scene.legal(0, "T Pub NESW", K.CENTER_CELL)  # City Center: Resource


def test_replacing_a_chain_tile_checks_the_new_roads(tables):
    """002: "If you replace the center, existing roads may be cut; play continues with it as
    the center." When the replaced tile is itself the link, the new tile's own roads must still
    lead to the center square."""
    scene = Scene(tables)
    scene.put(0, sq(2, 1), "T Road EW")
    scene.put(0, sq(2, 0), "T Res NESW")
    assert scene.legal(0, "T Res NESW", sq(2, 1))  # resource replaced, E road reaches center
    assert not scene.legal(0, "T Res S", sq(2, 1))  # its only road leads nowhere


def test_cut_off_tiles_cannot_be_built_on(tables):
    """003: "removing a tile may cut one or more tiles off the City Center. This has no
    consequence except that newly placed tiles must still connect to the City Center, so you
    may not be able to add new tiles to the cut-off parts." """
    scene = Scene(tables)
    scene.put(0, sq(2, 1), "T Road EW")
    scene.put(0, sq(2, 0), "T Res NESW")
    assert scene.legal(0, "T Res NESW", sq(1, 0))
    scene.cells[0, sq(2, 1)] = K.EMPTY  # lost to a disaster
    assert not scene.legal(0, "T Res NESW", sq(1, 0))
    assert scene.legal(0, "T Res NESW", sq(2, 1))


def test_trade_routes_gained_kept_and_lost(tables):
    """003: "Once a Trade Route is established, it remains active as long as it stays connected
    to an immediately adjacent Road, even if its connection to the City Center is lost. You lose
    it only if you remove the tile immediately next to it or replace it with a tile that has no
    Road connection towards the Trade Route." """
    scene = Scene(tables)
    city = scene.cells[0]
    scene.put(0, sq(2, 1), "T Road EW")
    assert E.trade_routes(city, tables.tiles) == 0
    scene.put(0, sq(2, 0), "T Res EW")
    scene.put(0, sq(2, 3), "T Road EW")
    scene.put(0, sq(2, 4), "T Road EW")
    assert E.trade_routes(city, tables.tiles) == 3
    city[sq(2, 1)] = K.EMPTY  # cut off from the center: still active
    assert E.trade_routes(city, tables.tiles) == 3
    scene.put(0, sq(2, 0), "T Res S")  # replaced by a tile without a west road
    assert E.trade_routes(city, tables.tiles) == 2


def test_cornerstone_limit_per_generation(tables):
    """001: "You cannot have more Cornerstone tiles in your City than the current Generation!"
    Replacing a cornerstone keeps the count."""
    scene = Scene(tables, gen=1, money=10)
    safety = scene.tile("Public Safety Department")
    merchant = scene.tile("Merchant Union")
    scene.cs_hands[0, :2] = (safety, merchant)
    scene.pstate[0, E.PS_N_CS] = 2
    options = scene.actions(0, "T Res NESW")
    assert E.A_CORNERSTONE in set(options[:, E.OPT_KIND])
    scene.put(0, sq(1, 2), "Town Hall")  # a cornerstone (Public) already in the city
    options = scene.actions(0, "T Res NESW")
    cs_rows = options[options[:, E.OPT_KIND] == E.A_CORNERSTONE]
    assert set(cs_rows[:, E.OPT_CELL]) == {sq(1, 2)}  # only replacing it
    # ... and only with a cornerstone that may replace it (003: a tile sharing a type): the
    # Public Safety Department (Public), not the Merchant Union (Commercial).
    assert set(cs_rows[:, E.OPT_TILE]) == {safety}
    scene.gstate[E.GS_GEN] = 2
    options = scene.actions(0, "T Res NESW")
    cs_rows = options[options[:, E.OPT_KIND] == E.A_CORNERSTONE]
    assert len(set(cs_rows[:, E.OPT_CELL])) > 1


# --- effects -------------------------------------------------------------------------------


def test_merchant_union_pays_for_later_commercial_tiles(tables):
    """000: "Whenever you place a Commercial tile in your City, the Merchant Union Cornerstone
    tile will provide you with 1." Its effect starts once it is placed: not for itself."""
    scene = Scene(tables, money=0)
    scene.place(0, "Merchant Union", sq(2, 1))
    assert scene.pstate[0, E.PS_MONEY] == 0
    scene.place(0, "T Com NESW", sq(1, 2))
    assert scene.pstate[0, E.PS_MONEY] == 1
    scene.place(0, "T Res NESW", sq(3, 2))
    assert scene.pstate[0, E.PS_MONEY] == 1
    coins = scene.logged(R.EV_EFFECT_COINS)
    assert coins[:, R.E_COINS].tolist() == [1]


def test_coins_on_place_and_replacement_ends_effects(tables):
    """000: "some Commercial tiles also give you a one-time monetary boost when you place them";
    003: "When you remove a tile from your city, you immediately lose all benefits of it." """
    scene = Scene(tables, money=0)
    scene.place(0, "Gold Market", sq(1, 2))
    assert scene.pstate[0, E.PS_MONEY] == 3
    scene.place(0, "Merchant Union", sq(2, 1))
    old = scene.place(0, "T Com NESW", sq(2, 1))  # replaces the Merchant Union
    assert old == scene.tile("Merchant Union")
    assert scene.pstate[0, E.PS_MONEY] == 3
    assert scene.logged(R.EV_REPLACED)[0, R.E_TILE] == old


def test_coin_holders_kept_in_the_summary_pay_as_every_square_read(tables):
    """place_tile reads only the squares that may pay on a placement (SM_COIN_HOLDERS) of a
    summary kept as the game loop keeps it; summarized afresh it reads every square once."""
    scene = Scene(tables, money=0)
    summary = scene.summaries[0]
    E.refresh_summary(scene.cells[0], tables.tiles, summary)
    assert summary[E.SM_COIN_HOLDERS] == E.ALL_CELLS  # not known after summarizing
    steps = [
        ("T Res NESW", sq(3, 2), 0),
        ("Merchant Union", sq(2, 1), 0),  # not for itself
        ("T Com NESW", sq(1, 2), 1),
        ("T Com NESW", sq(2, 3), 2),
        ("T Com NESW", sq(2, 1), 2),  # replaces the Merchant Union: its effect ends
        ("T Com NESW", sq(0, 2), 2),
    ]
    holders = []
    for name, cell, money in steps:
        old = scene.place(0, name, cell)
        E.update_summary(summary, cell, int(old), scene.tile(name), scene.cells[0], tables.tiles)
        assert scene.pstate[0, E.PS_MONEY] == money, name
        holders.append(int(summary[E.SM_COIN_HOLDERS]))
    assert holders == [0, 1 << sq(2, 1), 1 << sq(2, 1), 1 << sq(2, 1), 0, 0]


# --- disasters -----------------------------------------------------------------------------


def building_city(scene, seat=0):
    scene.put(seat, sq(1, 2), "T Res NESW")
    scene.put(seat, sq(3, 2), "T Com NESW")
    scene.put(seat, sq(2, 1), "T Ind NESW")
    scene.put(seat, sq(2, 3), "T Pub NESW")
    scene.put(seat, sq(0, 2), "T Road EW")


def test_flood_cost_counts_buildings_and_ignores_protection(tables):
    """001: Flood: "pay 1 for each Residential, Commercial, Industrial and Public (not
    Resource) tile"; "There is no protection from Flood." """
    scene = Scene(tables)
    building_city(scene)
    assert E.disaster_cost(scene.cells[0], tables.tiles, K.DIS_FLOOD) == 4
    scene.put(0, sq(2, 3), "T Fire NESW")
    assert E.disaster_cost(scene.cells[0], tables.tiles, K.DIS_FLOOD) == 4


def test_fire_cost_with_and_without_protection(tables):
    """000: Fire: "pay 1 for each of my unprotected Residential, Commercial, Industrial and
    Public tiles"; "Fire Departments protect themselves and all tiles in the 8 surrounding
    squares from Fire." """
    scene = Scene(tables)
    building_city(scene)
    scene.put(0, sq(4, 4), "T Pub NESW")
    assert E.disaster_cost(scene.cells[0], tables.tiles, K.DIS_FIRE) == 5
    scene.put(0, sq(2, 3), "T Fire NESW")  # covers (1,2), (3,2), itself; not (2,1), (4,4)
    assert E.disaster_cost(scene.cells[0], tables.tiles, K.DIS_FIRE) == 2


def test_crime_cost_with_and_without_police(tables):
    """000: Crime Spree: "pay 2 for each of my unprotected Residential, Commercial and
    Industrial tiles" (Public tiles are not charged); police protect their 8 surrounding
    squares."""
    scene = Scene(tables)
    building_city(scene)
    assert E.disaster_cost(scene.cells[0], tables.tiles, K.DIS_CRIME) == 6
    scene.put(0, sq(2, 3), "T Police NESW")
    assert E.disaster_cost(scene.cells[0], tables.tiles, K.DIS_CRIME) == 2  # (2,1) uncovered


def test_disaster_options_pay_or_sacrifice(tables):
    """000: "You can choose to pay the penalty or sacrifice tiles, even if you have enough
    money"; who cannot pay must sacrifice; a penalty of 0 costs nothing to pay."""
    scene = Scene(tables, money=10)
    building_city(scene)
    n = E.disaster_options(scene.cells[0], 10, tables.tiles, K.DIS_FLOOD, scene.options)
    assert sorted(scene.options[:n, E.OPT_KIND]) == [E.DR_PAY, E.DR_SACRIFICE]
    n = E.disaster_options(scene.cells[0], 3, tables.tiles, K.DIS_FLOOD, scene.options)
    assert scene.options[:n, E.OPT_KIND].tolist() == [E.DR_SACRIFICE]
    n = E.disaster_options(scene.cells[1], 0, tables.tiles, K.DIS_FLOOD, scene.options)
    assert scene.options[:n, E.OPT_KIND].tolist() == [E.DR_PAY]
    assert scene.options[0, E.OPT_COST] == 0


def test_sacrifice_choices_per_disaster(tables):
    """002: Flood: remove 1 Residential, Commercial, Industrial or Public tile; Fire: remove
    any 2 tiles (Resource and City Center included); Crime Spree: remove one Residential, one
    Commercial and one Industrial tile."""
    scene = Scene(tables)
    building_city(scene)
    city = scene.cells[0]
    n = E.sacrifice_options(city, tables.tiles, K.DIS_FLOOD, 0, scene.options)
    assert set(scene.options[:n, E.OPT_CELL]) == {sq(1, 2), sq(3, 2), sq(2, 1), sq(2, 3)}
    assert E.sacrifice_steps(K.DIS_FIRE) == 2
    n = E.sacrifice_options(city, tables.tiles, K.DIS_FIRE, 1, scene.options)
    assert n == 6  # every tile, the City Center and the road tile included
    wanted = [{sq(1, 2)}, {sq(3, 2)}, {sq(2, 1)}]
    for step in range(E.sacrifice_steps(K.DIS_CRIME)):
        n = E.sacrifice_options(city, tables.tiles, K.DIS_CRIME, step, scene.options)
        assert set(scene.options[:n, E.OPT_CELL]) == wanted[step]


def test_crime_two_type_tile_counts_for_one_category(tables):
    """000: "if you don't have a specific tile to remove, you don't have to sacrifice a
    different one". Reading: a Residential+Commercial tile taken as the Residential one is gone
    and cannot also be the Commercial one."""
    scene = Scene(tables, money=0)
    scene.put(0, sq(1, 2), "T ResCom NESW")
    scene.resolve(-1, K.DIS_CRIME)
    assert scene.cells[0, sq(1, 2)] == K.EMPTY
    lost = scene.logged(R.EV_DISASTER_SACRIFICE)
    assert lost[lost[:, R.E_PLAYER] == 0].shape[0] == 1


def test_disaster_spares_the_selector_and_the_insured(tables):
    """001: "Selecting the Disaster protects you from its effect"; an insurance effect spares
    its owner. Everyone else pays or sacrifices; who cannot pay must sacrifice."""
    scene = Scene(tables, n_players=4, money=10)
    for seat in range(4):
        building_city(scene, seat)
    scene.put(2, sq(4, 2), "T Insured")
    scene.pstate[3, E.PS_MONEY] = 0
    before = scene.cells.copy()
    for seat in range(4):  # summaries up to date, as the loop's
        E.summarize_city(scene.cells[seat], tables.tiles, scene.summaries[seat])
    scene.resolve(0, K.DIS_FLOOD)
    assert (scene.cells[0] == before[0]).all() and scene.pstate[0, E.PS_MONEY] == 10
    assert (scene.cells[2] == before[2]).all() and scene.pstate[2, E.PS_MONEY] == 10
    assert (scene.cells[3] != before[3]).sum() == 1  # could not pay: one building lost
    # the game loop patches a summary after a sacrifice: the same masks as a fresh one
    fresh = np.empty(E.N_SUMMARY, dtype=np.int64)
    for seat in range(4):
        E.summarize_city(scene.cells[seat], tables.tiles, fresh)
        assert (scene.summaries[seat, : E.SM_FLOOD_KNOWN] == fresh[: E.SM_FLOOD_KNOWN]).all()
    assert scene.stats[3, R.P_DISASTERS_SACRIFICED] == 1
    paid = scene.stats[1, R.P_DISASTERS_PAID] == 1 and scene.pstate[1, E.PS_MONEY] == 6
    sacrificed = (scene.cells[1] != before[1]).sum() == 1
    assert paid != sacrificed
    assert scene.gstate[E.GS_DISASTERS] == 1


# --- decks ---------------------------------------------------------------------------------


def deck_of(tables, deck, n_players, variant=K.V_STANDARD, solo_tileset=1):
    out = np.full(tables.n_tiles, -1, dtype=np.int64)
    rules = make_rules(variant, solo_tileset=solo_tileset)
    n = E.build_deck(deck, n_players, tables.tiles, rules, out)
    return [tables.tile_names[t] for t in out[:n]]


@pytest.mark.parametrize(
    ("n_players", "solo_tileset", "size"),
    [(3, 1, 24), (4, 1, 32), (5, 1, 40), (2, 1, 24), (1, 1, 24), (1, 4, 32), (1, 5, 40)],
)
def test_deck_by_player_count(tables, n_players, solo_tileset, size):
    """000: "remove any tiles from each deck that aren't needed based on the number of players
    ... icons 1+, 4+ and 5+"; solo may add the 4+ and 5+ tiles. 2 players: the 1+ tiles (our
    reading). Substitutes are not in the standard deck."""
    names = deck_of(tables, K.DECK_GEN2, n_players, solo_tileset=solo_tileset)
    assert len(names) == size
    assert "Fire" in names and "Gen2 Shelter" not in names


@pytest.mark.parametrize("variant", [K.V_NO_DISASTERS, K.V_RANDOM_DISASTERS])
def test_variant_decks_swap_disasters_for_substitutes(tables, variant):
    """001: No disasters: "Disasters are replaced with city tiles. Insurance Office is
    removed." Random disasters: "Disasters are replaced with city tiles." """
    for deck, disaster in ((K.DECK_GEN1, "Flood"), (K.DECK_GEN3, "Crime Spree")):
        names = deck_of(tables, deck, 3, variant)
        assert disaster not in names and len(names) == 24
        assert any(tables.tiles[tables.tile_index(n), K.C_REPLACES] >= 0 for n in names)
    cornerstones = deck_of(tables, K.DECK_CORNERSTONE, 3, variant)
    removed = variant == K.V_NO_DISASTERS
    assert ("Insurance Office" not in cornerstones) == removed
    assert len(cornerstones) == len(deck_of(tables, K.DECK_CORNERSTONE, 3))


def test_solo_packs():
    """Known facts (solo): shuffle the 24/32/40 tiles into 8 packs of equal size; move 2 tiles
    from pack 8 to pack 1, 1 from pack 7 to pack 2, 1 from pack 6 to pack 3; box pack 8."""
    deck = np.arange(40, dtype=np.int64)
    packs = np.full((E.SOLO_PACKS, E.HAND_SIZE), -1, dtype=np.int64)
    sizes = np.zeros(E.SOLO_PACKS, dtype=np.int64)
    G.deal_solo_packs(deck, 40, packs, sizes)
    assert sizes.tolist() == [7, 6, 6, 5, 5, 4, 4, 3]
    seen = np.concatenate([packs[p, : sizes[p]] for p in range(7)])
    assert len(set(seen.tolist())) == 40 - 3


def test_ranks_share_ties():
    """001: "In case of a tie, enjoy your shared victory!" Tied players share the better
    rank."""
    ranks = np.zeros(4, dtype=np.int64)
    winners = E.ranks_and_winners(np.array([30, 41, 41, 12], dtype=np.int64), 4, ranks)
    assert winners == 0b0110
    assert ranks.tolist() == [3, 1, 1, 4]
