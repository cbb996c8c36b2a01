"""Tangram City's part of ``neom balance`` (:mod:`analysis.core.balance`,
``Game.balance_ref``): the bonus value that brings a strategy's edge into the band.

Tangram City's levers are its rules' own numbers, not its tile set's: the planning bonus (a
full board) and the balance bonus table (the bonus for each marker distance, 0 to 5 or more:
how the balance scale scores). The item is an approach to the game, a strategy of the field
(``greedy:balance_weight=10`` plays for the scale), and its effect is its seats' win share
above their fair share (1 / players), pct-pts: a bonus that makes one approach win nearly
always, or never, is what a designer moves. Every candidate plays the same deals as the rules
as they are (the same master seed: ``neom compare``'s twins) and is searched with the generic
search (:func:`analysis.core.balance.search_lever`); each suggestion is measured again on
fresh deals.

A lever's direction is measured, not assumed: before its search two candidates are played (half
as much again, and a quarter of the way towards 0), and the paired shift of the effect that
moved most gives the lever's sign; a lever that moves the effect at neither is reported as
such.
"""

import json
import math
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from analysis.core.balance import (
    DEFAULT_MAX_EVALS,
    Balancing,
    Lever,
    Point,
    Progress,
    Search,
    fresh_seed,
    search_lever,
)
from sim.core.errors import UserError

DEFAULT_FIELD = "planner,greedy,greedy,random"  # make run-tangram's field
GAMES = 400  # games per candidate on the search deals
PLANNING = "planning_bonus"
BALANCE = "balance_bonus"
DISTANCES = ("0", "1", "2", "3", "4", "5 or more")
EFFECT_WORDS = "the strategy's win share above its fair share (1 / players), pct-pts"


def levers(rules: dict) -> list[Lever]:
    """The planning bonus and every entry of the balance bonus table, at the rules' values
    (the sign is measured before a search: +1 until then)."""
    from sim.tangram.rules import MAX_BONUS

    out = [Lever("rules", PLANNING, int(rules[PLANNING]), +1, "point of planning bonus",
                 high=MAX_BONUS)]  # fmt: skip
    for i, value in enumerate(rules[BALANCE]):
        unit = f"point of balance bonus at distance {DISTANCES[i]}"
        out.append(Lever("rules", f"{BALANCE}[{i}]", int(value), +1, unit, high=MAX_BONUS))
    return out


def with_values(rules: dict, values: dict) -> dict:
    """The rules entries with the levers' values set (``values``: lever key -> value)."""
    out = dict(rules, **{BALANCE: list(rules[BALANCE])})
    for (_, path), value in values.items():
        if path == PLANNING:
            out[PLANNING] = int(value)
        else:
            out[BALANCE][int(path[len(BALANCE) + 1 : -1])] = int(value)
    return out


@dataclass(frozen=True)
class Setting:
    strategies: tuple[str, ...]
    players: int
    games: int
    seed: int
    rules: dict  # make_rules' keywords: the readings and the bonus tables as they are
    data: Path | None
    workers: int | None
    band: float
    min_n: int


class Evaluator:
    """Plays candidate rules (the rules with some lever values) into run folders under
    ``work``; every run with the same seed plays the same deals."""

    def __init__(self, setting: Setting, work: Path, progress: Progress):
        self.setting = setting
        self.work = Path(work)
        self.progress = progress
        self.cache: dict = {}

    def measure(self, values: dict, seed: int | None = None, games: int | None = None,
                what: str = ""):  # fmt: skip
        from analysis.core.load import open_run
        from sim.core.runner import RunConfig, run_simulation

        s = self.setting
        seed = s.seed if seed is None else seed
        games = s.games if games is None else games
        key = (tuple(sorted(values.items())), seed, games)
        if key in self.cache:
            return self.cache[key]
        folder = self.work / f"run-{len(self.cache)}"
        config = RunConfig(
            game="tangram",
            out=folder,
            strategies=s.strategies,
            players=s.players,
            games=games,
            seed=seed,
            data=s.data,
            workers=s.workers,
            rules=with_values(s.rules, values),
            progress=False,
            command="neom balance",
        )
        start = time.perf_counter()
        run_simulation(config)
        seconds = time.perf_counter() - start
        self.progress.done(what or describe(values), games, seconds)
        run = open_run(folder)
        self.cache[key] = run
        return run


def describe(values: dict) -> str:
    if not values:
        return "the rules as they are"
    return ", ".join(f"{path} = {v}" for (_, path), v in sorted(values.items()))


def _seats(run):
    from analysis.core.tabulate import deals

    columns = ["game_id", "seat", "strategy_name", "win_share", "total"]
    players = run.players.select(columns).collect()
    return players, deals(run).collect()


def effect_of(run, item: str, players: int) -> tuple[float, float, float, int]:
    """The item's seats' win share above 1 / players and its 95% interval, cluster-robust over
    deals (Student t), and the number of its seats."""
    import polars as pl

    from analysis.core.stats import t_quantile

    seats, deals = _seats(run)
    rows = seats.filter(pl.col("strategy_name") == item).join(deals, on="game_id")
    n = rows.height
    if n < 2:
        return math.nan, math.nan, math.nan, n
    x = rows["win_share"].cast(pl.Float64).to_numpy() - 1.0 / players
    mean = float(x.mean())
    _, cluster = np.unique(rows["deal"].to_numpy(), return_inverse=True)
    sums = np.bincount(cluster, weights=x - mean)
    g = sums.size
    se = math.sqrt(g / (g - 1) * float((sums**2).sum())) / n if g > 1 else math.nan
    half = float(t_quantile(g - 1)) * se
    return mean, mean - half, mean + half, n


def point(base, cand, item: str, value: int, players: int) -> Point:
    """The item's effect in ``cand`` and its paired shift from ``base`` (the same deals)."""
    import polars as pl

    from analysis.core.compare import paired_by_group

    effect, lo, hi, n = effect_of(cand, item, players)
    (base_seats, deals), (cand_seats, _) = _seats(base), _seats(cand)
    group = paired_by_group(base_seats, cand_seats, "strategy_name", deals)
    row = group.filter(pl.col("strategy_name") == item).row(0, named=True)
    return Point(value, effect, lo, hi, row["win_shift"], row["win_shift_lo"],
                 row["win_shift_hi"], n)  # fmt: skip


def probe_values(lever: Lever) -> list[int]:
    """The candidates that measure a lever's direction: half as much again above the current
    value and a quarter of the way to 0 below it (an effect can be flat on one side: a bonus
    no one can win more of)."""
    up = min(lever.high, lever.current + max(1, lever.current // 2))
    down = lever.current - max(1, lever.current // 4)
    return [v for v in (up, down) if lever.low <= v != lever.current]


def signed(lever: Lever, probes: list[Point]) -> Lever:
    """The lever with its measured sign, from the probe that moved the effect most (inert
    when none moved it)."""
    moved = [p for p in probes if math.isfinite(p.shift) and p.shift != 0]
    if not moved:
        values = " or ".join(str(p.value) for p in probes)
        return replace(lever, inert=f"moving it to {values} did not move the effect")
    best = max(moved, key=lambda p: abs(p.shift))
    return replace(lever, sign=1 if best.shift * (best.value - lever.current) > 0 else -1)


def find_item(strategies: tuple[str, ...], name: str) -> str:
    from sim.core.registry import get_game
    from sim.core.strategies import resolve_strategy

    registry = get_game("tangram").strategies
    names = {resolve_strategy(registry, s).label: s for s in strategies}
    for canonical in names:
        if canonical.casefold() == name.casefold():
            return canonical
    try:
        canonical = resolve_strategy(registry, name).label
    except UserError:
        canonical = None
    if canonical in names:
        return canonical
    raise UserError(
        f"{name!r}: not a strategy of the field; the item of neom balance --game tangram is a "
        f"strategy of --strategies ({', '.join(names)})"
    )


def _setting(args) -> Setting:
    from analysis.core.compare import parse_rules
    from analysis.tangram.compare import COMPARING
    from sim.core.commands.options import check_min_n, check_players
    from sim.core.registry import get_game
    from sim.core.strategies import split_strategies
    from sim.tangram.rules import rules_as_dict

    game = get_game("tangram")
    check_players(args.players)
    check_min_n(args.min_n)
    if not 0.0 <= args.band < 100.0:
        raise UserError(f"--band {args.band}: must be between 0 and 100 pct-pts")
    if args.tileset is not None and not Path(args.tileset).is_file():
        raise UserError(f"--tileset {args.tileset}: no such tile set file")
    games = GAMES if args.games is None else args.games
    for option, value in (("--games", games), ("--verify-games", args.verify_games)):
        if value is not None and value < args.players:
            raise UserError(f"{option} {value}: at least --players ({args.players})")
    given = parse_rules(args.rules or "", "--rules", game, COMPARING.rules_tables)
    rules = rules_as_dict(game.make_rules(**given))  # checked, and every entry named
    return Setting(
        strategies=split_strategies(args.strategies or DEFAULT_FIELD),
        players=args.players,
        games=games,
        seed=args.seed,
        rules=rules,
        data=Path(args.tileset) if args.tileset else None,
        workers=args.workers,
        band=args.band / 100.0,
        min_n=args.min_n,
    )


def _pick(all_levers: list[Lever], wanted: str | None) -> list[Lever]:
    if wanted is None:
        return all_levers
    chosen = [lever for lever in all_levers if lever.path == wanted]
    if not chosen:
        raise UserError(
            f"--lever {wanted!r}: not a lever of Tangram City; its levers: "
            + ", ".join(lever.path for lever in all_levers)
        )
    return chosen


def run(args) -> int:
    """``neom balance STRATEGY --game tangram``: search the chosen levers, measure each
    suggestion on fresh deals, print the result (``--json``: also write it)."""
    import shutil

    from sim.core.outputs import claim_file, write_file

    if not args.name:
        raise UserError("give the NAME of a strategy of the field (neom balance --game tangram)")
    setting = _setting(args)
    item = find_item(setting.strategies, args.name)
    chosen = _pick(levers(setting.rules), args.lever)
    max_evals = DEFAULT_MAX_EVALS if args.max_evals is None else args.max_evals
    if max_evals < 1:
        raise UserError(f"--max-evals {max_evals}: at least 1")
    verify_games = args.verify_games or 2 * setting.games
    json_path = claim_file(args.json, "--json", args.overwrite) if args.json else None
    planned = setting.games * (1 + (max_evals + 2) * len(chosen)) + verify_games * (1 + len(chosen))
    progress = Progress(planned, quiet=args.quiet)
    own_work = args.work is None
    work = Path(tempfile.mkdtemp(prefix="neom-balance-")) if own_work else Path(args.work)
    try:
        evaluator = Evaluator(setting, work, progress)
        document = _balance(evaluator, item, chosen, max_evals, verify_games)
    finally:
        if own_work:
            shutil.rmtree(work, ignore_errors=True)
    document["seconds"] = round(time.perf_counter() - progress.start, 1)
    for line in summary_lines(document):
        print(line)
    if json_path is not None:
        write_file(json_path, json.dumps(document, indent=1) + "\n", "--json")
        print(f"written: {args.json}")
    return 0


def _balance(evaluator: Evaluator, item: str, chosen: list[Lever], max_evals: int,
             verify_games: int) -> dict:  # fmt: skip
    s = evaluator.setting
    base = evaluator.measure({}, what=f"{item}: the rules as they are")
    start = point(base, base, item, 0, s.players)
    records = []
    fresh = fresh_seed(s.seed)
    fresh_base = evaluator.measure({}, fresh, verify_games, f"{item}: as they are, fresh deals")
    current = effect_of(fresh_base, item, s.players)
    for lever in chosen:
        start_lever = replace(start, value=lever.current)

        def measure(value, lever=lever):
            run = evaluator.measure({lever.key: value}, what=f"{item}: {lever.path} = {value}")
            return point(base, run, item, value, s.players)

        # In the band already: nothing to search (no probes either).
        probes = [] if abs(start.effect) <= s.band else [measure(v) for v in probe_values(lever)]
        lever = signed(lever, probes) if probes else lever
        if lever.inert:
            points = {lever.current: start_lever, **{p.value: p for p in probes}}
            in_band = abs(start.effect) <= s.band
            search = Search(lever, points, lever.current, f"not searched: {lever.inert}", in_band)
        else:
            search = search_lever(measure, lever, start_lever, s.band, max_evals, False, s.min_n)
            for p in probes:
                search.points.setdefault(p.value, p)
        verified = effect_of(
            evaluator.measure({lever.key: search.suggested}, fresh, verify_games,
                              f"{item}: {lever.path} = {search.suggested}, fresh deals"),
            item, s.players,
        )  # fmt: skip
        p = search.points.get(search.suggested)
        print(f"balance: {item}: {lever.path} -> {search.suggested} ({search.stop})",
              file=sys.stderr)  # fmt: skip
        records.append({
            "lever": lever.path, "unit": lever.unit, "current": lever.current,
            "suggested": search.suggested, "sign": lever.sign, "stop": search.stop,
            "reached_on_search_deals": search.reached,
            "search_effect": _pp(p.effect if p else math.nan),
            "effect": _pp(verified[0]), "lo": _pp(verified[1]), "hi": _pp(verified[2]),
            "in_band": bool(abs(verified[0]) <= s.band) if math.isfinite(verified[0]) else False,
            "points": {str(v): _pp(pt.effect) for v, pt in sorted(search.points.items())},
        })  # fmt: skip
    return {
        "game": "tangram",
        "item": item,
        "kind": "strategy",
        "effect_definition": EFFECT_WORDS,
        "field": ",".join(s.strategies),
        "players": s.players,
        "games": s.games,
        "seed": s.seed,
        "rules": s.rules,
        "verify_games": verify_games,
        "fresh_seed": fresh,
        "band": 100 * s.band,
        "current_effect": [_pp(x) for x in current[:3]],
        "levers": records,
    }


def _pp(x) -> float | None:
    return None if x is None or not math.isfinite(x) else round(100 * x, 2)


def _fmt(x) -> str:
    return "–" if x is None else f"{x:+.1f}"


def summary_lines(doc: dict) -> list[str]:
    """The result in words and a table (what the command prints)."""
    effect, lo, hi = doc["current_effect"]
    lines = [
        f"{doc['item']} (strategy): effect = {doc['effect_definition']}; band "
        f"±{doc['band']:g} pct-pts.",
        f"field: {doc['field']} ({doc['players']} players); search: {doc['games']:,} games a "
        f"candidate, seed {doc['seed']}; every effect below measured again on fresh deals "
        f"(seed {doc['fresh_seed']}, {doc['verify_games']:,} games).",
        f"as it is: {_fmt(effect)} [{_fmt(lo)}, {_fmt(hi)}] pct-pts on the fresh deals.",
        "",
        "| lever | current | suggested | effect on fresh deals [95% CI] | in band | search |",
        "|---|---:|---:|---|---|---|",
    ]
    for r in doc["levers"]:
        lines.append(
            f"| {r['lever']} | {r['current']} | {r['suggested']} | {_fmt(r['effect'])} "
            f"[{_fmt(r['lo'])}, {_fmt(r['hi'])}] | {'yes' if r['in_band'] else 'no'} | "
            f"{r['stop']} |"
        )
    return lines


BALANCING = Balancing(
    run=run,
    item_help="a strategy of the field, e.g. greedy:balance_weight=10",
    options=(
        ("--tileset", {"default": None, "help": "tile set file (default: built-in)"}),
        (
            "--rules",
            {
                "default": None,
                "metavar": "NAME=VALUE,...",
                "help": "the rules to start from: readings and the bonus tables, e.g. "
                "balance_bonus=20/10/10/5/5/0,planning_bonus=15 (default: as printed)",
            },
        ),
    ),  # fmt: skip
)
