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

import hashlib
import itertools
import json
import math
import queue
import shutil
import sys
import tempfile
import threading
import time
import tomllib
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from analysis.core.balance import (  # noqa: F401 (also NEOM balance's API: B.search_lever, ...)
    DEFAULT_MAX_EVALS,
    Lever,
    Point,
    Progress,
    Search,
    _bracket,
    _propose,
    fresh_seed,
    paired_slope,
    search_lever,
    slope_of,
)
from analysis.core.tabulate import Flagging
from analysis.neom.levers import (  # noqa: F401 (also NEOM balance's API: B.item_levers, ...)
    COUNT_FIELDS,
    MAX_AMOUNT,
    _find_entry,
    apply_values,
    get_value,
    item_levers,
    pick_levers,
    set_value,
)
from analysis.neom.usage import USAGE_FLOORS  # noqa: F401 (also balance's API: B.USAGE_FLOORS)
from sim.core.errors import UserError

# Runs, polars and the compiled game are imported where used, so that `neom --help` is quick.

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


# Base catalogue texts parsed (tomlkit, about 0.1 s a parse) by their sha256, the last
# _PARSED_KEPT, lent to apply_values, which leaves a document as it was: one parse for every
# evaluator of the same catalogue in a process (neom balance --all makes one a pass; the tests
# many). The lock keeps two threads from editing one document at once.
_PARSED: dict = {}
_PARSED_KEPT = 4
_PARSED_LOCK = threading.Lock()


def _parsed(text: str):
    """The tomlkit document of ``text``, parsed once (call under _PARSED_LOCK)."""
    import tomlkit

    key = hashlib.sha256(text.encode()).hexdigest()
    doc = _PARSED.pop(key, None)
    _PARSED[key] = tomlkit.parse(text) if doc is None else doc  # the most recent last
    for stale in list(_PARSED)[:-_PARSED_KEPT]:
        _PARSED.pop(stale, None)
    return _PARSED[key]


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
        # Every run played, in order: (values, seed, games, events); a test pins the plan.
        self.played: list = []
        # Candidate texts by values: a suggestion plays on the search deals and the fresh ones.
        self._texts: dict = {}
        self.label = ""  # the field's name on progress lines, when several are played

    def catalog_text(self, values: dict) -> str:
        key = frozenset(values.items())
        if key not in self._texts:
            with _PARSED_LOCK:
                parsed = _parsed(self.base_text) if values else None
                text = apply_values(self.base_text, values, parsed=parsed)
            _validate_text(text, f"{self.base_source} with {describe_values(values)}")
            self._texts[key] = text
        return self._texts[key]

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
        self.played.append((values, seed, games, events))
        what = what or describe_values(values)
        self.progress.done(f"[{self.label}] {what}" if self.label else what, games,
                           measurement.seconds)  # fmt: skip
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


def long_key(kind: str) -> str:
    return "cornerstone" if kind == "cornerstone" else "tile"


def paired_frame(base: Measurement, cand: Measurement, kind: str):
    """compare's paired shifts of every item of the kind (cornerstones or tiles)."""
    from analysis.core.compare import paired_effect_shifts

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
USAGE_WORDS = (
    "usage: the smaller of kept when offered less its floor and built when taken less its "
    "floor (a cornerstone: drafted when dealt, placed when drafted; a tile: taken when seen, "
    "placed when selected), pct-pts of share"
)


def report_usage(run, item: str, kind: str, setting: Setting) -> dict:
    """The item's usage figures from the report's own usage table (``analysis.neom.usage``):
    ``kept`` (share of its offers kept) and ``built`` (share of its keepers who place it), each
    (share, lo, hi) with its 95% Wilson interval, and ``n`` (keepers). An item never offered
    counts as never kept: kept 0."""
    import polars as pl

    from analysis.neom import cornerstones, tiles
    from analysis.neom.usage import usage_table

    flagging = _report_flagging(setting)
    floors = setting.floors or USAGE_FLOORS
    if kind == "cornerstone":
        table = usage_table(run.tables, cornerstones.cornerstone_table(run, flagging), None, floors)
    else:
        table = usage_table(run.tables, None, tiles.tile_table(run, flagging), floors)
    row = table.filter(pl.col("tile_name") == item)
    if not row.height or row["offered"][0] == 0:
        return {"kept": (0.0, 0.0, 0.0), "built": (math.nan,) * 3, "n": 0}
    r = row.row(0, named=True)
    return {
        "kept": tuple(_float(r[f"kept_rate{x}"]) for x in ("", "_lo", "_hi")),
        "built": tuple(_float(r[f"built_rate{x}"]) for x in ("", "_lo", "_hi")),
        "n": int(r["kept"]),
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


# --- running a whole item ---------------------------------------------------------------------


@dataclass
class ItemResult:
    item: str
    kind: str
    searches: list
    baseline: Point
    verified: dict  # lever name -> dict of the fresh-deal figures
    fresh_seed: int


# A candidate that weakens the item first plays this share of its games: a value at which
# nobody holds the item any more (a cornerstone at 0 VP) shows it in its first games, and the
# rest of them would only confirm it (Community Center, strong field: 0 drafters in the first
# 1,000 games at vp = 0 and at cost = 5, 3 in all 8,000, against 40 and 419 as it is).
PREFIX_SHARE = 8


def prefix_games(setting: Setting) -> int:
    """Games of a weakening candidate's first look (0: none, too few games to split)."""
    games = setting.games // PREFIX_SHARE // setting.players * setting.players
    return games if setting.players <= games < setting.games else 0


def clearly_unplayed(n: int, prefix: int, games: int, min_n: int) -> bool:
    """``n`` seats held the item in the first ``prefix`` games: even a count three standard
    deviations (Poisson) and 3 seats above it, scaled to all ``games``, is below ``min_n``."""
    return (n + 3 * math.sqrt(n) + 3) * games / prefix < min_n


def prefix_view(base: Measurement, games: int) -> Measurement:
    """``base`` as if it had played only its first ``games`` games (the deals a prefix run of
    a candidate plays: a game's deal and seats depend on its id, not on the run's length)."""
    import polars as pl

    first = pl.col("game_id") < games
    longs = {k: v.filter(first) for k, v in base.longs.items()}
    return replace(base, games=games, _longs=longs, _deals=base.deals.filter(first))


def measure_candidate(measure, point, base: Measurement, value: int, setting: Setting,
                      prefix: int) -> Point:  # fmt: skip
    """The candidate's point (``point(base, measurement, value)``), from ``measure(games)``'s
    run; given a ``prefix``, its first ``prefix`` games first, and only those when they show
    the item clearly unplayed (the point then measured on them, beside the same games of
    ``base``)."""
    if prefix:
        first = point(prefix_view(base, prefix), measure(prefix), value)
        if clearly_unplayed(first.n, prefix, setting.games, setting.min_n):
            return first
    return point(base, measure(setting.games), value)


class Stopped(Exception):
    """The pipeline stopped (Ctrl-C or an error elsewhere): a waiting step gives up."""


# Which queued run the pipeline plays first: the search's candidates (each decides the next),
# then the suggestions on fresh deals, then the catalogue as it is on fresh deals (needed only
# when the first suggestion is compared).
SEARCH, CHECK, FRESH_BASE = 0, 1, 2


class Pipeline:
    """Plays runs one at a time on the main thread (where ``run_simulation`` keeps its worker
    processes and Ctrl-C), while every other step runs in a thread of its own and asks for
    its runs here: each lever's search, each suggestion's check on fresh deals and the
    catalogue as it is on fresh deals. The analysis of one run (the report's tables, the
    paired shifts: about a quarter of the command's CPU) then overlaps the games of the
    next, instead of leaving the workers idle. Each step sees only its own runs, so the
    results are those of the steps one after the other; only the order of the progress
    lines changes. One step computes at a time (``turn``, released while it waits): polars'
    sums are reproducible only while no other query shares its thread pool."""

    def __init__(self, evaluator: "Evaluator"):
        self.evaluator = evaluator
        self.requests: queue.PriorityQueue = queue.PriorityQueue()
        self.order = itertools.count()  # first asked, first played within a priority
        self.stopped = False
        self.turn = threading.Lock()

    def measure(self, values: dict, priority: int = SEARCH, **keywords) -> "Measurement":
        if threading.current_thread() is threading.main_thread():
            return self.evaluator.measure(values, **keywords)
        if self.stopped:
            raise Stopped
        future: Future = Future()
        self.requests.put((priority, next(self.order), values, keywords, future))
        return self.wait(future)

    def wait(self, future: Future):
        """``future``'s result, the turn given to the other steps meanwhile."""
        if threading.current_thread() is threading.main_thread():
            return future.result()
        self.turn.release()
        try:
            while True:
                try:
                    return future.result(timeout=0.1)
                except TimeoutError:
                    if self.stopped:  # nobody serves the queue any more
                        raise Stopped from None
        finally:
            self.turn.acquire()

    def _step(self, step):
        with self.turn:
            return step()

    def run(self, steps: list) -> list:
        """Each of ``steps`` (functions of no argument) in its own thread, serving their runs
        until all are done; their results in order (the first error raised, once every step
        has stopped)."""
        with ThreadPoolExecutor(max_workers=max(1, len(steps)),
                                thread_name_prefix="neom-balance") as pool:  # fmt: skip
            futures = [pool.submit(self._step, step) for step in steps]
            try:
                self._serve(futures)
            except BaseException:
                self._stop()
                raise
        errors = [f.exception() for f in futures if f.exception() is not None]
        if errors:
            raise next((e for e in errors if not isinstance(e, Stopped)), errors[0])
        return [f.result() for f in futures]

    def _serve(self, futures: list) -> None:
        while not all(f.done() for f in futures):
            if any(f.done() and f.exception() is not None for f in futures):
                self._stop()  # the others give up at their next run
                return
            try:
                _, _, values, keywords, future = self.requests.get(timeout=0.02)
            except queue.Empty:
                continue
            try:
                future.set_result(self.evaluator.measure(values, **keywords))
            except Exception as error:  # the step that asked reports it
                future.set_exception(error)
            except BaseException:
                future.set_exception(Stopped())
                raise

    def _stop(self) -> None:
        self.stopped = True
        while True:
            try:
                *_, future = self.requests.get_nowait()
            except queue.Empty:
                return
            future.set_exception(Stopped())


def balance_item(evaluator: Evaluator, item: str, kind: str, levers: list[Lever],
                 max_evals: int, verify_games: int, probe: bool = True) -> ItemResult:  # fmt: skip
    """Search every live lever of the item, then measure each suggestion on fresh deals (the
    levers' searches and checks interleaved by a :class:`Pipeline`)."""
    s = evaluator.setting
    events = kind != "cornerstone"
    usage = s.goal == "usage"
    fresh = fresh_seed(s.seed)
    pipeline = Pipeline(evaluator)
    base = evaluator.measure({}, events=events, what=f"{item}: the catalogue as it is")

    def point(b, m, value):
        if usage:
            return usage_point(b, m, item, kind, value, s, evaluator.usage)
        return item_point(b, m, item, kind, value, s.min_n, s.median)

    fresh_base: Future = Future()  # the catalogue as it is on fresh deals, once analysed

    def baseline():
        try:
            fresh_base.set_result(fresh_baseline(pipeline, item, kind, fresh, verify_games))
        except BaseException as error:
            fresh_base.set_exception(error)
            raise
        return fresh_base.result()

    start_future: Future = Future()

    def start_point():
        try:
            start_future.set_result(point(base, base, 0))
        except BaseException as error:
            start_future.set_exception(error)
            raise
        return start_future.result()

    def lever_step(lever):
        start = pipeline.wait(start_future)
        start_lever = replace(start, value=lever.current)
        if lever.inert:
            evaluator.progress.plan_less(verify_games)
            why = f"not searched: {lever.inert}"
            in_band = abs(start.effect) <= s.band
            return Search(lever, {lever.current: start_lever}, lever.current, why, in_band), None

        # Only a search that weakens the item can leave it unplayed (the usage goal has no
        # such floor): its candidates look at their first games first.
        weakening = not usage and start.effect > 0 and math.isfinite(start.effect)
        prefix = prefix_games(s) if weakening else 0

        full = []  # the candidates played in full (the plan counts them: max_evals a lever)

        def measure(value):
            def run(games):
                what = f"{item}: trying {lever.name} = {value}"
                if games < s.games:
                    what += f" (its first {games:,} games)"
                    evaluator.progress.plan_more(games)
                else:
                    full.append(value)
                return pipeline.measure({lever.key: value}, SEARCH, games=games, events=events,
                                        what=what)  # fmt: skip

            return measure_candidate(run, point, base, value, s, prefix)

        # A usage floor is one-sided: any value at or above it will do, so the search looks
        # for where the deficit crosses zero and then keeps the nearest value meeting it.
        search = search_lever(measure, lever, start_lever, s.band, max_evals, probe,
                              0 if usage else s.min_n)  # fmt: skip
        if usage:
            _meet_floor(search)
        evaluator.progress.plan_less((max_evals - len(full)) * s.games)
        if math.isfinite(search.points[search.suggested].effect):
            p = search.points[search.suggested]
            print(f"balance: {item}: {lever.name} -> {search.suggested} ({100 * p.effect:+.1f} "
                  f"pct-pts on the search deals; {search.stop})", file=sys.stderr)  # fmt: skip
        if search.suggested is None or search.suggested == lever.current:
            evaluator.progress.plan_less(verify_games)
            return search, None
        check = fresh_check(pipeline, item, kind, lever, search.suggested, fresh_base, fresh,
                            verify_games)  # fmt: skip
        return search, check

    steps = [start_point, baseline] + [lambda lever=lever: lever_step(lever) for lever in levers]
    _, base_entry, *done = pipeline.run(steps)
    searches = [search for search, _ in done]
    verified = {"": base_entry} | {
        search.lever.name: check for search, check in done if check is not None
    }  # fmt: skip
    return ItemResult(item, kind, searches, start_future.result(), verified, fresh)


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


def _report_flagging(setting: Setting) -> Flagging:
    return Flagging(band=setting.band, min_n=setting.min_n)


def item_row(run, item: str, kind: str, setting: Setting) -> dict:
    """The item's row of the report's table (cornerstones or tiles) for ``run``."""
    import polars as pl

    from analysis.neom import cornerstones, tiles

    if kind == "cornerstone":
        table = cornerstones.cornerstone_table(run, _report_flagging(setting))
    else:
        table = tiles.tile_table(run, _report_flagging(setting))
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


def fresh_baseline(pipeline, item: str, kind: str, seed: int, games: int) -> dict:
    """The catalogue as it is on fresh deals: its run, its row of the report's table, its
    target and ``side``, its half of every suggestion's paired comparison (computed once
    here, not again for each suggestion)."""
    from analysis.core.batches import SERIAL
    from analysis.neom.compare import baseline_side

    evaluator = pipeline.evaluator
    s = evaluator.setting
    base = pipeline.measure({}, FRESH_BASE, seed=seed, games=games, events=True,
                            what=f"{item}: fresh deals, the catalogue as it is")  # fmt: skip
    row = item_row(base.run, item, kind, s)
    target = _fresh_target(evaluator, base.run, row, item, kind)
    # Serial: this runs beside the games' worker processes (see Pipeline).
    return {"row": row, "target": target, "run": base.run,
            "side": baseline_side(base.run, SERIAL)}  # fmt: skip


def _fresh_target(evaluator, run, row: dict, item: str, kind: str):
    s = evaluator.setting
    if s.goal == "usage":
        return usage_deficit(evaluator.usage(run, item, kind, s), s.floors or USAGE_FLOORS)
    return _target(row, kind, s.median)


def fresh_check(pipeline, item: str, kind: str, lever: Lever, value: int, fresh_base,
                seed: int, games: int) -> dict:  # fmt: skip
    """A suggestion measured again on fresh deals with the report's own tables, beside the
    catalogue as it is on the same fresh deals (``fresh_base``: a future of
    :func:`fresh_baseline`'s entry): the effect and its interval, the paired shift, the item's
    rates and the largest shifts of other items."""
    import polars as pl

    from analysis.core.batches import SERIAL
    from analysis.core.report import Report
    from analysis.neom.compare import comparison_items

    evaluator = pipeline.evaluator
    s = evaluator.setting
    cand = pipeline.measure({lever.key: value}, CHECK, seed=seed, games=games, events=True,
                            what=f"{item}: fresh deals, {lever.name} = {value}")  # fmt: skip
    row = item_row(cand.run, item, kind, s)
    before = pipeline.wait(fresh_base)
    report = Report(evaluator.work, "bh", 0.05, "", s.band, s.min_n, "")
    # Serial: this runs beside the games' worker processes (see Pipeline). Only the shifts
    # and their q are read: no report table of either side.
    items = comparison_items(before["run"], cand.run, report, {lever.tile}, SERIAL,
                             side=before["side"], report_tables=False)  # fmt: skip
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
        moved = _median_of(row) - _median_of(before["row"])
    target = _fresh_target(evaluator, cand.run, row, item, kind)
    if s.goal == "usage":  # the paired shift of the deficit: the same deals
        moved = 0.0
        # No paired interval for a share's change here: the estimate only (the intervals
        # are each side's own, in "target").
        shift = {"shift": target[0] - before["target"][0], "shift_lo": math.nan,
                 "shift_hi": math.nan}  # fmt: skip
    return {
        "row": row,
        "target": target,
        "shift": tuple(shift.get(k, math.nan) - moved for k in ("shift", "shift_lo", "shift_hi")),
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


def verify(evaluator: Evaluator, item: str, kind: str, searches: list, seed: int,
           games: int) -> dict:  # fmt: skip
    """Each suggestion of ``searches`` measured again on fresh deals (:func:`fresh_check`),
    beside the catalogue as it is on the same deals (key "")."""
    pipeline = Pipeline(evaluator)
    base: Future = Future()
    base.set_result(fresh_baseline(pipeline, item, kind, seed, games))
    out = {"": base.result()}
    for search in searches:
        lever = search.lever
        if search.suggested is not None and search.suggested != lever.current:
            out[lever.name] = fresh_check(pipeline, item, kind, lever, search.suggested, base,
                                          seed, games)  # fmt: skip
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


# --- the command's setting -----------------------------------------------------------------------


def setting_from(args):
    from sim.core.commands.options import check_min_n, check_players
    from sim.core.seeding import check_game_count
    from sim.core.strategies import split_strategies
    from sim.core.workers import check_scheduler

    check_players(args.players)
    check_min_n(args.min_n)
    if not 0.0 <= args.band < 100.0:
        raise UserError(f"--band {args.band}: must be between 0 and 100 pct-pts")
    check_scheduler(args.scheduler, args.backend)
    for option, games in (("--games", args.games), ("--verify-games", args.verify_games)):
        if games is not None:
            if games < args.players:
                raise UserError(f"{option} {games}: at least --players ({args.players})")
            check_game_count("rotate", games, args.players)
    if args.catalog is not None:
        from sim.neom.catalog import shipped_path

        if not shipped_path(args.catalog).is_file():
            raise UserError(f"--catalog {args.catalog}: no such catalogue file")
    return Setting(
        strategies=split_strategies(args.strategies),
        players=args.players,
        games=args.games,
        seed=args.seed,
        variant=args.variant,
        workers=args.workers,
        backend=args.backend,
        scheduler=args.scheduler,
        strategy_file=args.strategy_file,
        min_n=args.min_n,
        band=args.band / 100.0,
        median=args.relative_to == "median",
        goal=getattr(args, "goal", "effect"),
        floors=_floors(args),
    )


def _floors(args) -> tuple:
    floors = (getattr(args, "kept_floor", 25.0), getattr(args, "built_floor", 50.0))
    for option, value in zip(("--kept-floor", "--built-floor"), floors, strict=True):
        if not 0.0 <= value <= 100.0:
            raise UserError(f"{option} {value:g}: a share between 0 and 100 pct")
    return tuple(v / 100.0 for v in floors)


def base_catalog(path):
    """(text, source, GameData) of the catalogue, validated."""
    from sim.neom import load_data

    data = load_data(Path(path) if path else None)
    return data.raw.decode("utf-8"), data.source, data
