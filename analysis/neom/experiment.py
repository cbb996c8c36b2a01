"""``neom experiment cornerstone|tile NAME``: a paired interventional experiment.

The same games (master seed, game ids, seats) are played twice through the runner: a baseline
and a run with one intervention (rules options ``RO_FORCE_TILE``/``RO_FORCE_SEAT`` or
``RO_BAN_TILE``, applied after the deal; see ``sim.neom.engine.apply_interventions``). Force
gives the seat the tile for certain: a cornerstone is its first draft pick (always owned), a
generation tile its selection on the first turn of the tile's generation (it still chooses to
place or sell it); see ``sim.neom.engine.forced_choice`` and RULES.md X1. Game by game
the two runs differ only by the intervention, so the effect on a seat is the mean of its paired
differences in win share and score, with a 95% interval cluster-robust over deals.

What the experiment measures is reported with it: the tile's **presence** (per seat, the share
of games in which it drafted the cornerstone or selected the generation tile, and placed it,
in both runs), the effect on **every seat**, on the **holders** (the seats that held the tile
in the intervention run, against the same seats of the same games in the baseline), on the
**others** and on the **table** (all seats: win shares sum to one per game, so the table's
change is in score).
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
        help="paired experiment: force a tile on a seat (first draft pick / first selection of "
        "its generation) or ban it, same deals twice",
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
        sub.add_argument(
            "--seat", type=int, default=0,
            help="seat the tile is forced on: a cornerstone is its first draft pick, a "
            "generation tile its selection on the generation's first turn (0)",
        )  # fmt: skip
        sub.add_argument("--mode", choices=MODES, default="force")
        sub.add_argument("--seed", type=int, default=1)
        sub.add_argument("--catalog", default=None, help="catalogue file or a shipped one's "
                         "name (default, reconstruction_v1) (default: built-in)")  # fmt: skip
        sub.add_argument("--variant", default="standard", choices=sorted(K.VARIANT_NAMES))
        sub.add_argument("--workers", type=int, default=None, help="worker processes (all)")
        sub.add_argument(
            "--out", default=None, help="experiment folder (default: experiments/KIND-NAME-MODE)"
        )
        again = sub.add_mutually_exclusive_group()
        again.add_argument(
            "--overwrite",
            action="store_true",
            help="replace an earlier experiment (what its listing names) and the --json file",
        )
        again.add_argument(
            "--resume", action="store_true", help="continue an interrupted experiment"
        )
        sub.add_argument(
            "--json", default=None, metavar="FILE", help="also write the results as findings"
        )
        sub.add_argument(
            "--band", type=float, default=2.0,
            help="practical band, pct-pts of win share: a row is flagged only when its whole "
            "interval lies outside it (2)",
        )  # fmt: skip
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
        events=args.kind == "tile",  # who selected and placed a generation tile: the log
        out=out,
        strategies=strategies,
        players=args.players,
        games=args.games,
        seed=args.seed,
        data=Path(args.catalog) if args.catalog else None,
        workers=args.workers,
        resume=True,  # the experiment's listing decides what is continued (run_experiment)
        progress=False,
        command="neom experiment",
        rules={"variant": K.VARIANT_NAMES[args.variant], **(rules_options or {})},
    )


def _subject_stats(base, treated, subjects) -> dict:
    """The statistics of :func:`paired_rows` (mergeable over chunks of whole deals)."""
    import polars as pl

    from analysis.core.reduce import ClusterMoments, Sums

    joined = base.join(treated, on=["game_id", "seat"], suffix="_x")
    if "deal" not in joined.columns:
        joined = joined.with_columns(pl.col("game_id").alias("deal"))  # each game its own
    parts = [
        joined.filter(selector).select(
            pl.lit(label).alias("subject"),
            "deal",
            *(pl.col(c).cast(pl.Float64) for c in ("win_share", "win_share_x", "total", "total_x")),
        )
        for label, selector in subjects
    ]
    frame = pl.concat(parts).with_columns(
        (pl.col("win_share_x") - pl.col("win_share")).alias("win_share_d"),
        (pl.col("total_x") - pl.col("total")).alias("score_d"),
    )
    return {
        "means": Sums.of(
            frame,
            "subject",
            pl.len().alias("n"),
            *(pl.col(c).sum() for c in ("win_share", "win_share_x", "total", "total_x")),
        ),
        "win_share": ClusterMoments.of(frame, ["subject"], "win_share_d", None),
        "score": ClusterMoments.of(frame, ["subject"], "score_d", None),
    }


def _subject_rows(stats: dict, subjects) -> list[dict]:
    means = {r["subject"]: r for r in stats["means"].table().iter_rows(named=True)}
    diffs = {
        key: {r["subject"]: r for r in stats[key].effect_table(name="d").iter_rows(named=True)}
        for key in ("win_share", "score")
    }
    rows = []
    for label, _ in subjects:
        totals = means.get(label)
        n = int(totals["n"]) if totals else 0
        row = {"subject": label, "n": n}
        for key, column in (("win_share", "win_share"), ("score", "total")):
            diff = diffs[key].get(label, {})
            row[f"{key}_baseline"] = totals[column] / n if n else math.nan
            row[f"{key}_intervention"] = totals[f"{column}_x"] / n if n else math.nan
            for name, source in (("diff", "d"), ("lo", "d_lo"), ("hi", "d_hi"), ("p", "d_p0")):
                value = diff.get(source)
                row[f"{key}_{name}"] = math.nan if value is None else float(value)
        rows.append(row)
    return rows


def paired_rows(base, treated, subjects) -> list[dict]:
    """One result row per (label, polars filter on the joined seats) of ``subjects``: the
    paired differences in win share and total score between the ``treated`` and ``base`` seats
    (polars frames) of the same game, cluster-robust over ``deal`` when the frames have it
    (the treated frame's columns carry the suffix ``_x``)."""
    return _subject_rows(_subject_stats(base, treated, subjects), subjects)


def _subjects(mode: str, seat: int, n_players: int):
    """Every seat, then the holders (of the tile, in the run where the intervention gives it or
    the baseline where a ban takes it away), the other seats and the whole table."""
    import polars as pl

    subjects = [(f"seat {s}", pl.col("seat") == s) for s in range(n_players)]
    if mode == "force":
        subjects += [
            ("holders (intervention)", pl.col("held_x")),
            (f"others (not seat {seat})", pl.col("seat") != seat),
        ]
    else:
        subjects += [
            ("baseline holders", pl.col("held")),
            ("others (not baseline holders)", ~pl.col("held")),
        ]
    subjects.append(("table (every seat)", pl.lit(True)))
    return subjects


def holdings_of(players, events, deals, tile: int, kind: str):
    """Per (game, seat) of ``players``: ``held`` (drafted the cornerstone / selected the
    generation tile) and ``placed`` (placed it), with the seat's outcome and ``deal``
    (``deals``: game_id -> deal). Frames of a run (lazy) or of a chunk."""
    import polars as pl

    from analysis.neom.load import CS_GEN_COLUMNS, DRAFTED_COLUMNS
    from sim.neom.records import EV_CORNERSTONE, EV_PLACE, EV_SELECT

    seats = players.lazy().select("game_id", "seat", "win_share", "total", *DRAFTED_COLUMNS,
                                  *CS_GEN_COLUMNS).join(deals.lazy(), on="game_id")  # fmt: skip
    if kind == "cornerstone":
        held = pl.any_horizontal(pl.col(c) == tile for c in DRAFTED_COLUMNS)
        placed = pl.any_horizontal(
            (pl.col(d) == tile) & (pl.col(g) > 0)
            for d, g in zip(DRAFTED_COLUMNS, CS_GEN_COLUMNS, strict=True)
        )
        frame = seats.with_columns(held.alias("held"), placed.alias("placed"))
    else:
        marks = (
            events.lazy()
            .filter(pl.col("tile") == tile)
            .select("game_id", pl.col("player").cast(pl.Int32).alias("seat"), "kind")
            .group_by("game_id", "seat")
            .agg(
                (pl.col("kind") == EV_SELECT).any().alias("held"),
                pl.col("kind").is_in([EV_PLACE, EV_CORNERSTONE]).any().alias("placed"),
            )
        )
        frame = (
            seats.with_columns(pl.col("seat").cast(pl.Int32))
            .join(marks, on=["game_id", "seat"], how="left")
            .with_columns(pl.col("held", "placed").fill_null(False))
        )
    return frame.drop(*DRAFTED_COLUMNS, *CS_GEN_COLUMNS).collect()


def holdings(run, tile: int, kind: str):
    """:func:`holdings_of` the whole run."""
    from analysis.core.tabulate import deals

    return holdings_of(run.players, run.events, deals(run), tile, kind)


def _presence_stats(frame, side: str) -> dict:
    import polars as pl

    from analysis.core.reduce import Sums

    held, placed = pl.col("held").cast(pl.Int64), pl.col("placed").cast(pl.Int64)
    any_seat = frame.group_by("game_id").agg(pl.col("held").any(), pl.col("placed").any())
    return {
        f"{side}.seats": Sums.of(frame, "seat", pl.len().alias("n"), held.sum(), placed.sum()),
        f"{side}.games": Sums.of(any_seat, (), pl.len().alias("n"), held.sum(), placed.sum()),
    }


def _presence_rows(stats: dict, n_players: int) -> list[dict]:
    def shares(side) -> dict:
        out = {
            f"seat {int(r['seat'])}": (r["held"] / r["n"], r["placed"] / r["n"])
            for r in stats[f"{side}.seats"].table().iter_rows(named=True)
        }
        games = stats[f"{side}.games"].table().row(0, named=True)
        out["any seat"] = (games["held"] / games["n"], games["placed"] / games["n"])
        return out

    before, after = shares("base"), shares("treated")
    rows = []
    for label in [f"seat {s}" for s in range(n_players)] + ["any seat"]:
        rows.append(
            {
                "subject": label,
                "held_baseline": float(before[label][0]),
                "held_intervention": float(after[label][0]),
                "placed_baseline": float(before[label][1]),
                "placed_intervention": float(after[label][1]),
            }
        )
    return rows


def presence(base, treated, n_players: int) -> list[dict]:
    """Per seat, and for any seat: the share of games in which it held the tile (drafted the
    cornerstone / selected the generation tile) and placed it, in both runs."""
    stats = _presence_stats(base, "base") | _presence_stats(treated, "treated")
    return _presence_rows(stats, n_players)


def _changed_stats(base, treated) -> dict:
    import polars as pl

    from analysis.core.reduce import Sums

    changed = base.join(treated, on=["game_id", "seat"], suffix="_x").filter(
        pl.col("total") != pl.col("total_x")
    )
    return {"changed": Sums.of(changed, (), pl.col("game_id").n_unique().alias("games"))}


def _experiment_reduce(chunks, tile: int, kind: str, mode: str, seat: int, n_players: int):
    """Twin chunks of the baseline and the intervention run: everything the result reads."""
    from analysis.core.tabulate import chunk_deals

    base, treated = (
        holdings_of(c.players, c.events, c.memo(chunk_deals), tile, kind) for c in chunks
    )
    subjects = _subjects(mode, seat, n_players)
    return (
        _subject_stats(base, treated.drop("deal"), subjects)
        | _presence_stats(base, "base")
        | _presence_stats(treated, "treated")
        | _changed_stats(base, treated)
    )


def analyse_experiment(base_run, treated_run, tile, kind, mode, seat, n_players, execution=None):
    """The experiment's rows, presence and changed games, both runs read chunk by chunk side
    by side."""
    import functools

    from analysis.core.batches import Reduction, analyse

    reduce = functools.partial(
        _experiment_reduce, tile=tile, kind=kind, mode=mode, seat=seat, n_players=n_players
    )
    reduction = Reduction(f"neom.experiment|{kind}|{tile}|{mode}|{seat}", reduce)
    stats = analyse((base_run, treated_run), [reduction], execution)[reduction.name]
    subjects = _subjects(mode, seat, n_players)
    return (
        _subject_rows(stats, subjects),
        _presence_rows(stats, n_players),
        int(stats["changed"].value("games")),
    )


def _signed(x: float, digits: int) -> str:
    return "–" if math.isnan(x) else f"{x:+.{digits}f}"


def result_lines(result: dict) -> list[str]:
    """The result as Markdown tables (also printed): the tile's presence, then the effects."""
    lines = [
        "| seat | holds it: baseline → intervention | places it: baseline → intervention |",
        "|---|---|---|",
    ]
    for r in result["presence"]:
        lines.append(
            f"| {r['subject']} | {100 * r['held_baseline']:.1f}% → "
            f"{100 * r['held_intervention']:.1f}% | {100 * r['placed_baseline']:.1f}% → "
            f"{100 * r['placed_intervention']:.1f}% |"
        )
    lines += [
        "",
        "| subject | pairs | win share base → with | Δ win share [95% CI] | flag "
        "| score base → with | Δ score (VP) [95% CI] |",
        "|---|---:|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        win = (
            f"{_signed(100 * r['win_share_diff'], 1)} [{_signed(100 * r['win_share_lo'], 1)}, "
            f"{_signed(100 * r['win_share_hi'], 1)}] pct-pts"
        )
        score = (
            f"{_signed(r['score_diff'], 2)} [{_signed(r['score_lo'], 2)}, "
            f"{_signed(r['score_hi'], 2)}]"
        )
        lines.append(
            f"| {r['subject']} | {r['n']} | {_pct(r['win_share_baseline'])} → "
            f"{_pct(r['win_share_intervention'])} | {win} | {r.get('flag') or ''} | "
            f"{_num(r['score_baseline'])} → {_num(r['score_intervention'])} | {score} |"
        )
    return lines


def _pct(x) -> str:
    return "–" if x is None or x != x else f"{100 * x:.1f}%"


def _num(x) -> str:
    return "–" if x is None or x != x else f"{x:.1f}"


def _markdown(result: dict) -> str:
    target = f" to seat {result['seat']}" if result["mode"] == "force" else ""
    lines = [
        f"# Experiment: {result['mode']} {result['kind']} {result['name']}{target}",
        "",
        f"- catalogue: {result['catalog']}"
        + (" (RECONSTRUCTED: not the published game's data)" if result["reconstructed"] else ""),
        f"- players: {result['players']}, games: {result['games']}, seed: {result['seed']}, "
        f"variant: {result['variant']}",
        f"- strategies: {', '.join(result['strategies'])}",
        f"- runs: `{result['runs'][BASELINE]}`, `{result['runs'][INTERVENTION]}`",
        f"- games whose final scores changed: {result['games_changed']} of {result['games']}",
        "",
        (
            f"Force: seat {result['seat']} takes the tile for certain (a cornerstone as its "
            "first draft pick; a generation tile as its selection on the first turn of the "
            "tile's generation, then placed or sold as the seat chooses), so its holding is "
            "100% in the intervention run.\n\n"
            if result["mode"] == "force"
            else ""
        )
        + "Presence: the share of games in which each seat held the tile (drafted the "
        "cornerstone, or selected the generation tile) and placed it. Effects: paired "
        "differences (intervention minus baseline, same game and seat); 95% intervals are "
        "cluster-robust over deals (Student t). Holders: the seats that held the tile in the "
        "intervention run (force) or the baseline (ban); the table: every seat (win shares "
        f"sum to one per game, so its change is in score). Flag: the whole interval outside "
        f"±{100 * result['band']:g} pct-pts.",
        "",
        *result_lines(result),
    ]
    return "\n".join(lines) + "\n"


def findings(result: dict) -> list[dict]:
    """The rows as findings.json objects (issue 19's shape) plus ``subject``: metric
    ``win_share_paired_diff`` (a fraction) and ``score_paired_diff`` (VP)."""
    from analysis.core.report import clean

    out = []
    for r in result["rows"]:
        for metric, key in (("win_share_paired_diff", "win_share"), ("score_paired_diff", "score")):
            item = {
                "kind": result["kind"], "name": result["name"], "metric": metric,
                "effect": clean(r[f"{key}_diff"]), "lo": clean(r[f"{key}_lo"]),
                "hi": clean(r[f"{key}_hi"]), "n": r["n"],
                "flag": (r.get("flag") or None) if key == "win_share" else None,
                "subject": r["subject"],
            }  # fmt: skip
            if result["reconstructed"]:
                item["data"] = result["catalog_label"]
            out.append(item)
    return out


def experiment_parameters(args, catalog_digest: str) -> dict:
    """Everything an experiment's result depends on, by option (its listing's parameters)."""
    from sim.core.strategies import split_strategies

    return {
        "KIND": args.kind,
        "NAME": args.name,
        "--mode": args.mode,
        "--seat": args.seat,
        "--players": args.players,
        "--games": args.games,
        "--strategies": list(split_strategies(args.strategies)),
        "--seed": args.seed,
        "--catalog": catalog_digest,
        "--variant": args.variant,
        "--band": args.band,
    }


def run_experiment(args) -> int:
    import sys

    from sim.core import runner
    from sim.core.commands.options import check_players
    from sim.core.outputs import (
        check_outside,
        claim_file,
        claim_folder,
        publish,
        staging_folder,
        write_file,
        writer_lock,
    )
    from sim.neom.catalog import load_catalog
    from sim.neom.tables import make_rules

    kind, mode = args.kind, args.mode
    check_players(args.players)
    if not 0.0 <= args.band < 100.0:
        raise UserError(f"--band {args.band}: must be between 0 and 100 pct-pts")
    tables = load_catalog(Path(args.catalog) if args.catalog else None)
    tile = find_tile(tables, args.name, kind)
    name = tables.tile_names[tile]
    variant = K.VARIANT_NAMES[args.variant]
    check_intervention(tables, tile, mode, args.seat, args.players, make_rules(variant))
    slug = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
    out = Path(args.out) if args.out else Path("experiments") / f"{kind}-{slug}-{mode}"
    # Checked before any game; a resumed result's is checked once it is known to be played.
    json_path = None
    if args.json:
        check_outside(args.json, "--json", out)
    if args.json and not args.resume:
        json_path = claim_file(args.json, "--json", args.overwrite)
    intervention = (
        {"force_tile": tile, "force_seat": args.seat} if mode == "force" else {"ban_tile": tile}
    )
    configs = [_config(args, out / BASELINE), _config(args, out / INTERVENTION, intervention)]
    for config in configs:
        runner.make_plan(config)  # every option checked before the folder is claimed
    command = "neom experiment"
    parameters = experiment_parameters(args, tables.digest)

    def claim():
        return claim_folder(
            out,
            command,
            overwrite=args.overwrite,
            resume=args.resume,
            parameters=parameters,
            runs=(BASELINE, INTERVENTION),
        )

    with writer_lock(out, command, "experiment folder", check=claim) as claimed:
        if claimed.state == "complete":
            print(
                f"neom: note: {out}: the experiment is already complete; nothing to do",
                file=sys.stderr,
            )
            print(f"written: {out / RESULT_JSON}, {out / RESULT_MD}")
            return 0
        if args.json and args.resume:
            json_path = claim_file(args.json, "--json")
        for config in configs:
            runner.run_simulation(config)
        result = _result(args, tables, tile, out)
        with staging_folder(out) as staging:
            # NaN (an interval from fewer than two pairs) is not JSON: write null.
            clean = [{k: None if v != v else v for k, v in r.items()} for r in result["rows"]]
            text = json.dumps(result | {"rows": clean}, indent=2)
            (staging / RESULT_JSON).write_text(text + "\n", encoding="utf-8")
            (staging / RESULT_MD).write_text(_markdown(result), encoding="utf-8")
            publish(staging, claimed)
        if json_path is not None:
            write_file(json_path, json.dumps(findings(result), indent=1) + "\n", "--json")
    print("\n".join(result_lines(result)))
    print(
        f"written: {out / RESULT_JSON}, {out / RESULT_MD}" + (f", {args.json}" if args.json else "")
    )
    return 0


def _result(args, tables, tile: int, out: Path) -> dict:
    """The experiment's result from its two run folders."""
    from analysis.core.batches import Execution
    from analysis.core.load import open_run

    kind, mode, name = args.kind, args.mode, tables.tile_names[tile]

    base_run, treated_run = open_run(out / BASELINE), open_run(out / INTERVENTION)
    rows, present, changed = analyse_experiment(
        base_run, treated_run, tile, kind, mode, args.seat, args.players,
        Execution(workers=args.workers),
    )  # fmt: skip
    band = args.band / 100.0
    for row in rows:
        lo, hi = row["win_share_lo"], row["win_share_hi"]
        row["flag"] = "strong" if lo > band else "weak" if hi < -band else ""
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
        "catalog_label": str(base_run.manifest["data"].get("label", tables.name)),
        "reconstructed": tables.reconstructed,
        "band": band,
        "runs": {BASELINE: str(out / BASELINE), INTERVENTION: str(out / INTERVENTION)},
        "games_changed": changed,
        "presence": present,
        "rows": rows,
    }
    return result
