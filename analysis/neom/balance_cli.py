"""NEOM's part of ``neom balance`` (:mod:`analysis.core.balance`, ``Game.balance_ref``):
``neom balance NAME`` and ``neom balance --all``, the command line of the balance search
(``analysis.neom.balance``, ``analysis.neom.balance_all``)."""

import json
import math
import tempfile
import time
import tomllib
from contextlib import contextmanager
from pathlib import Path

from analysis.core.balance import Balancing
from analysis.neom.balance_fields import DEFAULT_FIELD, field_label, resolve_field
from sim.core.errors import UserError
from sim.neom.constants import VARIANT_NAMES

ITEM_GAMES = 2000  # games per candidate of a one-item search
ALL_GAMES = 4000  # games per evaluation of a whole-catalogue pass
DEFAULT_GOALS = "cornerstones,tiles,dead,goods"


def _options(add) -> None:
    """NEOM's own options of ``neom balance`` (the generic command adds the shared ones)."""
    add("--all", action="store_true", help="a whole-catalogue pass")
    add("--catalog", default=None, help="catalogue file or a shipped one's name (default, "
                        "reconstruction_v1, reconstruction_v2) (default: built-in)")  # fmt: skip
    add(
        "--strategy-file",
        type=Path,
        default=None,
        help="TOML file of named parameter sets usable in --strategies",
    )
    add("--variant", default="standard", choices=tuple(VARIANT_NAMES))
    add("--backend", choices=("local", "dask"), default="local")
    add("--scheduler", default=None, help="Dask scheduler address")
    add(
        "--relative-to", choices=("median", "expected"), default="median",
        help="a cornerstone's effect: against the median cornerstone (the report's vs_median) "
        "or against its drafters' expected share (the report's flagged effect) (median)",
    )  # fmt: skip
    add(
        "--also-field", action="append", default=None, metavar="FIELD",
        help="a further field every candidate is judged in (repeatable): strategies as in "
        "--strategies, a named field (strong) or archetype (make run's field, the default "
        "--strategies). --all: the search moves by the sum of every field's errors; an edit "
        "is kept only if, in every field, its item does not end flagged the other way and it "
        "flags no other item beyond the band; the fresh-deal check and the patch's figures are "
        "given per field. NAME: the search is --strategies' field's, and each suggestion is "
        "played on the fresh deals of every field and said accepted or not by the same rule",
    )  # fmt: skip
    add("--out", default=None, help="--all: output folder (balance/all)")
    add("--resume", action="store_true", help="--all: continue a pass")
    add(
        "--intended", default="", metavar="NAME,...",
        help="--all: tiles meant to be rarely or never placed (not counted as dead)",
    )  # fmt: skip
    add(
        "--goals", default=DEFAULT_GOALS, metavar="GOAL,...",
        help="--all: which goals to pursue (cornerstones: in the band against the median and "
        "not flagged; tiles: not flagged; dead: placed; goods: every good produced by some "
        "city in 5%% of games; usage: every cornerstone kept and built at its floors, "
        "--kept-floor, --built-floor) (the first four)",
    )  # fmt: skip
    add(
        "--prune-evals", type=int, default=None, metavar="N",
        help="--all: after the search, undo each edit in turn and keep it undone when the goals "
        "still hold (N: at most N tries; 0: no pruning; default: every edit)",
    )  # fmt: skip
    add(
        "--per-round",
        type=int,
        default=0,
        metavar="K",
        help="--all, coordinate: items moved in the first round, furthest from their goal "
        "first, halved after a round that made the loss worse (0: every off-goal item)",
    )
    add(
        "--items", default="", metavar="NAME,...",
        help="--all: work only on these items (tiles, cornerstones, goods as 'Gold'); every "
        "other item is watched: an edit that flags it is rejected",
    )  # fmt: skip
    add(
        "--flagged", action="store_true",
        help="--all: work only on what the report flags on the catalogue as it is "
        "(cornerstones and tiles; with --items, those too)",
    )  # fmt: skip
    add(
        "--structural", action="store_true",
        help="--all: allow structural edits (removing a required good or tile from a tile "
        "that consumes it); without it a chain is repaired at its producers or left not fixed",
    )  # fmt: skip
    add(
        "--goal", choices=("effect", "usage"), default="effect",
        help="NAME: the goal of the search: its effect inside the band (effect), or its usage "
        "floors met (usage: kept when offered and built when taken; moves only the item's own "
        "levers that make it attractive) (effect)",
    )  # fmt: skip
    add("--kept-floor", type=float, default=25.0, metavar="PCT",
                        help="--goal usage: share of offers that keep it, pct (25)")  # fmt: skip
    add("--built-floor", type=float, default=50.0, metavar="PCT",
                        help="--goal usage: share of takers who build it, pct (50)")  # fmt: skip
    add("--optimizer", choices=("coordinate", "optuna", "both"),
                        default="coordinate", help="--all: the search (coordinate)")  # fmt: skip


def run(args) -> int:
    args.strategies = resolve_field(args.strategies or DEFAULT_FIELD)
    args.also_field = [resolve_field(f) for f in args.also_field or ()]
    if args.games is None:
        args.games = ALL_GAMES if args.all else ITEM_GAMES
    if args.all:
        if args.name:
            raise UserError("give either NAME or --all, not both")
        if args.json or args.work:
            # The pass writes its result and keeps its runs in --out, so these would be
            # silently ignored.
            raise UserError(
                "--json and --work belong to neom balance NAME; --all writes its result, "
                "log and runs into --out"
            )
        from analysis.neom.balance_all import run_all

        if args.goal != "effect":
            raise UserError("--goal belongs to neom balance NAME; --all: --goals ...,usage")

        return run_all(args)
    if not args.name:
        raise UserError("give the NAME of a tile, cornerstone or Disaster, or --all")
    if (args.resume or args.out or args.intended or args.optimizer != "coordinate"
            or args.goals != DEFAULT_GOALS or args.per_round != 0
            or args.prune_evals is not None):  # fmt: skip
        raise UserError(
            "--out, --resume, --intended, --goals, --per-round, --prune-evals and --optimizer "
            "belong to --all"
        )
    if args.items or args.flagged or args.structural:
        raise UserError("--items, --flagged and --structural belong to --all")
    if args.goal == "usage" and args.relative_to != "median":
        raise UserError("--relative-to belongs to --goal effect")
    return run_item(args)


def run_item(args) -> int:
    from analysis.neom import balance as B
    from sim.core.outputs import claim_file, write_file

    setting = B.setting_from(args)
    json_path = claim_file(args.json, "--json", args.overwrite) if args.json else None
    text, source, data = B.base_catalog(args.catalog)
    item, kind, levers = B.item_levers(tomllib.loads(text), args.name, args.variant)
    if setting.goal == "usage":
        if kind == "disaster":
            raise UserError(f"--goal usage: {item} is a Disaster (taken, never used)")
        levers = B.attractive_levers(levers)
    levers = B.pick_levers(levers, args.lever)
    max_evals = B.DEFAULT_MAX_EVALS if args.max_evals is None else args.max_evals
    if max_evals < 1:
        raise UserError(f"--max-evals {max_evals}: at least 1")
    verify_games = args.verify_games or 2 * setting.games
    live = [lever for lever in levers if not lever.inert]
    if not levers:
        print(
            f"{item}: no lever in the catalogue moves this {kind}"
            + (" (what a Disaster costs its victims is a rule, RULES.md P10, and no tile "
               "protects against it or insures it)" if kind == "disaster" else ""),
        )  # fmt: skip
        return 1
    from analysis.neom.balance_all import also_fields

    others = also_fields(args, setting)
    planned = setting.games * (1 + max_evals * len(live)) + verify_games * (1 + len(live)) * (
        1 + len(others))  # fmt: skip
    progress = B.Progress(planned, quiet=args.quiet)
    command = args.command_line

    def search(work: Path, claim=None):
        """The search in the first field, then each suggestion on the fresh deals of every
        other field: (result, {label: the fresh checks there, "" the catalogue as it is})."""
        evaluator = B.Evaluator(text, source, setting, work, progress, command, claim)
        result = B.balance_item(evaluator, item, kind, levers, max_evals, verify_games)
        checks = {}
        for label, field_setting in others:
            there = B.Evaluator(text, source, field_setting, work, progress, command, claim)
            there.label = label
            checks[label] = B.verify(there, item, kind, result.searches, result.fresh_seed,
                                     verify_games)  # fmt: skip
        return result, checks

    if args.work is None:
        work = Path(tempfile.mkdtemp(prefix="neom-balance-"))
        try:
            result, checks = search(work)
        finally:
            B.remove_work(work, True)
    else:
        with work_folder(Path(args.work)) as claim:
            result, checks = search(claim.path, claim)
    records = B.lever_records(result, setting)
    if others:
        judge_fields(records, result, checks, field_label(args.strategies), setting.band)
    document = {
        "item": item,
        "kind": kind,
        "field": ",".join(setting.strategies),
        "also_fields": [label for label, _ in others],
        "games": setting.games,
        "seed": setting.seed,
        "levers": records,
        "players": setting.players,
        "verify_games": verify_games,
        "fresh_seed": result.fresh_seed,
        "band": 100 * setting.band,
        "goal": setting.goal,
        "floors": [100 * f for f in setting.floors],
        "effect_definition": B.USAGE_WORDS if setting.goal == "usage" else B.KIND_WORDS[kind]
        if kind != "cornerstone" or setting.median else B.EXPECTED_WORDS,
        "current_effect": [B._pp(x) for x in result.verified[""]["target"]],
        "catalog": data.name,
        "catalog_source": str(source),
        "variant": args.variant,
        "seconds": round(time.perf_counter() - progress.start, 1),
    }  # fmt: skip
    if data.reconstructed:
        document["data"] = data.label
    for line in summary_lines(document):
        print(line)
    if json_path is not None:
        write_file(json_path, json.dumps(document, indent=1) + "\n", "--json")
        print(f"written: {args.json}")
    return 0


def judge_fields(records: list[dict], result, checks: dict, label: str, band: float) -> None:
    """Each moved lever's suggestion on the fresh deals of every field (the search's,
    ``label``, and ``checks``' others): the item's effect before and after, and whether the
    suggestion is accepted: in no field does the item end with its whole interval beyond the
    band on the side the edit moves it to (flagged the other way), nor another item's paired
    shift lie wholly beyond the band (a new flag beyond the band; the five largest shifts are
    looked at). Adds ``fields`` and ``accepted`` to each moved lever's record."""
    from analysis.neom import balance as B

    by_name = {s.lever.name: s for s in result.searches}
    fields = [(label, result.verified)] + list(checks.items())
    for record in records:
        search = by_name[record["lever"]]
        lever = search.lever
        if search.suggested is None or search.suggested == lever.current:
            continue
        way = (1 if search.suggested > lever.current else -1) * lever.sign  # the effect's move
        record["fields"], record["accepted"] = [], True
        for name, verified in fields:
            fresh = verified.get(lever.name)
            if fresh is None:
                continue
            effect, lo, hi = fresh["target"]
            other_way = (lo > band) if way > 0 else (hi < -band)
            flags = [o["name"] for o in fresh["others"]
                     if o["lo"] > band or o["hi"] < -band]  # fmt: skip
            record["fields"].append({
                "field": name, "before": [B._pp(x) for x in verified[""]["target"]],
                "after": [B._pp(x) for x in (effect, lo, hi)],
                "shift": [B._pp(x) for x in fresh["shift"]],
                "flagged_other_way": bool(other_way), "new_flags": flags,
            })  # fmt: skip
            record["accepted"] &= not other_way and not flags


WORK_COMMAND = "neom balance"


@contextmanager
def work_folder(work: Path):
    """``--work DIR``: the candidates' run folders, kept for later searches. The folder is
    claimed like any output folder (new, empty, or one neom balance wrote: anything else is
    refused untouched); each run is listed before it is made, and runs already there are used
    again (a run's name is everything that makes its games). The listing says complete when
    the search ends."""
    from sim.core.outputs import (
        STATUS_RUNNING,
        claim_folder,
        publish,
        staging_folder,
        write_listing,
        writer_lock,
    )

    def claim():
        return claim_folder(work, WORK_COMMAND, option="--work", replaces_own=True,
                            parameters={"kept": "candidate runs of neom balance NAME"})  # fmt: skip

    with writer_lock(work, WORK_COMMAND, "work folder", check=claim) as claimed:
        claimed.listing["status"] = STATUS_RUNNING
        write_listing(work, claimed.listing)
        yield claimed
        with staging_folder(work) as staging:
            publish(staging, claimed)  # no files: the listing of its runs, complete


def _fmt(x, digits: int = 1) -> str:
    return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else (
        f"{x:+.{digits}f}")  # fmt: skip


def summary_lines(doc: dict) -> list[str]:
    """The result in words and a table (what the command prints)."""
    from analysis.neom.balance import RATES

    lines = []
    if doc.get("data"):
        lines.append(f"catalogue: {doc['data']}")
    effect, lo, hi = doc["current_effect"]
    goal = f"band ±{doc['band']:g} pct-pts"
    if doc.get("goal") == "usage":
        goal = f"floors: kept >= {doc['floors'][0]:g}%, built >= {doc['floors'][1]:g}%"
    lines += [
        f"{doc['item']} ({doc['kind']}): effect = {doc['effect_definition']}; {goal}.",
        f"field: {doc['field']} ({doc['players']} players); search: {doc['games']:,} games a "
        f"candidate, seed {doc['seed']}; every figure below measured again on fresh deals "
        f"(seed {doc['fresh_seed']}, {doc['verify_games']:,} games a side).",
        f"as it is: {_fmt(effect)} [{_fmt(lo)}, {_fmt(hi)}] pct-pts on the fresh deals.",
        "",
        "| lever | current | suggested | effect on fresh deals [95% CI] | slope per unit "
        "[95% CI] | in band | search |",
        "|---|---:|---:|---|---|---|---|",
    ]
    for r in doc["levers"]:
        slope = (
            f"1 {r['unit']} = {_fmt(r['slope'], 2)} [{_fmt(r['slope_lo'], 2)}, "
            f"{_fmt(r['slope_hi'], 2)}] pct-pts" if r["slope"] is not None else "–"
        )  # fmt: skip
        lines.append(
            f"| {r['lever']} | {r['current']} | {r['suggested']} | {_fmt(r['effect'])} "
            f"[{_fmt(r['lo'])}, {_fmt(r['hi'])}] | {slope} | {'yes' if r['in_band'] else 'no'} "
            f"| {r['stop']} |"
        )
    for r in doc["levers"]:
        if "rates" not in r:
            continue
        words = dict(RATES[doc["kind"]])
        rates = "; ".join(
            f"{words[k]} {_share(v['before'])} → {_share(v['after'])}"
            for k, v in r["rates"].items()
        )
        others = "; ".join(
            f"{o['kind']} {o['name']} {_fmt(o['shift'])} [{_fmt(o['lo'])}, {_fmt(o['hi'])}]"
            for o in r.get("other_shifts", [])[:3]
        )
        lines.append(
            f"- {r['lever']} = {r['suggested']}: shift {_fmt(r['shift'][0])} "
            f"[{_fmt(r['shift'][1])}, {_fmt(r['shift'][2])}] pct-pts (paired); {rates}; "
            f"largest other shifts: {others or '–'}"
        )
    judged = [r for r in doc["levers"] if "fields" in r]
    if judged:
        lines += [
            "",
            "Each suggestion on the fresh deals of every field (accepted: in no field "
            "does the item end flagged the other way, nor another item's paired shift lie "
            "wholly beyond the band):",
            "",
            "| lever | suggested | field | as it is [95% CI] | suggested [95% CI] | "
            "new flags beyond the band | accepted |",
            "|---|---:|---|---|---|---|---|",
        ]
        for r in judged:
            for f in r["fields"]:
                before, after = f["before"], f["after"]
                lines.append(
                    f"| {r['lever']} | {r['suggested']} | {f['field']} | {_fmt(before[0])} "
                    f"[{_fmt(before[1])}, {_fmt(before[2])}] | {_fmt(after[0])} "
                    f"[{_fmt(after[1])}, {_fmt(after[2])}]"
                    f"{' (flagged the other way)' if f['flagged_other_way'] else ''} | "
                    f"{', '.join(f['new_flags']) or '–'} | {'yes' if r['accepted'] else 'no'} |"
                )
    levers = doc["levers"]
    never = [r for r in levers if not r["reached_on_search_deals"]]
    lost = [r for r in levers if r["reached_on_search_deals"] and not r["in_band"]]
    if doc["current_effect"][0] is None:
        lines.append(
            f"{doc['item']}'s effect cannot be measured in this field: fewer than --min-n seats "
            "hold it (more --games, or another field)"
        )
    elif levers and len(never) == len(levers):
        lines.append(
            f"No lever value within the catalogue's bounds brings {doc['item']} into the band: "
            + "; ".join(f"{r['lever']}: {r['stop']}" for r in never)
        )
    elif never:
        lines.append(
            "Not reaching the band with one lever: "
            + "; ".join(f"{r['lever']} ({r['stop']})" for r in never)
        )
    if lost:
        lines.append(
            "In the band on the search deals but not on the fresh ones (the search's noise; "
            "more --games narrows it): "
            + ", ".join(f"{r['lever']} = {r['suggested']}" for r in lost)  # fmt: skip
        )
    return lines


def _share(x) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


OPTIONS: list[tuple[str, dict]] = []
_options(lambda flag, **keywords: OPTIONS.append((flag, keywords)))
BALANCING = Balancing(run=run, item_help="a tile, cornerstone or Disaster", options=tuple(OPTIONS))
