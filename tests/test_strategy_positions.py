"""Each strategy's decisions on hand-made positions where the right choice is clear: greedy,
the four archetypes and rollout (tests/test_strategies_evaluate.py already covers the
archetypes' pollution, Neighborhood selection and Disaster choices; here rollout joins them,
and placements, paying against sacrificing and buying are added for everyone).

Rollout positions sit on the last turn where they can: its playouts then end with the turn,
so its value of a move is the exact final margin (no sampled future)."""

import numpy as np
import pytest
from strategy_positions import VICTIM_CELLS, disaster_position, empty_position

from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom.tables import make_rules

ARCHETYPES = ("builder", "industrialist", "merchant", "denier")
EVERYONE = ("greedy", *ARCHETYPES, "rollout")
LAST_TURN = E.N_TURNS - 1
ALL_DISASTERS_PAST = (1 << E.N_GENERATIONS) - 1


def placed_cells(options, n):
    return {int(options[k, E.OPT_CELL]) for k in range(n) if options[k, E.OPT_KIND] == E.A_PLACE}


@pytest.mark.parametrize("name", EVERYONE)
def test_residential_tile_completes_the_neighborhood(tables, name):
    """Rules 001 "Neighborhoods", chains through Residential tiles only: Row Houses west of
    the center; Senior Residences (roads on all sides) west of them join a Neighborhood of 2
    (3 VP instead of 1 + 1); north, east or south of the center they stand alone, and on the
    City Center (replaceable) they would take its Wood away."""
    pos = empty_position(tables, 2, turn=LAST_TURN, money=6, boards=[2, 0])  # Wood, NESW
    pos.rules = make_rules(neighborhood_through_any=False)
    pos.gstate[E.GS_DISASTERS] = ALL_DISASTERS_PAST
    pos.place(0, "Row Houses", 11)
    options, n = pos.action_options(0, tables.tile_index("Senior Residences"))
    assert {7, 10, 12, 13, 17} <= placed_cells(options, n)
    for seed in range(3):
        k = pos.decide(name, E.D_ACTION, options, n, seed=seed)
        assert options[k, E.OPT_KIND] == E.A_PLACE and options[k, E.OPT_CELL] == 10


@pytest.mark.parametrize("name", ["rollout"])
def test_rollout_keeps_residential_tiles_away_from_pollution(tables, name):
    """Rules 001 "Pollution" (the position of test_strategies_evaluate's pollution test, on
    the last turn): only the square west of the center is free of the Cement Plant's
    pollution, and rollout puts the Villas there."""
    pos = empty_position(tables, 2, turn=LAST_TURN, money=10, boards=[5, 0])  # Stone, NESW
    pos.gstate[E.GS_DISASTERS] = ALL_DISASTERS_PAST
    pos.place(0, "Cement Plant", 13)
    options, n = pos.action_options(0, tables.tile_index("Villas"))
    assert {7, 11, 14, 17} <= placed_cells(options, n)
    for seed in range(3):
        k = pos.decide(name, E.D_ACTION, options, n, seed=seed)
        assert options[k, E.OPT_KIND] == E.A_PLACE and options[k, E.OPT_CELL] == 11


def test_rollout_takes_the_disaster_when_it_hurts_the_opponent_most(tables):
    """Rules 001 "Resolving a Disaster" (the position of the archetypes' test): against a
    broke opponent whose city is full of buildings, the Fire costs them two tiles and rollout
    takes it; against an opponent it cannot hurt, the Pawn Shop is taken instead. 32 playouts:
    since selections are revealed before the actions (issue 18), the playout players react to a
    Disaster passed on and selected later, which narrows the gap below what 8 playouts resolve."""
    pos, options, n = disaster_position(tables)
    for seed in range(3):
        k = pos.decide("rollout:playouts=32", E.D_SELECT, options, n, seed=seed)
        assert tables.tile_names[options[k, E.OPT_TILE]] == "Fire"
    for cell in VICTIM_CELLS:
        pos.cells[1, cell] = K.EMPTY
    for seed in range(3):
        k = pos.decide("rollout:playouts=32", E.D_SELECT, options, n, seed=seed)
        assert tables.tile_names[options[k, E.OPT_TILE]] == "Pawn Shop"


def flood_position(tables, money, pawn_shop):
    """Last turn, the Flood resolving in a city with a Neighborhood of two Row Houses and
    two Villas, and maybe a Pawn Shop: it costs 1 coin per building, or one building."""
    pos = empty_position(tables, 2, turn=LAST_TURN, money=money, boards=[2, 0])
    pos.gstate[E.GS_DISASTERS] = ALL_DISASTERS_PAST
    pos.gstate[E.GS_RESOLVING] = K.DIS_FLOOD
    for name, cell in (("Row Houses", 11), ("Row Houses", 13), ("Villas", 7), ("Villas", 17)):
        pos.place(0, name, cell)
    if pawn_shop:
        pos.place(0, "Pawn Shop", 14)
    options = np.zeros((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
    n = E.disaster_options(pos.cells[0], money, tables.tiles, K.DIS_FLOOD, options)
    return pos, options, n


@pytest.mark.parametrize("name", EVERYONE)
def test_pays_or_sacrifices_whichever_costs_less(tables, name):
    """Rules 001: a player hit by a disaster pays it off or sacrifices. Paying 4 coins
    (10 -> 6: 2 VP of money) beats losing a tile of the Neighborhood (its VP and 4 VP of
    Neighborhood); with a Pawn Shop (no VP) in the city, paying 5 coins is worse than
    losing the shop."""
    pos, options, n = flood_position(tables, money=10, pawn_shop=False)
    assert n == 2 and options[0, E.OPT_KIND] == E.DR_PAY and options[0, E.OPT_COST] == 4
    assert options[pos.decide(name, E.D_DISASTER, options, n), E.OPT_KIND] == E.DR_PAY
    pos, options, n = flood_position(tables, money=10, pawn_shop=True)
    assert n == 2 and options[0, E.OPT_COST] == 5
    assert options[pos.decide(name, E.D_DISASTER, options, n), E.OPT_KIND] == E.DR_SACRIFICE


@pytest.mark.parametrize("name", EVERYONE)
def test_sacrifices_the_tile_that_costs_least(tables, name):
    pos, _, _ = flood_position(tables, money=0, pawn_shop=True)
    options = np.zeros((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
    n = E.sacrifice_options(pos.cells[0], tables.tiles, K.DIS_FLOOD, 0, options)
    assert n == 5
    k = pos.decide(name, E.D_SACRIFICE, options, n)
    assert tables.tile_names[options[k, E.OPT_TILE]] == "Pawn Shop"


def buy_position(tables, n_players, sellers, money):
    """Seat 0 buys Iron; ``sellers`` produce it (an Iron Mine) with the given coins."""
    pos = empty_position(tables, n_players, turn=4, money=10)
    for seat, coins in zip(sellers, money, strict=True):
        pos.place(seat, "Iron Mine", 13)
        pos.pstate[seat, E.PS_MONEY] = coins
    iron = int(tables.tiles[tables.tile_index("Iron Mine"), K.C_PRODUCES]).bit_length() - 1
    options = np.zeros((E.MAX_OPTIONS, E.N_OPT_COLS), dtype=np.int64)
    routes = E.trade_routes(pos.cells[0], tables.tiles)
    n = E.buy_options(0, iron, 0, 10, pos.goods_of, routes, n_players, tables.goods_tier, options)
    return pos, options, n


@pytest.mark.parametrize("name", EVERYONE)
def test_buys_from_the_cheaper_seller(tables, name):
    """Rules 001 "Buying goods": the price rises by 1 per player seated between buyer and
    seller. In a 4-player game the left neighbour (seat 1) sells Iron 1 coin cheaper than
    seat 2, even though seat 1 is the richer one."""
    pos, options, n = buy_position(tables, 4, sellers=(1, 2), money=(20, 0))
    prices = {int(options[k, E.OPT_SEAT]): int(options[k, E.OPT_COST]) for k in range(n)}
    assert prices[1] + 1 == prices[2]
    for seed in range(3):
        assert options[pos.decide(name, E.D_BUY, options, n, seed=seed), E.OPT_SEAT] == 1


@pytest.mark.parametrize("name", (*ARCHETYPES, "rollout"))
def test_buys_from_the_poorer_seller_between_equal_prices(tables, name):
    """Both neighbours of a 5-player seat sell at the same price: the coins go to the
    poorer one (docs/strategies.md, "buy")."""
    pos, options, n = buy_position(tables, 5, sellers=(1, 4), money=(20, 3))
    assert n == 2 and options[0, E.OPT_COST] == options[1, E.OPT_COST]
    for seed in range(3):
        assert options[pos.decide(name, E.D_BUY, options, n, seed=seed), E.OPT_SEAT] == 4


def test_a_game_without_its_strategies_addresses_is_an_error_not_a_crash(tables, monkeypatch):
    """The loop calls each strategy at its address (game.strategy_fns); a game built without
    them (address 0: here the playout policy's slot of a search) raises a ValueError where a
    call to address 0 would kill the process."""
    from strategies.neom import pieces

    pos = empty_position(tables, 2, turn=9, money=6, boards=[2, 5])
    pos.give(0, ["Fire", "Pawn Shop"])
    options, n = pos.select_options(0)
    assert pos.decide("rollout", E.D_SELECT, options, n, seat=0) in range(n)
    monkeypatch.setattr(pieces, "addresses", lambda ids: np.zeros(len(ids) + 1, dtype=np.int64))
    with pytest.raises(ValueError, match="no compiled strategy for this seat"):
        pos.decide("rollout", E.D_SELECT, options, n, seat=0)
