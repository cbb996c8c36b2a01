"""Tile-set files: the validator names the file, the tile or board and the field of every
problem; hostile files fail fast in one line; the reconstructed default set meets the stated
constraints (23 distinct shapes, "!" pairs, 5 start pieces at different places, area 44.5 with
a valid witness tiling per board) and is labelled a RECONSTRUCTION."""

import copy
import re
import time
import tomllib
from dataclasses import replace

import numpy as np
import pytest

from sim.core.errors import CatalogError, UserError
from sim.tangram import constants as K
from sim.tangram import engine as E
from sim.tangram import geometry as G
from sim.tangram.tileset import (
    DEFAULT_TILESET,
    MAX_FILE_BYTES,
    TEMPLATE,
    compile_tileset,
    load_tileset,
    tile_letter,
    tileset_warnings,
    validate,
)

SOURCE = "set.toml"


@pytest.fixture(scope="module")
def raw():
    return tomllib.loads(DEFAULT_TILESET.read_text(encoding="utf-8"))


def problems_of(raw, change, witnesses=False):
    """The problems of the default set after ``change``; without the witnesses unless asked
    (a changed tile makes every witness wrong too)."""
    mutated = copy.deepcopy(raw)
    if not witnesses:
        for b in mutated["boards"]:
            b.pop("witness")
    change(mutated)
    return validate(mutated, SOURCE)


def only(problems):
    assert len(problems) == 1, problems
    return problems[0]


def tile(raw, name):
    return next(t for t in raw["tiles"] if t["name"] == name)


def board(raw, name):
    return next(b for b in raw["boards"] if b["name"] == name)


def test_the_default_set_is_valid(raw):
    assert validate(raw, SOURCE) == []


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda d: d.update(extra=1), 'set.toml: unknown top-level key "extra"'),
        (lambda d: d.pop("tileset"), "set.toml: [tileset]: missing"),
        (lambda d: d["tileset"].update(nmae="x"), 'set.toml: [tileset]: unknown field "nmae"'),
        (lambda d: d["tileset"].update(reconstructed="yes"), 'field "reconstructed": expected'),
        (
            lambda d: d["tiles"].pop(1),
            "set.toml: 22 tiles; Tangram City has exactly 23",
        ),
        (
            lambda d: tile(d, "Kite").update(colour="red"),
            'set.toml: tile "Kite": unknown field "colour"',
        ),
        (
            lambda d: tile(d, "Kite").pop("shape"),
            'set.toml: tile "Kite": field "shape": missing',
        ),
        (
            lambda d: tile(d, "Kite").update(shape="SW"),
            'set.toml: tile "Kite": field "shape": expected an array of strings',
        ),
        (
            lambda d: tile(d, "Kite").update(shape=["SW .", "NE XX"]),
            'set.toml: tile "Kite": field "shape": row 2, square 2: "XX" is not a square',
        ),
        (
            lambda d: tile(d, "Kite").update(shape=["SW . .", "NE NW"]),
            'set.toml: tile "Kite": field "shape": rows have different numbers of squares',
        ),
        (
            lambda d: tile(d, "Kite").update(shape=["#"] * 8),
            'set.toml: tile "Kite": field "shape": 8 rows; a tile fits the 7x7 board',
        ),
        (
            lambda d: tile(d, "Kite").update(shape=["# # # # # # # #"]),
            'set.toml: tile "Kite": field "shape": row 1: 8 squares',
        ),
        (
            lambda d: tile(d, "Kite").update(shape=[". ."]),
            'set.toml: tile "Kite": field "shape": every square is empty',
        ),
        (
            lambda d: tile(d, "Kite").update(shape=["# .", ". #"]),
            'set.toml: tile "Kite": field "shape": falls apart into 2 pieces',
        ),
        (
            lambda d: tile(d, "Kite").update(shape=["NE SE"]),
            'set.toml: tile "Kite": field "shape": falls apart into 2 pieces',
        ),
        (
            lambda d: tile(d, "Kite").update(shape=["#", "NE"]),  # Corner turned and flipped
            'set.toml: tile "Kite": field "shape": the same shape as tile "Corner"',
        ),
        (
            lambda d: tile(d, "Kite").update(name="Fan"),
            'set.toml: tile "Fan": duplicate name (tiles #6 and #8)',
        ),
        (
            lambda d: tile(d, "Kite").update(similar_to="Kyte"),
            'set.toml: tile "Kite": field "similar_to": unknown tile "Kyte" (did you mean "Kite"?)',
        ),
        (
            lambda d: tile(d, "Kite").update(similar_to="Kite"),
            'set.toml: tile "Kite": field "similar_to": names the tile itself',
        ),
        (lambda d: d["boards"].pop(), "set.toml: 4 boards; the game has exactly 5 City Boards"),
        (
            lambda d: board(d, "B").update(square=[7, 1]),
            'set.toml: board "B": field "square": row 7 is off the board',
        ),
        (
            lambda d: board(d, "B").update(triangle=[4, 4, "NE"]),
            'set.toml: board "B": field "triangle": square (4, 4) is not beside the start square',
        ),
        (
            lambda d: board(d, "B").update(triangle=[3, 4, "SE"]),
            'set.toml: board "B": field "triangle": half SE of square (3, 4) does not share the '
            "edge with the start square (2, 4); use NE or NW",
        ),
        (
            lambda d: board(d, "B").update(triangle=[3, 4, "N"]),
            'set.toml: board "B": field "triangle": half the string "N": use one of NE, SE',
        ),
        (
            lambda d: board(d, "B").update(name="A"),
            'set.toml: board "A": duplicate name (boards #1 and #2)',
        ),
    ],
)
def test_each_problem_is_named(raw, change, expected):
    message = only(problems_of(raw, change))
    assert message.startswith(expected) or expected in message, message


def test_start_pieces_at_the_same_place_are_rejected(raw):
    """Facts file: the start piece is printed "at a different place on each of the 5 boards"."""

    def same_place(d):
        board(d, "B").update(square=[1, 1], triangle=[1, 2, "NW"])

    message = only(problems_of(raw, same_place))
    assert message == (
        'set.toml: board "B": field "square": the start piece is at the same place as on board '
        '"A"; it is printed at a different place on each board'
    )


def swap_quarters(rows, a, b):
    """Swap the letters of two quarters (row, col, q) of a witness drawing."""
    grid = [[list(token) for token in row.split()] for row in rows]
    (r1, c1, q1), (r2, c2, q2) = a, b
    grid[r1][c1][q1], grid[r2][c2][q2] = grid[r2][c2][q2], grid[r1][c1][q1]
    return [" ".join("".join(t) for t in row) for row in grid]


def test_witness_problems_are_named(raw):
    at = 'set.toml: board "A": field "witness"'
    witness = board(raw, "A")["witness"]
    cases = [
        (witness[:6], f"{at}: 6 rows; a witness draws all 7 rows"),
        ([witness[0] + " AAAA"] + witness[1:], f"{at}: row 1: 8 squares, need 7"),
        (["QQQ" + witness[0][4:]] + witness[1:], f'{at}: row 1, square 1: "QQQ" is not 4'),
        ([witness[0].replace("QQQQ", "....", 1)] + witness[1:], f"{at}: 4 empty quarters"),
        ([witness[0].replace("QQQQ", "xxxx", 1)] + witness[1:], f'{at}: letter "x"'),
    ]
    for rows, expected in cases:

        def change(d, rows=rows):
            board(d, "A")["witness"] = rows

        messages = problems_of(raw, change, witnesses=True)
        assert any(m.startswith(expected) for m in messages), (expected, messages)
    # Two quarters of different tiles swapped: both shapes are broken.
    swapped = swap_quarters(witness, (0, 0, 0), (0, 2, 0))

    def change(d):
        board(d, "A")["witness"] = swapped

    messages = problems_of(raw, change, witnesses=True)
    assert any("is not the shape of tile" in m and m.startswith(at) for m in messages), messages


def test_a_witness_must_match_its_board(raw):
    def change(d):
        board(d, "B")["witness"] = board(d, "A")["witness"]

    messages = problems_of(raw, change, witnesses=True)
    assert (
        'set.toml: board "B": field "witness": the * quarters are not this board\'s start '
        "piece" in messages
    )


def test_every_problem_is_reported_at_once(raw):
    def change(d):
        tile(d, "Kite").update(shape=["XX"])
        tile(d, "Fan").update(similar_to="nobody")
        d["tileset"].pop("name")

    messages = problems_of(raw, change)
    assert len(messages) == 3
    with pytest.raises(CatalogError) as error:
        mutated = copy.deepcopy(raw)
        change(mutated)
        compile_tileset(mutated, SOURCE)
    assert error.value.problems == messages


def test_a_hostile_50_mb_file_fails_fast_in_one_line(tmp_path):
    path = tmp_path / "huge.toml"
    with open(path, "wb") as handle:
        handle.write(b'[tileset]\nname = "x"\n')
        handle.write(b"# " + b"x" * (50 * 1024 * 1024) + b"\n")
    start = time.perf_counter()
    with pytest.raises(UserError) as error:
        load_tileset(path)
    assert time.perf_counter() - start < 1.0
    message = str(error.value)
    assert "\n" not in message
    assert message == f"{path}: larger than 262.144 kB, the limit for a tile-set file"
    assert MAX_FILE_BYTES == 262_144


def test_deep_nesting_fails_in_one_line(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text("x = " + "[" * 20000 + "]" * 20000 + "\n")
    with pytest.raises(UserError) as error:
        load_tileset(path)
    assert "\n" not in str(error.value) and str(path) in str(error.value)
    path.write_text("x = " + "[" * 10 + "]" * 10 + "\n")  # within the core limit
    with pytest.raises(CatalogError) as error:
        load_tileset(path)
    assert str(error.value) == f"{path}: nested deeper than 6 levels; not a tile set"


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"\xc3\x28", "not UTF-8 text (line 1)"),
        (b"\xff\xfe", "UTF-16 text (byte-order mark); save it as UTF-8"),
        (b"[tileset\n", "TOML syntax error"),
    ],
)
def test_unreadable_files(tmp_path, content, expected):
    path = tmp_path / "bad.toml"
    path.write_bytes(content)
    with pytest.raises(UserError, match=re.escape(f"{path}: {expected}")):
        load_tileset(path)
    with pytest.raises(UserError, match="tile-set file not found"):
        load_tileset(tmp_path / "missing.toml")
    with pytest.raises(UserError, match="is a directory"):
        load_tileset(tmp_path)


def test_the_template_is_a_valid_tile_set():
    data = load_tileset(TEMPLATE)
    warnings = tileset_warnings(data)
    assert len(warnings) == 5 and all("no witness" in w for w in warnings)


def test_the_same_bytes_compile_once_under_any_name(tmp_path, monkeypatch):
    """load_tileset keeps compiled tile sets by the digest of their bytes: a copy of a file
    read before is not compiled again, yet is named by its own path and has arrays of its own;
    an edited file and a file with problems are compiled (and refused) afresh."""
    from sim.core.errors import KeptByDigest
    from sim.tangram import tileset

    compiles = []
    real = tileset.compile_tileset
    monkeypatch.setattr(tileset, "compile_tileset", lambda *a: compiles.append(a[1]) or real(*a))
    monkeypatch.setattr(tileset, "_COMPILED", KeptByDigest())
    text = TEMPLATE.read_text(encoding="utf-8")
    first, copy_ = tmp_path / "first.toml", tmp_path / "copy.toml"
    first.write_text(text)
    copy_.write_text(text)
    a, b = load_tileset(first), load_tileset(copy_)
    assert compiles == [str(first)]
    assert (a.source, a.content.source, b.source, b.content.source) == (
        str(first), str(first), str(copy_), str(copy_))  # fmt: skip
    assert a.digest == b.digest and a.content == replace(b.content, source=str(first))
    assert all(np.array_equal(x, y) and not np.shares_memory(x, y)
               for x, y in zip(a.arrays, b.arrays, strict=True))  # fmt: skip
    a.arrays[0][:] = 0  # a caller's change reaches no other caller
    assert not np.array_equal(a.arrays[0], load_tileset(first).arrays[0])
    copy_.write_text(text.replace("# ", "#  ", 1))  # other bytes, the same tile set
    assert load_tileset(copy_).source == str(copy_) and compiles == [str(first), str(copy_)]
    copy_.write_text(text.replace('name = "', 'name = 3 #"', 1))
    for _ in range(2):
        with pytest.raises(CatalogError):
            load_tileset(copy_)
    assert compiles[2:] == [str(copy_)] * 2


def test_placements_kept_by_shape_are_those_of_a_cold_compile(raw):
    """A tile set with one tile resized (a neom balance candidate) compiled with the other
    tiles' placements kept from an earlier compile has the arrays of a compile from nothing."""
    from sim.tangram import tileset

    mutated = copy.deepcopy(raw)
    tile(mutated, "Small Triangle")["shape"] = ["# #", "# #"]
    for b in mutated["boards"]:
        b.pop("witness")
    compile_tileset(raw, SOURCE)
    warm = compile_tileset(mutated, SOURCE)
    tileset._shape_placements.cache_clear()
    tileset._fountain_placements.cache_clear()
    cold = compile_tileset(mutated, SOURCE)
    assert all(a.dtype == b.dtype and np.array_equal(a, b)
               for a, b in zip(warm.arrays, cold.arrays, strict=True))  # fmt: skip


def test_an_area_that_cannot_fill_the_board_is_warned(raw, tmp_path):
    mutated = copy.deepcopy(raw)
    tile(mutated, "Long Trapezoid")["shape"] = [". #", "# NW"]  # 2.5 instead of 3 squares
    for b in mutated["boards"]:
        b.pop("witness")
    data = compile_tileset(mutated, SOURCE)
    assert any("less than the 44.5" in w and "unreachable" in w for w in tileset_warnings(data))


# --- the reconstructed default set -------------------------------------------------------------


def test_default_set_is_labelled_a_reconstruction(data):
    """Issue 17, data honesty: the reconstruction is labelled as such everywhere it is shown."""
    assert data.reconstructed
    assert "RECONSTRUCTED" in data.name
    assert "RECONSTRUCT" in data.label
    header = DEFAULT_TILESET.read_text(encoding="utf-8").splitlines()[1]
    assert "A RECONSTRUCTION, NOT THE PUBLISHED TILES" in header


def test_default_set_has_23_distinct_tangram_shapes(data):
    """Facts file: 23 cards, one per tile; shapes of squares and half-square triangles."""
    ts = data.content
    assert ts.n_tiles == K.N_CARDS
    assert len({G.canonical(s) for s in ts.shapes}) == K.N_CARDS
    for s in ts.shapes:
        assert G.connected(s) and not G.bad_squares(s)
    # Tangram-inspired: most tiles have a triangular part.
    with_halves = sum(1 for s in ts.shapes if any(n != K.FULL for n in G.squares(s).values()))
    assert with_halves >= 18


def test_default_set_has_a_few_near_identical_pairs_marked(data):
    """004: "Cards with an exclamation mark on them are very similar to others": marked tiles
    come in mutual pairs of the same area whose shapes differ in one half."""
    ts = data.content
    pairs = {(i, ts.tile_names.index(o)) for i, o in enumerate(ts.similar_to) if o}
    assert 2 <= len(pairs) // 2 <= 4
    for a, b in pairs:
        assert (b, a) in pairs
        assert ts.area(a) == ts.area(b)
        sa, sb = G.squares(ts.shapes[a]), G.squares(ts.shapes[b])
        # Some orientation of b agrees with a on every square but one.
        best = min(
            sum(
                1
                for rc in set(sa) | set(G.squares(G.oriented(ts.shapes[b], o)))
                if sa.get(rc) != G.squares(G.oriented(ts.shapes[b], o)).get(rc)
            )
            for o in range(8)
        )
        assert best == 1, (ts.tile_names[a], ts.tile_names[b])
        assert sb


def test_default_boards_have_start_pieces_at_different_places(data):
    """Facts file: "one square plus an adjacent triangle, at a different place on each of the
    5 boards"."""
    boards = data.content.boards
    assert len(boards) == K.N_BOARDS
    assert len({b.square for b in boards}) == K.N_BOARDS
    for b in boards:
        squares = G.squares(b.start)
        assert sorted(squares.values()) == sorted([K.FULL, K.HALVES[b.triangle[2]]])
        assert G.connected(b.start)


def test_default_area_fills_the_board_exactly(data):
    """Facts file (inferred): the tiles cover the 44.5 squares left by the start piece (1.5)
    and the 6 fountains (3)."""
    assert sum(len(s) for s in data.content.shapes) == 4 * 44.5
    assert tileset_warnings(data) == []


def test_each_witness_builds_the_whole_board_through_the_engine(data):
    """The planning bonus is reachable on every board: the witness, replayed as placements of
    the compiled table plus the start piece and 6 fountains, builds all 49 squares with no
    overlap, and scores the planning bonus."""
    from sim.tangram.rules import make_rules

    place_mask, place_meta, _, tile_first, start_mask = data.arrays
    ts = data.content
    # Tile placements by their quarters (the fountain's halves come after them: a tile that is
    # a half has the same masks).
    masks = {tuple(int(w) for w in place_mask[p]): p for p in range(tile_first[ts.n_tiles])}
    halves = {
        tuple(int(w) for w in place_mask[p]): p
        for p in range(tile_first[ts.n_tiles], tile_first[ts.n_tiles + 1])
    }
    rules = make_rules()
    for b, brd in enumerate(ts.boards):
        owner = {}
        for r, row in enumerate(brd.witness):
            for c, token in enumerate(row.split()):
                for q, letter in enumerate(token):
                    owner.setdefault(letter, set()).add((r, c, q))
        board = np.zeros((E.N_LAYERS, K.N_WORDS), dtype=np.uint64)
        E.put_start(board, start_mask, b, K.RED)
        assert owner.pop("*") == set(G.from_words(start_mask[b]))
        fountains = owner.pop("~")
        placed = 0
        for letter, quarters in owner.items():
            p = masks[tuple(G.words(quarters))]
            assert tile_letter(int(place_meta[p, 0])) == letter
            assert E.fits(board, place_mask, p)
            E.put(board, place_mask, place_meta, p)
            placed += 1
        assert placed == K.N_CARDS
        for r, c, _ in sorted(fountains):
            for nibble in K.HALVES.values():
                quarters = {(r, c, x) for x in range(4) if nibble >> x & 1}
                key = tuple(G.words(quarters))
                if quarters <= fountains and E.fits(board, place_mask, halves[key]):
                    E.put(board, place_mask, place_meta, halves[key])
                    fountains -= quarters
                    placed += 1
                    break
        assert placed == K.N_CARDS + K.N_FOUNTAINS and not fountains
        full = E.full_squares(board)
        assert full == (1 << 49) - 1
        assert E.planning_bonus(np.uint64(full), rules) == 15
