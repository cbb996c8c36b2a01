"""``neom balance --all``: a whole-catalogue pass proposing a small set of edits after which, in
the chosen field and on the search deals:

- every tested cornerstone's effect relative to the median cornerstone (``vs_median``) is
  inside the band;
- no generation tile in play is dead (placed in fewer than ``RARE_SHARE`` of the games; the
  report calls a tile dead when it is never placed), unless ``--intended`` names it;
- nothing is flagged by the report (cornerstones and tiles, Benjamini-Hochberg);
- every good is produced by some city in at least ``GOOD_SHARE`` of the games.

Every evaluation plays the whole candidate catalogue on the same deals (the same seed and
games: ``neom compare``'s twins), so two rounds differ by their edits and not by luck. Each
violating item gets an ordered list of levers (``choose_levers``), each limited to a small
span on the side it needs; it moves one lever at a time, and one that reaches the end of its
span stays there while the next moves (an item like a cornerstone whose VP and adjacency bonus
are both too high needs two). A lever is moved by one item only. Structural items get levers
beyond their own numbers: a tile dead for a missing prerequisite makes the prerequisite
stronger first, one dead for a good no city made requires fewer goods, and a good too rarely
produced moves its producers (fewer required goods, lower cost, income) and, down the goods
chain, its inputs' producers. Two searches share that set-up and the budget of evaluations:

- ``coordinate``: every round moves violating items by the secant step of
  ``analysis.neom.balance`` from each item's measured points (one evaluation a round), the
  furthest from their goal first: all of them at first (``--per-round K``: K); a round that
  makes the loss worse is undone and the next moves half as many (the effects are zero-sum, so
  moves made together overshoot together), until nothing is violated, nothing new is left to
  try or the budget is spent;
- ``optuna``: Optuna's TPE sampler over each item's first lever (within its span), the
  catalogue as it is enqueued first, minimising the same loss plus a small price per changed
  field and per unit of change.

The best evaluation (least loss, then fewest fields) is then pruned (``Pass.prune``): each edit
is undone in turn on the same deals and stays undone when the goals still hold. The result is
the candidate: validated, written with a diff and a log, and played against the catalogue as
it is on fresh deals through ``neom compare``'s report. ``--resume`` replays the pass: every
evaluation already on disk is read back (the searches are deterministic), an interrupted one
is resumed by the runner.
"""

import difflib
import json
import math
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from analysis.core.compare import file_digest
from analysis.core.tabulate import Flagging
from analysis.neom import balance as B
from analysis.neom.balance_fields import field_label
from sim.core.errors import UserError

DEFAULT_BUDGET = 12  # evaluations per search, the catalogue as it is included
CHANGE_PRICE = 0.05  # optuna's loss: per changed field (in units of band excess)
STEP_PRICE = 0.01  # and per unit of change
SPAN = {"VP": 6}  # optuna's range of a lever on its side: 6 VP, else SPAN_OTHER units
SPAN_OTHER = 8
MAX_SPAN = B.MAX_AMOUNT
REJECT = 100.0  # loss of a candidate that flags an item elsewhere (never the best)


# --- assessing a candidate ----------------------------------------------------------------


@dataclass
class Assessment:
    """The goals measured on one evaluation."""

    values: dict
    errors: dict  # item -> signed distance of its estimate from the goal (0: met)
    decided: set  # items whose violation is decided (the whole interval past the goal)
    fixable: dict  # item -> True, or why no lever can fix it
    problems: dict  # item -> what is wrong, in words
    kinds: dict  # item -> cornerstone, tile, disaster, dead, good
    loss: float
    n_violations: int  # decided violations
    dead: list
    flagged: list
    out_of_band: list
    seconds: float = 0.0
    reasons: dict = field(default_factory=dict)  # dead tile -> why (the report's words)
    lacking: list = field(default_factory=list)  # goods produced in too few games
    item_loss: dict = field(default_factory=dict)  # item -> its share of ``loss``
    # item -> (estimate, lo, hi) of what its goal measures (vs_median, effect, a share)
    figures: dict = field(default_factory=dict)
    new_flags: list = field(default_factory=list)  # decided elsewhere, not at the baseline
    # Several fields (--also-field): each field's own judged assessment, (label, Assessment),
    # the first the search's field; this one combines them (``combine``).
    by_field: list = field(default_factory=list)


GOALS = ("cornerstones", "tiles", "dead", "goods", "usage")
GOOD_SHARE = 0.05  # a good is produced by some city in at least this share of the games
UNBUILT_SHARE = 0.10  # a cornerstone is placed by at least this share of its drafters
GOOD_SUFFIX = " (good)"  # a good's item name: "Hovercars (good)"


def good_item(good: str) -> str:
    return good + GOOD_SUFFIX


def assess(measurement, setting: B.Setting, intended: set[str],
           goals: tuple[str, ...] = GOALS) -> Assessment:  # fmt: skip
    """The goals of the pass for one played candidate, with the report's own tables: a
    cornerstone is off its goal when its whole interval relative to the median cornerstone
    lies outside the band, or the report flags it; a tile when the report flags it; a tile in
    play is dead when it is never placed (it stays on the list until it is placed in
    ``RARE_SHARE`` of the games), a cornerstone in the band when its drafters' placement rate
    lies wholly below ``UNBUILT_SHARE`` (goal ``dead``); a good when no city produces it in
    ``GOOD_SHARE`` of the games (the shares of thousands of games are precise: no interval)."""
    import polars as pl

    from analysis.neom import cornerstones, tiles
    from analysis.neom.catalog_figures import goods_shares
    from analysis.neom.usage import usage_table

    run = measurement.run
    flagging = Flagging(band=setting.band, min_n=setting.min_n)
    cs = cornerstones.cornerstone_table(run, flagging)
    tt = tiles.tile_table(run, flagging)
    # The usage goal reads the report's usage table and its floor rule (one definition).
    usage = usage_table(run.tables, cs, tt, setting.floors or B.USAGE_FLOORS)
    below_floor = dict(zip(usage["tile_name"].to_list(), usage["below_floor"].to_list(),
                           strict=True))  # fmt: skip
    band = setting.band
    errors, problems, kinds, fixable, reasons = {}, {}, {}, {}, {}
    decided: set[str] = set()
    item_loss: dict[str, float] = {}
    figures: dict = {}
    loss = 0.0
    out_of_band, flagged, dead, lacking = [], [], [], []
    for r in cs.iter_rows(named=True):
        name = r["tile_name"]
        if r["small"] or "cornerstones" not in goals:
            continue
        kinds[name] = "cornerstone"
        figures[name] = (r["vs_median"], r["vs_median_lo"], r["vs_median_hi"])
        before = loss
        outside = r["vs_median_lo"] > band or r["vs_median_hi"] < -band
        errors[name] = r["vs_median"] if abs(r["vs_median"]) > band else 0.0
        if outside:
            out_of_band.append(name)
            problems[name] = f"{100 * r['vs_median']:+.1f} pct-pts vs the median cornerstone"
            loss += (abs(r["vs_median"]) - band) / band
        if r["flag"]:
            flagged.append(name)
            problems[name] = (problems.get(name, "") + f"; flagged {r['flag']}").lstrip("; ")
            loss += (abs(r["effect"]) - band) / band
            if not errors[name]:
                errors[name] = r["effect"]  # in band against the median, flagged on its own
        if outside or r["flag"]:
            decided.add(name)
        elif "usage" in goals and below_floor.get(name):
            # In the band, but kept or built below its floor (its whole interval): a card
            # nobody wants is not balanced.
            kinds[name] = "unused"
            kept, built = setting.floors or B.USAGE_FLOORS
            errors[name] = min(_nan0(r["kept"]) - kept, _nan0(r["placed_rate"]) - built)
            decided.add(name)
            loss += 1.0
            problems[name] = (f"kept in {100 * _nan0(r['kept']):.1f}% of the deals that offer "
                              f"it, built by {100 * _nan0(r['placed_rate']):.1f}% of its "
                              "drafters")  # fmt: skip
        elif "dead" in goals and r["placed_rate_hi"] < UNBUILT_SHARE:
            # Drafted, but built by too few of its drafters: drafted to no purpose.
            kinds[name] = "unbuilt"
            errors[name] = r["placed_rate"] - UNBUILT_SHARE
            decided.add(name)
            loss += 1.0
            problems[name] = f"placed by {100 * r['placed_rate']:.1f}% of its drafters"
        item_loss[name] = loss - before
    for r in tt.filter((pl.col("flag") != "") & ("tiles" in goals)).iter_rows(named=True):
        name = r["tile_name"]
        kinds[name] = "disaster" if _is_disaster(run, r["tile"]) else "tile"
        errors[name] = r["effect"]
        decided.add(name)
        flagged.append(name)
        problems[name] = f"flagged {r['flag']} ({100 * r['effect']:+.1f} pct-pts)"
        loss += (abs(r["effect"]) - band) / band
        item_loss[name] = (abs(r["effect"]) - band) / band
    for r in tt.iter_rows(named=True):
        if r["tile_name"] not in figures:
            figures[r["tile_name"]] = (r["effect"], r["effect_lo"], r["effect_hi"])
    table = tiles.dead_tiles(run, tt)
    rare = table.filter(~pl.col("why").str.starts_with("never dealt"))
    for r in rare.iter_rows(named=True):
        name = r["tile_name"]
        share = r["placed"] / measurement.games
        if name.casefold() in intended or name in kinds or "dead" not in goals:
            continue
        kinds[name] = "dead"
        errors[name] = share - tiles.RARE_SHARE
        reasons[name] = r["why"]
        if r["placed"] == 0:
            dead.append(name)
            decided.add(name)
            loss += 1.0
            item_loss[name] = 1.0
        problems[name] = f"placed in {100 * share:.2f}% of games ({r['why']})"
    if "goods" in goals:
        for r in goods_shares(run).iter_rows(named=True):
            figures[good_item(r["good"])] = (r["games"], r["games"], r["games"])
            if r["games"] >= GOOD_SHARE:
                continue
            name = good_item(r["good"])
            kinds[name] = "good"
            errors[name] = r["games"] - GOOD_SHARE
            decided.add(name)
            lacking.append(r["good"])
            loss += (GOOD_SHARE - r["games"]) / GOOD_SHARE
            item_loss[name] = (GOOD_SHARE - r["games"]) / GOOD_SHARE
            problems[name] = f"produced by some city in {100 * r['games']:.1f}% of games"
    return Assessment(measurement.values, errors, decided, fixable, problems, kinds, loss,
                      len(decided), dead, flagged, out_of_band, measurement.seconds, reasons,
                      lacking, item_loss, figures)  # fmt: skip


def _nan0(x) -> float:
    return 0.0 if x is None or not math.isfinite(float(x)) else float(x)


def _is_disaster(run, tile: int) -> bool:
    from sim.neom import constants as K

    return bool(run.tables.tiles[int(tile), K.C_TYPES] & K.T_DISASTER)


# --- levers for the pass --------------------------------------------------------------------

NEED_DOWN = ("vp", "effects", "income", "coins_on_place", "cost", "alternatives")
# Coins on placement before income: every player counts coins in hand, and only a far-sighted
# one counts income still to come (a tile made attractive by income alone can be worth far more
# to some players than to others).
NEED_UP = ("vp", "cost", "alternatives", "coins_on_place", "income", "effects", "requires",
           "requires_tiles")  # fmt: skip
PRODUCER_LEVERS = ("requires", "cost", "coins_on_place", "income")
PREREQUISITE_LEVERS = ("cost",)  # cheaper, not stronger: its VP is its own item's


def _group(lever: B.Lever) -> str:
    return lever.path.split("[")[0].split(".")[0]


def _can(lever: B.Lever, need_up: bool) -> bool:
    """The lever's value can move the way the item's effect needs."""
    up = (lever.sign > 0) == need_up
    return lever.current < lever.high if up else lever.current > lever.low


def _ordered(levers, need_up: bool, groups) -> list[B.Lever]:
    """The live levers that can move the item's way, by group in ``groups``' order (within a
    group, the largest value first when the item must weaken, the smallest when it must
    strengthen)."""
    live = [lv for lv in levers if not lv.inert and _can(lv, need_up)]
    out = []
    for group in groups:
        found = [lv for lv in live if _group(lv) == group]
        found.sort(key=lambda lv: -lv.current if not need_up else lv.current)
        out += found
    return out


def _in_play(tile: dict, players: int) -> bool:
    """The tile is dealt (or drafted) at this player count in the standard game."""
    if tile.get("replaces") or "disaster" in tile.get("types", []):
        return False
    return tile.get("deck") == "cornerstone" or int(tile.get("players", 1)) <= max(players, 3)


def producer_levers(data: dict, good: str, players: int, variant: str, depth: int = 2,
                    skip: frozenset = frozenset()):  # fmt: skip
    """Levers that make ``good`` produced more often: for each producer in play (the earliest
    generation and the commonest icon first, cornerstones last) its required goods (fewer), its
    cost (lower), income and coins on placement (higher); then, ``depth`` levels down, the
    producers of the goods it still requires (the goods chain), except goods in ``skip`` (too
    rarely produced themselves: their own items move their producers)."""
    order = {"gen1": 0, "gen2": 1, "gen3": 2, "cornerstone": 3}
    tiles = [t for t in data.get("tiles", []) if good in t.get("produces", [])]
    tiles = [t for t in tiles if _in_play(t, players)]
    tiles.sort(key=lambda t: (order.get(t.get("deck"), 4), int(t.get("players", 1))))
    out = []
    for tile in tiles:
        _, _, levers = B.item_levers(data, str(tile["name"]), variant)
        out += _ordered(levers, True, PRODUCER_LEVERS)
    if depth > 1:
        for tile in tiles:
            for needed in tile.get("requires", []):
                if needed not in skip:
                    out += producer_levers(data, needed, players, variant, depth - 1, skip)
    return out


def is_structural(data: dict, lever: B.Lever) -> bool:
    """Removing a requirement (a good, a prerequisite tile) from a tile that consumes it: the
    edit cuts a chain loose instead of repairing it. A producer's own inputs are its numbers
    (fewer inputs make its good more often), so they are not structural."""
    if _group(lever) not in B.COUNT_FIELDS:
        return False
    if lever.path == "requires_tiles":
        return True
    tiles = data.get("tiles", [])
    return not tiles[B._find_entry(tiles, lever.tile)].get("produces")


def missing_goods(data: dict, name: str, lacking) -> list[str]:
    """The goods an item requires that too few cities make (its printed requirement)."""
    tiles = data.get("tiles", [])
    return [g for g in tiles[B._find_entry(tiles, name)].get("requires", []) if g in lacking]


def choose_levers(data: dict, name: str, kind: str, need_up: bool, variant: str,
                  players: int = 4, reason: str = "", lacking: frozenset = frozenset(),
                  structural: bool = True) -> list[B.Lever]:  # fmt: skip
    """The levers of :func:`_choose_levers`; without ``structural``, none that removes a
    requirement from a consumer (``is_structural``), and a tile dead for a good too few cities
    make is repaired at the good's producers."""
    levers = _choose_levers(data, name, kind, need_up, variant, players, reason, lacking)
    if structural:
        return levers
    kept = [lv for lv in levers if not is_structural(data, lv)]
    from analysis.neom.tiles import WHY_NO_GOODS

    if kind in ("dead", "tile") and need_up and reason.startswith(WHY_NO_GOODS):
        # Its good first: the producers' cost and inputs, across their whole legal range.
        first = []
        for good in missing_goods(data, name, lacking) or data["tiles"][
                B._find_entry(data["tiles"], name)].get("requires", []):  # fmt: skip
            first += producer_levers(data, good, players, variant, skip=lacking - {good})
        # Its own numbers cannot place it while nobody makes the good: only the producers.
        return list({lv.key: lv for lv in reversed(first)}.values())[::-1]
    return kept


def _choose_levers(data: dict, name: str, kind: str, need_up: bool, variant: str,
                   players: int = 4, reason: str = "",
                   lacking: frozenset = frozenset()) -> list[B.Lever]:  # fmt: skip
    """The levers an item moves, in the order it tries them (each to the end of its span before
    the next: several levers for an item no single one can bring to its goal):

    - too strong: its VP, its effects' amounts (largest first), income, coins on placement,
      then a higher cost;
    - too weak or dead: its VP where VP scores, cost, alternatives' costs, coins on placement,
      income, effects, then fewer required goods and prerequisite tiles; a tile dead for a
      missing prerequisite first makes the prerequisite tiles cheaper, then requires fewer of
      them; one dead for a good no city made first requires fewer goods;
    - a good too rarely produced: its producers' levers (``producer_levers``; the goods in
      ``lacking`` have items of their own);
    - a Disaster: the costs of the tiles that protect against it."""
    if kind == "good":
        good = name.removesuffix(GOOD_SUFFIX)
        return producer_levers(data, good, players, variant, skip=lacking - {good})
    _, item_kind, levers = B.item_levers(data, name, variant)
    if item_kind == "disaster":
        return [lv for lv in levers if not lv.inert and _can(lv, need_up)]
    if not need_up:
        return _ordered(levers, False, NEED_DOWN)
    own = _ordered(levers, True, NEED_UP)
    from analysis.neom.tiles import WHY_NO_GOODS, WHY_PREREQUISITE

    if reason.startswith(WHY_NO_GOODS):
        return sorted(own, key=lambda lv: _group(lv) != "requires")
    if reason.startswith(WHY_PREREQUISITE):
        tiles = data.get("tiles", [])
        first = []
        for prerequisite in tiles[B._find_entry(tiles, name)].get("requires_tiles", []):
            _, _, theirs = B.item_levers(data, prerequisite, variant)
            first += _ordered(theirs, True, PREREQUISITE_LEVERS)
        first += [lv for lv in own if lv.path == "requires_tiles"]
        return first + [lv for lv in own if lv.path != "requires_tiles"]
    return own


def choose_lever(data: dict, name: str, kind: str, need_up: bool, variant: str):
    """The first lever of :func:`choose_levers`, or None."""
    levers = choose_levers(data, name, kind, need_up, variant)
    return levers[0] if levers else None


@dataclass
class Track:
    """An item the pass moves: its levers (each bounded to a small span around its value) with
    the way each value goes, the one it moves now (``index``), and that lever's measured points
    (value -> Point). A lever that reaches the end of its span keeps its value there and the
    item goes on with the next."""

    name: str
    levers: list
    directions: list  # +1: the value rises, -1: it falls
    kind: str = ""  # the item's kind when the track was made (one-sided or not)
    index: int = 0
    points: dict = field(default_factory=dict)
    stuck: str = ""  # why its levers within their spans cannot bring it to its goal
    rejected: list = field(default_factory=list)  # values that flagged another item
    settled: int | None = None  # the value it stays at: its zero is next to it

    @property
    def lever(self) -> B.Lever | None:
        return self.levers[self.index] if self.index < len(self.levers) else None

    @property
    def direction(self) -> int:
        return self.directions[self.index] if self.index < len(self.directions) else 0

    def release(self, key) -> None:
        """Give up the lever ``key`` (its value stays as moved); a lever still to come is
        dropped, the one moving now makes way for the next."""
        position = next(i for i, lv in enumerate(self.levers) if lv.key == key)
        del self.levers[position], self.directions[position]
        if position < self.index:
            self.index -= 1
        elif position == self.index:
            self.points = {}


def span_of(lever: B.Lever) -> int:
    if _group(lever) in B.COUNT_FIELDS:
        return lever.current  # a count may fall to its bound
    return SPAN.get(lever.unit, SPAN_OTHER)


def bounded(lever: B.Lever, direction: int, whole: bool = False) -> B.Lever:
    """The lever limited to its span on the side the item needs ("smallest steps": a pass
    proposes edits a designer would make, and says when one is not enough); ``whole``: its
    whole legal range on that side (a good's producers: a chain is repaired at its producer,
    however far its cost must move)."""
    from dataclasses import replace

    span = MAX_SPAN if whole else span_of(lever)
    if direction > 0:
        return replace(lever, low=lever.current, high=min(lever.high, lever.current + span))
    return replace(lever, low=max(lever.low, lever.current - span), high=lever.current)


# --- the pass -------------------------------------------------------------------------------

ONE_SIDED = ("dead", "unbuilt", "good", "unused")  # any value that reaches the goal will do
PRUNE_SLACK = 0.2  # pruning: an undone edit may add this much loss (in its units) in all


def goal_items(a0: Assessment, items=None, flagged: bool = False) -> set[str]:
    """The items the pass works on, fixed on the catalogue as it is: every item off its goal;
    with ``flagged``, only the report's flags (cornerstones and tiles, not dead tiles or
    goods); with ``items`` (names, a good as "Gold" or "Gold (good)"), those named too (one
    on its goal stays as it is)."""
    if not items and not flagged:
        return set(a0.decided)
    chosen = set()
    if flagged:
        chosen |= {n for n in a0.decided if a0.kinds.get(n) in ("cornerstone", "tile", "disaster")}
    for name in items or ():
        folded = name.casefold()
        for known in set(a0.kinds) | set(a0.figures):
            if folded in (known.casefold(), known.casefold().removesuffix(GOOD_SUFFIX.casefold())):
                chosen.add(known)
    return chosen


def judge(a: Assessment, baseline: Assessment, targets: set[str], band: float | None = None,
          exempt=frozenset()) -> Assessment:  # fmt: skip
    """The pass's view of an assessment: the loss of its goal items only, plus ``REJECT`` for
    each item decided elsewhere that was not at the baseline (an edit that flags another item
    is rejected: such a candidate is never the best); the violations likewise. With ``band``,
    a new flag on a cornerstone or tile counts only when its whole interval lies beyond the
    band *and* its estimate moved away from zero by more than the band since the baseline: a
    flag also flips with the multiple-comparison correction (every other item's p-value) and
    with any change of play, at an unchanged effect (v2's Condos & Restaurant: +5.9 [+3.4,
    +8.4] pct-pts unflagged, then flagged at the same figures when a cornerstone moved).
    ``exempt``: items known to be flagged without the edits (say, on a reference catalogue the
    baseline's plants mask): never a new flag. A one-sided item (a dead tile, ...) already
    short of its goal at the baseline, undecided there, is not a new flag either: a tile placed
    in 1 of 4,000 games there and in none here is the same tile on other luck, not the edit's
    doing (issue 38's Jeweler, starved of Gold by the plant, flickered between the two and had
    every round that moved City Archive rejected). A cornerstone elsewhere is a new flag only
    when the report flags it (its test against the band, corrected across cornerstones, as a
    tile's flag is), not when only its own 95% interval lies outside the band: some of ~30
    cornerstones do that by luck in some of a pass's rounds (issue 38's Lighthouse, drafted in
    116 of 4,000 games, -2.0 [-9.7, +5.7] pct-pts vs the median on the planted copy and
    -11.7 [-19.4, -4.0] unflagged on a candidate, had Family Homes' VP cuts rejected)."""
    fresh = a.decided - baseline.decided - targets - set(exempt)
    a.new_flags = sorted(n for n in fresh if _beyond(a, n, band, baseline))
    mine = a.decided & targets
    a.loss = sum(a.item_loss.get(n, 0.0) for n in mine) + REJECT * len(a.new_flags)
    a.n_violations = len(mine) + len(a.new_flags)
    return a


def _beyond(a: Assessment, name: str, band: float | None, baseline: Assessment) -> bool:
    if a.kinds.get(name) in ONE_SIDED and baseline.kinds.get(name) in ONE_SIDED:
        return baseline.errors.get(name, 0.0) >= 0  # short already: not the edit's flag
    if band is None or a.kinds.get(name) in ONE_SIDED or name not in a.figures:
        return True
    if a.kinds.get(name) == "cornerstone" and name not in a.flagged:
        return False  # out of the band by its own interval only: the report does not flag it
    est, lo, hi = a.figures[name]
    if not (lo > band or hi < -band):
        return False
    if name not in baseline.figures:
        return True
    return abs(est) - abs(baseline.figures[name][0]) > band


def combine(judged: list) -> Assessment:
    """One assessment of a candidate played in several fields, from each field's judged one
    (``(label, Assessment)``, the search's field first): an item's error is the sum of its
    fields' (each is 0 inside the band, so an item off its goal in one field is moved by that
    field's figure, and one too strong in one field and too weak in another by their balance);
    it is off its goal when it is in any field; loss, violations and new flags add up over the
    fields; the figures are the first field's."""
    if len(judged) == 1:
        return judged[0][1]
    parts = [a for _, a in judged]
    first = parts[0]
    names = sorted({n for a in parts for n in a.errors})
    kinds: dict = {}
    for a in parts:  # a kind where the item is off its goal wins (say "cornerstone", not
        for n, k in a.kinds.items():  # "unused" from a field where it only misses a floor)
            kinds.setdefault(n, k)
    for a in reversed(parts):
        kinds.update({n: a.kinds[n] for n in a.decided if n in a.kinds})
    problems = {}
    for label, a in judged:
        for n, why in a.problems.items():
            problems[n] = (problems.get(n, "") + f"; {label}: {why}").lstrip("; ")

    def union(attribute):
        return sorted({n for a in parts for n in getattr(a, attribute)})

    figures = {n: f for a in reversed(parts) for n, f in a.figures.items()}
    merged = Assessment(
        first.values, {n: sum(a.errors.get(n, 0.0) for a in parts) for n in names},
        set().union(*(a.decided for a in parts)),
        {n: f for a in reversed(parts) for n, f in a.fixable.items()}, problems, kinds,
        sum(a.loss for a in parts), sum(a.n_violations for a in parts), union("dead"),
        union("flagged"), union("out_of_band"), sum(a.seconds for a in parts),
        {n: r for a in reversed(parts) for n, r in a.reasons.items()}, union("lacking"),
        {n: sum(a.item_loss.get(n, 0.0) for a in parts)
         for n in {n for a in parts for n in a.item_loss}},
        figures | first.figures, union("new_flags"), list(judged),
    )  # fmt: skip
    return merged


class Pass:
    def __init__(self, evaluator: B.Evaluator, data: dict, intended: set[str], variant: str,
                 log, goals: tuple[str, ...] = GOALS, per_round: int = 0, items=None,
                 flagged: bool = False, structural: bool = False, exempt=frozenset(),
                 label: str = "", others=()):  # fmt: skip
        # The search's field is ``evaluator``'s (``label``: its name in the outputs); every
        # candidate also plays in each of ``others`` ((label, Evaluator): --also-field), on
        # its own baseline there, and is judged in every field (``combine``).
        self.label = label
        self.others = list(others)
        self.baselines: dict = {}  # label -> the catalogue as it is in that field
        self.goals = goals
        self.per_round = per_round
        self.items = items
        self.flagged = flagged
        self.structural = structural
        self.exempt = frozenset(exempt)  # flagged elsewhere already: never a new flag
        self.baseline: Assessment | None = None  # the catalogue as it is (round 0)
        self.targets: set[str] | None = None  # the goal items, fixed at round 0
        self.evaluator = evaluator
        self.data = data
        self.intended = intended
        self.variant = variant
        self.log = log
        self.owner: dict = {}  # lever key -> the item whose track moves it
        self.currents: dict = {}  # lever key -> its value in the catalogue as it is

    @property
    def fields(self) -> list:
        """(label, Evaluator) of every field a candidate plays in, the search's first."""
        return [(self.label, self.evaluator), *self.others]

    def evaluate(self, values: dict, search: str, round_: int) -> Assessment:
        what = f"{search} round {round_}: " + (B.describe_values(values) if values else
                                                "the catalogue as it is")  # fmt: skip
        start = time.perf_counter()
        a = self.judge_fields(self.assess_fields(values, what))
        a.seconds = time.perf_counter() - start
        self.log(search, round_, a)
        return a

    def assess_fields(self, values: dict, what: str) -> list:
        """The candidate played and assessed in every field: [(label, Assessment)]."""
        out = []
        for label, evaluator in self.fields:
            shown = f"[{label}] {what}" if len(self.fields) > 1 else what
            m = evaluator.measure(values, events=True, what=shown[:160])
            a = assess(m, evaluator.setting, self.intended, self.goals)
            a.seconds = m.seconds
            out.append((label, a))
        return out

    def judge_fields(self, measured: list) -> Assessment:
        """``judge`` in every field against that field's baseline, then ``combine``. The goal
        items are fixed on the catalogue as it is in all the fields together: an item off its
        goal in any field (or named by --items) is one, and it must end on its goal, and on
        neither side of the band, in every field."""
        if len(measured) == 1:
            return self.judge(measured[0][1])
        if not self.baselines and not measured[0][1].values:
            self.baselines = {label: a for label, a in measured}
            self.targets = set().union(*(goal_items(a, self.items, self.flagged)
                                         for _, a in measured))  # fmt: skip
        if not self.baselines:
            return combine(measured)
        judged = [(label, judge(a, self.baselines[label], self.targets, self._band(),
                                self.exempt)) for label, a in measured]  # fmt: skip
        merged = combine(judged)
        if self.baseline is None:
            self.baseline = merged
        return merged

    def judge(self, a: Assessment) -> Assessment:
        """Fix the goal items on the first assessment (the catalogue as it is), then score
        every assessment by them (``judge``)."""
        if self.baseline is None and not a.values:
            self.baseline = a
            self.targets = goal_items(a, self.items, self.flagged)
        if self.baseline is None:
            return a
        return judge(a, self.baseline, self.targets, self._band(), self.exempt)

    def _band(self) -> float | None:
        setting = getattr(self.evaluator, "setting", None)
        return getattr(setting, "band", None)

    def add_tracks(self, a: Assessment, tracks: dict) -> None:
        """A track for every decided violation that has none yet: the cornerstones and flagged
        tiles first, then dead tiles, then goods (a lever is moved by one item only)."""
        rank = {"cornerstone": 0, "tile": 0, "disaster": 0, "good": 1, "dead": 2, "unbuilt": 2,
                "unused": 2}  # fmt: skip
        players = self.evaluator.setting.players
        targets = a.decided if self.targets is None else a.decided & self.targets
        for name in sorted(targets, key=lambda n: (rank.get(a.kinds.get(n), 3), n)):
            if name in tracks:
                continue
            if a.fixable.get(name, True) is not True:
                tracks[name] = Track(name, [], [], stuck=a.fixable[name])
                continue
            need_up = a.errors[name] < 0
            levers = choose_levers(self.data, name, a.kinds[name], need_up, self.variant,
                                   players, a.reasons.get(name, ""), frozenset(a.lacking),
                                   self.structural)  # fmt: skip
            everything = list(levers)
            # A tile's own item takes its own levers back from an item that borrowed them (a
            # Disaster moving a protecting tile's cost, a good moving its producer's), unless
            # it is only too rarely placed: the good's repair places it.
            for lever in levers:
                borrower = self.owner.get(lever.key)
                if a.kinds.get(name) in ("dead", "unbuilt", "unused"):
                    break
                if borrower not in (None, name) and lever.tile == name and borrower in tracks:
                    tracks[borrower].release(lever.key)
                    del self.owner[lever.key]
            levers = [lv for lv in levers if self.owner.get(lv.key, name) == name]
            unique = list({lv.key: lv for lv in reversed(levers)}.values())[::-1]
            if not unique:
                why = "no lever can move it that way"
                structural = [lv for lv in self._all_levers(name, a, need_up)
                              if is_structural(self.data, lv)]  # fmt: skip
                if not self.structural and structural and everything == []:
                    why = (f"not fixed: only a structural edit ({structural[0].tile}: fewer "
                           f"{structural[0].unit}s) would move it, and --structural is not "
                           "given")  # fmt: skip
                elif everything:
                    owners = sorted({self.owner[lv.key] for lv in everything
                                     if lv.key in self.owner})  # fmt: skip
                    why = f"waits for {', '.join(owners)}, which moves its levers"
                tracks[name] = Track(name, [], [], stuck=why)
                continue
            directions = [1 if (lv.sign > 0) == need_up else -1 for lv in unique]
            # A good's producers (for a good, or for a tile dead for want of it) across their
            # whole legal range; every other lever within its span.
            from analysis.neom.tiles import WHY_NO_GOODS

            chain = a.kinds[name] == "good" or a.reasons.get(name, "").startswith(WHY_NO_GOODS)
            whole = [chain and (a.kinds[name] == "good" or lv.tile != name) for lv in unique]
            bounded_levers = [
                bounded(lv, d, w) for lv, d, w in zip(unique, directions, whole, strict=True)
            ]
            for lever in bounded_levers:
                self.owner[lever.key] = name
                self.currents[lever.key] = lever.current
            tracks[name] = Track(name, bounded_levers, directions, a.kinds[name])

    def _all_levers(self, name: str, a: Assessment, need_up: bool) -> list:
        players = self.evaluator.setting.players
        return choose_levers(self.data, name, a.kinds[name], need_up, self.variant, players,
                             a.reasons.get(name, ""), frozenset(a.lacking), True)  # fmt: skip

    def _next_move(self, track: Track, a: Assessment, values: dict, moves: dict) -> None:
        """The item's next value on its current lever (or the next lever's first step)."""
        name = track.name
        while track.lever is not None:
            lever = track.lever
            value = values.get(lever.key, lever.current)
            points = track.points
            if track.kind in ONE_SIDED:  # any value past the goal will do: no zero to find
                points = {v: p for v, p in points.items() if p.effect < 0}
            nxt = B._propose(points, lever, track.direction)
            if nxt is not None and nxt != value:
                moves[lever.key] = nxt
                return
            bracket = B._bracket(points)
            if bracket is not None and bracket[1] - bracket[0] <= 1:
                # Its zero lies between two adjacent values: keep the nearer one.
                track.settled = min(bracket, key=lambda v: abs(points[v].effect))
                moves[lever.key] = track.settled
                return
            # The end of this lever's span: it stays there, the next lever moves.
            track.index += 1
            if track.lever is not None:
                start = values.get(track.lever.key, track.lever.current)
                error = a.errors.get(name, 0.0)
                track.points = {start: B.Point(start, error, error, error)}
        names = ", ".join(f"{lv.name} {lv.current} → {values.get(lv.key, lv.current)}"
                          for lv in track.levers)  # fmt: skip
        track.stuck = f"{names}: the ends of their spans do not reach the goal"
        if a.kinds.get(name) in ("dead", "unbuilt", "unused") and name in a.decided:
            for lever in track.levers:  # still never placed: no edit that does not do its job
                moves[lever.key] = lever.current

    def coordinate(self, budget: int) -> tuple[list[Assessment], dict]:
        """Off-goal items move along their levers by secant steps from their own points, the
        furthest first, ``per_round`` at a time (0: all), halved after a round that made the
        loss worse (which is undone); an item whose lever reaches the end of its span goes on
        with its next lever; a dead tile still never placed when its last lever reaches the
        end of its span goes back to its values (no edit that does not do its job)."""
        values: dict = {}
        a = self.evaluate(values, "coordinate", 0)
        rounds = [a]
        tracks: dict[str, Track] = {}
        band = self.evaluator.setting.band
        best = a
        per_round = self.per_round or len(a.decided & (self.targets or a.decided)) or 1
        tried = {_frozen(values)}
        moved = per_round
        for round_ in range(1, budget):
            self.add_tracks(a, tracks)
            for name, track in tracks.items():  # what the last round measured, for each item
                if track.lever is not None and not a.new_flags:
                    value = values.get(track.lever.key, track.lever.current)
                    error = a.errors.get(name, 0.0)
                    track.points[value] = B.Point(value, error, error, error)
            if a.loss > best.loss:
                # The round made things worse (the moves overshot together): go back to the
                # best values and move half as many items next time.
                values, a = dict(best.values), best
                # Half as many as actually moved (fewer may have moved than per_round allows).
                per_round = max(1, min(per_round, moved) // 2)
            # The items furthest from their goal move first, at most per_round of them.
            movable = [
                n for n, t in tracks.items()
                if t.lever is not None and not t.stuck and t.settled is None
            ]  # fmt: skip
            ranked = sorted(movable, key=lambda n: (-_severity(a, n, band), n))
            # per_round at a time; when their moves were tried already (a rejected round
            # repeats), the next ones down the list move instead.
            for first in range(0, max(1, len(ranked)), per_round):
                moves: dict = {}
                for name in sorted(ranked[first : first + per_round]):
                    if not a.errors.get(name, 0.0):
                        continue  # on its goal: it stays where it is
                    self._next_move(tracks[name], a, values, moves)
                changed = {k: v for k, v in (values | moves).items() if v != self.currents[k]}
                if _frozen(changed) not in tried:
                    break
            else:
                break  # nothing new to try
            if _frozen(changed) in tried:
                break
            moved = len({self.owner.get(key) for key in moves} - {None}) or 1
            tried.add(_frozen(changed))
            values = changed
            a = self.evaluate(values, "coordinate", round_)
            rounds.append(a)
            if a.new_flags:
                self._reject(tracks, moves, a)
            if a.loss <= best.loss:
                best = a
        return rounds, tracks

    def _reject(self, tracks: dict, moves: dict, a: Assessment) -> None:
        """A round that flagged an item elsewhere is undone (its loss counts ``REJECT``). When
        one item moved, its lever never goes that far again: the value is its new bound."""
        from dataclasses import replace

        movers = {self.owner.get(key) for key in moves} - {None}
        if len(movers) != 1:
            return  # several moved: the next rounds move fewer (the loss made them halve)
        track = tracks[movers.pop()]
        lever = track.lever
        if lever is None or lever.key not in moves:
            return
        value = moves[lever.key]
        edge = value - track.direction
        if track.direction > 0:
            narrowed = replace(lever, high=max(lever.current, edge))
        else:
            narrowed = replace(lever, low=min(lever.current, edge))
        track.levers[track.index] = narrowed
        track.points.pop(value, None)
        track.rejected.append(f"{lever.name} = {value} flagged {', '.join(a.new_flags)}")

    def prune(self, best: Assessment, budget: int | None) -> tuple[list[Assessment], Assessment]:
        """Fewest fields: undo each edit in turn (the smallest change first) on the same deals
        and keep it undone when the goals still hold: no item off its goal that was on it in
        ``best``, and the loss at most ``PRUNE_SLACK`` above ``best``'s (so the slack does not
        add up over many undone edits). ``budget``: at most this many tries (None: every
        edit)."""
        current = best
        rounds = []
        order = sorted(best.values, key=lambda k: (abs(best.values[k] - self._current(k)), k))
        for number, key in enumerate(order[:budget], start=1):
            trial = {k: v for k, v in current.values.items() if k != key}
            a = self.evaluate(trial, "prune", number)
            rounds.append(a)
            # Against the searched best, not the last undo: the slack does not add up.
            targets = self.targets if self.targets is not None else a.decided | best.decided
            goals_kept = (a.decided & targets) <= (best.decided & targets)
            if goals_kept and not a.new_flags and a.loss <= best.loss + PRUNE_SLACK:
                current = a
        return rounds, current

    def _current(self, key) -> int:
        if key not in self.currents:
            tiles = self.data["tiles"]
            self.currents[key] = B.get_value(tiles[B._find_entry(tiles, key[0])], key[1])
        return self.currents[key]

    def optuna(self, budget: int, seed: int) -> tuple[list[Assessment], dict]:
        """Optuna's TPE over the first levers of the catalogue-as-it-is's off-goal items, each
        within its span on the side the item needs."""
        try:
            import optuna
        except ImportError:
            raise UserError(
                "--optimizer optuna needs Optuna: pip install 'neom-sim[balance]'"
            ) from None
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        a0 = self.evaluate({}, "optuna", 0)
        rounds = [a0]
        tracks: dict[str, Track] = {}
        self.add_tracks(a0, tracks)
        levers = {t.lever.key: t.lever for t in tracks.values() if t.lever is not None}
        if not levers:
            return rounds, tracks
        sampler = optuna.samplers.TPESampler(seed=seed % 2**32, multivariate=True)
        study = optuna.create_study(direction="minimize", sampler=sampler)
        names = {key: f"{key[0]}: {key[1]}" for key in levers}
        study.enqueue_trial({names[k]: lever.current for k, lever in levers.items()})
        for round_ in range(1, budget):
            trial = study.ask()
            values = {k: trial.suggest_int(names[k], lv.low, lv.high) for k, lv in levers.items()}
            values = {k: v for k, v in values.items() if v != levers[k].current}
            a = self.evaluate(values, "optuna", round_)
            rounds.append(a)
            steps = sum(abs(v - levers[k].current) for k, v in values.items())
            study.tell(trial, a.loss + CHANGE_PRICE * len(values) + STEP_PRICE * steps)
        return rounds, tracks


def _frozen(values: dict) -> frozenset:
    return frozenset(values.items())


def _severity(a: Assessment, name: str, band: float) -> float:
    """How far an item is from its goal, in the loss's units."""
    error = a.errors.get(name, 0.0)
    if not error:
        return 0.0
    if a.kinds.get(name) == "good":
        return -error / GOOD_SHARE
    if a.kinds.get(name) in ("dead", "unbuilt", "unused"):
        return 1.0
    return max(0.0, abs(error) - band) / band


def best_of(rounds: list[Assessment]) -> Assessment:
    return min(rounds, key=lambda a: (a.loss, len(a.values), sum(a.values.values())))


def _candidate_text(base_text: str, values: dict, label: str) -> str:
    import tomlkit

    doc = tomlkit.parse(base_text)  # renamed here, edited by apply_values: one parse
    name = str(doc["catalog"]["name"])
    if "(balanced)" not in name:  # a pass run again on its own candidate says so once
        doc["catalog"]["name"] = f"{name} (balanced)"
    edits = "; ".join(f"{t} {p} = {v}" for (t, p), v in sorted(values.items())) or "no edits"
    # The file's own description (what it is, where its facts come from) stays; the edits of
    # each pass are added after it.
    before = str(doc["catalog"].get("description", "")).strip() or f"{label}."
    doc["catalog"]["description"] = f"{before} Edited by neom balance --all: {edits}."
    return B.apply_values(base_text, values, parsed=doc) if values else tomlkit.dumps(doc)


def run_all(args) -> int:
    from sim.core.outputs import claim_folder, writer_lock

    if args.lever or args.relative_to != "median":
        raise UserError("--lever and --relative-to belong to neom balance NAME (the pass's "
                        "cornerstone goal is against the median cornerstone)")  # fmt: skip
    setting = B.setting_from(args)
    budget = DEFAULT_BUDGET if args.max_evals is None else args.max_evals
    if budget < 1:
        raise UserError(f"--max-evals {budget}: at least 1")
    text, source, data = B.base_catalog(args.catalog)
    catalogue = tomllib.loads(text)
    names = {str(t["name"]).casefold() for t in catalogue["tiles"]}
    given = [n.strip() for n in args.intended.split(",") if n.strip()]
    unknown = [n for n in given if n.casefold() not in names]
    if unknown:
        raise UserError(f"--intended {unknown[0]!r}: no such tile in the catalogue")
    intended = {n.casefold() for n in given}
    goods = {str(g["name"]).casefold() for g in catalogue.get("goods", [])}
    for name in (n.strip() for n in args.items.split(",") if n.strip()):
        bare = name.casefold().removesuffix(GOOD_SUFFIX.casefold())
        if name.casefold() not in names and bare not in goods:
            raise UserError(f"--items {name!r}: no tile, cornerstone or good of that name in the "
                            "catalogue")  # fmt: skip
    goals = tuple(g.strip() for g in args.goals.split(",") if g.strip())
    wrong = [g for g in goals if g not in GOALS]
    if wrong or not goals:
        raise UserError(f"--goals {args.goals!r}: a comma-separated list of {', '.join(GOALS)}")
    out = Path(args.out) if args.out else Path("balance") / "all"
    if args.per_round < 0:
        raise UserError(f"--per-round {args.per_round}: 0 (every item) or more")
    if args.prune_evals is not None and args.prune_evals < 0:
        raise UserError(f"--prune-evals {args.prune_evals}: 0 (no pruning) or more")
    unreadable_strategies = f"--strategy-file {setting.strategy_file}: cannot read"
    parameters = {
        "--catalog": data.digest, "--strategies": list(setting.strategies),
        "--strategy-file": file_digest(setting.strategy_file, unreadable_strategies) or "",
        "--players": setting.players, "--games": setting.games, "--seed": setting.seed,
        "--band": args.band, "--min-n": setting.min_n, "--variant": setting.variant,
        "--intended": sorted(intended), "--optimizer": args.optimizer, "--max-evals": budget,
        "--goals": list(goals), "--per-round": args.per_round, "--prune-evals": args.prune_evals,
        "--verify-games": args.verify_games or setting.games,
        "--items": args.items, "--flagged": args.flagged, "--structural": args.structural,
    }  # fmt: skip
    if getattr(args, "also_field", None):  # (absent from a one-field pass's listing)
        parameters["--also-field"] = list(args.also_field)
    also_fields(args, setting)  # a bad --also-field is refused before anything is claimed

    def claim():
        return claim_folder(out, COMMAND, overwrite=args.overwrite, resume=args.resume,
                            parameters=parameters)  # fmt: skip

    with writer_lock(out, COMMAND, "balance folder", check=claim) as claimed:
        if claimed.state == "complete":
            print(f"neom: note: {out}: the pass is already complete; nothing to do",
                  file=sys.stderr)  # fmt: skip
            print(out / "log.md")
            return 0
        return _run_pass(args, setting, text, source, data, catalogue, intended, goals,
                         budget, out, claimed)  # fmt: skip


COMMAND = "neom balance --all"


def also_fields(args, setting: B.Setting) -> list:
    """``--also-field``: [(label, Setting)] of every other field a candidate is judged in
    (``resolve_field`` already applied), each checked as the runner checks --strategies (one
    strategy a seat, names known) before any game is played; a field given twice is refused."""
    from dataclasses import replace

    from sim.core.registry import get_game
    from sim.core.strategies import seat_strategies, split_strategies

    seen = {tuple(setting.strategies)}
    out = []
    for spec in getattr(args, "also_field", None) or ():
        strategies = split_strategies(spec, "--also-field")
        seat_strategies(get_game("neom").strategies, strategies, setting.players,
                        setting.strategy_file, "--also-field")  # fmt: skip
        if strategies in seen:
            raise UserError(f"--also-field {field_label(spec)}: the same field as --strategies "
                            "or an earlier --also-field")  # fmt: skip
        seen.add(strategies)
        out.append((field_label(spec), replace(setting, strategies=strategies)))
    return out


def _slug(label: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in label).strip("-") or "field"


def _run_pass(args, setting, text, source, data, catalogue, intended, goals, budget, out,
              claimed) -> int:  # fmt: skip
    """The pass in the claimed folder ``out``: every evaluation a listed run, the outputs
    built in a staging folder and published whole at the end."""
    from analysis.core.compare import build_comparison
    from sim.core.outputs import publish, staging_folder

    searches = ["coordinate", "optuna"] if args.optimizer == "both" else [args.optimizer]
    verify_games = args.verify_games or setting.games
    planned = setting.games * budget * len(searches) + 2 * verify_games
    fields = also_fields(args, setting)
    planned *= 1 + len(fields)
    progress = B.Progress(planned, quiet=args.quiet)
    evaluator = B.Evaluator(text, source, setting, out, progress, COMMAND, claimed)
    others = [(label, B.Evaluator(text, source, field_setting, out, progress, COMMAND, claimed))
              for label, field_setting in fields]  # fmt: skip
    log_lines: list[dict] = []

    def log(search, round_, a: Assessment):
        entry = {
            "search": search, "round": round_, "edits": _edits(a.values),
            "loss": round(a.loss, 3), "violations": a.n_violations,
            "out_of_band": a.out_of_band, "flagged": a.flagged, "dead": a.dead,
            "new_flags": [f"{n} [{label}]: {f.problems.get(n, '')}" if label else n
                          for label, f in _fields(a) for n in f.new_flags],
            "seconds": round(a.seconds, 1),
        }  # fmt: skip
        log_lines.append(entry)
        if not args.quiet:
            print(f"balance --all: {search} round {round_}: loss {a.loss:.2f}, "
                  f"{a.n_violations} items off their goal, {len(a.values)} fields edited"
                  + (f"; new flags: {'; '.join(entry['new_flags'])}" if a.new_flags else ""),
                  file=sys.stderr, flush=True)  # fmt: skip

    started = time.perf_counter()
    items = [n.strip() for n in (args.items or "").split(",") if n.strip()]
    run = Pass(evaluator, catalogue, intended, setting.variant, log, goals, args.per_round,
               items, args.flagged, args.structural, label=field_label(args.strategies),
               others=others)  # fmt: skip
    results, stuck = {}, {}
    for search in searches:
        rounds, tracks = run.coordinate(budget) if search == "coordinate" else run.optuna(
            budget, setting.seed)  # fmt: skip
        results[search] = (rounds, best_of(rounds))
        # Only what is still off its goal in the search's best ("waits for Gold" is moot once
        # Gold is made and the tile placed).
        stuck[search] = {n: t.stuck for n, t in tracks.items()
                         if t.stuck and n in results[search][1].decided}  # fmt: skip
    chosen = min(searches, key=lambda s: (results[s][1].loss, len(results[s][1].values)))
    searched = results[chosen][1]
    prune_rounds, best = [], searched
    if args.prune_evals != 0 and searched.values:
        tries = len(searched.values) if args.prune_evals is None else args.prune_evals
        progress.plan_more(setting.games * min(tries, len(searched.values)))
        prune_rounds, best = run.prune(searched, args.prune_evals)
    undone = sorted(set(searched.values) - set(best.values))

    # Fresh deals, in every field: the catalogue as it is against the candidate, through neom
    # compare.
    fresh = B.fresh_seed(setting.seed)
    targets = run.targets or set()

    def on_fresh(values: dict, what: str, before: Assessment | None = None):
        """The candidate on the fresh deals in every field, judged there against the
        catalogue as it is (``before``; None: it is the catalogue as it is): the combined
        assessment and each field's measurement."""
        judged, measured = [], {}
        for label, field_evaluator in run.fields:
            shown = f"[{label}] fresh deals: {what}" if len(run.fields) > 1 else (
                f"fresh deals: {what}")  # fmt: skip
            m = field_evaluator.measure(values, seed=fresh, games=verify_games, events=True,
                                        what=shown)  # fmt: skip
            a = assess(m, field_evaluator.setting, intended, goals)
            if before is None:
                a = judge(judge(a, _no_flags(), targets), a, targets)
            else:
                a = judge(a, field_of(before, label), targets, setting.band)
            judged.append((label, a))
            measured[label] = m
        return combine(judged), measured

    before, base_ms = on_fresh({}, "the catalogue as it is")
    after, cand_ms = on_fresh(best.values, "the candidate", before)
    final, rejected = fresh_rejections(best.values, run.owner, before, after, targets)
    if rejected:
        progress.plan_more(verify_games * len(run.fields))
        after, cand_ms = on_fresh(final, "the candidate without the rejected edits", before)
    candidate = _candidate_text(text, final, data.label)
    B._validate_text(candidate, str(out / "candidate.toml"))
    diff = "".join(difflib.unified_diff(text.splitlines(True), candidate.splitlines(True),
                                        str(source), "candidate.toml"))  # fmt: skip
    shifts = {label: _edit_shifts(e, base_ms[label], cand_ms[label], final, e.setting)
              for label, e in run.fields}  # fmt: skip
    patch = patch_entries(final, catalogue, run.owner, targets, before, after,
                          shifts[run.label], shifts)  # fmt: skip
    # Each search's best on the fresh deals too, for the comparison of the searches (the
    # choice above was made on the search deals, so these figures are not selected on).
    fresh_best = {chosen: after}
    for search in searches:
        if search not in fresh_best:
            fresh_best[search] = on_fresh(results[search][1].values, f"{search}'s best",
                                          before)[0]  # fmt: skip
    summary = {
        "catalog": data.label, "chosen": chosen, "edits": _edits(final),
        "fields_changed": len(final),
        "goal_items": sorted(targets), "structural": bool(args.structural),
        "patch": patch, "rejected_on_fresh_deals": rejected,
        "steps": sum(abs(v - _current(catalogue, k)) for k, v in final.items()),
        "search_deals": {s: _goals(results[s][1]) | {
            "evaluations": len(results[s][0]),
            "seconds": round(sum(a.seconds for a in results[s][0]), 1),
            "fields_changed": len(results[s][1].values),
            "steps": sum(abs(v - _current(catalogue, k)) for k, v in results[s][1].values.items()),
            "fresh_loss": round(fresh_best[s].loss, 3),
            "fresh_violations": fresh_best[s].n_violations,
        } for s in searches},
        "fields": {label or "search": list(e.setting.strategies) for label, e in run.fields},
        "goal_items_newly_off": newly_off(before, after, targets),
        "fresh_deals": {"seed": fresh, "games": verify_games, "before": _goals(before),
                        "after": _goals(after),
                        "by_field": {label: {"before": _goals(field_of(before, label)),
                                             "after": _goals(field_of(after, label))}
                                     for label, _ in run.fields} if run.others else {}},
        "not_fixed_by_their_levers": stuck[chosen],
        "pruned": {"tries": len(prune_rounds), "undone": _edits({k: searched.values[k]
                                                                for k in undone}),
                   "loss_before": round(searched.loss, 3), "loss_after": round(best.loss, 3),
                   "seconds": round(sum(a.seconds for a in prune_rounds), 1)},
        "games_played": progress.played, "seconds": round(time.perf_counter() - started, 1),
    }  # fmt: skip
    lines = _log_md(summary, log_lines, before, after)
    with staging_folder(out) as staging:
        (staging / "candidate.toml").write_text(candidate, encoding="utf-8")
        (staging / "candidate.diff").write_text(diff, encoding="utf-8")
        (staging / "patch.md").write_text("\n".join(patch_md(summary)) + "\n", encoding="utf-8")
        for label, _ in run.fields:  # the search's field in compare/, another in compare-L/
            folder = "compare" if label == run.label else f"compare-{_slug(label)}"
            build_comparison(base_ms[label].path, cand_ms[label].path, staging / folder,
                             band=setting.band, min_n=setting.min_n)  # fmt: skip
        (staging / "summary.json").write_text(json.dumps(summary, indent=1) + "\n",
                                              encoding="utf-8")  # fmt: skip
        (staging / "log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in log_lines),
                                           encoding="utf-8")  # fmt: skip
        (staging / "log.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        publish(staging, claimed)
    print("\n".join(lines))
    print(f"written: {out / 'candidate.toml'}, candidate.diff, patch.md, log.md, summary.json, "
          "compare/")  # fmt: skip
    return 0


def _no_flags() -> Assessment:
    return Assessment({}, {}, set(), {}, {}, {}, 0.0, 0, [], [], [])


def newly_off(before: Assessment, after: Assessment, targets: set[str]) -> list[str]:
    """Goal items on their goal in some field as it is, off it there with the patch (on the
    fresh deals): a flag the patch made that no edit of the item's own explains (another
    item's edit moved it; the medians are zero-sum), e.g. "Design Institute [archetype]:
    -3.4 pct-pts vs the median cornerstone"."""
    out = []
    for label, now in _fields(after):
        was = field_of(before, label)
        for item in sorted((now.decided - was.decided) & targets):
            where = f" [{label}]" if label else ""
            out.append(f"{item}{where}: {now.problems.get(item, '')}")
    return out


def field_of(a: Assessment, label: str) -> Assessment:
    """The field ``label``'s own assessment in a combined one (``a`` itself for one field)."""
    return next((f for name, f in a.by_field if name == label), a)


def _fields(a: Assessment) -> list:
    return a.by_field or [("", a)]


def fresh_rejections(values: dict, owner: dict, before: Assessment, after: Assessment,
                     targets: set[str]) -> tuple[dict, list[str]]:  # fmt: skip
    """The edits kept after the fresh deals, and why each other one was rejected: every edit
    of a goal item that ends flagged the other way (its whole interval past the band on the
    other side) in any field, and an edit whose own tile ends flagged in some field when it
    was not before there (an edit that creates a new flag beyond the band). The way an item
    must move is its error on the catalogue as it is, summed over the fields (``combine``).
    A new flag on an item no edit touched is reported (``after.new_flags``), not pinned on an
    edit."""
    rejected, why = set(), []
    for item in sorted(targets):
        was = before.errors.get(item, 0.0)
        for label, now_field in _fields(after):
            now = now_field.errors.get(item, 0.0)
            if (now_field.kinds.get(item) in ONE_SIDED or item not in now_field.decided
                    or not was or (was > 0) == (now > 0)):  # fmt: skip
                continue
            mine = sorted(k for k in values if owner.get(k) == item and k not in rejected)
            rejected |= set(mine)
            where = f" in the {label} field" if len(_fields(after)) > 1 else ""
            why += [f"{t}: {p} = {values[(t, p)]}: {item} ends flagged the other way on fresh "
                    f"deals{where} ({now_field.problems.get(item, '')})"
                    for t, p in mine]  # fmt: skip
    for key in sorted(values):
        tile = key[0]
        for label, now_field in _fields(after):
            if key not in rejected and tile in now_field.new_flags:
                rejected.add(key)
                where = f" in the {label} field" if len(_fields(after)) > 1 else ""
                why.append(f"{tile}: {key[1]} = {values[key]}: flags {tile} on fresh "
                           f"deals{where} ({now_field.problems.get(tile, '')})")  # fmt: skip
    return {k: v for k, v in values.items() if k not in rejected}, why


def _edit_shifts(evaluator, base_m, cand_m, values: dict, setting) -> dict:
    """Each edited tile's paired shift on the fresh deals (the report's effect of its
    holders, candidate less the catalogue as it is, on the same deals): name -> (shift, lo,
    hi) in fractions of win share."""
    from analysis.core.report import Report
    from analysis.neom.compare import comparison_items

    if not values:
        return {}
    report = Report(evaluator.work, "bh", 0.05, "", setting.band, setting.min_n, "")
    names = {t for t, _ in values}
    items = comparison_items(base_m.run, cand_m.run, report, names)
    out = {}
    for r in items.iter_rows(named=True):
        if r["tile_name"] in names and r["tile_name"] not in out:
            out[r["tile_name"]] = (r["shift"], r["shift_lo"], r["shift_hi"])
    return out


def patch_entries(values: dict, catalogue: dict, owner: dict, targets: set[str],
                  before: Assessment, after: Assessment, shifts: dict,
                  field_shifts: dict | None = None) -> list[dict]:  # fmt: skip
    """The patch in two parts: ``goal`` edits (a goal item's own numbers, or a good's
    producers for the good) and ``knock-on`` edits (another tile moved for a goal item),
    each with the item it serves, its goal figure before and after on fresh deals (estimate,
    95% interval) and the edited tile's own paired shift there; with several fields, the
    same in each (``fields``; ``field_shifts``: label -> shifts), the top-level figures the
    search field's."""
    entries = []
    tiles = catalogue["tiles"]
    for (tile, path), value in sorted(values.items()):
        item = owner.get((tile, path), tile)
        entry = tiles[B._find_entry(tiles, tile)]
        good = item.removesuffix(GOOD_SUFFIX) if item.endswith(GOOD_SUFFIX) else None
        own = tile == item or (good is not None and good in entry.get("produces", []))
        entries.append({
            "part": "goal" if own and item in targets else "knock-on",
            "tile": tile, "field": path, "from": _current(catalogue, (tile, path)), "to": value,
            "for": item, "goal_before": _triple(before.figures.get(item)),
            "goal_after": _triple(after.figures.get(item)),
            "shift": _triple(shifts.get(tile)),
        })  # fmt: skip
        if before.by_field:
            entries[-1]["fields"] = [{
                "field": label, "goal_before": _triple(b.figures.get(item)),
                "goal_after": _triple(field_of(after, label).figures.get(item)),
                "shift": _triple((field_shifts or {}).get(label, {}).get(tile)),
            } for label, b in before.by_field]  # fmt: skip
    return entries


def _triple(x):
    return None if x is None else [B._round(v) for v in x]


def patch_md(summary: dict) -> list[str]:
    """patch.md: the edits in two parts, each with its measured effect and interval."""
    lines = ["# neom balance --all: the patch", "",
             f"Goal items: {', '.join(summary['goal_items']) or 'none'}. Figures on fresh deals "
             f"(seed {summary['fresh_deals']['seed']}, {summary['fresh_deals']['games']:,} games "
             "a side): the goal item's figure (a cornerstone's win share against the median "
             "cornerstone, a tile's effect, a good's share of games; 95% interval) before → "
             "after, and the edited tile's own paired shift (pct-pts).", ""]  # fmt: skip
    for part, title in (("goal", "Goal items"), ("knock-on", "Knock-on edits")):
        mine = [e for e in summary["patch"] if e["part"] == part]
        lines += [f"## {title}", ""]
        if not mine:
            lines += ["none", ""]
            continue
        if any("fields" in e for e in mine):  # one row an edit and a strategy field
            lines += ["| tile | field | from | to | for | strategies | goal figure before | "
                      "after | shift of the edited tile |",
                      "|---|---|---:|---:|---|---|---|---|---|"]  # fmt: skip
            for e in mine:
                for f in e["fields"]:
                    lines.append(
                        f"| {e['tile']} | {e['field']} | {e['from']} | {e['to']} | "
                        f"{e['for']} | {f['field']} | {_interval(f['goal_before'])} | "
                        f"{_interval(f['goal_after'])} | {_interval(f['shift'])} |"
                    )
            lines.append("")
            continue
        lines += ["| tile | field | from | to | for | goal figure before | after | shift of "
                  "the edited tile |", "|---|---|---:|---:|---|---|---|---|"]  # fmt: skip
        for e in mine:
            lines.append(f"| {e['tile']} | {e['field']} | {e['from']} | {e['to']} | {e['for']} "
                         f"| {_interval(e['goal_before'])} | {_interval(e['goal_after'])} | "
                         f"{_interval(e['shift'])} |")  # fmt: skip
        lines.append("")
    if summary["rejected_on_fresh_deals"]:
        lines += ["## Rejected on the fresh deals", ""]
        lines += [f"- {why}" for why in summary["rejected_on_fresh_deals"]]
        lines.append("")
    if summary.get("goal_items_newly_off"):
        lines += ["## Goal items off their goal on the fresh deals where they were on it", ""]
        lines += [f"- {why}" for why in summary["goal_items_newly_off"]]
        lines.append("")
    new = summary["fresh_deals"]["after"].get("new_flags", [])
    if new:
        lines += ["## New flags on the fresh deals (no edit's own tile)", ""]
        lines += [f"- {name}" for name in new]
    return lines


def _interval(x) -> str:
    if x is None or x[0] is None:
        return "–"
    est, lo, hi = (100 * v if v is not None else math.nan for v in x)
    return f"{est:+.1f} [{lo:+.1f}, {hi:+.1f}]"


def _current(catalogue: dict, key) -> int:
    tiles = catalogue["tiles"]
    return B.get_value(tiles[B._find_entry(tiles, key[0])], key[1])


def _edits(values: dict) -> list[str]:
    return [f"{t}: {p} = {v}" for (t, p), v in sorted(values.items())]


def _goals(a: Assessment) -> dict:
    return {
        "loss": round(a.loss, 3), "violations": a.n_violations,
        "cornerstones_out_of_band": a.out_of_band, "flagged": a.flagged, "dead": a.dead,
        "goods_lacking": a.lacking, "problems": {n: a.problems[n] for n in sorted(a.decided)},
        "new_flags": a.new_flags,
    }  # fmt: skip


def _log_md(summary: dict, log_lines: list[dict], before: Assessment, after: Assessment):
    lines = [
        "# neom balance --all",
        "",
        f"Catalogue: {summary['catalog']}. Chosen search: {summary['chosen']}; "
        f"{summary['fields_changed']} fields changed, {summary['steps']} units in all.",
        "",
        "## Edits",
        "",
        *(f"- {e}" for e in summary["edits"]),
        "",
        "## Goals on fresh deals (seed {seed}, {games} games a side)".format(
            **summary["fresh_deals"]),
        "",
        "| | loss | items off goal | cornerstones out of band | flagged | dead | goods "
        "lacking |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]  # fmt: skip
    rows = [("as it is", before), ("candidate", after)]
    if before.by_field:  # each field's own rows, then both together
        rows = [
            (f"{side} [{label}]", field_of(a, label))
            for label, _ in before.by_field
            for side, a in rows
        ] + [(f"{side} [all fields]", a) for side, a in rows]
    for label, a in rows:
        lines.append(f"| {label} | {a.loss:.2f} | {a.n_violations} | {len(a.out_of_band)} | "
                     f"{len(a.flagged)} | {len(a.dead)} | {len(a.lacking)} |")  # fmt: skip
    lines += ["", "## Searches on the search deals", "",
              "| search | evaluations | seconds | best loss | items off goal | fields | units "
              "| on fresh deals: loss, items off goal |",
              "|---|---:|---:|---:|---:|---:|---:|---|"]  # fmt: skip
    for name, s in summary["search_deals"].items():
        lines.append(f"| {name} | {s['evaluations']} | {s['seconds']} | {s['loss']} | "
                     f"{s['violations']} | {s['fields_changed']} | {s['steps']} | "
                     f"{s['fresh_loss']}, {s['fresh_violations']} |")  # fmt: skip
    lines += ["", "## Steps", "", "| search | round | loss | off goal | edits |",
              "|---|---:|---:|---:|---|"]  # fmt: skip
    for e in log_lines:
        lines.append(f"| {e['search']} | {e['round']} | {e['loss']} | {e['violations']} | "
                     f"{'; '.join(e['edits']) or '–'} |")  # fmt: skip
    left = sorted((n, after.problems[n]) for n in after.decided)
    if left:
        lines += ["", "## Still off their goal on the fresh deals", ""]
        lines += [f"- {name}: {why}" for name, why in left]
    pruned = summary["pruned"]
    if pruned["tries"]:
        lines += [
            "",
            "## Pruning",
            "",
            f"{pruned['tries']} edits undone in turn on the search deals "
            f"({pruned['seconds']} s); {len(pruned['undone'])} kept undone (the goals "
            f"still held): loss {pruned['loss_before']} → {pruned['loss_after']}.",
            "",
        ]
        lines += [f"- undone: {e}" for e in pruned["undone"]]
    if summary["not_fixed_by_their_levers"]:
        lines += [
            "",
            "## Not fixed (by their levers within their spans, or without --structural)",
            "",
        ]
        lines += [f"- {n}: {why}"
                  for n, why in sorted(summary["not_fixed_by_their_levers"].items())]  # fmt: skip
    if not math.isfinite(after.loss):
        lines.append("(loss not finite)")
    return lines
