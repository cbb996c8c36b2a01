"""Tile-set files: read, validate and compile a Tangram City tile set into placement tables.

A tile set is a TOML file (format: docs/tangram-tileset.md, skeleton: ``template()``): a
``[tileset]`` header, exactly 23 ``[[tiles]]`` (one per card) drawn as rows of squares, and
exactly 5 ``[[boards]]`` with their printed start piece and, optionally, a witness tiling that
shows the whole board can be built. Every problem is reported at once, each naming the file,
the tile or board and the field; a file with any problem is not used.

The compiled form (``GameData.arrays``, passed to the compiled game as ``data``) is a tuple:

- ``place_mask`` uint64[n_place, 4]: the quarters each placement covers (board words);
- ``place_meta`` int64[n_place, N_META]: tile, orientation, colour, row, col, quarters, edges;
- ``place_near`` uint64[n_place, 4]: the quarters sharing an edge with the placement (contact);
- ``tile_first`` int64[n_tiles + 2]: placements of tile t are rows ``tile_first[t]`` to
  ``tile_first[t + 1] - 1``; "tile" n_tiles is the Fountain (4 halves x 49 squares);
- ``start_mask`` uint64[n_boards, 4]: each board's printed start piece.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from sim.core.errors import CatalogError, KeptByDigest, read_toml_input
from sim.core.fields import (
    check_kind,
    check_name,
    describe,
    duplicate_names,
    name_problem,
    read_fields,
    read_header,
    shown_name,
    suggest,
    table_array,
)
from sim.core.game import COPY_NOTE, GameData, same_arrays
from sim.tangram import constants as K
from sim.tangram import geometry as G

DATA = Path(__file__).parent / "data"
DEFAULT_TILESET = DATA / "default_tileset.toml"
TEMPLATE = DATA / "template.toml"
SNAPSHOT_NAME = "tileset.toml"
RECONSTRUCTED_BANNER = "RECONSTRUCTION: not the published Tangram City tiles"

# Limits that keep a hostile file cheap to reject: checked before and after parsing.
MAX_FILE_BYTES = 256 * 1024
MAX_DEPTH = 6  # tables and arrays nested inside each other (a tile's shape is at depth 4)
MAX_ENTRIES = 64  # [[tiles]] or [[boards]] looked at
MAX_TEXT = 500  # characters of any one string

# place_meta columns
M_TILE = 0
M_ORIENTATION = 1  # tiles: 0-7 (4 * flipped + quarter turns clockwise); fountains: half 0-3
M_COLOUR = 2
M_ROW = 3  # top-left corner of the oriented shape's bounding box (fountains: their square)
M_COL = 4
M_QUARTERS = 5  # area in quarters
M_EDGES = 6  # quarter edges on the board's border
N_META = 7

TILESET_FIELDS = {
    "name": ("str", None),
    "reconstructed": ("bool", False),
    "description": ("str", ""),
}
TILE_FIELDS = {"name": ("str", None), "shape": ("strs", None), "similar_to": ("str", "")}
BOARD_FIELDS = {
    "name": ("str", None),
    "square": ("pair", None),
    "triangle": ("triple", None),
    "witness": ("strs", []),
}
TOP_LEVEL_KEYS = ("tileset", "tiles", "boards")
KIND_WORDS = {
    "str": "a string",
    "bool": "true or false",
    "strs": "an array of strings",
    "pair": "[row, col]",
    "triple": '[row, col, "half"]',
}
# The half of the adjacent square a start triangle may take: it must share the edge with the
# start square. Key: (row step, col step) from the square to the triangle's square.
TOUCHING_HALVES = {
    (-1, 0): ("SE", "SW"),
    (1, 0): ("NE", "NW"),
    (0, 1): ("SW", "NW"),
    (0, -1): ("NE", "SE"),
}
WITNESS_START = "*"
WITNESS_FOUNTAIN = "~"
WITNESS_EMPTY = "."


def tile_letter(index: int) -> str:
    """The letter naming tile ``index`` (file order) in witness drawings: A, B, ..."""
    return chr(ord("A") + index)


@dataclass(frozen=True)
class Board:
    name: str
    square: tuple[int, int]
    triangle: tuple[int, int, str]
    start: frozenset  # the start piece's quarters (board coordinates)
    witness: tuple[str, ...]  # the drawing as written; () if none


@dataclass(frozen=True)
class TileSet:
    """The tile set by name: what the game's own displays need besides the arrays."""

    name: str
    reconstructed: bool
    description: str
    tile_names: tuple[str, ...]
    shapes: tuple[frozenset, ...]  # normalized, red (drawn) side
    similar_to: tuple[str, ...]  # "" or the near-identical tile: the card carries "!"
    boards: tuple[Board, ...]
    placement_counts: tuple[int, ...]
    source: str = ""  # the file as shown to users
    raw: bytes = b""  # its bytes (a run folder's copy)

    @property
    def n_tiles(self) -> int:
        return len(self.tile_names)

    def marked(self, tile: int) -> bool:
        """True if the tile's card carries the "!" mark."""
        name = self.tile_names[tile]
        return bool(self.similar_to[tile]) or (bool(name) and name in self.similar_to)

    def card_name(self, tile: int) -> str:
        return self.tile_names[tile] + (" (!)" if self.marked(tile) else "")

    def area(self, tile: int) -> float:
        return len(self.shapes[tile]) / 4


# --- reading values -----------------------------------------------------------------------------


SHOWN_TEXT = 40  # characters of a wrong value that a message quotes


def _shown(value) -> str:
    return describe(value, SHOWN_TEXT)


def _type_problem(value, kind: str) -> str:
    expected = f"expected {KIND_WORDS[kind]}, got "
    if kind == "str":
        if not isinstance(value, str):
            return expected + _shown(value)
        if len(value) > MAX_TEXT:
            return f"{len(value)} characters, at most {MAX_TEXT}"
    elif kind == "bool":
        if not isinstance(value, bool):
            return expected + _shown(value)
    elif kind == "strs":
        if not isinstance(value, list):
            return expected + _shown(value)
        for item in value:
            if not isinstance(item, str):
                return f"{expected}an array containing {_shown(item)}"
            if len(item) > MAX_TEXT:
                return f"a string of {len(item)} characters, at most {MAX_TEXT}"
    elif kind in ("pair", "triple"):
        n = 2 if kind == "pair" else 3
        if not isinstance(value, list) or len(value) != n:
            return expected + _shown(value)
        for axis, item in zip(("row", "col"), value[:2], strict=True):
            if not isinstance(item, int) or isinstance(item, bool):
                return f"{expected}{axis} {_shown(item)}"
            if not 0 <= item < K.SIZE:
                return f"{axis} {item} is off the board (0 to {K.SIZE - 1})"
        if n == 3 and value[2] not in K.HALVES:
            return f"half {_shown(value[2])}: use one of {', '.join(K.HALF_NAMES)}"
    return ""


def _read_fields(raw, spec: dict, where: str, problems: list[str]):
    """:func:`sim.core.fields.read_fields` with the tile set's field kinds."""
    return read_fields(raw, spec, where, problems, _type_problem, max_text=SHOWN_TEXT)


def _depth(value, limit: int, level: int = 1) -> int:
    """Nesting depth of parsed TOML, not looking deeper than ``limit`` + 1."""
    if level > limit:
        return level
    if isinstance(value, dict):
        return max((_depth(v, limit, level + 1) for v in value.values()), default=level)
    if isinstance(value, list):
        return max((_depth(v, limit, level + 1) for v in value), default=level)
    return level - 1


def _label(kind: str, raw, position: int) -> str:
    name = raw.get("name") if isinstance(raw, dict) else None
    if isinstance(name, str) and len(name) <= MAX_TEXT and not name_problem(name):
        return f'{kind} "{name}"'
    if isinstance(name, str) and name.strip():  # named, but not usably: show it, escaped
        return f"{kind} #{position + 1} ({shown_name(name)})"
    return f"{kind} #{position + 1} (no name)"


# --- shapes ---------------------------------------------------------------------------------------


def parse_shape(rows: list[str], at: str, problems: list[str]) -> frozenset | None:
    """A drawn shape: rows of space-separated squares, each ``#`` (full), ``NE``, ``SE``,
    ``SW``, ``NW`` (the half with its right angle at that corner) or ``.`` (empty)."""
    if not rows:
        problems.append(f"{at}: empty; draw the tile as rows of squares")
        return None
    if len(rows) > K.SIZE:
        problems.append(f"{at}: {len(rows)} rows; a tile fits the {K.SIZE}x{K.SIZE} board")
        return None
    quarters = set()
    widths = []
    ok = True
    for r, row in enumerate(rows):
        tokens = row.split()
        widths.append(len(tokens))
        if len(tokens) > K.SIZE:
            problems.append(
                f"{at}: row {r + 1}: {len(tokens)} squares; a tile fits the {K.SIZE}x{K.SIZE} board"
            )
            ok = False
            continue
        for c, token in enumerate(tokens):
            if token == WITNESS_EMPTY:
                continue
            nibble = G.TOKENS.get(token)
            if nibble is None:
                problems.append(
                    f'{at}: row {r + 1}, square {c + 1}: "{token[:20]}" is not a square; use # '
                    "(full), NE, SE, SW, NW (a half, named by its right-angle corner) or . (empty)"
                )
                ok = False
                continue
            quarters.update((r, c, q) for q in range(4) if nibble >> q & 1)
    if ok and len(set(widths)) > 1:
        shown = ", ".join(f"row {r + 1}: {w}" for r, w in enumerate(widths))
        problems.append(f"{at}: rows have different numbers of squares ({shown}); pad with .")
        ok = False
    if not ok:
        return None
    shape = G.normalize(quarters)
    if not shape:
        problems.append(f"{at}: every square is empty")
        return None
    if not G.connected(shape):
        problems.append(
            f"{at}: falls apart into {_components(shape)} pieces; the squares and halves of a "
            "tile must share edges (touching at a corner is not enough)"
        )
        return None
    return shape


def _components(shape: frozenset) -> int:
    left = set(shape)
    count = 0
    while left:
        count += 1
        todo = [left.pop()]
        while todo:
            for n in G.neighbours(*todo.pop()):
                if n in left:
                    left.remove(n)
                    todo.append(n)
    return count


# --- boards and witnesses -------------------------------------------------------------------------


def _start_piece(fields: dict, at: str, problems: list[str]) -> frozenset | None:
    square, triangle = fields["square"], fields["triangle"]
    if square is None or triangle is None:
        return None
    r, c = square
    tr, tc, half = triangle
    step = (tr - r, tc - c)
    if step not in TOUCHING_HALVES:
        problems.append(
            f'{at}: field "triangle": square ({tr}, {tc}) is not beside the start square '
            f"({r}, {c}); the start piece is one square plus an adjacent triangle"
        )
        return None
    if half not in TOUCHING_HALVES[step]:
        problems.append(
            f'{at}: field "triangle": half {half} of square ({tr}, {tc}) does not share the edge '
            f"with the start square ({r}, {c}); use {' or '.join(TOUCHING_HALVES[step])}"
        )
        return None
    nibble = K.HALVES[half]
    return frozenset(
        [(r, c, q) for q in range(4)] + [(tr, tc, q) for q in range(4) if nibble >> q & 1]
    )


def check_witness(
    rows, shapes, tile_names, start: frozenset | None, at: str, problems: list[str]
) -> None:
    """A witness is the whole board drawn quarter by quarter: 7 rows of 7 squares, each square
    4 characters for its N, E, S, W quarters: a tile letter (A = the first tile in the file),
    ``*`` the start piece, ``~`` a fountain or ``.`` empty. It is valid when every tile appears
    exactly once in one of its orientations, the start piece is the board's, fountains are
    whole halves (at most 6) and nothing is empty: proof that the board can be fully built."""
    n_before = len(problems)
    if len(rows) != K.SIZE:
        problems.append(f"{at}: {len(rows)} rows; a witness draws all {K.SIZE} rows")
        return
    cells: dict[str, set] = {}
    for r, row in enumerate(rows):
        tokens = row.split()
        if len(tokens) != K.SIZE:
            problems.append(f"{at}: row {r + 1}: {len(tokens)} squares, need {K.SIZE}")
            continue
        for c, token in enumerate(tokens):
            if len(token) != 4:
                problems.append(
                    f'{at}: row {r + 1}, square {c + 1}: "{token[:20]}" is not 4 quarter '
                    "letters (N, E, S, W)"
                )
                continue
            for q, letter in enumerate(token):
                cells.setdefault(letter, set()).add((r, c, q))
    if len(problems) > n_before:
        return
    letters = {tile_letter(i): i for i in range(len(shapes))}
    for letter in sorted(cells):
        quarters = cells[letter]
        where = sorted(quarters)[0]
        first = f"row {where[0] + 1}, square {where[1] + 1}"
        if letter == WITNESS_EMPTY:
            problems.append(
                f"{at}: {len(quarters)} empty quarters (first at {first}); a witness fills "
                "the whole board"
            )
        elif letter == WITNESS_START:
            if start is not None and quarters != start:
                problems.append(f"{at}: the * quarters are not this board's start piece")
        elif letter == WITNESS_FOUNTAIN:
            by_square = G.squares(quarters)
            bad = [rc for rc, n in by_square.items() if n not in (K.FULL, *K.HALVES.values())]
            if bad:
                r, c = bad[0]
                problems.append(
                    f"{at}: row {r + 1}, square {c + 1}: the ~ (fountain) quarters are not "
                    "whole halves"
                )
            elif len(quarters) // 2 > K.N_FOUNTAINS:
                problems.append(
                    f"{at}: {len(quarters) // 2} fountains; each player has {K.N_FOUNTAINS}"
                )
        elif letter not in letters:
            problems.append(
                f'{at}: letter "{letter}" (first at {first}) names no tile; tiles are '
                f"{tile_letter(0)} to {tile_letter(len(shapes) - 1)} in file order"
            )
        elif shapes[letters[letter]] is not None:
            image = G.normalize(quarters)
            index = letters[letter]
            if all(G.oriented(shapes[index], o) != image for o in range(G.N_ORIENTATIONS)):
                problems.append(
                    f"{at}: letter {letter} (first at {first}) is not the shape of tile "
                    f'"{tile_names[index]}" in any orientation'
                )
    missing = [letter for letter in letters if letter not in cells]
    if missing:
        problems.append(
            f"{at}: tiles {', '.join(missing)} do not appear; a witness places every tile"
        )


def witness_rows(owner: dict[tuple[int, int, int], str]) -> list[str]:
    """Witness drawing from quarter -> letter."""
    return [
        " ".join(
            "".join(owner.get((r, c, q), WITNESS_EMPTY) for q in range(4)) for c in range(K.SIZE)
        )
        for r in range(K.SIZE)
    ]


# --- the whole file -------------------------------------------------------------------------------


def _entries(raw_entries: list, kind: str, spec: dict, source: str, problems: list[str]):
    """(where, fields or None) of each of the first MAX_ENTRIES ``[[...]]`` entries; an
    unusable name (empty, control characters) is reported and left out (None)."""
    for position, raw in enumerate(raw_entries[:MAX_ENTRIES]):
        where = f"{source}: {_label(kind, raw, position)}"
        fields = _read_fields(raw, spec, where, problems)
        check_name(fields, where, problems)
        yield where, fields


def _read(data: dict, source: str, problems: list[str]) -> dict:
    header = read_header(
        data, TOP_LEVEL_KEYS, "tileset", TILESET_FIELDS, source, problems, _type_problem, SHOWN_TEXT
    )
    check_name(header, f"{source}: [tileset]", problems)
    header = header or {}

    raw_tiles = table_array(data, "tiles", source, problems)
    tiles = []
    for where, fields in _entries(raw_tiles, "tile", TILE_FIELDS, source, problems):
        if fields is None:
            tiles.append((None, None, "", where))
            continue
        shape = None
        if fields["shape"] is not None:
            shape = parse_shape(fields["shape"], f'{where}: field "shape"', problems)
        tiles.append((fields["name"], shape, fields["similar_to"] or "", where))
    if len(raw_tiles) != K.N_CARDS:
        problems.append(
            f"{source}: {len(raw_tiles)} tiles; Tangram City has exactly {K.N_CARDS} (one per "
            f"card: 5 rounds of {K.CARDS_PER_ROUND} cards and a final round of {K.FINAL_CARDS})"
        )
    names = [name for name, _, _, _ in tiles]
    duplicate_names(names, "tile", source, problems, lookalikes=True)
    shapes = [shape for _, shape, _, _ in tiles]
    first_with: dict[tuple, int] = {}
    for index, (name, shape, similar, where) in enumerate(tiles):
        if shape is not None:
            key = G.canonical(shape)
            if key in first_with:
                problems.append(
                    f'{where}: field "shape": the same shape as tile "{names[first_with[key]]}" '
                    "(up to rotation and flip); every card names a different tile"
                )
            else:
                first_with[key] = index
        if similar:
            if similar == name:
                problems.append(f'{where}: field "similar_to": names the tile itself')
            elif similar not in names:
                problems.append(
                    f'{where}: field "similar_to": unknown tile "{similar}"'
                    + suggest(similar, [n for n in names if n])
                )
            elif name is not None and tiles[names.index(similar)][2] != name:
                # The "!" is on both cards of a near-identical pair (text 004), so the pair
                # names each other; a one-sided entry is a typo or a forgotten half.
                back = tiles[names.index(similar)][2]
                problems.append(
                    f'{where}: field "similar_to": "{similar}" does not name this tile back '
                    f'(its similar_to is "{back}"); both cards of a near-identical pair carry '
                    f'"!": give "{similar}" similar_to = "{name}"'
                )

    raw_boards = table_array(data, "boards", source, problems)
    boards = []
    for where, fields in _entries(raw_boards, "board", BOARD_FIELDS, source, problems):
        if fields is None:
            continue
        start = _start_piece(fields, where, problems)
        witness = fields["witness"] or []
        if witness:
            check_witness(witness, shapes, names, start, f'{where}: field "witness"', problems)
        boards.append((fields["name"], fields, start, tuple(witness), where))
    if len(raw_boards) != K.N_BOARDS:
        problems.append(
            f"{source}: {len(raw_boards)} boards; the game has exactly {K.N_BOARDS} City Boards "
            "(one per player)"
        )
    duplicate_names([b[0] for b in boards], "board", source, problems, lookalikes=True)
    first_at: dict[tuple, str] = {}
    for name, fields, start, _, where in boards:
        if start is None:
            continue
        square = tuple(fields["square"])
        if square in first_at:
            problems.append(
                f'{where}: field "square": the start piece is at the same place as on board '
                f'"{first_at[square]}"; it is printed at a different place on each board'
            )
        else:
            first_at[square] = name
    return dict(header=header, tiles=tiles, boards=boards)


def _placements(shapes: list[frozenset]):
    """Every placement of every tile (both sides, each distinct footprint, every position), then
    the fountain's 4 halves on every square."""
    masks, near, meta, first = [], [], [], [0]
    for tile, shape in enumerate(shapes):
        for mask, near_words, placement in _shape_placements(shape):
            masks.append(mask)
            near.append(near_words)
            meta.append((tile, *placement))
        first.append(len(masks))
    for mask, near_words, placement in _fountain_placements():
        masks.append(mask)
        near.append(near_words)
        meta.append((len(shapes), *placement))
    first.append(len(masks))
    as_u64 = np.array(masks, dtype=object).astype(np.uint64).reshape(-1, K.N_WORDS)
    near_u64 = np.array(near, dtype=object).astype(np.uint64).reshape(-1, K.N_WORDS)
    return (
        as_u64,
        np.array(meta, dtype=np.int64).reshape(-1, N_META),
        near_u64,
        np.array(first, dtype=np.int64),
    )


# A shape's placements depend on the shape alone: a candidate tile set of neom balance, which
# changes one tile, computes only that tile's (the search is most of a tile set's compile).
@functools.lru_cache(maxsize=256)
def _shape_placements(shape: frozenset) -> tuple:
    """(mask words, surroundings' words, (orientation, colour, row, col, quarters, edges)) of
    every placement of ``shape``: both sides, each distinct footprint, every position."""
    out = []
    for orientation, colour, image in G.orientations(shape):
        h, w = G.height(image), G.width(image)
        for dr in range(K.SIZE - h + 1):
            for dc in range(K.SIZE - w + 1):
                quarters = {(r + dr, c + dc, q) for r, c, q in image}
                near_q, edges = _surroundings(quarters)
                out.append((tuple(G.words(quarters)), tuple(G.words(near_q)),
                            (orientation, colour, dr, dc, len(image), edges)))  # fmt: skip
    return tuple(out)


@functools.lru_cache(maxsize=1)
def _fountain_placements() -> tuple:
    """The fountain's 4 halves on every square, as _shape_placements lists a tile's."""
    out = []
    for square in range(K.N_SQUARES):
        r, c = divmod(square, K.SIZE)
        for index, half in enumerate(K.HALF_NAMES):
            nibble = K.HALVES[half]
            quarters = {(r, c, q) for q in range(4) if nibble >> q & 1}
            near_q, edges = _surroundings(quarters)
            placement = (index, K.FOUNTAIN, r, c, 2, edges)
            out.append((tuple(G.words(quarters)), tuple(G.words(near_q)), placement))
    return tuple(out)


def _surroundings(quarters: set) -> tuple[set, int]:
    """Quarters outside the piece sharing an edge with it, and its edges on the border."""
    near = set()
    edges = 0
    for quarter in quarters:
        for r, c, q in G.neighbours(*quarter):
            if not (0 <= r < K.SIZE and 0 <= c < K.SIZE):
                edges += 1
            elif (r, c, q) not in quarters:
                near.add((r, c, q))
    return near, edges


def validate(data: dict, source: str) -> list[str]:
    """Every problem of a parsed tile set, one message each (empty: valid)."""
    problems: list[str] = []
    _read(data, source, problems)
    return problems


def compile_tileset(data: dict, source: str, digest: str = "", raw: bytes = b""):
    """Compile a parsed tile set into :class:`GameData` (``source``: the file as shown to
    users; ``raw``: its bytes, a run folder's copy); CatalogError lists all problems."""
    problems: list[str] = []
    if _depth(data, MAX_DEPTH) > MAX_DEPTH:
        raise CatalogError([f"{source}: nested deeper than {MAX_DEPTH} levels; not a tile set"])
    parts = _read(data, source, problems)
    if problems:
        raise CatalogError(problems)
    header, tiles, boards = parts["header"], parts["tiles"], parts["boards"]
    shapes = [shape for _, shape, _, _ in tiles]
    place_mask, place_meta, place_near, tile_first = _placements(shapes)
    start_mask = np.array([G.words(start) for _, _, start, _, _ in boards], dtype=object).astype(
        np.uint64
    )
    content = TileSet(
        name=header["name"],
        reconstructed=bool(header["reconstructed"]),
        description=header["description"] or "",
        tile_names=tuple(name for name, _, _, _ in tiles),
        shapes=tuple(shapes),
        similar_to=tuple(similar for _, _, similar, _ in tiles),
        boards=tuple(
            Board(name, tuple(f["square"]), tuple(f["triangle"]), start, witness)
            for name, f, start, witness, _ in boards
        ),
        placement_counts=tuple(int(n) for n in np.diff(tile_first)),
        source=source,
        raw=raw,
    )
    return GameData(
        name=content.name,
        source=source,
        digest=digest,
        raw=raw,
        reconstructed=content.reconstructed,
        arrays=(place_mask, place_meta, place_near, tile_first, start_mask),
        snapshot_name=SNAPSHOT_NAME,
        content=content,
    )


def read_toml(path: Path, source: str) -> tuple[dict, str, bytes]:
    """Parse a tile-set file no larger than MAX_FILE_BYTES: (data, sha256, bytes); one clear
    line for any failure (``sim.core.errors.read_toml_input``)."""
    data, content = read_toml_input(path, "tile-set file", MAX_FILE_BYTES, source)
    check_kind(data, "tileset", source)
    return data, hashlib.sha256(content).hexdigest(), content


# Tile sets compiled so far (the placements search takes about 65 ms; one neom balance reads a
# handful of sets about 20 times), by their bytes' digest.
_COMPILED = KeptByDigest()


def _compiled(path: Path, source: str) -> GameData:
    """The compiled tile set of ``path``'s bytes (kept in _COMPILED when seen before), named
    ``source``, with arrays of its own (as a fresh compile gives every caller)."""
    compiled, _ = _COMPILED.take(path, "tile-set file", MAX_FILE_BYTES, source)
    if compiled is None:
        data, digest, raw = read_toml(path, source)
        compiled = compile_tileset(data, source, digest, raw)
    _COMPILED.put(compiled.digest, compiled)
    content = replace(compiled.content, source=source)
    arrays = tuple(array.copy() for array in compiled.arrays)
    return replace(compiled, source=source, arrays=arrays, content=content)


def load_tileset(path: str | Path | None = None) -> GameData:
    """Read, validate and compile a tile-set file (None: the packaged default)."""
    path = DEFAULT_TILESET if path is None else Path(path)
    source = path.name if path == DEFAULT_TILESET else str(path)
    loaded = _compiled(path, source)
    if path != DEFAULT_TILESET and not loaded.reconstructed:
        default = load_tileset()
        if same_arrays(loaded.arrays, default.arrays):
            # reconstructed = false on the shipped reconstruction does not make it the
            # published game's tiles.
            name = f"{loaded.name} ({COPY_NOTE})"
            content = replace(loaded.content, name=name, reconstructed=True)
            loaded = replace(loaded, name=name, reconstructed=True, content=content)
    return loaded


def tileset_warnings(game_data: GameData) -> list[str]:
    """Legal but suspicious designs: an area that cannot fill the board exactly (the planning
    bonus needs every square built: facts file, "inferred"), a board without a witness."""
    ts: TileSet = game_data.content
    source = ts.source
    warnings = []
    area = sum(len(s) for s in ts.shapes)
    need = K.N_QUARTERS - K.START_AREA_QUARTERS - K.N_FOUNTAINS * K.FOUNTAIN_QUARTERS
    if area < need:
        warnings.append(
            f"{source}: the tiles cover {area / 4:g} squares, less than the {need / 4:g} the "
            "board needs besides the start piece and 6 fountains: the planning bonus is "
            "unreachable"
        )
    elif area > need:
        warnings.append(
            f"{source}: the tiles cover {area / 4:g} squares, more than the {need / 4:g} left "
            "besides the start piece and 6 fountains: a full board needs declined tiles"
        )
    for board in ts.boards:
        if not board.witness:
            warnings.append(
                f'{source}: board "{board.name}": no witness; nothing shows that this board '
                "can be fully built (neom tileset witness finds one)"
            )
    return warnings


def fill_problem(tileset: TileSet) -> str:
    """Why no witness can exist for this tile set's area ("" if one may): a witness places every
    tile once and 0 to 6 fountains (half a square each) around the start piece, so the tiles
    must cover the rest of the board less a whole number of fountain halves. Checked before
    any search, which would otherwise look for minutes before giving up."""
    area = sum(len(shape) for shape in tileset.shapes)
    free = K.N_QUARTERS - K.START_AREA_QUARTERS
    least = free - K.N_FOUNTAINS * K.FOUNTAIN_QUARTERS
    if least <= area <= free and (free - area) % K.FOUNTAIN_QUARTERS == 0:
        return ""
    return (
        f"{tileset.source}: the tiles cover {area / 4:g} squares, but with the start piece "
        f"({K.START_AREA_QUARTERS / 4:g} squares) and 0 to {K.N_FOUNTAINS} fountains (half a "
        f"square each) they cannot fill the {K.SIZE}x{K.SIZE} board, which takes "
        f"{least / 4:g} to {free / 4:g} squares of tiles: no witness tiling exists, so none is "
        "searched for"
    )


def template() -> str:
    return TEMPLATE.read_text(encoding="utf-8")


# --- a tile's area as a number (neom balance --game tangram TILE) --------------------------------

# The area lever's upper bound, in halves: a quarter of the board (12 squares). A tile larger
# than that is no longer a piece of a tangram-like set but a second board.
MAX_TILE_HALVES = 24
QUARTERS_PER_HALF = 2
BEAM = 8  # shapes kept per area on the walk from a tile's own shape


def halves(shape: frozenset) -> int:
    """A shape's area in half-squares (the area lever's unit)."""
    return len(shape) // QUARTERS_PER_HALF


def _open_edges(shape: frozenset) -> int:
    """Quarter edges of the shape that face no quarter of it: its outline, for compactness."""
    return sum(1 for quarter in shape for n in G.neighbours(*quarter) if n not in shape)


def _one_half_more(shape: frozenset):
    """Every shape of one more half: a half on an empty square beside the shape (the board's
    squares around its box), or a half square completed."""
    cells = G.squares(shape)
    for r in range(-1, G.height(shape) + 1):
        for c in range(-1, G.width(shape) + 1):
            nibble = cells.get((r, c), 0)
            if nibble == K.FULL:
                continue
            added = [K.FULL ^ nibble] if nibble else list(K.HALVES.values())
            for more in added:
                yield G.normalize(shape | {(r, c, q) for q in range(4) if more >> q & 1})


def _one_half_less(shape: frozenset):
    """Every shape of one less half: a full square cut to one of its halves, or a half
    square taken away."""
    for (r, c), nibble in G.squares(shape).items():
        removed = list(K.HALVES.values()) if nibble == K.FULL else [nibble]
        for less in removed:
            yield G.normalize(shape - {(r, c, q) for q in range(4) if less >> q & 1})


def _fits(shape: frozenset) -> bool:
    return bool(shape) and G.height(shape) <= K.SIZE and G.width(shape) <= K.SIZE


def _ranked(shapes) -> list[tuple[tuple, frozenset]]:
    """(canonical form, shape) of each distinct tile among ``shapes`` (connected, within the
    board), the most compact first: the shortest outline, then the smallest box, then the
    first canonical form (so every choice is reproducible)."""
    kept = {}
    for shape in set(shapes):
        if _fits(shape) and G.connected(shape):
            kept.setdefault(G.canonical(shape), shape)
    key = {c: (_open_edges(s), G.height(s) * G.width(s), c) for c, s in kept.items()}
    return sorted(kept.items(), key=lambda item: key[item[0]])


def resized_shapes(shapes: tuple, tile: int, low: int = 1, high: int = MAX_TILE_HALVES) -> dict:
    """Tile ``tile`` of ``shapes`` at every area its card allows: area in halves -> shape,
    from its own area down towards ``low`` and up towards ``high``, one half at a time. Each
    step keeps the :data:`BEAM` most compact shapes one half larger (or smaller) than the last
    step's, whether or not another tile has them, and offers the most compact that is no other
    tile's shape (up to rotation and flip), else the most compact such shape with one half of
    those moved. An area where none is left (every shape of it near the tile is another card's:
    a set that has every tile of 1.5 squares) ends the walk on that side, so the areas offered
    are one unbroken range."""
    taken = {G.canonical(s) for t, s in enumerate(shapes) if t != tile}
    own = shapes[tile]
    out = {halves(own): own}
    for step, bound in ((-1, low), (+1, high)):
        change = _one_half_more if step > 0 else _one_half_less
        beam, area = [own], halves(own)
        while (area - bound) * step < 0:
            ranked = _ranked(s for shape in beam for s in change(shape))
            offered = next((s for c, s in ranked if c not in taken), None)
            beam = [s for _, s in ranked[:BEAM]]
            if offered is None:
                moved = (
                    m for s in beam for less in _one_half_less(s) for m in _one_half_more(less)
                )
                offered = next((s for c, s in _ranked(moved) if c not in taken), None)
            if offered is None:
                break
            area += step
            out[area] = offered
    return out


def with_tile_shape(text: str, tile: str, shape: frozenset) -> str:
    """A tile-set file's text with tile ``tile``'s shape redrawn (every other entry and the
    comments kept); the boards' witnesses are dropped, since they tile the board with the old
    shape (a tile set without them is valid, with a warning)."""
    import tomlkit

    doc = tomlkit.parse(text)
    for entry in doc["tiles"]:
        if entry["name"] == tile:
            entry["shape"] = G.render(shape)
    for board in doc["boards"]:
        board.pop("witness", None)
    return tomlkit.dumps(doc)
