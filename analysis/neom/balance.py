"""The lever value that brings an item's effect into the practical band (``neom balance``).

An item is a cornerstone, a generation tile or a Disaster of a catalogue; a *lever* is one of
the catalogue's numbers that moves its effect (VP, cost, income, coins on placement, an effect's
amount, an alternative's cost; for a Disaster, the cost of the tiles that protect against it).
The item's effect is the report's (``analysis.neom.report``):

- a cornerstone: its drafters' win share above expected, **relative to the median
  cornerstone** of the same run (``vs_median``: every seat drafts three, so the effects are
  zero-sum and a few strong ones push every other one below expected);
- a generation tile or a Disaster: its selectors' win share above expected (the flagged tile
  effect).

Every candidate catalogue plays the same deals as the baseline (the same master seed, game ids,
seats and strategy streams: ``neom compare``'s twins), so the candidates differ from each other
by the lever and not by luck. The effect moves almost monotonically with a lever, so the search
is an ordered integer search for the value where it crosses zero: a secant step from the points
measured so far (the first step is one unit), growing at most fourfold while the sign has not
changed, then regula falsi inside the bracket until the bracket is two adjacent values; the
suggested value is the measured one nearest zero (a value already inside the band is kept).
The suggestion is then measured again on fresh deals (another master seed), with the report's
own tables, and only those figures are shown as its effect.
"""

import difflib
import hashlib
import json
import math
import re
import shutil
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from sim.core.errors import UserError

# Runs, polars and the compiled game are imported where used, so that `neom --help` is quick.

MAX_AMOUNT = 1000  # sim.neom.catalog.MAX_AMOUNT (imported lazily there; checked by a test)
SCORED_TYPES = ("residential", "public")  # printed VP counts on these (RULES.md, scoring)
DEFAULT_MAX_EVALS = 8  # candidates per lever before the search gives up
FIRST_STEP = 1  # units of the first step away from the current value
CLOSE_ENOUGH = 0.25  # a measured effect within this share of the band of zero ends a search
GROWTH = 4  # a step grows at most this many times the distance already travelled
FRESH_SALT = 0xBA1A  # the fresh deals' master seed: SeedSequence([seed, FRESH_SALT])
MAX_SEED = 2**63 - 1
PROTECTS = {"fire": "fire", "crime": "police"}  # a Disaster kind -> the protection against it

EXPECTED_WORDS = (
    "drafters' win share above expected (the report's flagged cornerstone effect), pct-pts"
)
KIND_WORDS = {
    "cornerstone": "drafters' win share above expected, relative to the median cornerstone "
    "(the report's vs_median), pct-pts",
    "tile": "selectors' win share above expected (the report's flagged tile effect), pct-pts",
    "disaster": "selectors' win share above expected (the report's tile effect, which counts "
    "a Disaster's selections), pct-pts",
}


# --- levers --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lever:
    """One number of the catalogue: ``path`` of tile ``tile`` (``vp``, ``cost``,
    ``effects[0].vp``, ``alternatives[1].cost``)."""

    tile: str
    path: str
    current: int
    sign: int  # the expected sign of d(effect) / d(value): +1 VP-like, -1 cost-like
    unit: str  # what one unit is, e.g. "VP", "coin of cost"
    own: bool = True  # a field of the item itself (False: of another tile, for a Disaster)
    inert: str = ""  # why this lever cannot move the effect ("": it can)
    low: int = 0
    high: int = MAX_AMOUNT

    @property
    def name(self) -> str:
        return self.path if self.own else f"{self.tile}: {self.path}"

    @property
    def key(self) -> tuple[str, str]:
        return (self.tile, self.path)


_PATH = re.compile(r"^(?:(effects|alternatives)\[(\d+)\]\.)?([a-z_]+)$")
NUMERIC_FIELDS = ("vp", "cost", "income", "coins_on_place", "vp_no_disasters")
# Lists a lever counts: the value is how many of the listed goods (tiles) are still required,
# the first ones in file order kept (a designer orders them by importance).
COUNT_FIELDS = {"requires": "required good", "requires_tiles": "prerequisite tile"}


def _split_path(path: str) -> tuple[str | None, int, str]:
    match = _PATH.match(path)
    if match is None:
        raise UserError(f"lever {path!r}: expected a field such as vp, cost or effects[0].vp")
    return match.group(1), int(match.group(2) or 0), match.group(3)


def get_value(entry, path: str) -> int:
    """The number at ``path`` of a tile's entry (a missing field is its default, 0; a count
    field, the length of its list)."""
    if path in COUNT_FIELDS:
        return len(entry.get(path, []))
    listing, index, key = _split_path(path)
    if listing is not None:
        items = entry.get(listing, [])
        if index >= len(items):
            raise UserError(f"lever {path!r}: the tile has {len(items)} {listing}")
        entry = items[index]
    return int(entry.get(key, 0))


def set_value(entry, path: str, value: int) -> None:
    if path in COUNT_FIELDS:
        items = entry.get(path, [])
        if value > len(items):
            raise UserError(f"lever {path!r}: cannot require more than the {len(items)} listed")
        if value == 0:
            entry.pop(path, None)
        else:
            del items[value:]
        return
    listing, index, key = _split_path(path)
    if listing is not None:
        entry = entry[listing][index]
    entry[key] = int(value)


def _find_entry(tiles, name: str) -> int:
    folded = {str(t.get("name", "")).casefold(): i for i, t in enumerate(tiles)}
    if name.casefold() in folded:
        return folded[name.casefold()]
    close = difflib.get_close_matches(name, [str(t.get("name", "")) for t in tiles], 3, 0.5)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise UserError(f"no tile, cornerstone or Disaster named {name!r} in the catalogue{hint}")


def item_kind(entry) -> str:
    if entry.get("deck") == "cornerstone":
        return "cornerstone"
    return "disaster" if "disaster" in entry.get("types", []) else "tile"


VP_KINDS = ("vp_per_type_in_city", "vp_per_type_adjacent", "vp_per_good_tier", "vp_placement")


def type_bounds(entry) -> dict[str, tuple[int, str]]:
    """Lower bounds the rules texts set on a tile's numbers by its types (rules 000): path ->
    (bound, why). A Commercial tile gives income, a Residential tile has a VP value, a Public
    tile offers VP (printed, unless an effect gives it variable VP), and a tile that produces
    goods turns at least one required good into them (the goods tree)."""
    types = set(entry.get("types", []))
    bounds = {}
    if "commercial" in types:
        bounds["income"] = (1, "a Commercial tile gives income (rules 000)")
    if "residential" in types:
        bounds["vp"] = (1, "a Residential tile has a VP value (rules 000)")
    variable = any(e.get("kind") in VP_KINDS for e in entry.get("effects", []))
    if "public" in types and not variable and "residential" not in types:
        bounds["vp"] = (1, "a Public tile offers VP (rules 000)")
    if entry.get("produces") and entry.get("requires"):
        bounds["requires"] = (1, "a producer turns goods into goods (the goods tree)")
    return bounds


def _bounded_by_rules(levers: list[Lever], entry) -> list[Lever]:
    """The levers within the rules' bounds and the tile's ``known`` entries (catalogue field
    ``known``: a fact of the published game is never moved, a known bound never crossed)."""
    from sim.neom.catalog import parse_known

    bounds = type_bounds(entry)
    known = [parse_known(k) for k in entry.get("known", [])]
    out = []
    for lever in levers:
        low, high, inert = lever.low, lever.high, lever.inert
        if lever.path in bounds:
            low = max(low, min(bounds[lever.path][0], lever.current))
        for parsed in known:
            if parsed is None:
                continue
            path, op, bound = parsed
            group = path in ("effects", "alternatives") and lever.path.startswith(path + "[")
            if path != lever.path and not group:
                continue
            if op == ">=":
                low = max(low, min(bound, lever.current))
            elif op == "<=":
                high = min(high, max(bound, lever.current))
            elif not inert:
                inert = "known from the published game (the tile's field known)"
        out.append(replace(lever, low=low, high=high, inert=inert))
    return out


def _own_levers(entry, variant: str) -> list[Lever]:
    name = str(entry["name"])
    scored = any(t in SCORED_TYPES for t in entry.get("types", []))
    levers = [
        Lever(name, "vp", get_value(entry, "vp"), +1, "VP",
              inert="" if scored else "printed VP scores only on Residential and Public tiles"),
        Lever(name, "cost", get_value(entry, "cost"), -1, "coin of cost"),
        Lever(name, "income", get_value(entry, "income"), +1, "coin of income"),
        Lever(name, "coins_on_place", get_value(entry, "coins_on_place"), +1,
              "coin on placement"),
    ]  # fmt: skip
    for path, unit in COUNT_FIELDS.items():
        if entry.get(path):
            count = get_value(entry, path)
            levers.append(Lever(name, path, count, -1, unit, low=0, high=count))
    if "vp_no_disasters" in entry:
        levers.append(
            Lever(name, "vp_no_disasters", get_value(entry, "vp_no_disasters"), +1, "VP",
                  inert="" if variant == "no-disasters" else "counts only in the no-disasters "
                  "variant")
        )  # fmt: skip
    for i in range(len(entry.get("alternatives", []))):
        path = f"alternatives[{i}].cost"
        levers.append(Lever(name, path, get_value(entry, path), -1, "coin of cost"))
    for i, effect in enumerate(entry.get("effects", [])):
        for key, sign, unit in (("vp", +1, "VP"), ("coins", +1, "coin")):
            if key in effect:
                path = f"effects[{i}].{key}"
                levers.append(Lever(name, path, get_value(entry, path), sign, f"{unit} of "
                                    f"{effect.get('kind', 'effect')}"))  # fmt: skip
    return _bounded_by_rules(levers, entry)


def _disaster_levers(tiles, entry) -> list[Lever]:
    """A Disaster is never placed, so none of its own numbers count; what it costs its victims
    is a rule (RULES.md P10). The catalogue moves it through the tiles that protect against it
    or insure it: the dearer they are, the stronger the Disaster."""
    kind = entry.get("disaster", "")
    out = []
    for tile in tiles:
        protects = PROTECTS.get(kind) in tile.get("protects", [])
        insures = any(
            e.get("kind") == "insurance" and kind in e.get("disasters", [])
            for e in tile.get("effects", [])
        )
        if not (protects or insures) or tile.get("replaces"):
            continue
        name = str(tile["name"])
        levers = [Lever(name, "cost", get_value(tile, "cost"), +1, "coin of cost", own=False)]
        for i, _ in enumerate(tile.get("alternatives", [])):
            path = f"alternatives[{i}].cost"
            levers.append(Lever(name, path, get_value(tile, path), +1, "coin of cost", own=False))
        out.extend(_bounded_by_rules(levers, tile))
    return out


def item_levers(data: dict, name: str, variant: str = "standard") -> tuple[str, str, list[Lever]]:
    """The item's canonical name, kind (cornerstone, tile, disaster) and levers."""
    tiles = data.get("tiles", [])
    entry = tiles[_find_entry(tiles, name)]
    kind = item_kind(entry)
    levers = _disaster_levers(tiles, entry) if kind == "disaster" else _own_levers(entry, variant)
    return str(entry["name"]), kind, levers


def pick_levers(levers: list[Lever], wanted: str | None) -> list[Lever]:
    if wanted is None:
        return levers
    chosen = [lever for lever in levers if wanted in (lever.name, lever.path)]
    if not chosen:
        raise UserError(
            f"--lever {wanted!r}: not a lever of this item; its levers: "
            + ", ".join(lever.name for lever in levers)
        )
    return chosen


def apply_values(base_text: str, values: dict[tuple[str, str], int]) -> str:
    """The catalogue text with the given (tile, path) numbers set, formatting and comments
    kept (tomlkit), so a diff shows only the changed numbers."""
    import tomlkit

    if not values:
        return base_text
    doc = tomlkit.parse(base_text)
    tiles = doc["tiles"]
    for (tile, path), value in sorted(values.items()):
        if not 0 <= int(value) <= MAX_AMOUNT:
            raise UserError(f"{tile}: {path} = {value}: outside the catalogue's 0..{MAX_AMOUNT}")
        set_value(tiles[_find_entry(tiles, tile)], path, int(value))
    return tomlkit.dumps(doc)


def fresh_seed(seed: int) -> int:
    """A master seed for fresh deals, independent of ``seed``'s (and reproducible)."""
    state = np.random.SeedSequence([int(seed), FRESH_SALT]).generate_state(2, dtype=np.uint32)
    return int((int(state[0]) << 31 | int(state[1]) >> 1) % MAX_SEED)


# --- measuring --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """How every candidate is played: the field, the deals and the machine."""

    strategies: tuple[str, ...]
    players: int
    games: int
    seed: int
    variant: str = "standard"
    workers: int | None = None
    backend: str = "local"
    scheduler: str | None = None
    strategy_file: Path | None = None
    min_n: int = 100
    band: float = 0.02
    median: bool = True  # a cornerstone's effect relative to the median cornerstone
    goal: str = "effect"  # "usage": the item's usage floors (``usage_point``)
    floors: tuple = ()  # (kept, built) floors of the usage goal; () = USAGE_FLOORS


@dataclass
class Measurement:
    """One played candidate: its run folder, opened, and (read when first asked for: the
    whole-catalogue pass needs only the report's tables) its seat-level long tables and
    deals."""

    values: dict
    seed: int
    games: int
    events: bool
    path: Path
    run: object
    seconds: float
    _longs: dict | None = None
    _deals: object = None

    @property
    def longs(self) -> dict:
        from analysis.neom.compare import _long_tables

        if self._longs is None:
            self._longs = _long_tables(self.run)
        return self._longs

    @property
    def deals(self):
        from analysis.core.tabulate import deals

        if self._deals is None:
            self._deals = deals(self.run).collect()
        return self._deals


class Progress:
    """One line per candidate on stderr: what is tried, games/s, elapsed and an ETA bound."""

    def __init__(self, planned_games: int, quiet: bool = False):
        self.planned = max(1, planned_games)
        self.played = 0
        self.seconds = 0.0
        self.start = time.perf_counter()
        self.quiet = quiet

    def plan_more(self, games: int) -> None:
        self.planned += games

    def plan_less(self, games: int) -> None:
        self.planned = max(self.played, self.planned - games)

    def done(self, what: str, games: int, seconds: float, result: str = "") -> None:
        self.played += games
        self.seconds += seconds
        rate = self.played / self.seconds if self.seconds > 0 else math.nan
        elapsed = time.perf_counter() - self.start
        left = max(0, self.planned - self.played)
        eta = left / rate if rate and math.isfinite(rate) else math.nan
        if not self.quiet:
            print(
                f"balance: {what}: {games:,} games in {seconds:.1f} s ({games / seconds:,.0f} "
                f"games/s){'; ' + result if result else ''} | {self.played:,} of <= "
                f"{self.planned:,} games at {rate:,.0f} games/s, {elapsed:.0f} s, ETA <= "
                f"{eta:.0f} s",
                file=sys.stderr,
                flush=True,
            )


class Evaluator:
    """Plays candidate catalogues (the base catalogue with some lever values) into run folders
    under ``work`` and measures them; every run with the same seed plays the same deals."""

    def __init__(self, base_text: str, base_source: str, setting: Setting, work: Path,
                 progress: Progress, command: str = "neom balance", claim=None):  # fmt: skip
        self.base_text = base_text
        self.base_source = base_source
        self.setting = setting
        self.work = Path(work)
        self.progress = progress
        self.command = command
        # The claimed output folder (sim.core.outputs.Claim) that lists every run before it
        # is made (None: ``work`` is a scratch folder of this command's own).
        self.claim = claim
        self.cache: dict = {}
        self.usage = report_usage  # the usage goal's figures (a function of run and item)

    def catalog_text(self, values: dict) -> str:
        return apply_values(self.base_text, values)

    def _key(self, values: dict, seed: int, games: int) -> str:
        """The run folder's name: everything that makes its games (a folder kept with --work
        and used again for another field is then never mixed up)."""
        s = self.setting
        text = json.dumps([
            sorted((list(k), v) for k, v in values.items()), seed, games, s.strategies,
            s.players, s.variant, str(s.strategy_file or ""),
            hashlib.sha256(self.base_text.encode()).hexdigest(),
        ])  # fmt: skip
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def measure(self, values: dict, seed: int | None = None, games: int | None = None,
                events: bool = False, what: str = "") -> Measurement:  # fmt: skip
        from analysis.core.load import open_run
        from sim.core.runner import RunConfig, run_simulation
        from sim.neom.constants import VARIANT_NAMES

        s = self.setting
        seed = s.seed if seed is None else seed
        games = s.games if games is None else games
        values = {k: int(v) for k, v in values.items()}
        key = self._key(values, seed, games)
        for ev in (True, False) if not events else (True,):
            hit = self.cache.get((key, ev))
            if hit is not None:
                return hit
        rel = f"runs/{key}{'-events' if events else ''}"
        folder = self.claim.add_run(rel) if self.claim is not None else self.work / rel
        text = self.catalog_text(values)
        _validate_text(text, f"{self.base_source} with {describe_values(values)}")
        # The candidate catalogue is read from a scratch file; the run folder keeps its copy
        # (catalog.toml), so the output folder holds only listed runs and published files.
        scratch = Path(tempfile.mkdtemp(prefix="neom-balance-"))
        catalog = scratch / f"candidate-{key}.toml"
        catalog.write_text(text, encoding="utf-8")
        workers = s.workers
        config = RunConfig(
            out=folder,
            strategies=s.strategies,
            players=s.players,
            games=games,
            seed=seed,
            data=catalog,
            strategy_file=s.strategy_file,
            workers=workers,
            batch_size=max(1, min(1000, -(-games // max(2, 2 * (workers or 2))))),
            events=events,
            backend=s.backend,
            scheduler=s.scheduler,
            resume=folder.exists(),
            progress=False,
            command=self.command,
            rules={"variant": VARIANT_NAMES[s.variant]},
        )
        start = time.perf_counter()
        try:
            run_simulation(config)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        run = open_run(folder)
        measurement = Measurement(values, seed, games, events, folder, run,
                                  time.perf_counter() - start)  # fmt: skip
        self.cache[(key, events)] = measurement
        self.progress.done(what or describe_values(values), games, measurement.seconds)
        return measurement


def _validate_text(text: str, where: str) -> None:
    from sim.neom.catalog import validate

    problems = validate(tomllib.loads(text), where)
    if problems:
        raise UserError(problems[0])


def describe_values(values: dict) -> str:
    if not values:
        return "the catalogue as it is"
    return ", ".join(f"{tile}: {path} = {v}" for (tile, path), v in sorted(values.items()))


# --- the item's effect ------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """The item's effect at one lever value (fractions of win share): the effect and its 95%
    interval on the search deals, and its paired shift from the baseline with its interval."""

    value: int
    effect: float
    lo: float
    hi: float
    shift: float = 0.0
    shift_lo: float = 0.0
    shift_hi: float = 0.0
    n: int = 0


def long_key(kind: str) -> str:
    return "cornerstone" if kind == "cornerstone" else "tile"


def paired_frame(base: Measurement, cand: Measurement, kind: str):
    """compare's paired shifts of every item of the kind (cornerstones or tiles)."""
    from analysis.neom.compare import paired_effect_shifts

    key = long_key(kind)
    if key not in base.longs or key not in cand.longs:
        raise UserError("tile effects need the event log (internal: a run without events)")
    return paired_effect_shifts(base.longs[key], cand.longs[key], base.deals)


def _median(frame, column: str, n_column: str, min_n: int) -> float:
    effects = frame[column].to_numpy().astype(np.float64)
    n = frame[n_column].to_numpy()
    tested = effects[(n >= min_n) & np.isfinite(effects)]
    if tested.size == 0:
        tested = effects[np.isfinite(effects)]
    return float(np.median(tested)) if tested.size else 0.0


def item_point(base: Measurement, cand: Measurement, item: str, kind: str, value: int,
               min_n: int, median: bool = True) -> Point:  # fmt: skip
    """The item's effect (the report's definition for its kind) in ``cand`` and its paired
    shift from ``base``, both played on the same deals."""
    import polars as pl

    from analysis.core.stats import t_quantile

    frame = paired_frame(base, cand, kind)
    row = frame.filter(pl.col("tile_name") == item)
    if row.height == 0:
        return Point(value, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan, 0)
    r = row.row(0, named=True)
    offset_b = offset_c = 0.0
    if kind == "cornerstone" and median:
        offset_b = _median(frame, "effect_b", "n_b", min_n)
        offset_c = _median(frame, "effect_c", "n_c", min_n)
    clusters = base.deals["deal"].n_unique()
    half = float(t_quantile(clusters - 1)) * (r["se_c"] if r["se_c"] == r["se_c"] else math.nan)
    effect = r["effect_c"] - offset_c
    moved = offset_c - offset_b  # the median's own move, taken as fixed like the report does
    shift, lo, hi = r["shift"], r["shift_lo"], r["shift_hi"]
    if not r["n_b"]:
        shift = lo = hi = math.nan
    return Point(value, effect, effect - half, effect + half, shift - moved, lo - moved,
                 hi - moved, int(r["n_c"]))  # fmt: skip


# --- usage as a goal --------------------------------------------------------------------------

# Floors a designer can change (--kept-floor, --built-floor): an item is used when it is kept
# in this share of the deals that offer it (a cornerstone: drafted when dealt; a tile: taken
# when seen) and built by this share of those who took it (placed when drafted / selected).
USAGE_FLOORS = (0.25, 0.50)
USAGE_WORDS = (
    "usage: the smaller of kept when offered less its floor and built when taken less its "
    "floor (a cornerstone: drafted when dealt, placed when drafted; a tile: taken when seen, "
    "placed when selected), pct-pts of share"
)
USAGE_COLUMNS = {"cornerstone": ("kept", "placed_rate"), "tile": ("taken_rate", "placed_rate")}


def report_usage(run, item: str, kind: str, setting: Setting) -> dict:
    """The item's usage figures from the report's own tables: ``kept`` (share of offers kept)
    and ``built`` (share of takers who place it), each (share, lo, hi) with its 95% Wilson
    interval, and ``n`` (takers). An item missing from the table was never taken: kept 0.
    (A usage table of its own, analysis/neom/usage.py, is another issue's: pass it to
    ``usage_point`` as ``usage`` to use it here.)"""
    row = item_row(run, item, kind, setting)
    kept, built = USAGE_COLUMNS["cornerstone" if kind == "cornerstone" else "tile"]
    if not row:
        return {"kept": (0.0, 0.0, 0.0), "built": (math.nan,) * 3, "n": 0}
    return {
        "kept": tuple(_float(row.get(f"{kept}{x}")) for x in ("", "_lo", "_hi")),
        "built": tuple(_float(row.get(f"{built}{x}")) for x in ("", "_lo", "_hi")),
        "n": int(row.get("drafted", row.get("selected", 0)) or 0),
    }


def usage_deficit(figures: dict, floors: tuple = USAGE_FLOORS) -> tuple[float, float, float]:
    """The usage goal as one number (a fraction of share): the smaller of kept - its floor and
    built - its floor (>= 0: both floors met), with the interval of that figure. Built is
    unknown (nobody took it) counts as not built: -its floor."""
    parts = []
    for key, floor in zip(("kept", "built"), floors, strict=True):
        share, lo, hi = figures[key]
        if not math.isfinite(share):
            share, lo, hi = 0.0, 0.0, 0.0
        parts.append((share - floor, lo - floor, hi - floor))
    return min(parts)


def usage_point(base: Measurement, cand: Measurement, item: str, kind: str, value: int,
                setting: Setting, usage=report_usage) -> Point:  # fmt: skip
    """The item's usage deficit in ``cand`` as a Point (its paired shift from ``base``: the
    difference of the two deficits, the same deals). ``usage(run, item, kind, setting)`` gives
    the figures (``report_usage`` by default)."""
    floors = setting.floors or USAGE_FLOORS
    figures = usage(cand.run, item, kind, setting)
    effect, lo, hi = usage_deficit(figures, floors)
    start = usage_deficit(usage(base.run, item, kind, setting), floors)[0]
    shift = effect - start
    return Point(value, effect, lo, hi, shift, shift - (effect - lo), shift + (hi - effect),
                 int(figures.get("n", 0)))  # fmt: skip


def attractive_levers(levers: list[Lever]) -> list[Lever]:
    """The levers that make the item itself more attractive (its VP, cost, income, coins,
    effects, alternatives), not its requirements (removing those is structural)."""
    return [lever for lever in levers if lever.own and lever.path not in COUNT_FIELDS]


# --- the search -------------------------------------------------------------------------------


@dataclass
class Search:
    lever: Lever
    points: dict = field(default_factory=dict)  # value -> Point
    suggested: int | None = None
    stop: str = ""
    reached: bool = False  # some value within the bounds brings the effect into the band


def _sign(x: float) -> int:
    return 1 if x > 0 else -1 if x < 0 else 0


def _bracket(points: dict) -> tuple[int, int] | None:
    """The two nearest measured values whose effects have opposite signs (or one is 0)."""
    values = sorted(points)
    best = None
    for a, b in zip(values, values[1:], strict=False):
        fa, fb = points[a].effect, points[b].effect
        if _sign(fa) * _sign(fb) <= 0 and (best is None or b - a < best[1] - best[0]):
            best = (a, b)
    return best


def _propose(points: dict, lever: Lever, direction: int) -> int | None:
    """The next value to measure (None: nothing left to try)."""
    bracket = _bracket(points)
    if bracket is not None:
        a, b = bracket
        if b - a <= 1:
            return None
        fa, fb = points[a].effect, points[b].effect
        x = a - fa * (b - a) / (fb - fa) if fb != fa else (a + b) / 2
        x = int(round(x))
        if x <= a or x >= b or x in points:
            x = (a + b) // 2
        return x if x not in points else None
    current = lever.current
    ahead = sorted((v for v in points if (v - current) * direction > 0),
                   key=lambda v: abs(v - current))  # fmt: skip
    last = ahead[-1] if ahead else current
    bound = lever.high if direction > 0 else lever.low
    if last == bound:
        return None
    travelled = abs(last - current)
    if not ahead:
        step = FIRST_STEP
    else:
        before = ahead[-2] if len(ahead) > 1 else current
        f_last = points[last].effect
        slope = 0.0
        if before in points:  # (a one-sided search may have dropped the current value)
            slope = (f_last - points[before].effect) / (last - before)
        # Progress: a step in ``direction`` moves the effect towards zero (by slope * direction).
        if _sign(slope * direction) != _sign(-f_last):
            step = 2 * max(1, abs(last - before))  # no progress measured: stride further
        else:
            step = int(math.ceil(abs(f_last / slope)))
        step = max(1, min(step, GROWTH * max(travelled, FIRST_STEP)))
    x = last + direction * step
    return int(min(max(x, lever.low), lever.high))


def _played(points: dict, min_n: int) -> dict:
    """The measured values at which enough seats held the item to measure it."""
    return {v: p for v, p in points.items() if p.n >= min_n}


def search_lever(measure, lever: Lever, start: Point, band: float,
                 max_evals: int = DEFAULT_MAX_EVALS, probe: bool = True,
                 min_n: int = 0) -> Search:  # fmt: skip
    """Search ``lever`` for the value nearest the effect's zero; ``measure(value) -> Point``
    plays a candidate on the search deals, ``start`` is the measured current value. Values at
    which fewer than ``min_n`` seats hold the item end the search on that side (the item is
    then not balanced but out of the game) and are never suggested."""
    result = Search(lever, {lever.current: start})
    f0 = start.effect
    if not math.isfinite(f0) or start.n < min_n:
        result.stop = (f"the item's effect cannot be measured: {start.n} seats held it, fewer "
                       f"than {min_n}")  # fmt: skip
        result.suggested = lever.current
        return result
    in_band = abs(f0) <= band
    needed = -_sign(f0) if f0 != 0 else 1  # the way the effect must move
    direction = needed * lever.sign
    if (direction > 0 and lever.current >= lever.high) or (
        direction < 0 and lever.current <= lever.low
    ):
        direction = -direction if in_band else direction
        if not in_band:
            result.suggested = lever.current
            result.stop = (
                f"{lever.name} is at its {'upper' if direction > 0 else 'lower'} bound "
                f"{lever.current}, and the effect needs it {'higher' if direction > 0 else 'lower'}"
            )
            return result
    if in_band:
        result.suggested = lever.current
        result.reached = True
        result.stop = "in the band at the current value"
        if probe:  # one step, for the slope
            value = lever.current + direction
            result.points[value] = measure(value)
        return result
    searched = lever  # narrowed where the item stops being played
    unplayed: int | None = None
    plateau = False
    for _ in range(max_evals):
        played = _played(result.points, min_n)
        if any(abs(p.effect) <= band * CLOSE_ENOUGH for p in played.values()):
            break  # a value this near zero: its neighbours can gain less than that
        value = _propose(played, searched, direction)
        if value is None:
            break
        # The direction stays the lever's: near a tile's useless values a small raise can
        # first cost its selectors (they now place it and pay for it) before it pays off.
        before = min(abs(p.effect) for p in _played(result.points, min_n).values())
        point = measure(value)
        result.points[value] = point
        if point.n < min_n:
            # Too few seats hold the item at this value (nobody drafts or selects it): it
            # is no longer balanced but gone. Search only the values before it.
            unplayed = value
            edge = value - 1 if direction > 0 else value + 1
            searched = replace(searched, **({"high": edge} if direction > 0 else {"low": edge}))
            continue
        if before <= band and abs(point.effect) >= before and _bracket(result.points) is None:
            plateau = True  # in the band already and the step gained nothing: stop
            break
    played = _played(result.points, min_n)
    bracket = _bracket(played)
    best = min(played.values(), key=lambda p: (abs(p.effect), abs(p.value - lever.current)))
    result.suggested = best.value
    result.reached = abs(best.effect) <= band
    bound = lever.high if direction > 0 else lever.low
    if abs(best.effect) <= band * CLOSE_ENOUGH:
        result.stop = f"within {100 * band * CLOSE_ENOUGH:g} pct-pts of zero at {best.value}"
    elif plateau:
        result.stop = f"in the band at {best.value}; further steps gained nothing"
    elif unplayed is not None and bracket is None:
        result.stop = (
            f"at {lever.name} = {unplayed} fewer than {min_n} seats hold it (it is no longer "
            f"played); the nearest zero before that is {best.value}"
        )
    elif bracket is not None and bracket[1] - bracket[0] <= 1:
        result.stop = f"the effect changes sign between {bracket[0]} and {bracket[1]}"
    elif bracket is not None:
        result.stop = f"stopped after {max_evals} candidates, the zero between {bracket}"
    elif bound in result.points:
        result.stop = (
            f"no value of {lever.name} within the catalogue's bounds [{lever.low}, "
            f"{lever.high}] brings the effect to zero: at {bound} it is "
            f"{100 * result.points[bound].effect:+.1f} pct-pts"
        )
    else:
        result.stop = f"stopped after {max_evals} candidates without reaching zero"
    if not result.reached and "bounds" not in result.stop:
        result.stop += "; no measured value is inside the band"
    return result


def slope_of(points: dict, lever: Lever) -> tuple[float, float, float]:
    """Effect per unit of the lever (pct-pts per unit) from the measured value farthest from
    the current one, with the paired interval: (slope, lo, hi)."""
    others = [v for v in points if v != lever.current and points[v].shift == points[v].shift]
    if not others:
        return math.nan, math.nan, math.nan
    far = max(others, key=lambda v: abs(v - lever.current))
    return paired_slope(points[far].shift, points[far].shift_lo, points[far].shift_hi,
                        far - lever.current)  # fmt: skip


def paired_slope(shift, lo, hi, delta: int) -> tuple[float, float, float]:
    if not delta:
        return math.nan, math.nan, math.nan
    a, b = 100 * lo / delta, 100 * hi / delta
    return 100 * shift / delta, min(a, b), max(a, b)


# --- running a whole item ---------------------------------------------------------------------


@dataclass
class ItemResult:
    item: str
    kind: str
    searches: list
    baseline: Point
    verified: dict  # lever name -> dict of the fresh-deal figures
    fresh_seed: int


def balance_item(evaluator: Evaluator, item: str, kind: str, levers: list[Lever],
                 max_evals: int, verify_games: int, probe: bool = True) -> ItemResult:  # fmt: skip
    """Search every live lever of the item, then measure each suggestion on fresh deals."""
    s = evaluator.setting
    events = kind != "cornerstone"
    usage = s.goal == "usage"
    base = evaluator.measure({}, events=events, what=f"{item}: the catalogue as it is")

    def point(m, value):
        if usage:
            return usage_point(base, m, item, kind, value, s, evaluator.usage)
        return item_point(base, m, item, kind, value, s.min_n, s.median)

    start = point(base, 0)
    searches = []
    for lever in levers:
        start_lever = replace(start, value=lever.current)
        if lever.inert:
            searches.append(
                Search(
                    lever,
                    {lever.current: start_lever},
                    lever.current,
                    f"not searched: {lever.inert}",
                    abs(start.effect) <= s.band,
                )
            )
            continue

        def measure(value, lever=lever):
            m = evaluator.measure({lever.key: value}, events=events,
                                  what=f"{item}: trying {lever.name} = {value}")  # fmt: skip
            return point(m, value)

        # A usage floor is one-sided: any value at or above it will do, so the search looks
        # for where the deficit crosses zero and then keeps the nearest value meeting it.
        search = search_lever(measure, lever, start_lever, s.band, max_evals, probe,
                              0 if usage else s.min_n)  # fmt: skip
        if usage:
            _meet_floor(search)
        evaluator.progress.plan_less((max_evals + 1 - len(search.points)) * s.games)
        searches.append(search)
        if math.isfinite(search.points[search.suggested].effect):
            p = search.points[search.suggested]
            print(f"balance: {item}: {lever.name} -> {search.suggested} ({100 * p.effect:+.1f} "
                  f"pct-pts on the search deals; {search.stop})", file=sys.stderr)  # fmt: skip
    fresh = fresh_seed(s.seed)
    verified = verify(evaluator, item, kind, searches, fresh, verify_games)
    return ItemResult(item, kind, searches, start, verified, fresh)


def _meet_floor(search: Search) -> None:
    """The usage goal's suggestion: the measured value nearest the current one whose deficit
    is >= 0 (both floors met), else the search's own (nearest zero)."""
    lever = search.lever
    met = [v for v, p in search.points.items() if math.isfinite(p.effect) and p.effect >= 0]
    if met:
        search.suggested = min(met, key=lambda v: (abs(v - lever.current), v))
        search.reached = True
        search.stop = f"the usage floors are met at {search.suggested}"
    else:
        search.reached = False


def _report_args(setting: Setting):
    return ("bh", 0.05, setting.band, setting.min_n)


def item_row(run, item: str, kind: str, setting: Setting) -> dict:
    """The item's row of the report's table (cornerstones or tiles) for ``run``."""
    import polars as pl

    from analysis.neom import cornerstones, tiles

    if kind == "cornerstone":
        table = cornerstones.cornerstone_table(run, *_report_args(setting))
    else:
        table = tiles.tile_table(run, *_report_args(setting))
    row = table.filter(pl.col("tile_name") == item) if table is not None else None
    return row.row(0, named=True) if row is not None and row.height else {}


def _target(row: dict, kind: str, median: bool = True) -> tuple[float, float, float]:
    column = "vs_median" if kind == "cornerstone" and median else "effect"
    if not row:
        return math.nan, math.nan, math.nan
    return tuple(_float(row.get(c)) for c in (column, f"{column}_lo", f"{column}_hi"))


def _float(x) -> float:
    return math.nan if x is None else float(x)


def _median_of(row: dict) -> float:
    """The median cornerstone's effect in a cornerstone table row (effect - vs_median)."""
    if not row:
        return math.nan
    return _float(row.get("effect")) - _float(row.get("vs_median"))


RATES = {
    "cornerstone": (("drafted_rate", "drafted (share of games)"), ("kept", "kept when dealt"),
                    ("placed_rate", "placed when drafted")),
    "tile": (("taken_rate", "taken when seen"), ("placed_rate", "placed when selected"),
             ("sell_rate", "sold when selected")),
}  # fmt: skip
RATES["disaster"] = (("taken_rate", "taken when seen"),)


def verify(evaluator: Evaluator, item: str, kind: str, searches: list, seed: int,
           games: int) -> dict:  # fmt: skip
    """Each suggestion measured again on fresh deals with the report's own tables, beside the
    catalogue as it is on the same fresh deals: the effect and its interval, the paired shift,
    the item's rates before and after and the largest shifts of other items."""
    import polars as pl

    from analysis.core.report import Report
    from analysis.neom.compare import comparison_items

    s = evaluator.setting
    base = evaluator.measure({}, seed=seed, games=games, events=True,
                             what=f"{item}: fresh deals, the catalogue as it is")  # fmt: skip
    base_row = item_row(base.run, item, kind, s)

    def target(run, row):
        if s.goal == "usage":
            return usage_deficit(evaluator.usage(run, item, kind, s), s.floors or USAGE_FLOORS)
        return _target(row, kind, s.median)

    out = {"": {"row": base_row, "target": target(base.run, base_row)}}
    report = Report(evaluator.work, "bh", 0.05, "", s.band, s.min_n, "")
    for search in searches:
        lever = search.lever
        if search.suggested is None or search.suggested == lever.current:
            continue
        cand = evaluator.measure({lever.key: search.suggested}, seed=seed, games=games,
                                 events=True, what=f"{item}: fresh deals, {lever.name} = "
                                 f"{search.suggested}")  # fmt: skip
        row = item_row(cand.run, item, kind, s)
        items = comparison_items(base.run, cand.run, report, {lever.tile})
        mine = items.filter(pl.col("tile_name") == item)
        if kind == "cornerstone":
            mine = mine.filter(pl.col("kind") == "cornerstone")
        else:
            mine = mine.filter(pl.col("kind") == "tile")
        shift = mine.row(0, named=True) if mine.height else {}
        others = (
            items.filter((pl.col("tile_name") != item) & pl.col("shift").is_not_nan())
            .sort(pl.col("shift").abs(), descending=True)
            .head(5)
        )
        # A cornerstone's target is relative to the median cornerstone: its paired shift is
        # the effect's less the median's own move (the median taken as fixed, as the report).
        moved = 0.0
        if kind == "cornerstone" and s.median:
            moved = _median_of(row) - _median_of(base_row)
        if s.goal == "usage":  # the paired shift of the deficit: the same deals
            moved = 0.0
            after, before = target(cand.run, row), out[""]["target"]
            # No paired interval for a share's change here: the estimate only (the intervals
            # are each side's own, in "target").
            shift = {"shift": after[0] - before[0], "shift_lo": math.nan, "shift_hi": math.nan}
        out[lever.name] = {
            "row": row,
            "target": target(cand.run, row),
            "shift": tuple(
                shift.get(k, math.nan) - moved for k in ("shift", "shift_lo", "shift_hi")
            ),  # fmt: skip
            "others": [
                {
                    "kind": r["kind"],
                    "name": r["tile_name"],
                    "shift": r["shift"],
                    "lo": r["shift_lo"],
                    "hi": r["shift_hi"],
                    "q": r["shift_q"],
                }
                for r in others.iter_rows(named=True)
            ],  # fmt: skip
        }
    return out


def lever_records(result: ItemResult, setting: Setting) -> list[dict]:
    """The JSON entries of the levers (issue 26's keys first; pct-pts)."""
    records = []
    base = result.verified[""]
    for search in result.searches:
        lever = search.lever
        moved = search.suggested is not None and search.suggested != lever.current
        fresh = result.verified.get(lever.name) if moved else base
        effect, lo, hi = fresh["target"] if fresh else (math.nan,) * 3
        if moved and fresh:
            slope = paired_slope(*fresh["shift"], search.suggested - lever.current)
        else:
            slope = slope_of(search.points, lever)
        record = {
            "lever": lever.name,
            "current": lever.current,
            "suggested": search.suggested,
            "effect": _pp(effect),
            "lo": _pp(lo),
            "hi": _pp(hi),
            "slope": _round(slope[0]),
            # The usage goal is one-sided: its floors met.
            "in_band": bool(
                math.isfinite(effect)
                and (effect >= 0 if setting.goal == "usage" else abs(effect) <= setting.band)
            ),
            "slope_lo": _round(slope[1]),
            "slope_hi": _round(slope[2]),
            "unit": lever.unit,
            "bounds": [lever.low, lever.high],
            "tile": lever.tile,
            "searched": not lever.inert,
            "reached_on_search_deals": search.reached,
            "stop": search.stop,
            "search": [
                {
                    "value": p.value,
                    "effect": _pp(p.effect),
                    "lo": _pp(p.lo),
                    "hi": _pp(p.hi),
                    "shift": _pp(p.shift),
                    "shift_lo": _pp(p.shift_lo),
                    "shift_hi": _pp(p.shift_hi),
                }
                for p in sorted(search.points.values(), key=lambda p: p.value)
            ],  # fmt: skip
        }
        if moved and fresh:
            record["shift"] = [_pp(x) for x in fresh["shift"]]
            record["rates"] = {
                key: {"before": _round(base["row"].get(key)),
                      "after": _round(fresh["row"].get(key))}
                for key, _ in RATES[result.kind]
            }  # fmt: skip
            record["other_shifts"] = [
                o | {"shift": _pp(o["shift"]), "lo": _pp(o["lo"]), "hi": _pp(o["hi"]),
                     "q": _round(o["q"])}
                for o in fresh["others"]
            ]  # fmt: skip
        records.append(record)
    return records


def _round(x, digits: int = 4):
    if x is None:
        return None
    x = float(x)
    return round(x, digits) if math.isfinite(x) else None


def _pp(x):
    """A fraction of win share as pct-pts (None when unknown)."""
    return None if x is None or not math.isfinite(float(x)) else round(100 * float(x), 2)


def remove_work(work: Path, created: bool) -> None:
    """Delete a scratch folder this command created (never one the user gave)."""
    if created and work.exists():
        shutil.rmtree(work, ignore_errors=True)
