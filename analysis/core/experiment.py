"""``neom experiment KIND NAME``: a paired interventional experiment, for every game whose
engine can force or ban an item.

The same games (master seed, game ids, seats) are played twice through the runner: a baseline
and a run with one intervention (rules entries the game names, applied after the deal). Game by
game the two runs differ only by the intervention, so the effect on a seat is the mean of its
paired differences in win share and score, with a 95% interval cluster-robust over deals.

What the experiment measures is reported with it: the item's **presence** (per seat, the share
of games in which it held the item and placed it, in both runs), the effect on **every seat**,
on the **holders** (the seats that held it in the intervention run, against the same seats of
the same games in the baseline), on the **others** and on the **table** (all seats: win shares
sum to one per game, so the table's change is in score).

What is generic lives here: the command, the two runs, the paired statistics, presence and the
result's files. A game supplies an :class:`Experimenting` (``Game.experiment_ref``): its kinds
of item, how a name is found, which interventions its engine can apply, and who held the item
in a game. A game without one is refused in one line.
"""

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sim.core.errors import UserError

MODES = ("force", "ban")
BASELINE = "baseline"
INTERVENTION = "intervention"
RESULT_JSON = "experiment.json"
RESULT_MD = "experiment.md"


@dataclass(frozen=True)
class Experimenting:
    """What a game supplies to ``neom experiment`` (``Game.experiment_ref`` names it).

    ``kinds``: (kind, what it is in words) for each kind of item. ``options``: the game's own
    options (flag, argparse keywords), offered on every kind and refused for another game.
    ``find(data, name, kind)``: the item's index (UserError naming close matches);
    ``item_name(data, item)``: its name as the data spells it. ``check(data, item, mode,
    args)``: UserError when the intervention cannot be applied to every deal.
    ``interventions(mode, item, seat)``: the rules entries of it. ``shared_rules(args)``: the
    rules both runs play with; ``parameters(args, data_digest)``: the game's entries in the
    experiment's listing; ``result_entries(args)``: its entries in ``experiment.json``.
    ``events(kind)``: whether the runs record events. ``holdings_of(players, events, deals,
    item, kind)``: per (game, seat), ``held`` and ``placed`` with the seat's ``win_share``,
    ``total`` and ``deal``. ``force_words``: how force gives the item, in the result's
    Markdown (``{seat}`` replaced); ``presence_words``: what holding it means; ``item_noun``:
    the item in words."""

    kinds: tuple[tuple[str, str], ...]
    find: Callable
    item_name: Callable
    check: Callable
    interventions: Callable
    holdings_of: Callable
    events: Callable[[str], bool]
    force_words: str
    presence_words: str
    item_noun: str = "item"
    options: tuple[tuple[str, dict], ...] = ()
    shared_rules: Callable[[object], dict] = lambda args: {}
    parameters: Callable[[object, str], dict] = lambda args, digest: {}
    result_entries: Callable[[object], dict] = lambda args: {}


def find_by_name(names, name: str, missing: str) -> int:
    """``names`` (name -> index) looked up without regard to case; else a UserError
    ``missing`` (what was not found, e.g. "no tile named 'X' in catalogue Y") naming up to
    three close names (each game's ``Experimenting.find``)."""
    import difflib

    by_folded = {n.casefold(): i for n, i in names.items()}
    if name.casefold() in by_folded:
        return by_folded[name.casefold()]
    close = difflib.get_close_matches(name, list(names), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise UserError(missing + hint)


def experimenting(game) -> Experimenting:
    """The game's :class:`Experimenting`; one line when its engine has no interventions."""
    from sim.core.commands.options import game_part

    return game_part(
        game,
        "experiment_ref",
        f"neom experiment: --game {game.name}: {game.title}'s engine cannot force or ban an "
        f"item (it has no intervention hook); compare two {game.data_noun}s or rules readings "
        f"instead: neom compare --game {game.name}",
    )


def register(parser) -> None:
    from sim.core.commands import options

    parser.description = (
        "Play the same deals with and without an intervention on one item and "
        "report the paired difference in win share and score."
    )
    kinds: dict[str, list[str]] = {}
    sides = options.game_parts("experiment_ref")
    for _, side in sides:
        for kind, what in side.kinds if side else ():
            kinds.setdefault(kind, []).append(what)
    sub_kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")
    for kind, whats in kinds.items():
        what = " / ".join(dict.fromkeys(whats))
        sub = sub_kinds.add_parser(kind, help=f"intervene on {what}")
        sub.add_argument("name", help=f"name of {what} in the game's data")
        options.add_game_option(sub)
        options.add_run_options(sub, games={"help": "games per run (2000)"})
        sub.add_argument(
            "--seat", type=int, default=0,
            help="seat the item is forced on (NEOM: a cornerstone is its first draft pick, a "
            "generation tile its selection on the generation's first turn) (0)",
        )  # fmt: skip
        # Checked in run_experiment: a wrong mode is one line and exit 1 like any bad input.
        sub.add_argument("--mode", default="force", metavar="{force,ban}", help="(force)")
        options.add_part_options(sub, sides)
        sub.add_argument(
            "--out", default=None, help="experiment folder (default: experiments/KIND-NAME-MODE)"
        )
        options.add_again_options(sub, "experiment")
        sub.add_argument(
            "--json", default=None, metavar="FILE", help="also write the results as findings"
        )
        sub.add_argument(
            "--band", type=float, default=2.0,
            help="practical band, pct-pts of win share: a row is flagged only when its whole "
            "interval lies outside it (2)",
        )  # fmt: skip
        sub.set_defaults(func=run_experiment)


# --- the paired statistics ----------------------------------------------------------------------


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


def subjects_of(mode: str, seat: int, n_players: int):
    """Every seat, then the holders (of the item, in the run where the intervention gives it
    or the baseline where a ban takes it away), the other seats and the whole table."""
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
    """Per seat, and for any seat: the share of games in which it held the item and placed
    it, in both runs."""
    stats = _presence_stats(base, "base") | _presence_stats(treated, "treated")
    return _presence_rows(stats, n_players)


def _changed_stats(base, treated) -> dict:
    import polars as pl

    from analysis.core.reduce import Sums

    changed = base.join(treated, on=["game_id", "seat"], suffix="_x").filter(
        pl.col("total") != pl.col("total_x")
    )
    return {"changed": Sums.of(changed, (), pl.col("game_id").n_unique().alias("games"))}


def holdings(run, item: int, kind: str):
    """The game's ``holdings_of`` the whole run."""
    from analysis.core.tabulate import deals

    side = experimenting(run.game)
    return side.holdings_of(run.players, run.events, deals(run), item, kind)


def _experiment_reduce(chunks, game: str, item: int, kind: str, mode: str, seat: int,
                       n_players: int):  # fmt: skip
    """Twin chunks of the baseline and the intervention run: everything the result reads
    (``game`` by name: a worker resolves the game's part itself)."""
    from analysis.core.tabulate import chunk_deals
    from sim.core.registry import get_game

    side = experimenting(get_game(game))
    base, treated = (
        side.holdings_of(c.players, c.events, c.memo(chunk_deals), item, kind) for c in chunks
    )
    subjects = subjects_of(mode, seat, n_players)
    return (
        _subject_stats(base, treated.drop("deal"), subjects)
        | _presence_stats(base, "base")
        | _presence_stats(treated, "treated")
        | _changed_stats(base, treated)
    )


def analyse_experiment(base_run, treated_run, item, kind, mode, seat, n_players, execution=None):
    """The experiment's rows, presence and changed games, both runs read chunk by chunk side
    by side."""
    import functools

    from analysis.core.batches import Reduction, analyse

    game = base_run.game.name
    reduce = functools.partial(
        _experiment_reduce, game=game, item=item, kind=kind, mode=mode, seat=seat,
        n_players=n_players,
    )  # fmt: skip
    reduction = Reduction(f"{game}.experiment|{kind}|{item}|{mode}|{seat}", reduce)
    stats = analyse((base_run, treated_run), [reduction], execution)[reduction.name]
    subjects = subjects_of(mode, seat, n_players)
    return (
        _subject_rows(stats, subjects),
        _presence_rows(stats, n_players),
        int(stats["changed"].value("games")),
    )


# --- the result ---------------------------------------------------------------------------------


def _signed(x: float, digits: int) -> str:
    return "–" if math.isnan(x) else f"{x:+.{digits}f}"


def _pct(x) -> str:
    return "–" if x is None or x != x else f"{100 * x:.1f}%"


def _num(x) -> str:
    return "–" if x is None or x != x else f"{x:.1f}"


def result_lines(result: dict, unit: str) -> list[str]:
    """The result as Markdown tables (also printed): the item's presence, then the effects
    (scores in ``unit``, the game's ``score_unit``)."""
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
        f"| score base → with | Δ score ({unit}) [95% CI] |",
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


def _markdown(result: dict, game, side: Experimenting) -> str:
    target = f" to seat {result['seat']}" if result["mode"] == "force" else ""
    lines = [
        f"# Experiment: {result['mode']} {result['kind']} {result['name']}{target}",
        "",
        f"- {game.data_noun}: {result['catalog']}"
        + (" (RECONSTRUCTED: not the published game's data)" if result["reconstructed"] else ""),
        f"- players: {result['players']}, games: {result['games']}, seed: {result['seed']}"
        + (f", variant: {result['variant']}" if "variant" in result else ""),
        f"- strategies: {', '.join(result['strategies'])}",
        f"- runs: `{result['runs'][BASELINE]}`, `{result['runs'][INTERVENTION]}`",
        f"- games whose final scores changed: {result['games_changed']} of {result['games']}",
        "",
        (side.force_words.format(seat=result["seat"]) + "\n\n" if result["mode"] == "force" else "")
        + f"Presence: {side.presence_words} Effects: paired "
        "differences (intervention minus baseline, same game and seat); 95% intervals are "
        "cluster-robust over deals (Student t). Holders: the seats that held the "
        f"{side.item_noun} in the "
        "intervention run (force) or the baseline (ban); the table: every seat (win shares "
        f"sum to one per game, so its change is in score). Flag: the whole interval outside "
        f"±{100 * result['band']:g} pct-pts.",
        "",
        *result_lines(result, game.score_unit),
    ]
    return "\n".join(lines) + "\n"


def findings(result: dict) -> list[dict]:
    """The rows as findings.json objects (issue 19's shape) plus ``subject``: metric
    ``win_share_paired_diff`` (a fraction) and ``score_paired_diff`` (the game's score unit)."""
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


def experiment_parameters(args, side: Experimenting, data_digest: str) -> dict:
    """Everything an experiment's result depends on, by option (its listing's parameters)."""
    from sim.core.commands.options import run_parameters

    return {
        "KIND": args.kind,
        "NAME": args.name,
        "--mode": args.mode,
        "--seat": args.seat,
        **run_parameters(args),
        **side.parameters(args, data_digest),
        "--band": args.band,
    }


def _config(args, game, side: Experimenting, data, out: Path, interventions: dict | None = None):
    from sim.core import runner
    from sim.core.strategies import split_strategies

    return runner.RunConfig(
        game=game.name,
        events=side.events(args.kind),
        out=out,
        strategies=split_strategies(args.strategies),
        players=args.players,
        games=args.games,
        seed=args.seed,
        data=data,
        workers=args.workers,
        resume=True,  # the experiment's listing decides what is continued (run_experiment)
        progress=False,
        command="neom experiment",
        rules={**side.shared_rules(args), **(interventions or {})},
    )


def run_experiment(args) -> int:
    from analysis.core.commands import claim_json, play_into_folder
    from sim.core import runner
    from sim.core.commands.options import check_players, refuse_other_parts
    from sim.core.registry import get_game

    game = get_game(args.game)
    side = experimenting(game)
    refuse_other_parts(args, game, "experiment_ref", "neom experiment")
    if args.kind not in dict(side.kinds):
        raise UserError(
            f"neom experiment {args.kind}: not a kind of item of --game {game.name} "
            f"({', '.join(k for k, _ in side.kinds)})"
        )
    kind, mode = args.kind, args.mode
    if mode not in MODES:
        raise UserError(f"--mode {mode!r}: expected {' or '.join(MODES)}")
    check_players(args.players)
    if not 0.0 <= args.band < 100.0:
        raise UserError(f"--band {args.band}: must be between 0 and 100 pct-pts")
    data_path = getattr(args, game.data_flag.lstrip("-").replace("-", "_"), None)
    data = game.load_data(Path(data_path) if data_path else None)
    item = side.find(data, args.name, kind)
    name = side.item_name(data, item)
    side.check(data, item, mode, args)
    slug = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
    out = Path(args.out) if args.out else Path("experiments") / f"{kind}-{slug}-{mode}"
    json_path = claim_json(args, out)
    intervention = side.interventions(mode, item, args.seat)
    path = Path(data_path) if data_path else None
    configs = [
        _config(args, game, side, path, out / BASELINE),
        _config(args, game, side, path, out / INTERVENTION, intervention),
    ]
    for config in configs:
        runner.make_plan(config)  # every option checked before the folder is claimed
    parameters = experiment_parameters(args, side, data.digest)
    results = []

    def write(staging: Path) -> str:
        result = _result(args, game, side, data, item, name, out)
        results.append(result)
        # NaN (an interval from fewer than two pairs) is not JSON: write null.
        clean = [{k: None if v != v else v for k, v in r.items()} for r in result["rows"]]
        text = json.dumps(result | {"rows": clean}, indent=2)
        (staging / RESULT_JSON).write_text(text + "\n", encoding="utf-8")
        (staging / RESULT_MD).write_text(_markdown(result, game, side), encoding="utf-8")
        return json.dumps(findings(result), indent=1) + "\n"

    runs = (BASELINE, INTERVENTION)
    if not play_into_folder(args, out, json_path, "neom experiment", "experiment", parameters,
                            runs, configs, write):  # fmt: skip
        print(f"written: {out / RESULT_JSON}, {out / RESULT_MD}")
        return 0
    (result,) = results
    print("\n".join(result_lines(result, game.score_unit)))
    print(
        f"written: {out / RESULT_JSON}, {out / RESULT_MD}" + (f", {args.json}" if args.json else "")
    )
    return 0


def _result(args, game, side: Experimenting, data, item: int, name: str, out: Path) -> dict:
    """The experiment's result from its two run folders."""
    from analysis.core.batches import Execution
    from analysis.core.load import open_run

    kind, mode = args.kind, args.mode
    base_run, treated_run = open_run(out / BASELINE), open_run(out / INTERVENTION)
    rows, present, changed = analyse_experiment(
        base_run, treated_run, item, kind, mode, args.seat, args.players,
        Execution(workers=args.workers),
    )  # fmt: skip
    band = args.band / 100.0
    for row in rows:
        lo, hi = row["win_share_lo"], row["win_share_hi"]
        row["flag"] = "strong" if lo > band else "weak" if hi < -band else ""
    return {
        "kind": kind,
        "name": name,
        "tile": item,
        "mode": mode,
        "seat": args.seat if mode == "force" else None,
        "players": args.players,
        "games": args.games,
        "seed": args.seed,
        **side.result_entries(args),
        "strategies": list(_config(args, game, side, None, out).strategies),
        "catalog": data.name,
        "catalog_label": str(base_run.manifest["data"].get("label", data.name)),
        "reconstructed": data.reconstructed,
        "band": band,
        "runs": {BASELINE: str(out / BASELINE), INTERVENTION: str(out / INTERVENTION)},
        "games_changed": changed,
        "presence": present,
        "rows": rows,
    }
