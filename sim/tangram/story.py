"""One played game (:class:`sim.core.game.GameRecord`) as the ``play --json`` object and as a
readable turn-by-turn log, and the final boards rebuilt from its events.

The JSON object (issue 17, "Interfaces"): ``events``, each with ``kind`` among ``start_piece``,
``card`` (with ``tile``), ``place``, ``decline``, ``fountain``, ``round_score`` (with ``player``,
``points`` and the running ``total``), ``balance`` and ``start_marker`` (with ``player``); and
``final``, one entry per player with ``player``, ``rounds`` (the six round scores),
``planning_bonus``, ``balance_bonus``, ``red``, ``green``, ``total``, ``rank``, ``win``. It also
names the game, the tile set (saying RECONSTRUCTION when it is one), the seed, the strategies
and the rules.
"""

from sim.core.game import GameData, GameRecord
from sim.tangram import constants as K
from sim.tangram import geometry as G
from sim.tangram import records as R
from sim.tangram.rules import describe_rules, rules_as_dict
from sim.tangram.tileset import TileSet

QUARTER_LETTERS = {K.RED: "r", K.GREEN: "g", K.FOUNTAIN: "f"}


def placed_quarters(ts: TileSet, tile: int, orientation: int, row: int, col: int) -> set:
    """Board quarters of a tile placed in ``orientation`` with its box's top left at (row,
    col)."""
    image = G.oriented(ts.shapes[tile], orientation)
    return {(r + row, c + col, q) for r, c, q in image}


def fountain_quarters(half: int, row: int, col: int) -> set:
    nibble = K.HALVES[K.HALF_NAMES[half]]
    return {(row, col, q) for q in range(4) if nibble >> q & 1}


def final_boards(record: GameRecord, data: GameData) -> list[dict]:
    """Each seat's final board rebuilt from the events alone: quarter -> colour."""
    ts: TileSet = data.content
    boards: list[dict] = [{} for _ in range(record.players.shape[0])]
    for player in record.players:
        board = boards[int(player["seat"])]
        start = ts.boards[int(player["board"])].start
        for quarter in start:
            board[quarter] = int(player["start_colour"])
    for e in record.events:
        kind, seat = int(e["kind"]), int(e["player"])
        if kind == R.EV_PLACE:
            cells = placed_quarters(
                ts, int(e["tile"]), int(e["orientation"]), int(e["row"]), int(e["col"])
            )
            colour = int(e["colour"])
        elif kind == R.EV_FOUNTAIN:
            cells = fountain_quarters(int(e["orientation"]), int(e["row"]), int(e["col"]))
            colour = K.FOUNTAIN
        else:
            continue
        for quarter in cells:
            if quarter in boards[seat]:
                raise ValueError(f"seat {seat}: quarter {quarter} built twice")
            boards[seat][quarter] = colour
    return boards


def board_lines(board: dict) -> list[str]:
    """A board drawn square by square, each square 4 letters for its N, E, S, W quarters:
    r red, g green, f fountain, . empty."""
    return [
        " ".join(
            "".join(QUARTER_LETTERS.get(board.get((r, c, q)), ".") for q in range(4))
            for c in range(K.SIZE)
        )
        for r in range(K.SIZE)
    ]


def _seats(mask: int, n: int) -> list[int]:
    return [s for s in range(n) if mask >> s & 1]


def event_json(e, ts: TileSet, n_players: int) -> dict:
    kind = int(e["kind"])
    out = {"kind": R.EVENT_KINDS[kind], "round": int(e["round"]), "turn": int(e["turn"])}
    player = int(e["player"])
    tile = int(e["tile"])
    if kind == R.EV_START_PIECE:
        out |= {"player": player, "colour": K.COLOUR_NAMES[int(e["colour"])]}
    elif kind == R.EV_CARD:
        out |= {
            "tile": ts.tile_names[tile],
            "tile_index": tile,
            "marked": ts.marked(tile),
            "seen_by": _seats(int(e["known"]), n_players),
        }
    elif kind == R.EV_PLACE:
        cells = placed_quarters(ts, tile, int(e["orientation"]), int(e["row"]), int(e["col"]))
        out |= {
            "player": player,
            "tile": ts.tile_names[tile],
            "tile_index": tile,
            "orientation": int(e["orientation"]),
            "flipped": int(e["orientation"]) >= 4,
            "row": int(e["row"]),
            "col": int(e["col"]),
            "colour": K.COLOUR_NAMES[int(e["colour"])],
            "squares": _squares_json(cells),
        }
    elif kind == R.EV_DECLINE:
        out |= {"player": player, "tile": ts.tile_names[tile], "tile_index": tile}
    elif kind == R.EV_FOUNTAIN:
        out |= {
            "player": player,
            "row": int(e["row"]),
            "col": int(e["col"]),
            "half": K.HALF_NAMES[int(e["orientation"])],
        }
    elif kind == R.EV_ROUND_SCORE:
        out |= {"player": player, "points": int(e["points"]), "total": int(e["total"])}
    elif kind == R.EV_BALANCE:
        out |= {"player": player, "red": int(e["points"]), "green": int(e["total"])}
    elif kind == R.EV_START_MARKER:
        out |= {"player": player}
    return out


def _squares_json(cells: set) -> list:
    """[row, col, part] per square covered: part "#" (whole) or the half NE/SE/SW/NW."""
    names = {nibble: name for name, nibble in G.TOKENS.items()}
    return [[r, c, names[n]] for (r, c), n in sorted(G.squares(cells).items())]


def final_json(player) -> dict:
    counts = ("planning_bonus", "balance_bonus", "red", "green", "total", "rank")
    return {
        "player": int(player["seat"]),
        "rounds": [int(player[f"round_{r}"]) for r in range(1, K.N_ROUNDS + 1)],
        **{name: int(player[name]) for name in counts},
        "win": bool(player["win"]),
    }


def record_json(record: GameRecord, data: GameData) -> dict:
    """The ``play --json`` object of a game."""
    ts: TileSet = data.content
    n = record.players.shape[0]
    boards = final_boards(record, data)
    return {
        "game": "tangram",
        "tileset": data.label,
        "reconstructed": data.reconstructed,
        "seed": record.extra.get("seed"),
        "players": n,
        "strategies": list(record.strategies),
        "rules": rules_as_dict(record.rules),
        "deck": [
            ts.tile_names[int(record.game[f"card_{p}"])]
            for p in range(K.N_CARDS)
            if record.game[f"card_{p}"] >= 0  # a banned card leaves its last position empty
        ],
        "boards": [ts.boards[int(p["board"])].name for p in record.players],
        "events": [event_json(e, ts, n) for e in record.events],
        "final": [final_json(p) for p in record.players],
        "final_boards": [board_lines(b) for b in boards],
    }


# The one-line events: kind -> its line from (the event, its seat, the tile set).
_EVENT_TEXT = {
    R.EV_START_MARKER: lambda e, s, ts: f"  start marker -> seat {s}",
    R.EV_DECLINE: lambda e, s, ts: (
        f"  seat {s} declines {ts.tile_names[int(e['tile'])]} (gone for good)"
    ),
    R.EV_FOUNTAIN: lambda e, s, ts: (
        f"  seat {s} places a fountain on {int(e['row'])},{int(e['col'])} "
        f"{K.HALF_NAMES[int(e['orientation'])]}"
    ),
    R.EV_ROUND_SCORE: lambda e, s, ts: (
        f"  seat {s} scores {int(e['points'])} (largest rectangle), total {int(e['total'])}"
    ),
    R.EV_BALANCE: lambda e, s, ts: (
        f"  seat {s} balance: red {int(e['points'])}, green {int(e['total'])}"
    ),
}


def record_lines(record: GameRecord, data: GameData) -> list[str]:
    """The game told turn by turn, then each seat's board and score."""
    ts: TileSet = data.content
    n = record.players.shape[0]
    lines = [f"Tangram City, {n} player{'s' if n > 1 else ''}; tile set: {data.label}"]
    lines += [f"  seat {s}: {spec}" for s, spec in enumerate(record.strategies)]
    lines += [f"  rule: {text}" for text in describe_rules(record.rules)]
    boards_of = [ts.boards[int(p["board"])].name for p in record.players]
    for e in record.events:
        kind, s = int(e["kind"]), int(e["player"])
        tile = int(e["tile"])
        if kind == R.EV_START_PIECE:
            lines.append(
                f"seat {s} plays board {boards_of[s]}, start piece "
                f"{K.COLOUR_NAMES[int(e['colour'])]}"
            )
        elif kind == R.EV_CARD:
            if int(e["turn"]) in K.ROUND_FIRST_CARD:
                lines.append(f"--- round {int(e['round'])} ---")
            seen = _seats(int(e["known"]), n)
            seen_text = "everyone" if len(seen) == n else ", ".join(map(str, seen)) or "nobody"
            lines.append(
                f"card {int(e['turn']) + 1}: {ts.card_name(tile)} (seen before by {seen_text})"
            )
        elif kind == R.EV_PLACE:
            cells = placed_quarters(ts, tile, int(e["orientation"]), int(e["row"]), int(e["col"]))
            squares = " ".join(f"{r},{c}:{part}" for r, c, part in _squares_json(cells))
            side = "flipped" if int(e["orientation"]) >= 4 else "drawn side"
            lines.append(
                f"  seat {s} places {ts.tile_names[tile]} {K.COLOUR_NAMES[int(e['colour'])]} "
                f"({side}, {int(e['orientation']) % 4} quarter turns) on {squares}"
            )
        elif kind in _EVENT_TEXT:
            lines.append(_EVENT_TEXT[kind](e, s, ts))
    lines.append("--- end ---")
    for s, board in enumerate(final_boards(record, data)):
        p = record.players[s]
        lines.append(
            f"seat {s} ({record.strategies[s]}): rounds "
            f"{'+'.join(str(int(p[f'round_{r}'])) for r in range(1, K.N_ROUNDS + 1))}, planning "
            f"bonus {int(p['planning_bonus'])}, balance bonus {int(p['balance_bonus'])} (red "
            f"{int(p['red'])}, green {int(p['green'])}) = {int(p['total'])}, rank "
            f"{int(p['rank'])}{', WINS' if p['win'] else ''}"
        )
        lines += [f"    {row}" for row in board_lines(board)]
    lines.append("(board squares: N E S W quarters; r red, g green, f fountain, . empty)")
    return lines
