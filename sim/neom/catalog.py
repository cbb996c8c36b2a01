"""Catalogue files: read, validate and compile a tile set into :class:`sim.tables.Tables`.

A catalogue is a TOML file (format: docs/catalog.md, skeleton: sim/neom/data/template.toml).
One pass over it both checks every field and fills the compiled rows, so the checks and the compiler
cannot drift apart; any problem makes the whole file invalid and every problem is reported,
each naming the file, the tile (or good, board, deck) and the field.
"""

import hashlib
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from sim.core.errors import CatalogError, KeptByDigest, read_toml_input
from sim.core.fields import (
    check_kind,
    check_name,
    describe,
    duplicate_names,
    lookalike_key,
    name_problem,
    read_fields,
    read_header,
    shown_name,
    suggest,
    table_array,
)
from sim.core.game import COPY_NOTE, same_arrays
from sim.neom import constants as K
from sim.neom.tables import Tables

DEFAULT_CATALOG = Path(__file__).parent / "data" / "default_catalog.toml"
# Every shipped catalogue by the name --catalog accepts instead of a path: the default and the
# earlier defaults kept for reproducing earlier runs (docs/reconstruction.md, "Versions").
SHIPPED_CATALOGS = {
    "default": DEFAULT_CATALOG,
    "reconstruction_v1": DEFAULT_CATALOG.parent / "catalog_reconstruction_v1.toml",
    "reconstruction_v2": DEFAULT_CATALOG.parent / "catalog_reconstruction_v2.toml",
}
TEMPLATE = Path(__file__).parent / "data" / "template.toml"
RECONSTRUCTED_BANNER = "RECONSTRUCTED tile set — not the published NEOM catalogue"

# Bounds that keep every game total far inside int32 (the compiled scorer's and the stored
# tables' type); docs/catalog.md "Bounds" derives them. Every whole number of the file (VP,
# costs, income, coins, effect amounts) is 0..MAX_AMOUNT; a file has at most MAX_TILES tiles
# (tile ids are int16 in cities and tables) and MAX_BOARDS boards (the board column is int8).
MAX_AMOUNT = 1000
MAX_TILES = 1000
MAX_BOARDS = 100
MAX_CATALOG_BYTES = 1_000_000  # the default catalogue is 31 kB; checked before reading
MIN_CORNERSTONES = 20  # 5 players x 4 cornerstones in the preliminary draft
MIN_BOARDS = 5  # one City board per player
MAX_TYPES = 2
MAX_ALTERNATIVES = K.MAX_REQ_OPTIONS - 1
# Each generation deck is dealt out exactly: 3 hands of 8 from the 1+ tiles, one more hand of 8
# for each of the 4th and 5th players.
ICON_COUNTS = {1: 24, 4: 8, 5: 8}
ICON_NEED = {1: "3 hands of 8", 4: "the 4th player's hand of 8", 5: "the 5th player's hand of 8"}
# The printed order of the Disasters: one per generation.
GENERATION_DISASTER = {K.DECK_GEN1: K.DIS_FLOOD, K.DECK_GEN2: K.DIS_FIRE, K.DECK_GEN3: K.DIS_CRIME}
DECK_LABELS = {code: name for name, code in K.DECK_NAMES.items()} | {K.DECK_CENTER: "center"}
DISASTER_LABELS = {code: name for name, code in K.DISASTER_NAMES.items()}
TIER_LABELS = {code: name for name, code in K.TIER_NAMES.items()}
INSURED_BITS = {name: 1 << code for name, code in K.DISASTER_NAMES.items()}

# Field specifications: field -> (kind, default); default None = required.
CATALOG_FIELDS = {
    "name": ("str", None),
    "reconstructed": ("bool", False),
    "description": ("str", ""),
}
GOOD_FIELDS = {"name": ("str", None), "tier": ("str", None), "invented": ("bool", False)}
BOARD_FIELDS = {"name": ("str", None), "good": ("str", None), "roads": ("str", None)}
TILE_FIELDS = {
    "name": ("str", None),
    "deck": ("str", None),
    "players": ("int", 0),
    "types": ("names", None),
    "roads": ("str", ""),
    "cost": ("int", 0),
    "requires": ("names", []),
    "alternatives": ("tables", []),
    "requires_tiles": ("names", []),
    "vp": ("int", 0),
    "income": ("int", 0),
    "coins_on_place": ("int", 0),
    "produces": ("names", []),
    "power": ("bool", False),
    "polluting": ("bool", False),
    "protects": ("names", []),
    "disaster": ("str", ""),
    "vp_no_disasters": ("int", 0),
    "removed_no_disasters": ("bool", False),
    "replaces": ("str", ""),
    "effects": ("tables", []),
    "known": ("names", []),
}
INLINE_TILE_FIELDS = TILE_FIELDS | {"deck": ("str", "")}
ALTERNATIVE_FIELDS = {"requires": ("names", []), "cost": ("int", 0)}
TOP_LEVEL_KEYS = ("catalog", "goods", "boards", "tiles")

# Effect parameters: name -> (kind, default, column of the effect row it fills).
EFFECT_PARAMS = {
    "types": ("names", None, 1),
    "tier": ("str", None, 1),
    "conditions": ("names", None, 1),
    "disasters": ("names", None, 1),
    "vp": ("int", None, 2),
    "coins": ("int", None, 2),
    "exclude_self": ("bool", False, 3),
}
EFFECT_KINDS = {
    "vp_per_type_in_city": ("types", "vp", "exclude_self"),
    "vp_per_type_adjacent": ("types", "vp"),
    "vp_per_good_tier": ("tier", "vp"),
    "vp_placement": ("conditions", "vp"),
    "income_per_type": ("types", "coins"),
    "coins_on_type_placed": ("types", "coins"),
    "take_discarded_cornerstone": (),
    "swap_cornerstone": (),
    "insurance": ("disasters",),
}
# The names each list parameter accepts, and the bits they compile to.
EFFECT_NAME_SETS = {
    "types": ("type", K.TYPE_NAMES),
    "conditions": ("condition", K.PLACEMENT_NAMES),
    "disasters": ("disaster", INSURED_BITS),
}
KIND_WORDS = {
    "str": "a string",
    "int": "an integer",
    "bool": "true or false",
    "names": "an array of strings",
    "tables": "an array of tables",
}


@dataclass(frozen=True)
class TileFacts:
    """What a substitute's `replaces` is checked against."""

    deck: int | None
    players: int
    disaster: bool
    removed: bool
    substitute: bool


@dataclass
class _Context:
    """What one tile's fields are checked and compiled against."""

    source: str
    good_bits: dict[str, int]
    tile_index: dict[str, int]
    facts: dict[str, TileFacts]
    inline: bool  # inline tiles of `neom score`: deck may be omitted


# --- reading values ---------------------------------------------------------------------------


def _type_problem(value, kind: str) -> str:
    """Why ``value`` is not of ``kind``, or "" if it is."""
    expected = f"expected {KIND_WORDS[kind]}, got "
    if kind == "str" and not isinstance(value, str):
        return expected + describe(value)
    if kind == "bool" and not isinstance(value, bool):
        return expected + describe(value)
    if kind == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            return expected + describe(value)
        if value < 0:
            return f"must not be negative (got {value})"
        if value > MAX_AMOUNT:
            return f"too large (got {value}, at most {MAX_AMOUNT})"
    if kind in ("names", "tables"):
        item_type = str if kind == "names" else dict
        if not isinstance(value, list):
            return expected + describe(value)
        for item in value:
            if not isinstance(item, item_type):
                return f"{expected}an array containing {describe(item)}"
    return ""


def _read_fields(raw, spec: dict, where: str, problems: list[str], noun: str = "field"):
    """:func:`sim.core.fields.read_fields` with the catalogue's field kinds."""
    return read_fields(raw, spec, where, problems, _type_problem, noun)


def _mask(names, valid: dict[str, int], what: str, at: str, problems: list[str]) -> int:
    """OR of the bits of ``names``; reports unknown and repeated names."""
    mask = 0
    seen = set()
    for name in names:
        if name in seen:
            problems.append(f'{at}: {what} "{name}" listed twice')
            continue
        seen.add(name)
        if name not in valid:
            hint = suggest(name, valid, list_all=len(valid) <= 10)
            problems.append(f'{at}: unknown {what} "{name}"{hint}')
            continue
        mask |= valid[name]
    return mask


def _tier(name: str, at: str, problems: list[str]) -> int:
    if name not in K.TIER_NAMES:
        problems.append(f'{at}: unknown tier "{name}"{suggest(name, K.TIER_NAMES)}')
        return K.TIER_RAW
    return K.TIER_NAMES[name]


def _roads(text: str, at: str, problems: list[str]) -> int:
    mask = 0
    for letter in text:
        bit = K.ROAD_LETTERS.get(letter, 0)
        if not bit:
            problems.append(f'{at}: "{text}" has "{letter}"; use the letters N, E, S, W')
            return 0
        if mask & bit:
            problems.append(f'{at}: "{text}" repeats "{letter}"; each road letter at most once')
            return 0
        mask |= bit
    return mask


def _names_of(mask: int, bits: dict[str, int]) -> list[str]:
    return [name for name, bit in bits.items() if mask & bit]


def _roads_text(mask: int) -> str:
    return "".join(_names_of(mask, K.ROAD_LETTERS))


def _good_bits(good_names) -> dict[str, int]:
    bits = {}
    for index, name in enumerate(good_names):
        bits.setdefault(name, 1 << index)
    return bits


def _label(kind: str, raw, position: int) -> str:
    name = raw.get("name") if isinstance(raw, dict) else None
    if isinstance(name, str) and name_problem(name) == "":
        return f'{kind} "{name}"'
    if isinstance(name, str) and name.strip():  # named, but not usably: show it, escaped
        return f"{kind} #{position + 1} ({shown_name(name)})"
    return f"{kind} #{position + 1} (no name)"


# --- one tile ---------------------------------------------------------------------------------


def _new_tile_row() -> np.ndarray:
    row = np.zeros(K.N_TILE_COLS, dtype=np.int32)
    row[K.C_PREREQ0 : K.C_PREREQ0 + K.MAX_PREREQS] = -1
    row[K.C_REPLACES] = -1
    row[K.C_N_REQ_OPTIONS] = 1
    return row


def _facts(fields) -> TileFacts:
    deck = K.DECK_NAMES.get(fields["deck"]) if fields["deck"] else None
    types = fields["types"] or []
    return TileFacts(
        deck=K.DECK_NONE if fields["deck"] == "" else deck,
        players=fields["players"] or 0,
        disaster="disaster" in types,
        removed=bool(fields["removed_no_disasters"]),
        substitute=bool(fields["replaces"]),
    )


def _effect_row(raw, at: str, problems: list[str]) -> np.ndarray:
    row = np.zeros(4, dtype=np.int32)
    if not isinstance(raw, dict):
        problems.append(f"{at}: expected a table, got {describe(raw)}")
        return row
    kind = raw.get("kind")
    if kind is None:
        problems.append(f'{at}: parameter "kind": missing (valid: {", ".join(EFFECT_KINDS)})')
        return row
    if kind not in EFFECT_KINDS:
        shown = f'"{kind}"' if isinstance(kind, str) else describe(kind)
        problems.append(f"{at}: unknown kind {shown} (valid: {', '.join(EFFECT_KINDS)})")
        return row
    at = f"{at} ({kind})"
    spec = {name: EFFECT_PARAMS[name] for name in EFFECT_KINDS[kind]}
    params = _read_fields(
        {key: value for key, value in raw.items() if key != "kind"}, spec, at, problems, "parameter"
    )
    row[0] = K.EFFECT_NAMES[kind]
    for name, value in params.items():
        if value is None:
            continue
        param_at = f'{at}: parameter "{name}"'
        if name in EFFECT_NAME_SETS:
            what, bits = EFFECT_NAME_SETS[name]
            if not value:
                problems.append(f"{param_at}: empty; list at least one {what}")
            value = _mask(value, bits, what, param_at, problems)
        elif name == "tier":
            value = _tier(value, param_at, problems)
        row[EFFECT_PARAMS[name][2]] = int(value)
    return row


def _tile_rows(raw, fields: dict, name, ctx: _Context, where: str, problems: list[str]):
    """Check one tile's values and compile them: (tile row, requirement options, effect rows)."""
    row = _new_tile_row()
    req = np.zeros((K.MAX_REQ_OPTIONS, 2), dtype=np.int32)
    effects = np.zeros((K.MAX_EFFECTS, 4), dtype=np.int32)

    def at(field: str) -> str:
        return f'{where}: field "{field}"'

    deck = None
    if fields["deck"] == "" and ctx.inline:
        deck = K.DECK_NONE
    elif fields["deck"] is not None:
        deck = K.DECK_NAMES.get(fields["deck"])
        if deck is None:
            hint = suggest(fields["deck"], K.DECK_NAMES)
            problems.append(f'{at("deck")}: unknown deck "{fields["deck"]}"{hint}')
    row[K.C_DECK] = K.DECK_NONE if deck is None else deck
    generation = deck in GENERATION_DISASTER

    if "players" in raw and fields["players"] is not None:
        if deck == K.DECK_CORNERSTONE:
            problems.append(f"{at('players')}: cornerstones have no players icon")
        elif fields["players"] not in ICON_COUNTS:
            problems.append(
                f"{at('players')}: {fields['players']} is not a players icon (valid: 1, 4, 5)"
            )
        else:
            row[K.C_PLAYERS] = fields["players"]
    elif generation and "players" not in raw:
        problems.append(
            f"{at('players')}: missing; generation tiles need a players icon: 1, 4 or 5"
        )

    types = fields["types"]
    if types is not None:
        if not 1 <= len(types) <= MAX_TYPES:
            problems.append(f"{at('types')}: {len(types)} types; a tile has 1 or {MAX_TYPES}")
        row[K.C_TYPES] = _mask(types, K.TYPE_NAMES, "type", at("types"), problems)
        if "disaster" in types and len(set(types)) > 1:
            problems.append(f'{at("types")}: "disaster" cannot be combined with another type')
    is_disaster = bool(row[K.C_TYPES] & K.T_DISASTER)
    if is_disaster and deck == K.DECK_CORNERSTONE:
        problems.append(f"{at('types')}: cornerstones are never disasters")

    if fields["roads"] is not None:
        if fields["roads"] == "" and not is_disaster:
            problems.append(f"{at('roads')}: empty; only Disaster tiles may have no roads")
        row[K.C_ROADS] = _roads(fields["roads"], at("roads"), problems)

    for field, column in (
        ("vp", K.C_VP),
        ("income", K.C_INCOME),
        ("coins_on_place", K.C_COINS_ON_PLACE),
        ("vp_no_disasters", K.C_VP_NO_DISASTERS),
        ("power", K.C_POWER),
        ("polluting", K.C_POLLUTING),
        ("removed_no_disasters", K.C_REMOVED_NO_DISASTERS),
    ):
        if fields[field] is not None:
            row[column] = int(fields[field])
    if fields["produces"] is not None:
        row[K.C_PRODUCES] = _mask(
            fields["produces"], ctx.good_bits, "good", at("produces"), problems
        )
    if fields["protects"] is not None:
        row[K.C_PROTECTS] = _mask(
            fields["protects"], K.PROTECTION_NAMES, "protection", at("protects"), problems
        )

    kind = fields["disaster"]
    if is_disaster and kind is not None:
        if kind == "":
            problems.append(
                f"{at('disaster')}: missing; a Disaster tile names flood, fire or crime"
            )
        elif kind not in K.DISASTER_NAMES:
            problems.append(
                f'{at("disaster")}: unknown disaster "{kind}" (valid: flood, fire, crime)'
            )
        else:
            row[K.C_DISASTER] = K.DISASTER_NAMES[kind]
            printed = GENERATION_DISASTER.get(deck, row[K.C_DISASTER])
            if printed != row[K.C_DISASTER]:
                problems.append(
                    f'{at("disaster")}: "{kind}" in deck "{fields["deck"]}", whose Disaster is '
                    f'"{DISASTER_LABELS[printed]}" (printed order: gen1 flood, gen2 fire, '
                    "gen3 crime)"
                )
        if generation and row[K.C_PLAYERS] not in (0, 1):
            problems.append(f"{at('players')}: a Disaster tile is dealt in every game: players = 1")
        if fields["removed_no_disasters"]:
            problems.append(
                f"{at('removed_no_disasters')}: a Disaster is replaced by its substitute in the "
                "variants, not removed"
            )
    elif kind:
        problems.append(f"{at('disaster')}: only Disaster tiles have a disaster kind")

    # Requirement option 0 is the printed one; further options are its alternatives.
    options = [(fields["requires"], fields["cost"], where)]
    alternatives = fields["alternatives"] or []
    if len(alternatives) > MAX_ALTERNATIVES:
        problems.append(
            f"{at('alternatives')}: {len(alternatives)} alternatives, at most {MAX_ALTERNATIVES}"
        )
    for number, alternative in enumerate(alternatives[:MAX_ALTERNATIVES], start=1):
        alt_where = f"{at('alternatives')}: alternative {number}"
        values = _read_fields(alternative, ALTERNATIVE_FIELDS, alt_where, problems)
        if values is not None:
            options.append((values["requires"], values["cost"], alt_where))
    row[K.C_N_REQ_OPTIONS] = len(options)
    for option, (goods, cost, option_where) in enumerate(options):
        if goods is not None:
            option_at = f'{option_where}: field "requires"'
            req[option, K.R_GOODS] = _mask(goods, ctx.good_bits, "good", option_at, problems)
        req[option, K.R_COST] = cost or 0

    prerequisites = fields["requires_tiles"] or []
    if len(prerequisites) > K.MAX_PREREQS:
        problems.append(
            f"{at('requires_tiles')}: {len(prerequisites)} tiles, at most {K.MAX_PREREQS}"
        )
    for slot, prerequisite in enumerate(prerequisites[: K.MAX_PREREQS]):
        if prerequisite == name:
            problems.append(f"{at('requires_tiles')}: names the tile itself")
        elif prerequisite in prerequisites[:slot]:
            problems.append(f'{at("requires_tiles")}: tile "{prerequisite}" listed twice')
        elif prerequisite not in ctx.tile_index:
            hint = suggest(prerequisite, ctx.tile_index, list_all=False)
            problems.append(f'{at("requires_tiles")}: unknown tile "{prerequisite}"{hint}')
        else:
            row[K.C_PREREQ0 + slot] = ctx.tile_index[prerequisite]

    target = fields["replaces"]
    if target:
        _check_substitute(target, name, deck, row, ctx, at("replaces"), problems)

    for entry in fields["known"] or []:
        why = known_problem(entry, fields)
        if why:
            problems.append(f'{at("known")}: "{entry}": {why}')

    effect_list = fields["effects"] or []
    if len(effect_list) > K.MAX_EFFECTS:
        problems.append(f"{at('effects')}: {len(effect_list)} effects, at most {K.MAX_EFFECTS}")
    for slot, effect in enumerate(effect_list[: K.MAX_EFFECTS]):
        effects[slot] = _effect_row(effect, f"{at('effects')}: effect {slot + 1}", problems)
    return row, req, effects


# `known`: numbers of a tile known from the published game (or bounds they are known to obey),
# which a balance search never moves past: "alternatives[0].cost" (fixed), "income >= 1",
# "vp <= 8", or a whole group: "effects", "alternatives", "requires" (the goods required),
# "requires_tiles". The engine does not read it.
KNOWN_NUMBERS = ("vp", "cost", "income", "coins_on_place", "vp_no_disasters")
KNOWN_LISTS = ("requires", "requires_tiles", "effects", "alternatives")
_KNOWN = re.compile(
    r"^\s*(?:(effects|alternatives)\[(\d+)\]\.([a-z_]+)|([a-z_]+))\s*(?:(>=|<=)\s*(\d+))?\s*$"
)


def parse_known(entry: str):
    """(path, operator, bound) of a `known` entry ("income >= 1" -> ("income", ">=", 1); a fixed
    number or group has operator ""), or None if it is not one."""
    match = _KNOWN.match(entry)
    if match is None:
        return None
    listing, index, key, plain, op, bound = match.groups()
    path = f"{listing}[{index}].{key}" if listing else plain
    return path, op or "", int(bound) if bound is not None else None


def known_problem(entry, fields: dict) -> str:
    """Why a `known` entry does not name a number or group of the tile ("" if it does)."""
    parsed = parse_known(entry) if isinstance(entry, str) else None
    if parsed is None:
        return (
            "expected a field (vp, cost, income, coins_on_place, vp_no_disasters, requires, "
            "requires_tiles, effects, alternatives, effects[i].vp, alternatives[i].cost), "
            'optionally with ">= N" or "<= N"'
        )
    path, op, _ = parsed
    if path in KNOWN_LISTS:
        return "a bound needs one number, not a list" if op else ""
    if "[" not in path:
        return "" if path in KNOWN_NUMBERS else f"{path} is not a number of a tile"
    listing = path.split("[")[0]
    index = int(path.split("[")[1].split("]")[0])
    key = path.split(".")[-1]
    items = fields.get(listing) or []
    if index >= len(items):
        return f"the tile has {len(items)} {listing}"
    item = items[index] if isinstance(items[index], dict) else {}
    wanted = ("cost",) if listing == "alternatives" else ("vp", "coins")
    if key not in wanted or (listing == "effects" and key not in item):
        return f"{listing}[{index}] has no number {key}"
    return ""


def _check_substitute(target, name, deck, row, ctx: _Context, at: str, problems: list[str]):
    if target == name:
        problems.append(f"{at}: names the tile itself")
        return
    if target not in ctx.facts:
        problems.append(f'{at}: unknown tile "{target}"{suggest(target, ctx.facts, False)}')
        return
    replaced = ctx.facts[target]
    if row[K.C_TYPES] & K.T_DISASTER:
        problems.append(f"{at}: a Disaster cannot be a substitute")
    if row[K.C_REMOVED_NO_DISASTERS]:
        problems.append(f"{at}: a substitute cannot itself be removed_no_disasters")
    if replaced.substitute:
        problems.append(f'{at}: "{target}" is itself a substitute')
    elif not (replaced.disaster or replaced.removed):
        problems.append(
            f'{at}: "{target}" is neither a Disaster nor removed_no_disasters, so no variant '
            "takes it out"
        )
    elif replaced.deck != deck or replaced.players != row[K.C_PLAYERS]:
        problems.append(
            f'{at}: "{target}" is in deck "{DECK_LABELS.get(replaced.deck, "?")}" with players '
            f"{replaced.players}; a substitute must have the same deck and players icon"
        )
    else:
        row[K.C_REPLACES] = ctx.tile_index[target]


def _unplaceable(tiles, req, wheres, good_names, problems: list[str]) -> None:
    """A requirement no tile or board can ever supply is a mistake, not a design."""
    produced = int(np.bitwise_or.reduce(tiles[:, K.C_PRODUCES])) if len(tiles) else 0
    for index, where in wheres:
        for option in range(tiles[index, K.C_N_REQ_OPTIONS]):
            missing = int(req[index, option, K.R_GOODS]) & ~produced
            field = 'field "requires"'
            if option:
                field = f'field "alternatives": alternative {option}: field "requires"'
            for bit, good in enumerate(good_names):
                if missing & (1 << bit):
                    problems.append(
                        f'{where}: {field}: good "{good}" is produced by no tile or '
                        "board, so the tile can never be placed this way"
                    )


# Generation in which a tile is dealt (cornerstones: any; City Centers: from the start).
DECK_GENERATION = {K.DECK_GEN1: 1, K.DECK_GEN2: 2, K.DECK_GEN3: 3}
LAST_GENERATION = 3
NEVER = LAST_GENERATION + 1


def _prerequisites(tiles, index: int) -> list[int]:
    slots = tiles[index, K.C_PREREQ0 : K.C_PREREQ0 + K.MAX_PREREQS]
    return [int(p) for p in slots if p >= 0]


def _cycles(tiles, n_file_tiles: int) -> list[list[int]]:
    """Each cycle of ``requires_tiles`` once, as its tiles in order from its first in file order
    (iterative depth-first search: a catalogue may chain a thousand tiles)."""
    state = [0] * n_file_tiles  # 0 unseen, 1 on the current path, 2 done
    cycles = []
    for root in range(n_file_tiles):
        if state[root]:
            continue
        path, stack = [], [(root, iter(_prerequisites(tiles, root)))]
        state[root] = 1
        path.append(root)
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                state[node] = 2
            elif child < n_file_tiles and state[child] == 1:
                cycle = path[path.index(child) :]
                start = cycle.index(min(cycle))
                cycles.append(cycle[start:] + cycle[:start])
            elif child < n_file_tiles and state[child] == 0:
                state[child] = 1
                path.append(child)
                stack.append((child, iter(_prerequisites(tiles, child))))
    return cycles


def _earliest_generations(tiles, req, n_file_tiles: int, blocked: set[int]) -> list[int]:
    """The first generation each tile can be in some city (NEVER: no game ever places it), with
    every tile dealt (5 players): a generation tile in its own generation, a cornerstone in the
    first generation its requirements allow, a City Center from the start; Disasters and the
    tiles of ``blocked`` (cycles) never. A requirement is met when every good it names is
    produced by another tile already placeable (goods are bought from any city) and every
    prerequisite tile is placeable by then."""
    n = tiles.shape[0]
    earliest = [NEVER] * n
    for index in range(n_file_tiles, n):
        earliest[index] = 0  # City Centers
    candidates = [
        index
        for index in range(n_file_tiles)
        if index not in blocked and not tiles[index, K.C_TYPES] & K.T_DISASTER
    ]
    # Prerequisites first, so that a chain of them resolves in one pass (goods need at most one
    # more pass per good).
    order, seen = [], set()
    for root in candidates:
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
            elif node not in seen:
                seen.add(node)
                stack.append((node, True))
                stack.extend((p, False) for p in _prerequisites(tiles, node) if p not in seen)
    wanted = set(candidates)
    order = [index for index in order if index in wanted]
    produces = [int(p) for p in tiles[:, K.C_PRODUCES]]
    for generation in range(1, LAST_GENERATION + 1):
        available = 0  # goods produced by tiles placeable by this generation
        for index in range(n):
            if earliest[index] <= generation:
                available |= produces[index]
        changed = True
        while changed:
            changed = False
            for index in order:
                if earliest[index] <= generation:
                    continue
                dealt = DECK_GENERATION.get(int(tiles[index, K.C_DECK]), generation)
                if dealt != generation:
                    continue
                if any(
                    _option_met(tiles, req, index, option, available, earliest, generation)
                    for option in range(tiles[index, K.C_N_REQ_OPTIONS])
                ):
                    earliest[index] = generation
                    if produces[index] & ~available:
                        available |= produces[index]
                        changed = True
    return earliest


def _option_met(tiles, req, index, option, available, earliest, generation) -> bool:
    goods = int(req[index, option, K.R_GOODS])
    if goods & ~available:
        return False
    return all(earliest[p] <= generation for p in _prerequisites(tiles, index))


def _unreachable(tiles, req, wheres, tile_names, good_names, problems: list[str]) -> None:
    """Cycles of ``requires_tiles``, and requirements no source of the same or an earlier
    generation can supply: a good only later tiles, Disasters (never placed) or unplaceable
    tiles produce, a prerequisite tile of a later generation, a Disaster or itself
    unplaceable. Goods produced by nothing at all are ``_unplaceable``'s."""
    n_file_tiles = len(wheres)
    cycles = _cycles(tiles, n_file_tiles)
    blocked = {index for cycle in cycles for index in cycle}
    for cycle in cycles:
        chain = " -> ".join(f'"{tile_names[i]}"' for i in [*cycle, cycle[0]])
        problems.append(
            f'{wheres[cycle[0]]}: field "requires_tiles": circular ({chain}), so none of these '
            "tiles can ever be placed"
        )
    earliest = _earliest_generations(tiles, req, n_file_tiles, blocked)
    produced_at_all = int(np.bitwise_or.reduce(tiles[:, K.C_PRODUCES])) if len(tiles) else 0
    for index in range(n_file_tiles):
        if index in blocked or tiles[index, K.C_TYPES] & K.T_DISASTER:
            continue
        deck = int(tiles[index, K.C_DECK])
        generation = DECK_GENERATION.get(deck, LAST_GENERATION)
        where = wheres[index]
        # Goods of the tiles placeable by then, the tile itself left out.
        available = 0
        for other in range(tiles.shape[0]):
            if other != index and earliest[other] <= generation:
                available |= int(tiles[other, K.C_PRODUCES])
        for option in range(tiles[index, K.C_N_REQ_OPTIONS]):
            field = 'field "requires"'
            if option:
                field = f'field "alternatives": alternative {option}: field "requires"'
            missing = int(req[index, option, K.R_GOODS]) & ~available & produced_at_all
            for bit, good in enumerate(good_names):
                if missing & (1 << bit):
                    problems.append(
                        f'{where}: {field}: good "{good}" is produced only by '
                        f"{_producers(tiles, bit, index, tile_names)}, which no city can have "
                        f"by generation {generation}, so the tile can never be placed this way"
                    )
        for prerequisite in _prerequisites(tiles, index):
            if prerequisite in blocked or earliest[prerequisite] <= generation:
                continue
            name = tile_names[prerequisite]
            if tiles[prerequisite, K.C_TYPES] & K.T_DISASTER:
                why = "is a Disaster, never placed"
            elif earliest[prerequisite] == NEVER:
                why = "can itself never be placed"
            else:
                why = (
                    f"is in a city only from generation {earliest[prerequisite]}, after this "
                    f"tile's generation {generation}"
                )
            problems.append(
                f'{where}: field "requires_tiles": tile "{name}" {why}, so this tile can never '
                "be placed"
            )


def _producers(tiles, bit: int, index: int, tile_names) -> str:
    """The tiles producing good ``bit`` (other than tile ``index``), named for a message."""
    names = [
        f'"{tile_names[other]}"'
        + (" (a Disaster, never placed)" if tiles[other, K.C_TYPES] & K.T_DISASTER else "")
        for other in range(len(tile_names))
        if other != index and int(tiles[other, K.C_PRODUCES]) >> bit & 1
    ]
    if not names:
        return "this tile"
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _read_tiles(raw_tiles, spec, source: str, problems: list[str]):
    """Fields, names and labels of each tile, before their values are checked."""
    read = []
    for position, raw in enumerate(raw_tiles):
        where = f"{source}: {_label('tile', raw, position)}"
        fields = _read_fields(raw, spec, where, problems)
        if fields is not None:
            check_name(fields, where, problems)
            read.append((raw, fields, where))
    return read


def _compile_tiles(read, ctx: _Context, problems: list[str]):
    rows, reqs, effects = [], [], []
    for raw, fields, where in read:
        row, req, eff = _tile_rows(raw, fields, fields["name"], ctx, where, problems)
        rows.append(row)
        reqs.append(req)
        effects.append(eff)
    return rows, reqs, effects


# --- deck rules -------------------------------------------------------------------------------


def _check_decks(read, rows, source: str, problems: list[str]) -> None:
    standard = [(f, row) for (_, f, _), row in zip(read, rows, strict=True) if not f["replaces"]]
    for deck, disaster in GENERATION_DISASTER.items():
        deck_name = DECK_LABELS[deck]
        in_deck = [(f, row) for f, row in standard if row[K.C_DECK] == deck]
        for icon, need in ICON_COUNTS.items():
            count = sum(1 for _, row in in_deck if row[K.C_PLAYERS] == icon)
            if count != need:
                problems.append(
                    f'{source}: deck "{deck_name}": {icon}+ tiles: {count}, need {need} for '
                    f"{ICON_NEED[icon]} (substitutes not counted)"
                )
        disasters = [f["name"] for f, row in in_deck if row[K.C_TYPES] & K.T_DISASTER]
        if not disasters:
            problems.append(
                f'{source}: deck "{deck_name}": no Disaster tile; each generation has exactly one '
                f"({deck_name}: {DISASTER_LABELS[disaster]})"
            )
        elif len(disasters) > 1:
            listed = ", ".join(f'"{name}"' for name in disasters)
            problems.append(
                f'{source}: deck "{deck_name}": {len(disasters)} Disaster tiles ({listed}); '
                "each generation has exactly one"
            )
    cornerstones = sum(1 for _, row in standard if row[K.C_DECK] == K.DECK_CORNERSTONE)
    if cornerstones < MIN_CORNERSTONES:
        problems.append(
            f"{source}: {cornerstones} cornerstones (substitutes not counted), need at least "
            f"{MIN_CORNERSTONES} for a 5-player draft of 4 each"
        )
    # Every tile a variant takes out needs exactly one substitute to keep the deck dealt out.
    replaced_by = {}
    for (_, fields, _), row in zip(read, rows, strict=True):
        if row[K.C_REPLACES] >= 0:
            replaced_by.setdefault(fields["replaces"], []).append(fields["name"])
    for fields, row in standard:
        if row[K.C_TYPES] & K.T_DISASTER:
            why = "the no-disasters and random-disasters variants replace this Disaster"
        elif row[K.C_REMOVED_NO_DISASTERS]:
            why = "the no-disasters variant removes this tile"
        else:
            continue
        substitutes = replaced_by.get(fields["name"], [])
        where = f'{source}: tile "{fields["name"]}"'
        if not substitutes:
            problems.append(
                f'{where}: no substitute; {why}, so one tile needs replaces = "{fields["name"]}"'
            )
        elif len(substitutes) > 1:
            listed = ", ".join(f'"{name}"' for name in substitutes)
            problems.append(f"{where}: {len(substitutes)} substitutes ({listed}); exactly one")


# --- the whole file ---------------------------------------------------------------------------


def _read_catalog(data: dict, source: str, problems: list[str]):
    """Check the catalogue; return everything the :class:`Tables` is made of."""
    catalog = read_header(
        data, TOP_LEVEL_KEYS, "catalog", CATALOG_FIELDS, source, problems, _type_problem
    )
    check_name(catalog, f"{source}: [catalog]", problems)
    catalog = catalog or {}

    raw_goods = table_array(data, "goods", source, problems)
    goods = []
    for position, raw in enumerate(raw_goods):
        where = f"{source}: {_label('good', raw, position)}"
        fields = _read_fields(raw, GOOD_FIELDS, where, problems) or {}
        check_name(fields, where, problems)
        tier = fields.get("tier")
        tier = K.TIER_RAW if tier is None else _tier(tier, f'{where}: field "tier"', problems)
        goods.append((fields.get("name"), tier, fields.get("invented")))
    if not 1 <= len(goods) <= K.MAX_GOODS:
        problems.append(
            f"{source}: {len(goods)} goods; a catalogue has 1 to {K.MAX_GOODS} [[goods]] entries"
        )
    good_names = [name for name, _, _ in goods]
    duplicate_names(good_names, "good", source, problems, lookalikes=True)
    good_bits = _good_bits(name or "" for name in good_names[: K.MAX_GOODS])
    good_bits.pop("", None)
    good_tier = dict(zip(good_names, (tier for _, tier, _ in goods), strict=True))

    raw_boards = table_array(data, "boards", source, problems)
    boards = []
    for position, raw in enumerate(raw_boards):
        where = f"{source}: {_label('board', raw, position)}"
        fields = _read_fields(raw, BOARD_FIELDS, where, problems)
        if fields is None:
            continue
        check_name(fields, where, problems)
        good = fields["good"]
        if good is not None and good not in good_bits:
            hint = suggest(good, good_bits, list_all=False)
            problems.append(f'{where}: field "good": unknown good "{good}"{hint}')
        elif good is not None and good_tier[good] != K.TIER_RAW:
            problems.append(
                f'{where}: field "good": "{good}" is {TIER_LABELS[good_tier[good]]}; a City Center '
                "produces a raw good"
            )
        roads = 0
        if fields["roads"] == "":
            problems.append(f'{where}: field "roads": empty; roads must leave the City Center')
        elif fields["roads"] is not None:
            roads = _roads(fields["roads"], f'{where}: field "roads"', problems)
        boards.append((fields["name"], good_bits.get(good, 0), roads))
    if len(boards) < MIN_BOARDS:
        problems.append(f"{source}: {len(boards)} boards, need at least {MIN_BOARDS} [[boards]]")
    elif len(boards) > MAX_BOARDS:
        problems.append(f"{source}: {len(boards)} boards, at most {MAX_BOARDS} [[boards]]")
    board_names = [name for name, _, _ in boards]
    duplicate_names(board_names, "board", source, problems, lookalikes=True)

    raw_tiles = table_array(data, "tiles", source, problems)
    if len(raw_tiles) > MAX_TILES:
        problems.append(f"{source}: {len(raw_tiles)} tiles, at most {MAX_TILES} [[tiles]]")
    read = _read_tiles(raw_tiles, TILE_FIELDS, source, problems)
    tile_names = [fields["name"] for _, fields, _ in read]
    duplicate_names(tile_names, "tile", source, problems, lookalikes=True)
    center_names = [f"City Center ({name})" for name in board_names]
    for name in set(tile_names) & set(center_names):
        problems.append(f'{source}: tile "{name}": name taken by the City Center of a board')
    center_keys = {lookalike_key(name): name for name in center_names}
    for name in tile_names:
        center = center_keys.get(lookalike_key(name)) if name is not None else None
        if center is not None and center != name:
            problems.append(
                f'{source}: tile "{name}": looks the same as "{center}", the City Center of a '
                "board; rename it"
            )
    tile_index = {}
    for index, name in enumerate(tile_names):
        if name is not None:
            tile_index.setdefault(name, index)
    facts = {fields["name"]: _facts(fields) for _, fields, _ in reversed(read)}
    ctx = _Context(source, good_bits, tile_index, facts, inline=False)
    rows, reqs, effects = _compile_tiles(read, ctx, problems)
    _check_decks(read, rows, source, problems)

    for _, good_bit, roads in boards:
        row = _new_tile_row()
        row[K.C_DECK] = K.DECK_CENTER
        row[K.C_TYPES] = K.T_RESOURCE
        row[K.C_ROADS] = roads
        row[K.C_PRODUCES] = good_bit
        rows.append(row)
        reqs.append(np.zeros((K.MAX_REQ_OPTIONS, 2), dtype=np.int32))
        effects.append(np.zeros((K.MAX_EFFECTS, 4), dtype=np.int32))
    tiles = _stack(rows, (0, K.N_TILE_COLS))
    req = _stack(reqs, (0, K.MAX_REQ_OPTIONS, 2))
    wheres = [(index, where) for index, (_, _, where) in enumerate(read)]
    _unplaceable(tiles, req, wheres, good_names, problems)
    _unreachable(tiles, req, [where for _, _, where in read], tile_names, good_names, problems)

    n_tiles = len(read)
    return dict(
        name=catalog.get("name") or "",
        reconstructed=bool(catalog.get("reconstructed")),
        tiles=tiles,
        req=req,
        effects=_stack(effects, (0, K.MAX_EFFECTS, 4)),
        goods_tier=np.array([tier for _, tier, _ in goods], dtype=np.int32),
        board_center=np.arange(n_tiles, n_tiles + len(boards), dtype=np.int32),
        tile_names=tuple(tile_names) + tuple(center_names),
        good_names=tuple(good_names),
        board_names=tuple(board_names),
        invented_goods=tuple(bool(invented) for _, _, invented in goods),
    )


def _stack(parts: list, empty_shape: tuple) -> np.ndarray:
    if not parts:
        return np.zeros(empty_shape, dtype=np.int32)
    return np.stack(parts).astype(np.int32)


def validate(data: dict, source: str) -> list[str]:
    """Every problem of a parsed catalogue, one message each (empty: valid)."""
    problems: list[str] = []
    _read_catalog(data, source, problems)
    return problems


def compile_catalog(data: dict, source: str, digest: str = "") -> Tables:
    """Compile a parsed catalogue; raises :class:`CatalogError` listing all its problems."""
    problems: list[str] = []
    parts = _read_catalog(data, source, problems)
    if problems:
        raise CatalogError(problems)
    return Tables(source=source, digest=digest, **parts)


def load_catalog(path: str | Path | None = None) -> Tables:
    """Read, validate and compile a catalogue file (None: the packaged default catalogue)."""
    return read_catalog(path)[0]


def shipped_path(path: str | Path | None) -> Path:
    """The file ``path`` names: the default for None, a shipped catalogue for its name (a file
    of that name, if any, comes first)."""
    if path is None:
        return DEFAULT_CATALOG
    path = Path(path)
    if not path.exists() and str(path) in SHIPPED_CATALOGS:
        return SHIPPED_CATALOGS[str(path)]
    return path


# Catalogues compiled so far (the parse and compile take about 25 ms), by their bytes' digest.
_COMPILED = KeptByDigest()


def read_catalog(path: str | Path | None = None) -> tuple[Tables, bytes]:
    """The compiled catalogue and the exact bytes it was compiled from (a run folder's copy).
    ``path`` may also be a shipped catalogue's name (``SHIPPED_CATALOGS``) when no file of
    that name exists."""
    path = shipped_path(path)
    shipped = path in SHIPPED_CATALOGS.values()
    source = path.name if shipped else str(path)
    compiled, content = _COMPILED.take(path, "catalogue file", MAX_CATALOG_BYTES, source)
    if compiled is None:
        # Size first (before reading), then depth (before parsing): a huge, endless or deeply
        # nested file is one message in milliseconds.
        data, content = read_toml_input(path, "catalogue file", MAX_CATALOG_BYTES, source)
        check_kind(data, "catalog", source)
        compiled = compile_catalog(data, source, hashlib.sha256(content).hexdigest())
    _COMPILED.put(compiled.digest, compiled)
    # Arrays of its own for every caller, as a fresh compile gives.
    tables = replace(compiled, source=source, **{
        name: getattr(compiled, name).copy()
        for name in ("tiles", "req", "effects", "goods_tier", "board_center")
    })  # fmt: skip
    if not shipped and not tables.reconstructed:
        if any(same_arrays(tables.arrays, load_catalog(p).arrays)
               for p in SHIPPED_CATALOGS.values()):  # fmt: skip
            # reconstructed = false on the shipped reconstruction does not make it the
            # published game's data.
            tables = replace(tables, reconstructed=True, name=f"{tables.name} ({COPY_NOTE})")
    return tables, content


def catalog_warnings(tables: Tables) -> list[str]:
    """Legal but suspicious designs, one message each: a requirement that the player counts
    dealing its tile can never meet, because every producer of a good it needs carries a
    higher player-count icon (no board or cornerstone producing it either); and an orphaned
    good (``orphaned_goods``)."""
    tiles, req = tables.tiles, tables.req
    warnings = orphaned_goods(tables)
    for index, name in enumerate(tables.tile_names):
        icon = int(tiles[index, K.C_PLAYERS])
        if icon == 0 or icon == max(ICON_COUNTS):
            continue
        # Producers dealt whenever this tile is: same or lower icon, boards and cornerstones.
        available = tiles[:, K.C_PLAYERS] <= icon
        produced = int(np.bitwise_or.reduce(tiles[available, K.C_PRODUCES]))
        for option in range(tiles[index, K.C_N_REQ_OPTIONS]):
            missing = int(req[index, option, K.R_GOODS]) & ~produced
            field = 'field "requires"'
            if option:
                field = f'field "alternatives": alternative {option}: field "requires"'
            for bit, good in enumerate(tables.good_names):
                if missing & (1 << bit):
                    warnings.append(
                        f'{tables.source}: tile "{name}": {field}: good "{good}" is produced '
                        f"only by tiles with a higher player-count icon, so with fewer than "
                        f"{_next_icon(icon)} players this requirement can never be met"
                    )
    return warnings


def orphaned_goods(tables: Tables) -> list[str]:
    """A good no tile can make (no board, and no tile but a Disaster, produces it: no city ever
    holds it), and a raw or processed good no tile needs (no requirement, printed or
    alternative, names it: it is never bought and feeds nothing; a printed game would not
    print it). Luxury goods are the end of the goods tree (worth 10 VP each, rules 001 S4), so
    a luxury good nobody needs is the design, not an orphan."""
    tiles, req = tables.tiles, tables.req
    placed = (tiles[:, K.C_TYPES] & K.T_DISASTER) == 0  # a Disaster is never in a city
    made = int(np.bitwise_or.reduce(tiles[placed, K.C_PRODUCES])) if placed.any() else 0
    needed = 0
    for index in range(len(tiles)):
        for option in range(tiles[index, K.C_N_REQ_OPTIONS]):
            needed |= int(req[index, option, K.R_GOODS])
    warnings = []
    for bit, good in enumerate(tables.good_names):
        if not made & (1 << bit):
            warnings.append(
                f'{tables.source}: good "{good}": no tile or board produces it, so no city '
                "ever holds it"
            )
        elif not needed & (1 << bit) and int(tables.goods_tier[bit]) != K.TIER_LUXURY:
            warnings.append(
                f'{tables.source}: good "{good}": no tile requires it (printed or alternative), '
                "so it is never bought and feeds no other good"
            )
    return warnings


def _next_icon(icon: int) -> int:
    return min(i for i in ICON_COUNTS if i > icon)


def _tables_facts(tables: Tables) -> dict[str, TileFacts]:
    return {
        name: TileFacts(
            deck=int(row[K.C_DECK]),
            players=int(row[K.C_PLAYERS]),
            disaster=bool(row[K.C_TYPES] & K.T_DISASTER),
            removed=bool(row[K.C_REMOVED_NO_DISASTERS]),
            substitute=bool(row[K.C_REPLACES] >= 0),
        )
        for name, row in zip(tables.tile_names, tables.tiles, strict=True)
    }


def with_extra_tiles(tables: Tables, tile_dicts: list, source: str) -> Tables:
    """``tables`` plus inline tiles (catalogue tile fields; ``deck`` optional), appended last.

    Deck rules (counts, Disasters, substitutes) do not apply to them; every field does.
    """
    problems: list[str] = []
    if not isinstance(tile_dicts, list):
        raise CatalogError([f"{source}: inline tiles must be an array of tables"])
    read = _read_tiles(tile_dicts, INLINE_TILE_FIELDS, source, problems)
    names = [fields["name"] for _, fields, _ in read]
    duplicate_names(names, "tile", source, problems, lookalikes=True)
    known = {lookalike_key(name): name for name in tables.tile_names}
    for name in names:
        if name in tables.tile_names:
            problems.append(f'{source}: tile "{name}": name already used by the catalogue')
        elif name is not None and lookalike_key(name) in known:
            other = known[lookalike_key(name)]
            problems.append(
                f'{source}: tile "{name}": looks the same as the catalogue\'s tile "{other}"; '
                "rename it"
            )
    first = tables.n_tiles
    tile_index = {name: index for index, name in enumerate(tables.tile_names)}
    facts = _tables_facts(tables)
    for offset, (_, fields, _) in reversed(list(enumerate(read))):
        if fields["name"] is not None and fields["name"] not in tables.tile_names:
            tile_index[fields["name"]] = first + offset
            facts[fields["name"]] = _facts(fields)
    ctx = _Context(source, _good_bits(tables.good_names), tile_index, facts, inline=True)
    rows, reqs, effects = _compile_tiles(read, ctx, problems)
    tiles = np.concatenate([tables.tiles, _stack(rows, (0, K.N_TILE_COLS))])
    req = np.concatenate([tables.req, _stack(reqs, (0, K.MAX_REQ_OPTIONS, 2))])
    wheres = [(first + offset, where) for offset, (_, _, where) in enumerate(read)]
    _unplaceable(tiles, req, wheres, tables.good_names, problems)
    if problems:
        raise CatalogError(problems)
    extra = json.dumps(tile_dicts, sort_keys=True, ensure_ascii=False)
    return Tables(
        name=tables.name,
        reconstructed=tables.reconstructed,
        source=f"{tables.source} + {source}",
        digest=hashlib.sha256((tables.digest + extra).encode()).hexdigest(),
        tiles=tiles,
        req=req,
        effects=np.concatenate([tables.effects, _stack(effects, (0, K.MAX_EFFECTS, 4))]),
        goods_tier=tables.goods_tier,
        board_center=tables.board_center,
        tile_names=tables.tile_names + tuple(names),
        good_names=tables.good_names,
        board_names=tables.board_names,
        invented_goods=tables.invented_goods,
    )


# --- back to names ----------------------------------------------------------------------------


def _effect_as_dict(row) -> dict:
    kind = next(name for name, code in K.EFFECT_NAMES.items() if code == row[0])
    effect = {"kind": kind}
    for param in EFFECT_KINDS[kind]:
        value = int(row[EFFECT_PARAMS[param][2]])
        if param in EFFECT_NAME_SETS:
            effect[param] = _names_of(value, EFFECT_NAME_SETS[param][1])
        elif param == "tier":
            effect[param] = TIER_LABELS[value]
        elif param == "exclude_self":
            effect[param] = bool(value)
        else:
            effect[param] = value
    return effect


def tile_as_dict(tables: Tables, index: int) -> dict:
    """One compiled tile with every catalogue field by name (deck "center" for City Centers,
    None for inline tiles; players None when the tile has no icon)."""
    row = tables.tiles[index]
    good_bits = _good_bits(tables.good_names)

    def names(tile_indices) -> list[str]:
        return [tables.tile_names[i] for i in tile_indices if i >= 0]

    options = [
        {"requires": _names_of(int(goods), good_bits), "cost": int(cost)}
        for goods, cost in tables.req[index, : row[K.C_N_REQ_OPTIONS]]
    ]
    return {
        "index": index,
        "name": tables.tile_names[index],
        "deck": DECK_LABELS.get(int(row[K.C_DECK])),
        "players": int(row[K.C_PLAYERS]) or None,
        "types": _names_of(int(row[K.C_TYPES]), K.TYPE_NAMES),
        "roads": _roads_text(int(row[K.C_ROADS])),
        "cost": options[0]["cost"],
        "requires": options[0]["requires"],
        "alternatives": options[1:],
        "requires_tiles": names(row[K.C_PREREQ0 : K.C_PREREQ0 + K.MAX_PREREQS]),
        "vp": int(row[K.C_VP]),
        "income": int(row[K.C_INCOME]),
        "coins_on_place": int(row[K.C_COINS_ON_PLACE]),
        "produces": _names_of(int(row[K.C_PRODUCES]), good_bits),
        "power": bool(row[K.C_POWER]),
        "polluting": bool(row[K.C_POLLUTING]),
        "protects": _names_of(int(row[K.C_PROTECTS]), K.PROTECTION_NAMES),
        "disaster": DISASTER_LABELS.get(int(row[K.C_DISASTER]), ""),
        "vp_no_disasters": int(row[K.C_VP_NO_DISASTERS]),
        "removed_no_disasters": bool(row[K.C_REMOVED_NO_DISASTERS]),
        "replaces": (names([row[K.C_REPLACES]]) or [""])[0],
        "effects": [_effect_as_dict(e) for e in tables.effects[index] if e[0] != K.EF_NONE],
    }


def catalog_as_dict(tables: Tables) -> dict:
    """The whole compiled catalogue by name (the ``--json`` form); tiles[i] is tile index i."""
    good_bits = _good_bits(tables.good_names)
    return {
        "catalog": {
            "name": tables.name,
            "reconstructed": tables.reconstructed,
            "banner": RECONSTRUCTED_BANNER if tables.reconstructed else "",
            "source": tables.source,
            "digest": tables.digest,
        },
        "goods": [
            {"name": name, "tier": TIER_LABELS[int(tier)], "invented": invented}
            for name, tier, invented in zip(
                tables.good_names,
                tables.goods_tier,
                tables.invented_goods or (False,) * len(tables.good_names),
                strict=True,
            )
        ],
        "boards": [
            {
                "name": name,
                "good": _names_of(int(tables.tiles[center, K.C_PRODUCES]), good_bits)[0],
                "roads": _roads_text(int(tables.tiles[center, K.C_ROADS])),
                "center": tables.tile_names[center],
            }
            for name, center in zip(tables.board_names, tables.board_center, strict=True)
        ],
        "tiles": [tile_as_dict(tables, index) for index in range(tables.n_tiles)],
    }


def catalog_as_json(tables: Tables) -> str:
    return json.dumps(catalog_as_dict(tables), indent=2, ensure_ascii=False)
