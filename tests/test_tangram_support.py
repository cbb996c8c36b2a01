"""Helpers of the Tangram City tests (imported by basename), with a self-check of the plain
scorer: an independent plain-Python reading of text 004's scoring over boards written as
{(row, col, quarter): colour}, and a batch runner that returns record arrays."""

import numpy as np

from sim.core import rng
from sim.core.batch import records
from sim.tangram import constants as K
from sim.tangram import records as R
from sim.tangram.rules import make_rules
from strategies.tangram.play import STRATEGY_ID_DTYPE, play_batch
from strategies.tangram.registry import parse_strategy

SIZE = 7


def plain_full(board: dict) -> set:
    """Squares (row, col) with all four quarters built."""
    return {
        (r, c)
        for r in range(SIZE)
        for c in range(SIZE)
        if all((r, c, q) in board for q in range(4))
    }


def plain_rectangle(full: set) -> int:
    """Largest axis-aligned rectangle of full squares: for every band of rows, the longest run
    of columns fully built in every row of the band, times the band's height."""
    best = 0
    for top in range(SIZE):
        for bottom in range(top, SIZE):
            run = 0
            for c in range(SIZE):
                if all((r, c) in full for r in range(top, bottom + 1)):
                    run += 1
                    best = max(best, run * (bottom - top + 1))
                else:
                    run = 0
    return best


def plain_colours(board: dict) -> tuple[int, int]:
    """Text 004: a full square counts for red (green) if it holds red (green) and not the
    other colour; fountains add no colour; two fountains count for neither."""
    red = green = 0
    for r, c in plain_full(board):
        colours = {board[(r, c, q)] for q in range(4)} - {K.FOUNTAIN}
        if colours == {K.RED}:
            red += 1
        elif colours == {K.GREEN}:
            green += 1
    return red, green


def plain_balance_bonus(red: int, green: int) -> int:
    """The printed table: distance 0 -> 20, 1-2 -> 10, 3-4 -> 5, 5+ -> 0."""
    d = abs(red - green)
    return 20 if d == 0 else 10 if d <= 2 else 5 if d <= 4 else 0


def board_from_text(rows: list[str]) -> dict:
    """A board from its top rows (up to 7; the rows below are empty) of 7 squares, each 4
    letters N E S W: r, g, f or . (empty)."""
    colours = {"r": K.RED, "g": K.GREEN, "f": K.FOUNTAIN}
    board = {}
    for r, row in enumerate(rows):
        for c, token in enumerate(row.split()):
            for q, letter in enumerate(token):
                if letter != ".":
                    board[(r, c, q)] = colours[letter]
    return board


def engine_board(board: dict) -> np.ndarray:
    """The engine's uint64[3, 4] board of a plain board."""
    from sim.tangram import engine as E

    out = np.zeros((E.N_LAYERS, K.N_WORDS), dtype=np.uint64)
    for (r, c, q), colour in board.items():
        bit = 4 * (r * SIZE + c) + q
        word, shift = divmod(bit, 64)
        out[E.OCC, word] |= np.uint64(1 << shift)
        if colour == K.RED:
            out[E.RED, word] |= np.uint64(1 << shift)
        elif colour == K.GREEN:
            out[E.GREEN, word] |= np.uint64(1 << shift)
    return out


def run_batch(data, strategies, seats, game_ids, deal_ids=None, seed=1, rules=None, events=True):
    """Play the given games; returns (games, players, events) record arrays, players as
    [game, seat] and events as one list per game."""
    specs = [parse_strategy(s) for s in strategies]
    seats = np.asarray(seats, dtype=np.int32)
    game_ids = np.asarray(game_ids, dtype=np.int64)
    deal_ids = game_ids if deal_ids is None else np.asarray(deal_ids, dtype=np.int64)
    n = game_ids.shape[0]
    g = np.zeros((n, R.N_GAME_COLS), dtype=np.int64)
    p = np.zeros((n, K.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int64)
    e = np.zeros((n * R.EVENTS_PER_GAME if events else 0, R.N_EVENT_COLS), dtype=np.int64)
    play_batch(
        rng.master_key(seed),
        game_ids,
        deal_ids,
        seats,
        np.array([s.id for s in specs], dtype=STRATEGY_ID_DTYPE),
        np.stack([s.params for s in specs]).astype(np.float64),
        data.arrays,
        make_rules() if rules is None else rules,
        g,
        p,
        e,
    )
    n_players = seats.shape[1]
    games = records(g, R.GAMES, "games", game_ids)
    players = np.stack(
        [
            records(p[i, :n_players], R.PLAYERS, "players", game_ids[[i] * n_players])
            for i in range(n)
        ]
    )
    event_lists = []
    for i in range(n):
        rows = e[i * R.EVENTS_PER_GAME : i * R.EVENTS_PER_GAME + g[i, R.G_N_EVENTS]]
        event_lists.append(records(rows, R.EVENTS, "events", game_ids[[i] * len(rows)]))
    return games, players, event_lists, (g, p, e)


def test_plain_scorer_on_a_hand_made_board():
    """The plain scorer itself, on the board of text 004's example: a 4x4 block scores 16
    ("A City built as depicted would score you 16, as the biggest rectangle is 4x4")."""
    rows = ["rrrr rrrr gggg gggg .... .... ....",
            "rrrr rrrr gggg gggg rrrr .... ....",
            "rrrr rrrr gggg gggg .... .... ....",
            "rrgg ffgg ffff rrff .... .... ....",
            "rrrr .... .... .... .... .... ....",
            ".... .... .... .... .... .... ....",
            ".... .... .... .... .... .... ...."]  # fmt: skip
    board = board_from_text(rows)
    assert plain_rectangle(plain_full(board)) == 16
    # red: 6 in the block + (1,4) + (3,3) red with fountain + (4,0); (3,0) red+green: neither
    assert plain_colours(board) == (9, 7)


class Replay:
    """Rebuilds every seat's board from a game's events alone, in plain Python, and checks the
    recorded scores against the plain scorer at every round scoring and at the end."""

    def __init__(self, ts, rules=None):
        from sim.tangram import geometry as G

        self.ts = ts
        self.cap = int((make_rules() if rules is None else rules)[K.RO_BALANCE_CAP])
        self.bonus = rules is None or (
            int(rules[K.RO_PLANNING_BONUS]) == 15
            and tuple(rules[K.RO_BALANCE_BONUS0 : K.RO_BALANCE_BONUS0 + 6]) == (20, 10, 10, 5, 5, 0)
        )
        self.images = {
            (t, o): sorted(G.oriented(shape, o))
            for t, shape in enumerate(ts.shapes)
            for o in range(8)
        }

    def check(self, game, players, events):
        n = players.shape[0]
        boards = [
            dict.fromkeys(self.ts.boards[int(p["board"])].start, int(p["start_colour"]))
            for p in players
        ]
        fountains = [0] * n
        totals = [0] * n
        for e in events:
            kind, s = int(e["kind"]), int(e["player"])
            if kind == R.EV_PLACE:
                assert 0 <= e["orientation"] < 8
                cells = [
                    (r + int(e["row"]), c + int(e["col"]), q)
                    for r, c, q in self.images[(int(e["tile"]), int(e["orientation"]))]
                ]
                colour = int(e["colour"])
                assert colour == (K.GREEN if e["orientation"] >= 4 else K.RED)
            elif kind == R.EV_FOUNTAIN:
                nibble = K.HALVES[K.HALF_NAMES[int(e["orientation"])]]
                cells = [(int(e["row"]), int(e["col"]), q) for q in range(4) if nibble >> q & 1]
                colour = K.FOUNTAIN
                fountains[s] += 1
            elif kind == R.EV_ROUND_SCORE:
                points = plain_rectangle(plain_full(boards[s]))
                assert e["points"] == points, (game["game_id"], s, e["round"])
                totals[s] += points
                assert e["total"] == totals[s]
                continue
            elif kind == R.EV_BALANCE:
                red, green = plain_colours(boards[s])
                assert (e["points"], e["total"]) == (min(red, self.cap), min(green, self.cap))
                continue
            else:
                continue
            for cell in cells:
                r, c, _ = cell
                assert 0 <= r < SIZE and 0 <= c < SIZE, "off the board"
                assert cell not in boards[s], "overlap"
                boards[s][cell] = colour
        for s, p in enumerate(players):
            full = plain_full(boards[s])
            red, green = plain_colours(boards[s])
            red, green = min(red, self.cap), min(green, self.cap)
            assert fountains[s] == p["fountains"] <= K.N_FOUNTAINS
            assert p["full_squares"] == len(full)
            assert p["quarters"] == len(boards[s])
            assert p["rounds_total"] == totals[s] == sum(int(p[f"round_{r}"]) for r in range(1, 7))
            assert (p["red"], p["green"]) == (red, green)
            if self.bonus:
                assert p["planning_bonus"] == (15 if len(full) == 49 else 0)
                assert p["balance_bonus"] == plain_balance_bonus(red, green)
            assert p["total"] == p["rounds_total"] + p["planning_bonus"] + p["balance_bonus"]
        best = max(int(p["total"]) for p in players)
        assert [int(p["win"]) for p in players] == [int(p["total"] == best) for p in players]
        assert game["n_winners"] == sum(int(p["win"]) for p in players)
        assert game["winning_score"] == best
        for p in players:
            assert p["rank"] == 1 + sum(int(q["total"] > p["total"]) for q in players)
        return boards
