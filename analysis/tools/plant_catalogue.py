"""A planted copy of a catalogue, to try the report as a designer would (issues 38, 39): known
changes hidden in an otherwise unchanged catalogue, which the report should find.

``python -m analysis.tools.plant_catalogue OUT.toml [--base FILE|default] [--set ITEM:PATH=N ...]``

With no ``--set``, the three plants of issues 38 and 39 on the shipped default catalogue (a
reconstruction, version 3): a cornerstone +6 VP (City Archive 4 -> 10), a generation tile +4 VP
(Family Homes 2 -> 6; 3 -> 7 on version 2) and the only Gold producer's cost 2 -> 10 (Gold
Refinery: a broken Gold chain).
The copy keeps the base's comments and layout, so ``diff`` shows only the planted numbers; the
base's value of each plant is checked first, so a base that has moved on is refused rather than
planted by a different amount.
"""

import argparse
import hashlib
import os
import sys
from pathlib import Path

# (item, lever path): (value in the shipped default, planted value)
THREE_PLANTS = {
    ("City Archive", "vp"): (4, 10),
    ("Family Homes", "vp"): (2, 6),
    ("Gold Refinery", "cost"): (2, 10),
}


def _parse_set(text: str) -> tuple[str, str, int]:
    from sim.core.errors import UserError

    item, sep, rest = text.rpartition(":")
    path, eq, value = rest.partition("=")
    if not (sep and eq and item and path) or not value.strip().isdigit():
        raise UserError(f"--set {text!r}: expected ITEM:PATH=N, such as 'City Archive:vp=9'")
    return item.strip(), path.strip(), int(value)


def plant(base_text: str, plants: dict[tuple[str, str], tuple[int | None, int]]) -> str:
    """``base_text`` with each (item, path) set to its planted value; UserError when an expected
    base value (not None) differs from the base's own."""
    import tomllib

    from analysis.neom import balance as B
    from sim.core.errors import UserError

    tiles = tomllib.loads(base_text)["tiles"]
    for (item, path), (before, _) in plants.items():
        entry = next((t for t in tiles if t.get("name") == item), None)
        if entry is None:
            raise UserError(f"no tile, cornerstone or Disaster named {item!r} in the base")
        found = B.get_value(entry, path)
        if before is not None and found != before:
            raise UserError(f"{item}: {path} is {found} in the base, not {before}: plant by hand")
    return B.apply_values(base_text, {key: after for key, (_, after) in plants.items()})


def main(argv=None) -> int:
    from sim.core.errors import UserError
    from sim.neom.catalog import DEFAULT_CATALOG

    parser = argparse.ArgumentParser(prog="python -m analysis.tools.plant_catalogue",
                                     description=__doc__.split("\n\n")[0])  # fmt: skip
    parser.add_argument("out", type=Path, help="the planted catalogue to write (.toml)")
    parser.add_argument(
        "--base", default="default", help="the catalogue to copy (default: shipped)"
    )
    parser.add_argument("--set", action="append", default=[], metavar="ITEM:PATH=N",
                        help="a plant instead of the three of issue 39 (repeatable)")  # fmt: skip
    args = parser.parse_args(argv)
    base = DEFAULT_CATALOG if args.base == "default" else Path(args.base)
    if not base.is_file():
        raise UserError(f"--base {args.base}: no such catalogue file")
    if args.set:
        plants = {(i, p): (None, v) for i, p, v in map(_parse_set, args.set)}
    elif args.base == "default":
        plants = THREE_PLANTS
    else:
        plants = {key: (None, after) for key, (_, after) in THREE_PLANTS.items()}
    text = plant(base.read_text(encoding="utf-8"), plants)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    for (item, path), (before, after) in plants.items():
        print(f"planted {item}: {path} {'?' if before is None else before} -> {after}")
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    print(f"wrote {args.out} (sha256 {digest})")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("LC_ALL", "C")
    from sim.core.cli import guarded

    sys.exit(guarded(main, "python -m analysis.tools.plant_catalogue"))
