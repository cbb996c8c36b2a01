"""What players know when they act (issue 18): the selections revealed before the actions, the
random-disasters turn shown, and the strategies' valuation of a disaster known to strike at the
end of the turn. The Contract Office swap of the beginner variant is here too."""

import numpy as np
import pytest
from run_helpers import neom_setup
from strategy_positions import empty_position

from sim.core import rng
from sim.core.batch import play_arrays
from sim.neom import GAME
from sim.neom import constants as K
from sim.neom import engine as E
from sim.neom import records as R
from sim.neom.catalog import load_catalog
from sim.neom.tables import make_rules
from strategies.neom.play import play_one
from strategies.neom.registry import parse_strategy

ACTION_EVENTS = (R.EV_PLACE, R.EV_CORNERSTONE, R.EV_SELL)


@pytest.fixture(scope="module")
def tables():
    # Version 2, pinned: the positions below rest on its numbers (its Student Housing is free, so
    # a seat with no coins can place it; version 3 charges 1).
    return load_catalog("reconstruction_v2")


def fire_position(tables, fire_selected: bool):
    """3 players, generation 2 (its Fire still to come), seat 0 broke with four buildings, the
    Student Housing selected (placeable for free). Seat 1 selected the Fire, or a city tile."""
    pos = empty_position(tables, 3, turn=12, money=6, boards=[0, 1, 2])
    pos.gstate[E.GS_DISASTERS] = 1
    pos.pstate[0, E.PS_MONEY] = 0
    for name, cell in (("Row Houses", 11), ("Row Houses", 13), ("Starter Homes", 7)):
        pos.place(0, name, cell)
    selected = tables.tile_index("Student Housing")
    pos.pstate[0, E.PS_SELECTED] = selected
    pos.pstate[1, E.PS_SELECTED] = tables.tile_index("Fire" if fire_selected else "Apartments")
    pos.pstate[2, E.PS_SELECTED] = tables.tile_index("Family Homes")
    return pos, selected


@pytest.mark.parametrize("name", ["greedy", "merchant", "industrialist", "denier"])
def test_a_disaster_selected_this_turn_changes_the_action(tables, name):
    """Rules 000 "we just need to make sure everyone reveals their selections before we move
    on"; 003 "todas las fichas seleccionadas deben revelarse antes de continuar con este paso";
    001 "Resolving a Disaster": the others pay at the end of the turn, after all actions. With
    no coins, placing the Student Housing is best; once the Fire another seat selected is known
    to strike at the end of the turn, placing leaves 4 unprotected buildings and no coins (two
    tiles sacrificed), while selling pays the Fire off: the seat sells."""
    for fire, kind in ((False, E.A_PLACE), (True, E.A_SELL)):
        pos, selected = fire_position(tables, fire)
        options, n = pos.action_options(0, selected)
        for seed in range(3):
            k = pos.decide(name, E.D_ACTION, options, n, seed=seed)
            assert options[k, E.OPT_KIND] == kind, (name, fire)


def test_disaster_striking_reads_only_what_is_shown(tables):
    """One rule for the game loop and the strategies (``E.disaster_striking`` over
    ``E.turn_disaster_of``): a Disaster selected this turn strikes every other seat, not its
    selector (001 "Resolving a Disaster"), nor a city insured against it; solo, the Disaster
    left in packs 4-7 strikes; random disasters: the generation's strikes on its shown turn."""
    pos, _ = fire_position(tables, True)

    def striking(seat):
        return E.disaster_striking(
            seat, pos.cells[seat], pos.gstate, pos.pstate, pos.hands, tables.tiles, tables.effects
        )

    assert striking(0) == (K.DIS_FIRE, E.SRC_SELECTED)
    assert striking(2) == (K.DIS_FIRE, E.SRC_SELECTED)
    assert striking(1) == (K.DIS_NONE, -1)  # the selector is spared
    fire_bit = 1 << K.DIS_FIRE
    insured = [
        t
        for t in range(tables.n_tiles)
        for k in range(K.MAX_EFFECTS)
        if tables.effects[t, k, 0] == K.EF_INSURANCE and tables.effects[t, k, 1] & fire_bit
    ]
    assert insured
    pos.cells[2, 17] = insured[0]
    assert striking(2) == (K.DIS_NONE, -1)

    solo = empty_position(tables, 1, turn=7 + 4)
    solo.give(0, ["Fire", "Apartments"])
    assert E.disaster_striking(
        0, solo.cells[0], solo.gstate, solo.pstate, solo.hands, tables.tiles, tables.effects
    ) == (K.DIS_FIRE, E.SRC_SOLO_PACK)
    # Packs 1-3: the Disaster may be selected (then nobody is struck); left unselected, it
    # strikes like in packs 4-7 (a reading not in the texts, RULES.md).
    early = empty_position(tables, 1, turn=1)
    early.give(0, ["Flood", "Starter Homes"])
    args = (early.gstate, early.pstate, early.hands, tables.tiles, tables.effects)
    assert E.disaster_striking(0, early.cells[0], *args) == (K.DIS_FLOOD, E.SRC_SOLO_PACK)
    early.give(0, ["Starter Homes"])
    early.pstate[0, E.PS_SELECTED] = tables.tile_index("Flood")
    assert E.disaster_striking(0, early.cells[0], *args) == (K.DIS_NONE, -1)

    rand = empty_position(tables, 4, turn=7 + 3)
    rand.rules = make_rules(K.V_RANDOM_DISASTERS)
    rand.gstate[E.GS_RANDOM_TURN : E.GS_RANDOM_TURN + 3] = [5, 3, 0]
    args = (rand.gstate, rand.pstate, rand.hands, tables.tiles, tables.effects)
    assert E.disaster_striking(0, rand.cells[0], *args) == (K.DIS_FIRE, E.SRC_RANDOM)
    assert E.random_disaster_turns_left(rand.gstate, 2) == 0
    assert E.random_disaster_turns_left(rand.gstate, 3) == 14 - 10
    rand.gstate[E.GS_DISASTERS] = 0b001  # generation 1's struck on its turn 5
    assert E.random_disaster_turns_left(rand.gstate, 1) == -1
    rand.gstate[E.GS_TURN] = 7 + 2
    assert E.disaster_striking(0, rand.cells[0], *args) == (K.DIS_NONE, -1)
    assert E.random_disaster_turns_left(rand.gstate, 2) == 1


def test_two_players_the_first_seat_does_not_see_the_second_selection(tables):
    """Our reading of 2 players (RULES.md P12, "play is sequential"): each seat selects, the
    selection is revealed and it acts, then the other. The second seat knows the first's
    selection when it acts; the first acts before the second has selected, so a Disaster the
    second selects strikes it unannounced. In the state: when the first seat acts the second's
    PS_SELECTED is still -1 (helper: nothing known); in the log: every turn, the first seat's
    action comes before the second seat's selection."""
    pos = empty_position(tables, 2, turn=12, money=6)
    pos.pstate[0, E.PS_SELECTED] = tables.tile_index("Apartments")
    args = (pos.gstate, pos.pstate, pos.hands, tables.tiles, tables.effects)
    assert E.disaster_striking(0, pos.cells[0], *args) == (K.DIS_NONE, -1)
    pos.pstate[0, E.PS_SELECTED] = tables.tile_index("Fire")
    assert E.disaster_striking(1, pos.cells[1], *args) == (K.DIS_FIRE, E.SRC_SELECTED)

    spec = parse_strategy("greedy")
    for seed in range(3):
        events = play_one(tables, 2, [spec, spec], seed)["events"]
        for turn in range(E.N_TURNS):
            rows = events[events[:, R.E_TURN] == turn]
            order = [(int(e[R.E_KIND]), int(e[R.E_PLAYER])) for e in rows
                     if e[R.E_KIND] == R.EV_SELECT or e[R.E_KIND] in ACTION_EVENTS
                     or (e[R.E_KIND] == R.EV_DISASTER_SELECT and e[R.E_PLAYER] >= 0)]  # fmt: skip
            selects = [k for k, (kind, _) in enumerate(order) if kind == R.EV_SELECT]
            assert len(selects) == 2
            first = order[selects[0]][1]
            assert first == turn % 2  # the start seat alternates
            acted = [k for k, (kind, p) in enumerate(order) if kind != R.EV_SELECT and p == first]
            assert acted and acted[0] < selects[1]


def deal_random_turns(tables, n_players, rules, seed):
    """The GS_RANDOM_TURN fields as ``play_game`` sets them at setup."""
    gstate = neom_setup(tables, n_players, rules, seed)[0]
    return gstate[E.GS_RANDOM_TURN : E.GS_RANDOM_TURN + E.N_GENERATIONS]


@pytest.mark.parametrize("seed", range(4))
def test_random_disaster_turn_is_in_the_state_and_is_the_turn_it_strikes(tables, seed):
    """Rules 001 "Random disasters": each disaster is randomly triggered within its generation;
    002 "その世代のあと何ターン終了後に発生する(ランダムに決定)か
    がプレイヤーパネルの下に表示されます" (how many turns until it strikes is shown under
    the player panel). The turn drawn at setup is in the state every player sees
    (GS_RANDOM_TURN), and the disaster strikes at the end of exactly that turn of each
    generation. Other variants: -1."""
    spec = parse_strategy("greedy")
    shown = deal_random_turns(tables, 3, make_rules(K.V_RANDOM_DISASTERS), seed)
    assert ((shown >= 0) & (shown < E.TURNS_PER_GENERATION)).all()
    events = play_one(tables, 3, [spec] * 3, seed, variant=K.V_RANDOM_DISASTERS)["events"]
    strikes = events[(events[:, R.E_KIND] == R.EV_DISASTER_SELECT) & (events[:, R.E_PLAYER] < 0)]
    assert strikes[:, R.E_TURN].tolist() == [
        g * E.TURNS_PER_GENERATION + int(shown[g]) for g in range(E.N_GENERATIONS)
    ]
    assert (deal_random_turns(tables, 3, make_rules(), seed) == -1).all()


def swaps(tables, variant, n_games=150):
    """EV_CS_SWAPPED events and the players table of random-strategy 4-player games."""
    spec = parse_strategy("random")
    ids = np.arange(n_games, dtype=np.int64)
    seats = np.zeros((n_games, 4), dtype=np.int32)
    out = play_arrays(GAME, rng.master_key(3), ids, ids, seats, [spec.id], [spec.params],
                      tables.arrays, make_rules(variant), True)  # fmt: skip
    per_game = GAME.events_per_game
    events = np.concatenate([
        out.events[i * per_game : i * per_game + out.games[i, R.G_N_EVENTS]] for i in range(n_games)
    ])  # fmt: skip
    placed = (events[:, R.E_KIND] == R.EV_PLACE) & (
        events[:, R.E_TILE] == tables.tile_index("Contract Office")
    )
    swapped = events[events[:, R.E_KIND] == R.EV_CS_SWAPPED]
    return int(placed.sum()), swapped, out.players[:, :4]


def test_contract_office_swaps_only_in_the_beginner_variant(tables):
    """Rules 000 Beginner's Variant: "you may want to skip the Preliminary Round and distribute
    one random Cornerstone tile to each player. If you choose to do so, the 1st Generation
    Contract Office ... allows you to swap your unplaced Cornerstone tile for another random
    one" (003 alike: "Si lo hace"). The swap is the beginner game's: placed in a standard game,
    the Contract Office swaps nothing. A drafted cornerstone swapped away unplaced is recorded
    with cs_gen = CS_SWAPPED_AWAY."""
    placed, swapped, _ = swaps(tables, K.V_STANDARD)
    assert placed > 0 and swapped.shape[0] == 0
    placed, swapped, players = swaps(tables, K.V_BEGINNER)
    assert placed > 0 and swapped.shape[0] > 0
    marked = players[:, :, R.P_CS_GEN0] == R.CS_SWAPPED_AWAY
    assert marked.sum() == swapped.shape[0]  # beginner: one cornerstone each, unplaced when swapped


@pytest.mark.parametrize("name", ["greedy", "builder", "denier", "rollout"])
def test_selection_sees_no_selection_made_so_far(tables, name):
    """001 "Playing a Generation": tiles are selected secretly and simultaneously (3-5 players).
    The game loop writes each selection into PS_SELECTED as it is made, but a strategy's
    selection does not read it: a Disaster selected by an earlier seat this turn changes no
    choice of a later seat's selection (only its action, once all selections are revealed).
    Seat 1 held the Fire and the Apartments (a hand seat 2 may have seen): which one it
    selected is the secret."""
    picks = []
    for fire in (False, True):
        pos, _ = fire_position(tables, fire)
        pos.give(1, ["Apartments" if fire else "Fire"])
        pos.pstate[0, E.PS_SELECTED] = -1
        pos.pstate[2, E.PS_SELECTED] = -1
        pos.give(2, ["Student Housing", "Apartments", "Family Homes", "Row Houses"])
        options, n = pos.select_options(2)
        picks.append([pos.decide(name, E.D_SELECT, options, n, seat=2, seed=s) for s in range(3)])
    assert picks[0] == picks[1]
