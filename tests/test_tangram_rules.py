"""Scenario tests of the Tangram City rules: each quotes the rule of text 004
(shared/rules/004_*.txt) or the facts file (shared/data/tangram_known_facts.md) it checks and
asserts an outcome on hand-made positions or on the events of real games. TANGRAM_RULES.md
lists every rule with its reading and these tests."""

import numpy as np
import pytest
from test_tangram_support import run_batch

from sim.core.errors import UserError
from sim.tangram import constants as K
from sim.tangram import engine as E
from sim.tangram import records as R
from sim.tangram.rules import describe_rules, make_rules, rules_as_dict, rules_from_dict


def holders_of(n_players, start):
    holders = np.zeros(K.N_CARDS, dtype=np.int64)
    E.round_holders(n_players, start, 4, holders)
    return [int(h) for h in holders[4:8]]


def bits(*seats):
    return sum(1 << s for s in seats)


# --- dealing and playing cards -----------------------------------------------------------------


def test_solo_deal():
    """004: "If you are playing alone, lay out the 4 Cards in a row in front of you. The first
    2 Cards are face-up, while the last 2 Cards are face-down." Played face-up first."""
    assert holders_of(1, 0) == [1, 1, 0, 0]


def test_two_player_deal():
    """004: "each player receives 1 Card face-down in their hand. The other 2 Cards are placed
    in the middle of the table, with 1 Card face-up and 1 Card face-down"; played: face-up,
    face-down middle, then the start player's card and clockwise."""
    assert holders_of(2, 0) == [bits(0, 1), 0, bits(0), bits(1)]
    assert holders_of(2, 1) == [bits(0, 1), 0, bits(1), bits(0)]


def test_three_player_deal():
    """004: "each player receives 1 Card face-down in their hand. The last Card is placed
    face-up in the middle of the table"."""
    assert holders_of(3, 0) == [bits(0, 1, 2), bits(0), bits(1), bits(2)]
    assert holders_of(3, 2) == [bits(0, 1, 2), bits(2), bits(0), bits(1)]


def test_four_player_deal():
    """004: "the player with the Start Marker and the player to their left each receive 1 Card
    face-down in their hand. The remaining 2 players receive 1 shared Card. The last Card is
    placed face-up in the middle"; clockwise = to the left = the next seat."""
    assert holders_of(4, 0) == [bits(0, 1, 2, 3), bits(0), bits(1), bits(2, 3)]
    assert holders_of(4, 3) == [bits(0, 1, 2, 3), bits(3), bits(0), bits(1, 2)]


def test_five_player_deal():
    """004: "the player with the Start Marker receives 1 Card facedown in their hand. The next
    2 players to the left of the Start player receive 1 shared Card, as do the remaining 2
    players. The last Card is placed face-up in the middle"."""
    assert holders_of(5, 0) == [bits(0, 1, 2, 3, 4), bits(0), bits(1, 2), bits(3, 4)]
    assert holders_of(5, 2) == [bits(0, 1, 2, 3, 4), bits(2), bits(3, 4), bits(0, 1)]


def test_a_seat_knows_only_its_cards_and_the_face_up_ones():
    """004: "You are allowed to look at the Card in your hand or the Card you are sharing with
    someone"; the multiset of tiles still to come is public, their order is not."""
    deck = np.arange(K.N_CARDS, dtype=np.int64)[::-1].copy()
    holders = np.zeros(K.N_CARDS, dtype=np.int64)
    E.round_holders(4, 1, 4, holders)  # round 2, start player 1
    known = np.zeros(K.N_CARDS, dtype=np.int64)
    unseen = np.zeros(K.N_CARDS, dtype=np.int64)
    # Seat 3 shares the round's last card with seat 0; the first card (position 4) is showing.
    n = E.seat_knowledge(3, 4, 4, deck, holders, known, unseen)
    assert list(known[:5]) == list(deck[:5])  # played or showing
    assert known[5] == -1 and known[6] == -1  # the start player's and the next player's
    assert known[7] == deck[7]  # shared with seat 0
    assert (known[8:] == -1).all()
    assert n == K.N_CARDS - 5 - 1
    assert list(unseen[:n]) == sorted(set(deck[5:]) - {deck[7]})  # sorted: no order leaks


def test_cards_are_played_in_the_dealt_order_face_up_first(data):
    """004 PLAY CARDS: "The Cards are played starting with the face-up Card in the middle. If
    you have any facedown Cards in the middle, play them next. Then, play the Card of the player
    with the Start Marker, and continue clockwise". The events of real games: each round's
    card events follow the start player of that round."""
    for n_players in range(1, 6):
        games, _, events, _ = run_batch(
            data, ["random"], np.zeros((30, n_players)), np.arange(30), seed=n_players
        )
        for g, ev in zip(games, events, strict=True):
            start = None
            for e in ev:
                if e["kind"] == R.EV_START_MARKER:
                    start = int(e["player"])
                if e["kind"] == R.EV_CARD and e["round"] < K.N_ROUNDS:
                    first = K.ROUND_FIRST_CARD[e["round"] - 1]
                    expected = holders_of(n_players, start)[e["turn"] - first]
                    assert e["known"] == expected
                    assert e["tile"] == g[f"card_{e['turn']}"]


def test_every_card_is_placed_or_declined_by_every_player(data):
    """004: "Note that all Cards, disregarding their position, must be played by all players";
    "players are allowed to refrain from placing Tiles ... They may not play it at a later
    time": each seat has exactly one place-or-decline per card, after the card is shown."""
    _, players, events, _ = run_batch(
        data, ["random", "greedy", "random"], [[0, 1, 2]] * 20, np.arange(20)
    )
    for ev, pl in zip(events, players, strict=True):
        shown = set()
        handled = {s: [] for s in range(3)}
        for e in ev:
            if e["kind"] == R.EV_CARD:
                shown.add(int(e["tile"]))
            elif e["kind"] in (R.EV_PLACE, R.EV_DECLINE):
                assert int(e["tile"]) in shown
                handled[int(e["player"])].append(int(e["tile"]))
        for s in range(3):
            assert sorted(handled[s]) == list(range(K.N_CARDS))
            declined = [
                int(e["tile"]) for e in ev if e["kind"] == R.EV_DECLINE and e["player"] == s
            ]
            assert pl[s]["tiles_declined"] == len(declined)
            assert pl[s]["declined_mask"] == sum(1 << t for t in declined)
            assert pl[s]["tiles_placed"] + pl[s]["tiles_declined"] == K.N_CARDS


def test_random_players_sometimes_decline(data):
    """Declining is an option of every card (004: "players are allowed to refrain from placing
    Tiles"): random players, choosing uniformly, decline some."""
    _, players, _, _ = run_batch(data, ["random"], np.zeros((50, 2)), np.arange(50), events=False)
    assert players["tiles_declined"].sum() > 0


# --- fountains ---------------------------------------------------------------------------------


def fountain_steps(ev):
    """(round, seat) -> fountains placed in that round's fountain step."""
    out = {}
    for e in ev:
        if e["kind"] == R.EV_FOUNTAIN:
            key = (int(e["round"]), int(e["player"]))
            out[key] = out.get(key, 0) + 1
    return out


def test_fountains_come_after_the_round_s_cards_one_per_round(data):
    """004 PLACING FOUNTAIN TILES: "After all 4 Cards of a round have been played, each player
    takes one of their Fountain Tiles and places it": every fountain event of a round comes
    after that round's last placement and before its scoring; at most one per round; 6 in
    all at most."""
    _, players, events, _ = run_batch(data, ["random", "greedy"], [[0, 1]] * 20, np.arange(20))
    for ev, pl in zip(events, players, strict=True):
        assert all(n == 1 for n in fountain_steps(ev).values())
        last_card = {}
        for i, e in enumerate(ev):
            if e["kind"] in (R.EV_PLACE, R.EV_DECLINE):
                last_card[int(e["round"])] = i
            if e["kind"] == R.EV_FOUNTAIN:
                assert i > last_card[int(e["round"])]
                assert e["turn"] == K.ROUND_LAST_CARD[e["round"] - 1]
            if e["kind"] == R.EV_ROUND_SCORE:
                later = [x for x in ev[i:] if x["kind"] == R.EV_FOUNTAIN]
                assert all(x["round"] > e["round"] for x in later)
        assert (pl["fountains"] <= K.N_FOUNTAINS).all()


def test_fountains_are_optional_and_lost_when_not_placed(data):
    """Facts file: "sources say players *may* place one each round (optional)"; text 004: the
    placing rules apply to "City and Fountain Tiles", and a tile set aside "may not" be played
    at a later time. Reading F2 (default): a fountain not placed in its round is lost, so no
    step places two. The planner sometimes keeps a square free rather than place a fountain."""
    _, players, events, _ = run_batch(
        data, ["planner:samples=2", "greedy"], [[0, 1]] * 6, np.arange(6)
    )
    assert (players["fountains"] < K.N_FOUNTAINS).any()
    for ev in events:
        assert max(fountain_steps(ev).values()) == 1


def test_kept_fountains_can_be_placed_later(data):
    """Reading F2, option fountain_kept = yes (a house rule that contradicts text 004): an
    unplaced fountain stays in hand, and a later step may place several; never more than 6 in
    all. The planner searching from round 1 keeps fountains in hand (greedy places them)."""
    rules = make_rules(fountain_kept="yes")
    _, players, events, _ = run_batch(
        data, ["planner:samples=2,first_round=1"], np.zeros((8, 1)), np.arange(8), rules=rules
    )
    steps = [fountain_steps(ev) for ev in events]
    assert any(max(s.values(), default=0) >= 2 for s in steps)
    assert (players["fountains"] <= K.N_FOUNTAINS).all()
    for ev in events:
        placed = 0
        for rnd in range(1, K.N_ROUNDS + 1):
            placed += fountain_steps(ev).get((rnd, 0), 0)
            assert placed <= rnd  # one fountain arrives per round


# --- scoring -----------------------------------------------------------------------------------


def test_round_scores_follow_the_cards_and_fountains(data):
    """004 ROUND SCORING: "After placing the Fountain Tiles, it's time for a round scoring":
    each seat's round_score event comes after the round's fountain step, one per round, and the
    running total adds them up."""
    _, players, events, _ = run_batch(data, ["greedy"], np.zeros((5, 3)), np.arange(5))
    for ev, pl in zip(events, players, strict=True):
        totals = [0, 0, 0]
        for e in ev:
            if e["kind"] == R.EV_ROUND_SCORE:
                s = int(e["player"])
                totals[s] += int(e["points"])
                assert e["total"] == totals[s]
                assert pl[s][f"round_{int(e['round'])}"] == e["points"]
        assert list(pl["rounds_total"]) == totals


def test_balance_bonus_table():
    """004 BALANCE BONUS: "Distance = Bonus Points 0 = 20 points 1-2 = 10 points 3-4 = 5
    points 5+ = 0 points"."""
    rules = make_rules()
    expected = {0: 20, 1: 10, 2: 10, 3: 5, 4: 5, 5: 0, 6: 0, 30: 0}
    for d, bonus in expected.items():
        assert E.balance_bonus(10 + d, 10, rules) == bonus
        assert E.balance_bonus(10, 10 + d, rules) == bonus


def test_balance_scale_cap():
    """Reading B2 (facts file: "the balance scale's length" is missing), option balance_cap:
    a marker stops at the scale's last space, so counts of 24 and 20 on a scale ending at 20
    are a distance of 0."""
    assert E.balance_bonus(24, 20, make_rules()) == 5
    assert E.balance_bonus(24, 20, make_rules(balance_cap="20")) == 20
    assert E.markers(25, 3, make_rules(balance_cap="20")) == (20, 3)


def test_planning_bonus_needs_all_49_squares():
    """004 PLANNING BONUS: "If a player has fully built the entire 7x7 grid of their City Board
    by the end of the game, they receive an additional 15"."""
    rules = make_rules()
    assert E.planning_bonus(np.uint64((1 << 49) - 1), rules) == 15
    assert E.planning_bonus(np.uint64((1 << 49) - 2), rules) == 0
    assert E.planning_bonus(np.uint64(0), rules) == 0


def test_totals_and_the_winner():
    """004: "The player with the highest score wins the game. If players tie for first place,
    they share the victory." Ranks: tied players share the better rank."""
    totals = np.array([50, 61, 61, 40, 0], dtype=np.int64)
    ranks = np.zeros(5, dtype=np.int64)
    wins = np.zeros(5, dtype=np.int64)
    assert E.rank_players(totals, 4, ranks, wins) == 2
    assert list(ranks[:4]) == [3, 1, 1, 4]
    assert list(wins[:4]) == [0, 1, 1, 0]


# --- the start marker --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "totals, previous, expected",
    [
        ([10, 20, 5, 7], 0, 1),  # a single leader
        ([20, 10, 20, 7], 0, 2),  # tied: the first leader clockwise after the previous one
        ([20, 10, 20, 7], 2, 0),  # ... wrapping round the table
        ([20, 20, 5, 7], 1, 0),  # the previous start player is tied: it comes last
        ([9, 9, 9], 1, 2),  # all tied
        ([9, 9, 9], 2, 0),
        ([12], 0, 0),  # solo
    ],
)
def test_start_marker_goes_to_the_leader(totals, previous, expected):
    """004 ROUND END: "Pass the Start Marker to the person who currently has the highest score.
    If multiple players have the highest score, the Start Marker must be given to the next
    player with the highest score in clockwise direction of the previous starting player. This
    rule also applies when the previous starting player has the highest score as well."""
    padded = np.array(totals + [0] * (5 - len(totals)), dtype=np.int64)
    assert E.next_start(padded, len(totals), previous) == expected


def test_start_marker_events_follow_the_rule(data):
    """The same rule over real games: after each regular round the marker goes to the seat the
    rule names from the running totals and the previous start player; none after round 6."""
    for n_players in (2, 3, 4, 5):
        _, _, events, _ = run_batch(
            data, ["greedy"], np.zeros((10, n_players)), np.arange(10), seed=3
        )
        for ev in events:
            totals = [0] * n_players
            markers = [e for e in ev if e["kind"] == R.EV_START_MARKER]
            assert len(markers) == K.REGULAR_ROUNDS + 1
            start = int(markers[0]["player"])
            for e in ev:
                if e["kind"] == R.EV_ROUND_SCORE:
                    totals[int(e["player"])] = int(e["total"])
                if e["kind"] == R.EV_START_MARKER and e["round"] > 0:
                    leaders = [s for s in range(n_players) if totals[s] == max(totals)]
                    order = [(start + k) % n_players for k in range(1, n_players + 1)]
                    assert e["player"] == next(s for s in order if s in leaders)
                    start = int(e["player"])


# --- the final round ---------------------------------------------------------------------------


def test_final_round_reveals_three_cards_placed_in_any_order(data):
    """004 FINAL ROUND: "there are only 3 Cards left in the deck. Reveal these Cards in the
    middle of the table. Now, all players simultaneously place these last 3 City Tiles ...
    Once everyone is done, each player receives their final Fountain Tile, and performs one
    last round scoring": all 3 cards shown to everyone before any is placed, each seat handles
    each once, in an order of its choosing (greedy takes its best card first, so some seats
    place a later card first), then a fountain step and the scoring."""
    _, _, events, _ = run_batch(data, ["greedy"], np.zeros((30, 2)), np.arange(30))
    out_of_order = 0
    for ev in events:
        final = [e for e in ev if e["round"] == K.N_ROUNDS]
        cards = [e for e in final if e["kind"] == R.EV_CARD]
        assert [int(e["turn"]) for e in cards] == [20, 21, 22]
        assert all(e["known"] == 0b11 for e in cards)
        first_action = next(i for i, e in enumerate(final) if e["kind"] != R.EV_CARD)
        assert first_action == 3
        for s in range(2):
            turns = [
                int(e["turn"])
                for e in final
                if e["kind"] in (R.EV_PLACE, R.EV_DECLINE) and e["player"] == s
            ]
            assert sorted(turns) == [20, 21, 22]
            out_of_order += turns != [20, 21, 22]
        kinds = [int(e["kind"]) for e in final]
        assert kinds.index(R.EV_ROUND_SCORE) > max(
            i for i, k in enumerate(kinds) if k in (R.EV_PLACE, R.EV_DECLINE)
        )
    assert out_of_order > 0


def test_a_game_has_23_cards_in_six_rounds(data):
    """004: "The game consists of 5 regular rounds and a 6th Final round"; 4 cards a round,
    then 3: each tile's card exactly once."""
    games, _, events, _ = run_batch(data, ["random"], np.zeros((3, 4)), np.arange(3))
    for g, ev in zip(games, events, strict=True):
        cards = [e for e in ev if e["kind"] == R.EV_CARD]
        assert [int(e["round"]) for e in cards] == [
            r for r in range(1, 7) for _ in range(4 if r < 6 else 3)
        ]
        assert sorted(int(g[f"card_{p}"]) for p in range(23)) == list(range(23))


# --- readings ----------------------------------------------------------------------------------


def test_first_start_player_reading(data):
    """Reading S1 (facts file: "the initial start player ... not stated"): seat 0 by default;
    option first_start = random draws it with the deal (the same deal, the same seat)."""
    games, _, events, _ = run_batch(data, ["random"], np.zeros((40, 4)), np.arange(40))
    assert (games["first_start"] == 0).all()
    assert all(ev[4]["kind"] == R.EV_START_MARKER and ev[4]["player"] == 0 for ev in events)
    rules = make_rules(first_start="random")
    games, _, _, _ = run_batch(data, ["random"], np.zeros((40, 4)), np.arange(40), rules=rules)
    assert set(games["first_start"]) == {0, 1, 2, 3}
    again, _, _, _ = run_batch(data, ["greedy"], np.zeros((40, 4)), np.arange(40), rules=rules)
    assert (again["first_start"] == games["first_start"]).all()


def test_start_colour_reading(data):
    """Facts file: "Boards are double-sided: the start piece is red on one side and green on
    the other; the player chooses the side" (default: each seat's strategy chooses); options
    start_colour = red / green."""
    _, players, _, _ = run_batch(data, ["random"], np.zeros((40, 2)), np.arange(40))
    assert set(players["start_colour"].ravel()) == {K.RED, K.GREEN}
    for label, colour in (("red", K.RED), ("green", K.GREEN)):
        _, players, events, _ = run_batch(
            data, ["random"], np.zeros((5, 2)), np.arange(5), rules=make_rules(start_colour=label)
        )
        assert (players["start_colour"] == colour).all()
        # The start square counts for that colour from the first balance.
        first_balance = [e for e in events[0] if e["kind"] == R.EV_BALANCE][0]
        assert (first_balance["points"] if colour == K.RED else first_balance["total"]) >= 1


def test_boards_reading(data):
    """Facts file: the 5 boards have the start piece at different places. Default: the boards
    are dealt at random with the deal; option boards = by_seat gives board s to seat s."""
    _, players, _, _ = run_batch(data, ["random"], np.zeros((30, 5)), np.arange(30))
    for row in players["board"]:
        assert sorted(row) == [0, 1, 2, 3, 4]
    assert len({tuple(row) for row in players["board"]}) > 1
    _, players, _, _ = run_batch(
        data, ["random"], np.zeros((5, 3)), np.arange(5), rules=make_rules(boards="by_seat")
    )
    assert (players["board"] == [0, 1, 2]).all()


def test_rules_options_round_trip_and_reject_mistakes():
    rules = make_rules(
        balance_cap="15",
        fountain_kept="yes",
        planning_bonus=10,
        balance_bonus=(30, 20, 10, 0, 0, 0),
    )
    assert (rules_from_dict(rules_as_dict(rules)) == rules).all()
    assert any("NOT the printed table" in line for line in describe_rules(rules))
    assert any("(printed)" in line for line in describe_rules(make_rules()))
    with pytest.raises(UserError, match="--balance-cap '7': expected one of"):
        make_rules(balance_cap="7")
    with pytest.raises(UserError, match="balance bonus"):
        make_rules(balance_bonus=(20, 10))
    with pytest.raises(UserError, match="planning bonus 5000"):
        make_rules(planning_bonus=5000)


def test_bonus_tables_change_the_totals(data):
    """The bonus tables are rules values (for A/B experiments): with no bonuses the totals are
    the round scores."""
    rules = make_rules(planning_bonus=0, balance_bonus=(0, 0, 0, 0, 0, 0))
    _, players, _, _ = run_batch(data, ["greedy"], np.zeros((5, 2)), np.arange(5), rules=rules)
    assert (players["total"] == players["rounds_total"]).all()
