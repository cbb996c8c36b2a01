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

from analysis.neom import balance as B
from sim.core.errors import UserError

DEFAULT_BUDGET = 12  # evaluations per search, the catalogue as it is included
CHANGE_PRICE = 0.05  # optuna's loss: per changed field (in units of band excess)
STEP_PRICE = 0.01  # and per unit of change
SPAN = {"VP": 6}  # optuna's range of a lever on its side: 6 VP, else SPAN_OTHER units
SPAN_OTHER = 8


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


GOALS = ("cornerstones", "tiles", "dead", "goods")
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

    run = measurement.run
    args = ("bh", 0.05, setting.band, setting.min_n)
    cs = cornerstones.cornerstone_table(run, *args)
    tt = tiles.tile_table(run, *args)
    band = setting.band
    errors, problems, kinds, fixable, reasons = {}, {}, {}, {}, {}
    decided: set[str] = set()
    loss = 0.0
    out_of_band, flagged, dead, lacking = [], [], [], []
    for r in cs.iter_rows(named=True):
        name = r["tile_name"]
        if r["small"] or "cornerstones" not in goals:
            continue
        kinds[name] = "cornerstone"
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
        elif "dead" in goals and r["placed_rate_hi"] < UNBUILT_SHARE:
            # Drafted, but built by too few of its drafters: drafted to no purpose.
            kinds[name] = "unbuilt"
            errors[name] = r["placed_rate"] - UNBUILT_SHARE
            decided.add(name)
            loss += 1.0
            problems[name] = f"placed by {100 * r['placed_rate']:.1f}% of its drafters"
    for r in tt.filter((pl.col("flag") != "") & ("tiles" in goals)).iter_rows(named=True):
        name = r["tile_name"]
        kinds[name] = "disaster" if _is_disaster(run, r["tile"]) else "tile"
        errors[name] = r["effect"]
        decided.add(name)
        flagged.append(name)
        problems[name] = f"flagged {r['flag']} ({100 * r['effect']:+.1f} pct-pts)"
        loss += (abs(r["effect"]) - band) / band
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
        problems[name] = f"placed in {100 * share:.2f}% of games ({r['why']})"
    if "goods" in goals:
        for r in goods_shares(run).iter_rows(named=True):
            if r["games"] >= GOOD_SHARE:
                continue
            name = good_item(r["good"])
            kinds[name] = "good"
            errors[name] = r["games"] - GOOD_SHARE
            decided.add(name)
            lacking.append(r["good"])
            loss += (GOOD_SHARE - r["games"]) / GOOD_SHARE
            problems[name] = f"produced by some city in {100 * r['games']:.1f}% of games"
    return Assessment(measurement.values, errors, decided, fixable, problems, kinds, loss,
                      len(decided), dead, flagged, out_of_band, measurement.seconds, reasons,
                      lacking)  # fmt: skip


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


def choose_levers(data: dict, name: str, kind: str, need_up: bool, variant: str,
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


def bounded(lever: B.Lever, direction: int) -> B.Lever:
    """The lever limited to its span on the side the item needs ("smallest steps": a pass
    proposes edits a designer would make, and says when one is not enough)."""
    from dataclasses import replace

    span = span_of(lever)
    if direction > 0:
        return replace(lever, low=lever.current, high=min(lever.high, lever.current + span))
    return replace(lever, low=max(lever.low, lever.current - span), high=lever.current)


# --- the pass -------------------------------------------------------------------------------

ONE_SIDED = ("dead", "unbuilt", "good")  # any value that reaches the goal will do
PRUNE_SLACK = 0.2  # pruning: an undone edit may add this much loss (in its units) in all


class Pass:
    def __init__(self, evaluator: B.Evaluator, data: dict, intended: set[str], variant: str,
                 log, goals: tuple[str, ...] = GOALS, per_round: int = 0):  # fmt: skip
        self.goals = goals
        self.per_round = per_round
        self.evaluator = evaluator
        self.data = data
        self.intended = intended
        self.variant = variant
        self.log = log
        self.owner: dict = {}  # lever key -> the item whose track moves it
        self.currents: dict = {}  # lever key -> its value in the catalogue as it is

    def evaluate(self, values: dict, search: str, round_: int) -> Assessment:
        what = f"{search} round {round_}: " + (B.describe_values(values) if values else
                                                "the catalogue as it is")  # fmt: skip
        start = time.perf_counter()
        m = self.evaluator.measure(values, events=True, what=what[:160])
        a = assess(m, self.evaluator.setting, self.intended, self.goals)
        a.seconds = time.perf_counter() - start
        self.log(search, round_, a)
        return a

    def add_tracks(self, a: Assessment, tracks: dict) -> None:
        """A track for every decided violation that has none yet: the cornerstones and flagged
        tiles first, then dead tiles, then goods (a lever is moved by one item only)."""
        rank = {"cornerstone": 0, "tile": 0, "disaster": 0, "dead": 1, "unbuilt": 1, "good": 2}
        players = self.evaluator.setting.players
        for name in sorted(a.decided, key=lambda n: (rank.get(a.kinds.get(n), 3), n)):
            if name in tracks:
                continue
            if a.fixable.get(name, True) is not True:
                tracks[name] = Track(name, [], [], stuck=a.fixable[name])
                continue
            need_up = a.errors[name] < 0
            levers = choose_levers(self.data, name, a.kinds[name], need_up, self.variant,
                                   players, a.reasons.get(name, ""),
                                   frozenset(a.lacking))  # fmt: skip
            # A tile's own item takes its own levers back from an item that borrowed them (a
            # Disaster moving a protecting tile's cost, a good moving its producer's).
            for lever in levers:
                borrower = self.owner.get(lever.key)
                if borrower not in (None, name) and lever.tile == name and borrower in tracks:
                    tracks[borrower].release(lever.key)
                    del self.owner[lever.key]
            levers = [lv for lv in levers if self.owner.get(lv.key, name) == name]
            unique = list({lv.key: lv for lv in reversed(levers)}.values())[::-1]
            if not unique:
                tracks[name] = Track(name, [], [], stuck="no lever can move it that way")
                continue
            directions = [1 if (lv.sign > 0) == need_up else -1 for lv in unique]
            bounded_levers = [bounded(lv, d) for lv, d in zip(unique, directions, strict=True)]
            for lever in bounded_levers:
                self.owner[lever.key] = name
                self.currents[lever.key] = lever.current
            tracks[name] = Track(name, bounded_levers, directions, a.kinds[name])

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
        if a.kinds.get(name) in ("dead", "unbuilt") and name in a.decided:
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
        per_round = self.per_round or len(a.decided) or 1
        tried = {_frozen(values)}
        for round_ in range(1, budget):
            self.add_tracks(a, tracks)
            for name, track in tracks.items():  # what the last round measured, for each item
                if track.lever is not None:
                    value = values.get(track.lever.key, track.lever.current)
                    error = a.errors.get(name, 0.0)
                    track.points[value] = B.Point(value, error, error, error)
            if a.loss > best.loss:
                # The round made things worse (the moves overshot together): go back to the
                # best values and move half as many items next time.
                values, a = dict(best.values), best
                per_round = max(1, per_round // 2)
            # The items furthest from their goal move first, at most per_round of them.
            movable = [
                n for n, t in tracks.items()
                if t.lever is not None and not t.stuck and t.settled is None
            ]  # fmt: skip
            moving = set(sorted(movable, key=lambda n: (-_severity(a, n, band), n))[:per_round])
            moves: dict = {}
            for name in sorted(moving):
                if not a.errors.get(name, 0.0):
                    continue  # on its goal: it stays where it is
                self._next_move(tracks[name], a, values, moves)
            changed = {k: v for k, v in (values | moves).items() if v != self.currents[k]}
            if _frozen(changed) in tried:
                break  # nothing new to try
            tried.add(_frozen(changed))
            values = changed
            a = self.evaluate(values, "coordinate", round_)
            rounds.append(a)
            if a.loss <= best.loss:
                best = a
        return rounds, tracks

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
            if a.decided <= best.decided and a.loss <= best.loss + PRUNE_SLACK:
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
    if a.kinds.get(name) in ("dead", "unbuilt"):
        return 1.0
    return max(0.0, abs(error) - band) / band


def best_of(rounds: list[Assessment]) -> Assessment:
    return min(rounds, key=lambda a: (a.loss, len(a.values), sum(a.values.values())))


def _candidate_text(base_text: str, values: dict, label: str) -> str:
    import tomlkit

    text = B.apply_values(base_text, values)
    doc = tomlkit.parse(text)
    name = str(doc["catalog"]["name"])
    if "(balanced)" not in name:  # a pass run again on its own candidate says so once
        doc["catalog"]["name"] = f"{name} (balanced)"
    edits = "; ".join(f"{t} {p} = {v}" for (t, p), v in sorted(values.items())) or "no edits"
    # The file's own description (what it is, where its facts come from) stays; the edits of
    # each pass are added after it.
    before = str(doc["catalog"].get("description", "")).strip() or f"{label}."
    doc["catalog"]["description"] = f"{before} Edited by neom balance --all: {edits}."
    return tomlkit.dumps(doc)


def run_all(args) -> int:
    from analysis.neom.balance_cli import base_catalog, setting_from
    from sim.core.outputs import claim_folder, writer_lock

    if args.lever or args.relative_to != "median":
        raise UserError("--lever and --relative-to belong to neom balance NAME (the pass's "
                        "cornerstone goal is against the median cornerstone)")  # fmt: skip
    setting = setting_from(args)
    budget = DEFAULT_BUDGET if args.max_evals is None else args.max_evals
    if budget < 1:
        raise UserError(f"--max-evals {budget}: at least 1")
    text, source, data = base_catalog(args.catalog)
    catalogue = tomllib.loads(text)
    names = {str(t["name"]).casefold() for t in catalogue["tiles"]}
    given = [n.strip() for n in args.intended.split(",") if n.strip()]
    unknown = [n for n in given if n.casefold() not in names]
    if unknown:
        raise UserError(f"--intended {unknown[0]!r}: no such tile in the catalogue")
    intended = {n.casefold() for n in given}
    goals = tuple(g.strip() for g in args.goals.split(",") if g.strip())
    wrong = [g for g in goals if g not in GOALS]
    if wrong or not goals:
        raise UserError(f"--goals {args.goals!r}: a comma-separated list of {', '.join(GOALS)}")
    out = Path(args.out) if args.out else Path("balance") / "all"
    if args.per_round < 0:
        raise UserError(f"--per-round {args.per_round}: 0 (every item) or more")
    if args.prune_evals is not None and args.prune_evals < 0:
        raise UserError(f"--prune-evals {args.prune_evals}: 0 (no pruning) or more")
    parameters = {
        "--catalog": data.digest, "--strategies": list(setting.strategies),
        "--strategy-file": _file_digest(setting.strategy_file),
        "--players": setting.players, "--games": setting.games, "--seed": setting.seed,
        "--band": args.band, "--min-n": setting.min_n, "--variant": setting.variant,
        "--intended": sorted(intended), "--optimizer": args.optimizer, "--max-evals": budget,
        "--goals": list(goals), "--per-round": args.per_round, "--prune-evals": args.prune_evals,
        "--verify-games": args.verify_games or setting.games,
    }  # fmt: skip

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


def _file_digest(path) -> str:
    import hashlib

    if path is None:
        return ""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise UserError(f"--strategy-file {path}: cannot read ({exc.strerror})") from None


def _run_pass(args, setting, text, source, data, catalogue, intended, goals, budget, out,
              claimed) -> int:  # fmt: skip
    """The pass in the claimed folder ``out``: every evaluation a listed run, the outputs
    built in a staging folder and published whole at the end."""
    from analysis.neom.compare import build_comparison
    from sim.core.outputs import publish, staging_folder

    searches = ["coordinate", "optuna"] if args.optimizer == "both" else [args.optimizer]
    verify_games = args.verify_games or setting.games
    planned = setting.games * budget * len(searches) + 2 * verify_games
    progress = B.Progress(planned, quiet=args.quiet)
    evaluator = B.Evaluator(text, source, setting, out, progress, COMMAND, claimed)
    log_lines: list[dict] = []

    def log(search, round_, a: Assessment):
        entry = {
            "search": search, "round": round_, "edits": _edits(a.values),
            "loss": round(a.loss, 3), "violations": a.n_violations,
            "out_of_band": a.out_of_band, "flagged": a.flagged, "dead": a.dead,
            "seconds": round(a.seconds, 1),
        }  # fmt: skip
        log_lines.append(entry)
        if not args.quiet:
            print(f"balance --all: {search} round {round_}: loss {a.loss:.2f}, "
                  f"{a.n_violations} items off their goal, {len(a.values)} fields edited",
                  file=sys.stderr, flush=True)  # fmt: skip

    started = time.perf_counter()
    run = Pass(evaluator, catalogue, intended, setting.variant, log, goals, args.per_round)
    results, stuck = {}, {}
    for search in searches:
        rounds, tracks = run.coordinate(budget) if search == "coordinate" else run.optuna(
            budget, setting.seed)  # fmt: skip
        results[search] = (rounds, best_of(rounds))
        stuck[search] = {n: t.stuck for n, t in tracks.items() if t.stuck}
    chosen = min(searches, key=lambda s: (results[s][1].loss, len(results[s][1].values)))
    searched = results[chosen][1]
    prune_rounds, best = [], searched
    if args.prune_evals != 0 and searched.values:
        tries = len(searched.values) if args.prune_evals is None else args.prune_evals
        progress.plan_more(setting.games * min(tries, len(searched.values)))
        prune_rounds, best = run.prune(searched, args.prune_evals)
    undone = sorted(set(searched.values) - set(best.values))
    candidate = _candidate_text(text, best.values, data.label)
    B._validate_text(candidate, str(out / "candidate.toml"))
    diff = "".join(difflib.unified_diff(text.splitlines(True), candidate.splitlines(True),
                                        str(source), "candidate.toml"))  # fmt: skip

    # Fresh deals: the catalogue as it is against the candidate, through neom compare.
    fresh = B.fresh_seed(setting.seed)
    base_m = evaluator.measure({}, seed=fresh, games=verify_games, events=True,
                               what="fresh deals: the catalogue as it is")  # fmt: skip
    cand_m = evaluator.measure(best.values, seed=fresh, games=verify_games, events=True,
                               what="fresh deals: the candidate")  # fmt: skip
    before = assess(base_m, setting, intended, goals)
    after = assess(cand_m, setting, intended, goals)
    # Each search's best on the fresh deals too, for the comparison of the searches (the
    # choice above was made on the search deals, so these figures are not selected on).
    fresh_best = {chosen: after}
    for search in searches:
        if search not in fresh_best:
            m = evaluator.measure(results[search][1].values, seed=fresh, games=verify_games,
                                  events=True, what=f"fresh deals: {search}'s best")  # fmt: skip
            fresh_best[search] = assess(m, setting, intended, goals)
    summary = {
        "catalog": data.label, "chosen": chosen, "edits": _edits(best.values),
        "fields_changed": len(best.values),
        "steps": sum(abs(v - _current(catalogue, k)) for k, v in best.values.items()),
        "search_deals": {s: _goals(results[s][1]) | {
            "evaluations": len(results[s][0]),
            "seconds": round(sum(a.seconds for a in results[s][0]), 1),
            "fields_changed": len(results[s][1].values),
            "steps": sum(abs(v - _current(catalogue, k)) for k, v in results[s][1].values.items()),
            "fresh_loss": round(fresh_best[s].loss, 3),
            "fresh_violations": fresh_best[s].n_violations,
        } for s in searches},
        "fresh_deals": {"seed": fresh, "games": verify_games, "before": _goals(before),
                        "after": _goals(after)},
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
        build_comparison(base_m.path, cand_m.path, staging / "compare", band=setting.band,
                         min_n=setting.min_n)  # fmt: skip
        (staging / "summary.json").write_text(json.dumps(summary, indent=1) + "\n",
                                              encoding="utf-8")  # fmt: skip
        (staging / "log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in log_lines),
                                           encoding="utf-8")  # fmt: skip
        (staging / "log.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        publish(staging, claimed)
    print("\n".join(lines))
    print(f"written: {out / 'candidate.toml'}, candidate.diff, log.md, summary.json, compare/")
    return 0


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
    for label, a in (("as it is", before), ("candidate", after)):
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
        lines += ["", "## Not fixed by their levers within their spans", ""]
        lines += [f"- {n}: {why}"
                  for n, why in sorted(summary["not_fixed_by_their_levers"].items())]  # fmt: skip
    if not math.isfinite(after.loss):
        lines.append("(loss not finite)")
    return lines
