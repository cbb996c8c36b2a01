"""Golden games: digests of the stored tables of fixed runs, so that moving code is provably
behaviour-neutral.

Each case is a small run (seats rotated, events recorded) played through the runner in this
process; its digest is one sha256 per stored column, over the column's values in the table's
canonical order (games by id; players by game and seat; events by game and their order), so a
change of storage width does not count but a change of any value, or a new or lost column, does.

``python -m tests.golden --write`` rewrites ``tests/golden_neom.json``: do it only on purpose,
and say in the commit why the games changed. ``tests/test_golden.py`` recomputes every case.
"""

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

GOLDEN_FILE = Path(__file__).with_name("golden_neom.json")
VARIANTS = ("standard", "no-disasters", "random-disasters", "beginner")
# Every strategy family but rollout (its own case below, being slow), cycled over the cases
# so that each player count and variant meets a different mix.
POOL = ("random", "greedy", "builder", "merchant", "industrialist", "denier", "miser")


def cases() -> dict[str, dict]:
    """Case name -> run options (players, strategies, variant, rules options, deals)."""
    out = {}
    k = 0
    for players in range(1, 6):
        for variant in VARIANTS:
            strategies = [POOL[(k + s) % len(POOL)] for s in range(players)]
            k += 1
            out[f"p{players}-{variant}"] = {
                "players": players,
                "strategies": strategies,
                "variant": variant,
                "rules": {},
                "deals": 2,
            }
    extra = {
        "p3-residential": (3, ["greedy", "builder", "random"], {"neighborhood_through_any": False}),
        "p1-tileset4": (1, ["greedy"], {"solo_tileset": 4}),
        "p1-tileset5": (1, ["builder"], {"solo_tileset": 5}),
        "p2-rollout": (2, ["rollout:playouts=2,candidates=2", "builder"], {}),
        "p4-force-cs": (4, ["greedy", "builder", "merchant", "random"], {"force_cs": True}),
        "p4-ban-gen": (4, ["greedy", "industrialist", "random", "denier"], {"ban_gen": True}),
    }
    for name, (players, strategies, rules) in extra.items():
        out[name] = {
            "players": players,
            "strategies": strategies,
            "variant": "standard",
            "rules": rules,
            "deals": 1 if "rollout" in name else 2,
        }
    return out


def _rules_options(rules: dict, tables) -> dict:
    """Experiment interventions name fixed tiles of the default catalogue."""
    options = {k: v for k, v in rules.items() if k not in ("force_cs", "ban_gen")}
    if rules.get("force_cs"):
        options |= {"force_tile": tables.tile_index("Central Park"), "force_seat": 1}
    if rules.get("ban_gen"):
        options |= {"ban_tile": tables.tile_index("Steel Foundry")}
    return options


def _column_digest(values: pl.Series) -> str:
    if values.dtype == pl.String:
        data = "\x00".join(values.to_list()).encode()
    elif values.dtype.is_float():
        data = values.cast(pl.Float64).to_numpy().tobytes()
    else:
        data = values.cast(pl.Int64).to_numpy().astype(np.int64).tobytes()
    return hashlib.sha256(data).hexdigest()[:16]


def table_digests(frame: pl.DataFrame, order: list[str]) -> dict[str, str]:
    # A stable sort: events keep their stored order within a game.
    frame = frame.sort(order, maintain_order=True)
    return {name: _column_digest(frame[name]) for name in frame.columns}


def golden_run(out: Path, game: str, strategies, players: int, deals: int, seed: int, rules):
    """Play a golden run into ``out`` (``deals`` deals, seats rotated, one worker, batches of
    three, events recorded) and digest its tables."""
    from sim.core.runner import RunConfig, run_simulation
    from sim.core.store import read_run

    config = RunConfig(
        out=out,
        strategies=tuple(strategies),
        game=game,
        players=players,
        games=deals * players,
        seed=seed,
        seats="rotate",
        workers=1,
        batch_size=3,
        events=True,
        progress=False,
        rules=rules,
    )
    run_simulation(config)
    tables = read_run(out)
    return {
        "games": table_digests(tables.games.collect(), ["game_id"]),
        "players": table_digests(tables.players.collect(), ["game_id", "seat"]),
        "events": table_digests(tables.events.collect(), ["game_id"]),
    }


def run_case(case: dict, out: Path) -> dict[str, dict[str, str]]:
    """Play one case into ``out`` and digest its tables."""
    from sim.neom.catalog import load_catalog
    from sim.neom.constants import VARIANT_NAMES

    rules = {"variant": VARIANT_NAMES[case["variant"]]}
    rules |= _rules_options(case["rules"], load_catalog(None))
    strategies, players = case["strategies"], case["players"]
    return golden_run(out, "neom", strategies, players, case["deals"], 20261201, rules)


def compute_all(names: list[str] | None = None) -> dict:
    chosen = cases()
    if names is not None:
        chosen = {name: chosen[name] for name in names}
    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, case in chosen.items():
            result[name] = run_case(case, Path(tmp) / name)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {GOLDEN_FILE.name}")
    args = parser.parse_args(argv)
    digests = compute_all()
    if args.write:
        GOLDEN_FILE.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
        print(f"wrote {GOLDEN_FILE} ({len(digests)} cases)")
        return 0
    golden = json.loads(GOLDEN_FILE.read_text())
    bad = [name for name in digests if digests[name] != golden.get(name)]
    print("all golden games identical" if not bad else f"changed: {', '.join(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
