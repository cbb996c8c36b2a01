"""Tangram City's part of ``neom balance`` (:mod:`analysis.core.balance`,
``Game.balance_ref``): the number that brings a tile's or a strategy's effect into the band.

Two kinds of item, each with its effect and its levers:

- **a tile** of the tile set (``neom balance Square --game tangram``): its effect is the
  report's tile finding (:func:`analysis.tangram.findings.tile_findings`): what placing it
  rather than declining it is worth in win share above expected, against the median tile. Its
  lever is the one number its tile-set entry has, its **area** in half-squares, within its
  card's constraints: a connected shape on the board that is no other card's tile (up to
  rotation and flip). Each area is a shape, the most compact one half-square at a time from
  the tile's own (:func:`sim.tangram.tileset.resized_shapes`); every candidate is a copy of the
  tile set with that shape (the boards' witnesses dropped: they tile the old shape).
- **a strategy** of the field (``greedy:balance_weight=10`` plays for the scale): its effect
  is its seats' win share above their fair share (1 / players), pct-pts; its levers are the
  rules' own numbers: the planning bonus (a full board) and the balance bonus table (the bonus
  for each marker distance, 0 to 5 or more: how the balance scale scores). A bonus that makes
  one approach win nearly always, or never, is what a designer moves.

NAME is looked up as a tile of the tile set and as a strategy of the field (``--kind`` when
it is both). Every candidate plays the same deals as the game as it is (the same master
seed: ``neom compare``'s twins) and is searched with the generic search
(:func:`analysis.core.balance.search_lever`); each suggestion is measured again on fresh
deals.

A lever's direction is measured, not assumed: before its search two candidates are played (half
as much again, and a quarter of the way towards 0), and the shift of the effect that moved most
gives the lever's sign; a lever that moves the effect at neither is reported as such.
"""

import math
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
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
    print_result,
    search_lever,
)
from analysis.tangram.experiment import find_tile, tileset_and_rules_options
from analysis.tangram.tables import DEAD_SHARE
from sim.core.errors import UserError

DEFAULT_FIELD = "planner,greedy,greedy,random"  # make run-tangram's field
GAMES = 400  # games per candidate on the search deals
PLANNING = "planning_bonus"
BALANCE = "balance_bonus"
AREA = "area"
DISTANCES = ("0", "1", "2", "3", "4", "5 or more")
KINDS = ("tile", "strategy", "rule")
EFFECT_WORDS = {
    "strategy": "the strategy's win share above its fair share (1 / players), pct-pts",
    "tile": "placing the tile rather than declining it: win share above expected, placers "
    "minus decliners in the same game, against the median tile (the report's tile finding), "
    "pct-pts",
}


# --- levers -----------------------------------------------------------------------------------


def rules_levers(rules: dict) -> list[Lever]:
    """The planning bonus and every entry of the balance bonus table, at the rules' values
    (the sign is measured before a search: +1 until then)."""
    from sim.tangram.rules import MAX_BONUS

    out = [Lever("rules", PLANNING, int(rules[PLANNING]), +1, "point of planning bonus",
                 high=MAX_BONUS)]  # fmt: skip
    for i, value in enumerate(rules[BALANCE]):
        unit = f"point of balance bonus at distance {DISTANCES[i]}"
        out.append(Lever("rules", f"{BALANCE}[{i}]", int(value), +1, unit, high=MAX_BONUS))
    return out


def tile_lever(tileset, tile: int) -> tuple[Lever, dict]:
    """The tile's area lever (half-squares, from the smallest to the largest area its card
    allows) and its shape at each of those areas."""
    from sim.tangram.tileset import halves, resized_shapes

    shapes = resized_shapes(tileset.shapes, tile)
    own = halves(tileset.shapes[tile])
    lever = Lever(tileset.tile_names[tile], AREA, own, +1, "half-square of the tile's area",
                  low=min(shapes), high=max(shapes))  # fmt: skip
    return lever, shapes


def with_values(rules: dict, values: dict) -> dict:
    """The rules entries with the rules levers' values set (``values``: lever key -> value;
    a tile's area is not a rules entry)."""
    out = dict(rules, **{BALANCE: list(rules[BALANCE])})
    for (owner, path), value in values.items():
        if owner != "rules":
            continue
        if path == PLANNING:
            out[PLANNING] = int(value)
        else:
            out[BALANCE][int(path[len(BALANCE) + 1 : -1])] = int(value)
    return out


def area_words(value: int) -> str:
    return f"{value} halves ({value / 2:g} square{'' if value == 2 else 's'})"


# The generic search counts an item's sample in seats; a tile's is games in which some seats
# placed it and others declined it (too few: every seat places it, or none does).
TILE_SAMPLE_WORDS = (
    (" seats held it,", " games had both placers and decliners,"),
    (" seats hold it (it is no longer played)", " games have both placers and decliners"),
)


def tile_words(stop: str) -> str:
    for seats, games in TILE_SAMPLE_WORDS:
        stop = stop.replace(seats, games)
    return stop


# --- measuring --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """How every candidate is played: ``config`` is the run of the game as it is (field,
    players, games, seed, tile set, rules, workers; each candidate replaces what it changes),
    ``text`` the tile set file's text (a tile's candidates are copies of it)."""

    config: object  # sim.core.runner.RunConfig
    text: str
    band: float
    min_n: int


class Evaluator:
    """Plays candidates (the game with some lever values) into run folders under ``work``;
    every run with the same seed plays the same deals."""

    def __init__(self, setting: Setting, work: Path, progress: Progress, shapes: dict):
        self.setting = setting
        self.work = Path(work)
        self.progress = progress
        self.shapes = shapes  # a tile item's area -> shape ({}: a strategy item)
        self.cache: dict = {}

    def tileset_file(self, values: dict) -> Path | None:
        """The tile set of a candidate: a copy with the tile's shape at the area ``values``
        gives, or the setting's own file (None: the built-in one)."""
        from sim.tangram.tileset import with_tile_shape

        areas = [(tile, v) for (tile, path), v in values.items() if path == AREA]
        if not areas:
            return self.setting.config.data
        (tile, value), = areas  # fmt: skip
        path = self.work / f"tileset-area-{value}.toml"
        path.write_text(with_tile_shape(self.setting.text, tile, self.shapes[value]))
        return path

    def measure(self, values: dict, seed: int | None = None, games: int | None = None,
                what: str = ""):  # fmt: skip
        from analysis.core.load import open_run
        from sim.core.runner import run_simulation

        config = self.setting.config
        seed = config.seed if seed is None else seed
        games = config.games if games is None else games
        key = (tuple(sorted(values.items())), seed, games)
        if key in self.cache:
            return self.cache[key]
        folder = self.work / f"run-{len(self.cache)}"
        candidate = replace(config, out=folder, games=games, seed=seed,
                            data=self.tileset_file(values),
                            rules=with_values(config.rules, values))  # fmt: skip
        start = time.perf_counter()
        run_simulation(candidate)
        self.progress.done(what or describe(values), games, time.perf_counter() - start)
        run = open_run(folder)
        self.cache[key] = run
        return run


def describe(values: dict) -> str:
    if not values:
        return "as it is"
    return ", ".join(f"{path} = {v}" for (_, path), v in sorted(values.items()))


def _seats(run):
    from analysis.core.tabulate import deals

    columns = ["game_id", "seat", "strategy_name", "win_share", "total"]
    players = run.players.select(columns).collect()
    return players, deals(run).collect()


def strategy_effect(run, item: str, players: int) -> tuple[float, float, float, int]:
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


def dead_rules(run, min_n: int) -> list[str]:
    """The rules no seat (random apart) reaches in ``run``: the report's dead rules."""
    import polars as pl

    from analysis.tangram.findings import rule_findings

    return rule_findings(run, min_n=min_n).filter(pl.col("dead"))["rule"].to_list()


def tile_flag(run, tile: int, band: float, min_n: int) -> str:
    """The tile's flag in ``run`` as the report gives it (strong, weak or "")."""
    import polars as pl

    from analysis.tangram.findings import tile_findings

    table = tile_findings(run, band=band, min_n=min_n).filter(pl.col("tile") == tile)
    return table["flag"][0] if table.height else ""


def tile_effect(run, tile: int, band: float, min_n: int) -> tuple[float, float, float, int]:
    """The tile's finding in ``run`` (``vs_median`` and its interval) and its sample: the
    games in which some non-random seats placed it and others declined it."""
    import polars as pl

    from analysis.tangram.findings import tile_findings

    table = tile_findings(run, band=band, min_n=min_n).filter(pl.col("tile") == tile)
    if table.height == 0 or table["vs_median"][0] is None:
        return math.nan, math.nan, math.nan, 0
    row = table.row(0, named=True)
    return row["vs_median"], row["vs_median_lo"], row["vs_median_hi"], int(row["n"])


@dataclass(frozen=True)
class Item:
    """What is balanced: its kind, its name as shown, its effect in a run (effect, lo, hi,
    n) and its levers; a tile's shapes by area."""

    kind: str
    name: str
    effect: Callable
    levers: list = field(default_factory=list)
    shapes: dict = field(default_factory=dict)
    index: int = -1  # a tile's index in the tile set


def point(base, cand, item: Item, value: int) -> Point:
    """The item's effect in ``cand`` and its shift from ``base`` (the same deals): a strategy's
    paired shift of win share with its interval; a tile's the difference of its two findings
    (each against its own run's median tile, so no paired interval)."""
    import polars as pl

    from analysis.core.compare import paired_by_group

    effect, lo, hi, n = item.effect(cand)
    if item.kind == "tile":
        shift = effect - item.effect(base)[0]
        return Point(value, effect, lo, hi, shift, math.nan, math.nan, n)
    (base_seats, deals), (cand_seats, _) = _seats(base), _seats(cand)
    group = paired_by_group(base_seats, cand_seats, "strategy_name", deals)
    row = group.filter(pl.col("strategy_name") == item.name).row(0, named=True)
    return Point(value, effect, lo, hi, row["win_shift"], row["win_shift_lo"],
                 row["win_shift_hi"], n)  # fmt: skip


def probe_values(lever: Lever) -> list[int]:
    """The candidates that measure a lever's direction: half as much again above the current
    value and a quarter of the way to 0 below it, within the lever's bounds (an effect can be
    flat on one side: a bonus no one can win more of)."""
    up = min(lever.high, lever.current + max(1, lever.current // 2))
    down = max(lever.low, lever.current - max(1, lever.current // 4))
    return [v for v in dict.fromkeys((up, down)) if lever.low <= v != lever.current]


def signed(lever: Lever, probes: list[Point]) -> Lever:
    """The lever with its measured sign, from the probe that moved the effect most (inert
    when none moved it)."""
    moved = [p for p in probes if math.isfinite(p.shift) and p.shift != 0]
    if not moved:
        values = " or ".join(str(p.value) for p in probes)
        why = f"moving it to {values} did not move the effect" if probes else (
            "no other value is within its bounds")  # fmt: skip
        return replace(lever, inert=why)
    best = max(moved, key=lambda p: abs(p.shift))
    return replace(lever, sign=1 if best.shift * (best.value - lever.current) > 0 else -1)


def nearer_probe(search: Search, probes: list[Point], band: float, min_n: int) -> None:
    """The suggestion is the measured value nearest zero (``search_lever``'s rule), and the
    direction probes were measured too, on the same deals, before the search began: a probe
    nearer zero than the search's suggestion becomes the suggestion (said in ``stop``)."""
    found = search.points.get(search.suggested)
    usable = [p for p in probes if p.n >= min_n and math.isfinite(p.effect)]
    if found is None or not usable:
        return
    best = min(usable, key=lambda p: abs(p.effect))
    if abs(best.effect) < abs(found.effect):
        search.stop += (f"; the direction probe at {best.value} is nearer zero "
                        f"({100 * best.effect:+.1f} pct-pts): suggested instead")  # fmt: skip
        search.suggested = best.value
        search.reached = abs(best.effect) <= band


# --- a rule: brought alive --------------------------------------------------------------------

# The rules balance takes as its item (the report's rule names), each with its lever's path.
# A balance bonus table is scaled as a whole (percent of its shape: the table itself, or the
# printed one when every entry is 0) so the distances keep their order of worth.
RULE_LEVERS = {"planning bonus": PLANNING, "balance bonus": f"{BALANCE} scale"}
NO_LEVER = {
    "fountains": "fountains: no numeric lever (its one setting is fountain_kept, a yes/no "
    "reading; test it with neom compare --game tangram --candidate-rules fountain_kept=yes)"
}


def find_rule(name: str) -> str | None:
    """The rule called ``name`` (the report's rule name), or None; one line for a rule
    without a numeric lever."""
    wanted = " ".join(name.replace("_", " ").split()).casefold()
    if wanted in NO_LEVER:
        raise UserError(NO_LEVER[wanted])
    return wanted if wanted in RULE_LEVERS else None


def bonus_shape(rules: dict) -> list[int]:
    """The balance bonus table scaled by the rule's lever: the rules' table, or the printed
    one when every entry is 0 (a zero table has no shape to scale)."""
    from sim.tangram.rules import make_rules, rules_as_dict

    table = [int(v) for v in rules[BALANCE]]
    return table if any(table) else rules_as_dict(make_rules())[BALANCE]


def rule_lever(rules: dict, rule: str) -> Lever:
    """The rule's own lever: the planning bonus in points, or the balance bonus table's scale
    in percent of :func:`bonus_shape` (0 for a zero table, 100 otherwise)."""
    from sim.tangram.rules import MAX_BONUS

    if rule == "planning bonus":
        return Lever("rules", PLANNING, int(rules[PLANNING]), +1, "point of planning bonus",
                     high=MAX_BONUS)  # fmt: skip
    current = 100 if any(rules[BALANCE]) else 0
    high = 100 * MAX_BONUS // max(bonus_shape(rules))
    return Lever("rules", RULE_LEVERS[rule], current, +1,
                 "percent of the balance bonus table", high=high)  # fmt: skip


def rule_values(rules: dict, lever: Lever, value: int) -> dict:
    """The rules levers' values (``with_values``) of the rule's lever at ``value``."""
    if lever.path == PLANNING:
        return {("rules", PLANNING): int(value)}
    shape = bonus_shape(rules)
    return {("rules", f"{BALANCE}[{i}]"): round(v * value / 100) for i, v in enumerate(shape)}


def rule_reach(run, rule: str, min_n: int) -> dict:
    """The report's reach of ``rule`` in ``run`` (``findings.rule_findings``: the share of
    non-random seats that reach it, its interval and the dead verdict)."""
    import polars as pl

    from analysis.tangram.findings import rule_findings

    row = rule_findings(run, min_n=min_n).filter(pl.col("rule") == rule).row(0, named=True)
    return {"reached": int(row["reached"]), "n": int(row["n"]),
            "share": _pp(row["reached_rate"]), "lo": _pp(row["reached_rate_lo"]),
            "hi": _pp(row["reached_rate_hi"]), "dead": bool(row["dead"]),
            "small": bool(row["small"]),
            "alive": bool(row["reached_rate"] >= DEAD_SHARE)}  # fmt: skip


def smallest_alive(alive: Callable, lever: Lever, max_evals: int) -> tuple[int | None, str]:
    """The smallest value above the current one at which ``alive(value)`` holds, taking
    reach to grow with the bonus: doubling up to the lever's bound, then halving the gap, at
    most ``max_evals`` candidates; (None, why) when no value tried brings it alive."""
    dead, found, evals = lever.current, None, 0
    step = max(1, lever.current) if lever.current else (100 if "scale" in lever.path else 1)
    while found is None and evals < max_evals and dead < lever.high:
        value = min(lever.high, dead + step if lever.current == 0 else 2 * dead)
        evals += 1
        if alive(value):
            found = value
        else:
            dead, step = value, 2 * step
    if found is None:
        return None, (f"no value up to {dead} brings it alive ({evals} candidates)")
    while evals < max_evals and found - dead > 1:
        middle = (dead + found) // 2
        evals += 1
        if alive(middle):
            found = middle
        else:
            dead = middle
    close = "" if found - dead <= 1 else f" (to within {found - dead}: --max-evals)"
    return found, f"the smallest value alive on the search deals{close}; {dead} is dead"


def field_edges(run, players: int) -> dict:
    """Every strategy's edge in ``run``: its win share above its fair share, pct-pts."""
    return {name: [_pp(x) for x in strategy_effect(run, name, players)[:3]]
            for name in run.strategy_names}  # fmt: skip


def balance_rule(evaluator: Evaluator, rule: str, max_evals: int, verify_games: int) -> dict:
    """Bring a dead rule alive: the smallest value of its lever at which the report no longer
    calls it dead on the search deals, measured again on fresh deals, with what it does to
    every strategy's edge there."""
    s = evaluator.setting
    config = s.config
    lever = rule_lever(config.rules, rule)
    base = evaluator.measure({}, what=f"{rule}: as it is")
    fresh = fresh_seed(config.seed)
    fresh_base = evaluator.measure({}, fresh, verify_games, f"{rule}: as it is, fresh deals")
    start, now = rule_reach(base, rule, s.min_n), rule_reach(fresh_base, rule, s.min_n)
    points = {lever.current: start}

    def alive(value: int) -> bool:
        run = evaluator.measure(rule_values(config.rules, lever, value),
                                what=f"{rule}: {lever.path} = {value}")  # fmt: skip
        points[value] = rule_reach(run, rule, s.min_n)
        return points[value]["alive"]

    if start["alive"]:
        suggested, stop = lever.current, "already alive on the search deals: nothing to change"
    else:
        suggested, stop = smallest_alive(alive, lever, max_evals)
    if suggested is None and len({p["reached"] for p in points.values()}) == 1:
        stop += (f"; its reach is the same at every value tried ({start['share']:.1f}%): the "
                 "field cannot reach it whatever it is worth")  # fmt: skip
    record = {"lever": lever.path, "unit": lever.unit, "current": lever.current,
              "suggested": suggested, "low": lever.low, "high": lever.high, "stop": stop,
              "points": {str(v): p["share"] for v, p in sorted(points.items())}}  # fmt: skip
    edges_now = field_edges(fresh_base, config.players)
    if suggested is not None and suggested != lever.current:
        values = rule_values(config.rules, lever, suggested)
        run = evaluator.measure(values, fresh, verify_games,
                                f"{rule}: {lever.path} = {suggested}, fresh deals")  # fmt: skip
        record["reach"] = rule_reach(run, rule, s.min_n)
        record["rules"] = with_values(config.rules, values)
        record["edges"] = field_edges(run, config.players)
        record["dead_rules"] = dead_rules(run, s.min_n)
    print(f"balance: {rule}: {lever.path} -> {suggested} ({stop})", file=sys.stderr)
    return {
        "game": "tangram", "item": rule, "kind": "rule",
        "effect_definition": "the share of non-random seats that reach it (the report's "
        "reach: dead when its interval lies wholly below 1% after the correction)",
        "field": ",".join(config.strategies), "players": config.players,
        "games": config.games, "seed": config.seed, "rules": config.rules,
        "verify_games": verify_games, "fresh_seed": fresh, "min_n": s.min_n,
        "current_reach": now, "search_reach": start, "edges": edges_now,
        "dead_rules": dead_rules(fresh_base, s.min_n), "levers": [record],
    }  # fmt: skip


def _reach_words(reach: dict) -> str:
    verdict = ("alive" if reach["alive"] else "dead" if reach["dead"]
               else f"below {100 * DEAD_SHARE:g}%, not flagged dead")  # fmt: skip
    return (f"reached by {reach['share']:.1f}% [{reach['lo']:.1f}, {reach['hi']:.1f}] of "
            f"{reach['n']:,} seats: {verdict}")  # fmt: skip


def rule_summary_lines(doc: dict) -> list[str]:
    """A rule's result in words: its reach as it is, the suggestion, its reach and the
    field's edges on fresh deals (the cost a designer weighs)."""
    from analysis.tangram.findings import rules_text

    r = doc["levers"][0]
    lines = [
        f"{doc['item']} (rule): goal = {doc['effect_definition']}.",
        f"field: {doc['field']} ({doc['players']} players); search: {doc['games']:,} games a "
        f"candidate, seed {doc['seed']}; fresh deals: seed {doc['fresh_seed']}, "
        f"{doc['verify_games']:,} games.",
        f"as it is: {_reach_words(doc['current_reach'])} (fresh deals); "
        f"{_reach_words(doc['search_reach'])} (search deals).",
        f"{r['lever']} ({r['unit']}): {r['current']} -> "
        f"{'no suggestion' if r['suggested'] is None else r['suggested']}: {r['stop']}.",
    ]
    if "reach" not in r:
        return lines
    changed = {k: v for k, v in r["rules"].items() if doc["rules"].get(k) != v}
    lines += [
        f"suggested: --rules {rules_text(changed)}; on the fresh deals {_reach_words(r['reach'])}.",
        "",
        "| strategy | edge as it is [95% CI] | edge suggested [95% CI] |",
        "|---|---|---|",
    ]
    for name, (effect, lo, hi) in doc["edges"].items():
        e, elo, ehi = r["edges"].get(name, [None] * 3)
        lines.append(f"| {name} | {_fmt(effect)} [{_fmt(lo)}, {_fmt(hi)}] | "
                     f"{_fmt(e)} [{_fmt(elo)}, {_fmt(ehi)}] |")  # fmt: skip
    lines.append("edge: a strategy's win share above its fair share (1 / players), pct-pts, "
                 "on the fresh deals.")  # fmt: skip
    return lines


# --- the item ---------------------------------------------------------------------------------


def find_strategy(strategies: tuple[str, ...], name: str) -> str | None:
    """The field's strategy called ``name`` (its label), or None."""
    from sim.core.registry import get_game
    from sim.core.strategies import resolve_strategy

    registry = get_game("tangram").strategies
    labels = {resolve_strategy(registry, s).label for s in strategies}
    for label in labels:
        if label.casefold() == name.casefold():
            return label
    try:
        label = resolve_strategy(registry, name).label
    except UserError:
        return None
    return label if label in labels else None


def find_item(setting: Setting, tileset, name: str, kind: str | None) -> Item:
    """The item NAME names: a tile of the tile set or a strategy of the field (``kind``: which,
    when it could be both); one line naming both lists when it is neither."""
    config = setting.config
    strategy = find_strategy(config.strategies, name) if kind != "tile" else None
    tile = None
    if kind != "strategy":
        try:
            tile = find_tile(tileset, name)
        except UserError as error:
            missing = str(error)
    if tile is not None and strategy is not None:
        raise UserError(
            f"{name!r}: both a tile of the tile set and a strategy of the field; give --kind "
            "tile or --kind strategy"
        )
    if strategy is not None:
        return Item("strategy", strategy,
                    lambda run: strategy_effect(run, strategy, config.players),
                    rules_levers(config.rules))  # fmt: skip
    if tile is not None:
        lever, shapes = tile_lever(tileset, tile)
        return Item("tile", tileset.tile_names[tile],
                    lambda run: tile_effect(run, tile, setting.band, setting.min_n),
                    [lever], shapes, tile)  # fmt: skip
    field_names = ", ".join(dict.fromkeys(config.strategies))
    if kind == "tile":
        raise UserError(missing)
    if kind == "strategy":
        raise UserError(f"{name!r}: not a strategy of the field ({field_names})")
    hint = missing.partition("; ")[2]  # the tile set's close names, if any
    raise UserError(
        f"{name!r}: neither a tile of tile set {tileset.name} nor a strategy of the field "
        f"({field_names}){'; ' + hint if hint else ''} (the rules it takes: "
        f"{', '.join(RULE_LEVERS)})"
    )


def _setting(args) -> tuple[Setting, object]:
    """The setting of the command's options, and the tile set (its content)."""
    from analysis.core.compare import parse_rules
    from analysis.tangram.compare import COMPARING
    from sim.core.commands.options import check_min_n, check_players
    from sim.core.registry import get_game
    from sim.core.runner import RunConfig
    from sim.core.strategies import split_strategies
    from sim.tangram.rules import rules_as_dict
    from sim.tangram.tileset import DEFAULT_TILESET, load_tileset

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
    data = Path(args.tileset) if args.tileset else None
    tileset = load_tileset(data)
    config = RunConfig(
        game="tangram",
        out=Path("."),  # each candidate's own folder
        strategies=split_strategies(args.strategies or DEFAULT_FIELD),
        players=args.players,
        games=games,
        seed=args.seed,
        data=data,
        workers=args.workers,
        rules=rules_as_dict(game.make_rules(**given)),  # checked, and every entry named
        progress=False,
        command="neom balance",
    )
    text = (data or DEFAULT_TILESET).read_text(encoding="utf-8")
    return Setting(config, text, args.band / 100.0, args.min_n), tileset.content


def _pick(item: Item, wanted: str | None) -> list[Lever]:
    if wanted is None:
        return item.levers
    chosen = [lever for lever in item.levers if lever.path == wanted]
    if not chosen:
        raise UserError(
            f"--lever {wanted!r}: not a lever of a {item.kind} of Tangram City; its levers: "
            + ", ".join(lever.path for lever in item.levers)
        )
    return chosen


def run(args) -> int:
    """``neom balance NAME --game tangram``: search the item's chosen levers, measure each
    suggestion on fresh deals, print the result (``--json``: also write it)."""
    import shutil

    from sim.core.outputs import claim_file

    if not args.name:
        raise UserError("give the NAME of a tile of the tile set or a strategy of the field "
                        "(neom balance NAME --game tangram)")  # fmt: skip
    setting, tileset = _setting(args)
    rule = find_rule(args.name) if args.kind in (None, "rule") else None
    if rule is None and args.kind == "rule":
        raise UserError(f"{args.name!r}: not a rule with a lever ({', '.join(RULE_LEVERS)})")
    max_evals = DEFAULT_MAX_EVALS if args.max_evals is None else args.max_evals
    if max_evals < 1:
        raise UserError(f"--max-evals {max_evals}: at least 1")
    games = setting.config.games
    verify_games = args.verify_games or 2 * games
    if rule is not None:
        return run_rule(args, setting, rule, max_evals, verify_games)
    item = find_item(setting, tileset, args.name, args.kind)
    chosen = _pick(item, args.lever)
    json_path = claim_file(args.json, "--json", args.overwrite) if args.json else None
    tileset_path = None
    if args.write_tileset:
        if item.kind != "tile":
            raise UserError(f"--write-tileset: {item.name} is a strategy; its levers are the "
                            "rules' bonuses, not the tile set's")  # fmt: skip
        tileset_path = claim_file(args.write_tileset, "--write-tileset", args.overwrite)
    planned = games * (1 + (max_evals + 2) * len(chosen)) + verify_games * (1 + len(chosen))
    progress = Progress(planned, quiet=args.quiet)
    own_work = args.work is None
    work = Path(tempfile.mkdtemp(prefix="neom-balance-")) if own_work else Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    try:
        evaluator = Evaluator(setting, work, progress, item.shapes)
        document = _balance(evaluator, item, chosen, max_evals, verify_games)
    finally:
        if own_work:
            shutil.rmtree(work, ignore_errors=True)
    document["tileset"] = tileset.name
    document["seconds"] = round(time.perf_counter() - progress.start, 1)
    lines = summary_lines(document)
    if tileset_path is not None:
        from sim.core.outputs import write_file
        from sim.tangram.tileset import with_tile_shape

        suggested = item.shapes[document["levers"][0]["suggested"]]
        write_file(tileset_path, with_tile_shape(setting.text, item.name, suggested),
                   "--write-tileset")  # fmt: skip
        lines.append(f"the tile set with the suggested shape: {args.write_tileset}")
    return print_result(lines, document, json_path, args.json)


def run_rule(args, setting: Setting, rule: str, max_evals: int, verify_games: int) -> int:
    """``neom balance RULE --game tangram``: the smallest value of the rule's lever that
    brings it alive, measured again on fresh deals."""
    import shutil

    from sim.core.outputs import claim_file

    lever = rule_lever(setting.config.rules, rule)
    if args.lever not in (None, lever.path):
        raise UserError(f"--lever {args.lever!r}: the {rule}'s lever is {lever.path!r}")
    if args.write_tileset:
        raise UserError(f"--write-tileset: the {rule} is a rule; its lever is the rules', "
                        "not the tile set's (the suggestion is printed as --rules)")  # fmt: skip
    json_path = claim_file(args.json, "--json", args.overwrite) if args.json else None
    games = setting.config.games
    progress = Progress(games * (1 + max_evals) + 2 * verify_games, quiet=args.quiet)
    own_work = args.work is None
    work = Path(tempfile.mkdtemp(prefix="neom-balance-")) if own_work else Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    try:
        document = balance_rule(Evaluator(setting, work, progress, {}), rule, max_evals,
                                verify_games)  # fmt: skip
    finally:
        if own_work:
            shutil.rmtree(work, ignore_errors=True)
    document["seconds"] = round(time.perf_counter() - progress.start, 1)
    return print_result(rule_summary_lines(document), document, json_path, args.json)


def _balance(evaluator: Evaluator, item: Item, chosen: list[Lever], max_evals: int,
             verify_games: int) -> dict:  # fmt: skip
    s = evaluator.setting
    config = s.config
    base = evaluator.measure({}, what=f"{item.name}: as it is")
    records = []
    fresh = fresh_seed(config.seed)
    fresh_base = evaluator.measure({}, fresh, verify_games, f"{item.name}: as it is, fresh deals")
    current = item.effect(fresh_base)
    for lever in chosen:
        start = point(base, base, item, lever.current)

        def measure(value, lever=lever):
            run = evaluator.measure({lever.key: value}, what=f"{item.name}: {lever.path} = {value}")
            return point(base, run, item, value)

        # In the band already, or too few seats to tell: nothing to search (no probes either).
        settled = abs(start.effect) <= s.band or not start.n >= s.min_n
        probes = [] if settled else [measure(v) for v in probe_values(lever)]
        lever = lever if settled else signed(lever, probes)
        if lever.inert:
            points = {lever.current: start, **{p.value: p for p in probes}}
            in_band = abs(start.effect) <= s.band
            search = Search(lever, points, lever.current, f"not searched: {lever.inert}", in_band)
        else:
            search = search_lever(measure, lever, start, s.band, max_evals, False, s.min_n)
            for p in probes:
                search.points.setdefault(p.value, p)
            nearer_probe(search, probes, s.band, s.min_n)
        suggested_run = evaluator.measure(
            {lever.key: search.suggested}, fresh, verify_games,
            f"{item.name}: {lever.path} = {search.suggested}, fresh deals",
        )  # fmt: skip
        verified = item.effect(suggested_run)
        p = search.points.get(search.suggested)
        if item.kind == "tile":
            search.stop = tile_words(search.stop)
        print(f"balance: {item.name}: {lever.path} -> {search.suggested} ({search.stop})",
              file=sys.stderr)  # fmt: skip
        record = {
            "lever": lever.path, "unit": lever.unit, "current": lever.current,
            "suggested": search.suggested, "low": lever.low, "high": lever.high,
            "sign": lever.sign, "stop": search.stop,
            "reached_on_search_deals": search.reached,
            "search_effect": _pp(p.effect if p else math.nan),
            "effect": _pp(verified[0]), "lo": _pp(verified[1]), "hi": _pp(verified[2]),
            "n": verified[3],
            "in_band": bool(abs(verified[0]) <= s.band) if math.isfinite(verified[0]) else False,
            "points": {str(v): _pp(pt.effect) for v, pt in sorted(search.points.items())},
            "dead_rules": dead_rules(suggested_run, s.min_n),
        }  # fmt: skip
        if item.shapes:
            from sim.tangram.geometry import render

            record["flag"] = tile_flag(suggested_run, item.index, s.band, s.min_n)
            record["shape"] = render(item.shapes[lever.current])
            record["suggested_shape"] = render(item.shapes[search.suggested])
        records.append(record)
    document = {
        "game": "tangram",
        "item": item.name,
        "kind": item.kind,
        "effect_definition": EFFECT_WORDS[item.kind],
        "field": ",".join(config.strategies),
        "players": config.players,
        "games": config.games,
        "seed": config.seed,
        "rules": config.rules,
        "verify_games": verify_games,
        "fresh_seed": fresh,
        "band": 100 * s.band,
        "min_n": s.min_n,
        "current_effect": [_pp(x) for x in current[:3]],
        "current_n": current[3],
        "dead_rules": dead_rules(fresh_base, s.min_n),
        "levers": records,
    }
    if item.kind == "tile":  # the report's flag, on the search deals
        document["flag"] = tile_flag(base, item.index, s.band, s.min_n)
    return document


def _pp(x) -> float | None:
    return None if x is None or not math.isfinite(x) else round(100 * x, 2)


def _fmt(x) -> str:
    return "–" if x is None else f"{x:+.1f}"


def _dead_words(rules: list[str], when: str) -> str:
    dead = ", ".join(rules) if rules else "none"
    return f"dead rules {when} (no seat reaches them, random apart; fresh deals): {dead}."


def summary_lines(doc: dict) -> list[str]:
    """The result in words and a table (what the command prints)."""
    effect, lo, hi = doc["current_effect"]
    tile = doc["kind"] == "tile"
    sample = f", {doc['current_n']:,} games with placers and decliners" if tile else ""
    lines = [
        f"{doc['item']} ({doc['kind']}): effect = {doc['effect_definition']}; band "
        f"±{doc['band']:g} pct-pts.",
        f"field: {doc['field']} ({doc['players']} players); search: {doc['games']:,} games a "
        f"candidate, seed {doc['seed']}; every effect below measured again on fresh deals "
        f"(seed {doc['fresh_seed']}, {doc['verify_games']:,} games).",
        f"as it is: {_fmt(effect)} [{_fmt(lo)}, {_fmt(hi)}] pct-pts on the fresh deals{sample}"
        + (f"; flagged {doc['flag']} on the search deals" if doc.get("flag") else "")
        + ".",
        _dead_words(doc["dead_rules"], "as it is"),
        "",
        "| lever | current | suggested | effect on fresh deals [95% CI] | in band | search |",
        "|---|---:|---:|---|---|---|",
    ]
    for r in doc["levers"]:
        shown = area_words if tile else str
        lines.append(
            f"| {r['lever']} | {shown(r['current'])} | {shown(r['suggested'])} | "
            f"{_fmt(r['effect'])} [{_fmt(r['lo'])}, {_fmt(r['hi'])}] | "
            f"{'yes' if r['in_band'] else 'no'} | {r['stop']} |"
        )
    for r in doc["levers"]:
        if r["dead_rules"] != doc["dead_rules"]:
            lines.append(_dead_words(r["dead_rules"], f"at {r['lever']} = {r['suggested']}"))
    for r in doc["levers"] if tile else ():
        lines += [
            "",
            f"{doc['item']}'s area can be {area_words(r['low'])} to {area_words(r['high'])} "
            "(connected, on the board, no other card's shape); shapes as drawn in a tile-set "
            "file (docs/tangram-tileset.md):",
            f"  as it is:  shape = {r['shape']}",
            f"  suggested: shape = {r['suggested_shape']}",
        ]
    return lines


BALANCING = Balancing(
    run=run,
    item_help="a tile of the tile set (its lever: its area), a strategy of the field (the "
    "bonus tables) or a dead rule (planning bonus, balance bonus: its own value, the smallest "
    'that brings it alive), e.g. House, greedy:balance_weight=10 or "balance bonus"',
    options=(
        *tileset_and_rules_options("the rules to start from"),
        (
            "--kind",
            {
                "default": None,
                "choices": KINDS,
                "help": "NAME is a tile, a strategy or a rule (default: whichever it names)",
            },
        ),
        (
            "--write-tileset",
            {
                "default": None,
                "metavar": "FILE",
                "help": "a tile: write the tile set with its suggested shape here "
                "(--overwrite replaces it)",
            },
        ),
    ),  # fmt: skip
)
