"""NEOM's levers: the catalogue's numbers that move an item's effect (a tile's VP, cost,
income, coins on placement, an effect's amount, an alternative's cost, how many goods or tiles
it requires; for a Disaster, the cost of the tiles that protect against it), within the bounds
the rules texts and the catalogue's ``known`` facts set, and the catalogue text with some of
them changed. ``neom balance`` (``analysis.neom.balance``) searches them; the report's next
steps (``analysis.neom.disasters``) name them.
"""

import difflib
import re
from dataclasses import replace

from analysis.core.balance import MAX_VALUE, Lever
from sim.core.errors import UserError

MAX_AMOUNT = MAX_VALUE  # sim.neom.catalog.MAX_AMOUNT (imported lazily there; checked by a test)
SCORED_TYPES = ("residential", "public")  # printed VP counts on these (RULES.md, scoring)
PROTECTS = {"fire": "fire", "crime": "police"}  # a Disaster kind -> the protection against it


_PATH = re.compile(r"^(?:(effects|alternatives)\[(\d+)\]\.)?([a-z_]+)$")
NUMERIC_FIELDS = ("vp", "cost", "income", "coins_on_place", "vp_no_disasters")
# Lists a lever counts: the value is how many of the listed goods (tiles) are still required,
# the first ones in file order kept (a designer orders them by importance).
COUNT_FIELDS = {"requires": "required good", "requires_tiles": "prerequisite tile"}


def _split_path(path: str) -> tuple[str | None, int, str]:
    match = _PATH.match(path)
    if match is None:
        raise UserError(f"lever {path!r}: expected a field such as vp, cost or effects[0].vp")
    return match.group(1), int(match.group(2) or 0), match.group(3)


def get_value(entry, path: str) -> int:
    """The number at ``path`` of a tile's entry (a missing field is its default, 0; a count
    field, the length of its list)."""
    if path in COUNT_FIELDS:
        return len(entry.get(path, []))
    listing, index, key = _split_path(path)
    if listing is not None:
        items = entry.get(listing, [])
        if index >= len(items):
            raise UserError(f"lever {path!r}: the tile has {len(items)} {listing}")
        entry = items[index]
    return int(entry.get(key, 0))


def set_value(entry, path: str, value: int) -> None:
    if path in COUNT_FIELDS:
        items = entry.get(path, [])
        if value > len(items):
            raise UserError(f"lever {path!r}: cannot require more than the {len(items)} listed")
        if value == 0:
            entry.pop(path, None)
        else:
            del items[value:]
        return
    listing, index, key = _split_path(path)
    if listing is not None:
        entry = entry[listing][index]
    entry[key] = int(value)


def _find_entry(tiles, name: str) -> int:
    folded = {str(t.get("name", "")).casefold(): i for i, t in enumerate(tiles)}
    if name.casefold() in folded:
        return folded[name.casefold()]
    close = difflib.get_close_matches(name, [str(t.get("name", "")) for t in tiles], 3, 0.5)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise UserError(f"no tile, cornerstone or Disaster named {name!r} in the catalogue{hint}")


def item_kind(entry) -> str:
    if entry.get("deck") == "cornerstone":
        return "cornerstone"
    return "disaster" if "disaster" in entry.get("types", []) else "tile"


VP_KINDS = ("vp_per_type_in_city", "vp_per_type_adjacent", "vp_per_good_tier", "vp_placement")


def type_bounds(entry) -> dict[str, tuple[int, str]]:
    """Lower bounds the rules texts set on a tile's numbers by its types (rules 000): path ->
    (bound, why). A Commercial tile gives income, a Residential tile has a VP value, a Public
    tile offers VP (printed, unless an effect gives it variable VP), and a tile that produces
    goods turns at least one required good into them (the goods tree)."""
    types = set(entry.get("types", []))
    bounds = {}
    if "commercial" in types:
        bounds["income"] = (1, "a Commercial tile gives income (rules 000)")
    if "residential" in types:
        bounds["vp"] = (1, "a Residential tile has a VP value (rules 000)")
    variable = any(e.get("kind") in VP_KINDS for e in entry.get("effects", []))
    if "public" in types and not variable and "residential" not in types:
        bounds["vp"] = (1, "a Public tile offers VP (rules 000)")
    if entry.get("produces") and entry.get("requires"):
        bounds["requires"] = (1, "a producer turns goods into goods (the goods tree)")
    return bounds


def _bounded_by_rules(levers: list[Lever], entry) -> list[Lever]:
    """The levers within the rules' bounds and the tile's ``known`` entries (catalogue field
    ``known``: a fact of the published game is never moved, a known bound never crossed)."""
    from sim.neom.catalog import parse_known

    bounds = type_bounds(entry)
    known = [parse_known(k) for k in entry.get("known", [])]
    out = []
    for lever in levers:
        low, high, inert = lever.low, lever.high, lever.inert
        if lever.path in bounds:
            low = max(low, min(bounds[lever.path][0], lever.current))
        for parsed in known:
            if parsed is None:
                continue
            path, op, bound = parsed
            group = path in ("effects", "alternatives") and lever.path.startswith(path + "[")
            if path != lever.path and not group:
                continue
            if op == ">=":
                low = max(low, min(bound, lever.current))
            elif op == "<=":
                high = min(high, max(bound, lever.current))
            elif not inert:
                inert = "known from the published game (the tile's field known)"
        out.append(replace(lever, low=low, high=high, inert=inert))
    return out


def _own_levers(entry, variant: str) -> list[Lever]:
    name = str(entry["name"])
    scored = any(t in SCORED_TYPES for t in entry.get("types", []))
    levers = [
        Lever(name, "vp", get_value(entry, "vp"), +1, "VP",
              inert="" if scored else "printed VP scores only on Residential and Public tiles"),
        Lever(name, "cost", get_value(entry, "cost"), -1, "coin of cost"),
        Lever(name, "income", get_value(entry, "income"), +1, "coin of income"),
        Lever(name, "coins_on_place", get_value(entry, "coins_on_place"), +1,
              "coin on placement"),
    ]  # fmt: skip
    for path, unit in COUNT_FIELDS.items():
        if entry.get(path):
            count = get_value(entry, path)
            levers.append(Lever(name, path, count, -1, unit, low=0, high=count))
    if "vp_no_disasters" in entry:
        levers.append(
            Lever(name, "vp_no_disasters", get_value(entry, "vp_no_disasters"), +1, "VP",
                  inert="" if variant == "no-disasters" else "counts only in the no-disasters "
                  "variant")
        )  # fmt: skip
    for i in range(len(entry.get("alternatives", []))):
        path = f"alternatives[{i}].cost"
        levers.append(Lever(name, path, get_value(entry, path), -1, "coin of cost"))
    for i, effect in enumerate(entry.get("effects", [])):
        for key, sign, unit in (("vp", +1, "VP"), ("coins", +1, "coin")):
            if key in effect:
                path = f"effects[{i}].{key}"
                levers.append(Lever(name, path, get_value(entry, path), sign, f"{unit} of "
                                    f"{effect.get('kind', 'effect')}"))  # fmt: skip
    return _bounded_by_rules(levers, entry)


def _disaster_levers(tiles, entry) -> list[Lever]:
    """A Disaster is never placed, so none of its own numbers count; what it costs its victims
    is a rule (RULES.md P10). The catalogue moves it through the tiles that protect against it
    or insure it: the dearer they are, the stronger the Disaster."""
    kind = entry.get("disaster", "")
    out = []
    for tile in tiles:
        protects = PROTECTS.get(kind) in tile.get("protects", [])
        insures = any(
            e.get("kind") == "insurance" and kind in e.get("disasters", [])
            for e in tile.get("effects", [])
        )
        if not (protects or insures) or tile.get("replaces"):
            continue
        name = str(tile["name"])
        levers = [Lever(name, "cost", get_value(tile, "cost"), +1, "coin of cost", own=False)]
        for i, _ in enumerate(tile.get("alternatives", [])):
            path = f"alternatives[{i}].cost"
            levers.append(Lever(name, path, get_value(tile, path), +1, "coin of cost", own=False))
        out.extend(_bounded_by_rules(levers, tile))
    return out


def item_levers(data: dict, name: str, variant: str = "standard") -> tuple[str, str, list[Lever]]:
    """The item's canonical name, kind (cornerstone, tile, disaster) and levers."""
    tiles = data.get("tiles", [])
    entry = tiles[_find_entry(tiles, name)]
    kind = item_kind(entry)
    levers = _disaster_levers(tiles, entry) if kind == "disaster" else _own_levers(entry, variant)
    return str(entry["name"]), kind, levers


def pick_levers(levers: list[Lever], wanted: str | None) -> list[Lever]:
    if wanted is None:
        return levers
    chosen = [lever for lever in levers if wanted in (lever.name, lever.path)]
    if not chosen:
        raise UserError(
            f"--lever {wanted!r}: not a lever of this item; its levers: "
            + ", ".join(lever.name for lever in levers)
        )
    return chosen


def apply_values(base_text: str, values: dict[tuple[str, str], int], parsed=None) -> str:
    """The catalogue text with the given (tile, path) numbers set, formatting and comments
    kept (tomlkit), so a diff shows only the changed numbers. ``parsed``: the tomlkit document
    of ``base_text`` to use instead of parsing it again (the parse is most of a candidate's
    text: about 0.1 s, a deep copy of the whole document nearly as much); it is left as it
    was, as the edits go to copies of the edited tiles' tables."""
    import copy

    import tomlkit

    if not values:
        return base_text
    doc = tomlkit.parse(base_text) if parsed is None else parsed
    tiles = doc["tiles"]
    originals: dict = {}
    try:
        for (tile, path), value in sorted(values.items()):
            if not 0 <= int(value) <= MAX_AMOUNT:
                raise UserError(
                    f"{tile}: {path} = {value}: outside the catalogue's 0..{MAX_AMOUNT}"
                )
            index = _find_entry(tiles, tile)
            if index not in originals:
                originals[index] = tiles[index]
                tiles[index] = copy.deepcopy(tiles[index])
            set_value(tiles[index], path, int(value))
        return tomlkit.dumps(doc)
    finally:
        for index, entry in originals.items():
            tiles[index] = entry
