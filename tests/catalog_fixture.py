"""A small, valid synthetic catalogue for tests, independent of the default catalogue's content.

``valid_catalog()`` returns a fresh dict in the file form (so tests can mutate it) that passes
every deck rule: 21 cornerstones (one removed in the no-disasters variant) plus its substitute,
and per generation 24/8/8 tiles by players icon with one Disaster plus its substitute.
``to_toml`` writes such a dict back as TOML for CLI tests.
"""

import json

RAW = ["Ore", "Natural Gas", "Wood", "Oil", "Coal", "Stone"]
BOARD_ROADS = ["NESW", "NES", "ESW", "NSW", "NEW", "NESW"]
DISASTERS = {"gen1": ("Flood", "flood"), "gen2": ("Fire", "fire"), "gen3": ("Crime Spree", "crime")}


def _tile(name, deck, types, roads="NS", players=None, **fields):
    tile = {"name": name, "deck": deck, "types": types, "roads": roads}
    if players is not None:
        tile["players"] = players
    tile.update(fields)
    return tile


def _cornerstones() -> list[dict]:
    tiles = [
        _tile("Modular Factory", "cornerstone", ["industrial"], income=2, polluting=True),
        _tile(
            "Merchant Union",
            "cornerstone",
            ["commercial"],
            "EW",
            effects=[{"kind": "coins_on_type_placed", "types": ["commercial"], "coins": 1}],
        ),
        _tile(
            "Public Safety Department",
            "cornerstone",
            ["public"],
            "NESW",
            vp=2,
            protects=["fire", "police"],
            vp_no_disasters=5,
        ),
        _tile(
            "Resource Agency",
            "cornerstone",
            ["public"],
            effects=[{"kind": "vp_per_good_tier", "tier": "raw", "vp": 1}],
        ),
        _tile(
            "Hydro Plant",
            "cornerstone",
            ["industrial"],
            "NE",
            power=True,
            effects=[{"kind": "vp_placement", "conditions": ["corner", "no_neighbours"], "vp": 10}],
        ),
        _tile(
            "Salvage Office",
            "cornerstone",
            ["commercial"],
            effects=[{"kind": "take_discarded_cornerstone"}],
        ),
        _tile(
            "Insurance Office",
            "cornerstone",
            ["commercial"],
            removed_no_disasters=True,
            effects=[{"kind": "insurance", "disasters": ["fire", "crime"]}],
        ),
        _tile(
            "Town Hall",
            "cornerstone",
            ["public"],
            effects=[
                {"kind": "vp_per_type_in_city", "types": ["public"], "vp": 2, "exclude_self": True}
            ],
        ),
        _tile(
            "Park",
            "cornerstone",
            ["public"],
            effects=[{"kind": "vp_per_type_adjacent", "types": ["residential"], "vp": 1}],
        ),
        _tile(
            "Bank",
            "cornerstone",
            ["commercial"],
            effects=[
                {"kind": "income_per_type", "types": ["commercial", "industrial"], "coins": 1}
            ],
        ),
    ]
    tiles += [
        _tile(f"Tower {i}", "cornerstone", ["residential"], "NESW", vp=3) for i in range(1, 12)
    ]
    tiles.append(
        _tile("Charity Office", "cornerstone", ["public"], vp=2, replaces="Insurance Office")
    )
    return tiles


def _generation(deck: str) -> list[dict]:
    disaster, kind = DISASTERS[deck]
    prefix = deck.capitalize()
    tiles = [_tile(disaster, deck, ["disaster"], "", players=1, disaster=kind)]
    tiles += [
        _tile(f"{prefix} {good} Mine", deck, ["resource"], players=1, produces=[good])
        for good in RAW
    ]
    if deck == "gen1":
        tiles += [
            _tile(
                "Sawmill", deck, ["industrial"], players=1, requires=["Wood"], produces=["Lumber"]
            ),
            _tile(
                "Glassworks", deck, ["industrial"], players=1, requires=["Oil"], produces=["Glass"]
            ),
            _tile(
                "Fire Department", deck, ["public"], players=1, protects=["fire"], vp_no_disasters=2
            ),
            _tile(
                "Contract Office",
                deck,
                ["commercial"],
                players=4,
                effects=[{"kind": "swap_cornerstone"}],
            ),
        ]
    elif deck == "gen2":
        tiles += [
            _tile(
                "Steel Foundry",
                deck,
                ["industrial"],
                players=1,
                requires=["Coal", "Ore"],
                produces=["Steel"],
                polluting=True,
            ),
            _tile(
                "Treasury",
                deck,
                ["public"],
                players=1,
                vp=6,
                requires=["Steel"],
                alternatives=[{"requires": [], "cost": 5}],
            ),
            _tile("Postal Service", deck, ["public"], players=1, income=3),
            _tile(
                "Police Department",
                deck,
                ["public"],
                players=4,
                protects=["police"],
                vp_no_disasters=3,
            ),
        ]
    else:
        tiles += [
            _tile(
                "Jeweller",
                deck,
                ["industrial"],
                players=1,
                cost=2,
                requires=["Steel", "Glass"],
                produces=["Jewels"],
            ),
            _tile(
                "Condos & Restaurant",
                deck,
                ["residential", "commercial"],
                players=1,
                vp=4,
                income=2,
                requires_tiles=["Treasury", "Sawmill"],
            ),
            _tile("Gold Market", deck, ["commercial"], players=1, income=5, coins_on_place=3),
            _tile("Museum", deck, ["public"], players=4, vp=5, requires=["Jewels"]),
        ]
    counts = {1: 0, 4: 0, 5: 0}
    for tile in tiles:
        counts[tile["players"]] += 1
    for icon, need in ((1, 24), (4, 8), (5, 8)):
        tiles += [
            _tile(f"{prefix} House {icon}-{i}", deck, ["residential"], "EW", players=icon, vp=2)
            for i in range(need - counts[icon])
        ]
    tiles.append(
        _tile(f"{prefix} Shelter", deck, ["residential"], players=1, vp=1, replaces=disaster)
    )
    return tiles


def valid_catalog() -> dict:
    goods = [{"name": good, "tier": "raw"} for good in RAW]
    goods += [{"name": good, "tier": "processed"} for good in ("Lumber", "Glass", "Steel")]
    goods.append({"name": "Jewels", "tier": "luxury", "invented": True})
    return {
        "catalog": {"name": "Test set", "reconstructed": True, "description": "for tests"},
        "goods": goods,
        "boards": [
            {"name": f"{good} board", "good": good, "roads": roads}
            for good, roads in zip(RAW, BOARD_ROADS, strict=True)
        ],
        "tiles": _cornerstones() + _generation("gen1") + _generation("gen2") + _generation("gen3"),
    }


def tile(data: dict, name: str) -> dict:
    """The tile called ``name`` in a catalogue dict (to mutate it)."""
    return next(t for t in data["tiles"] if t["name"] == name)


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def to_toml(data: dict) -> str:
    """TOML text of a catalogue dict (tables and arrays of tables of plain values)."""
    lines = []
    for key, value in data.items():
        entries = value if isinstance(value, list) else [value]
        header = f"[[{key}]]" if isinstance(value, list) else f"[{key}]"
        for entry in entries:
            lines.append(header)
            lines += [f"{k} = {_value(v)}" for k, v in entry.items()]
            lines.append("")
    return "\n".join(lines)
