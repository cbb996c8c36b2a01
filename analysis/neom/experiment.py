"""``neom experiment cornerstone|tile NAME``: a paired interventional experiment.

The same games (master seed, game ids, seats) are played twice through the runner: a baseline
and a run with one intervention (rules options ``RO_FORCE_TILE``/``RO_FORCE_SEAT`` or
``RO_BAN_TILE``, applied after the deal; see ``sim.engine.apply_interventions``). Game by game
the two runs differ only by the intervention, so the effect on a seat is the mean of its paired
differences in win share and score, with a 95% interval (``analysis.stats.paired_difference``).
"""

import difflib
import json
import math
from pathlib import Path

import numpy as np

from sim.core.errors import UserError
from sim.neom import constants as K

# polars, the runner and the compiled game are imported where used, so that `neom --help` stays
# quick.

MODES = ("force", "ban")
BASELINE = "baseline"
INTERVENTION = "intervention"
RESULT_JSON = "experiment.json"
RESULT_MD = "experiment.md"
GENERATION_DECKS = (K.DECK_GEN1, K.DECK_GEN2, K.DECK_GEN3)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "experiment",
        help="paired experiment: force a tile into a seat's hand or ban it, same deals twice",
        description="Play the same deals with and without an intervention on one tile and "
        "report the paired difference in win share and score.",
    )
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")
    for kind, what in (("cornerstone", "a cornerstone"), ("tile", "a generation tile")):
        sub = kinds.add_parser(kind, help=f"intervene on {what}")
        sub.add_argument("name", help=f"name of {what} in the catalogue")
        sub.add_argument("--players", type=int, default=4)
        sub.add_argument("--games", type=int, default=2000, help="games per run (2000)")
        sub.add_argument(
            "--strategies", required=True, help="one strategy per seat, comma-separated"
        )
        sub.add_argument("--seat", type=int, default=0, help="seat the tile is forced to (0)")
        sub.add_argument("--mode", choices=MODES, default="force")
        sub.add_argument("--seed", type=int, default=1)
        sub.add_argument("--catalog", default=None, help="catalogue file (default: built-in)")
        sub.add_argument("--variant", default="standard", choices=sorted(K.VARIANT_NAMES))
        sub.add_argument("--workers", type=int, default=None, help="worker processes (all)")
        sub.add_argument(
            "--out", default=None, help="experiment folder (default: experiments/KIND-NAME-MODE)"
        )
        sub.add_argument(
            "--overwrite", action="store_true", help="replace the runs of an earlier experiment"
        )
        sub.set_defaults(func=run_experiment)


def find_tile(tables, name: str, kind: str) -> int:
    """Index of the cornerstone (kind "cornerstone") or generation tile called ``name``."""
    decks = (K.DECK_CORNERSTONE,) if kind == "cornerstone" else GENERATION_DECKS
    names = {
        tables.tile_names[t]: t for t in range(tables.n_tiles) if tables.tiles[t, K.C_DECK] in decks
    }
    by_folded = {n.casefold(): t for n, t in names.items()}
    if name.casefold() in by_folded:
        return by_folded[name.casefold()]
    close = difflib.get_close_matches(name, list(names), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    what = "cornerstone" if kind == "cornerstone" else "generation tile"
    raise UserError(f"no {what} named {name!r} in catalogue {tables.name}{hint}")


def _deck_tiles(deck: int, n_players: int, tables, rules) -> np.ndarray:
    """The tiles of ``deck`` in play for this player count and variant (``build_deck``)."""
    from sim.neom import engine as E

    out = np.empty(tables.n_tiles, dtype=np.int64)
    return out[: E.build_deck(deck, n_players, tables.tiles, rules, out)]


def check_intervention(tables, tile: int, mode: str, seat: int, n_players: int, rules) -> None:
    """Raise a UserError when the intervention cannot be applied to every deal of the run."""
    from sim.neom import engine as E
    from sim.neom.records import MAX_PLAYERS

    name = tables.tile_names[tile]
    deck = int(tables.tiles[tile, K.C_DECK])
    if mode == "force" and not 0 <= seat < n_players:
        raise UserError(f"--seat {seat}: must be between 0 and {n_players - 1}")
    if deck != K.DECK_CORNERSTONE and n_players < 2:
        raise UserError(
            "generation tile experiments need 2 to 5 players (solo packs are not hands)"
        )
    in_play = _deck_tiles(deck, n_players, tables, rules)
    what = "the cornerstones" if deck == K.DECK_CORNERSTONE else f"the Generation {deck} deck"
    if tile not in in_play:
        raise UserError(f"{name!r} is not in {what} with {n_players} players in this variant")
    if mode != "ban":
        return
    if deck == K.DECK_CORNERSTONE:
        if in_play.size <= n_players * E.cornerstone_hand_size(n_players, rules):
            raise UserError(f"cannot ban a cornerstone with {n_players} players: all are dealt")
    elif (
        in_play.size <= E.HAND_SIZE * n_players
        and _deck_tiles(deck, MAX_PLAYERS, tables, rules).size == in_play.size
    ):
        raise UserError(
            f"cannot ban a generation tile with {n_players} players: the deck is dealt out exactly"
        )


def _config(args, out: Path, rules_options: dict | None = None):
    from sim.core import runner
    from sim.core.strategies import split_strategies

    strategies = split_strategies(args.strategies)
    return runner.RunConfig(
        out=out,
        strategies=strategies,
        players=args.players,
        games=args.games,
        seed=args.seed,
        data=Path(args.catalog) if args.catalog else None,
        workers=args.workers,
        overwrite=args.overwrite,
        progress=False,
        command="neom experiment",
        rules={"variant": K.VARIANT_NAMES[args.variant], **(rules_options or {})},
    )


def paired_rows(base, treated, subjects) -> list[dict]:
    """One result row per (label, polars filter on the baseline's seats) of ``subjects``: the
    paired differences in win share and total score between the ``treated`` and ``base`` seats
    (polars frames) of the same game."""
    from analysis.core.stats import paired_difference

    joined = base.join(treated, on=["game_id", "seat"], suffix="_x")
    rows = []
    for label, selector in subjects:
        pairs = joined.filter(selector)
        row = {"subject": label, "n": pairs.height}
        for key, column in (("win_share", "win_share"), ("score", "total")):
            before = pairs[column].to_numpy().astype(np.float64)
            after = pairs[f"{column}_x"].to_numpy().astype(np.float64)
            diff = paired_difference(after, before)
            row[f"{key}_baseline"] = float(before.mean()) if before.size else math.nan
            row[f"{key}_intervention"] = float(after.mean()) if after.size else math.nan
            row[f"{key}_diff"] = diff["mean"]
            row[f"{key}_lo"] = diff["lo"]
            row[f"{key}_hi"] = diff["hi"]
            row[f"{key}_p"] = diff["p"]
        rows.append(row)
    return rows


def _subjects(mode: str, seat: int, n_players: int, tile: int, is_cornerstone: bool):
    import polars as pl

    from analysis.neom.load import DRAFTED_COLUMNS

    if mode == "force":
        return [(f"seat {seat}", pl.col("seat") == seat)]
    subjects = [(f"seat {s}", pl.col("seat") == s) for s in range(n_players)]
    if is_cornerstone:
        # The seats that drafted the tile in the baseline lose it: the ban's direct effect.
        drafted = pl.any_horizontal(pl.col(c) == tile for c in DRAFTED_COLUMNS)
        subjects.append(("baseline drafters", drafted))
    return subjects


def _signed(x: float, digits: int) -> str:
    return "–" if math.isnan(x) else f"{x:+.{digits}f}"


def result_lines(result: dict) -> list[str]:
    """The result as a Markdown table (also printed)."""
    lines = [
        "| subject | pairs | win share base → with | Δ win share [95% CI] | score base → with "
        "| Δ score [95% CI] |",
        "|---|---:|---|---|---|---|",
    ]
    for r in result["rows"]:
        win = (
            f"{100 * r['win_share_diff']:+.1f} pts [{_signed(100 * r['win_share_lo'], 1)}, "
            f"{_signed(100 * r['win_share_hi'], 1)}]"
        )
        score = f"{r['score_diff']:+.2f} [{_signed(r['score_lo'], 2)}, {_signed(r['score_hi'], 2)}]"
        lines.append(
            f"| {r['subject']} | {r['n']} | {100 * r['win_share_baseline']:.1f}% → "
            f"{100 * r['win_share_intervention']:.1f}% | {win} | {r['score_baseline']:.1f} → "
            f"{r['score_intervention']:.1f} | {score} |"
        )
    return lines


def _markdown(result: dict) -> str:
    target = f" to seat {result['seat']}" if result["mode"] == "force" else ""
    lines = [
        f"# Experiment: {result['mode']} {result['kind']} {result['name']}{target}",
        "",
        f"- catalogue: {result['catalog']}"
        + (" (RECONSTRUCTED)" if result["reconstructed"] else ""),
        f"- players: {result['players']}, games: {result['games']}, seed: {result['seed']}, "
        f"variant: {result['variant']}",
        f"- strategies: {', '.join(result['strategies'])}",
        f"- runs: `{result['runs'][BASELINE]}`, `{result['runs'][INTERVENTION]}`",
        f"- games whose final scores changed: {result['games_changed']} of {result['games']}",
        "",
        "Paired differences (intervention minus baseline, same game and seat); 95% intervals "
        "are mean ± 1.96 standard errors of the per-game differences.",
        "",
        *result_lines(result),
    ]
    return "\n".join(lines) + "\n"


def run_experiment(args) -> int:
    import polars as pl

    from analysis.core.load import open_run
    from analysis.neom.load import DRAFTED_COLUMNS
    from sim.core import runner
    from sim.neom.catalog import load_catalog
    from sim.neom.tables import make_rules

    kind, mode = args.kind, args.mode
    if args.players not in range(1, 6):
        raise UserError(f"--players {args.players}: must be between 1 and 5")
    tables = load_catalog(Path(args.catalog) if args.catalog else None)
    tile = find_tile(tables, args.name, kind)
    name = tables.tile_names[tile]
    variant = K.VARIANT_NAMES[args.variant]
    check_intervention(tables, tile, mode, args.seat, args.players, make_rules(variant))
    slug = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
    out = Path(args.out) if args.out else Path("experiments") / f"{kind}-{slug}-{mode}"
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")

    runner.run_simulation(_config(args, out / BASELINE))
    intervention = (
        {"force_tile": tile, "force_seat": args.seat} if mode == "force" else {"ban_tile": tile}
    )
    runner.run_simulation(_config(args, out / INTERVENTION, intervention))

    outcome = ["game_id", "seat", "win_share", "total"]
    base = open_run(out / BASELINE).players.select(*outcome, *DRAFTED_COLUMNS).collect()
    treated = open_run(out / INTERVENTION).players.select(outcome).collect()
    subjects = _subjects(mode, args.seat, args.players, tile, kind == "cornerstone")
    changed = (
        base.join(treated, on=["game_id", "seat"], suffix="_x")
        .filter(pl.col("total") != pl.col("total_x"))["game_id"]
        .n_unique()
    )
    result = {
        "kind": kind,
        "name": name,
        "tile": tile,
        "mode": mode,
        "seat": args.seat if mode == "force" else None,
        "players": args.players,
        "games": args.games,
        "seed": args.seed,
        "variant": args.variant,
        "strategies": list(_config(args, out).strategies),
        "catalog": tables.name,
        "reconstructed": tables.reconstructed,
        "runs": {BASELINE: str(out / BASELINE), INTERVENTION: str(out / INTERVENTION)},
        "games_changed": changed,
        "rows": paired_rows(base, treated, subjects),
    }
    # NaN (an interval from fewer than two pairs) is not JSON: write null.
    rows = [{k: None if v != v else v for k, v in r.items()} for r in result["rows"]]
    text = json.dumps(result | {"rows": rows}, indent=2)
    (out / RESULT_JSON).write_text(text + "\n", encoding="utf-8")
    (out / RESULT_MD).write_text(_markdown(result), encoding="utf-8")
    print("\n".join(result_lines(result)))
    print(f"written: {out / RESULT_JSON}, {out / RESULT_MD}")
    return 0
